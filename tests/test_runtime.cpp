// SPDX-License-Identifier: Apache-2.0 OR MIT
// The runtime (one engine per process) without a GPU: the CPU backend proves, the proofs equal
// the CPU prover's, a bad witness fails with its WitnessError, key residency is empty.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "engine_fixture.hpp"
#include "proofpipe/runtime/runtime.hpp"

using namespace pp;
using pp::test::EngineCircuit;
using pp::test::same_proof;

namespace {
const EngineCircuit& circuit() {
  static const EngineCircuit c(5, 3, 21);
  return c;
}
}  // namespace

TEST(Runtime, ProvesOnTheCpuWithoutAGpu) {
  runtime::Config cfg;  // every visible GPU: none in CI, so the CPU backend
  cfg.threads = 2;
  runtime::Runtime rt(cfg);
  if (rt.gpu_count() > 0) GTEST_SKIP() << "a GPU is visible: the GPU harness covers this machine";
  engine::JobSpec spec;
  spec.key = circuit().key;
  spec.witnesses = circuit().first(3);
  spec.seed = 4;
  const engine::JobResult r = rt.submit(spec).wait();
  ASSERT_EQ(r.status, engine::JobStatus::ok) << r.error;
  const std::vector<Proof> want = prove(*circuit().key, *circuit().witnesses, 4);
  for (std::size_t p = 0; p < 3; ++p) EXPECT_TRUE(same_proof(r.proofs[p], want[p])) << p;
  const runtime::Stats st = rt.stats();
  EXPECT_EQ(st.gpus, 0);
  EXPECT_EQ(st.partitions_on_cpu, 3u);
  EXPECT_EQ(st.key_loads, 0u);
  EXPECT_GT(st.times.msm_h, 0.0);
  EXPECT_TRUE(rt.residency(circuit().key.get()).empty());
  EXPECT_EQ(rt.evict(circuit().key.get()), 0);
}

TEST(Runtime, RefusesWhatItCannotServe) {
  runtime::Config cfg;
  cfg.gw = 0;
  EXPECT_THROW(runtime::Runtime{cfg}, std::invalid_argument);
  cfg.gw = 2;
  cfg.all_gpus = false;
  cfg.gpus = {99};  // not visible anywhere (and no GPU in a CPU build)
  EXPECT_THROW(runtime::Runtime{cfg}, std::invalid_argument);
  cfg.gpus = {};
  cfg.all_gpus = true;
  cfg.cpu_fallback = false;  // no GPU and no fallback: nothing could prove
  runtime::Runtime* made = nullptr;
  try {
    made = new runtime::Runtime(cfg);
  } catch (const std::invalid_argument&) {
  }
  if (made) {
    EXPECT_GT(made->gpu_count(), 0) << "a runtime without GPU and without CPU fallback was made";
    delete made;
  }
}

// PROOFPIPE_TEST_LOSE_GPU=DEVICE@N: parsed strictly, and refused for a GPU the process does not prove on.
TEST(Runtime, TheLoseGpuHookParsesStrictly) {
  EXPECT_FALSE(runtime::parse_lose_gpu("").has_value());
  const std::optional<runtime::LoseGpu> ok = runtime::parse_lose_gpu("1@3");
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->device, 1);
  EXPECT_EQ(ok->at_prepare, 3u);
  for (const char* bad : {"1", "@3", "1@", "1@0", "-1@2", "1@x", "a@1", "1@2@3", "1@ 2", "1@9999999999"}) {
    try {
      (void)runtime::parse_lose_gpu(bad);
      ADD_FAILURE() << "accepted \"" << bad << "\"";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("PROOFPIPE_TEST_LOSE_GPU"), std::string::npos) << e.what();
    }
  }
  // A CPU-only runtime has no GPU to lose: the hook is refused, not ignored.
  ::setenv("PROOFPIPE_TEST_LOSE_GPU", "7@1", 1);
  runtime::Config cfg;
  cfg.all_gpus = false;
  try {
    runtime::Runtime rt(cfg);
    ADD_FAILURE() << "PROOFPIPE_TEST_LOSE_GPU naming a GPU the runtime does not use was ignored";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("GPU 7 is not one this process proves on"), std::string::npos) << e.what();
  }
  ::unsetenv("PROOFPIPE_TEST_LOSE_GPU");
}

// PROOFPIPE_TEST_SIM_GPUS=N: N simulated GPUs behind the runtime; with one of them lost partway
// (PROOFPIPE_TEST_LOSE_GPU), every job still ends with the CPU prover's proofs, none of them made
// by the CPU fallback, jobs pinned to the lost GPU included.
TEST(Runtime, SimulatedGpusAndALostOne) {
  struct Env {
    Env() {
      ::setenv("PROOFPIPE_TEST_SIM_GPUS", "3", 1);
      ::setenv("PROOFPIPE_TEST_LOSE_GPU", "1@2", 1);
    }
    ~Env() {
      ::unsetenv("PROOFPIPE_TEST_SIM_GPUS");
      ::unsetenv("PROOFPIPE_TEST_LOSE_GPU");
    }
  } env;
  runtime::Config cfg;
  cfg.threads = 1;
  runtime::Runtime rt(cfg);
  ASSERT_EQ(rt.gpu_count(), 3);
  const std::vector<Proof> want = prove(*circuit().key, *circuit().witnesses, 9);
  std::vector<engine::JobHandle> jobs;
  for (int j = 0; j < 6; ++j) {
    engine::JobSpec spec;
    spec.key = circuit().key;
    spec.witnesses = circuit().first(3);
    spec.seed = 9;
    spec.backend = j % 3 == 2 ? -1 : 1;  // mostly pinned to the GPU that is lost
    jobs.push_back(rt.submit(spec));
  }
  for (auto& h : jobs) {
    const engine::JobResult r = h.wait();
    ASSERT_EQ(r.status, engine::JobStatus::ok) << r.error;
    for (std::size_t p = 0; p < 3; ++p) {
      EXPECT_TRUE(same_proof(r.proofs[p], want[p])) << p;
      EXPECT_NE(r.partitions[p].where, "cpu");
    }
  }
  const runtime::Stats st = rt.stats();
  EXPECT_EQ(st.gpus, 3);
  ASSERT_EQ(st.devices.size(), 3u);
  for (int d = 0; d < 3; ++d) EXPECT_EQ(st.devices[std::size_t(d)].device, d);
  EXPECT_EQ(st.engine.cpu_fallbacks, 0u);
  EXPECT_EQ(st.partitions_on_cpu, 0u);
  EXPECT_GE(st.engine.backends[1].handed_off, 1u);
  EXPECT_EQ(st.engine.backends[1].name, "sim1");
  // --devices among the simulated ones; an ordinal past them is refused.
  ::unsetenv("PROOFPIPE_TEST_LOSE_GPU");
  cfg.all_gpus = false;
  cfg.gpus = {0, 2};
  runtime::Runtime two(cfg);
  EXPECT_EQ(two.gpu_count(), 2);
  ASSERT_EQ(two.stats().devices.size(), 2u);
  EXPECT_EQ(two.stats().devices[1].device, 2);
  cfg.gpus = {3};
  EXPECT_THROW(runtime::Runtime{cfg}, std::invalid_argument);
  for (const char* bad : {"0", "17", "x", "-1", "2 "}) EXPECT_THROW((void)runtime::parse_sim_gpus(bad), std::invalid_argument) << bad;
  EXPECT_EQ(runtime::parse_sim_gpus("16").value_or(0), 16);
}

TEST(Runtime, AWitnessThatDoesNotFitFailsWithAWitnessError) {
  runtime::Config cfg;
  runtime::Runtime rt(cfg);
  static const EngineCircuit other(6, 1, 22);  // another shape
  engine::JobSpec spec;
  spec.key = circuit().key;
  spec.witnesses = other.first(1);
  const engine::JobResult r = rt.submit(spec).wait();
  ASSERT_EQ(r.status, engine::JobStatus::failed);
  ASSERT_TRUE(r.partitions[0].exception);
  EXPECT_THROW(std::rethrow_exception(r.partitions[0].exception), WitnessError);
}

TEST(Runtime, APartitionLargerThanTheHostBudgetFailsWithHostBudgetError) {
  runtime::Config cfg;
  cfg.host_budget = 1024;  // far below one witness
  runtime::Runtime rt(cfg);
  engine::JobSpec spec;
  spec.key = circuit().key;
  spec.witnesses = circuit().first(1);
  const engine::JobResult r = rt.submit(spec).wait();
  ASSERT_EQ(r.status, engine::JobStatus::failed);
  ASSERT_TRUE(r.partitions[0].exception);
  EXPECT_THROW(std::rethrow_exception(r.partitions[0].exception), engine::HostBudgetError);
}

// BN254 keys go to the runtime's second engine (the same template): its proofs are the CPU
// prover's, its job ids are not the BLS12-381 engine's (cancel(id) reaches the right job), and
// the stats count both curves' partitions.
TEST(Runtime, ProvesBn254JobsBesideBls12381Ones) {
  static const pp::test::Bn254ChainCircuit bn;
  runtime::Config cfg;
  cfg.threads = 2;
  runtime::Runtime rt(cfg);
  if (rt.gpu_count() > 0) GTEST_SKIP() << "a GPU is visible: the GPU harness covers this machine";
  engine::JobSpec bls;
  bls.key = circuit().key;
  bls.witnesses = circuit().first(1);
  bls.seed = 4;
  engine::JobSpecOf<bn254::Bn254> spec;
  spec.key = bn.key;
  spec.witnesses = bn.witnesses;
  spec.seed = 6;
  const auto h_bls = rt.submit(bls);
  const auto h_bn = rt.submit(spec);
  EXPECT_NE(h_bls.id(), h_bn.id());
  const auto r = h_bn.wait();
  ASSERT_EQ(r.status, engine::JobStatus::ok) << r.error;
  const std::vector<bn254::Proof> want = bn.cpu_proofs(6);
  ASSERT_EQ(r.proofs.size(), want.size());
  for (std::size_t p = 0; p < want.size(); ++p) {
    EXPECT_TRUE(r.proofs[p].a == want[p].a && r.proofs[p].b == want[p].b && r.proofs[p].c == want[p].c) << p;
    EXPECT_TRUE(verify(bn.key->vk, bn.publics[p], r.proofs[p])) << p;
  }
  ASSERT_EQ(h_bls.wait().status, engine::JobStatus::ok);
  const runtime::Stats st = rt.stats();
  EXPECT_EQ(st.engine.partitions_ok, 1u + want.size());
  EXPECT_EQ(st.engine.jobs_done, 2u);
  EXPECT_EQ(st.partitions_on_cpu, 1u + want.size());
  EXPECT_EQ(st.engine.proofs_checked, 1u + want.size());
  EXPECT_TRUE(rt.residency(bn.key.get()).empty());
  EXPECT_EQ(rt.evict(bn.key.get()), 0);
  EXPECT_FALSE(rt.cancel(h_bn.id()));  // done: nothing to cancel
}

TEST(Runtime, CancelReachesABn254Job) {
  static const pp::test::Bn254ChainCircuit bn;
  runtime::Config cfg;
  cfg.threads = 1;
  runtime::Runtime rt(cfg);
  if (rt.gpu_count() > 0) GTEST_SKIP() << "a GPU is visible: the GPU harness covers this machine";
  engine::JobSpecOf<bn254::Bn254> spec;
  spec.key = bn.key;
  for (int k = 0; k < 16; ++k) spec.witnesses.push_back(bn.witnesses[std::size_t(k) % bn.witnesses.size()]);
  const auto first = rt.submit(spec);   // keeps the one CPU worker busy
  const auto second = rt.submit(spec);  // queued behind it
  EXPECT_TRUE(rt.cancel(second.id()));
  EXPECT_EQ(second.wait().status, engine::JobStatus::cancelled);
  EXPECT_EQ(first.wait().status, engine::JobStatus::ok);
}
