// SPDX-License-Identifier: Apache-2.0 OR MIT
// c = a·b with c public: the smallest useful circuit (one constraint).
pragma circom 2.0.0;

template Multiplier() {
  signal input a;
  signal input b;
  signal output c;
  c <== a * b;
}

component main = Multiplier();
