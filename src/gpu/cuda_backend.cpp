// SPDX-License-Identifier: Apache-2.0 OR MIT
// CudaBackend: the engine's phases on the gpu::Prover of each resident key (cuda_backend.hpp).
#include "proofpipe/gpu/cuda_backend.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <utility>

namespace pp::gpu {

template <class E>
struct CudaBackendOf<E>::Resident {
  // Declared before the prover so that the key outlives it (a streamed prover unpins the key's
  // host copy when it goes), and the host budget its holdings are charged to.
  std::shared_ptr<const Key> key;
  std::shared_ptr<engine::HostBudget> host_budget;
  std::unique_ptr<ProverOf<E>> prover;
  uint64_t domain = 0;
  std::atomic<int> in_flight{0};
  std::shared_ptr<CardLedger> ledger;  // the GPU's count of allocated arena bytes
  uint64_t arena_bytes = 0;            // this key's share of it

  ~Resident() {
    prover.reset();  // frees the arena, then the count says so
    if (ledger) ledger->used.fetch_sub(arena_bytes);
  }
};

namespace {

template <class E>
struct GpuPrepared final : engine::Prepared {
  std::shared_ptr<typename CudaBackendOf<E>::Resident> res;  // keeps the key's prover alive while in flight
  typename ProverOf<E>::PartitionPtr part;
  uint64_t job = 0;
  std::size_t partition = 0;
  ~GpuPrepared() override {
    part.reset();
    if (res) res->in_flight.fetch_sub(1);
  }
};

template <class E>
GpuPrepared<E>& as_gpu(engine::Prepared& p) {
  auto* g = dynamic_cast<GpuPrepared<E>*>(&p);
  if (g == nullptr) throw engine::BackendError("CudaBackend: a partition prepared by another backend", false);
  return *g;
}
template <class E>
const GpuPrepared<E>& as_gpu(const engine::Prepared& p) {
  return as_gpu<E>(const_cast<engine::Prepared&>(p));
}

}  // namespace

template <class E>
CudaBackendOf<E>::CudaBackendOf(const CudaBackendConfig& config)
    : config_(config),
      name_(config.name.empty() ? fmt::format("gpu{}", config.device) : config.name),
      ledger_(config.ledger ? config.ledger : std::make_shared<CardLedger>()) {
  if (config_.gw < 1) throw std::invalid_argument(name_ + ": gw must be at least 1");
  const uint64_t card = card_ = device_memory(config_.device);
  if (card <= engine::kDefaultReserve) throw std::invalid_argument(name_ + ": the device reports no usable memory");
  const uint64_t usable = card - engine::kDefaultReserve;
  if (config_.budget > usable)
    throw std::invalid_argument(fmt::format("{}: the budget {} exceeds the card's {} less the reserve {}", name_,
                                            engine::format_bytes(config_.budget), engine::format_bytes(card),
                                            engine::format_bytes(engine::kDefaultReserve)));
  capacity_ = config_.budget ? config_.budget : usable;
}

template <class E>
CudaBackendOf<E>::~CudaBackendOf() = default;

template <class E>
template <class Fn>
auto CudaBackendOf<E>::guarded(const char* phase, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const GpuError& e) {
    // A CUDA error on the steady path is a device fault: stop using this GPU. A bad argument
    // (slot, state) is a bug of the caller and fails only this partition.
    if (e.status().code == Code::cuda_error) healthy_ = false;
    throw engine::BackendError(name_ + ": " + phase + ": " + e.what(), false);
  }
}

template <class E>
std::shared_ptr<typename CudaBackendOf<E>::Resident> CudaBackendOf<E>::acquire(const std::shared_ptr<const Key>& key,
                                                                               const Densities& densities) {
  auto find = [&]() -> std::shared_ptr<Resident> {
    std::lock_guard lock(mu_);
    for (auto it = keys_.begin(); it != keys_.end(); ++it) {
      if ((*it)->key.get() != key.get()) continue;
      keys_.splice(keys_.begin(), keys_, it);  // most recently used first
      return keys_.front();
    }
    return nullptr;
  };
  if (auto r = find()) return r;
  std::lock_guard load(ledger_->load);  // one key load at a time on this GPU, whichever curve
  if (auto r = find()) return r;  // another worker loaded it while this one waited
  for (;;) {
    const uint64_t used = ledger_->used.load();  // evicted keys still in flight, the other curve's keys included
    const uint64_t room = capacity_ > used ? capacity_ - used : 0;
    try {
      if (room == 0) throw engine::PlanError(name_ + ": no device memory left for another key", 0, 1);
      ProverConfig pc;
      pc.device = config_.device;
      pc.budget = room;
      pc.gw = config_.gw;
      pc.srs = config_.srs;
      pc.pinned_staging = config_.pinned_staging;
      pc.split_batch = config_.split_batch;
      pc.pass_thread = config_.pass_thread;
      pc.calls = &calls_;
      pc.host_budget = config_.host_budget.get();
      auto r = std::make_shared<Resident>();
      r->key = key;
      r->host_budget = config_.host_budget;
      r->prover = std::make_unique<ProverOf<E>>(*key, densities, pc);
      r->arena_bytes = r->prover->plan().arena_bytes;
      r->ledger = ledger_;
      const uint64_t now = ledger_->used.fetch_add(r->arena_bytes) + r->arena_bytes;
      for (uint64_t peak = ledger_->peak.load(); now > peak && !ledger_->peak.compare_exchange_weak(peak, now);) {
      }
      r->domain = next_domain_.fetch_add(1);
      key_loads_.fetch_add(1);
      std::lock_guard lock(mu_);
      keys_.push_front(r);
      return r;
    } catch (const engine::PlanError& e) {
      // Make room: drop the least recently used key that no partition is using, then plan again.
      std::shared_ptr<Resident> idle;
      {
        std::lock_guard lock(mu_);
        for (auto it = keys_.rbegin(); it != keys_.rend(); ++it) {
          if (it->use_count() == 1 && (*it)->in_flight.load() == 0) {
            idle = *it;
            keys_.erase(std::next(it).base());
            break;
          }
        }
      }
      if (!idle) {
        throw engine::PlanError(fmt::format("{}: the key does not fit in the {} left of {} (other keys in use): {}", name_,
                                            engine::format_bytes(room), engine::format_bytes(capacity_), e.what()),
                                e.budget(), e.minimum());
      }
      evictions_.fetch_add(1);
      idle.reset();  // frees its arena (waits for nothing: it has no work in flight)
    }
  }
}

template <class E>
std::unique_ptr<engine::Prepared> CudaBackendOf<E>::prepare(const Task& task) {
  if (task.witness == nullptr || !task.key) throw std::invalid_argument(name_ + ": a partition without key or witness");
  auto g = std::make_unique<GpuPrepared<E>>();
  g->res = guarded("key load", [&] { return acquire(task.key, task.witness->densities); });
  g->res->in_flight.fetch_add(1);
  g->job = task.job;
  g->partition = task.partition;
  g->part = guarded("prepare", [&] { return g->res->prover->prepare(*task.witness, task.randomizers, task.partition); });
  return g;
}

template <class E>
engine::SlotDomain CudaBackendOf<E>::slot_domain(const engine::Prepared& p) const {
  const Resident& r = *as_gpu<E>(p).res;
  const engine::MemoryPlan& plan = r.prover->plan();
  return {r.domain, plan.stage_slots, plan.msm_slots};
}

template <class E>
void CudaBackendOf<E>::stage(engine::Prepared& p, int stage_slot, int msm_slot) {
  GpuPrepared<E>& g = as_gpu<E>(p);
  guarded("stage", [&] { g.res->prover->stage(*g.part, stage_slot, msm_slot); });
}

template <class E>
void CudaBackendOf<E>::compute(engine::Prepared& p) {
  GpuPrepared<E>& g = as_gpu<E>(p);
  guarded("compute", [&] { g.res->prover->compute(*g.part); });
}

template <class E>
ProofOf<E> CudaBackendOf<E>::finish(engine::Prepared& p) {
  GpuPrepared<E>& g = as_gpu<E>(p);
  GpuTimes t;
  const uint64_t every = config_.debug_corrupt_every;
  const bool corrupt = every != 0 && finished_.fetch_add(1) % every == every - 1;
  if (corrupt) corrupted_.fetch_add(1);
  ProofOf<E> proof = guarded("finish", [&] { return g.res->prover->finish(*g.part, &t, corrupt); });
  for (const GpuTimes::Span& s : t.spans) {
    engine::DeviceInterval iv;
    iv.queue = s.queue;
    iv.what = s.what;
    iv.job = g.job;
    iv.partition = g.partition;
    const auto at = [&](double ms_before) {
      return t.done_at - std::chrono::duration_cast<engine::Clock::duration>(std::chrono::duration<double, std::milli>(ms_before));
    };
    iv.start = at(s.begin_ms);
    iv.end = at(s.end_ms);
    timeline_.record(std::move(iv));
  }
  std::function<void(uint64_t, std::size_t, const GpuTimes&)> hook;
  {
    std::lock_guard lock(mu_);
    times_ += t;
    hook = on_times_;
  }
  if (hook) hook(g.job, g.partition, t);
  return proof;
}

template <class E>
bool CudaBackendOf<E>::preload(const std::shared_ptr<const Key>& key, const Densities& densities, std::string* why) {
  try {
    guarded("key load", [&] { return acquire(key, densities); });
    return true;
  } catch (const std::exception& e) {
    if (why) *why = e.what();
    return false;
  }
}

template <class E>
bool CudaBackendOf<E>::evict(const Key* key) {
  std::shared_ptr<Resident> gone;
  {
    std::lock_guard lock(mu_);
    auto it = std::find_if(keys_.begin(), keys_.end(), [&](const auto& r) { return r->key.get() == key; });
    if (it == keys_.end()) return false;
    gone = std::move(*it);
    keys_.erase(it);
  }
  evictions_.fetch_add(1);
  // Freed here unless partitions are in flight: then by the last of them, when it ends.
  gone.reset();
  return true;
}

template <class E>
std::vector<ResidentKey> CudaBackendOf<E>::resident() const {
  std::lock_guard lock(mu_);
  std::vector<ResidentKey> out;
  for (const auto& r : keys_)
    out.push_back({r->key.get(), r->prover->plan().srs, r->prover->plan().arena_bytes, r->in_flight.load(),
                   r->prover->plan().split_batch});
  return out;
}

template <class E>
engine::DeviceMemory CudaBackendOf<E>::memory() const {
  return {card_, capacity_, ledger_->used.load(), ledger_->peak.load()};
}

template <class E>
bool CudaBackendOf<E>::is_resident(const Key* key) const {
  std::lock_guard lock(mu_);
  return std::any_of(keys_.begin(), keys_.end(), [&](const auto& r) { return r->key.get() == key; });
}

template <class E>
GpuTimes CudaBackendOf<E>::totals() const {
  std::lock_guard lock(mu_);
  return times_;
}

template <class E>
void CudaBackendOf<E>::set_on_times(std::function<void(uint64_t, std::size_t, const GpuTimes&)> fn) {
  std::lock_guard lock(mu_);
  on_times_ = std::move(fn);
}

template class CudaBackendOf<Bls12_381>;
template class CudaBackendOf<bn254::Bn254>;

}  // namespace pp::gpu
