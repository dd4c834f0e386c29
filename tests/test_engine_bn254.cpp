// SPDX-License-Identifier: Apache-2.0 OR MIT
// The engine over BN254: the same EngineOf template that proves BLS12-381 partitions, with the
// curve as its parameter. On the CPU backend its proofs equal the CPU prover's and verify; a
// backend's corrupted proof is caught by the check and proved again on the CPU (and reaches the
// caller when the check is off, which shows that the first test can fail); an unsatisfied witness
// fails its partition with the CPU prover's reason.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <memory>
#include <string>
#include <vector>

#include "engine_fixture.hpp"
#include "proofpipe/engine/cpu_backend.hpp"
#include "proofpipe/engine/engine.hpp"
#include "proofpipe/groth16/prover.hpp"

namespace pp::test {
namespace {

using bn254::Fr;
using E = bn254::Bn254;
using EngineBn = engine::EngineOf<E>;
using TaskBn = engine::PartitionTaskOf<E>;
using engine::JobStatus;

// As in test_engine.cpp: the engine's workers are the parallelism under test.
tbb::global_control g_one_thread(tbb::global_control::max_allowed_parallelism, 1);

const Bn254ChainCircuit& circuit() {
  static const Bn254ChainCircuit c;
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
  const Bn254ChainCircuit& c = circuit();
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
  const Bn254ChainCircuit& c = circuit();
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
  const Bn254ChainCircuit& c = circuit();
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
  const Bn254ChainCircuit& c = circuit();
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
