// SPDX-License-Identifier: Apache-2.0 OR MIT
// The engine over BN254: the same EngineOf template that proves BLS12-381 partitions, with the
// curve as its parameter. On the CPU backend its proofs equal the CPU prover's and verify; a
// backend's corrupted proof is caught by the check and proved again on the CPU (and reaches the
// caller when the check is off, which shows that the first test can fail); an unsatisfied witness
// fails its partition with the CPU prover's reason.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "proofpipe/engine/cpu_backend.hpp"
#include "proofpipe/engine/engine.hpp"
#include "proofpipe/groth16/prover.hpp"
#include "proofpipe/testkit/random_data.hpp"

namespace pp::test {
namespace {

using bn254::Fr;
using E = bn254::Bn254;
using EngineBn = engine::EngineOf<E>;
using TaskBn = engine::PartitionTaskOf<E>;
using engine::JobStatus;

// As in test_engine.cpp: the engine's workers are the parallelism under test.
tbb::global_control g_one_thread(tbb::global_control::max_allowed_parallelism, 1);

constexpr uint64_t kSeed = 0x656e67626e323534ULL;
constexpr std::size_t kChain = 40;

// z = (1, x, out, t_1 .. t_k): t_1 = x·x + x, t_{i+1} = t_i·t_i + x, out = t_k. Public: x, out.
bn254::R1cs chain_r1cs() {
  bn254::R1cs r;
  r.num_inputs = 3;
  r.num_aux = kChain;
  auto row = [](bn254::SparseMatrix& m, std::vector<std::pair<uint32_t, Fr>> lc) {
    if (m.row_start.empty()) m.row_start.push_back(0);
    for (const auto& [col, v] : lc) {
      m.column.push_back(col);
      m.value.push_back(v);
    }
    m.row_start.push_back(m.column.size());
  };
  for (uint32_t i = 0; i < kChain; ++i) {
    const uint32_t prev = i == 0 ? 1 : 3 + i - 1;  // x, then t_i
    row(r.a, {{prev, Fr::one()}});
    row(r.b, {{prev, Fr::one()}});
    row(r.c, {{3 + i, Fr::one()}, {1, -Fr::one()}});  // t - x
  }
  row(r.a, {{3 + kChain - 1, Fr::one()}});  // out = t_k (times 1)
  row(r.b, {{0, Fr::one()}});
  row(r.c, {{2, Fr::one()}});
  return r;
}

std::vector<Fr> chain_assignment(const Fr& x) {
  std::vector<Fr> z{Fr::one(), x, Fr::zero()};
  Fr t = x;
  for (std::size_t i = 0; i < kChain; ++i) {
    t = t * t + x;
    z.push_back(t);
  }
  z[2] = t;
  return z;
}

struct BnCircuit {
  bn254::R1cs r1cs = chain_r1cs();
  std::shared_ptr<const bn254::ProvingKey> key;
  std::vector<std::shared_ptr<const bn254::Witness>> witnesses;
  std::vector<std::vector<Fr>> publics;
  BnCircuit() {
    key = std::make_shared<const bn254::ProvingKey>(setup(r1cs, kSeed, {}, kSnarkjsConvention));
    std::mt19937_64 rng(kSeed + 1);
    for (int p = 0; p < 4; ++p) {
      const std::vector<Fr> z = chain_assignment(testdata::random_fr<Fr>(rng));
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

const BnCircuit& circuit() {
  static const BnCircuit c;
  return c;
}

bool same(const bn254::Proof& x, const bn254::Proof& y) { return x.a == y.a && x.b == y.b && x.c == y.c; }

engine::JobSpecOf<E> job(uint64_t seed) {
  engine::JobSpecOf<E> s;
  s.key = circuit().key;
  s.witnesses = circuit().witnesses;
  s.seed = seed;
  return s;
}

// A device whose proof of partition `bad` comes back with A moved by the generator (a valid
// point, the wrong one): what a faulty GPU returns.
class CorruptingBackend final : public engine::BackendOf<E> {
 public:
  explicit CorruptingBackend(std::size_t bad) : bad_(bad) {}
  std::string name() const override { return "corrupting"; }
  int stage_slots() const override { return 1; }
  int msm_slots() const override { return 1; }
  std::unique_ptr<engine::Prepared> prepare(const TaskBn& task) override {
    auto p = std::make_unique<Held>();
    p->task = task;
    return p;
  }
  void stage(engine::Prepared&, int, int) override {}
  void compute(engine::Prepared&) override {}
  bn254::Proof finish(engine::Prepared& p) override {
    const TaskBn& t = dynamic_cast<Held&>(p).task;
    bn254::Proof proof = prove_partition(*t.key, *t.witness, t.randomizers, t.partition);
    if (t.partition == bad_)
      proof.a = (bn254::G1Jacobian::from_affine(proof.a) + bn254::G1Jacobian::from_affine(bn254::g1_generator())).to_affine();
    return proof;
  }
  engine::DeviceCalls& device_calls() override { return calls_; }
  engine::DeviceTimeline& timeline() override { return timeline_; }

 private:
  struct Held final : engine::Prepared {
    TaskBn task;
  };
  std::size_t bad_;
  engine::DeviceCalls calls_;
  engine::DeviceTimeline timeline_;
};

TEST(EngineBn254, CpuBackendProofsEqualTheCpuProverAndVerify) {
  const BnCircuit& c = circuit();
  engine::CpuBackendOf<E> cpu("cpu-bn254", 1);
  engine::EngineConfigOf<E> ec;
  ec.gw = 2;
  EngineBn eng({&cpu}, ec);
  const auto r = eng.submit(job(7)).wait();
  ASSERT_EQ(r.status, JobStatus::ok) << r.error;
  const auto expected = c.cpu_proofs(7);
  ASSERT_EQ(r.proofs.size(), expected.size());
  for (std::size_t p = 0; p < expected.size(); ++p) {
    EXPECT_TRUE(same(r.proofs[p], expected[p])) << "partition " << p;
    EXPECT_TRUE(verify(c.key->vk, c.publics[p], r.proofs[p])) << "partition " << p;
    EXPECT_EQ(r.partitions[p].where, "cpu-bn254");
  }
  const auto st = eng.stats();
  EXPECT_EQ(st.proofs_checked, expected.size());
  EXPECT_EQ(st.proofs_rejected, 0u);
  EXPECT_EQ(cpu.partitions(), expected.size());
}

TEST(EngineBn254, ACorruptedProofIsRejectedAndProvedAgainOnTheCpu) {
  const BnCircuit& c = circuit();
  CorruptingBackend dev(2);
  engine::EngineConfigOf<E> ec;
  ec.gw = 1;
  EngineBn eng({&dev}, ec);
  const auto r = eng.submit(job(9)).wait();
  ASSERT_EQ(r.status, JobStatus::ok) << r.error;
  const auto expected = c.cpu_proofs(9);
  for (std::size_t p = 0; p < expected.size(); ++p) {
    EXPECT_TRUE(same(r.proofs[p], expected[p])) << "partition " << p;
    EXPECT_EQ(r.partitions[p].where, p == 2 ? "cpu" : "corrupting") << "partition " << p;
  }
  const auto st = eng.stats();
  EXPECT_EQ(st.proofs_rejected, 2u);  // its proof, then once more on the same (only) device
  EXPECT_EQ(st.cpu_fallbacks, 1u);
}

// Without the check the corrupted proof reaches the caller: the test above can fail.
TEST(EngineBn254, WithoutTheCheckTheCorruptedProofIsReturned) {
  const BnCircuit& c = circuit();
  CorruptingBackend dev(2);
  engine::EngineConfigOf<E> ec;
  ec.gw = 1;
  ec.check_proofs = false;
  EngineBn eng({&dev}, ec);
  const auto r = eng.submit(job(9)).wait();
  ASSERT_EQ(r.status, JobStatus::ok) << r.error;
  EXPECT_FALSE(verify(c.key->vk, c.publics[2], r.proofs[2]));
  EXPECT_FALSE(same(r.proofs[2], c.cpu_proofs(9)[2]));
}

TEST(EngineBn254, AnUnsatisfiedWitnessFailsItsPartition) {
  const BnCircuit& c = circuit();
  auto bad = std::make_shared<bn254::Witness>(*c.witnesses[1]);
  std::vector<Fr> c_col(bad->c.data(), bad->c.data() + bad->c.size());
  c_col[5] += Fr::one();  // a·b != c at row 5
  bad->c = std::move(c_col);
  engine::CpuBackendOf<E> cpu("cpu-bn254", 1);
  engine::EngineConfigOf<E> ec;
  ec.gw = 1;
  EngineBn eng({&cpu}, ec);
  auto spec = job(3);
  spec.witnesses[1] = bad;
  const auto r = eng.submit(spec).wait();
  EXPECT_EQ(r.status, JobStatus::failed);
  EXPECT_EQ(r.partitions[1].status, JobStatus::failed);
  EXPECT_NE(r.partitions[1].error.find("a·b != c at constraint 5"), std::string::npos) << r.partitions[1].error;
}

}  // namespace
}  // namespace pp::test
