// SPDX-License-Identifier: Apache-2.0 OR MIT
// The device interface the pipelined engine drives: four phases per partition, two tokens.
//
// A Backend is one proving device (a GPU, or the simulated device of sim_backend.hpp). The
// engine (engine.hpp) runs `gw` workers per backend; each partition goes through four phases:
//
//   prepare(task)            no token held. CPU work: scalar classification (0 / 1 / other),
//                            bitmaps, tail compaction, CPU-side MSM parts. May take long.
//   stage(p, stage, msm)     MEMORY token held. Enqueue only: the asynchronous upload of a, b, c
//                            into stage slot `stage` and of the MSM inputs into msm slot `msm`.
//                            The backend orders each upload after the previous user of the slot
//                            is done with it (a stream-ordered event wait), never a host wait.
//   compute(p)               COMPUTE token held (exclusive use of the compute stream and the
//                            compute workspace). Enqueue only: wait (device side) for the staging
//                            event, NTTs and the H step, record the event that frees the stage
//                            slot, then the MSMs and the event that marks this partition done.
//                            The engine hands the stage slot to the next stager as soon as
//                            compute() returns; the device orders the reuse.
//   finish(p)                no token held. Blocks until THIS partition's device work is done
//                            (its own event, never the whole device), reads the MSM sums, does the
//                            CPU tail (B_G2) and assembles the proof. The msm slot is free after.
//
// The memory and compute tokens are never held together; the slot numbers come from the engine,
// which owns the arena's stage and msm slots as counting resources (MemoryPlan::stage_slots,
// MemoryPlan::msm_slots).
//
// Errors: a phase throws BackendError. retryable() says whether the same partition may be tried
// again on this device. After any throw the Prepared is dead (the engine only destroys it) and
// the backend has already arranged, in stream order, that the slots given to that partition are
// released; the engine hands them out again at once. healthy() false means the device must not be
// used again (the engine then proves that backend's partitions on the CPU or fails them).
//
// Nothing on the steady-state path may allocate or free device memory, trim a pool, query free
// memory or synchronise the whole device: a backend routes those runtime calls through its
// DeviceCalls counter, and the tests assert that the steady-state count of forbidden calls is 0.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "proofpipe/engine/device_calls.hpp"
#include "proofpipe/groth16/keys.hpp"
#include "proofpipe/groth16/prover.hpp"

namespace pp::engine {

using Clock = std::chrono::steady_clock;

// A failed phase. retryable: the same partition may be tried again on this backend (a transient
// fault); not retryable: it will fail again here (the engine falls back to the CPU or fails).
class BackendError : public std::runtime_error {
 public:
  BackendError(const std::string& what, bool retryable) : std::runtime_error(what), retryable_(retryable) {}
  bool retryable() const { return retryable_; }

 private:
  bool retryable_;
};

// A device's memory as a backend uses it, in bytes.
struct DeviceMemory {
  uint64_t total = 0;   // the card's memory
  uint64_t budget = 0;  // what the backend's allocations may take together
  uint64_t used = 0;    // allocated by the backend now
  uint64_t peak = 0;    // the most `used` has been since the backend started
};

// Intervals during which a device queue was executing work, in host steady_clock time. The
// simulated device records them as it runs; a CUDA backend records them in finish() from the
// elapsed times of its events, anchored to a host time stamp taken when an anchor event fired.
// The engine reads them for the GPU-busy percentage and the timeline.
struct DeviceInterval {
  std::string queue;  // "compute" or "copy"
  std::string what;   // "h", "msm", "upload", ...
  uint64_t job = 0;
  std::size_t partition = 0;
  Clock::time_point start, end;
};

class DeviceTimeline {
 public:
  void record(DeviceInterval interval);
  std::vector<DeviceInterval> snapshot() const;
  // Time within [from, to] during which at least one interval of `queue` was running (intervals
  // of one queue may overlap when a backend reports coarse ones; they are merged).
  Clock::duration busy(const std::string& queue, Clock::time_point from, Clock::time_point to) const;

 private:
  mutable std::mutex mu_;
  std::vector<DeviceInterval> intervals_;
};

// One partition of one job, as the engine hands it to a backend, over curve E (groth16/curves.hpp).
// Engine-owned; the backend reads it and must not keep references beyond the Prepared it returns.
template <class E>
struct PartitionTaskOf {
  uint64_t job = 0;
  std::size_t partition = 0;   // index within the job
  std::size_t partitions = 0;  // of the job
  std::shared_ptr<const ProvingKeyOf<E>> key;  // the job's key: a backend proves against this one
  const WitnessOf<E>* witness = nullptr;
  RandomizersOf<typename E::Fr> randomizers;  // r, s: randomizers_from_seed(job seed, partitions)[partition]
  int attempt = 0;           // 0 first, 1.. retries
  uint64_t host_bytes = 0;   // host memory charged for this partition while it is in flight
};
using PartitionTask = PartitionTaskOf<Bls12_381>;

// Backend-owned state of one partition between the phases.
class Prepared {
 public:
  virtual ~Prepared() = default;
};

// The slots a prepared partition draws from. A backend whose device memory is cut into one
// arena has one domain (id 0, the default); a backend that keeps several keys resident has one
// arena, hence one set of stage and msm slots, per key, each its own domain. The engine keeps one
// pair of slot pools per (backend, domain id); a domain's counts never change.
struct SlotDomain {
  uint64_t id = 0;
  int stage_slots = 1, msm_slots = 1;
};

// A proving device for keys over curve E; the engine over E (EngineOf<E>) drives it.
template <class E>
class BackendOf {
 public:
  using Task = PartitionTaskOf<E>;
  virtual ~BackendOf() = default;
  virtual std::string name() const = 0;
  virtual int stage_slots() const = 0;  // from the MemoryPlan
  virtual int msm_slots() const = 0;
  // Host memory this partition occupies from prepare() until finish() returns (the witness
  // copy, bitmaps, compacted tail, pinned staging share): the engine charges it against its
  // host budget before prepare(). The default counts the witness's vectors.
  virtual uint64_t host_bytes(const Task& task) const;
  virtual std::unique_ptr<Prepared> prepare(const Task& task) = 0;
  // The slots the prepared partition needs (asked after prepare(), before any slot is taken).
  virtual SlotDomain slot_domain(const Prepared&) const { return {0, stage_slots(), msm_slots()}; }
  virtual void stage(Prepared& p, int stage_slot, int msm_slot) = 0;
  virtual void compute(Prepared& p) = 0;
  virtual ProofOf<E> finish(Prepared& p) = 0;
  // false after a fault that leaves the device unusable (then it stays false).
  virtual bool healthy() const { return true; }
  // true for the CPU prover itself: a proof it makes that fails the check says that the witness
  // does not satisfy the circuit, so it is not proved again (the partition fails: WitnessError).
  virtual bool is_cpu_prover() const { return false; }
  virtual DeviceCalls& device_calls() = 0;
  virtual DeviceTimeline& timeline() = 0;
};
using Backend = BackendOf<Bls12_381>;

// Bytes of the vectors of a witness: what the engine charges a partition against its host
// budget by default (witness_bytes of its counts, plan.hpp).
uint64_t witness_bytes(const Witness& w);
uint64_t witness_bytes(const bn254::Witness& w);

}  // namespace pp::engine
