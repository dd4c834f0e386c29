// SPDX-License-Identifier: Apache-2.0 OR MIT
// Writes the seed corpus of fuzz_params (tiny valid .params and VK files) into the directory given as argv[1].
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>

#include "proofpipe/io/key_cache.hpp"
#include "proofpipe/io/params.hpp"

using namespace pp;

namespace {

// Deterministic, so regenerating the corpus gives the same files.
Fr scalar(std::mt19937_64& rng) {
  for (;;) {
    uint64_t v[4];
    for (auto& w : v) w = rng();
    v[3] &= 0x7fffffffffffffffULL;
    Fr k;
    if (Fr::from_canonical(k, v) && !k.is_zero()) return k;
  }
}

ProvingKey key(uint64_t seed, std::size_t ic, std::size_t h, std::size_t l, std::size_t a, std::size_t b_g1,
               std::size_t b_g2) {
  std::mt19937_64 rng(seed);
  auto g1 = [&] { return scalar_mul(g1_generator(), scalar(rng)).to_affine(); };
  auto g2 = [&] { return scalar_mul(g2_generator(), scalar(rng)).to_affine(); };
  ProvingKey pk;
  pk.vk.alpha_g1 = g1();
  pk.vk.beta_g1 = g1();
  pk.vk.beta_g2 = g2();
  pk.vk.gamma_g2 = g2();
  pk.vk.delta_g1 = g1();
  pk.vk.delta_g2 = g2();
  for (std::size_t i = 0; i < ic; ++i) pk.vk.ic.push_back(g1());
  for (std::size_t i = 0; i < h; ++i) pk.h.push_back(g1());
  for (std::size_t i = 0; i < l; ++i) pk.l.push_back(g1());
  for (std::size_t i = 0; i < a; ++i) pk.a.push_back(g1());
  for (std::size_t i = 0; i < b_g1; ++i) pk.b_g1.push_back(g1());
  for (std::size_t i = 0; i < b_g2; ++i) pk.b_g2.push_back(g2());
  return pk;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  try {
    write_params(dir / "empty.params", key(1, 0, 0, 0, 0, 0, 0));           // 888 bytes
    write_params(dir / "one_each.params", key(2, 1, 1, 1, 1, 0, 1));        // 1464 bytes
    write_params(dir / "bellperson_silly.params", key(3, 2, 3, 2, 3, 1, 1));  // 2136 bytes
    ProvingKey inf = key(4, 1, 1, 0, 0, 0, 0);  // VK points may be infinity (bellperson)
    inf.vk.alpha_g1 = G1Affine::infinity();
    inf.vk.delta_g2 = G2Affine::infinity();
    write_params(dir / "vk_infinity.params", inf);
    write_vk(dir / "vk_only.vk", key(5, 1, 0, 0, 0, 0, 0).vk);  // 964 bytes, for parse_vk
    write_key_cache(dir / "empty.ppk", key(1, 0, 0, 0, 0, 0, 0));  // 8192 bytes (a cache is whole pages)
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
