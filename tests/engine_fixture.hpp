// SPDX-License-Identifier: Apache-2.0 OR MIT
// Shared fixture of the engine tests: a tiny synthetic key, witnesses, and the CPU prover's proofs.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <utility>
#include <vector>

#include "proofpipe/engine/engine.hpp"
#include "proofpipe/groth16/prover.hpp"
#include "proofpipe/groth16/synthetic.hpp"
#include "proofpipe/testkit/random_data.hpp"

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

// A BN254 key (snarkjs's convention) and four witnesses of a 40-product chain (public x and out):
// the engine and runtime tests' second curve.
struct Bn254ChainCircuit {
  static constexpr uint64_t kSeed = 0x656e67626e323534ULL;
  static constexpr std::size_t kChain = 40;

  // z = (1, x, out, t_1 .. t_k): t_1 = x·x + x, t_{i+1} = t_i·t_i + x, out = t_k. Public: x, out.
  static bn254::R1cs chain_r1cs() {
    bn254::R1cs r;
    r.num_inputs = 3;
    r.num_aux = kChain;
    auto row = [](bn254::SparseMatrix& m, std::vector<std::pair<uint32_t, bn254::Fr>> lc) {
      if (m.row_start.empty()) m.row_start.push_back(0);
      for (const auto& [col, v] : lc) {
        m.column.push_back(col);
        m.value.push_back(v);
      }
      m.row_start.push_back(m.column.size());
    };
    for (uint32_t i = 0; i < kChain; ++i) {
      const uint32_t prev = i == 0 ? 1 : 3 + i - 1;  // x, then t_i
      row(r.a, {{prev, bn254::Fr::one()}});
      row(r.b, {{prev, bn254::Fr::one()}});
      row(r.c, {{3 + i, bn254::Fr::one()}, {1, -bn254::Fr::one()}});  // t - x
    }
    row(r.a, {{3 + kChain - 1, bn254::Fr::one()}});  // out = t_k (times 1)
    row(r.b, {{0, bn254::Fr::one()}});
    row(r.c, {{2, bn254::Fr::one()}});
    return r;
  }

  static std::vector<bn254::Fr> chain_assignment(const bn254::Fr& x) {
    std::vector<bn254::Fr> z{bn254::Fr::one(), x, bn254::Fr::zero()};
    bn254::Fr t = x;
    for (std::size_t i = 0; i < kChain; ++i) {
      t = t * t + x;
      z.push_back(t);
    }
    z[2] = t;
    return z;
  }

  bn254::R1cs r1cs = chain_r1cs();
  std::shared_ptr<const bn254::ProvingKey> key;
  std::vector<std::shared_ptr<const bn254::Witness>> witnesses;
  std::vector<std::vector<bn254::Fr>> publics;
  Bn254ChainCircuit() {
    key = std::make_shared<const bn254::ProvingKey>(setup(r1cs, kSeed, {}, kSnarkjsConvention));
    std::mt19937_64 rng(kSeed + 1);
    for (int p = 0; p < 4; ++p) {
      const std::vector<bn254::Fr> z = chain_assignment(testdata::random_fr<bn254::Fr>(rng));
      witnesses.push_back(std::make_shared<const bn254::Witness>(witness_from_assignment(r1cs, z)));
      publics.push_back({z[1], z[2]});
    }
  }
  std::vector<bn254::Proof> cpu_proofs(uint64_t seed) const {
    std::vector<bn254::Witness> ws;
    for (const auto& w : witnesses) ws.push_back(*w);
    return prove(*key, ws, seed);
  }
};

}  // namespace pp::test
