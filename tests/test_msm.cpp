// SPDX-License-Identifier: Apache-2.0 OR MIT
// Pippenger msm() and batch_add() against the naive sum of scalar multiplications, G1 and G2.
#include <gtest/gtest.h>
#include <tbb/task_arena.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <ostream>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "proofpipe/msm/glv.hpp"
#include "proofpipe/msm/msm.hpp"
#include "proofpipe/msm/simd.hpp"
#include "proofpipe/testkit/random_data.hpp"

namespace pp {
// Failures print the affine point rather than a byte dump of the Jacobian struct.
template <class C>
void PrintTo(const Jacobian<C>& p, std::ostream* os) {
  if (p.is_infinity()) {
    *os << "infinity";
    return;
  }
  const Affine<C> a = p.to_affine();
  uint8_t buf[Fp::BYTES];
  auto hex = [&](const Fp& f) {
    f.to_bytes_be(buf);
    static const char* d = "0123456789abcdef";
    for (uint8_t b : buf) *os << d[b >> 4] << d[b & 15];
  };
  if constexpr (std::is_same_v<typename C::Field, Fp>) {
    *os << "(x=0x";
    hex(a.x);
    *os << ")";
  } else {
    *os << "(x.c0=0x";
    hex(a.x.c0);
    *os << ", x.c1=0x";
    hex(a.x.c1);
    *os << ")";
  }
}
}  // namespace pp

namespace pp::test {
namespace {

constexpr uint64_t kSeed = 0x5eed'0000'4d53'4d00ULL;

// Every randomised test derives its seed from kSeed and prints it, so a failure can be replayed.
uint64_t seed_for(uint64_t salt) {
  const uint64_t s = kSeed ^ (salt * 0x9e3779b97f4a7c15ULL);
  std::printf("[   seed   ] 0x%016llx\n", static_cast<unsigned long long>(s));
  return s;
}
#define PP_SEED(var, salt)   \
  const uint64_t var = seed_for(salt); \
  SCOPED_TRACE(::testing::Message() << "seed 0x" << std::hex << var)

Fr fr_from_limbs(uint64_t l0, uint64_t l1, uint64_t l2, uint64_t l3) {
  const uint64_t c[4] = {l0, l1, l2, l3};
  Fr r;
  if (!Fr::from_canonical(r, c)) throw std::logic_error("test scalar out of range");
  return r;
}

using testdata::generator;
using testdata::random_fr;
using testdata::random_points;
using testdata::random_scalars;

template <class C>
Jacobian<C> plain_sum(const std::vector<Affine<C>>& pts) {
  Jacobian<C> s = Jacobian<C>::infinity();
  for (const auto& p : pts) s = s.add_mixed(p);
  return s;
}

// msm with the given window against msm_naive; `want` is passed in when the caller has it
// cached (the naive sum dominates the test time).
template <class C>
void expect_msm(const std::vector<Affine<C>>& pts, const std::vector<Fr>& ks, int window,
                const Jacobian<C>& want) {
  const Jacobian<C> got = msm<C>(pts, ks, MsmOptions{window});
  EXPECT_TRUE(got.is_on_curve());
  EXPECT_EQ(got, want) << "n=" << pts.size() << " window=" << window;
}

// ---------------------------------------------------------------------------------------------
// Every size 1..64 with the default window (which itself walks through windows 1..4).

template <class C>
void check_size(std::size_t n) {
  PP_SEED(seed, 0x100 + n + (std::is_same_v<C, G2Curve> ? 0x1000 : 0));
  const auto pts = random_points<C>(n, seed);
  const auto ks = random_scalars(n, seed + 1);
  const Jacobian<C> want = msm_naive<C>(pts, ks);
  ASSERT_FALSE(want.is_infinity());
  expect_msm<C>(pts, ks, 0, want);
}

class MsmSizeG1 : public ::testing::TestWithParam<int> {};
TEST_P(MsmSizeG1, MatchesNaive) { check_size<G1Curve>(std::size_t(GetParam())); }
INSTANTIATE_TEST_SUITE_P(Sizes1To64, MsmSizeG1, ::testing::Range(1, 65));

class MsmSizeG2 : public ::testing::TestWithParam<int> {};
TEST_P(MsmSizeG2, MatchesNaive) { check_size<G2Curve>(std::size_t(GetParam())); }
INSTANTIATE_TEST_SUITE_P(Sizes1To64, MsmSizeG2, ::testing::Range(1, 65));

// ---------------------------------------------------------------------------------------------
// Every explicit window at a few sizes: tiny (sparse buckets, long runs of empty ones), around
// the bucket count of the middle windows, and large enough for point chunking across threads.

template <class C>
struct WindowCase {
  std::vector<Affine<C>> pts;
  std::vector<Fr> ks;
  Jacobian<C> want;
};

template <class C>
const WindowCase<C>& window_case(std::size_t n) {
  static std::map<std::size_t, WindowCase<C>> cache;
  auto it = cache.find(n);
  if (it == cache.end()) {
    const uint64_t seed = seed_for(0x200 + n + (std::is_same_v<C, G2Curve> ? 0x1000 : 0));
    WindowCase<C> wc{random_points<C>(n, seed), random_scalars(n, seed + 1), {}};
    wc.want = msm_naive<C>(wc.pts, wc.ks);
    it = cache.emplace(n, std::move(wc)).first;
  }
  return it->second;
}

using WindowParam = std::tuple<int, int>;  // window, size
std::string window_name(const ::testing::TestParamInfo<WindowParam>& info) {
  return "c" + std::to_string(std::get<0>(info.param)) + "_n" + std::to_string(std::get<1>(info.param));
}

class MsmWindowG1 : public ::testing::TestWithParam<WindowParam> {};
TEST_P(MsmWindowG1, MatchesNaive) {
  const auto [c, n] = GetParam();
  const auto& wc = window_case<G1Curve>(std::size_t(n));
  ASSERT_FALSE(wc.want.is_infinity());
  expect_msm<G1Curve>(wc.pts, wc.ks, c, wc.want);
}
INSTANTIATE_TEST_SUITE_P(Windows1To16, MsmWindowG1,
                         ::testing::Combine(::testing::Range(1, 17), ::testing::Values(3, 97, 700)),
                         window_name);
// The widest windows (up to 2^19 buckets) only at a small size: all the work is bucket scans.
INSTANTIATE_TEST_SUITE_P(Windows17To20, MsmWindowG1,
                         ::testing::Combine(::testing::Range(17, 21), ::testing::Values(97)), window_name);

class MsmWindowG2 : public ::testing::TestWithParam<WindowParam> {};
TEST_P(MsmWindowG2, MatchesNaive) {
  const auto [c, n] = GetParam();
  const auto& wc = window_case<G2Curve>(std::size_t(n));
  ASSERT_FALSE(wc.want.is_infinity());
  expect_msm<G2Curve>(wc.pts, wc.ks, c, wc.want);
}
INSTANTIATE_TEST_SUITE_P(Windows1To16, MsmWindowG2,
                         ::testing::Combine(::testing::Range(1, 17), ::testing::Values(5, 300)), window_name);

// ---------------------------------------------------------------------------------------------
// Larger G1 inputs (default windows 8 and 10 region, chunked across threads).

class MsmLargeG1 : public ::testing::TestWithParam<int> {};
TEST_P(MsmLargeG1, MatchesNaive) {
  const int lg = GetParam();
  PP_SEED(seed, 0x300 + lg);
  const std::size_t n = std::size_t(1) << lg;
  const auto pts = random_points<G1Curve>(n, seed);
  const auto ks = random_scalars(n, seed + 1);
  const G1Jacobian want = msm_naive<G1Curve>(pts, ks);
  ASSERT_FALSE(want.is_infinity());
  expect_msm<G1Curve>(pts, ks, 0, want);
  expect_msm<G1Curve>(pts, ks, msm_default_window(n) + 3, want);
}
INSTANTIATE_TEST_SUITE_P(Pow2, MsmLargeG1, ::testing::Values(10, 12),
                         [](const ::testing::TestParamInfo<int>& i) { return "n2e" + std::to_string(i.param); });

// ---------------------------------------------------------------------------------------------
// Windows of 1024 buckets and more with enough points for the affine batches: their bucket
// reduction splits the weights (j = s·h + l) and sums the buckets again with batch-affine
// additions into s and nb/s + 1 buckets. c = 11..13 at 2100 points (4200 after the split):
// 1024 buckets take the split, 2048 and 4096 the XYZZ buckets (under 4 points per bucket), so the
// windows on both sides of the threshold meet the same naive sum.

template <class C>
void check_split_reduction(uint64_t salt) {
  PP_SEED(seed, salt);
  const std::size_t n = 2100;
  const auto pts = random_points<C>(n, seed);
  const auto ks = random_scalars(n, seed + 1);
  const Jacobian<C> want = msm_naive<C>(pts, ks);
  ASSERT_FALSE(want.is_infinity());
  for (int c : {11, 12, 13}) expect_msm<C>(pts, ks, c, want);
}
TEST(MsmSplitReduction, G1MatchesNaive) { check_split_reduction<G1Curve>(0x500); }
TEST(MsmSplitReduction, G2MatchesNaive) { check_split_reduction<G2Curve>(0x501); }

// ---------------------------------------------------------------------------------------------
// msm splits the points of each window into chunks when there are more threads than windows.
// The arena's concurrency is what msm plans for, so a wide arena forces chunking even on a
// machine with few cores (TBB may warn that it caps the workers; the plan is what is tested).

using ArenaParam = std::tuple<int, int, int>;  // arena concurrency, size, window (0 = default)
class MsmChunkedG1 : public ::testing::TestWithParam<ArenaParam> {};
TEST_P(MsmChunkedG1, MatchesNaive) {
  const auto [threads, n, c] = GetParam();
  const auto& wc = window_case<G1Curve>(std::size_t(n));
  ASSERT_FALSE(wc.want.is_infinity());
  tbb::task_arena arena(threads);
  arena.execute([&] { expect_msm<G1Curve>(wc.pts, wc.ks, c, wc.want); });
}
INSTANTIATE_TEST_SUITE_P(Arenas, MsmChunkedG1,
                         ::testing::Combine(::testing::Values(1, 4, 16, 64), ::testing::Values(700, 3000),
                                            ::testing::Values(0, 5, 13)),
                         [](const ::testing::TestParamInfo<ArenaParam>& i) {
                           return "t" + std::to_string(std::get<0>(i.param)) + "_n" +
                                  std::to_string(std::get<1>(i.param)) + "_c" + std::to_string(std::get<2>(i.param));
                         });

TEST(MsmChunkedG2, MatchesNaive) {
  const auto& wc = window_case<G2Curve>(300);
  ASSERT_FALSE(wc.want.is_infinity());
  for (int threads : {16, 64}) {
    tbb::task_arena arena(threads);
    arena.execute([&] { expect_msm<G2Curve>(wc.pts, wc.ks, 4, wc.want); });
  }
}

// ---------------------------------------------------------------------------------------------
// msm_sum over several parts equals the MSM of their concatenation. The parts are read where
// they lie (not copied), so a window's point chunks cross from one part to the next and into
// the φ(P) half: empty parts, a one-point part, uneven sizes. The 1,400 GLV points take the
// affine bucket path at windows 2..8, the dense one at 10 and 13, and the sparse one at 13 in
// a 16-thread arena (chunks of ~64 points).

template <class C>
void check_parts(int threads, int window) {
  const auto& wc = window_case<C>(700);
  ASSERT_FALSE(wc.want.is_infinity());
  const std::size_t sizes[] = {0, 1, 298, 0, 350, 51};
  std::vector<MsmPart<C>> parts;
  std::size_t at = 0;
  for (std::size_t k : sizes) {
    parts.push_back({std::span<const Affine<C>>(wc.pts.data() + at, k), std::span<const Fr>(wc.ks.data() + at, k)});
    at += k;
  }
  ASSERT_EQ(at, wc.pts.size());
  tbb::task_arena arena(threads);
  arena.execute([&] {
    const Jacobian<C> got = msm_sum<C>(parts, MsmOptions{window});
    EXPECT_EQ(got, wc.want) << "threads=" << threads << " window=" << window;
  });
}

TEST(MsmSumParts, G1MatchesConcatenation) {
  for (int threads : {1, 3, 16})
    for (int window : {0, 2, 3, 5, 8, 10, 13}) check_parts<G1Curve>(threads, window);
}
TEST(MsmSumParts, G2MatchesConcatenation) {
  for (int threads : {1, 16})
    for (int window : {0, 3, 13}) check_parts<G2Curve>(threads, window);
}

// ---------------------------------------------------------------------------------------------
// Edge cases, for both groups.

template <class C>
class MsmEdge : public ::testing::Test {};
using Curves = ::testing::Types<G1Curve, G2Curve>;
TYPED_TEST_SUITE(MsmEdge, Curves);

TYPED_TEST(MsmEdge, EmptyInputIsInfinity) {
  using C = TypeParam;
  const std::vector<Affine<C>> pts;
  const std::vector<Fr> ks;
  EXPECT_TRUE(msm<C>(pts, ks).is_infinity());
  EXPECT_TRUE(msm_naive<C>(pts, ks).is_infinity());
}

// The naive oracle itself: with one base point the MSM collapses to (sum k_i)·G.
TYPED_TEST(MsmEdge, NaiveOracleIsLinear) {
  using C = TypeParam;
  PP_SEED(seed, 0x400);
  const auto ks = random_scalars(20, seed);
  const std::vector<Affine<C>> pts(ks.size(), generator<C>());
  Fr total = Fr::zero();
  for (const auto& k : ks) total += k;
  const Jacobian<C> want = scalar_mul(generator<C>(), total);
  ASSERT_FALSE(want.is_infinity());
  EXPECT_EQ(msm_naive<C>(pts, ks), want);
  EXPECT_EQ(msm<C>(pts, ks), want);
}

TYPED_TEST(MsmEdge, AllZeroScalarsGiveInfinity) {
  using C = TypeParam;
  PP_SEED(seed, 0x410);
  const auto pts = random_points<C>(70, seed);
  const std::vector<Fr> ks(pts.size(), Fr::zero());
  for (int c : {0, 1, 4, 7, 13}) EXPECT_TRUE(msm<C>(pts, ks, MsmOptions{c}).is_infinity()) << "window " << c;
}

TYPED_TEST(MsmEdge, ScalarOneIsPlainSum) {
  using C = TypeParam;
  PP_SEED(seed, 0x420);
  const auto pts = random_points<C>(45, seed);
  const std::vector<Fr> ks(pts.size(), Fr::one());
  const Jacobian<C> want = plain_sum(pts);
  ASSERT_FALSE(want.is_infinity());
  for (int c : {0, 1, 2, 5, 16}) expect_msm<C>(pts, ks, c, want);
  // A single point with scalar 1 is the point itself.
  const std::vector<Affine<C>> one_pt{pts[0]};
  const std::vector<Fr> one_k{Fr::one()};
  EXPECT_EQ(msm<C>(one_pt, one_k).to_affine(), pts[0]);
}

// r - 1 = -1: its digits are r-1's own carry pattern, and the result must be the negated sum.
TYPED_TEST(MsmEdge, ScalarMinusOneIsNegatedSum) {
  using C = TypeParam;
  PP_SEED(seed, 0x430);
  const auto pts = random_points<C>(33, seed);
  const Fr minus_one = -Fr::one();
  ASSERT_EQ(minus_one, fr_from_limbs(0xffffffff00000000ULL, 0x53bda402fffe5bfeULL, 0x3339d80809a1d805ULL,
                                     0x73eda753299d7d48ULL));
  const std::vector<Fr> ks(pts.size(), minus_one);
  const Jacobian<C> want = -plain_sum(pts);
  ASSERT_FALSE(want.is_infinity());
  for (int c = 1; c <= 16; ++c) expect_msm<C>(pts, ks, c, want);
  expect_msm<C>(pts, ks, 0, want);
}

// Equal points with equal digits land in one bucket: the mixed addition must double.
TYPED_TEST(MsmEdge, RepeatedIdenticalPoints) {
  using C = TypeParam;
  PP_SEED(seed, 0x440);
  const Affine<C> p = random_points<C>(1, seed)[0];
  const std::vector<Affine<C>> pts(40, p);
  // Same scalar everywhere (every bucket hit 40 times) and random scalars.
  std::mt19937_64 rng(seed + 1);
  const Fr k = random_fr(rng);
  const std::vector<Fr> same(pts.size(), k);
  const auto rnd = random_scalars(pts.size(), seed + 2);
  Fr total_same = Fr::zero(), total_rnd = Fr::zero();
  for (std::size_t i = 0; i < pts.size(); ++i) {
    total_same += k;
    total_rnd += rnd[i];
  }
  const Jacobian<C> want_same = scalar_mul(p, total_same), want_rnd = scalar_mul(p, total_rnd);
  ASSERT_FALSE(want_same.is_infinity());
  ASSERT_FALSE(want_rnd.is_infinity());
  for (int c : {0, 1, 3, 8, 12}) {
    expect_msm<C>(pts, same, c, want_same);
    expect_msm<C>(pts, rnd, c, want_rnd);
  }
}

// Enough points per bucket for the affine batch path (several per bucket, >= 256 per window),
// with every special case it routes to the XYZZ side sums: a point meeting itself (doubling),
// a point meeting its negation (cancellation), repeats across pairing levels, points at
// infinity and zero scalars.
TYPED_TEST(MsmEdge, AffineBatchesWithDoublingsAndCancellations) {
  using C = TypeParam;
  PP_SEED(seed, 0x448);
  const auto base = random_points<C>(150, seed);
  std::vector<Affine<C>> pts;
  std::vector<Fr> ks;
  std::mt19937_64 rng(seed + 1);
  const Fr k_same = random_fr(rng);
  for (std::size_t i = 0; i < base.size(); ++i) {
    pts.push_back(base[i]);
    ks.push_back(random_fr(rng));
    pts.push_back(base[i]);  // the same point twice with one scalar: a pair that doubles
    ks.push_back(k_same);
    pts.push_back(base[i]);
    ks.push_back(k_same);
    pts.push_back(-base[i]);  // then its negation and a third copy: a pair that cancels
    ks.push_back(k_same);
    pts.push_back(base[i]);
    ks.push_back(k_same);
  }
  for (int i = 0; i < 20; ++i) {
    pts.push_back(Affine<C>::infinity());
    ks.push_back(random_fr(rng));
    pts.push_back(base[std::size_t(i)]);
    ks.push_back(Fr::zero());
  }
  const Jacobian<C> want = msm_naive<C>(pts, ks);
  ASSERT_FALSE(want.is_infinity());
  for (int c = 2; c <= 7; ++c) expect_msm<C>(pts, ks, c, want);
  expect_msm<C>(pts, ks, 0, want);
}

// P and -P with the same scalar cancel inside a bucket; the rest of the sum must survive.
TYPED_TEST(MsmEdge, PointAndNegationCancel) {
  using C = TypeParam;
  PP_SEED(seed, 0x450);
  auto pts = random_points<C>(30, seed);
  auto ks = random_scalars(pts.size(), seed + 1);
  const Jacobian<C> want = msm_naive<C>(pts, ks);
  ASSERT_FALSE(want.is_infinity());
  for (int i = 0; i < 5; ++i) {
    pts.push_back(pts[std::size_t(i)]);
    pts.push_back(-pts[std::size_t(i)]);
    ks.push_back(ks[std::size_t(i) + 7]);
    ks.push_back(ks[std::size_t(i) + 7]);
  }
  for (int c : {0, 1, 4, 9}) expect_msm<C>(pts, ks, c, want);
}

TYPED_TEST(MsmEdge, InfinityPointsMixedIn) {
  using C = TypeParam;
  PP_SEED(seed, 0x460);
  auto pts = random_points<C>(90, seed);
  const auto ks = random_scalars(pts.size(), seed + 1);
  for (std::size_t i = 0; i < pts.size(); i += 3) pts[i] = Affine<C>::infinity();
  pts.back() = Affine<C>::infinity();
  const Jacobian<C> want = msm_naive<C>(pts, ks);
  ASSERT_FALSE(want.is_infinity());
  for (int c : {0, 1, 2, 6, 11}) expect_msm<C>(pts, ks, c, want);
  // Only infinities: infinity.
  const std::vector<Affine<C>> inf(17, Affine<C>::infinity());
  const auto ks17 = random_scalars(inf.size(), seed + 2);
  EXPECT_TRUE(msm<C>(inf, ks17).is_infinity());
}

// Scalars whose every window sits on the signed-digit boundary: exactly 2^(c-1) (largest
// positive digit, no carry), 2^(c-1)+1 (smallest value that borrows), 2^c-1 (borrow, then a
// window of 2^c after the carry), alternating patterns, and values next to r.
std::vector<Fr> boundary_scalars(int c) {
  std::vector<Fr> out;
  auto pattern = [&](auto window_value) {
    uint64_t l[4] = {};
    for (int w = 0; w * c < 254; ++w) {
      const uint64_t v = window_value(w);
      for (int b = 0; b < c; ++b) {
        const int bit = w * c + b;
        if (bit < 254 && ((v >> b) & 1)) l[bit / 64] |= uint64_t(1) << (bit % 64);
      }
    }
    out.push_back(fr_from_limbs(l[0], l[1], l[2], l[3]));  // < 2^254 < r
  };
  const uint64_t half = uint64_t(1) << (c - 1), full = (uint64_t(1) << c) - 1;
  pattern([&](int) { return half; });
  pattern([&](int) { return half + 1 <= full ? half + 1 : full; });
  pattern([&](int) { return full; });
  pattern([&](int w) { return w % 2 ? full : half; });
  pattern([&](int w) { return w % 2 ? half : half + (c > 1 ? 1 : 0); });
  out.push_back(-Fr::one());                   // r - 1
  out.push_back(-Fr::from_u64(2));             // r - 2
  out.push_back(-Fr::from_u64(half));          // r - 2^(c-1)
  out.push_back(Fr::from_u64(half));           // a lone boundary digit
  out.push_back(Fr::from_u64(half + 1));       // the smallest carry
  return out;
}

TYPED_TEST(MsmEdge, CarryBoundaryDigits) {
  using C = TypeParam;
  PP_SEED(seed, 0x470);
  const std::size_t per_pattern = 3;
  for (int c = 1; c <= 16; ++c) {
    const auto pat = boundary_scalars(c);
    std::vector<Fr> ks;
    for (const auto& k : pat)
      for (std::size_t j = 0; j < per_pattern; ++j) ks.push_back(k);
    const auto pts = random_points<C>(ks.size(), seed + uint64_t(c));
    const Jacobian<C> want = msm_naive<C>(pts, ks);
    ASSERT_FALSE(want.is_infinity());
    expect_msm<C>(pts, ks, c, want);
    // One scalar at a time too, so no other term can mask a wrong digit.
    for (std::size_t i = 0; i < pat.size(); ++i) {
      const std::vector<Affine<C>> p1{pts[i * per_pattern]};
      const std::vector<Fr> k1{pat[i]};
      expect_msm<C>(p1, k1, c, scalar_mul(p1[0], pat[i]));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The affine bucket accumulation (batches of pairwise additions sharing one inversion) and the
// GLV split. Every case has enough points per window (>= 256, >= 4 per bucket) for the affine
// path at the windows used, and forces what a batch cannot add with the affine formula: equal
// points in a bucket (a doubling), P and -P (a cancellation), at the first pairing level and
// at later ones.

template <class C>
Affine<C> negated(const Affine<C>& p) {
  return -p;
}

Fr lambda_fr() {
  return fr_from_limbs(glv::kLambda[0], glv::kLambda[1], 0, 0);
}

// phi acts as multiplication by lambda on both groups (kBeta<C> is the root that makes it so).
TYPED_TEST(MsmEdge, EndomorphismIsLambda) {
  using C = TypeParam;
  PP_SEED(seed, 0x480);
  const auto pts = random_points<C>(8, seed);
  for (const auto& p : pts) {
    const Affine<C> q = glv::endo(p);
    EXPECT_TRUE(q.is_on_curve());
    EXPECT_EQ(Jacobian<C>::from_affine(q), scalar_mul(p, lambda_fr()));
  }
  EXPECT_TRUE(glv::endo(Affine<C>::infinity()).is_infinity());
}

TEST(GlvSplit, RecombinesAndStaysBelow128Bits) {
  PP_SEED(seed, 0x490);
  std::mt19937_64 rng(seed);
  const Fr lam = lambda_fr();
  std::vector<Fr> ks = {Fr::zero(), Fr::one(), lam - Fr::one(), lam, lam + Fr::one(), lam * lam,
                        lam * lam - Fr::one(), lam + lam, -Fr::one(), -lam, -(lam + Fr::one())};
  for (int i = 0; i < 2000; ++i) ks.push_back(random_fr(rng));
  for (const Fr& k : ks) {
    uint64_t c[4], k1[4], k2[4];
    k.to_canonical(c);
    glv::split(c, k1, k2);
    EXPECT_EQ(k1[2] | k1[3] | k2[2] | k2[3], 0u);
    // k1 < lambda
    EXPECT_TRUE(k1[1] < glv::kLambda[1] || (k1[1] == glv::kLambda[1] && k1[0] < glv::kLambda[0]));
    EXPECT_EQ(fr_from_limbs(k1[0], k1[1], 0, 0) + fr_from_limbs(k2[0], k2[1], 0, 0) * lam, k);
  }
}

template <class C>
void expect_affine_case(const std::vector<Affine<C>>& pts, const std::vector<Fr>& ks, const char* what) {
  SCOPED_TRACE(what);
  const Jacobian<C> want = msm_naive<C>(pts, ks);
  for (int c : {3, 5, 7}) expect_msm<C>(pts, ks, c, want);
  expect_msm<C>(pts, ks, 0, want);
}

// One point 600 times with one scalar: every pair of every level in its buckets is a doubling.
TYPED_TEST(MsmEdge, AffineAllEqualPointsAndScalars) {
  using C = TypeParam;
  PP_SEED(seed, 0x4a0);
  const Affine<C> p = random_points<C>(1, seed)[0];
  std::mt19937_64 rng(seed + 1);
  const Fr k = random_fr(rng);
  const std::vector<Affine<C>> pts(600, p);
  const std::vector<Fr> same(pts.size(), k);
  Fr total = Fr::zero();
  for (std::size_t i = 0; i < pts.size(); ++i) total += k;
  const Jacobian<C> want = scalar_mul(p, total);
  ASSERT_FALSE(want.is_infinity());
  for (int c : {3, 5, 7, 0}) expect_msm<C>(pts, same, c, want);
  // The same point with scalar 1: one bucket, 600 copies (doublings all the way up).
  const std::vector<Fr> ones(pts.size(), Fr::one());
  for (int c : {3, 7, 0}) expect_msm<C>(pts, ones, c, scalar_mul(p, Fr::from_u64(600)));
}

// Random points, each followed by its negation with the same scalar: the whole sum cancels,
// pair by pair at the first level, and sums of them meet their negations at later levels.
TYPED_TEST(MsmEdge, AffineEveryPointCancelled) {
  using C = TypeParam;
  PP_SEED(seed, 0x4b0);
  const auto base = random_points<C>(200, seed);
  const auto kb = random_scalars(base.size(), seed + 1);
  std::vector<Affine<C>> pts;
  std::vector<Fr> ks;
  for (std::size_t i = 0; i < base.size(); ++i) {
    pts.push_back(base[i]);
    ks.push_back(kb[i]);
    pts.push_back(negated(base[i]));
    ks.push_back(kb[i]);
  }
  for (int c : {3, 5, 7, 0}) EXPECT_TRUE(msm<C>(pts, ks, MsmOptions{c}).is_infinity()) << "window " << c;
  // The same scalar everywhere: P and -P land in the same buckets of every window.
  const std::vector<Fr> same(pts.size(), kb[0]);
  for (int c : {3, 5, 7, 0}) EXPECT_TRUE(msm<C>(pts, same, MsmOptions{c}).is_infinity()) << "window " << c;
  // One uncancelled point on top: the result is that point's term alone.
  pts.push_back(base[0]);
  ks.push_back(kb[1]);
  expect_affine_case<C>(pts, ks, "all cancelled but one");
}

// A mix: duplicates, negations, infinities and zero scalars spread through random points, so
// the special pairs sit among ordinary ones in the same batches.
TYPED_TEST(MsmEdge, AffineMixedSpecialPairs) {
  using C = TypeParam;
  PP_SEED(seed, 0x4c0);
  std::mt19937_64 rng(seed);
  const auto base = random_points<C>(120, seed + 1);
  std::vector<Affine<C>> pts;
  std::vector<Fr> ks;
  const Fr k_same = random_fr(rng);
  for (std::size_t i = 0; i < base.size(); ++i) {
    switch (rng() % 6) {
      case 0:  // the point twice, same scalar
        pts.insert(pts.end(), {base[i], base[i]});
        ks.insert(ks.end(), {k_same, k_same});
        break;
      case 1:  // P, -P, P: one cancellation and a survivor
        pts.insert(pts.end(), {base[i], negated(base[i]), base[i]});
        ks.insert(ks.end(), {k_same, k_same, k_same});
        break;
      case 2:  // an infinity with a scalar, the point with scalar zero
        pts.insert(pts.end(), {Affine<C>::infinity(), base[i]});
        ks.insert(ks.end(), {random_fr(rng), Fr::zero()});
        break;
      default:
        pts.push_back(base[i]);
        ks.push_back(random_fr(rng));
    }
  }
  while (pts.size() < 300) {  // fill up with ordinary terms
    pts.push_back(base[pts.size() % base.size()]);
    ks.push_back(random_fr(rng));
  }
  expect_affine_case<C>(pts, ks, "mixed");
}

// The GLV halves collide with other inputs: P with scalar lambda becomes phi(P) with digit 1
// (k1 = 0, k2 = 1), the same as phi(P) given as an input with scalar 1: equal points in one
// bucket (a doubling); -phi(P) with scalar 1 cancels it instead.
TYPED_TEST(MsmEdge, AffineGlvHalvesMeetInputs) {
  using C = TypeParam;
  PP_SEED(seed, 0x4d0);
  const auto base = random_points<C>(160, seed);
  const Fr lam = lambda_fr();
  std::vector<Affine<C>> pts;
  std::vector<Fr> ks;
  for (std::size_t i = 0; i < base.size(); ++i) {
    pts.push_back(base[i]);
    ks.push_back(lam);
    pts.push_back(i % 2 ? glv::endo(base[i]) : negated(glv::endo(base[i])));
    ks.push_back(Fr::one());
  }
  expect_affine_case<C>(pts, ks, "phi(P) meets P·lambda");
  // Only the cancelling half: the sum is the other half's doubled points.
  std::vector<Affine<C>> even;
  std::vector<Fr> keven;
  for (std::size_t i = 0; i < pts.size(); i += 4) {
    even.insert(even.end(), {pts[i], pts[i + 1]});
    keven.insert(keven.end(), {ks[i], ks[i + 1]});
  }
  EXPECT_TRUE(msm_naive<C>(even, keven).is_infinity());
  for (int c : {2, 3, 0}) EXPECT_TRUE(msm<C>(even, keven, MsmOptions{c}).is_infinity()) << "window " << c;
}

TYPED_TEST(MsmEdge, SinglePointAnyScalar) {
  using C = TypeParam;
  PP_SEED(seed, 0x4e0);
  const Affine<C> p = random_points<C>(1, seed)[0];
  const Fr lam = lambda_fr();
  for (const Fr& k : {Fr::one(), Fr::from_u64(2), lam, lam + Fr::one(), lam - Fr::one(), -Fr::one(), -lam}) {
    const std::vector<Affine<C>> one_pt{p};
    const std::vector<Fr> one_k{k};
    for (int c : {0, 1, 4, 13}) expect_msm<C>(one_pt, one_k, c, scalar_mul(p, k));
  }
  const std::vector<Affine<C>> one_pt{p};
  EXPECT_TRUE(msm<C>(one_pt, std::vector<Fr>{Fr::zero()}).is_infinity());
  const std::vector<Affine<C>> inf{Affine<C>::infinity()};
  EXPECT_TRUE(msm<C>(inf, std::vector<Fr>{Fr::one()}).is_infinity());
}

TYPED_TEST(MsmEdge, MismatchedLengthsThrow) {
  using C = TypeParam;
  const std::vector<Affine<C>> pts(3, generator<C>());
  const std::vector<Fr> ks(2, Fr::one());
  EXPECT_THROW(msm<C>(pts, ks), std::invalid_argument);
  EXPECT_THROW(msm_naive<C>(pts, ks), std::invalid_argument);
  const std::vector<Fr> ks3(3, Fr::one());
  EXPECT_THROW(msm<C>(pts, ks3, MsmOptions{21}), std::invalid_argument);
  EXPECT_THROW(msm<C>(pts, ks3, MsmOptions{-1}), std::invalid_argument);
}

// CTest runs this file twice, the second time with PROOFPIPE_MSM_SIMD=0 (the portable path):
// each run must be on the path it claims, or one path would go untested.
TEST(MsmPath, FollowsTheEnvironment) {
  const char* e = std::getenv("PROOFPIPE_MSM_SIMD");
  const bool off = e && std::strcmp(e, "0") == 0;
  EXPECT_EQ(msm_simd::enabled(), msm_simd::supported() && !off);
  std::printf("[   path   ] %s\n", msm_simd::enabled() ? "AVX-512 IFMA" : "scalar");
}

TEST(MsmDefaultWindow, InRangeAndNonDecreasing) {
  int prev = 1;
  for (std::size_t n = 1; n <= (std::size_t(1) << 24); n = n * 3 / 2 + 1) {
    const int c = msm_default_window(n);
    EXPECT_GE(c, 1);
    EXPECT_LE(c, 20);
    EXPECT_GE(c, prev) << "n=" << n;
    prev = c;
  }
  prev = 1;
  for (std::size_t n = 1; n <= (std::size_t(1) << 24); n = n * 3 / 2 + 1) {
    const int c = msm_default_window_g2(n);
    EXPECT_GE(c, 1);
    EXPECT_LE(c, 20);
    EXPECT_GE(c, prev) << "G2, n=" << n;
    prev = c;
  }
}

// ---------------------------------------------------------------------------------------------
// batch_add

template <class C>
Jacobian<C> masked_sum(const std::vector<Affine<C>>& pts, const std::vector<uint64_t>& bm) {
  Jacobian<C> s = Jacobian<C>::infinity();
  for (std::size_t i = 0; i < pts.size(); ++i)
    if ((bm[i / 64] >> (i % 64)) & 1) s = s.add_mixed(pts[i]);
  return s;
}

template <class C>
class BatchAdd : public ::testing::Test {};
TYPED_TEST_SUITE(BatchAdd, Curves);

TYPED_TEST(BatchAdd, RandomBitmapsMatchNaive) {
  using C = TypeParam;
  PP_SEED(seed, 0x500);
  std::mt19937_64 rng(seed);
  const auto all = random_points<C>(5000, seed + 1);
  for (std::size_t n : {1, 2, 63, 64, 65, 127, 1000, 1025, 4097, 5000}) {
    const std::vector<Affine<C>> pts(all.begin(), all.begin() + std::ptrdiff_t(n));
    for (int density : {10, 50, 90}) {
      std::vector<uint64_t> bm((n + 63) / 64, 0);
      for (std::size_t i = 0; i < n; ++i)
        if (int(rng() % 100) < density) bm[i / 64] |= uint64_t(1) << (i % 64);
      bm[0] |= 1;  // never all-zero
      const Jacobian<C> want = masked_sum(pts, bm);
      ASSERT_FALSE(want.is_infinity());
      EXPECT_EQ(batch_add<C>(pts, bm), want) << "n=" << n << " density=" << density;
    }
  }
}

TYPED_TEST(BatchAdd, EmptyBitmapIsInfinity) {
  using C = TypeParam;
  PP_SEED(seed, 0x510);
  const auto pts = random_points<C>(200, seed);
  const std::vector<uint64_t> bm(4, 0);
  EXPECT_TRUE(batch_add<C>(pts, bm).is_infinity());
  const std::vector<Affine<C>> none;
  const std::vector<uint64_t> no_words;
  EXPECT_TRUE(batch_add<C>(none, no_words).is_infinity());
}

TYPED_TEST(BatchAdd, FullBitmapIsPlainSum) {
  using C = TypeParam;
  PP_SEED(seed, 0x520);
  for (std::size_t n : {64, 200, 3000}) {
    const auto pts = random_points<C>(n, seed + n);
    const std::vector<uint64_t> bm((n + 63) / 64, ~uint64_t(0));  // bits past n set too
    const Jacobian<C> want = plain_sum(pts);
    ASSERT_FALSE(want.is_infinity());
    EXPECT_EQ(batch_add<C>(pts, bm), want) << "n=" << n;
  }
}

// Sizes that are not a multiple of 64: bits past the last point are ignored, a longer bitmap is
// accepted, and points at infinity under a set bit add nothing.
TYPED_TEST(BatchAdd, TailBitsAndInfinity) {
  using C = TypeParam;
  PP_SEED(seed, 0x530);
  auto pts = random_points<C>(130, seed);
  pts[5] = Affine<C>::infinity();
  std::vector<uint64_t> bm{0x00ff00ff00ff00ffULL, 0xf0f0f0f0f0f0f0f0ULL, 0x3ULL};
  const Jacobian<C> want = masked_sum(pts, bm);
  ASSERT_FALSE(want.is_infinity());
  bm[2] |= ~uint64_t(3);  // bits 130.. of the last word
  EXPECT_EQ(batch_add<C>(pts, bm), want);
  bm.push_back(~uint64_t(0));  // an extra word
  EXPECT_EQ(batch_add<C>(pts, bm), want);
}

// The bitmap half of the split MSM must agree with msm over 0/1 scalars.
TYPED_TEST(BatchAdd, AgreesWithMsmOfBits) {
  using C = TypeParam;
  PP_SEED(seed, 0x540);
  std::mt19937_64 rng(seed);
  const auto pts = random_points<C>(300, seed + 1);
  std::vector<uint64_t> bm((pts.size() + 63) / 64);
  for (auto& w : bm) w = rng();
  std::vector<Fr> ks(pts.size());
  for (std::size_t i = 0; i < pts.size(); ++i) ks[i] = ((bm[i / 64] >> (i % 64)) & 1) ? Fr::one() : Fr::zero();
  const Jacobian<C> want = msm<C>(pts, ks);
  ASSERT_FALSE(want.is_infinity());
  EXPECT_EQ(batch_add<C>(pts, bm), want);
}

TYPED_TEST(BatchAdd, ShortBitmapThrows) {
  using C = TypeParam;
  const std::vector<Affine<C>> pts(65, generator<C>());
  const std::vector<uint64_t> bm(1, ~uint64_t(0));
  EXPECT_THROW(batch_add<C>(pts, bm), std::invalid_argument);
  const std::vector<uint64_t> none;
  const std::vector<Affine<C>> one(1, generator<C>());
  EXPECT_THROW(batch_add<C>(one, none), std::invalid_argument);
}

}  // namespace
}  // namespace pp::test
