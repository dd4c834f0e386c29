// SPDX-License-Identifier: Apache-2.0 OR MIT
// A simulated proving device for the engine: CPU kernels, one compute and one copy queue, an arena
// whose occupancy is tracked on the device timeline, configurable latencies and injected faults.
//
// The proof itself is computed on the CPU in prepare() by a ProofKernel (by default the CPU
// prover's prove_partition, so proofs are real and verifiable); the device phases then cost the
// configured latencies on two in-order queues, each a thread that runs enqueued work with events:
//   copy queue     per partition: wait until the previous users of its stage and msm slots have
//                  released them, occupy both slots (arena bytes counted from here), upload
//                  (stage_us), fire "staged".
//   compute queue  per partition: wait "staged", H step (h_us), release the stage slot and fire
//                  its event (arena bytes uncounted here), MSMs (msm_us), fire "done".
//   finish()       host: wait "done" (this partition only), tail + assembly (finish_us), release
//                  the msm slot.
// The arena check is the point: bytes in use (shared + compute + occupied slots) are tracked as
// the queues execute, the peak is recorded, and any moment above capacity or any slot occupied
// twice is counted as a violation (tests assert there are none).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "proofpipe/engine/backend.hpp"
#include "proofpipe/engine/cpu_backend.hpp"
#include "proofpipe/engine/plan.hpp"

namespace pp::engine {

// Computes the proof of one partition (on the CPU, in prepare()).
using ProofKernel = std::function<Proof(const PartitionTask&)>;

struct SimLatency {
  int64_t prepare_us = 0;  // CPU classification on top of the kernel
  int64_t stage_us = 0;    // upload on the copy queue
  int64_t h_us = 0;        // NTTs + H MSM on the compute queue (stage slot busy)
  int64_t msm_us = 0;      // the other MSMs on the compute queue (stage slot already free)
  int64_t finish_us = 0;   // host: B_G2 tail + assembly after the device is done
  bool spin = false;       // busy-wait instead of sleeping (more precise, burns a core)
};

// Each phase fails with its probability; a failure is retryable with probability
// retryable_fraction. device_lost makes the backend unhealthy for good after a fault.
struct SimFaults {
  double stage = 0, compute = 0, finish = 0;
  double retryable_fraction = 0.5;
  double device_lost = 0;  // probability that a fault also marks the device unhealthy
  // Probability that a partition's result comes back corrupted, silently: finish() returns a
  // proof whose C is negated (valid points, a wrong proof), as a flipped bit in device memory
  // would. Only the engine's check (EngineConfig::check_proofs) can catch it.
  double corrupt = 0;
  // Probability that a partition's finish() also makes a forbidden runtime call (a
  // cudaDeviceSynchronize, as the anchors' provers do), so that tests asserting the engine's
  // forbidden-call count can be shown to fail.
  double forbidden = 0;
  uint64_t seed = 1;
};

struct SimConfig {
  std::string name = "sim0";
  uint64_t arena_capacity = 0;  // bytes the simulated card has for the arena
  uint64_t shared_bytes = 0;    // resident: tables, SRS
  uint64_t compute_bytes = 0;   // workspace of the compute token holder
  uint64_t stage_slot_bytes = 0;
  uint64_t msm_slot_bytes = 0;
  int stage_slots = 1;
  int msm_slots = 1;
  SimLatency latency;
  SimFaults faults;
  ProofKernel kernel;  // empty: cpu_prove_task

  // Sizes and slot counts of a planner's MemoryPlan; the capacity is the plan's budget.
  static SimConfig from_plan(const MemoryPlan& plan);
  // std::invalid_argument naming the field: slots < 1, msm_slots < stage_slots, the regions not
  // fitting arena_capacity, negative latency, probabilities outside [0, 1].
  void validate() const;
  uint64_t planned_bytes() const {
    return shared_bytes + compute_bytes + uint64_t(stage_slots) * stage_slot_bytes + uint64_t(msm_slots) * msm_slot_bytes;
  }
};

// What the simulated arena saw.
struct SimArenaStats {
  uint64_t capacity = 0;
  uint64_t in_use = 0;  // now
  uint64_t peak = 0;
  uint64_t violations = 0;  // moments over capacity + slots occupied twice
  std::string first_violation;
};

class SimBackend final : public Backend {
 public:
  explicit SimBackend(SimConfig config);
  ~SimBackend() override;
  SimBackend(const SimBackend&) = delete;
  SimBackend& operator=(const SimBackend&) = delete;

  std::string name() const override { return config_.name; }
  int stage_slots() const override { return config_.stage_slots; }
  int msm_slots() const override { return config_.msm_slots; }
  std::unique_ptr<Prepared> prepare(const PartitionTask& task) override;
  void stage(Prepared& p, int stage_slot, int msm_slot) override;
  void compute(Prepared& p) override;
  Proof finish(Prepared& p) override;
  bool healthy() const override;
  DeviceCalls& device_calls() override { return calls_; }
  DeviceTimeline& timeline() override { return timeline_; }

  SimArenaStats arena() const;
  // Waits until everything enqueued on the device queues so far has run (a device-wide
  // synchronise, for tests after the engine stopped: a failed compute() leaves its slot releases
  // queued behind its upload, and nothing of the engine waits for them). Not counted.
  void synchronize();
  const SimConfig& config() const { return config_; }
  // Faults injected so far (all phases).
  uint64_t faults_injected() const;
  uint64_t results_corrupted() const;  // proofs finish() corrupted (SimFaults::corrupt)
  uint64_t forbidden_made() const;     // forbidden calls finish() made (SimFaults::forbidden)

  struct Event;      // fired once by a queue or the host; waited on by queues and finish()
  struct Partition;  // per-partition device state shared by the queued work items

 private:
  class Queue;
  void occupy(int kind, int slot, const std::string& who);
  void release(int kind, int slot);
  void maybe_fail(double probability, const char* phase, const PartitionTask& task);
  void delay(int64_t us) const;

  SimConfig config_;
  DeviceCalls calls_;
  DeviceTimeline timeline_;
  mutable std::mutex mu_;  // arena accounting, slot events, fault RNG, health
  uint64_t in_use_ = 0, peak_ = 0, violations_ = 0, faults_ = 0, corrupted_ = 0, forbidden_ = 0;
  std::string first_violation_;
  std::vector<bool> stage_busy_, msm_busy_;
  std::vector<std::shared_ptr<Event>> stage_free_, msm_free_;  // last release event per slot
  std::mt19937_64 rng_;
  bool healthy_ = true;
  std::unique_ptr<Queue> copy_, compute_;
};

}  // namespace pp::engine
