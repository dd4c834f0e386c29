// SPDX-License-Identifier: Apache-2.0 OR MIT
// CpuBackend: the CPU prover behind the engine's backend interface (cpu_backend.hpp).
#include "proofpipe/engine/cpu_backend.hpp"

#include <stdexcept>
#include <utility>

namespace pp::engine {

namespace {
template <class E>
struct CpuPrepared final : Prepared {
  PartitionTaskOf<E> task;  // a copy: the key is shared, the witness outlives the partition (engine.hpp)
};
}  // namespace

template <class E>
ProofOf<E> cpu_prove_task(const PartitionTaskOf<E>& task) {
  if (!task.key || !task.witness) throw std::invalid_argument("cpu_prove_task: the task has no key or witness");
  return prove_partition(*task.key, *task.witness, task.randomizers, task.partition);
}

template <class E>
CpuBackendOf<E>::CpuBackendOf(std::string name, int threads)
    : name_(std::move(name)), arena_(threads > 0 ? threads : tbb::task_arena::automatic) {}

template <class E>
std::unique_ptr<Prepared> CpuBackendOf<E>::prepare(const PartitionTask& task) {
  if (!task.key || !task.witness) throw std::invalid_argument(name_ + ": a partition without key or witness");
  auto p = std::make_unique<CpuPrepared<E>>();
  p->task = task;
  return p;
}

template <class E>
ProofOf<E> CpuBackendOf<E>::finish(Prepared& p) {
  auto* c = dynamic_cast<CpuPrepared<E>*>(&p);
  if (c == nullptr) throw BackendError(name_ + ": a partition prepared by another backend", false);
  return prove(c->task);
}

template <class E>
ProofOf<E> CpuBackendOf<E>::prove(const PartitionTask& t) {
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

template <class E>
ProveTimings CpuBackendOf<E>::totals() const {
  std::lock_guard lock(mu_);
  return totals_;
}

template <class E>
uint64_t CpuBackendOf<E>::partitions() const {
  std::lock_guard lock(mu_);
  return partitions_;
}

template ProofOf<Bls12_381> cpu_prove_task(const PartitionTaskOf<Bls12_381>&);
template ProofOf<bn254::Bn254> cpu_prove_task(const PartitionTaskOf<bn254::Bn254>&);
template class CpuBackendOf<Bls12_381>;
template class CpuBackendOf<bn254::Bn254>;

}  // namespace pp::engine
