// SPDX-License-Identifier: Apache-2.0 OR MIT
// The GLV endomorphism of BLS12-381's G1 and G2 and the scalar split that the CPU MSM uses:
// k·P = k1·P + k2·φ(P) with k1, k2 < 2^128, so an MSM over n points with 255-bit scalars
// becomes one over 2n points with 128-bit scalars: the same number of bucket additions, half
// the windows and so half the bucket reductions.
#pragma once

#include <cstdint>

#include "proofpipe/ec/bls12_381.hpp"

namespace pp::glv {

// φ(x, y) = (β·x, y) with β a primitive cube root of unity in Fp: an automorphism of
// y^2 = x^3 + b for any b, so of E(Fp) and of the twist E'(Fp2) alike (β ∈ Fp ⊂ Fp2). On the
// prime-order groups G1 and G2 it acts as multiplication by a cube root of unity mod r. The
// MSM wants λ = x^2 - 1 (x = -0xd201000000010000 the BLS parameter; λ^2 + λ + 1 = r), which
// G1 gets from one of the two β and G2 from the other (β^2); tests/test_msm.cpp checks both
// against a scalar multiplication.
template <class C>
inline constexpr Fp kBeta = Fp::from_hex(
    "1a0111ea397fe699ec02408663d4de85aa0d857d89759ad4897d29650fb85f9b409427eb4f49fffd8bfd00000000aaac");
template <>
inline constexpr Fp kBeta<G2Curve> = Fp::from_hex(
    "5f19672fdf76ce51ba69c6076a0f77eaddb3a93be6f89688de17d813620a00022e01fffffffefffe");

// λ = 0xac45a4010001a40200000000ffffffff (little-endian limbs) and μ = floor(2^256 / λ), the
// reciprocal that estimates k / λ.
inline constexpr uint64_t kLambda[2] = {0x00000000ffffffffULL, 0xac45a4010001a402ULL};
inline constexpr uint64_t kMu[3] = {0x63f6e522f6cfee30ULL, 0x7c6becf1e01faaddULL, 0x1ULL};

template <class C>
PP_HD inline Affine<C> endo(const Affine<C>& p) {
  constexpr Fp beta = kBeta<C>;
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

}  // namespace pp::glv
