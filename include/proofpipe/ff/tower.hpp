// SPDX-License-Identifier: Apache-2.0 OR MIT
// The extension tower Fp6 = Fp2[v]/(v^3 - xi) and Fp12 = Fp6[w]/(w^2 - v) over an Fp2Of, one
// template for both curves: BLS12-381's (xi = 1 + u) and BN254's (xi = 9 + u).
#pragma once

#include <cstdint>

#include "proofpipe/core/hd.hpp"
#include "proofpipe/core/limbs.hpp"
#include "proofpipe/ff/bls12_381.hpp"
#include "proofpipe/ff/bn254.hpp"

namespace pp {

// Layout and conventions match @noble/curves, zkcrypto/bls12_381 and arkworks:
//   Fp12 = c0 + c1·w,  Fp6 = c0 + c1·v + c2·v^2,  w^2 = v, v^3 = xi, so w^6 = xi.
// As a polynomial in w an Fp12 element is
//   c0.c0 + c1.c0·w + c0.c1·w^2 + c1.c1·w^3 + c0.c2·w^4 + c1.c2·w^5.
// The code is written for the host; the arithmetic is PP_HD but device builds are untested.

namespace detail::tower {

// ---- constexpr base-field and Fp2 arithmetic, used only to derive the Frobenius coefficients at
// compile time (Field's operators are not constexpr because of their device paths). ----
template <class P>
constexpr Field<P> cx_add(const Field<P>& a, const Field<P>& b) {
  constexpr int N = P::N;
  uint64_t s[N] = {}, d[N] = {};
  uint64_t carry = 0, borrow = 0;
  for (int i = 0; i < N; ++i) {
    const unsigned __int128 x = (unsigned __int128)a.l[i] + b.l[i] + carry;
    s[i] = uint64_t(x);
    carry = uint64_t(x >> 64);
  }
  for (int i = 0; i < N; ++i) {
    const unsigned __int128 x = (unsigned __int128)s[i] - P::modulus.v[i] - borrow;
    d[i] = uint64_t(x);
    borrow = uint64_t(x >> 64) & 1;
  }
  Field<P> r{};
  for (int i = 0; i < N; ++i) r.l[i] = (!carry && borrow) ? s[i] : d[i];
  return r;
}
template <class P>
constexpr Field<P> cx_sub(const Field<P>& a, const Field<P>& b) {
  constexpr int N = P::N;
  Field<P> r{};
  uint64_t borrow = 0;
  for (int i = 0; i < N; ++i) {
    const unsigned __int128 x = (unsigned __int128)a.l[i] - b.l[i] - borrow;
    r.l[i] = uint64_t(x);
    borrow = uint64_t(x >> 64) & 1;
  }
  uint64_t carry = 0;
  for (int i = 0; i < N; ++i) {
    const unsigned __int128 x = (unsigned __int128)r.l[i] + (borrow ? P::modulus.v[i] : 0) + carry;
    r.l[i] = uint64_t(x);
    carry = uint64_t(x >> 64);
  }
  return r;
}
template <class P>
constexpr Field<P> cx_mul(const Field<P>& a, const Field<P>& b) {
  Field<P> r{};
  detail::mont_mul_portable<P::N>(r.l, a.l, b.l, P::modulus.v, FieldConsts<P>::inv64);
  return r;
}
template <class F, int X>
constexpr Fp2Of<F, X> cx_mul(const Fp2Of<F, X>& a, const Fp2Of<F, X>& b) {
  const F v0 = cx_mul(a.c0, b.c0);
  const F v1 = cx_mul(a.c1, b.c1);
  const F s = cx_mul(cx_add(a.c0, a.c1), cx_add(b.c0, b.c1));
  return Fp2Of<F, X>{cx_sub(v0, v1), cx_sub(cx_sub(s, v0), v1)};
}
template <class F, int X>
constexpr Fp2Of<F, X> cx_conj(const Fp2Of<F, X>& a) {
  return Fp2Of<F, X>{a.c0, cx_sub(F::zero(), a.c1)};
}
template <class E2, int N>
constexpr E2 cx_pow(const E2& a, const Limbs<N>& e) {
  E2 r = E2::one();
  for (int i = N * 64 - 1; i >= 0; --i) {
    r = cx_mul(r, r);
    if (limbs::bit(e, i)) r = cx_mul(r, a);
  }
  return r;
}
// a / d for a small divisor d (exact division is not checked here; see the static_assert below).
template <int N>
constexpr Limbs<N> div_small(const Limbs<N>& a, uint64_t d) {
  Limbs<N> q{};
  unsigned __int128 rem = 0;
  for (int i = N - 1; i >= 0; --i) {
    const unsigned __int128 cur = (rem << 64) | a.v[i];
    q.v[i] = uint64_t(cur / d);
    rem = cur % d;
  }
  return q;
}
template <int N>
constexpr uint64_t mod_small(const Limbs<N>& a, uint64_t d) {
  unsigned __int128 rem = 0;
  for (int i = N - 1; i >= 0; --i) rem = ((rem << 64) | a.v[i]) % d;
  return uint64_t(rem);
}

// gamma[k][i] = (xi^((p^k - 1)/6))^i for k = 0..11, i = 0..5, so that (w^i)^(p^k) = gamma[k][i]·w^i.
// Derivation: w^6 = xi, so w^(p^k) = w·w^(p^k - 1) = w·xi^((p^k - 1)/6) =: gamma_k·w, and
//   gamma_1 = xi^((p-1)/6)                       (one compile-time exponentiation),
//   gamma_{k+1} = xi^((p^(k+1) - p)/6)·gamma_1 = (gamma_k)^p·gamma_1 = conj(gamma_k)·gamma_1.
// tests/test_pairing.cpp and tests/test_bn254.cpp check frobenius == pow(p).
template <class E2>
struct FrobeniusTable {
  E2 gamma[12][6];
};
template <class E2>
constexpr FrobeniusTable<E2> make_frobenius_table() {
  using F = typename E2::Base;
  using P = typename E2::Params;
  static_assert(mod_small(P::modulus, 6) == 1, "p = 1 mod 6: xi^((p-1)/6) is well defined");
  FrobeniusTable<E2> t{};
  const E2 xi{F::from_u64_constexpr(uint64_t(E2::kXiC0)), F::one()};
  const E2 g1 = cx_pow(xi, div_small(limbs::sub_small(P::modulus, 1), 6));
  E2 g = E2::one();
  for (int k = 0; k < 12; ++k) {
    t.gamma[k][0] = E2::one();
    for (int i = 1; i < 6; ++i) t.gamma[k][i] = cx_mul(t.gamma[k][i - 1], g);
    g = cx_mul(cx_conj(g), g1);
  }
  return t;
}
template <class E2>
inline constexpr FrobeniusTable<E2> frobenius_table = make_frobenius_table<E2>();

// Conjugates when K is odd (x -> x^(p^K) on Fp2).
template <int K, class E2>
PP_HD PP_INLINE E2 frob_fp2(const E2& a) {
  if constexpr (K % 2 == 1) return a.conjugate();
  else return a;
}

}  // namespace detail::tower

// ---------------------------------------------------------------------------------------------
// Fp6 = Fp2[v] / (v^3 - xi). Value c0 + c1·v + c2·v^2.
template <class E2>
struct alignas(8) Fp6Of {
  using Fp2 = E2;
  using Fp = typename E2::Base;
  Fp2 c0, c1, c2;

  PP_HD static constexpr Fp6Of zero() { return Fp6Of{}; }
  PP_HD static constexpr Fp6Of one() { return Fp6Of{Fp2::one(), Fp2::zero(), Fp2::zero()}; }
  PP_HD bool is_zero() const { return c0.is_zero() && c1.is_zero() && c2.is_zero(); }
  PP_HD bool is_one() const { return c0.is_one() && c1.is_zero() && c2.is_zero(); }
  PP_HD friend bool operator==(const Fp6Of& a, const Fp6Of& b) {
    return a.c0 == b.c0 && a.c1 == b.c1 && a.c2 == b.c2;
  }
  PP_HD friend bool operator!=(const Fp6Of& a, const Fp6Of& b) { return !(a == b); }

  PP_HD friend Fp6Of operator+(const Fp6Of& a, const Fp6Of& b) {
    return {a.c0 + b.c0, a.c1 + b.c1, a.c2 + b.c2};
  }
  PP_HD friend Fp6Of operator-(const Fp6Of& a, const Fp6Of& b) {
    return {a.c0 - b.c0, a.c1 - b.c1, a.c2 - b.c2};
  }
  PP_HD Fp6Of operator-() const { return {-c0, -c1, -c2}; }
  PP_HD Fp6Of dbl() const { return {c0.dbl(), c1.dbl(), c2.dbl()}; }
  PP_HD Fp6Of operator*(const Fp2& s) const { return {c0 * s, c1 * s, c2 * s}; }
  PP_HD Fp6Of operator*(const Fp& s) const { return {c0 * s, c1 * s, c2 * s}; }

  // Karatsuba (Devegili, O hEigeartaigh, Scott, Dahab, "Multiplication and squaring on
  // pairing-friendly fields", 2006): 6 Fp2 multiplications.
  PP_HD friend Fp6Of operator*(const Fp6Of& a, const Fp6Of& b) {
    const Fp2 v0 = a.c0 * b.c0;
    const Fp2 v1 = a.c1 * b.c1;
    const Fp2 v2 = a.c2 * b.c2;
    const Fp2 t0 = ((a.c1 + a.c2) * (b.c1 + b.c2) - v1 - v2).mul_by_nonresidue() + v0;
    const Fp2 t1 = (a.c0 + a.c1) * (b.c0 + b.c1) - v0 - v1 + v2.mul_by_nonresidue();
    const Fp2 t2 = (a.c0 + a.c2) * (b.c0 + b.c2) - v0 - v2 + v1;
    return {t0, t1, t2};
  }
  PP_HD Fp6Of& operator+=(const Fp6Of& b) { return *this = *this + b; }
  PP_HD Fp6Of& operator-=(const Fp6Of& b) { return *this = *this - b; }
  PP_HD Fp6Of& operator*=(const Fp6Of& b) { return *this = *this * b; }

  // CH-SQR2 (Chung-Hasan): 2 multiplications + 3 squarings in Fp2.
  PP_HD Fp6Of sqr() const {
    const Fp2 s0 = c0.sqr();
    const Fp2 s1 = (c0 * c1).dbl();
    const Fp2 s2 = (c0 - c1 + c2).sqr();
    const Fp2 s3 = (c1 * c2).dbl();
    const Fp2 s4 = c2.sqr();
    return {s0 + s3.mul_by_nonresidue(), s1 + s4.mul_by_nonresidue(), s1 + s2 + s3 - s0 - s4};
  }

  // Multiplication by v: (c0 + c1 v + c2 v^2)·v = xi·c2 + c0·v + c1·v^2.
  PP_HD Fp6Of mul_by_nonresidue() const { return {c2.mul_by_nonresidue(), c0, c1}; }

  // Sparse product with b0 + b1·v (5 Fp2 multiplications).
  PP_HD Fp6Of mul_by_01(const Fp2& b0, const Fp2& b1) const {
    const Fp2 v0 = c0 * b0;
    const Fp2 v1 = c1 * b1;
    return {(c2 * b1).mul_by_nonresidue() + v0, (c0 + c1) * (b0 + b1) - v0 - v1, v1 + c2 * b0};
  }

  PP_HD Fp6Of inverse() const {
    const Fp2 t0 = c0.sqr() - (c1 * c2).mul_by_nonresidue();
    const Fp2 t1 = c2.sqr().mul_by_nonresidue() - c0 * c1;
    const Fp2 t2 = c1.sqr() - c0 * c2;
    const Fp2 n = c0 * t0 + (c2 * t1 + c1 * t2).mul_by_nonresidue();
    const Fp2 ni = n.inverse();
    return {t0 * ni, t1 * ni, t2 * ni};
  }

  // x -> x^(p^K): conjugate the coefficients K times, (v^j)^(p^K) = gamma_K^(2j)·v^j.
  template <int K>
  PP_HD Fp6Of frobenius_map() const {
    static_assert(K >= 0 && K < 12);
    if constexpr (K == 0) {
      return *this;
    } else {
      constexpr Fp2 g2 = detail::tower::frobenius_table<E2>.gamma[K][2];
      constexpr Fp2 g4 = detail::tower::frobenius_table<E2>.gamma[K][4];
      using detail::tower::frob_fp2;
      return {frob_fp2<K>(c0), frob_fp2<K>(c1) * g2, frob_fp2<K>(c2) * g4};
    }
  }
  PP_HD Fp6Of frobenius() const { return frobenius_map<1>(); }

  template <int M>
  PP_HD Fp6Of pow(const Limbs<M>& e) const {
    return pow_limbs(*this, e);
  }
};

// ---------------------------------------------------------------------------------------------
// Fp12 = Fp6[w] / (w^2 - v). Value c0 + c1·w.
template <class E2>
struct alignas(8) Fp12Of {
  using Fp2 = E2;
  using Fp6 = Fp6Of<E2>;
  Fp6 c0, c1;

  PP_HD static constexpr Fp12Of zero() { return Fp12Of{}; }
  PP_HD static constexpr Fp12Of one() { return Fp12Of{Fp6::one(), Fp6::zero()}; }
  PP_HD bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
  PP_HD bool is_one() const { return c0.is_one() && c1.is_zero(); }
  PP_HD friend bool operator==(const Fp12Of& a, const Fp12Of& b) { return a.c0 == b.c0 && a.c1 == b.c1; }
  PP_HD friend bool operator!=(const Fp12Of& a, const Fp12Of& b) { return !(a == b); }

  PP_HD friend Fp12Of operator+(const Fp12Of& a, const Fp12Of& b) { return {a.c0 + b.c0, a.c1 + b.c1}; }
  PP_HD friend Fp12Of operator-(const Fp12Of& a, const Fp12Of& b) { return {a.c0 - b.c0, a.c1 - b.c1}; }
  PP_HD Fp12Of operator-() const { return {-c0, -c1}; }

  // Karatsuba: 3 Fp6 multiplications.
  PP_HD friend Fp12Of operator*(const Fp12Of& a, const Fp12Of& b) {
    const Fp6 v0 = a.c0 * b.c0;
    const Fp6 v1 = a.c1 * b.c1;
    return {v0 + v1.mul_by_nonresidue(), (a.c0 + a.c1) * (b.c0 + b.c1) - v0 - v1};
  }
  PP_HD Fp12Of& operator*=(const Fp12Of& b) { return *this = *this * b; }
  PP_HD Fp12Of& operator+=(const Fp12Of& b) { return *this = *this + b; }
  PP_HD Fp12Of& operator-=(const Fp12Of& b) { return *this = *this - b; }

  // Complex squaring: 2 Fp6 multiplications.
  PP_HD Fp12Of sqr() const {
    const Fp6 ab = c0 * c1;
    const Fp6 t = (c0 + c1) * (c0 + c1.mul_by_nonresidue()) - ab - ab.mul_by_nonresidue();
    return {t, ab.dbl()};
  }

  // c0 - c1·w = x^(p^6); equals the inverse for elements of the cyclotomic subgroup (norm 1
  // over Fp6), in particular for every output of the final exponentiation.
  PP_HD Fp12Of conjugate() const { return {c0, -c1}; }

  PP_HD Fp12Of inverse() const {
    const Fp6 t = (c0.sqr() - c1.sqr().mul_by_nonresidue()).inverse();
    return {c0 * t, -(c1 * t)};
  }

  // x -> x^(p^K): conjugate every Fp2 coefficient K times and scale the coefficient of w^i by
  // gamma_K^i (see detail::tower::FrobeniusTable).
  template <int K>
  PP_HD Fp12Of frobenius_map() const {
    static_assert(K >= 0 && K < 12);
    if constexpr (K == 0) {
      return *this;
    } else {
      constexpr Fp2 g1 = detail::tower::frobenius_table<E2>.gamma[K][1];
      constexpr Fp2 g3 = detail::tower::frobenius_table<E2>.gamma[K][3];
      constexpr Fp2 g5 = detail::tower::frobenius_table<E2>.gamma[K][5];
      using detail::tower::frob_fp2;
      return {c0.template frobenius_map<K>(),
              Fp6{frob_fp2<K>(c1.c0) * g1, frob_fp2<K>(c1.c1) * g3, frob_fp2<K>(c1.c2) * g5}};
    }
  }
  PP_HD Fp12Of frobenius() const { return frobenius_map<1>(); }

  // Granger-Scott squaring ("Faster squaring in the cyclotomic subgroup of sixth degree
  // extensions", PKC 2010), 9 Fp2 multiplications/squarings instead of 12. ONLY valid for
  // elements of the cyclotomic subgroup, i.e. x^((p^6-1)(p^2+1)) for some x (the output of the
  // easy part of the final exponentiation and everything derived from it by *, conjugate, frob).
  PP_HD Fp12Of cyclotomic_sqr() const {
    // Fp4 squarings (a + b·s)^2 with s^2 = xi on the pairs (z0, z1), (z2, z3), (z4, z5).
    const Fp2& z0 = c0.c0;
    const Fp2& z4 = c0.c1;
    const Fp2& z3 = c0.c2;
    const Fp2& z2 = c1.c0;
    const Fp2& z1 = c1.c1;
    const Fp2& z5 = c1.c2;
    Fp2 tmp = z0 * z1;
    const Fp2 t0 = (z0 + z1) * (z1.mul_by_nonresidue() + z0) - tmp - tmp.mul_by_nonresidue();
    const Fp2 t1 = tmp.dbl();
    tmp = z2 * z3;
    const Fp2 t2 = (z2 + z3) * (z3.mul_by_nonresidue() + z2) - tmp - tmp.mul_by_nonresidue();
    const Fp2 t3 = tmp.dbl();
    tmp = z4 * z5;
    const Fp2 t4 = (z4 + z5) * (z5.mul_by_nonresidue() + z4) - tmp - tmp.mul_by_nonresidue();
    const Fp2 t5 = tmp.dbl();

    Fp12Of r;
    r.c0.c0 = (t0 - z0).dbl() + t0;           // 3 t0 - 2 z0
    r.c1.c1 = (t1 + z1).dbl() + t1;           // 3 t1 + 2 z1
    const Fp2 t5x = t5.mul_by_nonresidue();
    r.c1.c0 = (z2 + t5x).dbl() + t5x;         // 3 xi t5 + 2 z2
    r.c0.c2 = (t4 - z3).dbl() + t4;           // 3 t4 - 2 z3
    r.c0.c1 = (t2 - z4).dbl() + t2;           // 3 t2 - 2 z4
    r.c1.c2 = (z5 + t3).dbl() + t3;           // 3 t3 + 2 z5
    return r;
  }

  template <int M>
  PP_HD Fp12Of pow(const Limbs<M>& e) const {
    return pow_limbs(*this, e);
  }
  // x^e for elements of the cyclotomic subgroup (uses cyclotomic_sqr; see its precondition).
  PP_HD Fp12Of cyclotomic_pow_u64(uint64_t e) const {
    Fp12Of r = one();
    bool started = false;
    for (int i = 63; i >= 0; --i) {
      if (started) r = r.cyclotomic_sqr();
      if ((e >> i) & 1) {
        r = started ? r * *this : *this;
        started = true;
      }
    }
    return r;
  }
};
// BLS12-381's tower (xi = 1 + u) and BN254's (xi = 9 + u).
using Fp6 = Fp6Of<Fp2>;
using Fp12 = Fp12Of<Fp2>;
static_assert(sizeof(Fp6) == 288 && sizeof(Fp12) == 576);
namespace bn254 {
using Fp6 = Fp6Of<Fp2>;
using Fp12 = Fp12Of<Fp2>;
static_assert(sizeof(Fp6) == 192 && sizeof(Fp12) == 384);
}  // namespace bn254

}  // namespace pp
