// SPDX-License-Identifier: Apache-2.0 OR MIT
// The CPU MSM over BN254's G1 and G2 (the same source as BLS12-381's): its lattice GLV split, its
// endomorphisms, and msm()/msm_sum()/batch_add() against the naive sum of scalar multiplications.
#include <gtest/gtest.h>
#include <tbb/task_arena.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "proofpipe/msm/glv.hpp"
#include "proofpipe/msm/msm.hpp"
#include "proofpipe/testkit/random_data.hpp"

namespace pp::test {
namespace {

using bn254::Fr;
using testdata::random_points;

constexpr uint64_t kSeed = 0x5eed'0000'bb25'4d00ULL;

uint64_t seed_for(uint64_t salt) {
  const uint64_t s = kSeed ^ (salt * 0x9e3779b97f4a7c15ULL);
  std::printf("[   seed   ] 0x%016llx\n", static_cast<unsigned long long>(s));
  return s;
}

std::vector<Fr> scalars(std::size_t n, uint64_t seed) { return testdata::random_scalars<Fr>(n, seed); }

Fr from_limbs(const uint64_t* l, int n) {
  uint64_t c[4] = {};
  for (int i = 0; i < n; ++i) c[i] = l[i];
  Fr r;
  if (!Fr::from_canonical(r, c)) throw std::logic_error("test scalar out of range");
  return r;
}

Fr lambda() { return from_limbs(glv::bn254_split::kLambda, 3); }

// ---------------------------------------------------------------------------------------------
// The split and the endomorphism.

TEST(GlvSplitBn254, RecombinesWithSignsAndStaysBelow128Bits) {
  const uint64_t seed = seed_for(1);
  std::mt19937_64 rng(seed);
  const Fr lam = lambda();
  EXPECT_EQ(lam * lam + lam + Fr::one(), Fr::zero());  // a cube root of unity
  std::vector<Fr> ks = {Fr::zero(), Fr::one(), -Fr::one(), lam, -lam, lam + Fr::one(), lam - Fr::one(),
                        lam * lam, Fr::from_u64(2).pow_u64(127), Fr::from_u64(2).pow_u64(128), -lam * lam};
  for (int i = 0; i < 20000; ++i) ks.push_back(testdata::random_fr<Fr>(rng));
  int negative1 = 0, negative2 = 0;
  for (const Fr& k : ks) {
    uint64_t c[4];
    k.to_canonical(c);
    const glv::Split s = glv::split_scalar<bn254::G1Curve>(c);
    ASSERT_EQ(s.k1[2] | s.k1[3] | s.k2[2] | s.k2[3], 0u);
    Fr k1 = from_limbs(s.k1, 2), k2 = from_limbs(s.k2, 2);
    if (s.neg1) k1 = -k1, ++negative1;
    if (s.neg2) k2 = -k2, ++negative2;
    ASSERT_EQ(k1 + k2 * lam, k) << "scalar #" << (&k - ks.data());
  }
  // k2 takes both signs on random scalars, so the sign handling is exercised; k1 never goes
  // negative (the rounded-down c_i leave k1 = δ1·a1 + δ2·a2 with δ_i >= 0), but is handled alike.
  EXPECT_EQ(negative1, 0);
  EXPECT_GT(negative2, 5000);
}

template <class C>
void expect_endomorphism_is_lambda(uint64_t salt) {
  const auto pts = random_points<C>(8, seed_for(salt));
  for (const auto& p : pts) {
    const Affine<C> q = glv::endo(p);
    EXPECT_TRUE(q.is_on_curve());
    EXPECT_EQ(Jacobian<C>::from_affine(q), scalar_mul(p, lambda()));
  }
  EXPECT_TRUE(glv::endo(Affine<C>::infinity()).is_infinity());
}
TEST(GlvSplitBn254, EndomorphismIsLambdaOnG1) { expect_endomorphism_is_lambda<bn254::G1Curve>(2); }
TEST(GlvSplitBn254, EndomorphismIsLambdaOnG2) { expect_endomorphism_is_lambda<bn254::G2Curve>(3); }

// ---------------------------------------------------------------------------------------------
// msm against the naive sum, on both groups.

template <class C>
class MsmBn254 : public ::testing::Test {};
using Curves = ::testing::Types<bn254::G1Curve, bn254::G2Curve>;
TYPED_TEST_SUITE(MsmBn254, Curves);

template <class C>
void expect_msm(const std::vector<Affine<C>>& pts, const std::vector<Fr>& ks, int window, const char* what) {
  const Jacobian<C> want = msm_naive<C>(pts, ks);
  const Jacobian<C> got = msm<C>(pts, ks, MsmOptions{window});
  EXPECT_TRUE(got.is_on_curve());
  EXPECT_EQ(got, want) << what << ": n=" << pts.size() << " window=" << window;
}

// Sizes 1..40 with the default window (the dense and sparse bucket paths).
TYPED_TEST(MsmBn254, SmallSizesMatchNaive) {
  using C = TypeParam;
  const uint64_t seed = seed_for(10);
  const auto pts = random_points<C>(40, seed);
  const auto ks = scalars(40, seed + 1);
  for (std::size_t n = 1; n <= pts.size(); ++n)
    expect_msm<C>({pts.begin(), pts.begin() + n}, {ks.begin(), ks.begin() + n}, 0, "prefix");
}

// Every window width at a size where the affine batches run for the small ones.
TYPED_TEST(MsmBn254, EveryWindowMatchesNaive) {
  using C = TypeParam;
  const uint64_t seed = seed_for(11);
  const std::size_t n = 700;
  const auto pts = random_points<C>(n, seed);
  const auto ks = scalars(n, seed + 1);
  const Jacobian<C> want = msm_naive<C>(pts, ks);
  for (int c = 1; c <= 16; ++c) EXPECT_EQ(msm<C>(pts, ks, MsmOptions{c}), want) << "window " << c;
}

// Large enough for affine batches with the default window, in several arenas (chunked windows).
TYPED_TEST(MsmBn254, AffineBatchesAndChunksMatchNaive) {
  using C = TypeParam;
  const uint64_t seed = seed_for(12);
  const std::size_t n = 5000;
  const auto pts = random_points<C>(n, seed);
  const auto ks = scalars(n, seed + 1);
  const Jacobian<C> want = msm_naive<C>(pts, ks);
  for (int threads : {1, 2, 5}) {
    tbb::task_arena arena(threads);
    arena.execute([&] {
      EXPECT_EQ(msm<C>(pts, ks, {}), want) << threads << " threads";
      EXPECT_EQ(msm<C>(pts, ks, MsmOptions{6}), want) << threads << " threads, window 6";
    });
  }
}

// Special scalars and points: zero, one, -1, repeated points (doublings inside the affine
// batches), a point beside its negation (cancellations), infinity mixed in.
TYPED_TEST(MsmBn254, SpecialScalarsAndPoints) {
  using C = TypeParam;
  const uint64_t seed = seed_for(13);
  const auto base = random_points<C>(64, seed);
  std::vector<Affine<C>> pts;
  std::vector<Fr> ks;
  for (std::size_t i = 0; i < 1200; ++i) {
    const Affine<C>& p = base[i % 7];
    pts.push_back(i % 5 == 0 ? -p : i % 11 == 0 ? Affine<C>::infinity() : p);
    ks.push_back(i % 3 == 0 ? Fr::one() : i % 3 == 1 ? -Fr::one() : Fr::from_u64(i));
  }
  for (int c : {0, 4, 9}) expect_msm<C>(pts, ks, c, "special");
  std::vector<Fr> zeros(pts.size(), Fr::zero());
  EXPECT_TRUE(msm<C>(pts, zeros).is_infinity());
  // The sum of P and -P with equal scalars vanishes.
  std::vector<Affine<C>> pair = {base[0], -base[0]};
  const Fr k = scalars(1, seed + 2)[0];
  EXPECT_TRUE(msm<C>(pair, std::vector<Fr>{k, k}).is_infinity());
  EXPECT_TRUE(msm<C>(std::vector<Affine<C>>{}, std::vector<Fr>{}).is_infinity());
  EXPECT_THROW(msm<C>(pair, std::vector<Fr>{k}), std::invalid_argument);
}

TYPED_TEST(MsmBn254, SumOfPartsIsOneMsm) {
  using C = TypeParam;
  const uint64_t seed = seed_for(14);
  const auto pts = random_points<C>(3000, seed);
  const auto ks = scalars(3000, seed + 1);
  const std::size_t cut[] = {0, 17, 17, 2100, 3000};  // an empty part included
  std::vector<MsmPart<C>> parts;
  for (int i = 0; i + 1 < 5; ++i)
    parts.push_back({std::span<const Affine<C>>(pts).subspan(cut[i], cut[i + 1] - cut[i]),
                     std::span<const Fr>(ks).subspan(cut[i], cut[i + 1] - cut[i])});
  EXPECT_EQ(msm_sum<C>(parts), msm_naive<C>(pts, ks));
}

TYPED_TEST(MsmBn254, BatchAddMatchesMaskedSum) {
  using C = TypeParam;
  const uint64_t seed = seed_for(15);
  std::mt19937_64 rng(seed);
  const std::size_t n = 1000;
  auto pts = random_points<C>(n, seed);
  pts[5] = Affine<C>::infinity();
  std::vector<uint64_t> bitmap((n + 63) / 64 + 1);
  for (auto& w : bitmap) w = rng();
  Jacobian<C> want = Jacobian<C>::infinity();
  for (std::size_t i = 0; i < n; ++i)
    if ((bitmap[i / 64] >> (i % 64)) & 1) want = want.add_mixed(pts[i]);
  EXPECT_EQ(batch_add<C>(pts, bitmap), want);
}

}  // namespace
}  // namespace pp::test
