// SPDX-License-Identifier: Apache-2.0 OR MIT
// Groth16 setup (test-only toxic waste), prover and verifier on the CPU, bellman and snarkjs conventions,
// over BLS12-381 or BN254 (groth16/curves.hpp): templates with the unsuffixed names BLS12-381's.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "proofpipe/ff/tower.hpp"
#include "proofpipe/groth16/keys.hpp"
#include "proofpipe/groth16/query_layout.hpp"
#include "proofpipe/groth16/r1cs.hpp"
#include "proofpipe/ntt/ntt.hpp"

namespace pp {

// Reports work done so far out of a total (any unit); may be called from worker threads,
// never concurrently.
using ProgressFn = std::function<void(std::size_t done, std::size_t total)>;

// Fresh random toxic waste from `seed` — for tests and benchmarks, NOT a ceremony.
// `progress` counts points of the key. `convention` picks the domain generator the rows are
// placed on and the H basis (see KeyConvention); the other points are the same for both bases.
// The curve follows the circuit's scalar field.
template <class F>
ProvingKeyOf<CurveOf<F>> setup(const R1csOf<F>& r1cs, uint64_t seed, const ProgressFn& progress = {},
                               const KeyConvention& convention = kBellmanConvention);

// setup() in two halves, so that the points can be made on the CPU or on the GPU
// (gpu::key_points): the toxic waste and the exponent of every point of the key, then the
// multiplications of the generators. setup(r, seed, p, conv) == key_from_scalars(key_scalars(r,
// seed, conv), p). Multithreaded.
template <class F>
struct KeyScalarsOf {
  KeyConvention convention = kBellmanConvention;
  F alpha, beta, gamma, delta;
  std::vector<F> ic, h, l, a, b;  // b serves B_G1 and B_G2
};
using KeyScalars = KeyScalarsOf<Fr>;
template <class F>
KeyScalarsOf<F> key_scalars(const R1csOf<F>& r1cs, uint64_t seed, const KeyConvention& convention = kBellmanConvention);
template <class F>
ProvingKeyOf<CurveOf<F>> key_from_scalars(const KeyScalarsOf<F>& scalars, const ProgressFn& progress = {});
// The verifying key's alpha, beta, gamma, delta points and the convention; no queries.
template <class F>
ProvingKeyOf<CurveOf<F>> key_skeleton(const KeyScalarsOf<F>& scalars);

// The stages of a partition that every prover has, in milliseconds: the CPU prover's wall times
// (ProveTimings) and the GPU prover's event times (gpu::GpuTimes) both extend it.
struct ProverStageTimes {
  double ntt = 0, msm_h = 0, msm_l = 0, msm_a = 0, msm_b_g1 = 0, msm_b_g2 = 0;
  ProverStageTimes& operator+=(const ProverStageTimes& o) {
    ntt += o.ntt;
    msm_h += o.msm_h;
    msm_l += o.msm_l;
    msm_a += o.msm_a;
    msm_b_g1 += o.msm_b_g1;
    msm_b_g2 += o.msm_b_g2;
    return *this;
  }
};

// Per-stage wall times of one prove() call. msm_h is the MSM for C: H's, and L's and B_G1's when
// their scalars are dense (they then join H's MSM; msm_l and msm_b_g1 get nothing from that
// partition).
struct ProveTimings : ProverStageTimes {
  double evaluate = 0, assembly = 0;
  ProveTimings& operator+=(const ProveTimings& o) {
    ProverStageTimes::operator+=(o);
    evaluate += o.evaluate;
    assembly += o.assembly;
    return *this;
  }
};

// What the prover needs of one partition — the interface bellperson hands SupraSeal:
// per-constraint evaluations including bellman's input constraints (a, b, c have
// constraints + inputs entries), the input assignment (with the leading 1), the aux
// assignment and the column densities. The scalars are owned vectors, or a C API caller's arrays
// borrowed for the duration of its call (HostArray::borrow): readers build vectors and assign them.
template <class E>
struct WitnessOf {
  using F = typename E::Fr;
  HostArray<F> a, b, c;
  HostArray<F> input;
  HostArray<F> aux;
  Densities densities;
};
using Witness = WitnessOf<Bls12_381>;

// Evaluates the circuit on z and appends the input constraints. Throws WitnessError
// naming the first unsatisfied constraint, or when z has the wrong size or z[0] != 1.
template <class F>
WitnessOf<CurveOf<F>> witness_from_assignment(const R1csOf<F>& r1cs, std::type_identity_t<std::span<const F>> z);

// Spans the callers pass as vectors: the curve comes from the key.
template <class T>
using SpanOf = std::type_identity_t<std::span<const T>>;

// Proves each witness (one per partition, all for the same key). r, s are drawn from a
// generator seeded with `seed`. Only the H step follows pk.convention; the MSMs and the
// assembly are shared. bellman basis: the domain is the smallest power of two n at or above
// the rows of a, b, c and pk.h holds n - 1 points; snarkjs basis: n = pk.h.size() must hold the
// rows (witness_from_zkey gives exactly n, with c = a∘b). Throws std::invalid_argument naming
// the partition when a witness is inconsistent (sizes, a·b != c at some row) or does not match
// the key. `progress` counts partitions.
template <class E>
std::vector<ProofOf<E>> prove(const ProvingKeyOf<E>& pk, SpanOf<WitnessOf<E>> witnesses, uint64_t seed,
                              ProveTimings* timings = nullptr, const ProgressFn& progress = {});

// The randomisers r, s of one proof. They must be secret and uniformly random for the proof to
// be zero-knowledge; the seeded generator below is for tests and reproducible runs.
template <class F>
struct RandomizersOf {
  F r, s;
};
using Randomizers = RandomizersOf<Fr>;
// What prove(pk, witnesses, seed) draws: r then s for each partition in turn (mt19937_64).
template <class F = Fr>
std::vector<RandomizersOf<F>> randomizers_from_seed(uint64_t seed, std::size_t partitions);
// prove() with the caller's r, s per partition (randomizers.size() == witnesses.size(), else
// std::invalid_argument).
template <class E>
std::vector<ProofOf<E>> prove(const ProvingKeyOf<E>& pk, SpanOf<WitnessOf<E>> witnesses,
                              SpanOf<RandomizersOf<typename E::Fr>> randomizers, ProveTimings* timings = nullptr,
                              const ProgressFn& progress = {});


// One partition with the given randomisers, as prove() proves it:
// prove(pk, ws, seed)[p] == prove_partition(pk, ws[p], randomizers_from_seed(seed, n)[p], p), so a
// scheduler may prove partitions one at a time, in any order, on any device. `partition` names
// it in errors; the stage times are added to *timings.
template <class E>
ProofOf<E> prove_partition(const ProvingKeyOf<E>& pk, const std::type_identity_t<WitnessOf<E>>& witness,
                           const std::type_identity_t<RandomizersOf<typename E::Fr>>& randomizers,
                           std::size_t partition = 0, ProveTimings* timings = nullptr);

// The pieces of prove() that other provers (GPU, engine) share, so that their proofs equal the
// CPU prover's bit for bit.
// The five MSM results of one partition.
template <class E>
struct MsmSumsOf {
  Jacobian<typename E::G1> h, l, a, b_g1;
  Jacobian<typename E::G2> b_g2;
};
using MsmSums = MsmSumsOf<Bls12_381>;
// A = alpha + sum A + r delta; B = beta + sum B + s delta;
// C = sum H + sum L + s A + r (beta_1 + sum B_1 + s delta_1) - r s delta_1.
template <class E>
ProofOf<E> assemble_proof(const VerifyingKeyOf<E>& vk, const std::type_identity_t<MsmSumsOf<E>>& sums,
                          const std::type_identity_t<RandomizersOf<typename E::Fr>>& rs);
// Checks a witness against the key as prove() does (sizes, densities, every value a field
// element, a·b = c at every row) and returns the evaluation domain; WitnessError naming
// `partition` otherwise. It is the two checks below; a prover may run the second one beside its
// work (the GPU prover makes c = a∘b itself and checks the values while its kernels run), as
// long as no proof leaves before it passed and its work is safe on any limbs (it only computes
// with them: no value becomes an address).
template <class E>
DomainOf<typename E::Fr> check_witness(const ProvingKeyOf<E>& pk, const std::type_identity_t<WitnessOf<E>>& w,
                                       std::size_t partition);
// Sizes, input[0] = 1, densities against the key, and the domain: cheap, nothing per row.
template <class E>
DomainOf<typename E::Fr> check_witness_shape(const ProvingKeyOf<E>& pk, const std::type_identity_t<WitnessOf<E>>& w,
                                             std::size_t partition);
// Every scalar of input, aux, a, b and c below r (ScalarRangeError naming the first one that is
// not: a caller's borrowed arrays are checked here, in the pass that reads them anyway), then
// a·b = c at every row (WitnessError naming the lowest unsatisfied row). In parallel. Needs the
// shape checked.
template <class E>
void check_witness_values(const WitnessOf<E>& w, std::size_t partition);

// The verifying key with e(alpha, beta) computed once, so that each verification needs three
// Miller loops and one final exponentiation.
template <class E>
struct PreparedVerifyingKeyOf {
  VerifyingKeyOf<E> vk;
  typename E::Gt alpha_beta;
};
using PreparedVerifyingKey = PreparedVerifyingKeyOf<Bls12_381>;
template <class E>
PreparedVerifyingKeyOf<E> prepare(const VerifyingKeyOf<E>& vk);

// Checks e(A, B) = e(alpha, beta) e(IC(x), gamma) e(C, delta). Throws std::invalid_argument
// when the number of public inputs does not match the key; a malformed proof is invalid.
template <class E>
bool verify(const PreparedVerifyingKeyOf<E>& pvk, SpanOf<typename E::Fr> public_inputs,
            const std::type_identity_t<ProofOf<E>>& proof);
template <class E>
bool verify(const VerifyingKeyOf<E>& vk, SpanOf<typename E::Fr> public_inputs,
            const std::type_identity_t<ProofOf<E>>& proof);
// Random linear combination of all the checks, one multi-pairing. public_inputs[k] are the
// inputs of proofs[k] (without the leading 1).
template <class E>
bool batch_verify(const VerifyingKeyOf<E>& vk, SpanOf<std::vector<typename E::Fr>> public_inputs,
                  SpanOf<ProofOf<E>> proofs, uint64_t seed);

namespace bn254 {
using Witness = WitnessOf<Bn254>;
using KeyScalars = KeyScalarsOf<Fr>;
using Randomizers = RandomizersOf<Fr>;
using PreparedVerifyingKey = PreparedVerifyingKeyOf<Bn254>;
}  // namespace bn254

}  // namespace pp
