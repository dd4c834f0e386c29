// SPDX-License-Identifier: Apache-2.0 OR MIT
// The MSM's AVX-512 IFMA kernels (msm/simd.hpp) against GMP and the scalar curve code, and the
// MSM on both paths (vector and scalar) against the naive sum, for BLS12-381 and BN254 (typed
// suites over the curve pair). The kernel tests skip on a CPU without IFMA; the MSM tests then
// run the scalar path twice.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <vector>

#include "gmp_oracle.hpp"
#include "proofpipe/msm/fp_inverse.hpp"
#include "proofpipe/msm/msm.hpp"
#include "proofpipe/msm/simd.hpp"
#include "proofpipe/testkit/random_data.hpp"

namespace pp::test {
namespace {

constexpr uint64_t kSeed = 0x5eed'0000'1f3a'0018ULL;

uint64_t seed_for(uint64_t salt) {
  const uint64_t s = kSeed ^ (salt * 0x9e3779b97f4a7c15ULL);
  std::printf("[   seed   ] 0x%016llx\n", static_cast<unsigned long long>(s));
  return s;
}

// Restores the path in use when a test ends.
class SimdPath {
 public:
  explicit SimdPath(bool on) : was_(msm_simd::enabled()) { msm_simd::allow(on); }
  ~SimdPath() { msm_simd::allow(was_); }
  SimdPath(const SimdPath&) = delete;
  SimdPath& operator=(const SimdPath&) = delete;

 private:
  bool was_;
};

// The two curves' groups and fields.
struct Bls {
  using Fp = pp::Fp;
  using G1 = G1Curve;
  using G2 = G2Curve;
};
struct Bn {
  using Fp = bn254::Fp;
  using G1 = bn254::G1Curve;
  using G2 = bn254::G2Curve;
};

template <class F>
constexpr int kRBits = 64 * F::N;  // R = 2^kRBits

// The kernels work on the raw Montgomery limbs, so the edge values are raw limb patterns: 0, 1,
// 2, p-1, p-2, (p±1)/2, and 2^(52k)±1 and 2^(64k)±1 (the 52-bit and 64-bit limb boundaries).
template <class F>
std::vector<Mpz> raw_edges(bool nonzero) {
  const Mpz p = modulus_mpz<F>();
  std::vector<Mpz> out;
  auto add = [&](const Mpz& x) {
    Mpz r;
    mpz_mod(r.get(), x.get(), p.get());
    if (!nonzero || mpz_sgn(r.get()) != 0) out.push_back(r);
  };
  for (long v : {0L, 1L, 2L, -1L, -2L}) {
    Mpz x;
    mpz_set_si(x.get(), v);
    add(x);
  }
  Mpz half;
  mpz_sub_ui(half.get(), p.get(), 1);
  mpz_fdiv_q_2exp(half.get(), half.get(), 1);
  add(half);
  mpz_add_ui(half.get(), half.get(), 1);
  add(half);
  for (int bits : {52, 64})
    for (int k = 1; bits * k < kRBits<F>; ++k)
      for (long d : {-1L, 0L, 1L}) {
        Mpz x;
        mpz_setbit(x.get(), static_cast<mp_bitcnt_t>(bits * k));
        if (d < 0) mpz_sub_ui(x.get(), x.get(), 1);
        if (d > 0) mpz_add_ui(x.get(), x.get(), 1);
        add(x);
      }
  return out;
}

template <class F>
F raw(const Mpz& x) {
  F r;
  from_mpz<F::N>(r.l, x);
  return r;
}
template <class F>
Mpz raw_value(const F& a) {
  return to_mpz<F::N>(a.l);
}

template <class F>
F random_raw(std::mt19937_64& rng) {  // uniform raw limbs below p
  return raw<F>(value(random_element<F>(rng)));
}

// a·b·R^-1 mod p, the Montgomery product of raw values.
template <class F>
Mpz mont_oracle(const Mpz& a, const Mpz& b) {
  const Mpz p = modulus_mpz<F>();
  Mpz r, rinv;
  mpz_mul(r.get(), a.get(), b.get());
  mpz_set_ui(rinv.get(), 1);
  mpz_mul_2exp(rinv.get(), rinv.get(), kRBits<F>);
  mpz_invert(rinv.get(), rinv.get(), p.get());
  mpz_mul(r.get(), r.get(), rinv.get());
  mpz_mod(r.get(), r.get(), p.get());
  return r;
}

// The raw form of the inverse of the element whose raw form is x: R^2 / x mod p.
template <class F>
Mpz raw_inverse(const Mpz& x) {
  const Mpz p = modulus_mpz<F>();
  Mpz r;
  mpz_invert(r.get(), x.get(), p.get());
  mpz_mul_2exp(r.get(), r.get(), 2 * kRBits<F>);
  mpz_mod(r.get(), r.get(), p.get());
  return r;
}

template <class T>
class MsmSimdCurves : public ::testing::Test {};
using Curves = ::testing::Types<Bls, Bn>;
TYPED_TEST_SUITE(MsmSimdCurves, Curves);

TYPED_TEST(MsmSimdCurves, MulBatchMatchesGmp) {
  using F = typename TypeParam::Fp;
  if (!msm_simd::supported()) GTEST_SKIP() << "no AVX-512 IFMA on this CPU";
  const uint64_t seed = seed_for(1);
  std::mt19937_64 rng(seed);
  // Every pair of edge values (in one batch, so every lane and the tail group see them), then
  // random values at every batch length 1..33.
  const std::vector<Mpz> edges = raw_edges<F>(false);
  std::vector<F> a, b;
  for (const Mpz& x : edges)
    for (const Mpz& y : edges) {
      a.push_back(raw<F>(x));
      b.push_back(raw<F>(y));
    }
  for (std::size_t n = 1; n <= 33; ++n)
    for (std::size_t i = 0; i < n; ++i) {
      a.push_back(random_raw<F>(rng));
      b.push_back(i % 3 ? random_raw<F>(rng) : raw<F>(edges[rng() % edges.size()]));
    }
  std::vector<F> r(a.size());
  msm_simd::mul_batch(r.data(), a.data(), b.data(), a.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    ASSERT_EQ(raw_value(r[i]), mont_oracle<F>(raw_value(a[i]), raw_value(b[i])))
        << "i=" << i << " a=" << raw_value(a[i]).hex() << " b=" << raw_value(b[i]).hex();
  // In place (r aliasing a), in lengths that leave every tail size.
  for (std::size_t n : {1u, 7u, 8u, 9u, 15u, 16u, 17u}) {
    std::vector<F> x(a.begin(), a.begin() + long(n)), want(n);
    for (std::size_t i = 0; i < n; ++i) want[i] = raw<F>(mont_oracle<F>(raw_value(a[i]), raw_value(b[i])));
    msm_simd::mul_batch(x.data(), x.data(), b.data(), n);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(raw_value(x[i]), raw_value(want[i])) << "n=" << n;
  }
}

// BLS12-381's batches' scalar inversion (any CPU): edge raw values, random ones, zero.
TEST(MsmInverse, VartimeMatchesGmp) {
  const uint64_t seed = seed_for(7);
  std::mt19937_64 rng(seed);
  std::vector<Fp> xs;
  for (const Mpz& e : raw_edges<Fp>(true)) xs.push_back(raw<Fp>(e));
  // Enough random values to meet the rare endings (a negative d after the sign of f: ~0.07 %).
  for (int i = 0; i < 50000; ++i) xs.push_back(random_raw<Fp>(rng));
  for (int k = 0; k < 381; k += 7) {  // powers of two: long runs of even g
    Mpz x;
    mpz_setbit(x.get(), static_cast<mp_bitcnt_t>(k));
    xs.push_back(raw<Fp>(x));
  }
  for (const Fp& a : xs) {
    const Mpz x = raw_value(a);
    ASSERT_EQ(raw_value(msm_inverse::inverse_vartime(a)), raw_inverse<Fp>(x)) << "a=" << x.hex();
  }
  EXPECT_TRUE(msm_inverse::inverse_vartime(Fp::zero()).is_zero());
  EXPECT_EQ(msm_inverse::inverse_vartime(Fp::one()), Fp::one());
}

TYPED_TEST(MsmSimdCurves, InverseBatchMatchesGmp) {
  using F = typename TypeParam::Fp;
  if (!msm_simd::supported()) GTEST_SKIP() << "no AVX-512 IFMA on this CPU";
  const uint64_t seed = seed_for(2);
  std::mt19937_64 rng(seed);
  const std::vector<Mpz> edges = raw_edges<F>(true);
  msm_simd::Scratch scratch;
  for (std::size_t n : {1u, 2u, 7u, 8u, 9u, 16u, 17u, 31u, 64u, 65u, 1000u}) {
    std::vector<F> a(n);
    for (std::size_t i = 0; i < n; ++i) a[i] = i % 4 == 1 ? raw<F>(edges[rng() % edges.size()]) : random_raw<F>(rng);
    std::vector<F> r(n);
    msm_simd::inverse_batch(r.data(), a.data(), n, scratch);
    for (std::size_t i = 0; i < n; ++i)
      ASSERT_EQ(raw_value(r[i]), raw_inverse<F>(raw_value(a[i])))
          << "n=" << n << " i=" << i << " a=" << raw_value(a[i]).hex();
    msm_simd::inverse_batch(a.data(), a.data(), n, scratch);  // in place
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(raw_value(a[i]), raw_value(r[i])) << "in place, n=" << n;
  }
  // Every edge value in one batch.
  std::vector<F> a;
  for (const Mpz& e : edges) a.push_back(raw<F>(e));
  std::vector<F> r(a.size());
  msm_simd::inverse_batch(r.data(), a.data(), a.size(), scratch);
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(raw_value(r[i]), raw_inverse<F>(raw_value(a[i]))) << "edge " << i;
}

// Pair t adds points 2t and 2t + 1 into entry t, as the MSM's first level does; the oracle is the
// scalar Jacobian addition. Some pairs are a point and itself or its negation (equal x: the
// kernel must leave infinity for those marked special). `add_pairs`: the kernel under test.
template <class C, class AddPairs>
void add_pairs_cases(uint64_t seed, AddPairs&& add_pairs) {
  msm_simd::Scratch scratch;
  for (std::size_t pairs : {1u, 5u, 8u, 13u, 64u, 301u}) {
    std::vector<Affine<C>> pts = testdata::random_points<C>(2 * pairs, seed + pairs);
    std::vector<uint8_t> special((pairs + 7) / 8, 0);
    std::vector<Affine<C>> want(pairs);
    std::vector<uint32_t> in(pairs), out(pairs);
    for (std::size_t t = 0; t < pairs; ++t) {
      if (t % 11 == 3) pts[2 * t + 1] = pts[2 * t];
      if (t % 11 == 7) pts[2 * t + 1] = -pts[2 * t];
      in[t] = uint32_t(2 * t);
      out[t] = uint32_t(t);
      if (pts[2 * t + 1].x == pts[2 * t].x) {
        special[t / 8] |= uint8_t(1u << (t % 8));
        want[t] = Affine<C>::infinity();
      } else {
        want[t] = Jacobian<C>::from_affine(pts[2 * t]).add_mixed(pts[2 * t + 1]).to_affine();
      }
    }
    add_pairs(pts.data(), in.data(), out.data(), special.data(), pairs, scratch);
    for (std::size_t t = 0; t < pairs; ++t) {
      ASSERT_EQ(pts[t], want[t]) << "pairs=" << pairs << " t=" << t;
      if (!want[t].is_infinity()) {
        ASSERT_TRUE(pts[t].is_on_curve());
      }
    }
  }
}

TYPED_TEST(MsmSimdCurves, G1AddPairsMatchesScalar) {
  if (!msm_simd::supported()) GTEST_SKIP() << "no AVX-512 IFMA on this CPU";
  add_pairs_cases<typename TypeParam::G1>(seed_for(3), [](auto&&... args) { msm_simd::g1_add_pairs(args...); });
}

// The same for G2, whose kernel makes its keys (norms) itself.
TYPED_TEST(MsmSimdCurves, G2AddPairsMatchesScalar) {
  if (!msm_simd::supported()) GTEST_SKIP() << "no AVX-512 IFMA on this CPU";
  add_pairs_cases<typename TypeParam::G2>(seed_for(6), [](auto&&... args) { msm_simd::g2_add_pairs(args...); });
}

// The MSM on both paths against the naive sum, at sizes and windows that take the affine
// batches (and the split reduction), with a repeated point and a cancelling pair among random ones.
template <class C>
void msm_both_paths(uint64_t salt) {
  const uint64_t seed = seed_for(salt);
  for (std::size_t n : {300u, 2100u, 5000u}) {
    std::vector<Affine<C>> pts = testdata::random_points<C>(n, seed + n);
    std::vector<typename C::Scalar> ks = testdata::random_scalars<typename C::Scalar>(n, seed + n + 1);
    for (std::size_t i = 0; i + 1 < n; i += 97) pts[i + 1] = i % 2 ? pts[i] : -pts[i];
    for (std::size_t i = 0; i + 1 < n; i += 97) ks[i + 1] = ks[i];
    const Jacobian<C> want = msm_naive<C>(pts, ks);
    ASSERT_FALSE(want.is_infinity());
    for (bool simd : {true, false}) {
      SimdPath path(simd);
      for (int c : {0, 5, 8, 11}) {
        const Jacobian<C> got = msm<C>(pts, ks, MsmOptions{c});
        EXPECT_TRUE(got.is_on_curve());
        EXPECT_EQ(got, want) << "n=" << n << " window=" << c << " simd=" << msm_simd::enabled();
      }
    }
  }
}

TYPED_TEST(MsmSimdCurves, G1BothPathsMatchNaive) { msm_both_paths<typename TypeParam::G1>(4); }
TYPED_TEST(MsmSimdCurves, G2BothPathsMatchNaive) { msm_both_paths<typename TypeParam::G2>(5); }

TEST(MsmSimd, SwitchFollowsSupport) {
  {
    SimdPath on(true);
    EXPECT_EQ(msm_simd::enabled(), msm_simd::supported());
  }
  SimdPath off(false);
  EXPECT_FALSE(msm_simd::enabled());
}

}  // namespace
}  // namespace pp::test
