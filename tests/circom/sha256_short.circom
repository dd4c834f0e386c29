// SPDX-License-Identifier: Apache-2.0 OR MIT
// SHA-256 of an 8-byte private message (one compression block); the digest is the public
// output as two 128-bit halves (big-endian bit order, high half first).
pragma circom 2.0.0;

include "circomlib/circuits/sha256/sha256.circom";
include "circomlib/circuits/bitify.circom";

template Sha256Short(nBytes) {
  signal input msg[nBytes * 8];  // message bits, most significant bit of each byte first
  signal output digest[2];

  component sha = Sha256(nBytes * 8);
  for (var i = 0; i < nBytes * 8; i++) sha.in[i] <== msg[i];
  component pack[2];
  for (var h = 0; h < 2; h++) {
    pack[h] = Bits2Num(128);
    for (var i = 0; i < 128; i++) pack[h].in[i] <== sha.out[h * 128 + 127 - i];
    digest[h] <== pack[h].out;
  }
}

component main = Sha256Short(8);
