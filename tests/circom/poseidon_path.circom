// SPDX-License-Identifier: Apache-2.0 OR MIT
// A Merkle path of circomlib Poseidon(2) hashes: proves that `leaf` (public) sits under `root`
// (public output). Over the bls12381 prime circomlib's Poseidon reuses the bn254 constants, so
// it is a valid circuit but not a standard BLS12-381 Poseidon.
pragma circom 2.0.0;

include "circomlib/circuits/poseidon.circom";
include "circomlib/circuits/mux1.circom";

template PoseidonPath(depth) {
  signal input leaf;
  signal input siblings[depth];
  signal input index_bits[depth];  // 0: the node is the left child, 1: the right child
  signal output root;

  component hashers[depth];
  component muxes[depth];
  signal nodes[depth + 1];
  nodes[0] <== leaf;
  for (var i = 0; i < depth; i++) {
    index_bits[i] * (1 - index_bits[i]) === 0;
    muxes[i] = MultiMux1(2);
    muxes[i].c[0][0] <== nodes[i];
    muxes[i].c[0][1] <== siblings[i];
    muxes[i].c[1][0] <== siblings[i];
    muxes[i].c[1][1] <== nodes[i];
    muxes[i].s <== index_bits[i];
    hashers[i] = Poseidon(2);
    hashers[i].inputs[0] <== muxes[i].out[0];
    hashers[i].inputs[1] <== muxes[i].out[1];
    nodes[i + 1] <== hashers[i].out;
  }
  root <== nodes[depth];
}
