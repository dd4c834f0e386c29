// SPDX-License-Identifier: Apache-2.0 OR MIT
// The GLV endomorphisms of BLS12-381's and BN254's G1 and G2 and the scalar splits that the CPU
// MSM uses: k·P = ±k1·P ± k2·φ(P) with k1, k2 < 2^128, so an MSM over n points with 255-bit
// scalars becomes one over 2n points with 128-bit scalars: the same number of bucket additions,
// half the windows and so half the bucket reductions.
#pragma once

#include <cstdint>
#include <type_traits>

#include "proofpipe/ec/bls12_381.hpp"
#include "proofpipe/ec/bn254.hpp"

namespace pp::glv {

// φ(x, y) = (β·x, y) with β a primitive cube root of unity in Fp: an automorphism of
// y^2 = x^3 + b for any b, so of E(Fp) and of the twist E'(Fp2) alike (β ∈ Fp ⊂ Fp2). On the
// prime-order groups G1 and G2 it acts as multiplication by a cube root of unity mod r. The
// MSM wants λ = x^2 - 1 (x = -0xd201000000010000 the BLS parameter; λ^2 + λ + 1 = r), which
// G1 gets from one of the two β and G2 from the other (β^2); tests/test_msm.cpp checks both
// against a scalar multiplication.
// BN254 likewise (its λ below): G1 takes the smaller β, G2 the other one.
template <class C>
struct Beta;
template <>
struct Beta<G1Curve> {
  static constexpr Fp value = Fp::from_hex(
      "1a0111ea397fe699ec02408663d4de85aa0d857d89759ad4897d29650fb85f9b409427eb4f49fffd8bfd00000000aaac");
};
template <>
struct Beta<G2Curve> {
  static constexpr Fp value =
      Fp::from_hex("5f19672fdf76ce51ba69c6076a0f77eaddb3a93be6f89688de17d813620a00022e01fffffffefffe");
};
template <>
struct Beta<bn254::G1Curve> {
  static constexpr bn254::Fp value = bn254::Fp::from_hex("59e26bcea0d48bacd4f263f1acdb5c4f5763473177fffffe");
};
template <>
struct Beta<bn254::G2Curve> {
  static constexpr bn254::Fp value =
      bn254::Fp::from_hex("30644e72e131a0295e6dd9e7e0acccb0c28f069fbb966e3de4bd44e5607cfd48");
};
template <class C>
inline constexpr auto kBeta = Beta<C>::value;

// λ = 0xac45a4010001a40200000000ffffffff (little-endian limbs) and μ = floor(2^256 / λ), the
// reciprocal that estimates k / λ.
inline constexpr uint64_t kLambda[2] = {0x00000000ffffffffULL, 0xac45a4010001a402ULL};
inline constexpr uint64_t kMu[3] = {0x63f6e522f6cfee30ULL, 0x7c6becf1e01faaddULL, 0x1ULL};

template <class C>
PP_HD inline Affine<C> endo(const Affine<C>& p) {
  constexpr auto beta = kBeta<C>;
  Affine<C> r;
  mul_into(r.x, p.x, beta);
  r.y = p.y;
  return r;  // infinity (0, 0) maps to itself
}

// k = k1 + k2·λ with 0 <= k1 < λ and k2 = floor(k / λ) <= λ + 1 < 2^128, for a canonical
// scalar k < r = λ^2 + λ + 1 given as 4 little-endian limbs; k1 and k2 come back as 4 limbs
// (the top two zero) in the shape msm_digits::signed_digits reads.
inline void split(const uint64_t k[4], uint64_t k1[4], uint64_t k2[4]) {
  using u128 = unsigned __int128;
  // q = floor(k·μ / 2^256): k·μ <= k·2^256/λ, so q <= floor(k/λ); and it falls short of
  // k/λ by less than k/2^256 + 1 < 2, so at most two corrections below.
  uint64_t prod[7] = {};
  for (int i = 0; i < 4; ++i) {
    uint64_t carry = 0;
    for (int j = 0; j < 3; ++j) {
      const u128 t = u128(k[i]) * kMu[j] + prod[i + j] + carry;
      prod[i + j] = uint64_t(t);
      carry = uint64_t(t >> 64);
    }
    prod[i + 3] = carry;
  }
  uint64_t q0 = prod[4], q1 = prod[5];
  // rem = k - q·λ (q·λ <= k: no borrow out of the top limb).
  uint64_t ql[4] = {};
  {
    const u128 a = u128(q0) * kLambda[0];
    const u128 b = u128(q0) * kLambda[1];
    const u128 c = u128(q1) * kLambda[0];
    const u128 d = u128(q1) * kLambda[1];
    ql[0] = uint64_t(a);
    const u128 m = (a >> 64) + uint64_t(b) + uint64_t(c);
    ql[1] = uint64_t(m);
    const u128 h = (m >> 64) + (b >> 64) + (c >> 64) + uint64_t(d);
    ql[2] = uint64_t(h);
    ql[3] = uint64_t((h >> 64) + (d >> 64));
  }
  uint64_t rem[4];
  unsigned borrow = 0;
  for (int i = 0; i < 4; ++i) {
    const u128 t = u128(k[i]) - ql[i] - borrow;
    rem[i] = uint64_t(t);
    borrow = unsigned(t >> 127);
  }
  auto at_least_lambda = [&] {
    if (rem[3] | rem[2]) return true;
    return rem[1] != kLambda[1] ? rem[1] > kLambda[1] : rem[0] >= kLambda[0];
  };
  while (at_least_lambda()) {
    borrow = 0;
    for (int i = 0; i < 4; ++i) {
      const u128 t = u128(rem[i]) - (i < 2 ? kLambda[i] : 0) - borrow;
      rem[i] = uint64_t(t);
      borrow = unsigned(t >> 127);
    }
    if (++q0 == 0) ++q1;
  }
  k1[0] = rem[0];
  k1[1] = rem[1];
  k1[2] = k1[3] = 0;
  k2[0] = q0;
  k2[1] = q1;
  k2[2] = k2[3] = 0;
}

// BN254: λ = 0xb3c4d79d41a917585bfc41088d8daaa78b17ea66b99c90dd is 192 bits, so the split is the
// lattice one of Gallant, Lambert and Vanstone. The short basis of {(a, b): a + b·λ = 0 mod r}
//   v1 = (a1, -b1) = (2x + 1, -(6x^2 + 4x + 1)),  v2 = (a2, b2) = (6x^2 + 6x + 2, 2x + 1)
// (x the BN parameter) has determinant a1·b2 + a2·b1 = r, so (k, 0) = (k·b2/r)·v1 + (k·b1/r)·v2
// exactly; with c1 = floor(k·g1/2^256) and c2 = floor(k·g2/2^256), g_i = floor(2^256·b_i/r)
// (b1 here is |-b1|), each c_i falls short of k·b_i/r by less than 2, so
//   k1 = k - c1·a1 - c2·a2,  k2 = c1·b1 - c2·b2
// satisfy k = k1 + k2·λ (mod r) and |k1| < 2(a1 + a2) < 2^128, |k2| < 2(b1 + b2) < 2^128; both
// may be negative.
namespace bn254_split {
inline constexpr uint64_t kLambda[3] = {0x8b17ea66b99c90ddULL, 0x5bfc41088d8daaa7ULL, 0xb3c4d79d41a91758ULL};
inline constexpr uint64_t kA1 = 0x89d3256894d213e3ULL;  // = b2
inline constexpr uint64_t kA2[2] = {0x0be4e1541221250bULL, 0x6f4d8248eeb859fdULL};
inline constexpr uint64_t kB1[2] = {0x8211bbeb7d4f1128ULL, 0x6f4d8248eeb859fcULL};
inline constexpr uint64_t kG1[2] = {0xd91d232ec7e0b3d7ULL, 0x2ULL};
inline constexpr uint64_t kG2[3] = {0x7a7bd9d4391eb18dULL, 0x4ccef014a773d2cfULL, 0x2ULL};

// out[0..na+nb) = a·b.
inline void mul_wide(const uint64_t* a, int na, const uint64_t* b, int nb, uint64_t* out) {
  using u128 = unsigned __int128;
  for (int i = 0; i < na + nb; ++i) out[i] = 0;
  for (int i = 0; i < na; ++i) {
    uint64_t carry = 0;
    for (int j = 0; j < nb; ++j) {
      const u128 t = u128(a[i]) * b[j] + out[i + j] + carry;
      out[i + j] = uint64_t(t);
      carry = uint64_t(t >> 64);
    }
    out[i + nb] = carry;
  }
}
// acc -= v (mod 2^256), acc += v (mod 2^256); v has 4 limbs.
inline void sub4(uint64_t acc[4], const uint64_t v[4]) {
  unsigned borrow = 0;
  for (int i = 0; i < 4; ++i) {
    const unsigned __int128 t = (unsigned __int128)acc[i] - v[i] - borrow;
    acc[i] = uint64_t(t);
    borrow = unsigned(t >> 127);
  }
}
// |v| into mag (4 limbs, the top two zero), the sign as the result: v is a two's complement
// 256-bit value whose magnitude is below 2^128.
inline bool magnitude(const uint64_t v[4], uint64_t mag[4]) {
  const bool neg = (v[3] >> 63) != 0;
  uint64_t t[4] = {v[0], v[1], v[2], v[3]};
  if (neg) {
    uint64_t zero[4] = {};
    sub4(zero, v);
    for (int i = 0; i < 4; ++i) t[i] = zero[i];
  }
  mag[0] = t[0];
  mag[1] = t[1];
  mag[2] = mag[3] = 0;
  return neg;
}
}  // namespace bn254_split

// A scalar k (canonical, 4 limbs) as k = s1·k1 + s2·k2·λ (mod r), s_i = -1 when neg_i, with
// k1, k2 < 2^128 in 4 limbs (the top two zero) in the shape msm_digits::signed_digits reads.
struct Split {
  uint64_t k1[4], k2[4];
  bool neg1 = false, neg2 = false;
};

// The split of the curve's λ: BLS12-381's (never negative) or BN254's lattice split.
template <class C>
inline Split split_scalar(const uint64_t k[4]) {
  Split s;
  if constexpr (std::is_same_v<typename C::Scalar, Fr>) {
    split(k, s.k1, s.k2);
  } else {
    static_assert(std::is_same_v<typename C::Scalar, bn254::Fr>);
    using namespace bn254_split;
    uint64_t w[7];
    mul_wide(k, 4, kG1, 2, w);
    const uint64_t c1 = w[4];  // < b2 < 2^64
    mul_wide(k, 4, kG2, 3, w);
    const uint64_t c2[2] = {w[4], w[5]};  // < b1 < 2^127
    uint64_t k1[4] = {k[0], k[1], k[2], k[3]}, t[4];
    mul_wide(&c1, 1, &kA1, 1, w);
    t[0] = w[0], t[1] = w[1], t[2] = t[3] = 0;
    sub4(k1, t);
    mul_wide(c2, 2, kA2, 2, t);
    sub4(k1, t);
    uint64_t k2[4];
    mul_wide(&c1, 1, kB1, 2, w);
    k2[0] = w[0], k2[1] = w[1], k2[2] = w[2], k2[3] = 0;
    mul_wide(c2, 2, &kA1, 1, w);  // c2·b2 (b2 = a1)
    t[0] = w[0], t[1] = w[1], t[2] = w[2], t[3] = 0;
    sub4(k2, t);
    s.neg1 = magnitude(k1, s.k1);
    s.neg2 = magnitude(k2, s.k2);
  }
  return s;
}

}  // namespace pp::glv
