// SPDX-License-Identifier: Apache-2.0 OR MIT
// The CPU as an engine device: proves a partition with the CPU prover (prove_partition) in
// finish(), one partition at a time (one stage and one msm slot), inside a TBB arena of the
// configured size. The engine runs on it when a process has no GPU, so that every entry point
// (C API, CLI, drop-in ABI) has one code path whatever the machine.
#pragma once

#include <tbb/task_arena.h>

#include <mutex>
#include <string>

#include "proofpipe/engine/backend.hpp"

namespace pp::engine {

// The CPU prover on one task: prove_partition(*task.key, *task.witness, task.randomizers,
// task.partition) — the engine's default CPU fallback.
template <class E>
ProofOf<E> cpu_prove_task(const PartitionTaskOf<E>& task);

// The CPU backend for keys over curve E; CpuBackend is BLS12-381's.
template <class E>
class CpuBackendOf final : public BackendOf<E> {
 public:
  using PartitionTask = PartitionTaskOf<E>;
  using Proof = ProofOf<E>;
  // threads: the arena's concurrency; 0 uses every core.
  explicit CpuBackendOf(std::string name = "cpu", int threads = 0);

  std::string name() const override { return name_; }
  bool is_cpu_prover() const override { return true; }
  int stage_slots() const override { return 1; }
  int msm_slots() const override { return 1; }
  std::unique_ptr<Prepared> prepare(const PartitionTask& task) override;
  void stage(Prepared&, int, int) override {}
  void compute(Prepared&) override {}
  Proof finish(Prepared& p) override;
  DeviceCalls& device_calls() override { return calls_; }
  DeviceTimeline& timeline() override { return timeline_; }
  // Proves one partition in this backend's arena and books its stage times: finish() and the
  // engine's CPU fallback (EngineConfig::cpu_prover) both call it.
  Proof prove(const PartitionTask& task);
  // Summed stage times of every partition proved here, and their number.
  ProveTimings totals() const;
  uint64_t partitions() const;

 private:
  std::string name_;
  tbb::task_arena arena_;
  mutable std::mutex mu_;
  ProveTimings totals_;
  uint64_t partitions_ = 0;
  DeviceCalls calls_;  // stays empty: the CPU makes no device calls
  DeviceTimeline timeline_;
};
using CpuBackend = CpuBackendOf<Bls12_381>;

}  // namespace pp::engine
