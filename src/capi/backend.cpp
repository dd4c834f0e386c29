// The C API's prover seam, served by the CPU prover for now (see backend.hpp).
#include "backend.hpp"

#include <tbb/task_arena.h>

#include <string>

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

}  // namespace

std::unique_ptr<Backend> make_backend(const EngineConfig& config) {
  // No GPU prover exists yet: every configuration that allows the CPU gets it. Without the
  // fallback we refuse at creation instead of failing (or worse) at the first proof.
  if (!config.cpu_fallback)
    throw std::invalid_argument(
        "cpu_fallback = 0 but this build has no GPU prover yet: enable cpu_fallback to prove on the CPU");
  return std::make_unique<CpuBackend>(config.threads);
}

}  // namespace pp::capi
