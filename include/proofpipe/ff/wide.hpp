// Lazy reduction: double-width products of field elements, summed unreduced, and one Montgomery
// reduction for the whole sum.
//
// A Montgomery product is a product half (a·b, 2N limbs) and a reduction half of about the same
// cost. A sum of products needs only one reduction: the Fp2 product (Karatsuba) costs 3 product
// halves and 2 reductions instead of 3 full products, and a·b - c·d in Fp costs 2 product halves
// and 1 reduction instead of 2 full products. The GPU's curve formulas use these (the G1 and G2
// bucket additions of the MSM); the x86-64 host has its own lazy Fp2 kernel (field.hpp), so on
// the host these functions run the portable code, which the tests use to check the algebra and
// the bounds that the device code relies on.
//
// Bounds (N limbs, R = 2^(64N), p < R/8, as BLS12-381's Fp: 381 bits in 384):
//   * mul_wide takes "loose" inputs below 2p (a sum of two reduced elements, add_loose), so a
//     product is below 4p^2;
//   * a Wide value handed to redc must be below 8p^2 (any sum or difference of products the
//     caller builds, made non-negative with multiples of p^2, which are 0 mod p);
//   * redc's result is (T_lo + Q·p)/R + T_hi <= p + 8p^2/R < 2p before its one conditional
//     subtraction, so the result is fully reduced (< p), like every Field value.
#pragma once

#include <cstdint>

#include "proofpipe/core/hd.hpp"
#include "proofpipe/core/limbs.hpp"
#include "proofpipe/ff/field.hpp"

namespace pp {

namespace limbs {
// a·b as 2N limbs, at compile time.
template <int N>
constexpr Limbs<2 * N> mul_full(const Limbs<N>& a, const Limbs<N>& b) {
  Limbs<2 * N> r{};
  for (int i = 0; i < N; ++i) {
    uint64_t carry = 0;
    for (int j = 0; j < N; ++j) {
      const unsigned __int128 s = (unsigned __int128)a.v[i] * b.v[j] + r.v[i + j] + carry;
      r.v[i + j] = uint64_t(s);
      carry = uint64_t(s >> 64);
    }
    r.v[i + N] = carry;
  }
  return r;
}
}  // namespace limbs

// An unreduced product (or sum of products) of two elements of Field<P>: 2N little-endian limbs.
template <class P>
struct alignas(8) Wide {
  static constexpr int N = P::N;
  static constexpr int W = 4 * N;  // 32-bit words
  uint64_t l[2 * N];
  PP_HD uint32_t* w() { return reinterpret_cast<uint32_t*>(l); }
  PP_HD const uint32_t* w() const { return reinterpret_cast<const uint32_t*>(l); }
};

template <class P>
struct WideConsts {
  static constexpr int N = P::N;
  static constexpr Limbs<2 * N> p2 = limbs::mul_full<N>(P::modulus, P::modulus);
  static constexpr Limbs<2 * N> p2x2 = [] {
    Limbs<2 * N> r{};
    limbs::add(r, p2, p2);
    return r;
  }();
  // The bounds above: 8p < R, so that redc of anything below 8p^2 needs one subtraction.
  static_assert(FieldConsts<P>::bits <= 64 * N - 3, "lazy reduction needs p < R/8");
};

namespace detail {

// ----- portable (host) bodies -----

template <int N>
PP_HD PP_INLINE void mul_wide_generic(uint64_t* t, const uint64_t* a, const uint64_t* b) {
  for (int i = 0; i < 2 * N; ++i) t[i] = 0;
  for (int i = 0; i < N; ++i) {
    uint64_t carry = 0;
    for (int j = 0; j < N; ++j) {
      const unsigned __int128 s = (unsigned __int128)a[j] * b[i] + t[i + j] + carry;
      t[i + j] = uint64_t(s);
      carry = uint64_t(s >> 64);
    }
    t[i + N] = carry;
  }
}

// r = t·R^-1 mod m for t < 8m^2 (see the bounds above), fully reduced.
template <int N>
PP_HD PP_INLINE void redc_generic(uint64_t* r, const uint64_t* t, const uint64_t* m, uint64_t inv) {
  uint64_t x[2 * N + 1];
  for (int i = 0; i < 2 * N; ++i) x[i] = t[i];
  x[2 * N] = 0;
  for (int i = 0; i < N; ++i) {
    const uint64_t q = x[i] * inv;
    uint64_t carry = 0;
    for (int j = 0; j < N; ++j) {
      const unsigned __int128 s = (unsigned __int128)q * m[j] + x[i + j] + carry;
      x[i + j] = uint64_t(s);
      carry = uint64_t(s >> 64);
    }
    for (int k = i + N; k <= 2 * N && carry != 0; ++k) {
      const unsigned __int128 s = (unsigned __int128)x[k] + carry;
      x[k] = uint64_t(s);
      carry = uint64_t(s >> 64);
    }
  }
  // x[N .. 2N] < 2m < 2^(64N): one conditional subtraction.
  uint64_t d[N];
  uint64_t borrow = 0;
  for (int i = 0; i < N; ++i) {
    const unsigned __int128 s = (unsigned __int128)x[N + i] - m[i] - borrow;
    d[i] = uint64_t(s);
    borrow = uint64_t(s >> 64) & 1;
  }
  const bool keep = x[2 * N] == 0 && borrow;
  for (int i = 0; i < N; ++i) r[i] = keep ? x[N + i] : d[i];
}

// r = a + b over n limbs, modulo 2^(64n) (callers keep the true value in range).
PP_HD PP_INLINE void add_limbs(uint64_t* r, const uint64_t* a, const uint64_t* b, int n) {
  uint64_t carry = 0;
  for (int i = 0; i < n; ++i) {
    const unsigned __int128 s = (unsigned __int128)a[i] + b[i] + carry;
    r[i] = uint64_t(s);
    carry = uint64_t(s >> 64);
  }
}
PP_HD PP_INLINE void sub_limbs(uint64_t* r, const uint64_t* a, const uint64_t* b, int n) {
  uint64_t borrow = 0;
  for (int i = 0; i < n; ++i) {
    const unsigned __int128 s = (unsigned __int128)a[i] - b[i] - borrow;
    r[i] = uint64_t(s);
    borrow = uint64_t(s >> 64) & 1;
  }
}

#if PP_DEVICE_CODE
// ----- device bodies (32-bit words, PTX carry chains) -----

// t[0, 2W) = a·b. Two accumulators, so that each row runs two independent carry chains: e takes
// the products of a's even words (lo at word i + 2j, hi at i + 2j + 1: disjoint pairs), o those of
// the odd words, stored one word down (o[k] has weight 2^(32(k+1))). Row i adds into words
// [i, i + W) of each and puts its carry in word i + W, which no earlier row has written. The
// total is below 2^(64W), so o's top word ends 0 and is not read.
template <int W>
__device__ PP_INLINE void mul_wide_ptx(uint32_t* t, const uint32_t* a, const uint32_t* b) {
  uint32_t e[2 * W], o[2 * W];
  mul_even_ptx<W>(e, a, b[0]);
  mul_even_ptx<W>(o, a + 1, b[0]);
  e[W] = 0;
  o[W] = 0;
#pragma unroll
  for (int i = 1; i < W; ++i) {
    mad_even_cc_ptx<W>(e + i, a, b[i]);
    asm volatile("addc.u32 %0, 0, 0;" : "=r"(e[i + W]));
    mad_even_cc_ptx<W>(o + i, a + 1, b[i]);
    asm volatile("addc.u32 %0, 0, 0;" : "=r"(o[i + W]));
  }
  t[0] = e[0];
  asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(t[1]) : "r"(e[1]), "r"(o[0]));
#pragma unroll
  for (int k = 2; k < 2 * W - 1; ++k) asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(t[k]) : "r"(e[k]), "r"(o[k - 1]));
  asm volatile("addc.u32 %0, %1, %2;" : "=r"(t[2 * W - 1]) : "r"(e[2 * W - 1]), "r"(o[2 * W - 2]));
}

// One reduction row of redc_ptx (the reduction half of mont_row_ptx, same ev/od scheme): X = X/2^32
// (roles swapped by the caller; od's words move down two), then X += q·m with q = -X·m^-1 mod 2^32.
template <int W>
__device__ PP_INLINE void redc_row_ptx(uint32_t* ev, uint32_t* od, const uint32_t* m, uint32_t inv, bool first) {
  if (!first) {
    asm volatile("add.cc.u32 %0, %0, %1;" : "+r"(ev[0]) : "r"(od[1]));
#pragma unroll
    for (int j = 0; j < W - 2; ++j) asm volatile("addc.cc.u32 %0, %1, 0;" : "=r"(od[j]) : "r"(od[j + 2]));
    asm volatile("addc.u32 %0, 0, 0;" : "=r"(od[W - 2]));
    od[W - 1] = 0;
  }
  const uint32_t q = ev[0] * inv;
  if (first) mul_even_ptx<W>(od, m + 1, q);
  else mad_even_cc_ptx<W>(od, m + 1, q);  // carry out is always 0 (X < 2^(32W+32)): not consumed
  mad_even_cc_ptx<W>(ev, m, q);             // ev[0] becomes 0
  asm volatile("addc.u32 %0, %0, 0;" : "+r"(od[W - 1]));
}

// r = t·2^(-32W) mod m for a 2W-word t below 8m^2, fully reduced: W reduction rows over t's low
// half give (t_lo + Q·m)/2^(32W) <= m, t's high half (< m/2) is added, one conditional
// subtraction finishes.
template <int W>
__device__ PP_INLINE void redc_ptx(uint32_t* r, const uint32_t* t, const uint32_t* m, uint32_t inv) {
  static_assert(W % 2 == 0, "rows go in pairs");
  uint32_t ev[W], od[W];
#pragma unroll
  for (int j = 0; j < W; ++j) ev[j] = t[j];
#pragma unroll
  for (int i = 0; i < W; i += 2) {
    redc_row_ptx<W>(ev, od, m, inv, i == 0);
    redc_row_ptx<W>(od, ev, m, inv, false);
  }
  // After the last (odd) row od[0] == 0: T = ev + (od >> 32) <= m; then T + t_hi < 2m.
  asm volatile("add.cc.u32 %0, %0, %1;" : "+r"(ev[0]) : "r"(od[1]));
#pragma unroll
  for (int j = 1; j < W - 1; ++j) asm volatile("addc.cc.u32 %0, %0, %1;" : "+r"(ev[j]) : "r"(od[j + 1]));
  asm volatile("addc.u32 %0, %0, 0;" : "+r"(ev[W - 1]));
  asm volatile("add.cc.u32 %0, %0, %1;" : "+r"(ev[0]) : "r"(t[W]));
#pragma unroll
  for (int j = 1; j < W - 1; ++j) asm volatile("addc.cc.u32 %0, %0, %1;" : "+r"(ev[j]) : "r"(t[W + j]));
  asm volatile("addc.u32 %0, %0, %1;" : "+r"(ev[W - 1]) : "r"(t[2 * W - 1]));
  csub_ptx<W>(r, ev, m);
}

// r = a + b over n words, modulo 2^(32n).
template <int n>
__device__ PP_INLINE void add_words_ptx(uint32_t* r, const uint32_t* a, const uint32_t* b) {
  asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(r[0]) : "r"(a[0]), "r"(b[0]));
#pragma unroll
  for (int j = 1; j < n - 1; ++j) asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(r[j]) : "r"(a[j]), "r"(b[j]));
  asm volatile("addc.u32 %0, %1, %2;" : "=r"(r[n - 1]) : "r"(a[n - 1]), "r"(b[n - 1]));
}
template <int n>
__device__ PP_INLINE void sub_words_ptx(uint32_t* r, const uint32_t* a, const uint32_t* b) {
  asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(r[0]) : "r"(a[0]), "r"(b[0]));
#pragma unroll
  for (int j = 1; j < n - 1; ++j) asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(r[j]) : "r"(a[j]), "r"(b[j]));
  asm volatile("subc.u32 %0, %1, %2;" : "=r"(r[n - 1]) : "r"(a[n - 1]), "r"(b[n - 1]));
}
#endif  // PP_DEVICE_CODE

}  // namespace detail

// t = a·b, unreduced; a and b may be loose (< 2p).
template <class P>
PP_HD PP_INLINE void mul_wide(Wide<P>& t, const Field<P>& a, const Field<P>& b) {
#if PP_DEVICE_CODE
  detail::mul_wide_ptx<Field<P>::W>(t.w(), a.w(), b.w());
#else
  detail::mul_wide_generic<P::N>(t.l, a.l, b.l);
#endif
}

// r = t·R^-1 mod p (t < 8p^2), fully reduced: the Montgomery form of the sum t stands for.
template <class P>
PP_HD PP_INLINE void redc(Field<P>& r, const Wide<P>& t) {
  constexpr Limbs<P::N> m = FieldConsts<P>::modulus;
#if PP_DEVICE_CODE
  constexpr uint32_t inv32 = uint32_t(FieldConsts<P>::inv64);
  detail::redc_ptx<Field<P>::W>(r.w(), t.w(), reinterpret_cast<const uint32_t*>(m.v),
                                detail::device_inv32<inv32>());
#else
  detail::redc_generic<P::N>(r.l, t.l, m.v, FieldConsts<P>::inv64);
#endif
}

// r = a + b without reduction (< 2p): an input of mul_wide only.
template <class P>
PP_HD PP_INLINE void add_loose(Field<P>& r, const Field<P>& a, const Field<P>& b) {
#if PP_DEVICE_CODE
  detail::add_words_ptx<Field<P>::W>(r.w(), a.w(), b.w());
#else
  detail::add_limbs(r.l, a.l, b.l, P::N);
#endif
}

// r = a + b and r = a - b on Wide values, modulo 2^(128N): the caller keeps the true value in
// [0, 8p^2) by adding multiples of p^2 (add_p2) before any difference could be negative at redc.
template <class P>
PP_HD PP_INLINE void add_wide(Wide<P>& r, const Wide<P>& a, const Wide<P>& b) {
#if PP_DEVICE_CODE
  detail::add_words_ptx<Wide<P>::W>(r.w(), a.w(), b.w());
#else
  detail::add_limbs(r.l, a.l, b.l, 2 * P::N);
#endif
}
template <class P>
PP_HD PP_INLINE void sub_wide(Wide<P>& r, const Wide<P>& a, const Wide<P>& b) {
#if PP_DEVICE_CODE
  detail::sub_words_ptx<Wide<P>::W>(r.w(), a.w(), b.w());
#else
  detail::sub_limbs(r.l, a.l, b.l, 2 * P::N);
#endif
}
// r += k·p^2 for k = 1 or 2.
template <int K, class P>
PP_HD PP_INLINE void add_p2(Wide<P>& r) {
  static_assert(K == 1 || K == 2, "multiples of p^2 kept: 1 and 2");
  constexpr Limbs<2 * P::N> c = K == 1 ? WideConsts<P>::p2 : WideConsts<P>::p2x2;
  Wide<P> k;
  for (int i = 0; i < 2 * P::N; ++i) k.l[i] = c.v[i];
  add_wide(r, r, k);
}

// r = a·b - c·d with one reduction (inputs reduced, < p).
template <class P>
PP_HD PP_INLINE void mul_sub_mul_lazy(Field<P>& r, const Field<P>& a, const Field<P>& b, const Field<P>& c,
                                      const Field<P>& d) {
  Wide<P> x, y;
  mul_wide(x, a, b);
  mul_wide(y, c, d);
  sub_wide(x, x, y);
  add_p2<1>(x);  // a·b - c·d + p^2 in (0, 2p^2)
  redc(r, x);
}

// r = a·b - c·d (inputs reduced): on the device with one reduction (mul_sub_mul_lazy), on the host
// as two products (the host's Fp kernels have no cheaper form). The curve formulas' Y coordinates.
template <class P>
PP_HD PP_INLINE void mul_sub_mul(Field<P>& r, const Field<P>& a, const Field<P>& b, const Field<P>& c,
                                 const Field<P>& d) {
#if PP_DEVICE_CODE
  mul_sub_mul_lazy(r, a, b, c, d);
#else
  r = a * b - c * d;
#endif
}

}  // namespace pp
