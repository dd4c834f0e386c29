// SPDX-License-Identifier: Apache-2.0 OR MIT
// Groth16 verification: single proofs and random-linear-combination batches (one multi-pairing).
#include <random>
#include <stdexcept>
#include <vector>

#include "proofpipe/groth16/prover.hpp"
#include "proofpipe/pairing/pairing.hpp"

namespace pp {
namespace {

// IC_0 + sum x_i IC_i.
G1Jacobian input_commitment(const VerifyingKey& vk, std::span<const Fr> inputs) {
  if (inputs.size() + 1 != vk.ic.size())
    throw std::invalid_argument("verify: " + std::to_string(inputs.size()) + " public inputs given, the key expects " +
                                std::to_string(vk.ic.size() - 1));
  G1Jacobian acc = G1Jacobian::from_affine(vk.ic[0]);
  for (std::size_t i = 0; i < inputs.size(); ++i) acc += scalar_mul(vk.ic[i + 1], inputs[i]);
  return acc;
}

bool points_valid(const Proof& p) {
  return p.a.is_on_curve() && p.b.is_on_curve() && p.c.is_on_curve() && is_in_subgroup(p.a) && is_in_subgroup(p.b) &&
         is_in_subgroup(p.c);
}

}  // namespace

PreparedVerifyingKey prepare(const VerifyingKey& vk) { return PreparedVerifyingKey{vk, pairing(vk.alpha_g1, vk.beta_g2)}; }

// e(A, B) e(-IC(x), gamma) e(-C, delta) == e(alpha, beta): three Miller loops, one final
// exponentiation.
bool verify(const PreparedVerifyingKey& pvk, std::span<const Fr> public_inputs, const Proof& proof) {
  const VerifyingKey& vk = pvk.vk;
  const G1Affine ic = input_commitment(vk, public_inputs).to_affine();
  if (!points_valid(proof)) return false;
  const std::vector<G1Affine> g1 = {proof.a, -ic, -proof.c};
  const std::vector<G2Affine> g2 = {proof.b, vk.gamma_g2, vk.delta_g2};
  return final_exponentiation(multi_miller_loop(g1, g2)) == pvk.alpha_beta;
}

bool verify(const VerifyingKey& vk, std::span<const Fr> public_inputs, const Proof& proof) {
  return verify(prepare(vk), public_inputs, proof);
}

// With random rho_k: prod_k e(rho_k A_k, B_k) · e(-sum rho_k alpha, beta) · e(-sum rho_k IC_k, gamma)
// · e(-sum rho_k C_k, delta) == 1. A forged proof passes only with probability ~1/r.
bool batch_verify(const VerifyingKey& vk, std::span<const std::vector<Fr>> public_inputs,
                  std::span<const Proof> proofs, uint64_t seed) {
  if (public_inputs.size() != proofs.size())
    throw std::invalid_argument("batch_verify: " + std::to_string(proofs.size()) + " proofs but " +
                                std::to_string(public_inputs.size()) + " public input sets");
  if (proofs.empty()) return true;
  std::mt19937_64 rng(seed);
  std::vector<G1Affine> g1;
  std::vector<G2Affine> g2;
  Fr rho_sum = Fr::zero();
  G1Jacobian ic_acc = G1Jacobian::infinity(), c_acc = G1Jacobian::infinity();
  for (std::size_t k = 0; k < proofs.size(); ++k) {
    if (!points_valid(proofs[k])) return false;
    // 128-bit random multipliers suffice for soundness and halve the scalar multiplications.
    const uint64_t c[4] = {rng(), rng() | 1, 0, 0};
    Fr rho;
    Fr::from_canonical(rho, c);
    rho_sum += rho;
    g1.push_back(scalar_mul(proofs[k].a, rho).to_affine());
    g2.push_back(proofs[k].b);
    ic_acc += scalar_mul(input_commitment(vk, public_inputs[k]), rho);
    c_acc += scalar_mul(proofs[k].c, rho);
  }
  g1.push_back((-scalar_mul(vk.alpha_g1, rho_sum)).to_affine());
  g2.push_back(vk.beta_g2);
  g1.push_back((-ic_acc).to_affine());
  g2.push_back(vk.gamma_g2);
  g1.push_back((-c_acc).to_affine());
  g2.push_back(vk.delta_g2);
  return multi_pairing(g1, g2).is_one();
}

}  // namespace pp
