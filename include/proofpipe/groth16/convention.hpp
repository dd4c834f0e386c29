// SPDX-License-Identifier: Apache-2.0 OR MIT
// Moving a proving key or a witness between conventions: the H basis change and the row relabelling.
#pragma once

#include <cstdint>

#include "proofpipe/groth16/prover.hpp"

namespace pp {

// Let n be the domain size, omega and nu the n-th and 2n-th roots from the key's generator
// (nu² = omega), T_i = tau^i Z(tau)/delta (bellman's points, i < n - 1) and H_j =
// L_{2j+1}(tau)/delta (snarkjs's, j < n; L over the 2n-point domain).
//
//  * snarkjs -> bellman is exact: tau^i Z(tau) has degree <= 2n - 2 and vanishes on the even
//    points, where Z(nu·omega^j) = -2, so T_i = -2 nu^i Σ_j omega^(ij) H_j — a group-element NTT.
//  * bellman -> snarkjs: H_j = -1/(2n) Σ_i omega^(-ij) nu^(-i) T_i needs T_(n-1), which a
//    bellman key does not have. It is taken as zero: the points then differ from the
//    ceremony's, but no proof does, because the prover's a·b - c (snarkjs recomputes c as a·b on
//    the domain) has degree <= 2n - 2, so h = (a·b - c)/Z never has an x^(n-1) term. A key
//    converted this way proves and verifies; `snarkjs zkey verify` (which recomputes the points
//    from the powers of tau) rejects it, and no conversion can restore the missing point.
//
// n log n scalar multiplications (G1), multithreaded. The result keeps pk's domain generator:
// the A, B, L, IC points do not depend on the H basis.
ProvingKey change_h_basis(const ProvingKey& pk, HBasis target);

// The s with omega_to^s == omega_from for the two generators' 2^lg-th roots (s is odd). A row
// that sits at omega_from^k sits at omega_to^(s·k mod n): the same key proves under either
// generator once the rows are renumbered. Throws std::invalid_argument for a bad lg/generator.
uint64_t row_stride(int lg, uint64_t from_generator, uint64_t to_generator);

// The witness with row k moved to row s·k mod n (s = row_stride(lg, from, to)); a, b, c come
// out with exactly 2^lg rows (at least w.a.size()). Assignments and densities are unchanged.
Witness move_rows(const Witness& w, int lg, uint64_t from_generator, uint64_t to_generator);

}  // namespace pp
