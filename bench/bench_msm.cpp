// SPDX-License-Identifier: Apache-2.0 OR MIT
// CPU MSM benchmarks: BLS12-381 G1/G2 Pippenger for 2^10..2^20 points, BN254 G1/G2 for 2^16..2^21,
// and G1 bitmap batch_add at 50% density.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <tbb/task_arena.h>

#include "proofpipe/msm/msm.hpp"
#include "proofpipe/testkit/random_data.hpp"

namespace {

using namespace pp;

using testdata::random_fr;

// Distinct, unrelated-looking points for one addition each (proofpipe/testkit/random_data.hpp).
template <class C>
std::vector<Affine<C>> make_points(std::size_t n, uint64_t seed) {
  return testdata::random_points<C>(n, seed);
}

// Inputs are built once at the largest size any benchmark uses and shared by prefixes.
template <class C>
constexpr std::size_t kMaxPoints = std::is_same_v<C, G1Curve> ? std::size_t(1) << 20 : std::size_t(1) << 18;
template <class C>
struct Inputs {
  std::vector<Affine<C>> points;
  std::vector<ScalarOf<C>> scalars;
};
template <class C>
const Inputs<C>& inputs(std::size_t n) {
  static Inputs<C> in;
  if (in.points.size() < n) {
    const std::size_t m = std::max(n, kMaxPoints<C>);
    in.points = make_points<C>(m, 0xbe7c'0001);
    std::mt19937_64 rng(0xbe7c'0002);
    in.scalars.resize(m);
    for (auto& k : in.scalars) k = random_fr<ScalarOf<C>>(rng);
  }
  return in;
}

template <class C>
void BM_Msm(benchmark::State& state) {
  const std::size_t n = std::size_t(1) << state.range(0);
  const MsmOptions opt{int(state.range(1))};
  const auto& in = inputs<C>(n);
  const std::span<const Affine<C>> pts(in.points.data(), n);
  const std::span<const ScalarOf<C>> ks(in.scalars.data(), n);
  for (auto _ : state) {
    auto r = msm<C>(pts, ks, opt);
    benchmark::DoNotOptimize(r);
  }
  constexpr bool g2 = std::is_same_v<C, G2Curve> || std::is_same_v<C, bn254::G2Curve>;
  const int default_window = g2 ? msm_default_window_g2(n) : msm_default_window(n);
  state.counters["window"] = opt.window_bits ? opt.window_bits : default_window;
  state.counters["points/s"] = benchmark::Counter(double(n), benchmark::Counter::kIsIterationInvariantRate);
}

// One thread, timed by its CPU time: the window trade-off is about operation counts, and a
// single thread's CPU time stays meaningful on a machine that is busy with other work.
void BM_MsmG1OneThread(benchmark::State& state) {
  const std::size_t n = std::size_t(1) << state.range(0);
  const MsmOptions opt{int(state.range(1))};
  const auto& in = inputs<G1Curve>(n);
  const std::span<const G1Affine> pts(in.points.data(), n);
  const std::span<const Fr> ks(in.scalars.data(), n);
  tbb::task_arena one(1);
  for (auto _ : state) {
    one.execute([&] {
      auto r = msm<G1Curve>(pts, ks, opt);
      benchmark::DoNotOptimize(r);
    });
  }
  state.counters["window"] = opt.window_bits;
}

void BM_BatchAddG1(benchmark::State& state) {
  const std::size_t n = std::size_t(1) << state.range(0);
  const auto& in = inputs<G1Curve>(n);
  const std::span<const G1Affine> pts(in.points.data(), n);
  std::mt19937_64 rng(0xbe7c'0003);
  std::vector<uint64_t> bm((n + 63) / 64);
  for (auto& w : bm) w = rng();  // each bit set with probability 1/2
  for (auto _ : state) {
    auto r = batch_add<G1Curve>(pts, bm);
    benchmark::DoNotOptimize(r);
  }
  state.counters["points/s"] = benchmark::Counter(double(n), benchmark::Counter::kIsIterationInvariantRate);
}

// The work is on TBB's threads, so only wall time means anything.
void register_all(bool sweep) {
  for (int lg = 10; lg <= 20; lg += 2)
    benchmark::RegisterBenchmark("msm_g1", BM_Msm<G1Curve>)->Args({lg, 0})->ArgNames({"lg", "c"})
        ->Unit(benchmark::kMillisecond)->UseRealTime();
  for (int lg = 10; lg <= 20; lg += 2)
    benchmark::RegisterBenchmark("msm_g2", BM_Msm<G2Curve>)->Args({lg, 0})->ArgNames({"lg", "c"})
        ->Unit(benchmark::kMillisecond)->UseRealTime();
  for (int lg : {16, 18, 20, 21})
    benchmark::RegisterBenchmark("msm_bn254_g1", BM_Msm<bn254::G1Curve>)->Args({lg, 0})->ArgNames({"lg", "c"})
        ->Unit(benchmark::kMillisecond)->UseRealTime();
  for (int lg : {16, 18, 20})
    benchmark::RegisterBenchmark("msm_bn254_g2", BM_Msm<bn254::G2Curve>)->Args({lg, 0})->ArgNames({"lg", "c"})
        ->Unit(benchmark::kMillisecond)->UseRealTime();
  for (int lg = 16; lg <= 20; ++lg)
    benchmark::RegisterBenchmark("batch_add_g1_half", BM_BatchAddG1)->Arg(lg)->ArgName("lg")
        ->Unit(benchmark::kMillisecond)->UseRealTime();
  if (sweep) {
    for (int lg = 10; lg <= 20; ++lg) {
      const int d = msm_default_window(std::size_t(1) << lg);
      for (int c = std::max(1, d - 3); c <= std::min(20, d + 3); ++c)
        benchmark::RegisterBenchmark("msm_g1_sweep_1thread", BM_MsmG1OneThread)->Args({lg, c})
            ->ArgNames({"lg", "c"})->Unit(benchmark::kMillisecond);
    }
    // BN254 G1 at the sizes of its provers' largest MSMs, all threads (wall time).
    for (int lg : {17, 21}) {
      const int d = msm_default_window(std::size_t(1) << lg);
      for (int c = d - 3; c <= d + 2; ++c)
        benchmark::RegisterBenchmark("msm_bn254_g1_sweep", BM_Msm<bn254::G1Curve>)->Args({lg, c})
            ->ArgNames({"lg", "c"})->Unit(benchmark::kMillisecond)->UseRealTime();
    }
  }
}

}  // namespace

// `--msm_window_sweep` adds one-thread G1 msm at windows around the default, to retune
// msm_default_window on another machine; it is not a Google Benchmark flag, so it is taken out
// before benchmark::Initialize sees the arguments.
int main(int argc, char** argv) {
  bool sweep = false;
  int kept = 0;
  for (int i = 0; i < argc; ++i) {
    if (i > 0 && std::strcmp(argv[i], "--msm_window_sweep") == 0) {
      sweep = true;
      continue;
    }
    argv[kept++] = argv[i];
  }
  argc = kept;
  register_all(sweep);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
