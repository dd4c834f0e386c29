// SPDX-License-Identifier: Apache-2.0 OR MIT
// Engine unit tests on the simulated device: real proofs equal to the CPU prover's, both
// interlocks, cancellation, drain, faults -> retry -> fallback, host backpressure, several devices.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <tbb/global_control.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <cstdio>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "engine_fixture.hpp"
#include "proofpipe/engine/cpu_backend.hpp"
#include "proofpipe/engine/engine.hpp"
#include "proofpipe/engine/losing_backend.hpp"
#include "proofpipe/engine/sim_backend.hpp"

using namespace pp;
using namespace pp::engine;
using pp::test::EngineCircuit;
using pp::test::same_proof;

namespace {

// TBB inside the CPU prover runs on the calling thread only: the engine's workers are the
// parallelism under test (and ThreadSanitizer cannot see TBB's own synchronisation).
tbb::global_control g_one_thread(tbb::global_control::max_allowed_parallelism, 1);

const EngineCircuit& circuit() {
  static const EngineCircuit c(4, 4);  // 2^4, 4 partitions, seed 11
  return c;
}

SimConfig small_sim(std::string name = "sim0", int stage_slots = 2, int msm_slots = 2) {
  SimConfig c;
  c.name = std::move(name);
  c.shared_bytes = 1000;
  c.compute_bytes = 500;
  c.stage_slot_bytes = 300;
  c.msm_slot_bytes = 200;
  c.stage_slots = stage_slots;
  c.msm_slots = msm_slots;
  c.arena_capacity = c.planned_bytes();
  return c;
}

JobSpec job_of(std::size_t partitions, uint64_t seed) {
  JobSpec s;
  s.key = circuit().key;
  s.witnesses = circuit().first(partitions);
  s.seed = seed;
  return s;
}

// The simulated device's "kernel" is the CPU prover itself, so this checks the ENGINE, not any
// kernel: each partition's proof comes back whole, in its place and with its own r, s (a
// partition given another's proof, or a job's seed applied to the wrong partition, fails it;
// EngineTestHelpers.ProofsInTheWrongPlaceFail shows that). The kernels are checked against the
// CPU prover by the GPU harness and the CPU twins' tests.
void expect_cpu_equal_and_valid(const JobResult& r, std::size_t partitions, uint64_t seed) {
  ASSERT_EQ(r.status, JobStatus::ok) << r.error;
  ASSERT_EQ(r.proofs.size(), partitions);
  const auto& c = circuit();
  const std::vector<Proof> cpu =
      prove(*c.key, std::span<const Witness>(c.witnesses->data(), partitions), seed);
  for (std::size_t p = 0; p < partitions; ++p) {
    EXPECT_TRUE(same_proof(r.proofs[p], cpu[p])) << "partition " << p;
    EXPECT_TRUE(verify(c.pvk, c.publics[p], r.proofs[p])) << "partition " << p;
  }
}

void expect_arena_sound(const SimBackend& sim) {
  const SimArenaStats a = sim.arena();
  EXPECT_EQ(a.violations, 0u) << a.first_violation;
  EXPECT_LE(a.peak, a.capacity);
}

}  // namespace

TEST(EngineTestHelpers, ProofsInTheWrongPlaceFail) {
  const auto& c = circuit();
  JobResult r;
  r.status = JobStatus::ok;
  r.proofs = prove(*c.key, std::span<const Witness>(c.witnesses->data(), 2), 11);
  auto failures = [&](uint64_t seed) {  // the helper's failures, intercepted
    ::testing::TestPartResultArray results;
    {
      ::testing::ScopedFakeTestPartResultReporter reporter(
          ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
      expect_cpu_equal_and_valid(r, 2, seed);
    }
    return results.size();
  };
  EXPECT_EQ(failures(11), 0u);  // as proved: passes
  std::swap(r.proofs[0], r.proofs[1]);
  EXPECT_GE(failures(11), 2u);  // each partition holds the other's proof
  std::swap(r.proofs[0], r.proofs[1]);
  EXPECT_GE(failures(12), 2u);  // another seed's r, s
}

TEST(Randomizers, ProvePartitionEqualsProve) {
  const auto& c = circuit();
  const std::vector<Proof> all = prove(*c.key, *c.witnesses, 5);
  const std::vector<Randomizers> rs = randomizers_from_seed(5, c.witnesses->size());
  // Out of order, one at a time.
  for (std::size_t p : {std::size_t(3), std::size_t(0), std::size_t(2)})
    EXPECT_TRUE(same_proof(prove_partition(*c.key, (*c.witnesses)[p], rs[p], p), all[p])) << p;
}

class BothInterlocks : public ::testing::TestWithParam<std::tuple<Interlock, int>> {};

TEST_P(BothInterlocks, ProofsVerifyAndEqualTheCpuProver) {
  const auto [interlock, gw] = GetParam();
  SimConfig sc = small_sim();
  sc.latency.stage_us = 200;
  sc.latency.h_us = 300;
  sc.latency.msm_us = 300;
  SimBackend sim(sc);
  EngineConfig ec;
  ec.gw = gw;
  ec.interlock = interlock;
  Engine engine({&sim}, ec);
  std::vector<JobHandle> jobs;
  for (uint64_t seed : {7u, 8u, 9u}) jobs.push_back(engine.submit(job_of(4, seed)));
  for (std::size_t j = 0; j < jobs.size(); ++j) expect_cpu_equal_and_valid(jobs[j].wait(), 4, 7 + j);
  engine.shutdown(Shutdown::drain);
  expect_arena_sound(sim);
  const EngineStats st = engine.stats();
  EXPECT_EQ(st.partitions_ok, 12u);
  EXPECT_EQ(st.backends[0].forbidden_calls, 0u) << st.backends[0].device_calls;
  EXPECT_GT(sim.device_calls().calls(DeviceCall::memcpy_async), 0u);
  EXPECT_GT(st.backends[0].gpu_busy, 0.0);
  EXPECT_LE(st.backends[0].gpu_busy, 1.0);
}

INSTANTIATE_TEST_SUITE_P(Engine, BothInterlocks,
                         ::testing::Combine(::testing::Values(Interlock::single, Interlock::two), ::testing::Values(1, 3)));

TEST(Engine, ReportsEachPartitionAsItEnds) {
  SimBackend sim(small_sim());
  Engine engine({&sim}, {});
  std::atomic<int> calls{0};
  JobSpec spec = job_of(3, 21);
  spec.on_partition = [&](uint64_t, std::size_t, const PartitionResult& r) {
    EXPECT_EQ(r.status, JobStatus::ok);
    calls.fetch_add(1);
  };
  const JobResult r = engine.submit(std::move(spec)).wait();
  EXPECT_EQ(calls.load(), 3);
  expect_cpu_equal_and_valid(r, 3, 21);
}

TEST(Engine, CancelStopsAJobAndLeavesTheOthers) {
  SimConfig sc = small_sim("sim0", 1, 1);
  sc.latency.h_us = 5000;
  SimBackend sim(sc);
  EngineConfig ec;
  ec.gw = 1;
  Engine engine({&sim}, ec);
  JobHandle a = engine.submit(job_of(2, 1));
  JobHandle b = engine.submit(job_of(4, 2));
  JobHandle c = engine.submit(job_of(2, 3));
  EXPECT_TRUE(engine.cancel(b.id()));
  const JobResult rb = b.wait();
  EXPECT_EQ(rb.status, JobStatus::cancelled);
  EXPECT_TRUE(rb.proofs.empty());
  expect_cpu_equal_and_valid(a.wait(), 2, 1);
  expect_cpu_equal_and_valid(c.wait(), 2, 3);
  EXPECT_FALSE(engine.cancel(b.id()));  // already ended
  EXPECT_FALSE(engine.cancel(12345));
}

TEST(Engine, DrainFinishesEverythingSubmitted) {
  SimConfig sc = small_sim();
  sc.latency.msm_us = 500;
  SimBackend sim(sc);
  Engine engine({&sim}, {});
  std::vector<JobHandle> jobs;
  for (uint64_t s = 0; s < 6; ++s) jobs.push_back(engine.submit(job_of(1 + s % 4, 100 + s)));
  engine.shutdown(Shutdown::drain);
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    ASSERT_TRUE(jobs[j].done());
    expect_cpu_equal_and_valid(jobs[j].wait(), 1 + j % 4, 100 + j);
  }
  EXPECT_THROW(engine.submit(job_of(1, 1)), std::logic_error);
}

TEST(Engine, ShutdownCancelEndsEveryJob) {
  SimConfig sc = small_sim("sim0", 1, 1);
  sc.latency.h_us = 3000;
  SimBackend sim(sc);
  Engine engine({&sim}, {});
  std::vector<JobHandle> jobs;
  for (uint64_t s = 0; s < 8; ++s) jobs.push_back(engine.submit(job_of(4, s)));
  engine.shutdown(Shutdown::cancel);
  int cancelled = 0;
  for (auto& j : jobs) {
    ASSERT_TRUE(j.done());
    const JobResult r = j.wait();
    EXPECT_NE(r.status, JobStatus::failed) << r.error;
    cancelled += r.status == JobStatus::cancelled;
  }
  EXPECT_GT(cancelled, 0);
  expect_arena_sound(sim);
}

// A failed compute() queues its slot releases behind its own upload, and nothing waits for them:
// right after the throw the arena still holds the slots (what made the stress test's leak check
// flaky); synchronize() waits for the queues, after which nothing is held.
TEST(SimBackendTest, AFailedComputeReleasesItsSlotsInQueueOrderAndSynchronizeWaitsForThem) {
  SimConfig sc = small_sim("sim0", 1, 1);
  sc.latency.stage_us = 50000;  // the upload is still running when compute() fails
  sc.faults.compute = 1.0;
  SimBackend sim(sc);
  PartitionTask task;
  task.key = circuit().key;
  task.witness = circuit().first(1)[0].get();
  task.partitions = 1;
  auto prep = sim.prepare(task);
  sim.stage(*prep, 0, 0);
  EXPECT_THROW(sim.compute(*prep), BackendError);
  const uint64_t idle = sc.shared_bytes + sc.compute_bytes;
  sim.synchronize();
  EXPECT_EQ(sim.arena().in_use, idle);
  EXPECT_EQ(sim.arena().violations, 0u);
}

TEST(Engine, RetryableFaultsAreRetriedThenFallBackToTheCpu) {
  SimConfig sc = small_sim();
  sc.faults.compute = 1.0;  // every attempt fails
  sc.faults.retryable_fraction = 1.0;
  SimBackend sim(sc);
  EngineConfig ec;
  ec.max_retries = 2;
  Engine engine({&sim}, ec);
  const JobResult r = engine.submit(job_of(2, 31)).wait();
  expect_cpu_equal_and_valid(r, 2, 31);
  for (const auto& p : r.partitions) {
    EXPECT_EQ(p.where, "cpu");
    EXPECT_EQ(p.attempts, 3);
  }
  engine.shutdown(Shutdown::drain);
  EXPECT_EQ(engine.stats().cpu_fallbacks, 2u);
  EXPECT_EQ(engine.stats().backends[0].retries, 4u);
  expect_arena_sound(sim);
}

TEST(Engine, TransientFaultsAreRetriedOnTheDevice) {
  SimConfig sc = small_sim();
  sc.faults.stage = 0.3;
  sc.faults.finish = 0.3;
  sc.faults.retryable_fraction = 1.0;
  sc.faults.seed = 99;
  SimBackend sim(sc);
  EngineConfig ec;
  ec.max_retries = 50;  // a retryable fault never reaches the fallback here
  ec.fallback = Fallback::fail_job;
  Engine engine({&sim}, ec);
  for (uint64_t s = 0; s < 4; ++s) expect_cpu_equal_and_valid(engine.submit(job_of(4, 40 + s)).wait(), 4, 40 + s);
  EXPECT_GT(sim.faults_injected(), 0u);
  EXPECT_EQ(engine.stats().cpu_fallbacks, 0u);
}

TEST(Engine, NonRetryableFaultFailsTheJobUnderFailJob) {
  SimConfig sc = small_sim();
  sc.faults.finish = 1.0;
  sc.faults.retryable_fraction = 0.0;
  SimBackend sim(sc);
  EngineConfig ec;
  ec.fallback = Fallback::fail_job;
  Engine engine({&sim}, ec);
  const JobResult r = engine.submit(job_of(3, 50)).wait();
  EXPECT_EQ(r.status, JobStatus::failed);
  EXPECT_NE(r.error.find("injected finish fault"), std::string::npos) << r.error;
  for (const auto& p : r.partitions) EXPECT_LE(p.attempts, 1);
  // The engine is still usable afterwards.
  engine.shutdown(Shutdown::drain);
  expect_arena_sound(sim);
}

TEST(Engine, UnhealthyDeviceSendsWorkToTheCpu) {
  SimConfig sc = small_sim();
  sc.faults.stage = 1.0;
  sc.faults.device_lost = 1.0;
  SimBackend sim(sc);
  EngineConfig ec;
  ec.gw = 1;
  Engine engine({&sim}, ec);
  for (uint64_t s = 0; s < 3; ++s) expect_cpu_equal_and_valid(engine.submit(job_of(2, 60 + s)).wait(), 2, 60 + s);
  EXPECT_FALSE(sim.healthy());
  EXPECT_EQ(sim.faults_injected(), 1u);  // only the first attempt reached the device
}

// One of three devices is lost partway through a run (the test hook that PROOFPIPE_TEST_LOSE_GPU
// puts on a GPU): the partitions it held, and the jobs pinned to it, are proved again on the
// other devices, never on the CPU, and no job fails even without a CPU fallback.
TEST(Engine, ALostDeviceHandsItsPartitionsToTheOthers) {
  for (const Fallback fallback : {Fallback::cpu, Fallback::fail_job}) {
    std::vector<std::unique_ptr<SimBackend>> sims;
    for (int d = 0; d < 3; ++d) {
      SimConfig sc = small_sim("sim" + std::to_string(d), 1, 1);
      sc.latency.h_us = 1000;
      sims.push_back(std::make_unique<SimBackend>(sc));
    }
    auto loss = std::make_shared<DeviceLoss>(3);  // sim1's third prepare() loses it
    LosingBackend losing(*sims[1], loss);
    EngineConfig ec;
    ec.gw = 2;
    ec.fallback = fallback;
    Engine engine({sims[0].get(), &losing, sims[2].get()}, ec);
    std::vector<JobHandle> jobs;
    for (uint64_t s = 0; s < 6; ++s) {
      JobSpec spec = job_of(2, 200 + s);
      if (s % 2 == 1) spec.backend = 1;  // pinned to the device that will be lost
      jobs.push_back(engine.submit(std::move(spec)));
    }
    std::map<std::string, int> where;
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      const std::optional<JobResult> ended = jobs[j].wait_for(std::chrono::seconds(60));
      ASSERT_TRUE(ended) << "job " << j << " never ended (a pinned partition waiting for a lost device?)\n"
                         << engine.describe_state();
      const JobResult& r = *ended;
      expect_cpu_equal_and_valid(r, 2, 200 + j);
      for (const PartitionResult& p : r.partitions) ++where[p.where];
    }
    EXPECT_TRUE(loss->lost.load());
    EXPECT_FALSE(losing.healthy());
    EXPECT_EQ(where.count("cpu"), 0u) << "a lost device's partitions belong on the healthy devices";
    EXPECT_LE(where["sim1"], 2) << "only the two partitions prepared before the loss can end on sim1";
    const EngineStats st = engine.stats();
    EXPECT_EQ(st.cpu_fallbacks, 0u);
    EXPECT_GE(st.backends[1].handed_off, 1u);
    EXPECT_EQ(st.backends[0].handed_off + st.backends[2].handed_off, 0u);
    engine.shutdown(Shutdown::drain);
    for (const auto& sim : sims) expect_arena_sound(*sim);
  }
}

// When every device is lost, their workers still prove what is queued on the CPU.
TEST(Engine, WhenEveryDeviceIsLostTheCpuProves) {
  std::vector<std::unique_ptr<SimBackend>> sims;
  std::vector<std::unique_ptr<LosingBackend>> losing;
  std::vector<Backend*> backends;
  for (int d = 0; d < 2; ++d) {
    sims.push_back(std::make_unique<SimBackend>(small_sim("sim" + std::to_string(d), 1, 1)));
    losing.push_back(std::make_unique<LosingBackend>(*sims.back(), std::make_shared<DeviceLoss>(2)));
    backends.push_back(losing.back().get());
  }
  Engine engine(backends, EngineConfig{});
  std::vector<JobHandle> jobs;
  for (uint64_t s = 0; s < 4; ++s) jobs.push_back(engine.submit(job_of(2, 300 + s)));
  for (std::size_t j = 0; j < jobs.size(); ++j) expect_cpu_equal_and_valid(jobs[j].wait(), 2, 300 + j);
  for (const auto& l : losing) EXPECT_FALSE(l->healthy());
  EXPECT_GE(engine.stats().cpu_fallbacks, 1u);
  engine.shutdown(Shutdown::drain);
  for (const auto& sim : sims) expect_arena_sound(*sim);
}

TEST(Engine, HostBudgetIsNeverExceededAndJobsWait) {
  SimConfig sc = small_sim();
  sc.latency.h_us = 1000;
  SimBackend sim(sc);
  const uint64_t one = witness_bytes((*circuit().witnesses)[0]);
  EngineConfig ec;
  ec.gw = 4;
  ec.host_mem_bytes = one + one / 2;  // room for one partition at a time
  Engine engine({&sim}, ec);
  std::vector<JobHandle> jobs;
  for (uint64_t s = 0; s < 3; ++s) jobs.push_back(engine.submit(job_of(4, 70 + s)));
  for (std::size_t j = 0; j < jobs.size(); ++j) expect_cpu_equal_and_valid(jobs[j].wait(), 4, 70 + j);
  const EngineStats st = engine.stats();
  EXPECT_EQ(st.host_peak_bytes, one);
  // A partition larger than the whole budget fails with a clear error instead of waiting forever.
  EngineConfig tiny;
  tiny.host_mem_bytes = one / 2;
  SimBackend sim2(small_sim("sim1"));
  Engine e2({&sim2}, tiny);
  const JobResult r = e2.submit(job_of(1, 1)).wait();
  EXPECT_EQ(r.status, JobStatus::failed);
  EXPECT_NE(r.error.find("above the whole budget"), std::string::npos) << r.error;
}

// Holdings (a GPU prover's pinned buffers, a streamed key's host copy) are charged at once and
// shrink the room partitions have: with one partition's room left, partitions run one at a time;
// a holding that alone would pass the budget is refused; a partition that can never fit beside
// the holdings fails with a clear error instead of waiting forever; and released holdings give
// the room back.
TEST(Engine, HostBudgetHoldingsShrinkThePartitionsRoom) {
  const uint64_t one = witness_bytes((*circuit().witnesses)[0]);
  auto budget = std::make_shared<HostBudget>(4 * one);
  budget->hold(2 * one + one / 2, "a test holding");
  EXPECT_EQ(budget->held(), 2 * one + one / 2);
  EXPECT_THROW(budget->hold(2 * one, "a second holding"), HostBudgetError);  // 4.5 > 4: refused, nothing charged
  EXPECT_EQ(budget->held(), 2 * one + one / 2);
  {
    SimConfig sc = small_sim();
    sc.latency.h_us = 1000;
    SimBackend sim(sc);
    EngineConfig ec;
    ec.gw = 4;
    ec.shared_host_budget = budget;  // room for one partition beside the holding
    Engine engine({&sim}, ec);
    const JobResult r = engine.submit(job_of(3, 90)).wait();
    expect_cpu_equal_and_valid(r, 3, 90);
    const EngineStats st = engine.stats();
    EXPECT_EQ(st.host_peak_bytes, 2 * one + one / 2 + one);  // never two partitions at once
    EXPECT_EQ(st.host_held_bytes, 2 * one + one / 2);
  }
  budget->hold(one, "a second holding");  // 3.5 of 4: a partition never fits beside it
  {
    SimBackend sim(small_sim("sim1"));
    EngineConfig ec;
    ec.shared_host_budget = budget;
    Engine engine({&sim}, ec);
    const JobResult r = engine.submit(job_of(1, 91)).wait();
    EXPECT_EQ(r.status, JobStatus::failed);
    EXPECT_NE(r.error.find("held for proving"), std::string::npos) << r.error;
    EXPECT_THROW(std::rethrow_exception(r.partitions.at(0).exception), HostBudgetError);
    budget->unhold(one);  // the room comes back
    expect_cpu_equal_and_valid(engine.submit(job_of(1, 92)).wait(), 1, 92);
  }
  budget->unhold(2 * one + one / 2);
  EXPECT_EQ(budget->held(), 0u);
}

// Witness sources: each witness is made once its partition is admitted and released when the
// partition ends, so the host budget bounds how many exist at once (here one: the budget holds one
// and a half); the proofs are the CPU prover's. A source that throws fails its partition with its
// message; a job giving both witnesses and sources, or a source that makes nothing, is refused.
TEST(Engine, WitnessSourcesAreMadeOnAdmissionInsideTheBudget) {
  const uint64_t one = witness_bytes((*circuit().witnesses)[0]);
  std::atomic<int> alive{0}, most{0}, made{0};
  auto source_of = [&](std::size_t p) {
    WitnessSource s;
    s.bytes = one;
    s.make = [&, p] {
      made.fetch_add(1);
      const int now = alive.fetch_add(1) + 1;
      for (int m = most.load(); now > m && !most.compare_exchange_weak(m, now);) {
      }
      const Witness& w = (*circuit().witnesses)[p];
      return std::shared_ptr<const Witness>(new Witness(w), [&](const Witness* x) {
        alive.fetch_sub(1);
        delete x;
      });
    };
    return s;
  };
  SimConfig sc = small_sim();
  sc.latency.h_us = 1000;
  SimBackend sim(sc);
  EngineConfig ec;
  ec.gw = 4;
  ec.host_mem_bytes = one + one / 2;
  Engine engine({&sim}, ec);
  JobSpec spec;
  spec.key = circuit().key;
  spec.seed = 93;
  for (std::size_t p = 0; p < 4; ++p) spec.sources.push_back(source_of(p));
  expect_cpu_equal_and_valid(engine.submit(spec).wait(), 4, 93);
  EXPECT_EQ(made.load(), 4);
  EXPECT_EQ(most.load(), 1);   // never two witnesses at once
  EXPECT_EQ(alive.load(), 0);  // each released with its partition
  EXPECT_EQ(engine.stats().host_peak_bytes, one);

  JobSpec bad = spec;
  bad.sources[2].make = []() -> std::shared_ptr<const Witness> { throw std::runtime_error("witness file unreadable"); };
  const JobResult r = engine.submit(bad).wait();
  EXPECT_EQ(r.status, JobStatus::failed);
  EXPECT_NE(r.error.find("witness file unreadable"), std::string::npos) << r.error;
  EXPECT_EQ(r.partitions.at(2).status, JobStatus::failed);

  JobSpec both = spec;
  both.witnesses = circuit().first(4);
  EXPECT_THROW(engine.submit(both), std::invalid_argument);
  JobSpec empty_maker = spec;
  empty_maker.sources[0].make = nullptr;
  EXPECT_THROW(engine.submit(empty_maker), std::invalid_argument);
}

TEST(Engine, SeveralDevicesShareOneQueue) {
  std::vector<std::unique_ptr<SimBackend>> sims;
  std::vector<Backend*> backends;
  for (int d = 0; d < 3; ++d) {
    SimConfig sc = small_sim("sim" + std::to_string(d), 1, 1);
    sc.latency.h_us = 2000;
    sims.push_back(std::make_unique<SimBackend>(sc));
    backends.push_back(sims.back().get());
  }
  EngineConfig ec;
  ec.gw = 1;
  Engine engine(backends, ec);
  std::vector<JobHandle> jobs;
  for (uint64_t s = 0; s < 9; ++s) jobs.push_back(engine.submit(job_of(1, 80 + s)));  // single-partition jobs
  std::set<std::string> where;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const JobResult r = jobs[j].wait();
    expect_cpu_equal_and_valid(r, 1, 80 + j);
    where.insert(r.partitions[0].where);
  }
  EXPECT_EQ(where.size(), 3u) << "single-partition jobs should spread over every device";
  for (const auto& s : sims) expect_arena_sound(*s);
}

// A job pinned to a backend runs only there, while unpinned jobs still spread; a backend that is
// not the engine's is refused at submit.
TEST(Engine, PinnedJobsRunOnTheirBackendOnly) {
  std::vector<std::unique_ptr<SimBackend>> sims;
  std::vector<Backend*> backends;
  for (int d = 0; d < 3; ++d) {
    SimConfig sc = small_sim("sim" + std::to_string(d), 1, 1);
    sc.latency.h_us = 2000;
    sims.push_back(std::make_unique<SimBackend>(sc));
    backends.push_back(sims.back().get());
  }
  EngineConfig ec;
  ec.gw = 1;
  Engine engine(backends, ec);
  std::vector<JobHandle> pinned, free_jobs;
  for (uint64_t s = 0; s < 6; ++s) {
    JobSpec spec = job_of(2, 90 + s);
    spec.backend = 2;
    pinned.push_back(engine.submit(std::move(spec)));
    free_jobs.push_back(engine.submit(job_of(1, 120 + s)));
  }
  for (std::size_t j = 0; j < pinned.size(); ++j) {
    const JobResult r = pinned[j].wait();
    expect_cpu_equal_and_valid(r, 2, 90 + j);
    for (const PartitionResult& p : r.partitions) EXPECT_EQ(p.where, "sim2") << "job " << j;
  }
  std::set<std::string> where;
  for (std::size_t j = 0; j < free_jobs.size(); ++j) {
    const JobResult r = free_jobs[j].wait();
    expect_cpu_equal_and_valid(r, 1, 120 + j);
    where.insert(r.partitions[0].where);
  }
  EXPECT_TRUE(where.count("sim0") || where.count("sim1")) << "unpinned jobs should not all wait for sim2";
  for (int bad : {3, -2}) {
    JobSpec spec = job_of(1, 1);
    spec.backend = bad;
    EXPECT_THROW(engine.submit(std::move(spec)), std::invalid_argument) << bad;
  }
  for (const auto& s : sims) expect_arena_sound(*s);
}

// Structural, not timed (this also runs under TSan on a loaded machine): with one lock a
// partition's upload never runs while another's kernels do; with two tokens the next upload
// overlaps the running kernels. Device latencies are long next to the CPU work so that the
// overlap has room to happen.
TEST(Engine, TwoTokensOverlapStagingWithKernelsOneLockNever) {
  auto overlaps = [](Interlock mode) {
    SimConfig sc = small_sim("sim0", 2, 2);
    sc.latency = {0, 20000, 20000, 20000, 1000, false};  // prepare, stage, h, msm, finish (us)
    SimBackend sim(sc);
    EngineConfig ec;
    ec.gw = 3;
    ec.interlock = mode;
    Engine engine({&sim}, ec);
    std::vector<JobHandle> jobs;
    for (uint64_t s = 0; s < 2; ++s) jobs.push_back(engine.submit(job_of(3, 90 + s)));
    for (auto& j : jobs) EXPECT_EQ(j.wait().status, JobStatus::ok);
    engine.shutdown(Shutdown::drain);
    const auto iv = sim.timeline().snapshot();
    int count = 0;
    for (const auto& up : iv)
      for (const auto& k : iv)
        if (up.queue == "copy" && k.queue == "compute" && !(up.job == k.job && up.partition == k.partition) &&
            up.start < k.end && k.start < up.end)
          ++count;
    return count;
  };
  EXPECT_EQ(overlaps(Interlock::single), 0) << "one lock: staging overlapped another partition's kernels";
  EXPECT_GT(overlaps(Interlock::two), 0) << "two tokens: no upload ever overlapped kernels";
}

TEST(Engine, TraceHasEveryStageAndWritesChromeJson) {
  SimConfig sc = small_sim();
  sc.latency.h_us = 200;
  SimBackend sim(sc);
  Engine engine({&sim}, {});
  expect_cpu_equal_and_valid(engine.submit(job_of(2, 3)).wait(), 2, 3);
  engine.shutdown(Shutdown::drain);
  std::set<std::string> names;
  for (const auto& ev : engine.trace()) names.insert(ev.name);
  for (const char* n : {"prepare", "stage", "compute", "finish", "upload", "h", "msm"}) EXPECT_TRUE(names.count(n)) << n;
  const auto path = std::filesystem::temp_directory_path() / "proofpipe_engine_trace_test.json";
  engine.write_chrome_trace(path);
  {
    std::ifstream f(path);
    const auto json = nlohmann::json::parse(f);
    bool named = false;
    std::size_t stages = 0;
    for (const auto& ev : json.at("traceEvents")) {
      if (ev.at("name") == "process_name" && ev.at("args").at("name") == "sim0") named = true;
      if (ev.at("ph") == "X") ++stages;
    }
    EXPECT_TRUE(named) << "the backend's name labels its process";
    EXPECT_EQ(stages, engine.trace().size());
  }
  std::filesystem::remove(path);
  // The timeline: data and a gnuplot script whose lanes carry the backend's name.
  const auto png = std::filesystem::temp_directory_path() / "proofpipe_engine_timeline_test.png";
  const auto script = engine.write_timeline_script(png);
  std::ifstream gp(script);
  const std::string text((std::istreambuf_iterator<char>(gp)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("'sim0 worker 0'"), std::string::npos) << text;
  EXPECT_NE(text.find("'sim0 device compute'"), std::string::npos) << text;
  EXPECT_NE(text.find("interlock two"), std::string::npos) << text;
  for (const char* suffix : {".dat", ".gp"}) std::filesystem::remove(png.string() + suffix);
}

TEST(Engine, RejectsBadConfigurations) {
  SimBackend sim(small_sim());
  EngineConfig ec;
  ec.gw = 0;
  EXPECT_THROW(Engine({&sim}, ec), std::invalid_argument);
  EXPECT_THROW(Engine({}, EngineConfig{}), std::invalid_argument);
  SimConfig over = small_sim();
  over.arena_capacity -= 1;
  EXPECT_THROW(SimBackend{over}, std::invalid_argument);
  Engine engine({&sim}, {});
  JobSpec empty;
  EXPECT_THROW(engine.submit(empty), std::invalid_argument);
  JobSpec hole = job_of(2, 1);
  hole.witnesses[1].reset();
  EXPECT_THROW(engine.submit(hole), std::invalid_argument);
}

// One witness may serve several partitions without a copy: each partition's proof is still the
// CPU prover's for that partition's r, s.
TEST(Engine, OneWitnessServesSeveralPartitions) {
  SimBackend sim(small_sim());
  Engine engine({&sim}, {});
  JobSpec spec = job_of(1, 21);
  spec.witnesses = {spec.witnesses[0], spec.witnesses[0], spec.witnesses[0]};
  const JobResult r = engine.submit(spec).wait();
  engine.shutdown(Shutdown::drain);
  ASSERT_EQ(r.status, JobStatus::ok) << r.error;
  const std::vector<Witness> same(3, (*circuit().witnesses)[0]);
  const std::vector<Proof> want = prove(*circuit().key, same, 21);
  ASSERT_EQ(r.proofs.size(), 3u);
  for (std::size_t p = 0; p < 3; ++p) EXPECT_TRUE(same_proof(r.proofs[p], want[p])) << p;
}

// ---- one engine behind every entry point: explicit r, s, partition numbering, kept errors,
// the CPU backend, slot domains ----

TEST(EngineEntry, ExplicitRandomizersAndPartitionBaseGiveTheSeededProofs) {
  CpuBackend cpu("cpu", 1);
  EngineConfig ec;
  ec.gw = 1;
  Engine engine({&cpu}, ec);
  const auto& c = circuit();
  const std::vector<Randomizers> rs = randomizers_from_seed(9, 4);
  const std::vector<Proof> want = prove(*c.key, *c.witnesses, 9);
  // Partition 2 alone, as the C API submits it: explicit r, s, numbered 2.
  JobSpec one;
  one.key = c.key;
  one.witnesses = {c.first(3)[2]};
  one.randomizers = {rs[2]};
  one.partition_base = 2;
  const JobResult r = engine.submit(one).wait();
  ASSERT_EQ(r.status, JobStatus::ok) << r.error;
  EXPECT_TRUE(same_proof(r.proofs[0], want[2]));
  // A randomiser count that does not match the witnesses is refused at submit.
  one.randomizers = rs;
  EXPECT_THROW(engine.submit(one), std::invalid_argument);
  EXPECT_EQ(cpu.partitions(), 1u);
  EXPECT_GT(cpu.totals().msm_h + cpu.totals().ntt, 0.0);
}

TEST(EngineEntry, AFailedPartitionKeepsItsExceptionAndNumber) {
  CpuBackend cpu("cpu", 1);
  EngineConfig ec;
  ec.gw = 1;
  ec.fallback = Fallback::fail_job;
  Engine engine({&cpu}, ec);
  auto bad = std::make_shared<Witness>((*circuit().witnesses)[0]);
  bad->c.at_mut(3) += Fr::one();  // a·b != c at constraint 3
  JobSpec spec;
  spec.key = circuit().key;
  spec.witnesses = {bad};
  spec.partition_base = 5;
  const JobResult r = engine.submit(spec).wait();
  ASSERT_EQ(r.status, JobStatus::failed);
  ASSERT_TRUE(r.partitions[0].exception);
  try {
    std::rethrow_exception(r.partitions[0].exception);
    FAIL() << "no exception";
  } catch (const WitnessError& e) {
    EXPECT_NE(std::string(e.what()).find("partition 5"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("constraint 3"), std::string::npos) << e.what();
  }
}

namespace {

// A backend with one slot domain per key (as the CUDA backend has one arena per resident key):
// it records the slots each domain has in use and fails the test if a slot is handed out twice
// within a domain, while domains may overlap.
class DomainBackend final : public Backend {
 public:
  std::string name() const override { return "domains"; }
  int stage_slots() const override { return 1; }
  int msm_slots() const override { return 1; }
  struct P : Prepared {
    PartitionTask task;
    uint64_t domain = 0;
    int stage = -1, msm = -1;
  };
  std::unique_ptr<Prepared> prepare(const PartitionTask& t) override {
    auto p = std::make_unique<P>();
    p->task = t;
    p->domain = t.key.get() == first_key ? 1 : 2;
    return p;
  }
  SlotDomain slot_domain(const Prepared& p) const override {
    const uint64_t d = static_cast<const P&>(p).domain;
    return {d, 1, d == 1 ? 1 : 2};  // domain 1: one msm slot; domain 2: two
  }
  void stage(Prepared& p, int stage_slot, int msm_slot) override {
    P& q = static_cast<P&>(p);
    std::lock_guard lock(mu);
    auto& used = in_use[q.domain];
    if (!used.insert(msm_slot).second) ++double_use;
    if (msm_slot >= (q.domain == 1 ? 1 : 2) || stage_slot != 0) ++out_of_range;
    q.stage = stage_slot;
    q.msm = msm_slot;
    ++live;
    max_live = std::max(max_live, live);
  }
  void compute(Prepared&) override {}
  Proof finish(Prepared& p) override {
    P& q = static_cast<P&>(p);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    std::lock_guard lock(mu);
    in_use[q.domain].erase(q.msm);
    --live;
    return cpu_prove_task(q.task);
  }
  DeviceCalls& device_calls() override { return calls; }
  DeviceTimeline& timeline() override { return tl; }

  const ProvingKey* first_key = nullptr;
  std::mutex mu;
  std::map<uint64_t, std::set<int>> in_use;
  int double_use = 0, out_of_range = 0, live = 0, max_live = 0;
  DeviceCalls calls;
  DeviceTimeline tl;
};

}  // namespace

TEST(EngineEntry, SlotDomainsArePerKeyAndNeverOverlapWithin) {
  DomainBackend dev;
  static const EngineCircuit other(4, 2, 12);  // a second key
  dev.first_key = circuit().key.get();
  EngineConfig ec;
  ec.gw = 4;
  Engine engine({&dev}, ec);
  std::vector<JobHandle> jobs;
  for (int i = 0; i < 3; ++i) {
    jobs.push_back(engine.submit(job_of(4, 20 + uint64_t(i))));
    JobSpec s;
    s.key = other.key;
    s.witnesses = other.first(2);
    s.seed = 30 + uint64_t(i);
    jobs.push_back(engine.submit(s));
  }
  for (auto& j : jobs) {
    const JobResult r = j.wait();
    EXPECT_EQ(r.status, JobStatus::ok) << r.error;
  }
  EXPECT_EQ(dev.double_use, 0);
  EXPECT_EQ(dev.out_of_range, 0);
  // One slot in domain 1 plus two in domain 2: at most three partitions between stage and finish,
  // and more than one (the domains are separate pools: one shared pool of the backend's nominal
  // single slot would allow one).
  EXPECT_LE(dev.max_live, 3);
  EXPECT_GE(dev.max_live, 2);
  const std::string state = engine.describe_state();
  EXPECT_NE(state.find("slot domain 1"), std::string::npos) << state;
  EXPECT_NE(state.find("slot domain 2"), std::string::npos) << state;
}

// ---- honest counters: a forbidden runtime call inside a phase is seen ----

TEST(DeviceCallCounting, CountsOnlyInsideAScopeAndRestoresTheOuterOne) {
  DeviceCalls outer, inner;
  count_call(DeviceCall::malloc);  // no scope: start-up, not counted anywhere
  {
    CallScope a(&outer);
    count_call(DeviceCall::memcpy_async);
    {
      CallScope b(&inner);
      count_call(DeviceCall::device_synchronize);
    }
    count_call(DeviceCall::free);
  }
  count_call(DeviceCall::free);
  EXPECT_EQ(outer.calls(DeviceCall::memcpy_async), 1u);
  EXPECT_EQ(outer.calls(DeviceCall::free), 1u);
  EXPECT_EQ(outer.forbidden(), 1u);
  EXPECT_EQ(inner.forbidden(), 1u);
  EXPECT_EQ(inner.calls(DeviceCall::device_synchronize), 1u);
  EXPECT_EQ(current_calls(), nullptr);
}

namespace {
// A device that synchronises the whole device in compute(), as the anchors' did: the engine's
// forbidden-call count must report it (the check can fail).
class SyncingBackend final : public Backend {
 public:
  std::string name() const override { return "syncing"; }
  int stage_slots() const override { return 1; }
  int msm_slots() const override { return 1; }
  struct P : Prepared {
    PartitionTask task;
  };
  std::unique_ptr<Prepared> prepare(const PartitionTask& t) override {
    auto p = std::make_unique<P>();
    p->task = t;
    return p;
  }
  void stage(Prepared&, int, int) override {
    CallScope scope(&calls);
    count_call(DeviceCall::memcpy_async);
  }
  void compute(Prepared&) override {
    CallScope scope(&calls);
    count_call(DeviceCall::kernel_launch);
    count_call(DeviceCall::device_synchronize);  // the deliberate bad call
  }
  Proof finish(Prepared& p) override { return cpu_prove_task(static_cast<P&>(p).task); }
  DeviceCalls& device_calls() override { return calls; }
  DeviceTimeline& timeline() override { return tl; }
  DeviceCalls calls;
  DeviceTimeline tl;
};
}  // namespace

// The simulated device's forbidden calls reach the engine's stats, so the tests that assert none
// (the pipeline tests above, the stress test) would fail if the backend made one.
TEST(DeviceCallCounting, TheSimulatedDevicesForbiddenCallsAreReported) {
  SimConfig sc = small_sim();
  sc.faults.forbidden = 0.5;
  sc.faults.seed = 4;
  SimBackend sim(sc);
  EngineConfig ec;
  ec.gw = 2;
  Engine engine({&sim}, ec);
  for (uint64_t seed : {5u, 6u, 7u}) ASSERT_EQ(engine.submit(job_of(4, seed)).wait().status, JobStatus::ok);
  engine.shutdown(Shutdown::drain);
  ASSERT_GT(sim.forbidden_made(), 0u);
  EXPECT_EQ(engine.stats().backends[0].forbidden_calls, sim.forbidden_made()) << engine.stats().backends[0].device_calls;
}

TEST(DeviceCallCounting, TheEngineReportsAForbiddenCallOfItsSteadyState) {
  SyncingBackend dev;
  EngineConfig ec;
  ec.gw = 1;
  Engine engine({&dev}, ec);
  ASSERT_EQ(engine.submit(job_of(2, 3)).wait().status, JobStatus::ok);
  const EngineStats st = engine.stats();
  EXPECT_EQ(st.backends[0].forbidden_calls, 2u) << st.backends[0].device_calls;
  EXPECT_NE(st.backends[0].device_calls.find("device_synchronize=2"), std::string::npos) << st.backends[0].device_calls;
}

// ---- the check before release (EngineConfig::check_proofs) ----

namespace {

// Sanitizer builds run the same test on fewer partitions (each check is a pairing).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr std::size_t kCheckJobs = 50;
#else
constexpr std::size_t kCheckJobs = 260;  // x 4 partitions: over 1,000
#endif

struct CheckRun {
  std::size_t partitions = 0, wrong = 0, failed = 0, rejected_calls = 0;
  uint64_t corrupted = 0;
  EngineStats stats;
  std::set<std::string> where;
};

// `jobs` jobs of 4 partitions on `corrupt.size()` simulated devices whose results come back
// corrupted with the given probabilities; every returned proof compared with the CPU prover's.
CheckRun run_with_corruption(bool check, std::size_t jobs, const std::vector<double>& corrupt) {
  static const pp::test::ProofCache cache(circuit(), {201, 202, 203, 204, 205});
  std::vector<std::unique_ptr<SimBackend>> sims;
  std::vector<Backend*> backends;
  for (std::size_t d = 0; d < corrupt.size(); ++d) {
    SimConfig sc = small_sim("sim" + std::to_string(d));
    sc.kernel = [](const PartitionTask& t) { return cache.kernel(t); };
    sc.faults.corrupt = corrupt[d];
    sc.faults.seed = 7 + d;
    sims.push_back(std::make_unique<SimBackend>(sc));
    backends.push_back(sims.back().get());
  }
  CheckRun r;
  std::mutex mu;
  EngineConfig ec;
  ec.gw = 2;
  ec.check_proofs = check;
  ec.cpu_prover = [](const PartitionTask& t) { return cache.kernel(t); };
  ec.on_rejected = [&](const std::string&, uint64_t, std::size_t) {
    std::lock_guard lock(mu);
    ++r.rejected_calls;
  };
  {
    Engine engine(backends, ec);
    std::vector<std::pair<JobHandle, uint64_t>> handles;
    for (std::size_t j = 0; j < jobs; ++j) {
      const uint64_t seed = 201 + j % 5;
      handles.emplace_back(engine.submit(job_of(4, seed)), seed);
    }
    for (auto& [h, seed] : handles) {
      const JobResult res = h.wait();
      r.partitions += 4;
      if (res.status != JobStatus::ok) {
        r.failed += 4;
        continue;
      }
      for (std::size_t p = 0; p < 4; ++p) {
        if (!same_proof(res.proofs[p], cache.lookup(seed, p))) ++r.wrong;
        r.where.insert(res.partitions[p].where);
      }
    }
    r.stats = engine.stats();
  }
  for (const auto& s : sims) r.corrupted += s->results_corrupted();
  return r;
}

}  // namespace

// A corrupted result is rejected by the check, proved again (on the other device) and never
// returned: every proof the engine hands back is the CPU prover's.
TEST(EngineCheck, CorruptedResultsAreCaughtProvedAgainAndNeverReturned) {
  const CheckRun r = run_with_corruption(true, kCheckJobs, {0.03, 0.03});
  std::printf("proofpipe op=fault-injection backend=sim partitions=%zu corrupted=%llu retried=%llu returned_wrong=%zu\n",
              r.partitions, static_cast<unsigned long long>(r.corrupted),
              static_cast<unsigned long long>(r.stats.proofs_rejected), r.wrong);
  EXPECT_GE(r.partitions, kCheckJobs * 4);
  EXPECT_GE(r.corrupted * 100, r.partitions) << "at least 1 % of the results must be corrupted";
  EXPECT_EQ(r.wrong, 0u);
  EXPECT_EQ(r.failed, 0u);
  EXPECT_EQ(r.stats.proofs_rejected, r.corrupted) << "every corrupted result, and nothing else, is rejected";
  EXPECT_EQ(r.rejected_calls, r.corrupted);
  EXPECT_EQ(r.stats.proofs_checked, r.partitions + r.corrupted) << "each proof made is checked once";
  EXPECT_GT(r.stats.check_ms, 0);
}

// The test above can fail: without the check the same corruption reaches the caller.
TEST(EngineCheck, WithoutTheCheckCorruptedResultsAreReturned) {
  const CheckRun r = run_with_corruption(false, 40, {0.05, 0.05});
  EXPECT_GT(r.corrupted, 0u);
  EXPECT_EQ(r.wrong, r.corrupted);
  EXPECT_EQ(r.stats.proofs_checked, 0u);
}

// Rejected on a device: proved on the other device; with one device, once more there and then
// on the CPU.
TEST(EngineCheck, ARejectedProofGoesToAnotherDeviceElseTheSameThenTheCpu) {
  const CheckRun two = run_with_corruption(true, 6, {1.0, 0.0});
  EXPECT_EQ(two.wrong, 0u);
  EXPECT_EQ(two.failed, 0u);
  EXPECT_EQ(two.where, std::set<std::string>{"sim1"}) << "sim0's proofs are all rejected";
  const CheckRun one = run_with_corruption(true, 3, {1.0});
  EXPECT_EQ(one.wrong, 0u);
  EXPECT_EQ(one.failed, 0u);
  EXPECT_EQ(one.where, std::set<std::string>{"cpu"});
  EXPECT_EQ(one.stats.proofs_rejected, 2 * one.partitions) << "rejected twice on the device, then the CPU";
  EXPECT_EQ(one.stats.cpu_fallbacks, one.partitions);
}
