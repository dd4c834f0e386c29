// SPDX-License-Identifier: Apache-2.0 OR MIT
// BLS12-381 base field Fp, scalar field Fr and the quadratic extension Fp2 = Fp[u]/(u^2 + 1)
// (ff/fp2.hpp, the template every curve's Fp2 is).
#pragma once

#include <cstdint>

#include "proofpipe/ff/field.hpp"
#include "proofpipe/ff/fp2.hpp"

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

// Fp2 = Fp[u] / (u^2 + 1), and the sextic non-residue xi = 1 + u of the tower (ff/tower.hpp).
using Fp2 = Fp2Of<Fp, 1>;
static_assert(sizeof(Fp2) == 96 && alignof(Fp2) == 8);
static_assert(detail::kLazyFp2<FpParams>, "the x86-64 lazy Fp2 kernels serve BLS12-381's Fp");

}  // namespace pp
