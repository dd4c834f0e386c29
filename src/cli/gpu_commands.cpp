// SPDX-License-Identifier: Apache-2.0 OR MIT
// `proofpipe bench msm | ntt | batch-add`: the GPU kernel benchmarks (pp::gpu::run_bench).
#include <fmt/core.h>

#include <stdexcept>

#include "commands.hpp"

namespace pp::cli {

int run_bench_gpu(const BenchGpuOptions& o) {
#if PROOFPIPE_HAS_CUDA
  gpu::BenchOptions b = o.kernel;
  b.canonical = o.scalars == "canonical";
  b.full_twist = o.twist == "full";
  const gpu::BenchResult r = gpu::run_bench(b);
  fmt::print("{}\n", gpu::bench_header());
  fmt::print("{}\n", gpu::bench_row(r));
  // The same in the anchors' key=value shape (../shared/notes/anchors.md), to divide by theirs.
  const std::string op = r.op == "ntt" ? std::string("ntt-nr") : r.op + "-" + r.curve;
  fmt::print("proofpipe op={} lg={} mode=compute-only window={} runs={} median_ms={:.3f} min_ms={:.3f} max_ms={:.3f}{}\n", op,
             r.lg, r.window, r.runs, r.median_ms, r.min_ms, r.max_ms,
             r.op == "ntt" ? fmt::format(" twist_table={} twist_lg={}", o.twist, r.twist_lg)
                           : fmt::format(" precomputed={} batch={} scalars={}", r.copies > 1 ? r.copies : 0, r.batch,
                                         r.canonical ? "canonical" : "montgomery"));
  return 0;
#else
  (void)o;
  throw std::runtime_error("bench " + o.kernel.op + ": this proofpipe was built without CUDA (PROOFPIPE_CUDA=OFF)");
#endif
}

}  // namespace pp::cli
