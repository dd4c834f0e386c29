// SPDX-License-Identifier: Apache-2.0 OR MIT
// Short-Weierstrass curves y^2 = x^3 + b (a = 0): affine, Jacobian and XYZZ points, host and device.
#pragma once

#include <cstddef>
#include <cstdint>

#include "proofpipe/core/hd.hpp"
#include "proofpipe/core/limbs.hpp"

namespace pp {

// Curve descriptor: `using Field = F; using Scalar = Fr; static constexpr F b = ...;` (Scalar: the
// field of the prime subgroup's order r).
// Formulas are from the Explicit-Formulas Database (hyperelliptic.org/EFD, g1p/shortw).

template <class C>
struct Affine;
template <class C>
struct Jacobian;
template <class C>
struct XYZZ;

// Affine point; the point at infinity is encoded as x = y = 0 (never on the curve since b != 0),
// which keeps the layout two field elements on host and device.
template <class C>
struct alignas(8) Affine {
  using F = typename C::Field;
  F x, y;

  PP_HD static constexpr Affine infinity() { return Affine{}; }
  PP_HD bool is_infinity() const { return x.is_zero() && y.is_zero(); }
  PP_HD bool is_on_curve() const {
    if (is_infinity()) return true;
    constexpr F b = C::b;
    return y.sqr() == x.sqr() * x + b;
  }
  PP_HD Affine operator-() const { return is_infinity() ? *this : Affine{x, -y}; }
  PP_HD friend bool operator==(const Affine& a, const Affine& b) { return a.x == b.x && a.y == b.y; }
  PP_HD friend bool operator!=(const Affine& a, const Affine& b) { return !(a == b); }
};

// Jacobian coordinates: (X, Y, Z) represents (X/Z^2, Y/Z^3); Z = 0 is infinity.
template <class C>
struct alignas(8) Jacobian {
  using F = typename C::Field;
  F X, Y, Z;

  PP_HD static constexpr Jacobian infinity() { return Jacobian{F::one(), F::one(), F::zero()}; }
  PP_HD static Jacobian from_affine(const Affine<C>& a) {
    return a.is_infinity() ? infinity() : Jacobian{a.x, a.y, F::one()};
  }
  PP_HD bool is_infinity() const { return Z.is_zero(); }
  PP_HD Jacobian operator-() const { return Jacobian{X, -Y, Z}; }

  // dbl-2009-l
  PP_HD Jacobian dbl() const {
    if (is_infinity()) return *this;
    const F A = X.sqr();
    const F B = Y.sqr();
    const F Cc = B.sqr();
    const F D = ((X + B).sqr() - A - Cc).dbl();
    const F E = A.dbl() + A;
    const F Fv = E.sqr();
    Jacobian r;
    r.X = Fv - D.dbl();
    r.Y = E * (D - r.X) - Cc.dbl().dbl().dbl();
    r.Z = (Y * Z).dbl();
    return r;
  }

  // add-2007-bl, with the equal-input and opposite-input cases handled.
  PP_HD Jacobian operator+(const Jacobian& q) const {
    if (is_infinity()) return q;
    if (q.is_infinity()) return *this;
    const F Z1Z1 = Z.sqr();
    const F Z2Z2 = q.Z.sqr();
    const F U1 = X * Z2Z2;
    const F U2 = q.X * Z1Z1;
    const F S1 = Y * q.Z * Z2Z2;
    const F S2 = q.Y * Z * Z1Z1;
    const F H = U2 - U1;
    const F rr = (S2 - S1).dbl();
    if (H.is_zero()) return rr.is_zero() ? dbl() : infinity();
    const F I = H.dbl().sqr();
    const F J = H * I;
    const F V = U1 * I;
    Jacobian r;
    r.X = rr.sqr() - J - V.dbl();
    r.Y = rr * (V - r.X) - (S1 * J).dbl();
    r.Z = ((Z + q.Z).sqr() - Z1Z1 - Z2Z2) * H;
    return r;
  }

  // madd-2007-bl: add an affine point.
  PP_HD Jacobian add_mixed(const Affine<C>& q) const {
    if (q.is_infinity()) return *this;
    if (is_infinity()) return from_affine(q);
    const F Z1Z1 = Z.sqr();
    const F U2 = q.x * Z1Z1;
    const F S2 = q.y * Z * Z1Z1;
    const F H = U2 - X;
    const F rr = (S2 - Y).dbl();
    if (H.is_zero()) return rr.is_zero() ? dbl() : infinity();
    const F HH = H.sqr();
    const F I = HH.dbl().dbl();
    const F J = H * I;
    const F V = X * I;
    Jacobian r;
    r.X = rr.sqr() - J - V.dbl();
    r.Y = rr * (V - r.X) - (Y * J).dbl();
    r.Z = (Z + H).sqr() - Z1Z1 - HH;
    return r;
  }
  PP_HD Jacobian operator-(const Jacobian& q) const { return *this + (-q); }
  PP_HD Jacobian& operator+=(const Jacobian& q) { return *this = *this + q; }

  PP_HD Affine<C> to_affine() const {
    if (is_infinity()) return Affine<C>::infinity();
    const F zi = Z.inverse();
    const F zi2 = zi.sqr();
    return Affine<C>{X * zi2, Y * zi2 * zi};
  }

  // Projective equality: X1 Z2^2 == X2 Z1^2 and Y1 Z2^3 == Y2 Z1^3.
  PP_HD friend bool operator==(const Jacobian& a, const Jacobian& b) {
    if (a.is_infinity() || b.is_infinity()) return a.is_infinity() && b.is_infinity();
    const F z1z1 = a.Z.sqr();
    const F z2z2 = b.Z.sqr();
    return a.X * z2z2 == b.X * z1z1 && a.Y * z2z2 * b.Z == b.Y * z1z1 * a.Z;
  }
  PP_HD friend bool operator!=(const Jacobian& a, const Jacobian& b) { return !(a == b); }

  PP_HD bool is_on_curve() const {
    if (is_infinity()) return true;
    constexpr F b = C::b;
    const F z2 = Z.sqr();
    const F z6 = z2.sqr() * z2;
    return Y.sqr() == X.sqr() * X + b * z6;
  }

  // k·P for k given as little-endian 64-bit limbs (any value, not reduced), fixed 4-bit windows.
  template <int M>
  PP_HD Jacobian mul(const Limbs<M>& k) const {
    Jacobian table[16];
    table[0] = infinity();
    table[1] = *this;
    for (int i = 2; i < 16; ++i) table[i] = (i % 2 == 0) ? table[i / 2].dbl() : table[i - 1] + *this;
    Jacobian r = infinity();
    for (int i = 64 * M / 4 - 1; i >= 0; --i) {
      r = r.dbl().dbl().dbl().dbl();
      const unsigned d = unsigned(k.v[(4 * i) / 64] >> ((4 * i) % 64)) & 15u;
      if (d) r = r + table[d];
    }
    return r;
  }
};

// XYZZ coordinates: (X, Y, ZZ, ZZZ) represents (X/ZZ, Y/ZZZ) with ZZ^3 = ZZZ^2; ZZ = 0 is
// infinity. The cheapest mixed addition for MSM bucket accumulation.
template <class C>
struct alignas(8) XYZZ {
  using F = typename C::Field;
  F X, Y, ZZ, ZZZ;

  PP_HD static constexpr XYZZ infinity() { return XYZZ{F::one(), F::one(), F::zero(), F::zero()}; }
  PP_HD static XYZZ from_affine(const Affine<C>& a) {
    return a.is_infinity() ? infinity() : XYZZ{a.x, a.y, F::one(), F::one()};
  }
  PP_HD bool is_infinity() const { return ZZ.is_zero(); }
  PP_HD XYZZ operator-() const { return XYZZ{X, -Y, ZZ, ZZZ}; }

  // dbl-2008-s-1 (a = 0)
  PP_HD XYZZ dbl() const {
    if (is_infinity()) return *this;
    const F U = Y.dbl();
    const F V = U.sqr();
    const F Wv = U * V;
    const F S = X * V;
    const F X2 = X.sqr();
    const F Mv = X2.dbl() + X2;
    XYZZ r;
    r.X = Mv.sqr() - S.dbl();
    r.Y = Mv * (S - r.X) - Wv * Y;
    r.ZZ = V * ZZ;
    r.ZZZ = Wv * ZZZ;
    return r;
  }

  // mdbl-2008-s-1: double an affine point.
  PP_HD static XYZZ dbl_affine(const Affine<C>& q) {
    if (q.is_infinity()) return infinity();
    const F U = q.y.dbl();
    const F V = U.sqr();
    const F Wv = U * V;
    const F S = q.x * V;
    const F X2 = q.x.sqr();
    const F Mv = X2.dbl() + X2;
    XYZZ r;
    r.X = Mv.sqr() - S.dbl();
    r.Y = Mv * (S - r.X) - Wv * q.y;
    r.ZZ = V;
    r.ZZZ = Wv;
    return r;
  }

  // madd-2008-s: add an affine point.
  PP_HD XYZZ add_mixed(const Affine<C>& q) const {
    if (q.is_infinity()) return *this;
    if (is_infinity()) return from_affine(q);
    const F U2 = q.x * ZZ;
    const F S2 = q.y * ZZZ;
    const F P = U2 - X;
    const F R = S2 - Y;
    if (P.is_zero()) return R.is_zero() ? dbl_affine(q) : infinity();
    const F PP = P.sqr();
    const F PPP = P * PP;
    const F Q = X * PP;
    XYZZ r;
    r.X = R.sqr() - PPP - Q.dbl();
    r.Y = R * (Q - r.X) - Y * PPP;
    r.ZZ = ZZ * PP;
    r.ZZZ = ZZZ * PPP;
    return r;
  }

  // add-2008-s
  PP_HD XYZZ operator+(const XYZZ& q) const {
    if (q.is_infinity()) return *this;
    if (is_infinity()) return q;
    const F U1 = X * q.ZZ;
    const F U2 = q.X * ZZ;
    const F S1 = Y * q.ZZZ;
    const F S2 = q.Y * ZZZ;
    const F P = U2 - U1;
    const F R = S2 - S1;
    if (P.is_zero()) return R.is_zero() ? dbl() : infinity();
    const F PP = P.sqr();
    const F PPP = P * PP;
    const F Q = U1 * PP;
    XYZZ r;
    r.X = R.sqr() - PPP - Q.dbl();
    r.Y = R * (Q - r.X) - S1 * PPP;
    r.ZZ = ZZ * q.ZZ * PP;
    r.ZZZ = ZZZ * q.ZZZ * PPP;
    return r;
  }
  PP_HD XYZZ& operator+=(const XYZZ& q) { return *this = *this + q; }

  // (X/ZZ, Y/ZZZ) with Z = ZZZ/ZZ, scaled by ZZ: (ZZ^2 X, ZZ^3 Y, ZZZ).
  PP_HD Jacobian<C> to_jacobian() const {
    if (is_infinity()) return Jacobian<C>::infinity();
    const F zz2 = ZZ.sqr();
    return Jacobian<C>{X * zz2, Y * zz2 * ZZ, ZZZ};
  }
  PP_HD Affine<C> to_affine() const {
    if (is_infinity()) return Affine<C>::infinity();
    const F zzzi = ZZZ.inverse();
    const F zi = zzzi * ZZ;  // 1/Z where Z = ZZZ/ZZ
    const F zzi = zi.sqr();
    return Affine<C>{X * zzi, Y * zzzi};
  }
  PP_HD friend bool operator==(const XYZZ& a, const XYZZ& b) {
    if (a.is_infinity() || b.is_infinity()) return a.is_infinity() && b.is_infinity();
    return a.X * b.ZZ == b.X * a.ZZ && a.Y * b.ZZZ == b.Y * a.ZZZ;
  }
  PP_HD friend bool operator!=(const XYZZ& a, const XYZZ& b) { return !(a == b); }
};

// Converts n Jacobian points to affine with one field inversion (Montgomery's trick).
// `scratch` holds n field elements.
template <class C>
void batch_to_affine(const Jacobian<C>* in, Affine<C>* out, std::size_t n,
                     typename C::Field* scratch) {
  using F = typename C::Field;
  F acc = F::one();
  for (std::size_t i = 0; i < n; ++i) {
    scratch[i] = acc;
    if (!in[i].is_infinity()) acc = acc * in[i].Z;
  }
  F inv = acc.inverse();
  for (std::size_t i = n; i-- > 0;) {
    if (in[i].is_infinity()) {
      out[i] = Affine<C>::infinity();
      continue;
    }
    const F zi = inv * scratch[i];
    inv = inv * in[i].Z;
    const F zi2 = zi.sqr();
    out[i] = Affine<C>{in[i].X * zi2, in[i].Y * zi2 * zi};
  }
}

// k·P for a scalar of the curve's group order (its canonical value is used).
template <class C>
PP_HD Jacobian<C> scalar_mul(const Jacobian<C>& p, const typename C::Scalar& k) {
  constexpr int N = C::Scalar::N;
  uint64_t c[N];
  k.to_canonical(c);
  Limbs<N> e{};
  for (int i = 0; i < N; ++i) e.v[i] = c[i];
  return p.mul(e);
}
template <class C>
PP_HD Jacobian<C> scalar_mul(const Affine<C>& p, const typename C::Scalar& k) {
  return scalar_mul(Jacobian<C>::from_affine(p), k);
}

// Prime-order subgroup membership: r·P == O (on-curve is checked separately).
template <class C>
PP_HD bool is_in_subgroup(const Affine<C>& p) {
  constexpr auto r = C::Scalar::Params::modulus;
  return Jacobian<C>::from_affine(p).mul(r).is_infinity();
}

}  // namespace pp
