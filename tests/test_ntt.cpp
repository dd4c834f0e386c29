// SPDX-License-Identifier: Apache-2.0 OR MIT
// NTT tests: round trips, naive O(n^2) evaluation oracles, orders, cosets, domains, bit reversal.
#include <gtest/gtest.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <cstdint>
#include <iostream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "proofpipe/ntt/ntt.hpp"

namespace pp::test {
namespace {

constexpr uint64_t kSeed = 0x5eed'0417'0001ULL;
constexpr int kNaiveMaxLg = 8;      // O(n^2) oracles up to 256 points
constexpr int kSpotChecks = 12;     // Horner-evaluated outputs per transform above that
constexpr int kLargeSpotChecks = 5;  // at 2^18 and 2^20, where each Horner pass is O(n)

// Prints the seed once so a failing run can be reproduced with the same data.
class SeedEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { std::cout << "[ntt] random seed 0x" << std::hex << kSeed << std::dec << "\n"; }
};
const auto* const kSeedEnv = ::testing::AddGlobalTestEnvironment(new SeedEnvironment);

// The helpers serve both scalar fields (BLS12-381's Fr, BN254's): F is deduced or named.
template <class F = Fr>
F random_fr(std::mt19937_64& rng) {
  for (;;) {
    uint64_t x[4] = {rng(), rng(), rng(), rng() >> (256 - F::BITS)};
    F r;
    if (F::from_canonical(r, x)) return r;
  }
}

// Seeded per test, never all zero (a zero vector would pass any linear test).
template <class F = Fr>
std::vector<F> random_vec(std::size_t n, uint64_t salt) {
  std::mt19937_64 rng(kSeed ^ (salt * 0x9e3779b97f4a7c15ULL));
  std::vector<F> v(n);
  for (auto& x : v) x = random_fr<F>(rng);
  bool all_zero = true;
  for (const auto& x : v) all_zero = all_zero && x.is_zero();
  if (all_zero) v[0] = F::one();
  return v;
}

std::size_t rev(std::size_t x, int bits) {
  std::size_t r = 0;
  for (int i = 0; i < bits; ++i) r |= ((x >> i) & 1) << (bits - 1 - i);
  return r;
}

// Index of the value stored at position p for the given order.
std::size_t index_at(std::size_t p, Order o, int lg) { return o == Order::natural ? p : rev(p, lg); }

// Natural-order values laid out in order o (explicit permutation, independent of the library).
template <class F>
std::vector<F> arrange(const std::vector<F>& natural, Order o, int lg) {
  std::vector<F> out(natural.size());
  for (std::size_t p = 0; p < natural.size(); ++p) out[p] = natural[index_at(p, o, lg)];
  return out;
}

template <class F>
F horner(const std::vector<F>& coeffs, const F& x) {
  F acc = F::zero();
  for (std::size_t i = coeffs.size(); i-- > 0;) acc = acc * x + coeffs[i];
  return acc;
}

// Naive evaluation at shift·omega^j for all j: sum_i c_i (shift·omega^j)^i.
template <class F>
std::vector<F> naive_eval(const std::vector<F>& coeffs, const F& omega, const F& shift) {
  const std::size_t n = coeffs.size();
  std::vector<F> out(n);
  F x = shift;
  for (std::size_t j = 0; j < n; ++j) {
    F acc = F::zero(), xi = F::one();
    for (std::size_t i = 0; i < n; ++i) {
      acc += coeffs[i] * xi;
      xi *= x;
    }
    out[j] = acc;
    x *= omega;
  }
  return out;
}

// Vector equality that names the first differing position instead of printing 2^20 elements.
template <class F>
::testing::AssertionResult Same(const std::vector<F>& got, const std::vector<F>& want) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << "sizes " << got.size() << " vs " << want.size();
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i] && bad++ == 0) first = i;
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << got.size()
                                       << " elements differ, the first at position " << first;
}

const Order kOrders[] = {Order::natural, Order::bit_reversed};
const char* name(Order o) { return o == Order::natural ? "natural" : "bit_reversed"; }

using Transform = void (*)(std::span<Fr>, const Domain&, Order, Order);

// Checks out (in order o) against the evaluations at shift·omega^j: all of them for small
// domains, kSpotChecks seeded positions (Horner) above.
template <class F>
void expect_evaluations(const std::vector<F>& coeffs, const std::vector<F>& out, Order o,
                        const DomainOf<F>& d, const F& shift, int spot_checks = kSpotChecks) {
  const std::size_t n = d.size();
  if (d.lg() <= kNaiveMaxLg) {
    EXPECT_TRUE(Same(out, arrange(naive_eval(coeffs, d.omega(), shift), o, d.lg())));
    return;
  }
  std::mt19937_64 rng(kSeed + n);
  for (int s = 0; s < spot_checks; ++s) {
    const std::size_t p = s == 0 ? 0 : s == 1 ? n - 1 : rng() % n;
    const F x = shift * d.omega().pow_u64(index_at(p, o, d.lg()));
    EXPECT_EQ(out[p], horner(coeffs, x)) << "position " << p;
  }
}

class NttTest : public ::testing::TestWithParam<int> {
 protected:
  int lg() const { return GetParam(); }
  std::size_t n() const { return std::size_t(1) << lg(); }
};

TEST_P(NttTest, RoundTripAllOrders) {
  const Domain d(lg());
  const auto x = random_vec(n(), 100 + lg());
  for (Order in : kOrders)
    for (Order mid : kOrders)
      for (Order out : kOrders) {
        SCOPED_TRACE(std::string(name(in)) + " -> " + name(mid) + " -> " + name(out));
        auto a = arrange(x, in, lg());
        ntt(a, d, in, mid);
        intt(a, d, mid, out);
        EXPECT_TRUE(Same(a, arrange(x, out, lg())));
      }
}

TEST_P(NttTest, CosetRoundTripAllOrders) {
  const Domain d(lg());
  const auto x = random_vec(n(), 200 + lg());
  for (Order in : kOrders)
    for (Order mid : kOrders)
      for (Order out : kOrders) {
        SCOPED_TRACE(std::string(name(in)) + " -> " + name(mid) + " -> " + name(out));
        auto a = arrange(x, in, lg());
        coset_ntt(a, d, in, mid);
        coset_intt(a, d, mid, out);
        EXPECT_TRUE(Same(a, arrange(x, out, lg())));
      }
}

TEST_P(NttTest, ForwardMatchesEvaluation) {
  const Domain d(lg());
  const auto c = random_vec(n(), 300 + lg());
  for (Order in : kOrders)
    for (Order out : kOrders) {
      SCOPED_TRACE(std::string(name(in)) + " -> " + name(out));
      auto a = arrange(c, in, lg());
      ntt(a, d, in, out);
      expect_evaluations(c, a, out, d, Fr::one());
    }
}

TEST_P(NttTest, CosetForwardMatchesEvaluation) {
  const Domain d(lg());
  const auto c = random_vec(n(), 400 + lg());
  for (Order in : kOrders)
    for (Order out : kOrders) {
      SCOPED_TRACE(std::string(name(in)) + " -> " + name(out));
      auto a = arrange(c, in, lg());
      coset_ntt(a, d, in, out);
      expect_evaluations(c, a, out, d, d.generator());
    }
}

TEST_P(NttTest, Linearity) {
  const Domain d(lg());
  const auto x = random_vec(n(), 600 + lg());
  const auto y = random_vec(n(), 700 + lg());
  std::mt19937_64 rng(kSeed + 7 * lg());
  const Fr alpha = random_fr(rng), beta = random_fr(rng);
  std::vector<Fr> z(n());
  for (std::size_t i = 0; i < n(); ++i) z[i] = alpha * x[i] + beta * y[i];
  for (Transform f : {Transform(ntt), Transform(intt), Transform(coset_ntt), Transform(coset_intt)}) {
    auto fx = x, fy = y, fz = z;
    f(fx, d, Order::natural, Order::bit_reversed);
    f(fy, d, Order::natural, Order::bit_reversed);
    f(fz, d, Order::natural, Order::bit_reversed);
    for (std::size_t i = 0; i < n(); ++i) ASSERT_EQ(fz[i], alpha * fx[i] + beta * fy[i]) << i;
  }
}

TEST_P(NttTest, BitReversePermute) {
  const auto x = random_vec(n(), 800 + lg());
  auto a = x;
  bit_reverse_permute(a);
  EXPECT_TRUE(Same(a, arrange(x, Order::bit_reversed, lg())));
  bit_reverse_permute(a);
  EXPECT_TRUE(Same(a, x));
}

// snarkjs derives its roots from 5; the same code must work for any non-residue generator.
TEST_P(NttTest, SnarkjsGeneratorRoundTripAndEvaluation) {
  const Domain d(lg(), Domain::kSnarkjsGenerator);
  EXPECT_EQ(d.generator(), Fr::from_u64(5));
  const auto c = random_vec(n(), 900 + lg());
  for (Order in : kOrders)
    for (Order out : kOrders) {
      SCOPED_TRACE(std::string(name(in)) + " -> " + name(out));
      auto a = arrange(c, in, lg());
      ntt(a, d, in, out);
      expect_evaluations(c, a, out, d, Fr::one());
      intt(a, d, out, in);
      EXPECT_TRUE(Same(a, arrange(c, in, lg())));
      coset_ntt(a, d, in, out);
      expect_evaluations(c, a, out, d, d.generator());
      coset_intt(a, d, out, in);
      EXPECT_TRUE(Same(a, arrange(c, in, lg())));
    }
}

TEST_P(NttTest, DomainConstants) {
  const Domain d(lg());
  const Fr minus_one = -Fr::one();
  Fr x = d.omega();
  for (int i = 0; i < lg() - 1; ++i) x = x.sqr();
  EXPECT_EQ(x, minus_one);  // order exactly 2^lg
  EXPECT_TRUE(x.sqr().is_one());
  EXPECT_TRUE((d.omega() * d.omega_inv()).is_one());
  EXPECT_TRUE((d.generator() * d.generator_inv()).is_one());
  EXPECT_TRUE((Fr::from_u64(n()) * d.size_inv()).is_one());
  EXPECT_EQ(d.generator(), Fr::from_u64(7));
  EXPECT_EQ(Domain::at_least(n()).lg(), lg());
  EXPECT_EQ(Domain::at_least(n() + 1).lg(), lg() + 1);
  if (lg() > 1) {
    EXPECT_EQ(Domain::at_least(n() / 2 + 1).lg(), lg());
  }
}

TEST_P(NttTest, TwiddleTableIsBitReversedPowersAndShared) {
  const Domain d(lg());
  const auto t = d.twiddles();
  ASSERT_EQ(t.size(), n() / 2);
  Fr w = Fr::one();
  for (std::size_t k = 0; k < n() / 2; ++k) {
    ASSERT_EQ(t[rev(k, lg() - 1)], w) << k;
    w *= d.omega();
  }
  const Domain copy = d;
  EXPECT_EQ(copy.twiddles().data(), t.data());
}

TEST_P(NttTest, VanishingOnCoset) {
  const Domain d(lg());
  const Fr expected = d.generator().pow_u64(n()) - Fr::one();
  EXPECT_EQ(d.vanishing_on_coset(), expected);
  EXPECT_FALSE(expected.is_zero());  // g is not an n-th root of unity: Z is invertible there
  // Z(x) = x^n - 1 by repeated multiplication at coset points g·omega^j.
  const std::size_t points = std::min<std::size_t>(n(), 64);
  Fr x = d.generator();
  for (std::size_t j = 0; j < points; ++j) {
    Fr xn = Fr::one();
    for (std::size_t i = 0; i < n(); ++i) xn *= x;
    EXPECT_EQ(xn - Fr::one(), d.vanishing_on_coset()) << "j = " << j;
    x *= d.omega();
  }
}

// The result must not depend on how many threads run it.
TEST_P(NttTest, SingleThreadEqualsMultiThread) {
  const Domain d(lg());
  const auto x = random_vec(n(), 1000 + lg());
  auto a = x, b = x;
  coset_ntt(a, d, Order::natural, Order::bit_reversed);
  tbb::task_arena one(1);
  one.execute([&] { coset_ntt(b, d, Order::natural, Order::bit_reversed); });
  EXPECT_TRUE(Same(a, b));
}

INSTANTIATE_TEST_SUITE_P(Lg, NttTest, ::testing::Range(1, 17),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return "lg" + std::to_string(info.param);
                         });

// Oracles that are O(n^2) in every check, so only up to kNaiveMaxLg.
class NttNaiveTest : public NttTest {};

// The inverse against the oracle directly: intt of naive evaluations gives the coefficients.
TEST_P(NttNaiveTest, InverseOfEvaluationsGivesCoefficients) {
  const Domain d(lg());
  const auto c = random_vec(n(), 500 + lg());
  const auto evals = naive_eval(c, d.omega(), Fr::one());
  const auto coset_evals = naive_eval(c, d.omega(), d.generator());
  for (Order in : kOrders)
    for (Order out : kOrders) {
      SCOPED_TRACE(std::string(name(in)) + " -> " + name(out));
      auto a = arrange(evals, in, lg());
      intt(a, d, in, out);
      EXPECT_TRUE(Same(a, arrange(c, out, lg())));
      auto b = arrange(coset_evals, in, lg());
      coset_intt(b, d, in, out);
      EXPECT_TRUE(Same(b, arrange(c, out, lg())));
    }
}

INSTANTIATE_TEST_SUITE_P(Lg, NttNaiveTest, ::testing::Range(1, kNaiveMaxLg + 1),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return "lg" + std::to_string(info.param);
                         });

// Larger sizes exercise the blocked column/row phases with many tiles (Horner spot checks).
TEST(NttLarge, Lg18And20AllOrders) {
  for (int lg : {18, 20}) {
    SCOPED_TRACE("lg " + std::to_string(lg));
    const Domain d(lg);
    const auto c = random_vec(d.size(), 1100 + lg);
    for (Order in : kOrders)
      for (Order out : kOrders) {
        SCOPED_TRACE(std::string(name(in)) + " -> " + name(out));
        auto a = arrange(c, in, lg);
        ntt(a, d, in, out);
        expect_evaluations(c, a, out, d, Fr::one(), kLargeSpotChecks);
        intt(a, d, out, in);
        EXPECT_TRUE(Same(a, arrange(c, in, lg)));
        coset_ntt(a, d, in, out);
        expect_evaluations(c, a, out, d, d.generator(), kLargeSpotChecks);
        coset_intt(a, d, out, in);
        EXPECT_TRUE(Same(a, arrange(c, in, lg)));
      }
  }
}

TEST(NttDomain, RejectsOutOfRangeLg) {
  EXPECT_THROW(Domain(0), std::invalid_argument);
  EXPECT_THROW(Domain(33), std::invalid_argument);
  EXPECT_THROW(Domain(-1), std::invalid_argument);
  EXPECT_NO_THROW(Domain(32));  // the 2-adicity of Fr; the table is only built on use
}

TEST(NttDomain, RejectsSquareGenerator) {
  EXPECT_THROW(Domain(4, 4), std::invalid_argument);  // 4 = 2^2
  EXPECT_THROW(Domain(4, 0), std::invalid_argument);
  EXPECT_THROW(Domain(4, 1), std::invalid_argument);
}

TEST(NttDomain, AtLeastSmallSizes) {
  EXPECT_EQ(Domain::at_least(0).lg(), 1);
  EXPECT_EQ(Domain::at_least(1).lg(), 1);
  EXPECT_EQ(Domain::at_least(2).lg(), 1);
  EXPECT_EQ(Domain::at_least(3).lg(), 2);
  EXPECT_EQ(Domain::at_least(std::size_t(1) << 32).lg(), 32);
  EXPECT_THROW(Domain::at_least((std::size_t(1) << 32) + 1), std::invalid_argument);
}

// Roots of smaller domains are powers of larger ones: omega_k = omega_{k+1}^2 for one generator.
TEST(NttDomain, RootsAreConsistentAcrossSizes) {
  for (int lg = 1; lg < 32; ++lg) EXPECT_EQ(Domain(lg).omega(), Domain(lg + 1).omega().sqr()) << lg;
}

TEST(NttDomain, WrongSizeThrows) {
  const Domain d(4);
  std::vector<Fr> a(8, Fr::one());
  EXPECT_THROW(ntt(a, d), std::invalid_argument);
  EXPECT_THROW(intt(a, d), std::invalid_argument);
  EXPECT_THROW(coset_ntt(a, d), std::invalid_argument);
  EXPECT_THROW(coset_intt(a, d), std::invalid_argument);
}

TEST(NttBitReverse, RejectsNonPowerOfTwoAndKeepsSingleton) {
  std::vector<Fr> a(6, Fr::one());
  EXPECT_THROW(bit_reverse_permute(a), std::invalid_argument);
  std::vector<Fr> empty;
  EXPECT_THROW(bit_reverse_permute(empty), std::invalid_argument);
  std::vector<Fr> one{Fr::from_u64(3)};
  bit_reverse_permute(one);
  EXPECT_EQ(one[0], Fr::from_u64(3));
}

// Many tasks using a fresh Domain at once: the lazily built twiddle table must be built once
// and seen complete by all of them, including tasks nested in TBB's own workers.
TEST(NttDomain, ConcurrentFirstUseOfTwiddles) {
  const auto x = random_vec(std::size_t(1) << 14, 1300);
  auto expected = x;
  ntt(expected, Domain(14), Order::natural, Order::bit_reversed);
  const Domain d(14);
  std::vector<std::vector<Fr>> results(8, x);
  tbb::parallel_for(std::size_t(0), results.size(), [&](std::size_t i) {
    const Domain copy = d;
    ntt(results[i], copy, Order::natural, Order::bit_reversed);
  });
  for (const auto& r : results) EXPECT_TRUE(Same(r, expected));
}

// Values at the edges of the field (0, 1, r-1, r-2, (r±1)/2, 2^64k ± 1) stress the carries
// of the butterfly arithmetic that random data rarely reaches.
std::vector<Fr> edge_values() {
  std::vector<Fr> v = {Fr::zero(), Fr::one(), -Fr::one(), -Fr::from_u64(2)};
  const Fr half = Fr::from_u64(2).inverse();  // (r+1)/2
  v.push_back(half);
  v.push_back(half - Fr::one());  // (r-1)/2
  Fr two64 = Fr::from_u64(uint64_t(1) << 32).sqr();
  for (Fr p = two64; v.size() < 16; p *= two64) {
    v.push_back(p + Fr::one());
    v.push_back(p - Fr::one());
  }
  return v;
}

// Restores the default arithmetic even when an assertion fails.
struct AsmGuard {
  ~AsmGuard() { detail::ntt_allow_asm(true); }
};

TEST(NttArith, AsmAndPortablePathsAgreeOnEdgeValues) {
  std::cout << "[ntt] mulx/adx kernels " << (detail::ntt_uses_asm() ? "in use" : "unavailable") << "\n";
  AsmGuard guard;
  const auto edges = edge_values();
  for (int lg : {4, 8, 11, 14}) {
    SCOPED_TRACE("lg " + std::to_string(lg));
    const Domain d(lg);
    auto x = random_vec(d.size(), 1200 + lg);
    for (std::size_t i = 0; i < d.size(); ++i)
      if (i % 3 == 0) x[i] = edges[(i / 3) % edges.size()];
    for (Transform f : {Transform(ntt), Transform(intt), Transform(coset_ntt), Transform(coset_intt)})
      for (Order in : kOrders)
        for (Order out : kOrders) {
          auto fast = x, portable = x;
          detail::ntt_allow_asm(true);
          f(fast, d, in, out);
          detail::ntt_allow_asm(false);
          EXPECT_FALSE(detail::ntt_uses_asm());
          f(portable, d, in, out);
          EXPECT_TRUE(Same(fast, portable)) << name(in) << " -> " << name(out);
        }
    if (lg <= kNaiveMaxLg) {
      detail::ntt_allow_asm(true);
      auto a = x;
      ntt(a, d, Order::natural, Order::natural);
      EXPECT_TRUE(Same(a, naive_eval(x, d.omega(), Fr::one())));
      coset_intt(a = naive_eval(x, d.omega(), d.generator()), d);
      EXPECT_TRUE(Same(a, x));
    }
  }
}

// All-edge input (every element r-1 or similar) through every transform and back.
TEST(NttArith, EdgeOnlyRoundTrip) {
  const auto edges = edge_values();
  const Domain d(12);
  std::vector<Fr> x(d.size());
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = edges[(i * 7) % edges.size()];
  auto a = x;
  coset_ntt(a, d, Order::natural, Order::bit_reversed);
  coset_intt(a, d, Order::bit_reversed, Order::natural);
  EXPECT_TRUE(Same(a, x));
  std::vector<Fr> minus_one(d.size(), -Fr::one());
  a = minus_one;
  ntt(a, d);
  EXPECT_EQ(a[0], -Fr::from_u64(d.size()));
  for (std::size_t i = 1; i < a.size(); ++i) ASSERT_TRUE(a[i].is_zero()) << i;
}

// Known value: the delta at position 0 transforms to all ones, the constant 1 to n·delta.
TEST(NttKnown, DeltaAndConstant) {
  const Domain d(10);
  std::vector<Fr> a(d.size(), Fr::zero());
  a[0] = Fr::one();
  ntt(a, d);
  for (const auto& v : a) ASSERT_TRUE(v.is_one());
  ntt(a, d);
  EXPECT_EQ(a[0], Fr::from_u64(d.size()));
  for (std::size_t i = 1; i < a.size(); ++i) ASSERT_TRUE(a[i].is_zero()) << i;
}


// ------------------------------------------------------------------------------------------
// BN254's Fr: the same transforms from the same source (DomainOf<bn254::Fr>), against the same
// oracles. Its 2-adicity is 28 and snarkjs's generator 5 and bellman's 7 are both non-residues.

using Bn = bn254::Fr;

// Every order pair, plain and coset, for one generator: forward against the evaluations, inverse
// back to the coefficients.
void check_bn254_all_orders(int lg, uint64_t generator, int spot_checks) {
  const bn254::Domain d(lg, generator);
  EXPECT_EQ(d.generator(), Bn::from_u64(generator));
  const auto c = random_vec<Bn>(d.size(), 2000 + 37 * generator + lg);
  for (Order in : kOrders)
    for (Order out : kOrders) {
      SCOPED_TRACE(std::string(name(in)) + " -> " + name(out) + ", g = " + std::to_string(generator));
      auto a = arrange(c, in, lg);
      ntt(a, d, in, out);
      expect_evaluations(c, a, out, d, Bn::one(), spot_checks);
      intt(a, d, out, in);
      EXPECT_TRUE(Same(a, arrange(c, in, lg)));
      coset_ntt(a, d, in, out);
      expect_evaluations(c, a, out, d, d.generator(), spot_checks);
      coset_intt(a, d, out, in);
      EXPECT_TRUE(Same(a, arrange(c, in, lg)));
    }
}

class NttBn254Test : public NttTest {};

TEST_P(NttBn254Test, AllOrdersBothGeneratorsAgainstEvaluation) {
  for (uint64_t g : {bn254::Domain::kSnarkjsGenerator, bn254::Domain::kBellmanGenerator})
    check_bn254_all_orders(lg(), g, kSpotChecks);
}

TEST_P(NttBn254Test, DomainConstantsAndTwiddles) {
  const bn254::Domain d(lg(), bn254::Domain::kSnarkjsGenerator);
  Bn x = d.omega();
  for (int i = 0; i < lg() - 1; ++i) x = x.sqr();
  EXPECT_EQ(x, -Bn::one());  // order exactly 2^lg
  EXPECT_TRUE((d.omega() * d.omega_inv()).is_one());
  EXPECT_TRUE((Bn::from_u64(n()) * d.size_inv()).is_one());
  EXPECT_EQ(d.vanishing_on_coset(), d.generator().pow_u64(n()) - Bn::one());
  const auto t = d.twiddles();
  ASSERT_EQ(t.size(), n() / 2);
  Bn w = Bn::one();
  for (std::size_t k = 0; k < n() / 2; ++k) {
    ASSERT_EQ(t[rev(k, lg() - 1)], w) << k;
    w *= d.omega();
  }
  auto v = random_vec<Bn>(n(), 2500 + lg());
  auto b = v;
  bit_reverse_permute(b);
  EXPECT_TRUE(Same(b, arrange(v, Order::bit_reversed, lg())));
}

INSTANTIATE_TEST_SUITE_P(Lg, NttBn254Test, ::testing::Range(1, 15),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return "lg" + std::to_string(info.param);
                         });

TEST(NttBn254, LargeAllOrders) { check_bn254_all_orders(18, bn254::Domain::kSnarkjsGenerator, kLargeSpotChecks); }

TEST(NttBn254, DomainRangeIsTheTwoAdicity) {
  static_assert(bn254::Domain::kMaxLg == 28 && Domain::kMaxLg == 32);
  EXPECT_THROW(bn254::Domain(29), std::invalid_argument);
  EXPECT_THROW(bn254::Domain(0), std::invalid_argument);
  EXPECT_NO_THROW(bn254::Domain(28));
  EXPECT_THROW(bn254::Domain(4, 4), std::invalid_argument);  // a square
  EXPECT_THROW(bn254::Domain(4, 3), std::invalid_argument);  // 3 is a square mod BN254's r
  EXPECT_THROW(bn254::Domain::at_least((std::size_t(1) << 28) + 1), std::invalid_argument);
  for (int lg = 1; lg < 28; ++lg)
    EXPECT_EQ(bn254::Domain(lg, 5).omega(), bn254::Domain(lg + 1, 5).omega().sqr()) << lg;
}

}  // namespace
}  // namespace pp::test
