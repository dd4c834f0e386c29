// SPDX-License-Identifier: Apache-2.0 OR MIT
// Groth16 keys and proofs (bellman/bellperson layout of the proving key), over BLS12-381 or BN254.
#pragma once

#include <array>
#include <span>
#include <cstdint>
#include <vector>

#include "proofpipe/core/host_array.hpp"
#include "proofpipe/groth16/curves.hpp"

namespace pp {

// E is the curve (groth16/curves.hpp); the unsuffixed names are BLS12-381's, bn254:: has BN254's.
template <class E>
struct VerifyingKeyOf {
  using G1A = Affine<typename E::G1>;
  using G2A = Affine<typename E::G2>;
  G1A alpha_g1, beta_g1;
  G2A beta_g2, gamma_g2;
  G1A delta_g1;
  G2A delta_g2;
  std::vector<G1A> ic;  // one per input, including the constant one
};
using VerifyingKey = VerifyingKeyOf<Bls12_381>;

// How a proving key places the rows of its circuit and what its H points are. Only the
// prover's H step depends on it; the MSMs and the assembly are the same for every convention.
enum class HBasis {
  // bellman/bellperson: n - 1 points tau^i Z(tau)/delta; the prover divides a·b - c by Z on
  // the coset g·<omega> and MSMs the coefficients of h.
  bellman,
  // snarkjs: n points L_{2j+1}(tau)/delta, the odd Lagrange polynomials of the 2n-point domain;
  // the prover evaluates a·b - c at the odd points nu·omega^j (nu² = omega) and MSMs those
  // values directly (no division: Z = -2 there, folded into the points).
  snarkjs,
};
struct KeyConvention {
  HBasis h_basis = HBasis::bellman;
  // Row k of a, b, c is the domain point omega^k with omega = g^((r-1)/n): 7 for bellman's
  // keys, 5 for snarkjs's (see Domain). The same points serve any g; only the rows move.
  uint64_t domain_generator = 7;
  friend bool operator==(const KeyConvention&, const KeyConvention&) = default;
};
inline constexpr KeyConvention kBellmanConvention{HBasis::bellman, 7};
inline constexpr KeyConvention kSnarkjsConvention{HBasis::snarkjs, 5};

// bellperson's Parameters: vk, then the queries. a, b_g1, b_g2 hold only the points for
// variables with a non-zero column (inputs first, then aux by the densities); h holds the H
// points of `convention` (bellman: n - 1 points tau^i Z(tau)/delta; snarkjs: n points);
// l one point per aux variable.
template <class E>
struct ProvingKeyOf {
  VerifyingKeyOf<E> vk;
  // Owned vectors, or views of a mapped key cache (core/host_array.hpp).
  HostArray<Affine<typename E::G1>> h, l, a, b_g1;
  HostArray<Affine<typename E::G2>> b_g2;
  KeyConvention convention = kBellmanConvention;
};
using ProvingKey = ProvingKeyOf<Bls12_381>;

template <class E>
struct ProofOf {
  Affine<typename E::G1> a;
  Affine<typename E::G2> b;
  Affine<typename E::G1> c;
};

// BLS12-381's proofs also have bellperson's byte form.
template <>
struct ProofOf<Bls12_381> {
  G1Affine a;
  G2Affine b;
  G1Affine c;

  static constexpr std::size_t kBytes = 192;  // compressed A (48) ‖ B (96) ‖ C (48)
  std::array<uint8_t, kBytes> to_bytes() const;
  // Throws std::invalid_argument with the failing element and reason.
  static ProofOf from_bytes(std::span<const uint8_t, kBytes> bytes);
};
using Proof = ProofOf<Bls12_381>;

// BN254's proofs have Ethereum's byte form: A, B, C uncompressed, every coordinate a 32-byte
// big-endian integer, in the order A.x, A.y, B.x.c1, B.x.c0, B.y.c1, B.y.c0, C.x, C.y — the
// pairing precompile's (EIP-197) order, in which snarkjs's Solidity verifier takes a, b, c.
template <>
struct ProofOf<bn254::Bn254> {
  bn254::G1Affine a;
  bn254::G2Affine b;
  bn254::G1Affine c;

  static constexpr std::size_t kBytes = 256;
  std::array<uint8_t, kBytes> to_bytes() const;
  // Throws std::invalid_argument with the failing element and reason (a coordinate not below p,
  // a point off the curve or outside the prime-order subgroup, the point at infinity).
  static ProofOf from_bytes(std::span<const uint8_t, kBytes> bytes);
};

namespace bn254 {
using VerifyingKey = VerifyingKeyOf<Bn254>;
using ProvingKey = ProvingKeyOf<Bn254>;
using Proof = ProofOf<Bn254>;
}  // namespace bn254

}  // namespace pp
