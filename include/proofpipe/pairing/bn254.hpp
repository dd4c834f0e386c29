// SPDX-License-Identifier: Apache-2.0 OR MIT
// Optimal ate pairing e: G1 x G2 -> GT (in Fp12) for BN254 on the CPU, with multi-pairing: what
// Ethereum's pairing precompile and snarkjs's bn128 verifier compute, up to the exponent below.
#pragma once

#include <span>

#include "proofpipe/ec/bn254.hpp"
#include "proofpipe/ff/tower.hpp"

namespace pp::bn254 {

// Exponent convention: pairing() is EXACTLY e(P, Q) = f(P)^((p^12 - 1)/r). @noble/curves (and the
// Fuentes-Castaneda hard part many libraries use) return e(P, Q)^m with m = 2x(6x^2 + 3x + 1);
// tests/test_bn254.cpp checks ours^m against noble's values. A pairing check (a product equal to 1)
// does not depend on the convention.
//
// Inputs are affine points assumed to be on their curves and in the prime-order subgroups (the
// caller validates: G2 points need bn254::is_in_subgroup). Points at infinity contribute 1.

// m = 2x(6x^2 + 3x + 1) (190 bits, x = 4965661367192848881): the power of e(P, Q) that pairings
// with the Fuentes-Castaneda hard part return (@noble/curves; ffjavascript's, hence snarkjs's
// vk_alphabeta_12). tests/test_noble.cpp checks pairing()^m against noble's values.
inline constexpr Limbs<3> kLibraryPairingExponent = limbs::from_hex<3>("3bec47df15e307c81ea96b02d9d9e38d2e5d4e223ddedaf4");

// Miller loop of the optimal ate pairing: f_{6x+2,Q}(P) times the lines through [6x+2]Q, pi(Q)
// and -pi^2(Q), x = 4965661367192848881. Defined up to factors the final exponentiation kills.
// Returns 1 if P or Q is infinity.
Fp12 miller_loop(const G1Affine& P, const G2Affine& Q);

// f^((p^12 - 1)/r): easy part (p^6 - 1)(p^2 + 1), then the hard part (p^4 - p^2 + 1)/r (exact).
// f must be non-zero.
Fp12 final_exponentiation(const Fp12& f);

// e(P, Q) = final_exponentiation(miller_loop(P, Q)).
Fp12 pairing(const G1Affine& P, const G2Affine& Q);

// prod_i e(P[i], Q[i]) with one final exponentiation. P.size() must equal Q.size()
// (std::invalid_argument otherwise); an empty product is 1.
Fp12 multi_pairing(std::span<const G1Affine> P, std::span<const G2Affine> Q);

}  // namespace pp::bn254
