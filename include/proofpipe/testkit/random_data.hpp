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

namespace pp::testdata {

inline Fr random_fr(std::mt19937_64& rng) {
  for (;;) {
    uint64_t c[4] = {rng(), rng(), rng(), rng() & ((uint64_t(1) << 63) - 1)};
    Fr r;
    if (Fr::from_canonical(r, c)) return r;
  }
}

inline std::vector<Fr> random_scalars(std::size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Fr> v(n);
  for (auto& k : v) k = random_fr(rng);
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

// Distinct subgroup points without one scalar multiplication each: a random walk over a few
// random multiples of the generator, with occasional doublings, normalised together.
template <class C>
std::vector<Affine<C>> random_points(std::size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Jacobian<C> steps[4];
  for (auto& s : steps) s = scalar_mul(generator<C>(), random_fr(rng));
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
