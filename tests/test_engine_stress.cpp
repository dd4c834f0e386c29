// SPDX-License-Identifier: Apache-2.0 OR MIT
// Randomized stress of the engine on simulated devices (run under ThreadSanitizer in CI): >= 10,000
// jobs over random gw, partitions, slots, capacities, latencies, faults, budgets and device counts,
// with a watchdog. Asserts: no deadlock, arena never over capacity, every forbidden device call reported,
// every job ends, and every proof returned equals a proof the CPU prover made and the verifier
// accepted.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <string>
#include <thread>

#include "engine_fixture.hpp"
#include "proofpipe/engine/engine.hpp"
#include "proofpipe/engine/sim_backend.hpp"

using namespace pp;
using namespace pp::engine;

namespace {

tbb::global_control g_one_thread(tbb::global_control::max_allowed_parallelism, 1);

constexpr std::size_t kMaxPartitions = 10;
const std::vector<uint64_t> kSeeds = {1, 2, 3, 4};

uint64_t env_or(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

// Fails the process with the engine's state when no partition ends for `limit`.
class Watchdog {
 public:
  explicit Watchdog(std::chrono::seconds limit) : limit_(limit), thread_([this] { run(); }) {}
  ~Watchdog() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void watch(const Engine* engine, std::string round) {
    std::lock_guard lock(mu_);
    engine_ = engine;
    round_ = std::move(round);
    last_count_ = 0;
    last_change_ = std::chrono::steady_clock::now();
  }
  void unwatch() { watch(nullptr, ""); }

 private:
  void run() {
    std::unique_lock lock(mu_);
    while (!stop_) {
      cv_.wait_for(lock, std::chrono::milliseconds(500));
      if (!engine_) continue;
      const uint64_t n = engine_->partitions_ended();
      const auto now = std::chrono::steady_clock::now();
      if (n != last_count_) {
        last_count_ = n;
        last_change_ = now;
      } else if (now - last_change_ > limit_) {
        std::fprintf(stderr, "WATCHDOG: no partition ended for %lld s in %s\n%s\n", (long long)limit_.count(),
                     round_.c_str(), engine_->describe_state().c_str());
        std::fflush(stderr);
        std::abort();
      }
    }
  }
  std::chrono::seconds limit_;
  std::mutex mu_;
  std::condition_variable cv_;
  const Engine* engine_ = nullptr;
  std::string round_;
  uint64_t last_count_ = 0;
  std::chrono::steady_clock::time_point last_change_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace

TEST(Stress, RandomizedJobsEndWithVerifiedProofsOrReportedErrors) {
  const uint64_t total_jobs = env_or("PROOFPIPE_STRESS_JOBS", 10000);
  const uint64_t seed = env_or("PROOFPIPE_STRESS_SEED", 20240607);
  std::printf("stress: %llu jobs, seed %llu (PROOFPIPE_STRESS_JOBS / PROOFPIPE_STRESS_SEED)\n",
              (unsigned long long)total_jobs, (unsigned long long)seed);
  const pp::test::EngineCircuit circuit(4, kMaxPartitions);
  const pp::test::ProofCache cache(circuit, kSeeds);
  for (uint64_t s : kSeeds)
    for (std::size_t p = 0; p < kMaxPartitions; ++p) ASSERT_TRUE(cache.verified(s, p)) << s << "/" << p;
  std::vector<std::vector<std::shared_ptr<const Witness>>> prefixes;
  for (std::size_t n = 1; n <= kMaxPartitions; ++n) prefixes.push_back(circuit.first(n));
  const uint64_t one_partition = witness_bytes((*circuit.witnesses)[0]);
  auto kernel = [&cache](const PartitionTask& t) { return cache.kernel(t); };

  std::mt19937_64 rng(seed);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  auto prob = [&](double hi) { return std::uniform_real_distribution<double>(0, hi)(rng); };

  Watchdog watchdog(std::chrono::seconds(env_or("PROOFPIPE_STRESS_WATCHDOG_S", 60)));
  uint64_t jobs_done = 0, ok_jobs = 0, failed_jobs = 0, cancelled_jobs = 0, partitions = 0, faults = 0;
  int round = 0;
  while (jobs_done < total_jobs) {
    ++round;
    // ---- a random engine ----
    const int devices = uniform(1, 3);
    std::vector<std::unique_ptr<SimBackend>> sims;
    std::vector<Backend*> backends;
    const bool slow = chance(0.3), faulty = chance(0.5);
    for (int d = 0; d < devices; ++d) {
      SimConfig c;
      c.name = "sim" + std::to_string(d);
      c.stage_slots = uniform(1, 3);
      c.msm_slots = c.stage_slots + uniform(0, 2);
      c.shared_bytes = uint64_t(uniform(0, 1000));
      c.compute_bytes = uint64_t(uniform(1, 1000));
      c.stage_slot_bytes = uint64_t(uniform(1, 5000));
      c.msm_slot_bytes = uint64_t(uniform(1, 3000));
      c.arena_capacity = c.planned_bytes() + uint64_t(uniform(0, 1)) * uint64_t(uniform(0, 500));
      if (slow) c.latency = {uniform(0, 100), uniform(0, 300), uniform(0, 300), uniform(0, 300), uniform(0, 200), false};
      if (faulty) {
        c.faults.stage = prob(0.08);
        c.faults.compute = prob(0.08);
        c.faults.finish = prob(0.08);
        c.faults.retryable_fraction = prob(1.0);
        c.faults.device_lost = chance(0.2) ? prob(0.05) : 0.0;
        // Now and then a device that makes forbidden calls: the engine must report each one.
        c.faults.forbidden = chance(0.15) ? prob(0.3) : 0.0;
        c.faults.seed = rng();
      }
      c.kernel = kernel;
      sims.push_back(std::make_unique<SimBackend>(c));
      backends.push_back(sims.back().get());
    }
    EngineConfig ec;
    ec.gw = uniform(1, 4);
    ec.interlock = chance(0.5) ? Interlock::two : Interlock::single;
    ec.host_mem_bytes = chance(0.5) ? 0 : one_partition * uint64_t(uniform(1, 12));
    ec.max_retries = uniform(0, 3);
    ec.fallback = chance(0.7) ? Fallback::cpu : Fallback::fail_job;
    ec.trace = chance(0.1);
    ec.cpu_prover = kernel;
    // The check before release on a quarter of the rounds: it is a pairing a partition, and the
    // protocol under test is the same with it (EngineCheck.* test the check itself).
    ec.check_proofs = chance(0.25);
    const bool shutdown_cancel = chance(0.15);
    const uint64_t jobs_this_round = std::min<uint64_t>(total_jobs - jobs_done, uint64_t(uniform(50, 400)));
    const std::string what = "round " + std::to_string(round) + " (devices " + std::to_string(devices) + ", gw " +
                             std::to_string(ec.gw) + ", interlock " + to_string(ec.interlock) + ")";
    SCOPED_TRACE(what);

    // ---- the jobs ----
    std::vector<std::pair<JobHandle, uint64_t>> jobs;  // handle, seed
    std::vector<bool> we_cancelled;
    {
      Engine engine(backends, ec);
      watchdog.watch(&engine, what);
      for (uint64_t j = 0; j < jobs_this_round; ++j) {
        JobSpec spec;
        spec.key = circuit.key;
        spec.witnesses = prefixes[std::size_t(uniform(1, int(kMaxPartitions))) - 1];
        spec.seed = kSeeds[std::size_t(uniform(0, int(kSeeds.size()) - 1))];
        const uint64_t job_seed = spec.seed;
        jobs.emplace_back(engine.submit(std::move(spec)), job_seed);
        we_cancelled.push_back(false);
        if (chance(0.03)) {
          const std::size_t victim = std::size_t(uniform(0, int(jobs.size()) - 1));
          engine.cancel(jobs[victim].first.id());
          we_cancelled[victim] = true;
        }
      }
      engine.shutdown(shutdown_cancel ? Shutdown::cancel : Shutdown::drain);
      watchdog.unwatch();
      const EngineStats st = engine.stats();
      EXPECT_EQ(st.jobs_done, jobs_this_round);
      // Every forbidden call a device made is reported, and none is invented (0 for most rounds).
      for (std::size_t i = 0; i < sims.size(); ++i)
        EXPECT_EQ(st.backends[i].forbidden_calls, sims[i]->forbidden_made()) << st.backends[i].name << ": "
                                                                            << st.backends[i].device_calls;
      if (ec.host_mem_bytes) {
        EXPECT_LE(st.host_peak_bytes, ec.host_mem_bytes);
      }
      // A traced round records the stages of the partitions it proved (a cancelling shutdown can
      // end every job before a worker took a partition: then there is nothing to record).
      if (ec.trace && st.partitions_ok > 0) {
        EXPECT_FALSE(engine.trace().empty());
      }
    }

    // ---- every job ended; every proof is a verified one ----
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      auto& [handle, job_seed] = jobs[j];
      ASSERT_TRUE(handle.done()) << "job " << handle.id() << " did not end";
      const JobResult r = handle.wait();
      switch (r.status) {
        case JobStatus::ok:
          ++ok_jobs;
          ASSERT_EQ(r.proofs.size(), r.partitions.size());
          for (std::size_t p = 0; p < r.proofs.size(); ++p) {
            ASSERT_TRUE(pp::test::same_proof(r.proofs[p], cache.lookup(job_seed, p))) << "job " << r.id << " p " << p;
            ASSERT_TRUE(cache.verified(job_seed, p));
          }
          break;
        case JobStatus::failed:
          ++failed_jobs;
          EXPECT_EQ(ec.fallback, Fallback::fail_job) << "with the CPU fallback nothing may fail: " << r.error;
          EXPECT_FALSE(r.error.empty());
          break;
        case JobStatus::cancelled:
          ++cancelled_jobs;
          EXPECT_TRUE(we_cancelled[j] || shutdown_cancel) << "job " << r.id << " cancelled by nobody";
          break;
        case JobStatus::pending: FAIL() << "job " << r.id << " still pending after shutdown";
      }
      partitions += r.partitions.size();
    }
    for (const auto& s : sims) {
      s->synchronize();  // the slot releases of failed computes may still be queued
      const SimArenaStats a = s->arena();
      EXPECT_EQ(a.violations, 0u) << s->name() << ": " << a.first_violation;
      EXPECT_LE(a.peak, a.capacity);
      EXPECT_EQ(a.in_use, s->config().shared_bytes + s->config().compute_bytes) << s->name() << " leaked slots";
      faults += s->faults_injected();
    }
    jobs_done += jobs_this_round;
    if (::testing::Test::HasFailure()) break;
  }
  std::printf("stress: %d rounds, %llu jobs (%llu ok, %llu failed, %llu cancelled), %llu partitions, %llu faults\n",
              round, (unsigned long long)jobs_done, (unsigned long long)ok_jobs, (unsigned long long)failed_jobs,
              (unsigned long long)cancelled_jobs, (unsigned long long)partitions, (unsigned long long)faults);
  EXPECT_GT(ok_jobs, jobs_done / 2);
  EXPECT_GT(faults, 0u);
}
