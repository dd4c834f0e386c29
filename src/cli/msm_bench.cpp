// SPDX-License-Identifier: Apache-2.0 OR MIT
// `proofpipe bench msm --cpu`: the CPU Pippenger (pp::msm) on seeded random inputs, one
// key=value line in the anchors' shape (set beside blst_p1s_mult_pippenger's line).
#include <fmt/core.h>
#include <tbb/task_arena.h>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "commands.hpp"
#include "proofpipe/msm/msm.hpp"
#include "proofpipe/testkit/random_data.hpp"

namespace pp::cli {
namespace {

double cpu_time_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) * 1e-6;
}

template <class C>
int bench(const BenchGpuOptions& o) {
  const std::size_t n = std::size_t(1) << o.kernel.lg;
  const uint64_t seed = 0xbe7c'0001ULL + uint64_t(o.kernel.lg);
  const std::vector<Affine<C>> pts = testdata::random_points<C>(n, seed);
  const std::vector<Fr> ks = testdata::random_scalars(n, seed + 1);
  const int threads = o.threads > 0 ? o.threads : tbb::this_task_arena::max_concurrency();
  tbb::task_arena arena(threads);
  const MsmOptions opt{o.kernel.window};
  // Wall time, and the process's CPU time beside it: on a shared machine a pinned run still
  // loses its core to other processes now and then, which CPU time does not count.
  std::vector<double> ms, cpu_ms;
  Jacobian<C> r = Jacobian<C>::infinity();
  for (int i = -o.kernel.warmup; i < o.kernel.runs; ++i) {
    const double c0 = cpu_time_ms();
    const auto t0 = std::chrono::steady_clock::now();
    arena.execute([&] { r = msm<C>(std::span<const Affine<C>>(pts), std::span<const Fr>(ks), opt); });
    const auto t1 = std::chrono::steady_clock::now();
    const double c1 = cpu_time_ms();
    if (i >= 0) {
      ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      cpu_ms.push_back(c1 - c0);
    }
  }
  // The result feeds the output, so no run can be dropped.
  uint64_t digest = 0;
  const Affine<C> a = r.to_affine();
  for (uint64_t w : reinterpret_cast<const uint64_t(&)[sizeof(a) / 8]>(a)) digest ^= w;
  std::sort(ms.begin(), ms.end());
  std::sort(cpu_ms.begin(), cpu_ms.end());
  const int default_window = std::is_same_v<C, G2Curve> ? msm_default_window_g2(n) : msm_default_window(n);
  fmt::print("proofpipe op=msm-{} lg={} threads={} window={} runs={} median_ms={:.2f} min_ms={:.2f} max_ms={:.2f} "
             "cpu_median_ms={:.2f} digest={:016x}\n",
             o.kernel.curve, o.kernel.lg, threads, o.kernel.window ? o.kernel.window : default_window, o.kernel.runs,
             ms[ms.size() / 2], ms.front(), ms.back(), cpu_ms[cpu_ms.size() / 2], digest);
  return 0;
}

}  // namespace

int run_bench_msm_cpu(const BenchGpuOptions& o) {
  if (o.kernel.runs < 1 || o.kernel.warmup < 0) throw std::invalid_argument("bench msm --cpu: --runs must be >= 1");
  if (o.kernel.lg > 26) throw std::invalid_argument("bench msm --cpu: --lg must be <= 26");
  if (o.kernel.window > 20) throw std::invalid_argument("bench msm --cpu: --window must be <= 20");
  if (o.kernel.copies != 1) throw std::invalid_argument("bench msm --cpu: --precompute is for the GPU MSM only");
  if (o.kernel.batch != 0) throw std::invalid_argument("bench msm --cpu: --batch is for the GPU MSM only");
  if (o.kernel.curve == "bn254-g1")
    throw std::invalid_argument("bench msm --cpu: --curve bn254-g1 is for the GPU MSM (proofpipe_bench_msm has BN254's CPU MSM)");
  if (o.kernel.curve == "g2") return bench<G2Curve>(o);
  return bench<G1Curve>(o);
}

}  // namespace pp::cli
