// SPDX-License-Identifier: Apache-2.0 OR MIT
// CpuBackend: the CPU prover behind the engine's backend interface (cpu_backend.hpp).
#include "proofpipe/engine/cpu_backend.hpp"

#include <stdexcept>
#include <utility>

namespace pp::engine {

namespace {
struct CpuPrepared final : Prepared {
  PartitionTask task;  // a copy: the key is shared, the witness outlives the partition (engine.hpp)
};
}  // namespace

Proof cpu_prove_task(const PartitionTask& task) {
  if (!task.key || !task.witness) throw std::invalid_argument("cpu_prove_task: the task has no key or witness");
  return prove_partition(*task.key, *task.witness, task.randomizers, task.partition);
}

CpuBackend::CpuBackend(std::string name, int threads)
    : name_(std::move(name)), arena_(threads > 0 ? threads : tbb::task_arena::automatic) {}

std::unique_ptr<Prepared> CpuBackend::prepare(const PartitionTask& task) {
  if (!task.key || !task.witness) throw std::invalid_argument(name_ + ": a partition without key or witness");
  auto p = std::make_unique<CpuPrepared>();
  p->task = task;
  return p;
}

Proof CpuBackend::finish(Prepared& p) {
  auto* c = dynamic_cast<CpuPrepared*>(&p);
  if (c == nullptr) throw BackendError(name_ + ": a partition prepared by another backend", false);
  return prove(c->task);
}

Proof CpuBackend::prove(const PartitionTask& t) {
  if (!t.key || !t.witness) throw std::invalid_argument(name_ + ": a partition without key or witness");
  DeviceInterval iv{"compute", "cpu-prove", t.job, t.partition, Clock::now(), {}};
  ProveTimings times;
  Proof proof = arena_.execute([&] { return prove_partition(*t.key, *t.witness, t.randomizers, t.partition, &times); });
  iv.end = Clock::now();
  timeline_.record(std::move(iv));
  std::lock_guard lock(mu_);
  totals_ += times;
  ++partitions_;
  return proof;
}

ProveTimings CpuBackend::totals() const {
  std::lock_guard lock(mu_);
  return totals_;
}

uint64_t CpuBackend::partitions() const {
  std::lock_guard lock(mu_);
  return partitions_;
}

}  // namespace pp::engine
