// SPDX-License-Identifier: Apache-2.0 OR MIT
// Groth16 verification: single proofs and random-linear-combination batches (one multi-pairing), on
// either curve: the pairings (pairing/pairing.hpp, pairing/bn254.hpp) are found by the points' types.
#include <random>
#include <stdexcept>
#include <vector>

#include "proofpipe/groth16/prover.hpp"
#include "proofpipe/pairing/bn254.hpp"
#include "proofpipe/pairing/pairing.hpp"

namespace pp {
namespace {

// IC_0 + sum x_i IC_i.
template <class E>
Jacobian<typename E::G1> input_commitment(const VerifyingKeyOf<E>& vk, std::span<const typename E::Fr> inputs) {
  if (inputs.size() + 1 != vk.ic.size())
    throw std::invalid_argument("verify: " + std::to_string(inputs.size()) + " public inputs given, the key expects " +
                                std::to_string(vk.ic.size() - 1));
  Jacobian<typename E::G1> acc = Jacobian<typename E::G1>::from_affine(vk.ic[0]);
  for (std::size_t i = 0; i < inputs.size(); ++i) acc += scalar_mul(vk.ic[i + 1], inputs[i]);
  return acc;
}

template <class E>
bool points_valid(const ProofOf<E>& p) {
  return p.a.is_on_curve() && p.b.is_on_curve() && p.c.is_on_curve() && is_in_subgroup(p.a) && is_in_subgroup(p.b) &&
         is_in_subgroup(p.c);
}

}  // namespace

template <class E>
PreparedVerifyingKeyOf<E> prepare(const VerifyingKeyOf<E>& vk) {
  return PreparedVerifyingKeyOf<E>{vk, pairing(vk.alpha_g1, vk.beta_g2)};
}

// e(A, B) e(-IC(x), gamma) e(-C, delta) == e(alpha, beta): three Miller loops, one final
// exponentiation.
template <class E>
bool verify(const PreparedVerifyingKeyOf<E>& pvk, SpanOf<typename E::Fr> public_inputs,
            const std::type_identity_t<ProofOf<E>>& proof) {
  using G1A = Affine<typename E::G1>;
  using G2A = Affine<typename E::G2>;
  const VerifyingKeyOf<E>& vk = pvk.vk;
  const G1A ic = input_commitment(vk, public_inputs).to_affine();
  if (!points_valid(proof)) return false;
  const std::vector<G1A> g1 = {proof.a, -ic, -proof.c};
  const std::vector<G2A> g2 = {proof.b, vk.gamma_g2, vk.delta_g2};
  return multi_pairing(std::span<const G1A>(g1), std::span<const G2A>(g2)) == pvk.alpha_beta;
}

template <class E>
bool verify(const VerifyingKeyOf<E>& vk, SpanOf<typename E::Fr> public_inputs,
            const std::type_identity_t<ProofOf<E>>& proof) {
  return verify<E>(prepare(vk), public_inputs, proof);
}

// With random rho_k: prod_k e(rho_k A_k, B_k) · e(-sum rho_k alpha, beta) · e(-sum rho_k IC_k, gamma)
// · e(-sum rho_k C_k, delta) == 1. A forged proof passes only with probability ~1/r.
template <class E>
bool batch_verify(const VerifyingKeyOf<E>& vk, SpanOf<std::vector<typename E::Fr>> public_inputs,
                  SpanOf<ProofOf<E>> proofs, uint64_t seed) {
  using Fr = typename E::Fr;
  using G1A = Affine<typename E::G1>;
  using G2A = Affine<typename E::G2>;
  using G1J = Jacobian<typename E::G1>;
  if (public_inputs.size() != proofs.size())
    throw std::invalid_argument("batch_verify: " + std::to_string(proofs.size()) + " proofs but " +
                                std::to_string(public_inputs.size()) + " public input sets");
  if (proofs.empty()) return true;
  std::mt19937_64 rng(seed);
  std::vector<G1A> g1;
  std::vector<G2A> g2;
  Fr rho_sum = Fr::zero();
  G1J ic_acc = G1J::infinity(), c_acc = G1J::infinity();
  for (std::size_t k = 0; k < proofs.size(); ++k) {
    if (!points_valid(proofs[k])) return false;
    // 128-bit random multipliers suffice for soundness and halve the scalar multiplications.
    const uint64_t c[4] = {rng(), rng() | 1, 0, 0};
    Fr rho;
    Fr::from_canonical(rho, c);
    rho_sum += rho;
    g1.push_back(scalar_mul(proofs[k].a, rho).to_affine());
    g2.push_back(proofs[k].b);
    ic_acc += scalar_mul(input_commitment<E>(vk, public_inputs[k]), rho);
    c_acc += scalar_mul(proofs[k].c, rho);
  }
  g1.push_back((-scalar_mul(vk.alpha_g1, rho_sum)).to_affine());
  g2.push_back(vk.beta_g2);
  g1.push_back((-ic_acc).to_affine());
  g2.push_back(vk.gamma_g2);
  g1.push_back((-c_acc).to_affine());
  g2.push_back(vk.delta_g2);
  return multi_pairing(std::span<const G1A>(g1), std::span<const G2A>(g2)).is_one();
}

#define PP_VERIFIER_DEFINE(E)                                                                                   \
  template PreparedVerifyingKeyOf<E> prepare(const VerifyingKeyOf<E>&);                                         \
  template bool verify(const PreparedVerifyingKeyOf<E>&, SpanOf<E::Fr>, const ProofOf<E>&);                      \
  template bool verify(const VerifyingKeyOf<E>&, SpanOf<E::Fr>, const ProofOf<E>&);                              \
  template bool batch_verify(const VerifyingKeyOf<E>&, SpanOf<std::vector<E::Fr>>, SpanOf<ProofOf<E>>, uint64_t);
PP_VERIFIER_DEFINE(Bls12_381)
PP_VERIFIER_DEFINE(bn254::Bn254)
#undef PP_VERIFIER_DEFINE

}  // namespace pp
