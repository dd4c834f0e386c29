// SPDX-License-Identifier: Apache-2.0 OR MIT
// Range checks: a private x proved below a public bound (both 64-bit, bit-decomposed), with a
// public output y = x^3 + x + 5 and a second public input mixed into it.
pragma circom 2.0.0;

include "circomlib/circuits/comparators.circom";
include "circomlib/circuits/bitify.circom";

template RangeCheck(n) {
  signal input x;
  signal input bound;
  signal input salt;
  signal output y;
  component bits = Num2Bits(n);
  bits.in <== x;
  component lt = LessThan(n);
  lt.in[0] <== x;
  lt.in[1] <== bound;
  lt.out === 1;
  signal x2;
  x2 <== x * x;
  y <== x2 * x + x + 5 + salt;
}

component main {public [bound, salt]} = RangeCheck(64);
