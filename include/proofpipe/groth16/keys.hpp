// Groth16 keys and proofs (bellman/bellperson layout of the proving key).
#pragma once

#include <array>
#include <span>
#include <cstdint>
#include <vector>

#include "proofpipe/ec/bls12_381.hpp"

namespace pp {

struct VerifyingKey {
  G1Affine alpha_g1, beta_g1;
  G2Affine beta_g2, gamma_g2;
  G1Affine delta_g1;
  G2Affine delta_g2;
  std::vector<G1Affine> ic;  // one per input, including the constant one
};

// bellperson's Parameters: vk, then the queries. a, b_g1, b_g2 hold only the points for
// variables with a non-zero column (inputs first, then aux by the densities); h holds n-1
// points tau^i Z(tau)/delta; l one point per aux variable.
struct ProvingKey {
  VerifyingKey vk;
  std::vector<G1Affine> h, l, a, b_g1;
  std::vector<G2Affine> b_g2;
};

struct Proof {
  G1Affine a;
  G2Affine b;
  G1Affine c;

  static constexpr std::size_t kBytes = 192;  // compressed A (48) ‖ B (96) ‖ C (48)
  std::array<uint8_t, kBytes> to_bytes() const;
  // Throws std::invalid_argument with the failing element and reason.
  static Proof from_bytes(std::span<const uint8_t, kBytes> bytes);
};

}  // namespace pp
