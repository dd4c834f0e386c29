// Montgomery squaring over W 32-bit words, written once over a carry-chain primitive set `K`:
// on the device K is PtxCarry (the hardware carry flag, one PTX instruction per call); on the
// host K is EmuCarry, the same instructions emulated with an explicit flag, so CI runs the very
// sequence the GPU runs (tests/test_field.cpp, DeviceSquaringSequence*) against GMP.
//
// Why a squaring of its own: the product a·b costs W² word products for a·b plus W² for the
// reduction. a² needs only the W(W-1)/2 products a_i·a_j (i < j), doubled, plus the W squares
// a_i² on the diagonal: 78 instead of 144 word products for Fp (W = 12), and the reduction's
// 144 as before, so about 23 % fewer multiply-adds. Two of the ten products of the MSM's mixed
// addition are squares.
//
// The steps, all over fixed word indices (unrolled on the device, so the words are registers):
//   1. off-diagonal U = sum_{i<j} a_i·a_j·2^(32(i+j)) into one accumulator t, row by row, each
//      row as two carry chains (j = i+1, i+3, ... and j = i+2, i+4, ...) whose (lo, hi) word
//      pairs do not overlap. A word is written fresh the first time a chain reaches it (the
//      `top` tracker), accumulated after. One accumulator, not one per parity as the product's
//      even/odd split: two 2W-word arrays beside the MSM's live points made the accumulation
//      kernel spill at its 168 registers (docs/PERF.md, v12).
//   2. T = 2·U + sum_i a_i²·2^(64i): one doubling chain, one diagonal chain. T < p² < 2^(64W).
//   3. REDC of T's low half lo (W rows of q = x_0·(-p^-1) mod 2^32, x = (x + q·p)/2^32), in the
//      product's two-accumulator form with the shift folded into the odd chain; the result r
//      is at most p. With hi = T's high half (< p), r + hi < 2p: one conditional subtraction
//      gives lo·2^(-32W) + hi = a²·2^(-32W) mod p, fully reduced, the same words as the product
//      a·a (the reduced Montgomery value is unique).
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
  // Subtractions: cc is the borrow (PTX's CC.CF after sub.cc is the inverted carry; the
  // instructions below read and write it consistently, as sub.cc/subc.cc/subc do).
  PP_HD uint32_t sub_cc(uint32_t a, uint32_t b) {
    cc = a < b ? 1u : 0u;
    return a - b;
  }
  PP_HD uint32_t subc_cc(uint32_t a, uint32_t b) {
    const uint64_t d = uint64_t(a) - b - cc;
    cc = uint32_t(d >> 63);
    return uint32_t(d & kWord);
  }
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
  __device__ PP_INLINE uint32_t borrow_mask() {
    uint32_t r;
    asm volatile("subc.u32 %0, 0, 0;" : "=r"(r));
    return r;
  }
};
#endif

// One chain of step 1: the products a_i·a_j for j = j0, j0 + 2, ... < W (low word at position
// i + j) added into t, whose words up to *top hold values (positions above are written fresh);
// the chain's carry goes up to the first fresh word or the rows' bound.
template <int W, class K>
PP_HD PP_INLINE void sqr_chain(K& k, uint32_t* t, int* top, const uint32_t* a, int i, int j0) {
  if (j0 >= W) return;
  const auto in = [&](int pos) { return pos <= *top ? t[pos] : 0u; };
  int pos = i + j0;
  t[pos] = k.mad_lo_cc(a[i], a[j0], in(pos));
  t[pos + 1] = k.madc_hi_cc(a[i], a[j0], in(pos + 1));
  PP_UNROLL
  for (int j = j0 + 2; j < W; j += 2) {
    pos = i + j;
    t[pos] = k.madc_lo_cc(a[i], a[j], in(pos));
    t[pos + 1] = k.madc_hi_cc(a[i], a[j], in(pos + 1));
  }
  // Rows 0 .. i sum to less than 2^(32(i+W+1)+1): no carry goes past position i + W + 1. (In
  // 4·10^6 emulated squares, 6.8·10^7 chains, of random and carry-patterned values no carry
  // went past the first word above a chain; the loop stays because that is not proven.)
  const int limit = i + W + 1;
  for (pos += 2; pos < limit && pos <= *top; ++pos) t[pos] = k.addc_cc(t[pos], 0u);
  t[pos] = k.addc(in(pos), 0u);
  if (pos > *top) *top = pos;
}

// r = a²·2^(-32W) mod m (words of a Montgomery element; a < m < 2^(32W-1)), inv = -m^-1 mod 2^32.
template <int W, class K>
PP_HD PP_INLINE void mont_sqr_words(K& k, uint32_t* r, const uint32_t* a, const uint32_t* m, uint32_t inv) {
  static_assert(W % 2 == 0 && W >= 4, "an even word count");
  // Step 1. Row i is two chains (j = i+1, i+3, ... and j = i+2, i+4, ...), whose pairs of
  // words do not overlap inside a chain; both add into t. No row reaches below position 2i+1.
  uint32_t t[2 * W];
  int top = -1;
  PP_UNROLL
  for (int i = 0; i < W - 1; ++i) {
    sqr_chain<W>(k, t, &top, a, i, i + 1);  // first: it starts lower (2i+1), so t stays contiguous
    sqr_chain<W>(k, t, &top, a, i, i + 2);
  }
  // Step 2. t = 2·t + diagonal; t covered positions 1 .. 2W-1 (U < 2^(64W-1)).
  t[1] = k.add_cc(t[1], t[1]);
  PP_UNROLL
  for (int pos = 2; pos < 2 * W - 1; ++pos) t[pos] = k.addc_cc(t[pos], t[pos]);
  t[2 * W - 1] = k.addc(t[2 * W - 1], t[2 * W - 1]);
  t[0] = k.mad_lo_cc(a[0], a[0], 0u);
  t[1] = k.madc_hi_cc(a[0], a[0], t[1]);
  PP_UNROLL
  for (int i = 1; i < W - 1; ++i) {
    t[2 * i] = k.madc_lo_cc(a[i], a[i], t[2 * i]);
    t[2 * i + 1] = k.madc_hi_cc(a[i], a[i], t[2 * i + 1]);
  }
  t[2 * W - 2] = k.madc_lo_cc(a[W - 1], a[W - 1], t[2 * W - 2]);
  t[2 * W - 1] = k.madc_hi(a[W - 1], a[W - 1], t[2 * W - 1]);
  // Step 3. x = e + 2^32·o, e = o = the product's accumulator pair; e[0] is the word the row
  // reduces. Row 0 starts from e = lo, o = q·m's odd words.
  uint32_t e[W], o[W];
  PP_UNROLL
  for (int j = 0; j < W; ++j) e[j] = t[j];
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
  // Rows 1 .. W-1 with the roles swapped each time: x/2^32 = o + e[1] + 2^32·(e >> 64), so
  // the new e is o with e[1] folded into its word 0, the new o is e shifted down two words,
  // the fold's carry and q·m's odd words added as it shifts.
  PP_UNROLL
  for (int row = 1; row < W; ++row) {
    uint32_t* E = row % 2 ? o : e;  // the accumulator this row reduces
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
  // After row W-1 (odd: E = o), o[0] == 0 and the reduced value is e + (o >> 32) <= m; add hi.
  uint32_t s[W];
  s[0] = k.add_cc(e[0], o[1]);
  PP_UNROLL
  for (int j = 1; j < W - 1; ++j) s[j] = k.addc_cc(e[j], o[j + 1]);
  s[W - 1] = k.addc(e[W - 1], 0u);
  s[0] = k.add_cc(s[0], t[W]);
  PP_UNROLL
  for (int j = 1; j < W - 1; ++j) s[j] = k.addc_cc(s[j], t[W + j]);
  s[W - 1] = k.addc(s[W - 1], t[2 * W - 1]);
  // s < 2m < 2^(32W): subtract m once when s >= m.
  uint32_t d[W];
  d[0] = k.sub_cc(s[0], m[0]);
  PP_UNROLL
  for (int j = 1; j < W; ++j) d[j] = k.subc_cc(s[j], m[j]);
  const uint32_t keep = k.borrow_mask();  // all ones when s < m
  PP_UNROLL
  for (int j = 0; j < W; ++j) r[j] = keep ? s[j] : d[j];
}

}  // namespace pp::detail
