// Lazy reduction on the device: the Fp2 product with two Montgomery reductions instead of three
// (lazy Karatsuba, fp2_mul_words) and a·b - c·d with one instead of two (mul_sub_words, the Y of
// the XYZZ additions), written once over a carry-chain primitive set `K`: on the device K is
// PtxCarry (the hardware carry flag, one PTX instruction per call); on the host K is EmuCarry, the
// same instructions emulated with an explicit flag, so CI runs the very sequence the GPU runs
// (tests/test_field.cpp: Fp2.ProductsOnEdgeCoordinatesMatchGmp, Fp2.DeviceProductSequence*,
// FieldTest.DeviceMulSubSequenceMatchesHost) against GMP and the host's arithmetic.
//
// Why: a Montgomery product over W 32-bit words is W² word products for a·b and W² for the
// reduction. Karatsuba's three Fp products reduce three times; but c0 = a0·b0 - a1·b1 and
// c1 = (a0 + a1)(b0 + b1) - a0·b0 - a1·b1 can be formed from the three double-width integer
// products first and reduced once each: 3 + 2 instead of 3 + 3 halves, 17 % fewer multiply-adds.
// Eight of the G2 mixed addition's ten products are Fp2 products (docs/PERF.md, v13 and v14).
//
//   1. v0 = a0·b0, v1 = a1·b1, s = (a0 + a1)·(b0 + b1), each 2W words (wide_mul_words: the
//      product's row-shifting even/odd form without the q·m rows; each row emits its lowest word).
//      a0 + a1 < 2p < 2^(32W) is not reduced: the identity s = v0 + v1 + a0·b1 + a1·b0 is over
//      the integers.
//   2. c0 = v0 - v1 = lo + 2^(32W)·hi with hi in (-p, p): hi += p when the subtraction borrows, so
//      0 <= hi < p. c1 = s - v0 - v1 = a0·b1 + a1·b0 < 2p², so its hi < 2p²/2^(32W) < p.
//   3. redc_add_words: REDC of the low half gives r <= p with r ≡ lo·2^(-32W); r + hi < 2p, one
//      conditional subtraction leaves the fully reduced value, the same words as the host's
//      product (a reduced Montgomery value is unique).
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
};

#if PP_DEVICE_CODE
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
};
#endif

// lo + 2^(32W)·hi = a·b for a, b < 2^(32W). The product's row form: X = e + 2^32·o, e holding the
// products of a's even words (lo at word j, hi at j+1), o those of the odd words one word down;
// after row i adds a·b[i], X's word 0 (e[0]) is final: it is emitted as lo[i] and X/2^32 is the
// next row's X with the roles of e and o swapped (o plus e[1] folded into its word 0; e shifted
// down two words). X < a·2^32 < 2^(32W+32) after every row, so no carry leaves o's top word.
template <int W, class K>
PP_HD PP_INLINE void wide_mul_words(K& k, uint32_t* lo, uint32_t* hi, const uint32_t* a, const uint32_t* b) {
  static_assert(W % 2 == 0 && W >= 4, "an even word count");
  uint32_t e[W], o[W];
  PP_UNROLL
  for (int j = 0; j < W; j += 2) {  // row 0: disjoint word pairs, no carries
    e[j] = k.mul_lo(a[j], b[0]);
    e[j + 1] = k.mul_hi(a[j], b[0]);
    o[j] = k.mul_lo(a[j + 1], b[0]);
    o[j + 1] = k.mul_hi(a[j + 1], b[0]);
  }
  lo[0] = e[0];
  PP_UNROLL
  for (int row = 1; row < W; ++row) {
    uint32_t* E = row % 2 ? o : e;  // this row's even accumulator: the last row's odd one
    uint32_t* O = row % 2 ? e : o;  // the last row's even one, its word 0 emitted
    const uint32_t bi = b[row];
    E[0] = k.add_cc(E[0], O[1]);
    PP_UNROLL
    for (int j = 0; j < W - 2; j += 2) {
      O[j] = k.madc_lo_cc(a[j + 1], bi, O[j + 2]);
      O[j + 1] = k.madc_hi_cc(a[j + 1], bi, O[j + 3]);
    }
    O[W - 2] = k.madc_lo_cc(a[W - 1], bi, 0u);
    O[W - 1] = k.madc_hi(a[W - 1], bi, 0u);
    E[0] = k.mad_lo_cc(a[0], bi, E[0]);
    E[1] = k.madc_hi_cc(a[0], bi, E[1]);
    PP_UNROLL
    for (int j = 2; j < W; j += 2) {
      E[j] = k.madc_lo_cc(a[j], bi, E[j]);
      E[j + 1] = k.madc_hi_cc(a[j], bi, E[j + 1]);
    }
    O[W - 1] = k.addc(O[W - 1], 0u);
    lo[row] = E[0];
  }
  // The last row (W - 1, odd) used E = o: the high half is X/2^32 = e + (o >> 32).
  hi[0] = k.add_cc(e[0], o[1]);
  PP_UNROLL
  for (int j = 1; j < W - 1; ++j) hi[j] = k.addc_cc(e[j], o[j + 1]);
  hi[W - 1] = k.addc(e[W - 1], 0u);
}

// r = (lo + 2^(32W)·hi)·2^(-32W) mod m, fully reduced, for hi < m < 2^(32W-1) and any lo:
// W reduction rows (q = x_0·inv, x = (x + q·m)/2^32, in the product's two-accumulator form) give
// (lo + Q·m)/2^(32W) <= m for the Q < 2^(32W) they choose; plus hi, < 2m: one conditional subtraction.
template <int W, class K>
PP_HD PP_INLINE void redc_add_words(K& k, uint32_t* r, const uint32_t* lo, const uint32_t* hi, const uint32_t* m,
                                    uint32_t inv) {
  uint32_t e[W], o[W];
  PP_UNROLL
  for (int j = 0; j < W; ++j) e[j] = lo[j];
  {
    const uint32_t q = k.mul_lo(e[0], inv);
    PP_UNROLL
    for (int j = 0; j < W; j += 2) {
      o[j] = k.mul_lo(m[j + 1], q);
      o[j + 1] = k.mul_hi(m[j + 1], q);
    }
    e[0] = k.mad_lo_cc(m[0], q, e[0]);
    e[1] = k.madc_hi_cc(m[0], q, e[1]);
    PP_UNROLL
    for (int j = 2; j < W; j += 2) {
      e[j] = k.madc_lo_cc(m[j], q, e[j]);
      e[j + 1] = k.madc_hi_cc(m[j], q, e[j + 1]);
    }
    o[W - 1] = k.addc(o[W - 1], 0u);
  }
  // Rows 1 .. W-1, roles swapped each time (as wide_mul_words, with q·m in place of a·b[i]).
  PP_UNROLL
  for (int row = 1; row < W; ++row) {
    uint32_t* E = row % 2 ? o : e;
    uint32_t* O = row % 2 ? e : o;
    E[0] = k.add_cc(E[0], O[1]);
    const uint32_t q = k.mul_lo(E[0], inv);
    PP_UNROLL
    for (int j = 0; j < W - 2; j += 2) {
      O[j] = k.madc_lo_cc(m[j + 1], q, O[j + 2]);
      O[j + 1] = k.madc_hi_cc(m[j + 1], q, O[j + 3]);
    }
    O[W - 2] = k.madc_lo_cc(m[W - 1], q, 0u);
    O[W - 1] = k.madc_hi(m[W - 1], q, 0u);
    E[0] = k.mad_lo_cc(m[0], q, E[0]);
    E[1] = k.madc_hi_cc(m[0], q, E[1]);
    PP_UNROLL
    for (int j = 2; j < W; j += 2) {
      E[j] = k.madc_lo_cc(m[j], q, E[j]);
      E[j + 1] = k.madc_hi_cc(m[j], q, E[j + 1]);
    }
    O[W - 1] = k.addc(O[W - 1], 0u);
  }
  // After row W-1 (E = o) o[0] == 0: the reduced low half is e + (o >> 32) <= m; add hi.
  uint32_t s[W];
  s[0] = k.add_cc(e[0], o[1]);
  PP_UNROLL
  for (int j = 1; j < W - 1; ++j) s[j] = k.addc_cc(e[j], o[j + 1]);
  s[W - 1] = k.addc(e[W - 1], 0u);
  s[0] = k.add_cc(s[0], hi[0]);
  PP_UNROLL
  for (int j = 1; j < W - 1; ++j) s[j] = k.addc_cc(s[j], hi[j]);
  s[W - 1] = k.addc(s[W - 1], hi[W - 1]);
  // s < 2m < 2^(32W): subtract m once when s >= m.
  uint32_t d[W];
  d[0] = k.sub_cc(s[0], m[0]);
  PP_UNROLL
  for (int j = 1; j < W; ++j) d[j] = k.subc_cc(s[j], m[j]);
  const uint32_t keep = k.borrow_mask();  // all ones when s < m
  PP_UNROLL
  for (int j = 0; j < W; ++j) r[j] = keep ? s[j] : d[j];
}

// d = x - y for double-width x, y < m·2^(32W) (products of reduced values), with m added to the
// high half when the difference is negative: the result's high half is in [0, m), as
// redc_add_words needs, and d ≡ x - y mod m·2^(32W).
template <int W, class K>
PP_HD PP_INLINE void wide_sub_lifted(K& k, uint32_t* d, const uint32_t* x, const uint32_t* y, const uint32_t* m) {
  d[0] = k.sub_cc(x[0], y[0]);
  PP_UNROLL
  for (int j = 1; j < 2 * W; ++j) d[j] = k.subc_cc(x[j], y[j]);
  const uint32_t negative = k.borrow_mask();  // x < y: the high half is in (-m, 0), add m to it
  d[W] = k.add_cc(d[W], m[0] & negative);
  PP_UNROLL
  for (int j = 1; j < W - 1; ++j) d[W + j] = k.addc_cc(d[W + j], m[j] & negative);
  d[2 * W - 1] = k.addc(d[2 * W - 1], m[W - 1] & negative);
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

// (r0 + r1·u) = (a0 + a1·u)(b0 + b1·u) in Fp2 = Fp[u]/(u² + 1), Montgomery words, fully reduced;
// inputs reduced (< m < 2^(32W-2), so a0 + a1 fits W words); r0, r1 may alias the inputs.
template <int W, class K>
PP_HD PP_INLINE void fp2_mul_words(K& k, uint32_t* r0, uint32_t* r1, const uint32_t* a0, const uint32_t* a1,
                                   const uint32_t* b0, const uint32_t* b1, const uint32_t* m, uint32_t inv) {
  uint32_t sa[W], sb[W];  // a0 + a1, b0 + b1, not reduced (< 2m)
  sa[0] = k.add_cc(a0[0], a1[0]);
  PP_UNROLL
  for (int j = 1; j < W - 1; ++j) sa[j] = k.addc_cc(a0[j], a1[j]);
  sa[W - 1] = k.addc(a0[W - 1], a1[W - 1]);
  sb[0] = k.add_cc(b0[0], b1[0]);
  PP_UNROLL
  for (int j = 1; j < W - 1; ++j) sb[j] = k.addc_cc(b0[j], b1[j]);
  sb[W - 1] = k.addc(b0[W - 1], b1[W - 1]);
  uint32_t v0[2 * W], v1[2 * W];
  wide_mul_words<W>(k, v0, v0 + W, a0, b0);
  wide_mul_words<W>(k, v1, v1 + W, a1, b1);
  // c0 = v0 - v1 (into d), u = v0 + v1 (into v0; < 2m² < 2^(64W), no carry out).
  uint32_t d[2 * W];
  wide_sub_lifted<W>(k, d, v0, v1, m);
  v0[0] = k.add_cc(v0[0], v1[0]);
  PP_UNROLL
  for (int j = 1; j < 2 * W - 1; ++j) v0[j] = k.addc_cc(v0[j], v1[j]);
  v0[2 * W - 1] = k.addc(v0[2 * W - 1], v1[2 * W - 1]);
  // s - u = a0·b1 + a1·b0 >= 0 (into v1).
  wide_mul_words<W>(k, v1, v1 + W, sa, sb);
  v1[0] = k.sub_cc(v1[0], v0[0]);
  PP_UNROLL
  for (int j = 1; j < 2 * W - 1; ++j) v1[j] = k.subc_cc(v1[j], v0[j]);
  v1[2 * W - 1] = k.subc(v1[2 * W - 1], v0[2 * W - 1]);
  redc_add_words<W>(k, r0, d, d + W, m, inv);
  redc_add_words<W>(k, r1, v1, v1 + W, m, inv);
}

}  // namespace pp::detail
