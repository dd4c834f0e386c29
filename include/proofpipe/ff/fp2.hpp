// SPDX-License-Identifier: Apache-2.0 OR MIT
// The quadratic extension F[u]/(u^2 + 1) of a prime field F = Field<P> with p = 3 mod 4 (so -1 is
// not a square), one template for every curve: BLS12-381's Fp2 (ff/bls12_381.hpp) and BN254's
// (ff/bn254.hpp). XiC0 names the sextic non-residue xi = XiC0 + u of the tower above it (1 for
// BLS12-381, 9 for BN254), which mul_by_nonresidue multiplies by.
#pragma once

#include <cstdint>

#include "proofpipe/ff/field.hpp"

namespace pp {

namespace detail {

// p = 3 mod 4: square roots by one exponentiation, and Fp2 = Fp[u]/(u^2 + 1).
template <class P>
inline constexpr bool kThreeModFour = (P::modulus.v[0] & 3) == 3;
/* (p + 1) / 4: the square-root exponent of a field with p = 3 mod 4 */
template <class P>
inline constexpr Limbs<P::N> sqrt_exp_3mod4 = limbs::shr1(limbs::shr1(limbs::add_small(P::modulus, 1)));
/* (p - 3) / 4: the exponent of the Fp2 square-root algorithm */
template <class P>
inline constexpr Limbs<P::N> p_minus_3_div_4 = limbs::shr1(limbs::shr1(limbs::sub_small(P::modulus, 3)));

// The x86-64 lazy Fp2 kernels serve 6-limb moduli of at most 381 bits: their bounds (a0 + a1 <
// 2p < 2^382, 2p^2 < p·2^384) need the spare bits.
template <class P>
inline constexpr bool kLazyFp2 = P::N == 6 && FieldConsts<P>::bits <= 381;

#if !PP_DEVICE_CODE && defined(__x86_64__)
// (a0 + a1 u)(b0 + b1 u) with lazy reduction: three 12-limb products (Karatsuba) and two
// Montgomery reductions instead of three full Montgomery products. With v0 = a0·b0,
// v1 = a1·b1 and s = (a0 + a1)(b0 + b1) as integers (the sums unreduced: < 2p < 2^382),
//   c1 = REDC(s - v0 - v1),  s - v0 - v1 = a0·b1 + a1·b0 in [0, 2p^2), below p·2^384;
//   c0 = REDC(v0 - v1 + (p·2^384 if v0 < v1)), in [0, p·2^384) either way;
// redc_mulx6 needs exactly that bound. Needs the mulx kernels (g_host_mulx); r may alias a or b
// (every input is read before r is written). Out of line: ~700 instructions.
template <class P>
__attribute__((noinline)) void fp2_mul_lazy(Field<P>& r0, Field<P>& r1, const Field<P>& a0, const Field<P>& a1,
                                            const Field<P>& b0, const Field<P>& b1) {
  static_assert(kLazyFp2<P>);
  constexpr const uint64_t* k = kMulxTable<P>.v;
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
template <class P>
__attribute__((noinline)) void fp2_norm_lazy(Field<P>& r, const Field<P>& a0, const Field<P>& a1) {
  static_assert(kLazyFp2<P>);
  uint64_t s0[12], s1[12];
  sqr_wide_mulx6(s0, a0.l);
  sqr_wide_mulx6(s1, a1.l);
  unsigned char c = 0;
  for (int i = 0; i < 12; ++i) c = addc64(c, s0[i], s1[i], s0[i]);  // no carry out
  redc_mulx6(r.l, s0, kMulxTable<P>.v);
}
#endif
}  // namespace detail

// Square root in a field with p = 3 mod 4; false when a is not a square.
template <class P>
PP_HD bool sqrt(Field<P>& out, const Field<P>& a) {
  static_assert(detail::kThreeModFour<P>, "this square root needs p = 3 mod 4");
  constexpr Limbs<P::N> e = detail::sqrt_exp_3mod4<P>;
  const Field<P> s = a.pow(e);
  if (s.sqr() != a) return false;
  out = s;
  return true;
}

// F[u] / (u^2 + 1). Layout: c0 then c1 (c0 + c1·u).
template <class F, int XiC0>
struct alignas(8) Fp2Of {
  using Base = F;
  using Params = typename F::Params;
  static constexpr int kXiC0 = XiC0;
  static_assert(detail::kThreeModFour<Params>, "u^2 + 1 is irreducible only for p = 3 mod 4");
  // The device's two-reduction product adds a0 + a1 unreduced: it needs two spare bits.
  static constexpr bool kWordsProduct = F::BITS < 32 * F::W - 2;

  F c0, c1;

  PP_HD static constexpr Fp2Of zero() { return Fp2Of{}; }
  PP_HD static constexpr Fp2Of one() { return Fp2Of{F::one(), F::zero()}; }
  PP_HD bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
  PP_HD bool is_one() const { return c0.is_one() && c1.is_zero(); }
  PP_HD friend bool operator==(const Fp2Of& a, const Fp2Of& b) { return a.c0 == b.c0 && a.c1 == b.c1; }
  PP_HD friend bool operator!=(const Fp2Of& a, const Fp2Of& b) { return !(a == b); }

  PP_HD friend Fp2Of operator+(const Fp2Of& a, const Fp2Of& b) { return {a.c0 + b.c0, a.c1 + b.c1}; }
  PP_HD friend Fp2Of operator-(const Fp2Of& a, const Fp2Of& b) { return {a.c0 - b.c0, a.c1 - b.c1}; }
  PP_HD Fp2Of operator-() const { return {-c0, -c1}; }
  // Karatsuba: 3 base multiplications whose products share two Montgomery reductions: on the
  // device mont_words.hpp's sequence, on x86-64 hosts with the mulx kernels detail::fp2_mul_lazy
  // (where the modulus leaves the spare bits they need; else three reduced products).
  PP_HD friend Fp2Of operator*(const Fp2Of& a, const Fp2Of& b) {
#if PP_DEVICE_CODE
    Fp2Of r;
    mul_into(r, a, b);
    return r;
#else
#if defined(__x86_64__)
    if constexpr (detail::kLazyFp2<Params>) {
      if (__builtin_expect(detail::g_host_mulx, 1)) {
        Fp2Of r;
        detail::fp2_mul_lazy(r.c0, r.c1, a.c0, a.c1, b.c0, b.c1);
        return r;
      }
    }
#endif
    const F v0 = a.c0 * b.c0;
    const F v1 = a.c1 * b.c1;
    return {v0 - v1, (a.c0 + a.c1) * (b.c0 + b.c1) - v0 - v1};
#endif
  }
  PP_HD Fp2Of operator*(const F& s) const { return {c0 * s, c1 * s}; }
  // The same product written into r (the lazy kernel, or F's mul_into: no F temporaries to copy);
  // r may alias a or b: every input is read before r is written.
  PP_HD PP_INLINE friend void mul_into(Fp2Of& r, const Fp2Of& a, const Fp2Of& b) {
#if PP_DEVICE_CODE
    if constexpr (kWordsProduct) {
      constexpr Limbs<F::N> m = Params::modulus;
      detail::PtxCarry k;
      detail::fp2_mul_words<F::W>(k, r.c0.w(), r.c1.w(), a.c0.w(), a.c1.w(), b.c0.w(), b.c1.w(),
                                  reinterpret_cast<const uint32_t*>(m.v),
                                  detail::device_inv32<uint32_t(FieldConsts<Params>::inv64)>());
    } else {
      karatsuba_into(r, a, b);
    }
#else
#if defined(__x86_64__)
    if constexpr (detail::kLazyFp2<Params>) {
      if (__builtin_expect(detail::g_host_mulx, 1)) {
        detail::fp2_mul_lazy(r.c0, r.c1, a.c0, a.c1, b.c0, b.c1);
        return;
      }
    }
#endif
    karatsuba_into(r, a, b);
#endif
  }
  // Karatsuba with three reduced products (every field, every target).
  PP_HD PP_INLINE static void karatsuba_into(Fp2Of& r, const Fp2Of& a, const Fp2Of& b) {
    F v0, v1, s, sa, sb;
    mul_into(v0, a.c0, b.c0);
    mul_into(v1, a.c1, b.c1);
    add_into(sa, a.c0, a.c1);
    add_into(sb, b.c0, b.c1);
    mul_into(s, sa, sb);
    sub_into(r.c0, v0, v1);
    sub_into(s, s, v0);
    sub_into(r.c1, s, v1);
  }
  // r = a·b - c·d; r may alias any input. On the device two reductions instead of four
  // (mont_words.hpp's fp2_mul_sub_words); on the host two products and a subtraction.
  PP_HD PP_INLINE friend void mul_sub_into(Fp2Of& r, const Fp2Of& a, const Fp2Of& b, const Fp2Of& c, const Fp2Of& d) {
#if PP_DEVICE_CODE
    if constexpr (kWordsProduct) {
      constexpr Limbs<F::N> m = Params::modulus;
      detail::PtxCarry k;
      detail::fp2_mul_sub_words<F::W>(k, r.c0.w(), r.c1.w(), a.c0.w(), a.c1.w(), b.c0.w(), b.c1.w(), c.c0.w(),
                                      c.c1.w(), d.c0.w(), d.c1.w(), reinterpret_cast<const uint32_t*>(m.v),
                                      detail::device_inv32<uint32_t(FieldConsts<Params>::inv64)>());
    } else {
      Fp2Of x, y;
      mul_into(x, a, b);
      mul_into(y, c, d);
      sub_into(r, x, y);
    }
#else
    Fp2Of x, y;
    mul_into(x, a, b);
    mul_into(y, c, d);
    sub_into(r, x, y);
#endif
  }
  PP_HD PP_INLINE friend void sqr_into(Fp2Of& r, const Fp2Of& a) {
    F m, t, s, d;
    add_into(s, a.c0, a.c1);
    sub_into(d, a.c0, a.c1);
    mul_into(m, a.c0, a.c1);
    mul_into(t, s, d);
    r.c0 = t;
    add_into(r.c1, m, m);
  }
  PP_HD PP_INLINE friend void mul_into(Fp2Of& r, const Fp2Of& a, const F& s) {
    mul_into(r.c0, a.c0, s);
    mul_into(r.c1, a.c1, s);
  }
  PP_HD PP_INLINE friend void add_into(Fp2Of& r, const Fp2Of& a, const Fp2Of& b) {
    add_into(r.c0, a.c0, b.c0);
    add_into(r.c1, a.c1, b.c1);
  }
  PP_HD PP_INLINE friend void sub_into(Fp2Of& r, const Fp2Of& a, const Fp2Of& b) {
    sub_into(r.c0, a.c0, b.c0);
    sub_into(r.c1, a.c1, b.c1);
  }
  PP_HD PP_INLINE friend void neg_into_if(Fp2Of& r, const Fp2Of& a, bool neg) {
    neg_into_if(r.c0, a.c0, neg);
    neg_into_if(r.c1, a.c1, neg);
  }
  PP_HD Fp2Of& operator+=(const Fp2Of& b) { return *this = *this + b; }
  PP_HD Fp2Of& operator-=(const Fp2Of& b) { return *this = *this - b; }
  PP_HD Fp2Of& operator*=(const Fp2Of& b) { return *this = *this * b; }
  // (c0 + c1 u)^2 = (c0 + c1)(c0 - c1) + 2 c0 c1 u.
  PP_HD Fp2Of sqr() const { return {(c0 + c1) * (c0 - c1), (c0 * c1).dbl()}; }
  PP_HD Fp2Of dbl() const { return {c0.dbl(), c1.dbl()}; }
  PP_HD Fp2Of conjugate() const { return {c0, -c1}; }
  // Frobenius x -> x^p is conjugation in Fp2.
  PP_HD Fp2Of frobenius() const { return conjugate(); }
  // Multiplication by the sextic non-residue xi = XiC0 + u:
  // (c0 + c1 u)(k + u) = (k·c0 - c1) + (c0 + k·c1) u.
  PP_HD Fp2Of mul_by_nonresidue() const {
    if constexpr (XiC0 == 1) {
      return {c0 - c1, c0 + c1};
    } else {
      static_assert(XiC0 == 9, "mul_by_nonresidue knows xi = 1 + u and 9 + u");
      const F n0 = c0.dbl().dbl().dbl() + c0, n1 = c1.dbl().dbl().dbl() + c1;
      return {n0 - c1, c0 + n1};
    }
  }
  PP_HD F norm() const {
    F r;
    norm_into(r, *this);
    return r;
  }
  // r = c0^2 + c1^2, written into r (one reduction for both squares on x86-64 hosts).
  PP_HD PP_INLINE friend void norm_into(F& r, const Fp2Of& a) {
#if !PP_DEVICE_CODE && defined(__x86_64__)
    if constexpr (detail::kLazyFp2<Params>) {
      if (__builtin_expect(detail::g_host_mulx, 1)) {
        detail::fp2_norm_lazy(r, a.c0, a.c1);
        return;
      }
    }
#endif
    r = a.c0.sqr() + a.c1.sqr();
  }
  PP_HD Fp2Of inverse() const {
    const F t = norm().inverse();
    return {c0 * t, -(c1 * t)};
  }
  template <int M>
  PP_HD Fp2Of pow(const Limbs<M>& e) const {
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

// Square root in Fp2 for p = 3 mod 4 (Adj, Rodriguez-Henriquez, "Square root computation over
// even extension fields", Algorithm 9); false when a is not a square.
template <class F, int XiC0>
PP_HD bool sqrt(Fp2Of<F, XiC0>& out, const Fp2Of<F, XiC0>& a) {
  using E = Fp2Of<F, XiC0>;
  using P = typename F::Params;
  if (a.is_zero()) {
    out = a;
    return true;
  }
  constexpr Limbs<F::N> e1 = detail::p_minus_3_div_4<P>;
  constexpr Limbs<F::N> e2 = FieldConsts<P>::p_minus_1_half;
  const E a1 = a.pow(e1);
  const E alpha = a1.sqr() * a;
  const E a0 = alpha.frobenius() * alpha;
  const E minus_one = -E::one();
  if (a0 == minus_one) return false;
  const E x0 = a1 * a;
  E x;
  if (alpha == minus_one) {
    x = E{-x0.c1, x0.c0};  // u * x0
  } else {
    const E b = (E::one() + alpha).pow(e2);
    x = b * x0;
  }
  if (x.sqr() != a) return false;
  out = x;
  return true;
}

}  // namespace pp
