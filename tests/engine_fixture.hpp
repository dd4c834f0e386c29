// SPDX-License-Identifier: Apache-2.0 OR MIT
// Shared fixture of the engine tests: a tiny synthetic key, witnesses, and the CPU prover's proofs.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "proofpipe/engine/engine.hpp"
#include "proofpipe/groth16/prover.hpp"
#include "proofpipe/groth16/synthetic.hpp"

namespace pp::test {

inline bool same_proof(const Proof& x, const Proof& y) { return x.a == y.a && x.b == y.b && x.c == y.c; }

// One key at 2^lg with `partitions` witnesses (fixed seeds, logged by the test names).
struct EngineCircuit {
  std::shared_ptr<const ProvingKey> key;
  std::shared_ptr<const std::vector<Witness>> witnesses;
  std::vector<std::vector<Fr>> publics;
  PreparedVerifyingKey pvk;

  EngineCircuit(int lg, std::size_t partitions, uint64_t seed = 11) {
    SyntheticOptions so;
    so.lg_constraints = lg;
    so.seed = seed;
    const R1cs r1cs = make_porep_like_r1cs(so);
    key = std::make_shared<const ProvingKey>(setup(r1cs, seed));
    auto ws = std::make_shared<std::vector<Witness>>();
    for (std::size_t p = 0; p < partitions; ++p) {
      const std::vector<Fr> z = make_witness(r1cs, so, seed + 100 + p);
      ws->push_back(witness_from_assignment(r1cs, z));
      publics.emplace_back(z.begin() + 1, z.begin() + std::ptrdiff_t(r1cs.num_inputs));
    }
    witnesses = ws;
    pvk = prepare(key->vk);
  }
  // The first n witnesses (a job of n partitions), shared with this circuit, not copied.
  std::vector<std::shared_ptr<const Witness>> first(std::size_t n) const {
    std::vector<std::shared_ptr<const Witness>> out;
    for (std::size_t p = 0; p < n; ++p) out.emplace_back(witnesses, &(*witnesses)[p]);  // aliasing: keeps the vector
    return out;
  }
};

// Proofs of (job seed, partition) computed once by the CPU prover and verified once, so that
// thousands of engine jobs cost lookups. Thread-safe after fill().
class ProofCache {
 public:
  ProofCache(const EngineCircuit& c, std::vector<uint64_t> seeds) {
    for (uint64_t seed : seeds) {
      const std::vector<Proof> proofs = prove(*c.key, *c.witnesses, seed);
      for (std::size_t p = 0; p < proofs.size(); ++p) {
        valid_[{seed, p}] = verify(c.pvk, c.publics[p], proofs[p]);
        proofs_[{seed, p}] = proofs[p];
      }
      randomizers_[seed] = randomizers_from_seed(seed, c.witnesses->size());
    }
  }
  // The cached proof for a task; the seed is recovered from the task's randomizers.
  const Proof& lookup(uint64_t seed, std::size_t partition) const { return proofs_.at({seed, partition}); }
  bool verified(uint64_t seed, std::size_t partition) const { return valid_.at({seed, partition}); }
  // A ProofKernel for the engine/sim: finds the (seed, partition) whose randomizers the task carries.
  Proof kernel(const engine::PartitionTask& t) const {
    for (const auto& [k, proof] : proofs_) {
      if (k.second != t.partition) continue;
      const auto it = randomizers_.find(k.first);
      if (it != randomizers_.end() && it->second[t.partition].r == t.randomizers.r && it->second[t.partition].s == t.randomizers.s)
        return proof;
    }
    throw std::invalid_argument("ProofCache: no proof for this (seed, partition)");
  }

 private:
  std::map<std::pair<uint64_t, std::size_t>, Proof> proofs_;
  std::map<std::pair<uint64_t, std::size_t>, bool> valid_;
  std::map<uint64_t, std::vector<Randomizers>> randomizers_;
};

}  // namespace pp::test
