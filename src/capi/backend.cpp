// The C API's prover seam (backend.hpp): the GPU prover when this build has CUDA and the
// configuration names a visible GPU, the CPU prover otherwise (or as the GPU's fallback).
#include "backend.hpp"

#include <tbb/task_arena.h>

#include <string>

#if PROOFPIPE_HAS_CUDA
#include "proofpipe/gpu/prover.hpp"
#endif

namespace pp::capi {
namespace {

// The CPU prover in a task arena of the engine's size, so that `threads` bounds this engine
// without touching the process-wide TBB limit other engines share. task_arena::execute is
// thread-safe: concurrent batches share the arena's workers.
class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(int threads)
      : arena_(threads > 0 ? threads : tbb::task_arena::automatic) {}

  BatchResult prove_batch(const BatchRequest& request) override {
    BatchResult result;
    // prove() reports each finished partition through its progress hook, on this thread and
    // between partitions: the place to honour a cancel request.
    const ProgressFn progress = [&](std::size_t done, std::size_t) {
      if (request.on_partition) request.on_partition(done - 1);
      if (request.cancel && request.cancel->load(std::memory_order_relaxed) && done < request.witnesses.size())
        throw Cancelled();
    };
    if (request.cancel && request.cancel->load(std::memory_order_relaxed)) throw Cancelled();
    arena_.execute([&] {
      result.proofs = prove(request.key, request.witnesses, request.randomizers, &result.timings, progress);
    });
    result.partitions_on_cpu = result.proofs.size();
    return result;
  }

 private:
  tbb::task_arena arena_;
};

#if PROOFPIPE_HAS_CUDA
// The GPU prover on one device (the first configured GPU). Each batch plans the arena for its
// key, uploads the SRS and proves the partitions in the prover's pipeline (the next partition is
// prepared and staged while one computes); a per-key device copy that outlives the batch is
// the pipelined engine's job (pp::engine, docs/ENGINE.md). A CUDA failure falls back to the CPU
// prover when the configuration allows it.
class GpuBackend final : public Backend {
 public:
  GpuBackend(const EngineConfig& config, int device) : config_(config), device_(device), cpu_(config.threads) {}

  BatchResult prove_batch(const BatchRequest& request) override {
    if (request.cancel && request.cancel->load(std::memory_order_relaxed)) throw Cancelled();
    if (request.witnesses.empty()) return {};
    BatchResult result;
    try {
      gpu::ProverConfig pc;
      pc.device = device_;
      pc.budget = config_.device_memory_budget;
      pc.gw = std::max(1, config_.gpu_workers);
      gpu::Prover prover(request.key, request.witnesses[0].densities, pc);
      std::vector<gpu::GpuTimes> times;
      result.proofs = prover.prove(request.witnesses, request.randomizers, &times, [&](std::size_t k) {
        if (request.on_partition) request.on_partition(k);
        if (request.cancel && request.cancel->load(std::memory_order_relaxed) && k + 1 < request.witnesses.size())
          throw Cancelled();
      });
      for (const gpu::GpuTimes& t : times) {
        result.timings.ntt += t.ntt;
        result.timings.msm_h += t.msm_h;
        result.timings.msm_l += t.msm_l;
        result.timings.msm_a += t.msm_a;
        result.timings.msm_b_g1 += t.msm_b_g1;
        result.timings.msm_b_g2 += t.msm_b_g2;
        result.ms_gpu_busy += t.compute;
      }
      return result;
    } catch (const gpu::GpuError& e) {
      if (!config_.cpu_fallback || e.status().code != gpu::Code::cuda_error) throw;
    } catch (const engine::PlanError&) {
      if (!config_.cpu_fallback) throw;  // the key does not fit this GPU's budget
    }
    return cpu_.prove_batch(request);
  }

 private:
  EngineConfig config_;
  int device_;
  CpuBackend cpu_;
};
#endif

}  // namespace

std::unique_ptr<Backend> make_backend(const EngineConfig& config) {
#if PROOFPIPE_HAS_CUDA
  const int visible = gpu::device_count();
  const bool wants_gpu = config.all_gpus || !config.gpus.empty();
  if (wants_gpu && visible > 0) {
    const int device = config.gpus.empty() ? 0 : config.gpus.front();
    if (device >= visible)
      throw std::invalid_argument("GPU " + std::to_string(device) + " is not visible (" + std::to_string(visible) +
                                  " device(s))");
    return std::make_unique<GpuBackend>(config, device);
  }
  if (!config.cpu_fallback)
    throw std::invalid_argument("cpu_fallback = 0 but no configured GPU is visible (" + std::to_string(visible) +
                                " device(s)): enable cpu_fallback to prove on the CPU");
#else
  // Without the fallback we refuse at creation instead of failing (or worse) at the first proof.
  if (!config.cpu_fallback)
    throw std::invalid_argument(
        "cpu_fallback = 0 but this build has no GPU prover (built without CUDA): enable cpu_fallback to prove on "
        "the CPU");
#endif
  return std::make_unique<CpuBackend>(config.threads);
}

}  // namespace pp::capi
