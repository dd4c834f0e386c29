// `proofpipe bench msm | ntt | batch-add`: the GPU kernel benchmarks (pp::gpu::run_bench).
#include <fmt/core.h>

#include <stdexcept>

#include "commands.hpp"
#if PROOFPIPE_HAS_CUDA
#include "proofpipe/gpu/bench.hpp"
#endif

namespace pp::cli {

int run_bench_gpu(const BenchGpuOptions& o) {
#if PROOFPIPE_HAS_CUDA
  gpu::BenchOptions b;
  b.op = o.op;
  b.curve = o.curve;
  b.lg = o.lg;
  b.window = o.window;
  b.runs = o.runs;
  b.warmup = o.warmup;
  b.device = o.device;
  fmt::print("{}\n", gpu::bench_header());
  fmt::print("{}\n", gpu::bench_row(gpu::run_bench(b)));
  return 0;
#else
  (void)o;
  throw std::runtime_error("bench " + o.op + ": this proofpipe was built without CUDA (PROOFPIPE_CUDA=OFF)");
#endif
}

}  // namespace pp::cli
