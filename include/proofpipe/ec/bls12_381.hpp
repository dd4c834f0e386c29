// SPDX-License-Identifier: Apache-2.0 OR MIT
// The BLS12-381 groups: G1 on E(Fp): y^2 = x^3 + 4 and G2 on the M-twist E'(Fp2): y^2 = x^3 + 4(1+u).
#pragma once

#include "proofpipe/ec/curve.hpp"
#include "proofpipe/ff/bls12_381.hpp"

namespace pp {

struct G1Curve {
  using Field = Fp;
  using Scalar = Fr;
  static constexpr Fp b = Fp::from_u64_constexpr(4);
};

struct G2Curve {
  using Field = Fp2;
  using Scalar = Fr;
  static constexpr Fp2 b = Fp2{Fp::from_u64_constexpr(4), Fp::from_u64_constexpr(4)};
};

using G1Affine = Affine<G1Curve>;
using G1Jacobian = Jacobian<G1Curve>;
using G1XYZZ = XYZZ<G1Curve>;
using G2Affine = Affine<G2Curve>;
using G2Jacobian = Jacobian<G2Curve>;
using G2XYZZ = XYZZ<G2Curve>;

static_assert(sizeof(G1Affine) == 96 && sizeof(G2Affine) == 192, "affine points are packed coordinates");
static_assert(sizeof(G1XYZZ) == 192 && sizeof(G2XYZZ) == 384);

// The standard generators (zcash / IETF pairing-friendly-curves draft).
inline constexpr G1Affine g1_generator_value{
    Fp::from_hex("17f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac586c55e83ff97a1aeffb3af00adb22c6bb"),
    Fp::from_hex("08b3f481e3aaa0f1a09e30ed741d8ae4fcf5e095d5d00af600db18cb2c04b3edd03cc744a2888ae40caa232946c5e7e1")};
inline constexpr G2Affine g2_generator_value{
    Fp2{Fp::from_hex("024aa2b2f08f0a91260805272dc51051c6e47ad4fa403b02b4510b647ae3d1770bac0326a805bbefd48056c8c121bdb8"),
        Fp::from_hex("13e02b6052719f607dacd3a088274f65596bd0d09920b61ab5da61bbdc7f5049334cf11213945d57e5ac7d055d042b7e")},
    Fp2{Fp::from_hex("0ce5d527727d6e118cc9cdc6da2e351aadfd9baa8cbdd3a76d429a695160d12c923ac9cc3baca289e193548608b82801"),
        Fp::from_hex("0606c4a02ea734cc32acd2b02bc28b99cb3e287e85a763af267492ab572e99ab3f370d275cec1da1aaa9075ff05f79be")}};

PP_HD inline G1Affine g1_generator() {
  constexpr G1Affine g = g1_generator_value;
  return g;
}
PP_HD inline G2Affine g2_generator() {
  constexpr G2Affine g = g2_generator_value;
  return g;
}

}  // namespace pp
