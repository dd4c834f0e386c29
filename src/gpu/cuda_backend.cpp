// CudaBackend: the engine's phases on gpu::Prover (cuda_backend.hpp).
#include "proofpipe/gpu/cuda_backend.hpp"

#include <chrono>
#include <stdexcept>
#include <utility>

namespace pp::gpu {

namespace {

struct GpuPrepared final : engine::Prepared {
  uint64_t job = 0;
  std::size_t partition = 0;
  Prover::PartitionPtr part;
};

GpuPrepared& as_gpu(engine::Prepared& p) {
  auto* g = dynamic_cast<GpuPrepared*>(&p);
  if (g == nullptr) throw engine::BackendError("CudaBackend: a partition prepared by another backend", false);
  return *g;
}

}  // namespace

CudaBackend::CudaBackend(std::string name, Prover& prover) : name_(std::move(name)), prover_(prover) {}

template <class Fn>
auto CudaBackend::guarded(const char* phase, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const GpuError& e) {
    // A CUDA error on the steady path is a device fault: stop using this GPU. A bad argument
    // (slot, state) is a bug of the caller and fails only this partition.
    if (e.status().code == Code::cuda_error) healthy_ = false;
    throw engine::BackendError(name_ + ": " + phase + ": " + e.what(), false);
  } catch (const std::invalid_argument& e) {
    throw engine::BackendError(name_ + ": " + phase + ": " + e.what(), false);
  }
}

std::unique_ptr<engine::Prepared> CudaBackend::prepare(const engine::PartitionTask& task) {
  return guarded("prepare", [&]() -> std::unique_ptr<engine::Prepared> {
    if (task.witness == nullptr) throw std::invalid_argument("no witness");
    auto g = std::make_unique<GpuPrepared>();
    g->job = task.job;
    g->partition = task.partition;
    g->part = prover_.prepare(*task.witness, task.randomizers, task.partition);
    return g;
  });
}

void CudaBackend::stage(engine::Prepared& p, int stage_slot, int msm_slot) {
  guarded("stage", [&] { prover_.stage(*as_gpu(p).part, stage_slot, msm_slot); });
}

void CudaBackend::compute(engine::Prepared& p) {
  guarded("compute", [&] { prover_.compute(*as_gpu(p).part); });
}

Proof CudaBackend::finish(engine::Prepared& p) {
  GpuPrepared& g = as_gpu(p);
  GpuTimes t;
  Proof proof = guarded("finish", [&] { return prover_.finish(*g.part, &t); });
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
  return proof;
}

}  // namespace pp::gpu
