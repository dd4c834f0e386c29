// SPDX-License-Identifier: Apache-2.0 OR MIT
// Optimal ate pairing e: G1 x G2 -> GT (in Fp12) for BLS12-381 on the CPU, with multi-pairing.
#pragma once

#include <span>

#include "proofpipe/ec/bls12_381.hpp"
#include "proofpipe/ff/tower.hpp"

namespace pp {

// Exponent convention: pairing() is EXACTLY e(P, Q) = f_{x,Q}(P)^((p^12 - 1)/r). Several libraries
// (@noble/curves, zkcrypto/bls12_381, gnark, blst) instead return the CUBE of this value because
// their hard part raises to 3(p^4 - p^2 + 1)/r; compare their GT values against our value ^ 3
// (tests/test_pairing.cpp checks e(G1, G2)^3 against the @noble/curves vector).
//
// Inputs are affine points assumed to be on their curves and in the prime-order subgroups (the
// caller validates; nothing here checks). Points at infinity contribute the factor 1.

// Miller loop of the optimal ate pairing, f_{x,Q}(P) with x = -0xd201000000010000 (the result is
// conjugated for the negative x). Defined up to factors killed by the final exponentiation
// (vertical lines and constant scalings of the lines are dropped). Returns 1 if P or Q is infinity.
Fp12 miller_loop(const G1Affine& P, const G2Affine& Q);

// f^((p^12 - 1)/r): easy part (p^6 - 1)(p^2 + 1), then hard part (p^4 - p^2 + 1)/r through an
// x-chain (exact exponent, not a multiple of it). f must be non-zero.
Fp12 final_exponentiation(const Fp12& f);

// e(P, Q) = final_exponentiation(miller_loop(P, Q)).
Fp12 pairing(const G1Affine& P, const G2Affine& Q);

// prod_i e(P[i], Q[i]) with the Miller loops run together (one shared Fp12 squaring per step)
// and ONE final exponentiation. P.size() must equal Q.size()
// (std::invalid_argument otherwise). Pairs with an infinity point are skipped (factor 1); an
// empty product is 1.
Fp12 multi_pairing(std::span<const G1Affine> P, std::span<const G2Affine> Q);

// The product of the Miller loops only (for callers that combine it with other values before a
// single final exponentiation, e.g. Groth16 verification). Same preconditions as multi_pairing.
Fp12 multi_miller_loop(std::span<const G1Affine> P, std::span<const G2Affine> Q);

}  // namespace pp
