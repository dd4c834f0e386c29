// SPDX-License-Identifier: Apache-2.0 OR MIT
// The device's field arithmetic over 32-bit words, written once over a carry-chain primitive set
// `K`: on the device K is PtxCarry (the hardware carry flag, one PTX instruction per call); on the
// host K is EmuCarry, the same instructions emulated with an explicit flag, so CI runs the very
// sequences the GPU runs against GMP and the host's 64-bit arithmetic (tests/test_field.cpp:
// FieldTest.DeviceWordSequencesMatchHost, FieldTest.DeviceMulSubSequenceMatchesHost,
// Fp2.ProductsOnEdgeCoordinatesMatchGmp, Fp2.DeviceProductSequenceOnCarryPatterns).
//
// What is here, bottom up:
//   - word chains: add_words / sub_words (no carry out), fold_words, reduce_once;
//   - the three row operations every product is made of (mul_even_words, mad_even_words_cc,
//     mad_rshift_words) and the rows built from them (shift_row, reduce_row);
//   - the Montgomery product (mont_mul_words), modular addition and subtraction;
//   - lazy reduction: the double-width product (wide_mul_words), REDC of a double-width value plus
//     a high half (redc_add_words), a·b - c·d with one reduction (mul_sub_words, the Y of the XYZZ
//     additions) and the Fp2 product with two reductions instead of three (fp2_mul_words).
//
// The row form (sppark-style even/odd split). A single CIOS carry chain per row serialises every
// multiply-add on the one carry flag. Here each row's products go to two accumulators, E (products
// of a's even-indexed words: lo at word j, hi at j+1) and O (odd-indexed words, stored one word
// down: O[k] has weight 2^(32(k+1))), so each row is two independent carry chains that ptxas
// interleaves. The value held is X = E + 2^32·O. Once a row has made E[0] final (a product row
// emits it, a reduction row makes it 0), X/2^32 = O + (E >> 32): the next row swaps the roles of
// the two arrays and shifts the old E down by two words (mad_rshift_words), folding its word 1 into
// the new E[0] (shift_row).
//
// Dropped carries: with inputs < m and m < 2^(32W-1) (static_asserts at the callers), a row's full
// value X = T + a·b[i] + q·m < 2m + 2(2^32 - 1)m < 2^(32W+32). Every partial sum is <= X (only
// non-negative terms are added), so a carry out of O's top word (weight 2^(32W+32)) is always 0,
// and the final T < 2m < 2^(32W) fits in W words.
#pragma once

#include <cstdint>

#include "proofpipe/core/hd.hpp"

namespace pp::detail {

// The host emulation of the carry-chain instructions (names as PTX's; `cc` is the flag).
struct EmuCarry {
  uint32_t cc = 0;
  static constexpr uint64_t kWord = 0xffffffffu;
  PP_HD uint32_t mul_lo(uint32_t a, uint32_t b) { return uint32_t(uint64_t(a) * b); }
  PP_HD uint32_t mul_hi(uint32_t a, uint32_t b) { return uint32_t((uint64_t(a) * b) >> 32); }
  PP_HD uint32_t set(uint64_t v) {
    cc = uint32_t(v >> 32);
    return uint32_t(v & kWord);
  }
  PP_HD uint32_t mad_lo_cc(uint32_t a, uint32_t b, uint32_t c) { return set(uint64_t(mul_lo(a, b)) + c); }
  PP_HD uint32_t madc_lo_cc(uint32_t a, uint32_t b, uint32_t c) { return set(uint64_t(mul_lo(a, b)) + c + cc); }
  PP_HD uint32_t madc_hi_cc(uint32_t a, uint32_t b, uint32_t c) { return set(uint64_t(mul_hi(a, b)) + c + cc); }
  PP_HD uint32_t madc_hi(uint32_t a, uint32_t b, uint32_t c) { return uint32_t(uint64_t(mul_hi(a, b)) + c + cc); }
  PP_HD uint32_t add_cc(uint32_t a, uint32_t b) { return set(uint64_t(a) + b); }
  PP_HD uint32_t addc_cc(uint32_t a, uint32_t b) { return set(uint64_t(a) + b + cc); }
  PP_HD uint32_t addc(uint32_t a, uint32_t b) { return uint32_t(uint64_t(a) + b + cc); }
  // Subtractions: cc is the borrow (PTX's sub.cc/subc.cc/subc read and write it consistently).
  PP_HD uint32_t sub_cc(uint32_t a, uint32_t b) {
    cc = a < b ? 1u : 0u;
    return a - b;
  }
  PP_HD uint32_t subc_cc(uint32_t a, uint32_t b) {
    const uint64_t d = uint64_t(a) - b - cc;
    cc = uint32_t(d >> 63);
    return uint32_t(d & kWord);
  }
  PP_HD uint32_t subc(uint32_t a, uint32_t b) { return uint32_t(uint64_t(a) - b - cc); }
  // 0 - 0 - borrow: all ones after a borrow, 0 otherwise.
  PP_HD uint32_t borrow_mask() { return cc ? 0xffffffffu : 0u; }
  // With an immediate 0 operand (PtxCarry writes these with the literal, as ptxas likes them).
  PP_HD uint32_t madc_lo_cc_0(uint32_t a, uint32_t b) { return madc_lo_cc(a, b, 0u); }
  PP_HD uint32_t madc_hi_0(uint32_t a, uint32_t b) { return madc_hi(a, b, 0u); }
  PP_HD uint32_t addc_0(uint32_t a) { return addc(a, 0u); }
  PP_HD uint32_t carry() { return addc(0u, 0u); }
  PP_HD uint32_t subc_0(uint32_t a) { return subc(a, 0u); }
};

#if PP_DEVICE_CODE
// One PTX instruction a call. The chains are `asm volatile` so that the front end keeps their
// order (the flag is invisible to it); the plain products are not, so they can be scheduled freely.
struct PtxCarry {
  __device__ PP_INLINE uint32_t mul_lo(uint32_t a, uint32_t b) {
    uint32_t r;
    asm("mul.lo.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
  }
  __device__ PP_INLINE uint32_t mul_hi(uint32_t a, uint32_t b) {
    uint32_t r;
    asm("mul.hi.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
  }
  __device__ PP_INLINE uint32_t mad_lo_cc(uint32_t a, uint32_t b, uint32_t c) {
    uint32_t r;
    asm volatile("mad.lo.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
  }
  __device__ PP_INLINE uint32_t madc_lo_cc(uint32_t a, uint32_t b, uint32_t c) {
    uint32_t r;
    asm volatile("madc.lo.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
  }
  __device__ PP_INLINE uint32_t madc_hi_cc(uint32_t a, uint32_t b, uint32_t c) {
    uint32_t r;
    asm volatile("madc.hi.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
  }
  __device__ PP_INLINE uint32_t madc_hi(uint32_t a, uint32_t b, uint32_t c) {
    uint32_t r;
    asm volatile("madc.hi.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
  }
  __device__ PP_INLINE uint32_t add_cc(uint32_t a, uint32_t b) {
    uint32_t r;
    asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
  }
  __device__ PP_INLINE uint32_t addc_cc(uint32_t a, uint32_t b) {
    uint32_t r;
    asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
  }
  __device__ PP_INLINE uint32_t addc(uint32_t a, uint32_t b) {
    uint32_t r;
    asm volatile("addc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
  }
  __device__ PP_INLINE uint32_t sub_cc(uint32_t a, uint32_t b) {
    uint32_t r;
    asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
  }
  __device__ PP_INLINE uint32_t subc_cc(uint32_t a, uint32_t b) {
    uint32_t r;
    asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
  }
  __device__ PP_INLINE uint32_t subc(uint32_t a, uint32_t b) {
    uint32_t r;
    asm volatile("subc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
  }
  __device__ PP_INLINE uint32_t borrow_mask() {
    uint32_t r;
    asm volatile("subc.u32 %0, 0, 0;" : "=r"(r));
    return r;
  }
  __device__ PP_INLINE uint32_t madc_lo_cc_0(uint32_t a, uint32_t b) {
    uint32_t r;
    asm volatile("madc.lo.cc.u32 %0, %1, %2, 0;" : "=r"(r) : "r"(a), "r"(b));
    return r;
  }
  __device__ PP_INLINE uint32_t madc_hi_0(uint32_t a, uint32_t b) {
    uint32_t r;
    asm volatile("madc.hi.u32 %0, %1, %2, 0;" : "=r"(r) : "r"(a), "r"(b));
    return r;
  }
  __device__ PP_INLINE uint32_t addc_0(uint32_t a) {
    uint32_t r;
    asm volatile("addc.u32 %0, %1, 0;" : "=r"(r) : "r"(a));
    return r;
  }
  __device__ PP_INLINE uint32_t carry() {
    uint32_t r;
    asm volatile("addc.u32 %0, 0, 0;" : "=r"(r));
    return r;
  }
  __device__ PP_INLINE uint32_t subc_0(uint32_t a) {
    uint32_t r;
    asm volatile("subc.u32 %0, %1, 0;" : "=r"(r) : "r"(a));
    return r;
  }
};
#endif

// ---------------------------------------------------------------------------------------------
// Word chains

// r = a + b over N words; the caller's bound says the sum fits (no carry out).
template <int N, class K>
PP_HD PP_INLINE void add_words(K& k, uint32_t* r, const uint32_t* a, const uint32_t* b) {
  r[0] = k.add_cc(a[0], b[0]);
  PP_UNROLL
  for (int j = 1; j < N - 1; ++j) r[j] = k.addc_cc(a[j], b[j]);
  r[N - 1] = k.addc(a[N - 1], b[N - 1]);
}

// r = a - b over N words; the caller's bound says a >= b (no borrow out).
template <int N, class K>
PP_HD PP_INLINE void sub_words(K& k, uint32_t* r, const uint32_t* a, const uint32_t* b) {
  r[0] = k.sub_cc(a[0], b[0]);
  PP_UNROLL
  for (int j = 1; j < N - 1; ++j) r[j] = k.subc_cc(a[j], b[j]);
  r[N - 1] = k.subc(a[N - 1], b[N - 1]);
}

// r = a - b mod 2^(32N); returns all ones when a < b (the borrow out), else 0.
template <int N, class K>
PP_HD PP_INLINE uint32_t sub_words_borrow(K& k, uint32_t* r, const uint32_t* a, const uint32_t* b) {
  r[0] = k.sub_cc(a[0], b[0]);
  PP_UNROLL
  for (int j = 1; j < N; ++j) r[j] = k.subc_cc(a[j], b[j]);
  return k.borrow_mask();
}

// r = e + (o >> 32), the value X/2^32 of a row pair whose E[0] is 0 or emitted (no carry out:
// the row bound keeps it below 2^(32W)).
template <int W, class K>
PP_HD PP_INLINE void fold_words(K& k, uint32_t* r, const uint32_t* e, const uint32_t* o) {
  r[0] = k.add_cc(e[0], o[1]);
  PP_UNROLL
  for (int j = 1; j < W - 1; ++j) r[j] = k.addc_cc(e[j], o[j + 1]);
  r[W - 1] = k.addc_0(e[W - 1]);
}

// r = s - m when s >= m, else s; for s < 2m < 2^(32W). r may alias s.
template <int W, class K>
PP_HD PP_INLINE void reduce_once(K& k, uint32_t* r, const uint32_t* s, const uint32_t* m) {
  uint32_t d[W];
  const uint32_t keep = sub_words_borrow<W>(k, d, s, m);  // all ones when s < m
  PP_UNROLL
  for (int j = 0; j < W; ++j) r[j] = keep ? s[j] : d[j];
}

// ---------------------------------------------------------------------------------------------
// Rows (see the row form above)

// acc[j], acc[j+1] = lo, hi of x[j]·y for j = 0, 2, ..., W-2 (disjoint: no carries).
template <int W, class K>
PP_HD PP_INLINE void mul_even_words(K& k, uint32_t* acc, const uint32_t* x, uint32_t y) {
  PP_UNROLL
  for (int j = 0; j < W; j += 2) {
    acc[j] = k.mul_lo(x[j], y);
    acc[j + 1] = k.mul_hi(x[j], y);
  }
}

// acc += Σ_{j = 0, 2, ..., W-2} x[j]·y·2^(32j); starts a carry chain and leaves its carry out in
// the flag (the caller consumes it with addc or lets the next chain overwrite it).
template <int W, class K>
PP_HD PP_INLINE void mad_even_words_cc(K& k, uint32_t* acc, const uint32_t* x, uint32_t y) {
  acc[0] = k.mad_lo_cc(x[0], y, acc[0]);
  acc[1] = k.madc_hi_cc(x[0], y, acc[1]);
  PP_UNROLL
  for (int j = 2; j < W; j += 2) {
    acc[j] = k.madc_lo_cc(x[j], y, acc[j]);
    acc[j + 1] = k.madc_hi_cc(x[j], y, acc[j + 1]);
  }
}

// acc = (acc >> 64) + Σ_{j = 0, 2, ..., W-2} x[j]·y·2^(32j) + flag; the chain ends here (the top
// word cannot overflow, see above).
template <int W, class K>
PP_HD PP_INLINE void mad_rshift_words(K& k, uint32_t* acc, const uint32_t* x, uint32_t y) {
  PP_UNROLL
  for (int j = 0; j < W - 2; j += 2) {
    acc[j] = k.madc_lo_cc(x[j], y, acc[j + 2]);
    acc[j + 1] = k.madc_hi_cc(x[j], y, acc[j + 3]);
  }
  acc[W - 2] = k.madc_lo_cc_0(x[W - 2], y);
  acc[W - 1] = k.madc_hi_0(x[W - 2], y);
}

// X = X/2^32 + x·y with the roles swapped: E is the last row's O and O the last row's E, whose word
// 0 is final. y = y_of(E[0]) is taken once the new E[0] holds the folded word (a product row
// passes its multiplier; a reduction row its q = E[0]·inv, so that this row makes E[0] zero).
template <int W, class K, class Y>
PP_HD PP_INLINE void shift_row(K& k, uint32_t* E, uint32_t* O, const uint32_t* x, Y y_of) {
  E[0] = k.add_cc(E[0], O[1]);
  const uint32_t y = y_of(E[0]);
  mad_rshift_words<W>(k, O, x + 1, y);
  mad_even_words_cc<W>(k, E, x, y);
  O[W - 1] = k.addc_0(O[W - 1]);
}

// X += m·q in place (no shift), q = -E[0]·m^-1 mod 2^32: E[0] becomes 0. The carry out of O's
// first chain is always 0 (the bound above) and is not consumed.
template <int W, class K>
PP_HD PP_INLINE void reduce_row(K& k, uint32_t* E, uint32_t* O, const uint32_t* m, uint32_t inv) {
  const uint32_t q = E[0] * inv;
  mad_even_words_cc<W>(k, O, m + 1, q);
  mad_even_words_cc<W>(k, E, m, q);
  O[W - 1] = k.addc_0(O[W - 1]);
}

// ---------------------------------------------------------------------------------------------
// The Montgomery product and the modular sum and difference

// r = a·b·2^(-32W) mod m, fully reduced, for a, b < m < 2^(32W-1) (CIOS: a product row, then a
// reduction row, W times). r may alias a or b.
template <int W, class K>
PP_HD PP_INLINE void mont_mul_words(K& k, uint32_t* r, const uint32_t* a, const uint32_t* b, const uint32_t* m,
                                    uint32_t inv) {
  static_assert(W % 2 == 0 && W >= 4, "even/odd split needs an even word count");
  uint32_t ev[W], od[W];
  PP_UNROLL
  for (int i = 0; i < W; i += 2) {
    const uint32_t b0 = b[i], b1 = b[i + 1];
    if (i == 0) {
      mul_even_words<W>(k, od, a + 1, b0);
      mul_even_words<W>(k, ev, a, b0);
    } else {
      shift_row<W>(k, ev, od, a, [b0](uint32_t) { return b0; });
    }
    reduce_row<W>(k, ev, od, m, inv);
    shift_row<W>(k, od, ev, a, [b1](uint32_t) { return b1; });
    reduce_row<W>(k, od, ev, m, inv);
  }
  // After the last (odd) row od[0] == 0: T = ev + (od >> 32) < 2m, one conditional subtraction.
  uint32_t t[W];
  fold_words<W>(k, t, ev, od);
  reduce_once<W>(k, r, t, m);
}

// r = a + b mod m for a, b < m (the top carry is kept, so m may use every bit of W words).
// The sum's chain is written out rather than taken from add_words: it must end in carry() to keep
// the top carry, and add_words closes its chain without one. (This and the two near-copies below —
// mod_sub_words's closing chain and wide_mul_words's row 0 — are kept on purpose: written through
// the generic helpers, ptxas schedules the G1 and G2 kernels differently
// (docs/perf-history/gpu-kernels-v10-v15.md). Unify them only with a GPU timing beside the change.)
template <int W, class K>
PP_HD PP_INLINE void mod_add_words(K& k, uint32_t* r, const uint32_t* a, const uint32_t* b, const uint32_t* m) {
  uint32_t s[W], d[W];
  s[0] = k.add_cc(a[0], b[0]);
  PP_UNROLL
  for (int j = 1; j < W; ++j) s[j] = k.addc_cc(a[j], b[j]);
  const uint32_t top = k.carry();
  d[0] = k.sub_cc(s[0], m[0]);
  PP_UNROLL
  for (int j = 1; j < W; ++j) d[j] = k.subc_cc(s[j], m[j]);
  const uint32_t keep = k.subc_0(top);  // all ones when a + b < m
  PP_UNROLL
  for (int j = 0; j < W; ++j) r[j] = keep ? s[j] : d[j];
}

// r = a - b mod m for a, b < m. The closing addition of m & borrow is its own chain, ended by
// carry() (see mod_add_words on why it is not add_words).
template <int W, class K>
PP_HD PP_INLINE void mod_sub_words(K& k, uint32_t* r, const uint32_t* a, const uint32_t* b, const uint32_t* m) {
  uint32_t d[W], mm[W];
  const uint32_t negative = sub_words_borrow<W>(k, d, a, b);
  PP_UNROLL
  for (int j = 0; j < W; ++j) mm[j] = m[j] & negative;
  r[0] = k.add_cc(d[0], mm[0]);
  PP_UNROLL
  for (int j = 1; j < W; ++j) r[j] = k.addc_cc(d[j], mm[j]);
  (void)k.carry();  // closes the chain (its carry is the borrow's complement, unused)
}

// ---------------------------------------------------------------------------------------------
// Lazy reduction: double-width values reduced once
//
// Why: a Montgomery product over W words is W² word products for a·b and W² for the reduction.
// A sum or difference of products needs only one reduction. Karatsuba's three Fp products reduce
// three times; but c0 = a0·b0 - a1·b1 and c1 = (a0 + a1)(b0 + b1) - a0·b0 - a1·b1 can be formed
// from the three double-width integer products first and reduced once each: 3 + 2 instead of
// 3 + 3 halves, 17 % fewer multiply-adds (docs/perf-history/gpu-kernels-v10-v15.md).
//   1. v0 = a0·b0, v1 = a1·b1, s = (a0 + a1)·(b0 + b1), each 2W words (wide_mul_words: the
//      product rows without the reduction rows; each row emits its lowest word). a0 + a1 < 2m is
//      not reduced: the identity s = v0 + v1 + a0·b1 + a1·b0 is over the integers.
//   2. c0 = v0 - v1 = lo + 2^(32W)·hi with hi in (-m, m): hi += m when the subtraction borrows, so
//      0 <= hi < m (wide_sub_lifted). c1 = s - v0 - v1 = a0·b1 + a1·b0 < 2m², so its hi < m.
//   3. redc_add_words: REDC of the low half gives r <= m with r ≡ lo·2^(-32W); r + hi < 2m, one
//      conditional subtraction leaves the fully reduced value, the same words as the host's
//      product (a reduced Montgomery value is unique).

// lo + 2^(32W)·hi = a·b for a, b < 2^(32W) (X < a·2^32 < 2^(32W+32) after every row, so no carry
// leaves O's top word).
template <int W, class K>
PP_HD PP_INLINE void wide_mul_words(K& k, uint32_t* lo, uint32_t* hi, const uint32_t* a, const uint32_t* b) {
  static_assert(W % 2 == 0 && W >= 4, "an even word count");
  uint32_t e[W], o[W];
  PP_UNROLL
  // Row 0 is written out, its e and o words interleaved, not mul_even_words twice: the two forms
  // compute the same words, and this is the order behind the kernels' timings (see mod_add_words).
  for (int j = 0; j < W; j += 2) {  // row 0: disjoint word pairs, no carries (e and o interleaved)
    e[j] = k.mul_lo(a[j], b[0]);
    e[j + 1] = k.mul_hi(a[j], b[0]);
    o[j] = k.mul_lo(a[j + 1], b[0]);
    o[j + 1] = k.mul_hi(a[j + 1], b[0]);
  }
  lo[0] = e[0];
  PP_UNROLL
  for (int row = 1; row < W; ++row) {
    uint32_t* E = row % 2 ? o : e;
    uint32_t* O = row % 2 ? e : o;
    const uint32_t bi = b[row];
    shift_row<W>(k, E, O, a, [bi](uint32_t) { return bi; });
    lo[row] = E[0];
  }
  // The last row (W - 1, odd) used E = o: the high half is X/2^32 = e + (o >> 32).
  fold_words<W>(k, hi, e, o);
}

// r = (lo + 2^(32W)·hi)·2^(-32W) mod m, fully reduced, for hi < m < 2^(32W-1) and any lo:
// W reduction rows give (lo + Q·m)/2^(32W) <= m for the Q < 2^(32W) they choose; plus hi, < 2m:
// one conditional subtraction.
template <int W, class K>
PP_HD PP_INLINE void redc_add_words(K& k, uint32_t* r, const uint32_t* lo, const uint32_t* hi, const uint32_t* m,
                                    uint32_t inv) {
  uint32_t e[W], o[W];
  PP_UNROLL
  for (int j = 0; j < W; ++j) e[j] = lo[j];
  {  // row 0: O starts empty
    const uint32_t q = k.mul_lo(e[0], inv);
    mul_even_words<W>(k, o, m + 1, q);
    mad_even_words_cc<W>(k, e, m, q);
    o[W - 1] = k.addc_0(o[W - 1]);
  }
  PP_UNROLL
  for (int row = 1; row < W; ++row) {
    uint32_t* E = row % 2 ? o : e;
    uint32_t* O = row % 2 ? e : o;
    shift_row<W>(k, E, O, m, [&k, inv](uint32_t e0) { return k.mul_lo(e0, inv); });
  }
  // After row W-1 (E = o) o[0] == 0: the reduced low half is e + (o >> 32) <= m; add hi.
  uint32_t s[W];
  fold_words<W>(k, s, e, o);
  add_words<W>(k, s, s, hi);
  reduce_once<W>(k, r, s, m);
}

// d = x - y for double-width x, y < m·2^(32W) (products of reduced values), with m added to the
// high half when the difference is negative: the result's high half is in [0, m), as
// redc_add_words needs, and d ≡ x - y mod m·2^(32W).
template <int W, class K>
PP_HD PP_INLINE void wide_sub_lifted(K& k, uint32_t* d, const uint32_t* x, const uint32_t* y, const uint32_t* m) {
  const uint32_t negative = sub_words_borrow<2 * W>(k, d, x, y);
  uint32_t mm[W];
  PP_UNROLL
  for (int j = 0; j < W; ++j) mm[j] = m[j] & negative;
  add_words<W>(k, d + W, d + W, mm);
}

// r = (a·b - c·d)·2^(-32W) mod m, fully reduced, with one reduction instead of two (the Y of
// the XYZZ additions, R·(Q - X3) - Y·PPP); inputs reduced; r may alias any input.
template <int W, class K>
PP_HD PP_INLINE void mul_sub_words(K& k, uint32_t* r, const uint32_t* a, const uint32_t* b, const uint32_t* c,
                                   const uint32_t* d, const uint32_t* m, uint32_t inv) {
  uint32_t x[2 * W], y[2 * W];
  wide_mul_words<W>(k, x, x + W, a, b);
  wide_mul_words<W>(k, y, y + W, c, d);
  wide_sub_lifted<W>(k, x, x, y, m);
  redc_add_words<W>(k, r, x, x + W, m, inv);
}

// The two double-width coordinates of (a0 + a1·u)(b0 + b1·u) in Fp2 = Fp[u]/(u² + 1), before
// their reductions: x0 = a0·b0 - a1·b1 with m added to its high half when negative (high half in
// [0, m)), x1 = a0·b1 + a1·b0 (< 2m², high half < m); both below m·2^(32W). Inputs reduced
// (< m < 2^(32W-2), so a0 + a1 fits W words).
template <int W, class K>
PP_HD PP_INLINE void fp2_wide_words(K& k, uint32_t* x0, uint32_t* x1, const uint32_t* a0, const uint32_t* a1,
                                    const uint32_t* b0, const uint32_t* b1, const uint32_t* m) {
  uint32_t sa[W], sb[W];  // a0 + a1, b0 + b1, not reduced (< 2m)
  add_words<W>(k, sa, a0, a1);
  add_words<W>(k, sb, b0, b1);
  uint32_t v0[2 * W], v1[2 * W];
  wide_mul_words<W>(k, v0, v0 + W, a0, b0);
  wide_mul_words<W>(k, v1, v1 + W, a1, b1);
  // x0 = v0 - v1, u = v0 + v1 (into v0; < 2m² < 2^(64W), no carry out).
  wide_sub_lifted<W>(k, x0, v0, v1, m);
  add_words<2 * W>(k, v0, v0, v1);
  // x1 = s - u = a0·b1 + a1·b0 >= 0.
  wide_mul_words<W>(k, x1, x1 + W, sa, sb);
  sub_words<2 * W>(k, x1, x1, v0);
}

// (r0 + r1·u) = (a0 + a1·u)(b0 + b1·u) in Fp2, Montgomery words, fully reduced: two reductions
// instead of three. Inputs reduced; r0, r1 may alias the inputs.
template <int W, class K>
PP_HD PP_INLINE void fp2_mul_words(K& k, uint32_t* r0, uint32_t* r1, const uint32_t* a0, const uint32_t* a1,
                                   const uint32_t* b0, const uint32_t* b1, const uint32_t* m, uint32_t inv) {
  uint32_t x0[2 * W], x1[2 * W];
  fp2_wide_words<W>(k, x0, x1, a0, a1, b0, b1, m);
  redc_add_words<W>(k, r0, x0, x0 + W, m, inv);
  redc_add_words<W>(k, r1, x1, x1 + W, m, inv);
}

// r = a·b - c·d in Fp2 (the Y of the G2 XYZZ additions) with two reductions instead of four: both
// products at double width (fp2_wide_words), their differences lifted (each operand is below
// m·2^(32W), so wide_sub_lifted leaves a high half in [0, m)), one REDC a coordinate. Inputs
// reduced; r may alias any input.
template <int W, class K>
PP_HD PP_INLINE void fp2_mul_sub_words(K& k, uint32_t* r0, uint32_t* r1, const uint32_t* a0, const uint32_t* a1,
                                       const uint32_t* b0, const uint32_t* b1, const uint32_t* c0, const uint32_t* c1,
                                       const uint32_t* d0, const uint32_t* d1, const uint32_t* m, uint32_t inv) {
  uint32_t x0[2 * W], x1[2 * W], y0[2 * W], y1[2 * W];
  fp2_wide_words<W>(k, x0, x1, a0, a1, b0, b1, m);
  fp2_wide_words<W>(k, y0, y1, c0, c1, d0, d1, m);
  wide_sub_lifted<W>(k, x0, x0, y0, m);
  wide_sub_lifted<W>(k, x1, x1, y1, m);
  redc_add_words<W>(k, r0, x0, x0 + W, m, inv);
  redc_add_words<W>(k, r1, x1, x1 + W, m, inv);
}

}  // namespace pp::detail
