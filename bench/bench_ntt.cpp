// SPDX-License-Identifier: Apache-2.0 OR MIT
// CPU NTT benchmarks (Google Benchmark): forward, coset and inverse transforms for 2^10..2^20.
//
// Arguments: lg (log2 of the size) and threads (1 = one thread, 0 = every thread of the
// machine, through a tbb::task_arena). Wall-clock time, since the work runs on TBB workers;
// items/s counts transformed elements.
#include <benchmark/benchmark.h>
#include <tbb/task_arena.h>

#include <random>
#include <vector>

#include "proofpipe/ntt/ntt.hpp"

namespace {

using namespace pp;

std::vector<Fr> seeded_vector(std::size_t n) {
  std::mt19937_64 rng(0x5eed'0417'beefULL);
  std::vector<Fr> v(n);
  for (auto& x : v) x = Fr::from_u64(rng()) * Fr::from_u64(rng()) + Fr::from_u64(rng());
  return v;
}

using Transform = void (*)(std::span<Fr>, const Domain&, Order, Order);

template <Transform kF, Order kIn, Order kOut, bool kAsm = true>
void BM_Transform(benchmark::State& state) {
  // kAsm = false measures the portable Field arithmetic, for comparison with the x86 kernels.
  detail::ntt_allow_asm(kAsm);
  const int lg = int(state.range(0));
  const int threads = int(state.range(1));
  tbb::task_arena arena(threads == 0 ? tbb::task_arena::automatic : threads);
  const Domain d(lg);
  auto a = seeded_vector(d.size());
  // The first call builds the Domain's cached twiddle table; measure the steady state.
  arena.execute([&] { kF(a, d, kIn, kOut); });
  for (auto _ : state) {
    arena.execute([&] { kF(a, d, kIn, kOut); });
    benchmark::DoNotOptimize(a.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(d.size()));
  detail::ntt_allow_asm(true);
}

void lg_and_threads(benchmark::internal::Benchmark* b) {
  b->ArgNames({"lg", "threads"});
  for (int lg = 10; lg <= 20; lg += 2) {
    b->Args({lg, 1});
    b->Args({lg, 0});
  }
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

// The prover's chains: coefficients -> bit-reversed evaluations, and back.
BENCHMARK(BM_Transform<ntt, Order::natural, Order::bit_reversed>)
    ->Name("ntt_natural_to_bitrev")
    ->Apply(lg_and_threads);
BENCHMARK(BM_Transform<coset_ntt, Order::natural, Order::bit_reversed>)
    ->Name("coset_ntt_natural_to_bitrev")
    ->Apply(lg_and_threads);
BENCHMARK(BM_Transform<ntt, Order::bit_reversed, Order::natural>)
    ->Name("ntt_bitrev_to_natural")
    ->Apply(lg_and_threads);
BENCHMARK(BM_Transform<intt, Order::bit_reversed, Order::natural>)
    ->Name("intt_bitrev_to_natural")
    ->Apply(lg_and_threads);
BENCHMARK(BM_Transform<ntt, Order::natural, Order::natural>)
    ->Name("ntt_natural_to_natural")
    ->Apply(lg_and_threads);
BENCHMARK(BM_Transform<ntt, Order::natural, Order::bit_reversed, false>)
    ->Name("ntt_natural_to_bitrev_portable_arith")
    ->Apply(lg_and_threads);

void BM_BitReverse(benchmark::State& state) {
  const int lg = int(state.range(0));
  auto a = seeded_vector(std::size_t(1) << lg);
  for (auto _ : state) {
    bit_reverse_permute(a);
    benchmark::DoNotOptimize(a.data());
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(a.size()));
}
BENCHMARK(BM_BitReverse)->Name("bit_reverse_permute")->ArgName("lg")->DenseRange(10, 20, 2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
