// SPDX-License-Identifier: Apache-2.0 OR MIT
// The BN254 groups: G1 on E(Fp): y^2 = x^3 + 3 (prime order r, cofactor 1) and G2 on the D-twist
// E'(Fp2): y^2 = x^3 + 3/(9 + u) (order r·h2: points need is_in_subgroup). The curve code,
// scalar_mul and is_in_subgroup are ec/curve.hpp's, as for BLS12-381.
#pragma once

#include "proofpipe/ec/curve.hpp"
#include "proofpipe/ff/bn254.hpp"

namespace pp::bn254 {

struct G1Curve {
  using Field = Fp;
  using Scalar = Fr;
  static constexpr Fp b = Fp::from_u64_constexpr(3);
};

struct G2Curve {
  using Field = Fp2;
  using Scalar = Fr;
  /* 3 / (9 + u) = (27 - 3u) / 82 */
  static constexpr Fp2 b = Fp2{Fp::from_hex("2b149d40ceb8aaae81be18991be06ac3b5b4c5e559dbefa33267e6dc24a138e5"),
                               Fp::from_hex("009713b03af0fed4cd2cafadeed8fdf4a74fa084e52d1852e4a2bd0685c315d2")};
};

using G1Affine = Affine<G1Curve>;
using G1Jacobian = Jacobian<G1Curve>;
using G1XYZZ = XYZZ<G1Curve>;
using G2Affine = Affine<G2Curve>;
using G2Jacobian = Jacobian<G2Curve>;
using G2XYZZ = XYZZ<G2Curve>;

static_assert(sizeof(G1Affine) == 64 && sizeof(G2Affine) == 128, "affine points are packed coordinates");

// The generators Ethereum's precompiles (EIP-196/197), circom and snarkjs use.
inline constexpr G1Affine g1_generator_value{Fp::from_u64_constexpr(1), Fp::from_u64_constexpr(2)};
inline constexpr G2Affine g2_generator_value{
    Fp2{Fp::from_hex("1800deef121f1e76426a00665e5c4479674322d4f75edadd46debd5cd992f6ed"),
        Fp::from_hex("198e9393920d483a7260bfb731fb5d25f1aa493335a9e71297e485b7aef312c2")},
    Fp2{Fp::from_hex("12c85ea5db8c6deb4aab71808dcb408fe3d1e7690c43d37b4ce6cc0166fa7daa"),
        Fp::from_hex("090689d0585ff075ec9e99ad690c3395bc4b313370b38ef355acdadcd122975b")}};

PP_HD inline G1Affine g1_generator() {
  constexpr G1Affine g = g1_generator_value;
  return g;
}
PP_HD inline G2Affine g2_generator() {
  constexpr G2Affine g = g2_generator_value;
  return g;
}

}  // namespace pp::bn254
