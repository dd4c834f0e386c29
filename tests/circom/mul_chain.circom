// SPDX-License-Identifier: Apache-2.0 OR MIT
// A chain of N multiplications, the generator of issue 46's large circom circuit:
//   t[0] = seed + x[0],  t[i] = t[i-1] * (t[i-1] + x[i % K]) + 1 (i = 1..N),  out = t[N]
// With --O2 the circuit has exactly N constraints, all non-linear, and N + K + 2 wires (the 1,
// out, seed, x[K], t[1..N]) for N >= K: the linear ones (t[0], the blocks' inputs and outputs)
// are substituted away. Every t[i] is a dense field element, and t[i-1] is in both A's and B's
// rows, so each of the prover's MSMs (A, B in G1 and G2, L, H) runs over ~N points (with
// t[i-1] * x[i % K], B would hold only the K x wires and the B MSMs would be nearly empty).
// No `component main` here: tests/circom/gen-mul-chain writes one for a chosen N (K = 16).
pragma circom 2.0.0;

// B steps of the chain from t[0] = in; a block starts at a step i = 1 mod B, so with K | B its
// j-th step uses x[j % K] = x[i % K].
template MulChainBlock(B, K) {
  signal input in;
  signal input x[K];
  signal output out;
  signal t[B + 1];
  t[0] <== in;
  for (var j = 1; j <= B; j++) {
    t[j] <== t[j - 1] * (t[j - 1] + x[j % K]) + 1;
  }
  out <== t[B];
}

// The chain in blocks of B = 1,024 steps, all one template instance but the last (a shorter one
// when B does not divide N). circom2's compile time grows with the square of a signal array's
// length within a template (one array of 2^17 signals: 4x the time of 2^16), and its memory and
// time with the number of template instances (a parameter per block's position: at 2^18
// constraints, 257 instances took 52 s and 835 MB against 7 s and 213 MB for 2; at 2^20, the
// wasm heap passed the 2 GiB that circom2's WASI layer can address).
template MulChain(N, K) {
  var B = 1024;
  assert(B % K == 0);
  var blocks = (N + B - 1) \ B;
  signal input x[K];
  signal input seed;
  signal output out;
  signal t0;
  component block[blocks];
  t0 <== seed + x[0];
  for (var b = 0; b < blocks; b++) {
    block[b] = MulChainBlock(N - b * B < B ? N - b * B : B, K);
    block[b].in <== b == 0 ? t0 : block[b - 1].out;
    for (var k = 0; k < K; k++) {
      block[b].x[k] <== x[k];
    }
  }
  out <== block[blocks - 1].out;
}
