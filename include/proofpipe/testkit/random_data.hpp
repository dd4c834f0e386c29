// SPDX-License-Identifier: Apache-2.0 OR MIT
// Seeded random scalars and subgroup points for the tests, the GPU harness and the benchmarks
// (header-only: the testkit, never a library the product ships).
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "proofpipe/ec/bls12_381.hpp"
#include "proofpipe/ec/bn254.hpp"

namespace pp::testdata {

// F: BLS12-381's Fr (the default) or BN254's.
template <class F = Fr>
F random_fr(std::mt19937_64& rng) {
  for (;;) {
    uint64_t c[4] = {rng(), rng(), rng(), rng() & ((uint64_t(1) << (F::BITS - 192)) - 1)};
    F r;
    if (F::from_canonical(r, c)) return r;
  }
}

template <class F = Fr>
std::vector<F> random_scalars(std::size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<F> v(n);
  for (auto& k : v) k = random_fr<F>(rng);
  return v;
}

template <class C>
Affine<C> generator();
template <>
inline G1Affine generator<G1Curve>() {
  return g1_generator();
}
template <>
inline G2Affine generator<G2Curve>() {
  return g2_generator();
}
template <>
inline bn254::G1Affine generator<bn254::G1Curve>() {
  return bn254::g1_generator();
}
template <>
inline bn254::G2Affine generator<bn254::G2Curve>() {
  return bn254::g2_generator();
}

// Distinct subgroup points without one scalar multiplication each: a random walk over a few
// random multiples of the generator, with occasional doublings, normalised together.
template <class C>
std::vector<Affine<C>> random_points(std::size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Jacobian<C> steps[4];
  for (auto& s : steps) s = scalar_mul(generator<C>(), random_fr<typename C::Scalar>(rng));
  std::vector<Jacobian<C>> jac(n);
  Jacobian<C> acc = steps[0];
  for (std::size_t i = 0; i < n; ++i) {
    acc += steps[rng() % 4];
    if (rng() % 8 == 0) acc = acc.dbl();
    jac[i] = acc;
  }
  std::vector<Affine<C>> out(n);
  std::vector<typename C::Field> scratch(n);
  batch_to_affine(jac.data(), out.data(), n, scratch.data());
  for (const auto& p : out)
    if (p.is_infinity()) throw std::logic_error("random walk hit infinity");
  return out;
}

}  // namespace pp::testdata
