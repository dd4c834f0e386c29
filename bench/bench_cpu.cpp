// SPDX-License-Identifier: Apache-2.0 OR MIT
// CPU micro-benchmarks of the arithmetic: field multiplications, curve additions, pairing.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "proofpipe/ec/bls12_381.hpp"
#include "proofpipe/pairing/pairing.hpp"

namespace {

using namespace pp;

template <class F>
F seeded(uint64_t s) {
  std::mt19937_64 rng(s);
  return F::from_u64(rng()) * F::from_u64(rng()) + F::from_u64(rng());
}

template <class F>
void BM_FieldMul(benchmark::State& state) {
  F a = seeded<F>(1), b = seeded<F>(2);
  for (auto _ : state) {
    a = a * b;
    benchmark::DoNotOptimize(a);
  }
}
BENCHMARK(BM_FieldMul<Fp>)->Name("Fp_mul");
BENCHMARK(BM_FieldMul<Fr>)->Name("Fr_mul");

void BM_Fp2Mul(benchmark::State& state) {
  Fp2 a{seeded<Fp>(1), seeded<Fp>(2)}, b{seeded<Fp>(3), seeded<Fp>(4)};
  for (auto _ : state) {
    a = a * b;
    benchmark::DoNotOptimize(a);
  }
}
BENCHMARK(BM_Fp2Mul)->Name("Fp2_mul");

void BM_FpInverse(benchmark::State& state) {
  Fp a = seeded<Fp>(5);
  for (auto _ : state) {
    a = a.inverse() + Fp::one();
    benchmark::DoNotOptimize(a);
  }
}
BENCHMARK(BM_FpInverse)->Name("Fp_inverse");

// A ring of distinct affine points to add, so no addition hits a special case.
template <class C>
std::vector<Affine<C>> points(const Affine<C>& g, int n) {
  std::vector<Affine<C>> v;
  Jacobian<C> p = Jacobian<C>::from_affine(g);
  for (int i = 0; i < n; ++i) {
    p = p.dbl().add_mixed(g);
    v.push_back(p.to_affine());
  }
  return v;
}

template <class C, class Acc>
void BM_MixedAdd(benchmark::State& state, const Affine<C>& g) {
  const auto pts = points(g, 64);
  Acc acc = Acc::from_affine(g).dbl();
  size_t i = 0;
  for (auto _ : state) {
    acc = acc.add_mixed(pts[i++ & 63]);
    benchmark::DoNotOptimize(acc);
  }
}
void BM_G1MixedAddJacobian(benchmark::State& s) { BM_MixedAdd<G1Curve, G1Jacobian>(s, g1_generator()); }
void BM_G1MixedAddXyzz(benchmark::State& s) { BM_MixedAdd<G1Curve, G1XYZZ>(s, g1_generator()); }
void BM_G2MixedAddXyzz(benchmark::State& s) { BM_MixedAdd<G2Curve, G2XYZZ>(s, g2_generator()); }
BENCHMARK(BM_G1MixedAddJacobian)->Name("G1_mixed_add_jacobian");
BENCHMARK(BM_G1MixedAddXyzz)->Name("G1_mixed_add_xyzz");
BENCHMARK(BM_G2MixedAddXyzz)->Name("G2_mixed_add_xyzz");

template <class C>
void BM_Double(benchmark::State& state, const Affine<C>& g) {
  Jacobian<C> p = Jacobian<C>::from_affine(g);
  for (auto _ : state) {
    p = p.dbl();
    benchmark::DoNotOptimize(p);
  }
}
void BM_G1Double(benchmark::State& s) { BM_Double<G1Curve>(s, g1_generator()); }
void BM_G2Double(benchmark::State& s) { BM_Double<G2Curve>(s, g2_generator()); }
BENCHMARK(BM_G1Double)->Name("G1_double_jacobian");
BENCHMARK(BM_G2Double)->Name("G2_double_jacobian");

void BM_G1ScalarMul(benchmark::State& state) {
  const Fr k = seeded<Fr>(7);
  for (auto _ : state) benchmark::DoNotOptimize(scalar_mul(g1_generator(), k));
}
BENCHMARK(BM_G1ScalarMul)->Name("G1_scalar_mul")->Unit(benchmark::kMicrosecond);

void BM_Pairing(benchmark::State& state) {
  const G1Affine p = g1_generator();
  const G2Affine q = g2_generator();
  for (auto _ : state) benchmark::DoNotOptimize(pairing(p, q));
}
BENCHMARK(BM_Pairing)->Name("pairing")->Unit(benchmark::kMillisecond);

void BM_MillerLoop(benchmark::State& state) {
  const G1Affine p = g1_generator();
  const G2Affine q = g2_generator();
  for (auto _ : state) benchmark::DoNotOptimize(miller_loop(p, q));
}
BENCHMARK(BM_MillerLoop)->Name("miller_loop")->Unit(benchmark::kMillisecond);

void BM_FinalExp(benchmark::State& state) {
  const Fp12 f = miller_loop(g1_generator(), g2_generator());
  for (auto _ : state) benchmark::DoNotOptimize(final_exponentiation(f));
}
BENCHMARK(BM_FinalExp)->Name("final_exponentiation")->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
