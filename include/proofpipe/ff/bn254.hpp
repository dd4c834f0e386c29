// SPDX-License-Identifier: Apache-2.0 OR MIT
// BN254 (alt_bn128: circom's and snarkjs's "bn128", Ethereum's precompiles) base field Fp, scalar
// field Fr and Fp2 = Fp[u]/(u^2 + 1): the same Field and Fp2Of templates as BLS12-381's, with
// BN254's moduli. The tower's non-residue is xi = 9 + u.
#pragma once

#include <cstdint>

#include "proofpipe/ff/field.hpp"
#include "proofpipe/ff/fp2.hpp"

namespace pp::bn254 {

struct FpParams {
  static constexpr int N = 4;
  /* p = 36x^4 + 36x^3 + 24x^2 + 6x + 1, x = 4965661367192848881 */
  static constexpr Limbs<N> modulus =
      limbs::from_hex<N>("30644e72e131a029b85045b68181585d97816a916871ca8d3c208c16d87cfd47");
};

struct FrParams {
  static constexpr int N = 4;
  /* r = 36x^4 + 36x^3 + 18x^2 + 6x + 1, the prime order of G1, G2 and GT */
  static constexpr Limbs<N> modulus =
      limbs::from_hex<N>("30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001");
};

using Fp = Field<FpParams>;
using Fr = Field<FrParams>;
using Fp2 = Fp2Of<Fp, 9>;

static_assert(sizeof(Fp) == 32 && sizeof(Fr) == 32 && sizeof(Fp2) == 64);
static_assert(Fp::BITS == 254 && Fr::BITS == 254);
// Montgomery constants checked against their published values (derived at compile time).
static_assert(FieldConsts<FpParams>::inv64 == 0x87d20782e4866389ULL);
static_assert(FieldConsts<FpParams>::r1.v[0] == 0xd35d438dc58f0d9dULL);  // R mod p, low limb
static_assert(FieldConsts<FrParams>::inv64 == 0xc2e1f593efffffffULL);
static_assert(FieldConsts<FrParams>::r1.v[0] == 0xac96341c4ffffffbULL);  // R mod r, low limb

}  // namespace pp::bn254
