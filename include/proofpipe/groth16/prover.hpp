// Groth16 setup (test-only toxic waste), prover and verifier on the CPU, bellman and snarkjs conventions.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "proofpipe/ff/tower.hpp"
#include "proofpipe/groth16/keys.hpp"
#include "proofpipe/groth16/r1cs.hpp"

namespace pp {

// Reports work done so far out of a total (any unit); may be called from worker threads,
// never concurrently.
using ProgressFn = std::function<void(std::size_t done, std::size_t total)>;

// Fresh random toxic waste from `seed` — for tests and benchmarks, NOT a ceremony.
// `progress` counts points of the key. `convention` picks the domain generator the rows are
// placed on and the H basis (see KeyConvention); the other points are the same for both bases.
ProvingKey setup(const R1cs& r1cs, uint64_t seed, const ProgressFn& progress = {},
                 const KeyConvention& convention = kBellmanConvention);

// Per-stage wall times of one prove() call, in milliseconds.
struct ProveTimings {
  double evaluate = 0, ntt = 0, msm_h = 0, msm_l = 0, msm_a = 0, msm_b_g1 = 0, msm_b_g2 = 0, assembly = 0;
};

// What the prover needs of one partition — the interface bellperson hands SupraSeal:
// per-constraint evaluations including bellman's input constraints (a, b, c have
// constraints + inputs entries), the input assignment (with the leading 1), the aux
// assignment and the column densities.
struct Witness {
  std::vector<Fr> a, b, c;
  std::vector<Fr> input;
  std::vector<Fr> aux;
  Densities densities;
};

// Evaluates the circuit on z and appends the input constraints. Throws std::invalid_argument
// naming the first unsatisfied constraint, or when z has the wrong size or z[0] != 1.
Witness witness_from_assignment(const R1cs& r1cs, std::span<const Fr> z);

// Proves each witness (one per partition, all for the same key). r, s are drawn from a
// generator seeded with `seed`. Only the H step follows pk.convention; the MSMs and the
// assembly are shared. bellman basis: the domain is the smallest power of two n at or above
// the rows of a, b, c and pk.h holds n - 1 points; snarkjs basis: n = pk.h.size() must hold the
// rows (witness_from_zkey gives exactly n, with c = a∘b). Throws std::invalid_argument naming
// the partition when a witness is inconsistent (sizes, a·b != c at some row) or does not match
// the key. `progress` counts partitions.
std::vector<Proof> prove(const ProvingKey& pk, std::span<const Witness> witnesses, uint64_t seed,
                         ProveTimings* timings = nullptr, const ProgressFn& progress = {});

// The randomisers of one proof. prove(pk, ws, seed) draws them for partitions 0, 1, ... in order
// from std::mt19937_64(seed); proof_blindings(seed, n) returns exactly those n pairs, so a
// scheduler can prove partitions one at a time, in any order and on any device, and still
// produce prove()'s proofs: prove(pk, ws, seed)[p] == prove_partition(pk, ws[p], blindings[p]).
struct Blinding {
  Fr r, s;
};
std::vector<Blinding> proof_blindings(uint64_t seed, std::size_t partitions);
// One partition with the given randomisers; `partition` only names it in error messages.
Proof prove_partition(const ProvingKey& pk, const Witness& witness, const Blinding& blinding,
                      std::size_t partition = 0, ProveTimings* timings = nullptr);


// The verifying key with e(alpha, beta) computed once, so that each verification needs three
// Miller loops and one final exponentiation.
struct PreparedVerifyingKey {
  VerifyingKey vk;
  Fp12 alpha_beta;
};
PreparedVerifyingKey prepare(const VerifyingKey& vk);

// Checks e(A, B) = e(alpha, beta) e(IC(x), gamma) e(C, delta). Throws std::invalid_argument
// when the number of public inputs does not match the key; a malformed proof is invalid.
bool verify(const PreparedVerifyingKey& pvk, std::span<const Fr> public_inputs, const Proof& proof);
bool verify(const VerifyingKey& vk, std::span<const Fr> public_inputs, const Proof& proof);
// Random linear combination of all the checks, one multi-pairing. public_inputs[k] are the
// inputs of proofs[k] (without the leading 1).
bool batch_verify(const VerifyingKey& vk, std::span<const std::vector<Fr>> public_inputs,
                  std::span<const Proof> proofs, uint64_t seed);

}  // namespace pp
