// SPDX-License-Identifier: Apache-2.0 OR MIT
// BLS12-381 base field Fp, scalar field Fr and the quadratic extension Fp2 = Fp[u]/(u^2 + 1).
#pragma once

#include <cstdint>

#include "proofpipe/ff/field.hpp"

namespace pp {

struct FpParams {
  static constexpr int N = 6;
  /* p = (x-1)^2 (x^4 - x^2 + 1)/3 + x, x = -0xd201000000010000 */
  static constexpr Limbs<N> modulus = limbs::from_hex<N>(
      "1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab");
};

struct FrParams {
  static constexpr int N = 4;
  /* r = x^4 - x^2 + 1, the prime order of G1, G2 and GT */
  static constexpr Limbs<N> modulus =
      limbs::from_hex<N>("73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001");
};

using Fp = Field<FpParams>;
using Fr = Field<FrParams>;

static_assert(sizeof(Fp) == 48 && alignof(Fp) == 8, "Fp layout is 6 x u64 on host and device");
static_assert(sizeof(Fr) == 32 && alignof(Fr) == 8, "Fr layout is 4 x u64 on host and device");
static_assert(Fp::BITS == 381 && Fr::BITS == 255);
// Montgomery constants checked against their published values (derived above at compile time).
static_assert(FieldConsts<FpParams>::inv64 == 0x89f3fffcfffcfffdULL);
static_assert(FieldConsts<FpParams>::r1.v[0] == 0x760900000002fffdULL);  // R mod p, low limb
static_assert(FieldConsts<FrParams>::inv64 == 0xfffffffeffffffffULL);
static_assert(FieldConsts<FrParams>::r1.v[0] == 0x00000001fffffffeULL);  // R mod r, low limb

namespace detail {
/* (p + 1) / 4: square-root exponent, valid because p = 3 mod 4 */
inline constexpr Limbs<6> fp_sqrt_exp = limbs::shr1(limbs::shr1(limbs::add_small(FpParams::modulus, 1)));
/* (p - 3) / 4: exponent of the Fp2 square-root algorithm */
inline constexpr Limbs<6> fp_p_minus_3_div_4 = limbs::shr1(limbs::shr1(limbs::sub_small(FpParams::modulus, 3)));
static_assert((FpParams::modulus.v[0] & 3) == 3, "p = 3 mod 4");

#if !PP_DEVICE_CODE && defined(__x86_64__)
// (a0 + a1 u)(b0 + b1 u) with lazy reduction: three 12-limb products (Karatsuba) and two
// Montgomery reductions instead of three full Montgomery products. With v0 = a0·b0,
// v1 = a1·b1 and s = (a0 + a1)(b0 + b1) as integers (the sums unreduced: < 2p < 2^382),
//   c1 = REDC(s - v0 - v1),  s - v0 - v1 = a0·b1 + a1·b0 in [0, 2p^2), below p·2^384;
//   c0 = REDC(v0 - v1 + (p·2^384 if v0 < v1)), in [0, p·2^384) either way;
// redc_mulx6 needs exactly that bound. Needs the mulx kernels (g_host_mulx); r may alias a or b
// (every input is read before r is written). Out of line: ~700 instructions.
__attribute__((noinline)) inline void fp2_mul_lazy(Fp& r0, Fp& r1, const Fp& a0, const Fp& a1,
                                                   const Fp& b0, const Fp& b1) {
  constexpr const uint64_t* k = kMulxTable<FpParams>.v;
  uint64_t sa[6], sb[6], v0[12], v1[12], s[12];
  unsigned char ca = 0, cb = 0;
  for (int i = 0; i < 6; ++i) {
    ca = addc64(ca, a0.l[i], a1.l[i], sa[i]);  // no carry out: the spare bits
    cb = addc64(cb, b0.l[i], b1.l[i], sb[i]);
  }
  mul_wide_mulx6(v0, a0.l, b0.l);
  mul_wide_mulx6(v1, a1.l, b1.l);
  mul_wide_mulx6(s, sa, sb);
  // s -= v0 + v1 (v0 + v1 < 2p^2 < 2^763: no carry out; the difference is >= 0).
  uint64_t w[12];
  unsigned char c = 0;
  for (int i = 0; i < 12; ++i) c = addc64(c, v0[i], v1[i], w[i]);
  c = 0;
  for (int i = 0; i < 12; ++i) c = subb64(c, s[i], w[i], s[i]);
  // v0 -= v1, then + p·2^384 where that borrowed: p added to the high half, selected by cmov
  // (a masked add would put the "and"s inside the carry chain, see mod_sub_host).
  c = 0;
  for (int i = 0; i < 12; ++i) c = subb64(c, v0[i], v1[i], v0[i]);
  const uint64_t wrap = borrow_mask(c);
  uint64_t e[6];
  c = 0;
  for (int i = 0; i < 6; ++i) c = addc64(c, v0[6 + i], k[i], e[i]);  // final carry unused
  for (int i = 0; i < 6; ++i) v0[6 + i] = select64(wrap, e[i], v0[6 + i]);
  redc_mulx6(r0.l, v0, k);
  redc_mulx6(r1.l, s, k);
}

// a0^2 + a1^2 (the norm of a0 + a1·u) with one reduction: two 12-limb squares summed,
// < 2p^2 < p·2^384 as redc_mulx6 needs. Needs the mulx kernels (g_host_mulx).
__attribute__((noinline)) inline void fp2_norm_lazy(Fp& r, const Fp& a0, const Fp& a1) {
  uint64_t s0[12], s1[12];
  sqr_wide_mulx6(s0, a0.l);
  sqr_wide_mulx6(s1, a1.l);
  unsigned char c = 0;
  for (int i = 0; i < 12; ++i) c = addc64(c, s0[i], s1[i], s0[i]);  // no carry out
  redc_mulx6(r.l, s0, kMulxTable<FpParams>.v);
}
#endif
}  // namespace detail

// Square root in Fp; false when a is not a square.
PP_HD inline bool sqrt(Fp& out, const Fp& a) {
  constexpr Limbs<6> e = detail::fp_sqrt_exp;
  const Fp s = a.pow(e);
  if (s.sqr() != a) return false;
  out = s;
  return true;
}

// Fp2 = Fp[u] / (u^2 + 1). Layout: c0 then c1 (c0 + c1·u).
struct alignas(8) Fp2 {
  Fp c0, c1;

  PP_HD static constexpr Fp2 zero() { return Fp2{}; }
  PP_HD static constexpr Fp2 one() { return Fp2{Fp::one(), Fp::zero()}; }
  PP_HD bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
  PP_HD bool is_one() const { return c0.is_one() && c1.is_zero(); }
  PP_HD friend bool operator==(const Fp2& a, const Fp2& b) { return a.c0 == b.c0 && a.c1 == b.c1; }
  PP_HD friend bool operator!=(const Fp2& a, const Fp2& b) { return !(a == b); }

  PP_HD friend Fp2 operator+(const Fp2& a, const Fp2& b) { return {a.c0 + b.c0, a.c1 + b.c1}; }
  PP_HD friend Fp2 operator-(const Fp2& a, const Fp2& b) { return {a.c0 - b.c0, a.c1 - b.c1}; }
  PP_HD Fp2 operator-() const { return {-c0, -c1}; }
  // Karatsuba: 3 base multiplications whose products share two Montgomery reductions: on the
  // device mont_words.hpp's sequence, on x86-64 hosts with the mulx kernels detail::fp2_mul_lazy.
  PP_HD friend Fp2 operator*(const Fp2& a, const Fp2& b) {
#if PP_DEVICE_CODE
    Fp2 r;
    mul_into(r, a, b);
    return r;
#else
#if defined(__x86_64__)
    if (__builtin_expect(detail::g_host_mulx, 1)) {
      Fp2 r;
      detail::fp2_mul_lazy(r.c0, r.c1, a.c0, a.c1, b.c0, b.c1);
      return r;
    }
#endif
    const Fp v0 = a.c0 * b.c0;
    const Fp v1 = a.c1 * b.c1;
    return {v0 - v1, (a.c0 + a.c1) * (b.c0 + b.c1) - v0 - v1};
#endif
  }
  PP_HD Fp2 operator*(const Fp& s) const { return {c0 * s, c1 * s}; }
  // The same product written into r (the lazy kernel, or Fp's mul_into: no Fp temporaries to copy);
  // r may alias a or b: every input is read before r is written.
  PP_HD PP_INLINE friend void mul_into(Fp2& r, const Fp2& a, const Fp2& b) {
#if PP_DEVICE_CODE
    constexpr Limbs<Fp::N> m = FpParams::modulus;
    static_assert(Fp::BITS < 32 * Fp::W - 2, "fp2_mul_words adds a0 + a1 unreduced: needs p < 2^(32W-2)");
    detail::PtxCarry k;
    detail::fp2_mul_words<Fp::W>(k, r.c0.w(), r.c1.w(), a.c0.w(), a.c1.w(), b.c0.w(), b.c1.w(),
                                 reinterpret_cast<const uint32_t*>(m.v),
                                 detail::device_inv32<uint32_t(FieldConsts<FpParams>::inv64)>());
#else
#if defined(__x86_64__)
    if (__builtin_expect(detail::g_host_mulx, 1)) {
      detail::fp2_mul_lazy(r.c0, r.c1, a.c0, a.c1, b.c0, b.c1);
      return;
    }
#endif
    Fp v0, v1, s, sa, sb;
    mul_into(v0, a.c0, b.c0);
    mul_into(v1, a.c1, b.c1);
    add_into(sa, a.c0, a.c1);
    add_into(sb, b.c0, b.c1);
    mul_into(s, sa, sb);
    sub_into(r.c0, v0, v1);
    sub_into(s, s, v0);
    sub_into(r.c1, s, v1);
#endif
  }
  // r = a·b - c·d; r may alias any input. On the device two reductions instead of four
  // (mont_words.hpp's fp2_mul_sub_words); on the host two products and a subtraction.
  PP_HD PP_INLINE friend void mul_sub_into(Fp2& r, const Fp2& a, const Fp2& b, const Fp2& c, const Fp2& d) {
#if PP_DEVICE_CODE
    constexpr Limbs<Fp::N> m = FpParams::modulus;
    static_assert(Fp::BITS < 32 * Fp::W - 2, "fp2_wide_words adds a0 + a1 unreduced: needs p < 2^(32W-2)");
    detail::PtxCarry k;
    detail::fp2_mul_sub_words<Fp::W>(k, r.c0.w(), r.c1.w(), a.c0.w(), a.c1.w(), b.c0.w(), b.c1.w(), c.c0.w(),
                                     c.c1.w(), d.c0.w(), d.c1.w(), reinterpret_cast<const uint32_t*>(m.v),
                                     detail::device_inv32<uint32_t(FieldConsts<FpParams>::inv64)>());
#else
    Fp2 x, y;
    mul_into(x, a, b);
    mul_into(y, c, d);
    sub_into(r, x, y);
#endif
  }
  PP_HD PP_INLINE friend void sqr_into(Fp2& r, const Fp2& a) {
    Fp m, t, s, d;
    add_into(s, a.c0, a.c1);
    sub_into(d, a.c0, a.c1);
    mul_into(m, a.c0, a.c1);
    mul_into(t, s, d);
    r.c0 = t;
    add_into(r.c1, m, m);
  }
  PP_HD PP_INLINE friend void mul_into(Fp2& r, const Fp2& a, const Fp& s) {
    mul_into(r.c0, a.c0, s);
    mul_into(r.c1, a.c1, s);
  }
  PP_HD PP_INLINE friend void add_into(Fp2& r, const Fp2& a, const Fp2& b) {
    add_into(r.c0, a.c0, b.c0);
    add_into(r.c1, a.c1, b.c1);
  }
  PP_HD PP_INLINE friend void sub_into(Fp2& r, const Fp2& a, const Fp2& b) {
    sub_into(r.c0, a.c0, b.c0);
    sub_into(r.c1, a.c1, b.c1);
  }
  PP_HD PP_INLINE friend void neg_into_if(Fp2& r, const Fp2& a, bool neg) {
    neg_into_if(r.c0, a.c0, neg);
    neg_into_if(r.c1, a.c1, neg);
  }
  PP_HD Fp2& operator+=(const Fp2& b) { return *this = *this + b; }
  PP_HD Fp2& operator-=(const Fp2& b) { return *this = *this - b; }
  PP_HD Fp2& operator*=(const Fp2& b) { return *this = *this * b; }
  // (c0 + c1 u)^2 = (c0 + c1)(c0 - c1) + 2 c0 c1 u.
  PP_HD Fp2 sqr() const { return {(c0 + c1) * (c0 - c1), (c0 * c1).dbl()}; }
  PP_HD Fp2 dbl() const { return {c0.dbl(), c1.dbl()}; }
  PP_HD Fp2 conjugate() const { return {c0, -c1}; }
  // Frobenius x -> x^p is conjugation in Fp2.
  PP_HD Fp2 frobenius() const { return conjugate(); }
  // Multiplication by the sextic non-residue xi = 1 + u.
  PP_HD Fp2 mul_by_nonresidue() const { return {c0 - c1, c0 + c1}; }
  PP_HD Fp norm() const {
    Fp r;
    norm_into(r, *this);
    return r;
  }
  // r = c0^2 + c1^2, written into r (one reduction for both squares on x86-64 hosts).
  PP_HD PP_INLINE friend void norm_into(Fp& r, const Fp2& a) {
#if !PP_DEVICE_CODE && defined(__x86_64__)
    if (__builtin_expect(detail::g_host_mulx, 1)) {
      detail::fp2_norm_lazy(r, a.c0, a.c1);
      return;
    }
#endif
    r = a.c0.sqr() + a.c1.sqr();
  }
  PP_HD Fp2 inverse() const {
    const Fp t = norm().inverse();
    return {c0 * t, -(c1 * t)};
  }
  template <int M>
  PP_HD Fp2 pow(const Limbs<M>& e) const {
    return pow_limbs(*this, e);
  }
  // A square in Fp2 iff its norm is a square in Fp.
  PP_HD int legendre() const { return norm().legendre(); }
  PP_HD bool is_square() const { return legendre() >= 0; }
  // zcash sign convention: compare c1 first, c0 when c1 is zero.
  bool is_lexicographically_largest() const {
    return c1.is_zero() ? c0.is_lexicographically_largest() : c1.is_lexicographically_largest();
  }
};
static_assert(sizeof(Fp2) == 96 && alignof(Fp2) == 8);

// Square root in Fp2 for p = 3 mod 4 (Adj, Rodriguez-Henriquez, "Square root computation over
// even extension fields", Algorithm 9); false when a is not a square.
PP_HD inline bool sqrt(Fp2& out, const Fp2& a) {
  if (a.is_zero()) {
    out = a;
    return true;
  }
  constexpr Limbs<6> e1 = detail::fp_p_minus_3_div_4;
  constexpr Limbs<6> e2 = FieldConsts<FpParams>::p_minus_1_half;
  const Fp2 a1 = a.pow(e1);
  const Fp2 alpha = a1.sqr() * a;
  const Fp2 a0 = alpha.frobenius() * alpha;
  const Fp2 minus_one = -Fp2::one();
  if (a0 == minus_one) return false;
  const Fp2 x0 = a1 * a;
  Fp2 x;
  if (alpha == minus_one) {
    x = Fp2{-x0.c1, x0.c0};  // u * x0
  } else {
    const Fp2 b = (Fp2::one() + alpha).pow(e2);
    x = b * x0;
  }
  if (x.sqr() != a) return false;
  out = x;
  return true;
}

}  // namespace pp
