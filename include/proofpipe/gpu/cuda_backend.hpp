// SPDX-License-Identifier: Apache-2.0 OR MIT
// One GPU as a device of the pipelined engine (engine/backend.hpp), with the keys it proves
// resident: the first partition of a key on this GPU plans an arena for the key's shape within
// what the GPU has left (engine/plan.hpp), uploads the SRS (or pins the host copy when the plan
// streams it) and keeps it — one device copy per key per GPU — until evict() or the backend's
// end. Each resident key is its own slot domain (its arena's stage and msm slots).
//
// Memory: the arenas the backend holds stay within the budget together — those of the resident
// keys and those of evicted keys whose last partitions are still in flight. When a new key does
// not fit, idle keys (no partition in flight) are evicted, least recently used first; if it still
// does not fit, the partition fails with a BackendError (the engine then proves it on the CPU).
// The curve is a parameter (CudaBackendOf<E>); the backends of both curves on one GPU share its
// ledger (CardLedger), so that their arenas together stay within the one budget. A backend can
// evict only its own keys: a key of one curve that finds the card full of the other's proves on
// the CPU until they are evicted.
//
// Errors become BackendError: a witness that does not fit the key is not retryable; a CUDA error
// marks the device unhealthy (the engine then proves that device's partitions on the CPU or fails
// them). The device timeline comes from the provers' CUDA events, anchored by a host callback.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "proofpipe/engine/backend.hpp"
#include "proofpipe/gpu/prover.hpp"

namespace pp::gpu {

// The arena bytes allocated on one GPU now and their peak, and the lock that makes one key load at
// a time: shared by every backend of that GPU (one per curve).
struct CardLedger {
  std::atomic<uint64_t> used{0}, peak{0};
  std::mutex load;
};

struct CudaBackendConfig {
  int device = 0;
  uint64_t budget = 0;  // bytes all resident keys' arenas may use together; 0: the card less the reserve
  int gw = 2;           // the engine's workers per GPU: each key's plan provides slots for them
  engine::SrsPlacement srs = engine::SrsPlacement::automatic;
  bool pinned_staging = true;
  int split_batch = 0;  // ProverConfig::split_batch: 0 as the plan's msm slots allow, 1 none
  bool pass_thread = false;  // ProverConfig::pass_thread: batch passes enqueued by the prover's own thread
  // The host budget each resident key's prover charges its holdings to (ProverConfig::host_budget:
  // pinned staging and pack buffers, a streamed key's host copy) — the engine's, so that partitions
  // fit beside them; null: none.
  std::shared_ptr<engine::HostBudget> host_budget;
  // Test hook, not for production: every Nth partition this backend finishes has its device
  // result corrupted (Prover::finish's corrupt_result); 0: never. The runtime sets it from the
  // debug environment variable PROOFPIPE_DEBUG_CORRUPT_EVERY (docs/ENGINE.md).
  uint64_t debug_corrupt_every = 0;
  // The GPU's ledger when another backend (the other curve's) shares the card; null: this
  // backend's own. Those sharing it must have the same device and budget.
  std::shared_ptr<CardLedger> ledger;
  std::string name;  // empty: "gpu<device>"
};

// A resident key on this GPU, as the backend reports it (key: a ProvingKeyOf<E> of its curve).
struct ResidentKey {
  const void* key = nullptr;
  engine::SrsPlacement srs = engine::SrsPlacement::resident;
  uint64_t arena_bytes = 0;
  int partitions_in_flight = 0;
  int split_batch = 1;  // partitions per pass over a streamed SRS (MemoryPlan::split_batch)
};

template <class E>
class CudaBackendOf final : public engine::BackendOf<E> {
 public:
  using Key = ProvingKeyOf<E>;
  using Task = engine::PartitionTaskOf<E>;
  explicit CudaBackendOf(const CudaBackendConfig& config);
  ~CudaBackendOf() override;

  std::string name() const override { return name_; }
  uint64_t results_corrupted() const { return corrupted_.load(); }  // debug_corrupt_every's count
  int device() const { return config_.device; }  // the CUDA ordinal
  // Nominal counts (the default domain); every key's domain has its plan's counts.
  int stage_slots() const override { return config_.gw; }
  int msm_slots() const override { return config_.gw; }
  std::unique_ptr<engine::Prepared> prepare(const Task& task) override;
  engine::SlotDomain slot_domain(const engine::Prepared& p) const override;
  void stage(engine::Prepared& p, int stage_slot, int msm_slot) override;
  void compute(engine::Prepared& p) override;
  ProofOf<E> finish(engine::Prepared& p) override;
  bool healthy() const override { return healthy_.load(); }
  engine::DeviceCalls& device_calls() override { return calls_; }
  engine::DeviceTimeline& timeline() override { return timeline_; }

  // Loads `key` onto this GPU now (as the first partition would); densities are its circuit's.
  // Returns false when it does not fit (message in *why).
  bool preload(const std::shared_ptr<const Key>& key, const Densities& densities, std::string* why = nullptr);
  // Drops this GPU's copy of `key`: the device memory is freed when its last partition in flight
  // ends (at once when none is). False when the key is not resident here.
  bool evict(const Key* key);
  std::vector<ResidentKey> resident() const;
  // The card, the budget, the arenas allocated now and their peak.
  engine::DeviceMemory memory() const;
  bool is_resident(const Key* key) const;
  // SRS uploads (or pinnings, when streamed) made so far: one per key load.
  uint64_t key_loads() const { return key_loads_.load(); }
  uint64_t evictions() const { return evictions_.load(); }
  // Summed GPU stage times of the partitions proved here (ms), from the provers' CUDA events.
  GpuTimes totals() const;
  // Called from finish() with each partition's GPU times (benchmarks print them).
  void set_on_times(std::function<void(uint64_t job, std::size_t partition, const GpuTimes&)> fn);

  struct Resident;  // a key's prover and its bookkeeping (cuda_backend.cpp)

 private:
  template <class Fn>
  auto guarded(const char* phase, Fn&& fn) -> decltype(fn());
  std::shared_ptr<Resident> acquire(const std::shared_ptr<const Key>& key, const Densities& densities);

  CudaBackendConfig config_;
  std::string name_;
  uint64_t card_ = 0;      // the card's memory
  uint64_t capacity_ = 0;  // budget for all arenas together
  // Bytes of the GPU's arenas allocated now and their peak; shared with every Resident, whose
  // arena may outlive its place in keys_ (evicted while in flight), and with the other curve's
  // backend on this GPU.
  std::shared_ptr<CardLedger> ledger_;
  std::atomic<bool> healthy_{true};
  engine::DeviceCalls calls_;
  engine::DeviceTimeline timeline_;
  std::atomic<uint64_t> key_loads_{0}, evictions_{0}, next_domain_{1};
  std::atomic<uint64_t> finished_{0};   // partitions finish() was called for (debug_corrupt_every)
  std::atomic<uint64_t> corrupted_{0};  // results corrupted on purpose

  mutable std::mutex mu_;  // guards keys_, times_, on_times_; never held across device work
  std::list<std::shared_ptr<Resident>> keys_;  // most recently used first
  GpuTimes times_;
  std::function<void(uint64_t, std::size_t, const GpuTimes&)> on_times_;
};
using CudaBackend = CudaBackendOf<Bls12_381>;

// The card's memory in bytes (total, as cudaMemGetInfo reports it at start-up).
uint64_t device_memory(int device);

}  // namespace pp::gpu
