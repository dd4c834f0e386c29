// SPDX-License-Identifier: Apache-2.0 OR MIT
// `proofpipe selfcheck`: a small end-to-end run of the arithmetic stack with a pass/fail table.
#include <fmt/core.h>

#include <array>
#include <chrono>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "commands.hpp"
#include "proofpipe/ec/bls12_381.hpp"
#include "proofpipe/io/serialize.hpp"
#include "proofpipe/pairing/pairing.hpp"

namespace pp::cli {
namespace {

Fr random_scalar(std::mt19937_64& rng) {
  uint64_t c[4] = {rng(), rng(), rng(), rng() & 0x3fffffffffffffffULL};
  Fr r;
  while (!Fr::from_canonical(r, c)) c[3] >>= 1;
  return r;
}

std::string hex(const uint8_t* p, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += fmt::format("{:02x}", p[i]);
  return s;
}

struct Check {
  const char* name;
  std::function<bool()> run;
};

}  // namespace

int run_selfcheck(const SelfcheckOptions& options) {
  std::mt19937_64 rng(options.seed);
  const int n = options.iterations;
  const G1Affine g1 = g1_generator();
  const G2Affine g2 = g2_generator();

  const std::vector<Check> checks = {
      {"Fp: a*b/b == a, (a+b)-b == a",
       [&] {
         for (int i = 0; i < n; ++i) {
           const Fp a = Fp::from_u64(rng()) * Fp::from_u64(rng()), b = Fp::from_u64(rng() | 1);
           if (a * b * b.inverse() != a || (a + b) - b != a) return false;
         }
         return true;
       }},
      {"Fr: a*b/b == a",
       [&] {
         for (int i = 0; i < n; ++i) {
           const Fr a = random_scalar(rng), b = random_scalar(rng);
           if (!b.is_zero() && a * b * b.inverse() != a) return false;
         }
         return true;
       }},
      {"Fp2: sqrt(a^2)^2 == a^2",
       [&] {
         for (int i = 0; i < n; ++i) {
           const Fp2 a{Fp::from_u64(rng()), Fp::from_u64(rng())};
           Fp2 s;
           if (!sqrt(s, a.sqr()) || s.sqr() != a.sqr()) return false;
         }
         return true;
       }},
      {"generators on curve, in subgroup",
       [&] { return g1.is_on_curve() && g2.is_on_curve() && is_in_subgroup(g1) && is_in_subgroup(g2); }},
      {"G1: Jacobian sum == XYZZ sum",
       [&] {
         G1Jacobian j = G1Jacobian::infinity();
         G1XYZZ x = G1XYZZ::infinity();
         G1Affine p = g1;
         for (int i = 0; i < n; ++i) {
           j = j.add_mixed(p);
           x = x.add_mixed(p);
           p = scalar_mul(p, random_scalar(rng)).to_affine();
         }
         return j.to_affine() == x.to_affine();
       }},
      {"G1/G2: (a+b)G == aG + bG",
       [&] {
         for (int i = 0; i < n / 8 + 1; ++i) {
           const Fr a = random_scalar(rng), b = random_scalar(rng);
           if (scalar_mul(g1, a + b) != scalar_mul(g1, a) + scalar_mul(g1, b)) return false;
           if (scalar_mul(g2, a + b) != scalar_mul(g2, a) + scalar_mul(g2, b)) return false;
         }
         return true;
       }},
      {"encodings: generator bytes, round trips",
       [&] {
         std::array<uint8_t, 48> c1;
         std::array<uint8_t, 96> c2;
         encode_g1_compressed(c1.data(), g1);
         encode_g2_compressed(c2.data(), g2);
         // Published compressed generators (zcash / IETF).
         if (hex(c1.data(), 4) != "97f1d3a7" || hex(c2.data(), 4) != "93e02b60") return false;
         for (int i = 0; i < n / 8 + 1; ++i) {
           const G1Affine p = scalar_mul(g1, random_scalar(rng)).to_affine();
           const G2Affine q = scalar_mul(g2, random_scalar(rng)).to_affine();
           std::array<uint8_t, 96> u1;
           std::array<uint8_t, 192> u2;
           encode_g1_compressed(c1.data(), p);
           encode_g1_uncompressed(u1.data(), p);
           encode_g2_compressed(c2.data(), q);
           encode_g2_uncompressed(u2.data(), q);
           G1Affine p1, p2;
           G2Affine q1, q2;
           if (decode_g1(p1, c1, SubgroupCheck::yes) != DecodeError::ok || p1 != p) return false;
           if (decode_g1(p2, u1, SubgroupCheck::yes) != DecodeError::ok || p2 != p) return false;
           if (decode_g2(q1, c2, SubgroupCheck::yes) != DecodeError::ok || q1 != q) return false;
           if (decode_g2(q2, u2, SubgroupCheck::yes) != DecodeError::ok || q2 != q) return false;
         }
         return true;
       }},
      {"pairing: e(aP, bQ) == e(P, Q)^(ab), e != 1",
       [&] {
         const Fr a = random_scalar(rng), b = random_scalar(rng);
         const Fp12 base = pairing(g1, g2);
         const Fp12 lhs = pairing(scalar_mul(g1, a).to_affine(), scalar_mul(g2, b).to_affine());
         uint64_t ab[4];
         (a * b).to_canonical(ab);
         const Fp12 rhs = base.pow(Limbs<4>{{ab[0], ab[1], ab[2], ab[3]}});
         return !(base == Fp12::one()) && lhs == rhs;
       }},
      {"multi-pairing: e(P, Q) e(-P, Q) == 1",
       [&] {
         const G1Affine p = scalar_mul(g1, random_scalar(rng)).to_affine();
         const std::array<G1Affine, 2> ps{p, -p};
         const std::array<G2Affine, 2> qs{g2, g2};
         return multi_pairing(ps, qs) == Fp12::one();
       }},
  };

  fmt::print("proofpipe selfcheck (seed {:#x}, {} iterations)\n", options.seed, n);
  fmt::print("{:<46} {:>6} {:>10}\n", "check", "result", "time");
  int failures = 0;
  for (const Check& c : checks) {
    const auto t0 = std::chrono::steady_clock::now();
    bool ok = false;
    try {
      ok = c.run();
    } catch (const std::exception& e) {
      fmt::print(stderr, "  {}: exception: {}\n", c.name, e.what());
    }
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    fmt::print("{:<46} {:>6} {:>8.1f}ms\n", c.name, ok ? "ok" : "FAIL", ms);
    failures += ok ? 0 : 1;
  }
  fmt::print("{}\n", failures == 0 ? "all checks passed" : fmt::format("{} check(s) FAILED", failures));
  return failures == 0 ? 0 : 1;
}

}  // namespace pp::cli
