// SPDX-License-Identifier: Apache-2.0 OR MIT
// The GPU kernels' CPU twins (the same kernel bodies run in host loops) against the library's
// independent CPU code: pp::ntt for the transforms, msm_naive / batch_add for the MSMs. What
// passes here is the algorithm the GPU runs; the H200 harness then checks GPU == twin.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "ntt_kernels.hpp"  // src/gpu: the bodies the twins run (round_of, round_map, *_step_element)
#include "proofpipe/gpu/msm.hpp"
#include "proofpipe/gpu/ntt.hpp"
#include "proofpipe/gpu/prover.hpp"
#include "proofpipe/msm/msm.hpp"
#include "proofpipe/testkit/random_data.hpp"

namespace pp::test {
namespace {

using gpu::Direction;
using testdata::random_points;
using testdata::random_scalars;

constexpr uint64_t kSeed = 0x7477'696e'0000'0001ULL;  // "twin"

// ---------------------------------------------------------------- plan

TEST(GpuNttPlan, CoversEveryLevelWithinBlockLimits) {
  for (int lg = 1; lg <= gpu::kMaxNttLg; ++lg) {
    const gpu::NttPlan plan = gpu::make_ntt_plan(lg);
    EXPECT_LE(plan.count, 3) << "lg " << lg;
    int top = lg;
    for (int i = 0; i < plan.count; ++i) {
      const gpu::NttPass& p = plan.pass[i];
      SCOPED_TRACE("lg " + std::to_string(lg) + " pass " + std::to_string(i));
      EXPECT_EQ(p.m + p.k, top);
      EXPECT_GE(p.k, 1);
      EXPECT_LE(p.k, gpu::kMaxPassLg);
      EXPECT_LE(p.elements_per_block(), uint32_t(gpu::kBlockElements));
      EXPECT_LE(p.cols(), 1u << p.m);
      // blocks for every SM (an H100 has 132): at least 256, or one column a block
      EXPECT_TRUE(p.blocks() >= 256 || p.cols_lg == 0) << p.blocks() << " blocks";
      // the thread shape: 2 elements up to 2^kSmallNttLg (too few elements to fill the warps), 4 above
      EXPECT_EQ(p.thread_lg, lg <= gpu::kSmallNttLg ? gpu::kSmallThreadLg : gpu::kThreadLg);
      // below the top pass, twists come from the default direct table (one load, no product)
      if (i > 0 && p.m > 0) {
        EXPECT_LE(p.m + p.k, gpu::kTwistTableLg);
      }
      top = p.m;
    }
    // Levels come in whole rounds: at most one pass ends on a round of fewer levels than a
    // thread's (a round costs its shared-memory trips whatever it runs; 22 = 8 + 8 + 6, not 8 + 7 + 7).
    int partial = 0;
    for (int i = 0; i < plan.count; ++i) partial += plan.pass[i].k % plan.pass[i].thread_lg != 0;
    EXPECT_LE(partial, 1) << "lg " << lg;
    EXPECT_EQ(top, 0) << "lg " << lg;
  }
}

TEST(GpuNttPlan, GlobalIndexVisitsEveryElementOnce) {
  for (int lg : {1, 5, 11, 14, 16})
    for (int min_blocks : {0, gpu::kMinPassBlocksLg}) {
      const gpu::NttPlan plan = gpu::make_ntt_plan(lg, gpu::kMaxPassLg, min_blocks);
      for (int i = 0; i < plan.count; ++i) {
        const gpu::NttPass& p = plan.pass[i];
        std::vector<int> seen(std::size_t(1) << lg, 0);
        for (uint64_t b = 0; b < p.blocks(); ++b)
          for (uint32_t e = 0; e < p.elements_per_block(); ++e) ++seen[p.global_index(b, e)];
        for (int s : seen) ASSERT_EQ(s, 1) << "lg " << lg << " pass " << i << " min blocks 2^" << min_blocks;
      }
    }
}

// Within a pass, every round's threads hold every element of the block exactly once (in registers
// that pair positions 2^j apart at each level they run), and the rounds run each level once.
TEST(GpuNttPlan, RoundsCoverEveryElementAndLevelOnce) {
  for (int lg : {1, 2, 3, 5, 8, 11, 17, 24, 27, 28})
    for (int max_pass : {2, 3, 7, gpu::kMaxPassLg})
      for (int min_blocks : {0, gpu::kMinPassBlocksLg})
        for (int thread_lg : {gpu::kSmallThreadLg, gpu::kThreadLg}) {
          const gpu::NttPlan plan = gpu::make_ntt_plan(lg, max_pass, min_blocks, thread_lg);
          for (int i = 0; i < plan.count; ++i) {
            const gpu::NttPass& p = plan.pass[i];
            SCOPED_TRACE("lg " + std::to_string(lg) + " max " + std::to_string(max_pass) + " min blocks 2^" +
                         std::to_string(min_blocks) + " thread_lg " + std::to_string(thread_lg) + " pass " +
                         std::to_string(i));
            for (bool dif : {true, false}) {
              std::vector<int> levels(std::size_t(p.k), 0);
              for (int r = 0; r < p.rounds(); ++r) {
                const gpu::NttRound rd = gpu::round_of(p, dif, r, p.thread_lg);
                ASSERT_LE(rd.lo + rd.bits, p.k);
                for (int j = rd.level_lo; j < rd.level_hi; ++j) {
                  ASSERT_GE(j, rd.lo);
                  ASSERT_LT(j, rd.lo + rd.bits);
                  ++levels[std::size_t(j)];
                }
                std::vector<int> seen(p.elements_per_block(), 0);
                for (uint32_t tid = 0; tid < p.threads_per_block(); ++tid) {
                  const gpu::RoundMap map = gpu::round_map(p, rd, tid, p.thread_lg);
                  for (int q = 0; q < (1 << p.thread_lg); ++q) {
                    if (!map.valid(q)) continue;
                    ASSERT_LT(map.pos(q), p.K());
                    ++seen[map.element(q, p.cols_lg)];
                    for (int d = 0; d < rd.bits; ++d)
                      if (!(q & (1 << d))) {
                        ASSERT_EQ(map.pos(q | (1 << d)), map.pos(q) + (1u << (rd.lo + d)));
                        ASSERT_EQ(map.col(q | (1 << d)), map.col(q));
                      }
                  }
                }
                for (int c : seen) ASSERT_EQ(c, 1) << (dif ? "DIF" : "DIT") << " round " << r;
              }
              for (int c : levels) ASSERT_EQ(c, 1) << (dif ? "DIF" : "DIT");
            }
          }
        }
}

// ---------------------------------------------------------------- NTT

// Each scalar's canonical integer in its limbs (the input form of MsmShape::canonical).
template <class S>
std::vector<S> canonical_limbs(const std::vector<S>& ks) {
  std::vector<S> out(ks.size());
  for (std::size_t i = 0; i < ks.size(); ++i) out[i] = ks[i].canonical_limbs();
  return out;
}

// The reference: pp's CPU transforms with the same orders.
template <class F>
void reference(std::vector<F>& a, const DomainOf<F>& d, const gpu::NttOp& op) {
  if (op.dir == Direction::forward) {
    if (op.coset) coset_ntt(a, d, op.in, op.out);
    else ntt(a, d, op.in, op.out);
  } else {
    if (op.coset) coset_intt(a, d, op.in, op.out);
    else intt(a, d, op.in, op.out);
  }
}

// Every order, direction and coset of the twin against pp's transforms, for one plan and table,
// over F (BLS12-381's Fr by default, or BN254's).
template <class F = Fr>
void check_every_op(int lg, int max_pass, int twist_lg, int min_blocks_lg = gpu::kMinPassBlocksLg, int thread_lg = 0) {
  const DomainOf<F> d(lg);
  const auto x = random_scalars<F>(d.size(), kSeed + lg);
  for (Direction dir : {Direction::forward, Direction::inverse})
    for (Order in : {Order::natural, Order::bit_reversed})
      for (Order out : {Order::natural, Order::bit_reversed})
        for (bool coset : {false, true}) {
          const gpu::NttOp op{dir, in, out, coset};
          SCOPED_TRACE(::testing::Message() << "lg " << lg << " dir " << int(dir) << " in " << int(in) << " out "
                                            << int(out) << " coset " << coset << " thread_lg " << thread_lg);
          auto want = x, got = x;
          reference(want, d, op);
          gpu::ntt_twin(got, d, gpu::roots_of(d), op, max_pass, twist_lg, min_blocks_lg, thread_lg);
          ASSERT_EQ(got, want);
          if (dir == Direction::inverse) {
            // The same transform with its output left as canonical integers.
            gpu::NttOp plain = op;
            plain.canonical_out = true;
            got = x;
            gpu::ntt_twin(got, d, gpu::roots_of(d), plain, max_pass, twist_lg, min_blocks_lg, thread_lg);
            ASSERT_EQ(got, canonical_limbs(want));
          }
          // The 1/n moved between transforms: a forward that takes it gives want / n, an inverse
          // that defers it n·want (the transforms are linear).
          gpu::NttOp moved = op;
          F factor;
          if (dir == Direction::forward) {
            moved.take_size_inv = true;
            factor = d.size_inv();
          } else if (!coset) {
            moved.defer_size_inv = true;
            factor = F::from_u64(d.size());
          } else {
            continue;
          }
          got = x;
          gpu::ntt_twin(got, d, gpu::roots_of(d), moved, max_pass, twist_lg, min_blocks_lg, thread_lg);
          for (auto& v : want) v = v * factor;
          ASSERT_EQ(got, want) << (dir == Direction::forward ? "take_size_inv" : "defer_size_inv");
        }
}

// (log size, levels per pass): the GPU's own plans up to 2^14, and plans of 2..6 passes at
// small sizes through narrower passes; each with the GPU's block shapes (one column a block at
// these sizes) and with blocks of as many columns as fit (the shapes of 2^20 and up).
class NttTwin : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(NttTwin, EqualsCpuTransformForEveryOrderAndCoset) {
  const auto [lg, max_pass] = GetParam();
  check_every_op(lg, max_pass, gpu::kTwistTableLg);
  check_every_op(lg, max_pass, gpu::kTwistTableLg, 0);  // blocks of as many columns as fit
  // The thread shape of 2^19 and up (these sizes take threads of 2^kSmallThreadLg themselves).
  check_every_op(lg, max_pass, gpu::kTwistTableLg, gpu::kMinPassBlocksLg, gpu::kThreadLg);
  check_every_op(lg, max_pass, gpu::kTwistTableLg, 0, gpu::kThreadLg);
}

// The same with a root per twist (twist_lg = lg: no pass multiplies two table entries; inverse
// transforms read entry -e of the one table), and with a direct table smaller than the default,
// so that the middle passes of these small plans take their roots from the two-level tables too.
class NttTwinTwistTables : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(NttTwinTwistTables, FullAndNoDirectTableEqualCpuTransform) {
  const auto [lg, max_pass] = GetParam();
  check_every_op(lg, max_pass, lg);
  check_every_op(lg, max_pass, 0);
}

// BN254's Fr through the same bodies (the GPU's instantiation for it is the other overload),
// for the GPU's own plans, multi-pass plans and both twist-table extremes, in snarkjs's domain
// (generator 5) too. The seeds are the BLS cases' (kSeed + lg).
TEST(NttTwinBn254, EqualsCpuTransformForEveryOrderAndCoset) {
  for (int lg : {1, 2, 5, 10, 11, 14}) check_every_op<bn254::Fr>(lg, gpu::kMaxPassLg, gpu::kTwistTableLg);
  for (int lg : {8, 12}) check_every_op<bn254::Fr>(lg, 3, gpu::kTwistTableLg);
  for (int lg : {12, 14}) check_every_op<bn254::Fr>(lg, 3, gpu::kTwistTableLg, 0);
  for (int lg : {11, 14}) check_every_op<bn254::Fr>(lg, gpu::kMaxPassLg, gpu::kTwistTableLg, 0, gpu::kThreadLg);
  check_every_op<bn254::Fr>(12, 5, 12);
  check_every_op<bn254::Fr>(12, 5, 0);
}

INSTANTIATE_TEST_SUITE_P(GpuPlans, NttTwin,
                         ::testing::Combine(::testing::Values(1, 2, 3, 4, 7, 9, 10, 11, 12, 14),
                                            ::testing::Values(gpu::kMaxPassLg)));
INSTANTIATE_TEST_SUITE_P(MultiPass, NttTwin,
                         ::testing::Combine(::testing::Values(5, 8, 11, 12), ::testing::Values(2, 3, 4)));
INSTANTIATE_TEST_SUITE_P(Plans, NttTwinTwistTables,
                         ::testing::Combine(::testing::Values(8, 12, 14), ::testing::Values(3, 5, gpu::kMaxPassLg)));

// snarkjs's odd points: coset shift omega_2n over the generator-5 domain — the evaluations at
// omega_2n · omega_n^i, checked by scaling coefficient i by omega_2n^i and a plain transform, then
// the inverse back; over F, in the output order `out` (the inverse reads it).
template <class F>
void check_odd_points(std::initializer_list<int> lgs, uint64_t seed, Order out) {
  for (int lg : lgs) {
    const DomainOf<F> d(lg, DomainOf<F>::kSnarkjsGenerator);
    const F shift = DomainOf<F>(lg + 1, DomainOf<F>::kSnarkjsGenerator).omega();
    const auto x = random_scalars<F>(d.size(), seed + lg);
    auto want = x;
    F p = F::one();
    for (auto& v : want) {
      v = v * p;
      p = p * shift;
    }
    ntt(want, d, Order::natural, out);
    auto got = x;
    gpu::ntt_twin(got, d, gpu::roots_of(d, shift), gpu::NttOp{Direction::forward, Order::natural, out, true});
    EXPECT_EQ(got, want) << "lg " << lg;
    gpu::ntt_twin(got, d, gpu::roots_of(d, shift), gpu::NttOp{Direction::inverse, out, Order::natural, true});
    EXPECT_EQ(got, x) << "lg " << lg;
  }
}

TEST(NttTwinShift, SnarkjsOddPoints) { check_odd_points<Fr>({3, 10, 13}, kSeed + 100, Order::natural); }
TEST(NttTwinBn254, SnarkjsOddPoints) { check_odd_points<bn254::Fr>({3, 11}, kSeed + 200, Order::bit_reversed); }

// The prover's step from evaluations to the coset: the inverse's 1/n deferred into the coset
// forward's first pass equals the two transforms with their own scalings, for both conventions'
// shifts (bellman's generator 7, snarkjs's omega_2n) and multi-pass plans.
TEST(NttTwinSizeInv, DeferredIntoTheCosetForwardEqualsTheScaledPair) {
  for (int lg : {1, 6, 11, 13})
    for (int max_pass : {3, gpu::kMaxPassLg})
      for (bool snarkjs : {false, true}) {
        const Domain d = snarkjs ? Domain(lg, Domain::kSnarkjsGenerator) : Domain(lg);
        const auto roots = snarkjs ? gpu::roots_of(d, Domain(lg + 1, Domain::kSnarkjsGenerator).omega()) : gpu::roots_of(d);
        const auto x = random_scalars(d.size(), kSeed + 300 + lg);
        const gpu::NttOp inv{Direction::inverse, Order::natural, Order::bit_reversed, false};
        const gpu::NttOp fwd{Direction::forward, Order::bit_reversed, Order::natural, true};
        auto want = x, got = x;
        gpu::ntt_twin(want, d, roots, inv, max_pass);
        gpu::ntt_twin(want, d, roots, fwd, max_pass);
        gpu::NttOp deferred = inv, taken = fwd;
        deferred.defer_size_inv = true;
        taken.take_size_inv = true;
        gpu::ntt_twin(got, d, roots, deferred, max_pass);
        gpu::ntt_twin(got, d, roots, taken, max_pass);
        EXPECT_EQ(got, want) << "lg " << lg << " max_pass " << max_pass << (snarkjs ? " snarkjs" : " bellman");
      }
}

TEST(NttTwinErrors, MovedSizeInvOnlyWhereItCanGo) {
  gpu::NttOp op;  // forward
  op.defer_size_inv = true;
  EXPECT_FALSE(gpu::check_op(op).empty());
  op = {};
  op.take_size_inv = true;
  EXPECT_TRUE(gpu::check_op(op).empty());
  op.coset = true;
  EXPECT_TRUE(gpu::check_op(op).empty());
  op.dir = Direction::inverse;
  EXPECT_FALSE(gpu::check_op(op).empty());
  op = {Direction::inverse, Order::natural, Order::bit_reversed, false};
  op.defer_size_inv = true;
  EXPECT_TRUE(gpu::check_op(op).empty());
  op.coset = true;
  EXPECT_FALSE(gpu::check_op(op).empty());
  op.coset = false;
  op.canonical_out = true;
  EXPECT_FALSE(gpu::check_op(op).empty());
  const Domain d(4);
  std::vector<Fr> a(16);
  EXPECT_THROW(gpu::ntt_twin(a, d, gpu::roots_of(d), op), std::invalid_argument);
}

TEST(NttTwinErrors, WrongSizeIsRejected) {
  const Domain d(4);
  std::vector<Fr> a(8);
  EXPECT_THROW(gpu::ntt_twin(a, d, gpu::roots_of(d), {}), std::invalid_argument);
}

TEST(NttTwinErrors, CanonicalOutputOfAForwardTransformIsRejected) {
  const Domain d(4);
  std::vector<Fr> a(16);
  gpu::NttOp op;
  op.canonical_out = true;
  EXPECT_THROW(gpu::ntt_twin(a, d, gpu::roots_of(d), op), std::invalid_argument);
  EXPECT_FALSE(gpu::check_op(op).empty());
  op.dir = Direction::inverse;
  EXPECT_TRUE(gpu::check_op(op).empty());
}

TEST(HStep, ElementFormula) {
  const auto a = random_scalars(64, kSeed + 7), b = random_scalars(64, kSeed + 8), c = random_scalars(64, kSeed + 9);
  const Fr f = random_scalars(1, kSeed + 10)[0];
  auto out = a;
  for (std::size_t i = 0; i < a.size(); ++i) gpu::h_step_element(out.data(), b.data(), c.data(), i, f);
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(out[i], (a[i] * b[i] - c[i]) * f);
  // With the factor's canonical integer in the limbs, the result leaves Montgomery form.
  const Fr f_plain = canonical_limbs(std::vector<Fr>{f})[0];
  auto plain = a;
  for (std::size_t i = 0; i < a.size(); ++i) gpu::h_step_element(plain.data(), b.data(), c.data(), i, f_plain);
  EXPECT_EQ(plain, canonical_limbs(out));
}

TEST(CStep, ElementFormula) {
  const auto a = random_scalars(64, kSeed + 11), b = random_scalars(64, kSeed + 12);
  std::vector<Fr> c(a.size(), Fr::zero());
  for (std::size_t i = 0; i < a.size(); ++i) gpu::c_step_element(c.data(), a.data(), b.data(), i);
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(c[i], a[i] * b[i]);
}

// ---------------------------------------------------------------- MSM

template <class C>
void check_msm(const std::vector<Affine<C>>& pts, const std::vector<typename C::Scalar>& ks, int c,
               const std::string& what, int batch = 0) {
  SCOPED_TRACE(what + " n " + std::to_string(pts.size()) + " c " + std::to_string(c) + " batch " +
               std::to_string(batch));
  const Jacobian<C> want = msm_naive<C>(pts, ks);
  const Jacobian<C> got = gpu::msm_twin<C>(pts, ks, c, 1, batch);
  EXPECT_TRUE(got.is_on_curve());
  EXPECT_TRUE(got == want);
  // The same scalars given as their canonical integers (MsmShape::canonical).
  EXPECT_TRUE(gpu::msm_twin<C>(pts, canonical_limbs(ks), c, 1, batch, true) == want);
}

template <class C>
void msm_cases(std::size_t max_n) {
  using S = typename C::Scalar;
  for (std::size_t n : {std::size_t(1), std::size_t(2), std::size_t(3), std::size_t(31), std::size_t(32),
                        std::size_t(33), std::size_t(100), max_n}) {
    const auto pts = random_points<C>(n, kSeed + 11 * n);
    const auto ks = random_scalars<S>(n, kSeed + 13 * n);
    for (int c : {0, 2, 3, 5, 8, 11}) check_msm<C>(pts, ks, c, "random");
  }
  const std::size_t n = max_n;
  auto pts = random_points<C>(n, kSeed + 17);
  auto ks = random_scalars<S>(n, kSeed + 19);
  check_msm<C>(pts, std::vector<S>(n, S::zero()), 0, "all zero scalars");
  check_msm<C>(pts, std::vector<S>(n, S::one()), 4, "all one scalars");
  check_msm<C>(pts, std::vector<S>(n, -S::one()), 5, "all r-1 scalars");
  check_msm<C>(pts, std::vector<S>(n, ks[0]), 6, "one repeated scalar (one big bucket)");
  check_msm<C>(std::vector<Affine<C>>(n, pts[0]), ks, 7, "one repeated point");
  auto with_inf = pts;
  for (std::size_t i = 0; i < n; i += 3) with_inf[i] = Affine<C>::infinity();
  check_msm<C>(with_inf, ks, 8, "every third point at infinity");
  // Opposite points in one bucket: P and -P with the same scalar cancel to infinity.
  auto opp = pts;
  for (std::size_t i = 1; i < n; i += 2) opp[i] = -opp[i - 1];
  auto same = ks;
  for (std::size_t i = 1; i < n; i += 2) same[i] = same[i - 1];
  check_msm<C>(opp, same, 9, "cancelling pairs");
  check_msm<C>(pts, ks, 16, "wide window, far more buckets than points");
  // Windows per pass: the default sorts all of a small MSM's windows in one pass; one window a
  // pass, and passes of 3 or 4 with a short last one (c = 11: 24 windows; c = 5: 52), must agree.
  for (auto [c, batch] : {std::pair{11, 1}, std::pair{11, 5}, std::pair{5, 3}, std::pair{8, 4}})
    check_msm<C>(pts, ks, c, "random, set passes", batch);
  check_msm<C>(pts, std::vector<S>(n, ks[0]), 6, "one repeated scalar, set passes", 4);
  check_msm<C>(opp, same, 9, "cancelling pairs, set passes", 2);
}

TEST(MsmTwin, G1) { msm_cases<G1Curve>(1500); }
TEST(MsmTwin, G2) { msm_cases<G2Curve>(150); }
// BN254's G1 and G2: the same kernel bodies over its fields and 254-bit scalars (msm_bn254_g1.cu,
// msm_bn254_g2.cu).
TEST(MsmTwin, Bn254G1) { msm_cases<bn254::G1Curve>(1500); }
TEST(MsmTwin, Bn254G2) { msm_cases<bn254::G2Curve>(150); }

// ---------------------------------------------------------------- fixed-base tables

// Copy k of the table is 2^(k·c)·P, checked by scalar multiplication.
template <class C>
void check_table(std::size_t n, int c, int copies) {
  SCOPED_TRACE("n " + std::to_string(n) + " c " + std::to_string(c) + " copies " + std::to_string(copies));
  auto pts = random_points<C>(n, kSeed + 23 * n + c);
  if (n > 2) pts[1] = Affine<C>::infinity();
  const std::vector<Affine<C>> table = gpu::precompute_twin<C>(pts, c, copies);
  ASSERT_EQ(table.size(), n * std::size_t(copies));
  Fr shift = Fr::one();
  const Fr two_c = Fr::from_u64(uint64_t(1) << c);
  for (int k = 0; k < copies; ++k) {
    for (std::size_t i = 0; i < n; ++i)
      EXPECT_TRUE(Jacobian<C>::from_affine(table[k * n + i]) == scalar_mul(pts[i], shift)) << "copy " << k << " point " << i;
    shift = shift * two_c;
  }
}

TEST(FixedBaseTable, CopiesAreShiftedBases) {
  for (std::size_t n : {std::size_t(1), std::size_t(15), std::size_t(16), std::size_t(17), std::size_t(40)})
    check_table<G1Curve>(n, 5, 4);
  check_table<G1Curve>(33, 21, 3);
  check_table<G2Curve>(20, 7, 3);
}

template <class C>
void check_table_msm(const std::vector<Affine<C>>& pts, const std::vector<Fr>& ks, int c, int copies,
                     const std::string& what, int batch = 0) {
  SCOPED_TRACE(what + " n " + std::to_string(pts.size()) + " c " + std::to_string(c) + " copies " +
               std::to_string(copies) + " batch " + std::to_string(batch));
  const std::vector<Affine<C>> table = gpu::precompute_twin<C>(pts, c, copies);
  const Jacobian<C> got = gpu::msm_twin<C>(table, ks, c, copies, batch);
  EXPECT_TRUE(got.is_on_curve());
  const Jacobian<C> want = msm_naive<C>(pts, ks);
  EXPECT_TRUE(got == want);
  EXPECT_TRUE(gpu::msm_twin<C>(table, canonical_limbs(ks), c, copies, batch, true) == want);
}

template <class C>
void table_msm_cases(std::size_t max_n) {
  for (std::size_t n : {std::size_t(1), std::size_t(3), std::size_t(33), max_n}) {
    const auto pts = random_points<C>(n, kSeed + 29 * n);
    const auto ks = random_scalars(n, kSeed + 31 * n);
    // Full tables (one set: windows(c) copies), a partial last set, two copies of many windows.
    for (auto [c, copies] : {std::pair{8, 32}, std::pair{9, 29}, std::pair{11, 5}, std::pair{5, 2}, std::pair{13, 20}})
      check_table_msm<C>(pts, ks, c, copies, "random");
  }
  const std::size_t n = max_n;
  const auto pts = random_points<C>(n, kSeed + 37);
  const auto ks = random_scalars(n, kSeed + 41);
  check_table_msm<C>(pts, std::vector<Fr>(n, Fr::zero()), 6, 43, "all zero scalars");
  check_table_msm<C>(pts, std::vector<Fr>(n, -Fr::one()), 6, 10, "all r-1 scalars");
  check_table_msm<C>(pts, std::vector<Fr>(n, ks[0]), 7, 37, "one repeated scalar (one bucket per window)");
  auto opp = pts;
  auto same = ks;
  for (std::size_t i = 1; i < n; i += 2) {
    opp[i] = -opp[i - 1];
    same[i] = same[i - 1];
  }
  check_table_msm<C>(opp, same, 9, 7, "cancelling pairs");
  // Sets per pass: one, and two with a short last set in the last pass (c = 11, 5 copies: 24
  // windows in sets of 5, 5, 5, 5, 4).
  check_table_msm<C>(pts, ks, 11, 5, "random, one set a pass", 1);
  check_table_msm<C>(pts, ks, 11, 5, "random, two sets a pass", 2);
  check_table_msm<C>(pts, std::vector<Fr>(n, ks[0]), 7, 3, "one repeated scalar, sets a pass", 4);
}

TEST(FixedBaseTable, MsmOverTheTableEqualsNaive) {
  table_msm_cases<G1Curve>(700);
  table_msm_cases<G2Curve>(60);
}

TEST(FixedBaseTable, CopiesPastTheWindowsAreNotUsed) {
  // windows(16) = 16: a 20-copy table gives a 16-copy shape; the twin wants the table it names.
  gpu::MsmShape s;
  ASSERT_TRUE(gpu::make_msm_shape(100, 16, &s, 20).ok());
  EXPECT_EQ(s.copies, 16);
  EXPECT_EQ(s.sets(), 1);
  ASSERT_TRUE(gpu::make_msm_shape(100, 16, &s, 5).ok());
  EXPECT_EQ(s.sets(), 4);
  EXPECT_EQ(s.set_copies(3), 1);
  EXPECT_EQ(s.shift(), 80);
}

TEST(FixedBaseTable, RejectsBadTables) {
  gpu::MsmShape s;
  EXPECT_FALSE(gpu::make_msm_shape(10, 8, &s, 0).ok());
  // 2^27 points x 16 copies = 2^31 table entries: one past what a sorted entry can index.
  EXPECT_FALSE(gpu::make_msm_shape(std::size_t(1) << 27, 16, &s, 16).ok());
  EXPECT_TRUE(gpu::make_msm_shape(std::size_t(1) << 27, 16, &s, 15).ok());
  const auto pts = random_points<G1Curve>(4, kSeed);
  const auto ks = random_scalars(4, kSeed);
  EXPECT_THROW(gpu::msm_twin<G1Curve>(pts, ks, 8, 2), std::invalid_argument);  // 4 points, not 2 x 4
  EXPECT_THROW(gpu::precompute_twin<G1Curve>(pts, 1, 2), std::invalid_argument);
  EXPECT_THROW(gpu::precompute_twin<G1Curve>(pts, 8, 0), std::invalid_argument);
}

TEST(MsmTwin, SetsPerPass) {
  gpu::MsmShape s;
  // 2^20 points at c = 16: all 16 windows in one pass of 2^24 entries, keys up to 16 x 2^15.
  ASSERT_TRUE(gpu::make_msm_shape(std::size_t(1) << 20, 16, &s).ok());
  EXPECT_EQ(s.batch, 16);
  EXPECT_EQ(s.passes(), 1);
  EXPECT_EQ(s.entries(), gpu::kPassEntries);
  EXPECT_EQ(s.null_key(), 1u << 19);
  EXPECT_EQ(s.sort_bits(), 20);
  EXPECT_EQ(s.segment(), 128u);
  // 2^22 + 1 points at c = 18 (15 windows): 3 a pass, 5 passes.
  ASSERT_TRUE(gpu::make_msm_shape((std::size_t(1) << 22) + 1, 18, &s).ok());
  EXPECT_EQ(s.batch, 3);
  EXPECT_EQ(s.passes(), 5);
  EXPECT_EQ(s.pass_windows(4), 3);
  // c = 19 (14 windows) in passes of 4: the last holds 2.
  ASSERT_TRUE(gpu::make_msm_shape(std::size_t(1) << 20, 19, &s, 1, 4).ok());
  EXPECT_EQ(s.passes(), 4);
  EXPECT_EQ(s.pass_windows(3), 2);
  EXPECT_EQ(s.sort_bits(), 21);  // null key 4 x 2^18
  // A table's sets: 2^20 points, 4 copies at c = 16: 4 sets of 4 windows, 4 sets a pass.
  ASSERT_TRUE(gpu::make_msm_shape(std::size_t(1) << 20, 16, &s, 4).ok());
  EXPECT_EQ(s.batch, 4);
  EXPECT_EQ(s.pass_windows(0), 16);
  // Large MSMs run one set a pass; the batch is clamped to the sets.
  ASSERT_TRUE(gpu::make_msm_shape(std::size_t(1) << 24, 20, &s).ok());
  EXPECT_EQ(s.batch, 1);
  EXPECT_EQ(s.null_key(), 1u << 19);
  EXPECT_EQ(s.sort_bits(), 20);
  ASSERT_TRUE(gpu::make_msm_shape(100, 16, &s, 1, 99).ok());
  EXPECT_EQ(s.batch, 16);
  EXPECT_FALSE(gpu::make_msm_shape(100, 16, &s, 1, -1).ok());
  // A pass past 2^31 - 1 entries: 2^27 points, 16 windows a pass.
  EXPECT_FALSE(gpu::make_msm_shape(std::size_t(1) << 27, 16, &s, 1, 16).ok());
  // The planner's bound holds every shape's pass, at every size up to m and every window.
  for (std::size_t m : {std::size_t(1), std::size_t(1000), (std::size_t(1) << 22) + 1, std::size_t(1) << 26})
    for (std::size_t n : {m, m / 2 + 1, m / 3 + 1})
      for (int c : {2, 8, 16, 21})
        for (int copies : {1, 3}) {
          ASSERT_TRUE(gpu::make_msm_shape(n, c, &s, copies).ok());
          EXPECT_LE(s.entries(), gpu::msm_entries_bound(m, copies)) << "m " << m << " n " << n << " c " << c;
        }
}

TEST(MsmTwin, RejectsBadShapes) {
  gpu::MsmShape s;
  EXPECT_FALSE(gpu::make_msm_shape(10, 1, &s).ok());
  EXPECT_FALSE(gpu::make_msm_shape(10, gpu::kMaxWindow + 1, &s).ok());
  EXPECT_FALSE(gpu::make_msm_shape(std::size_t(1) << 31, 0, &s).ok());
  EXPECT_TRUE(gpu::make_msm_shape(10, 0, &s).ok());
  const auto pts = random_points<G1Curve>(3, kSeed);
  EXPECT_THROW(gpu::msm_twin<G1Curve>(pts, random_scalars(2, kSeed), 0), std::invalid_argument);
}

template <class C>
void batch_cases(std::size_t n) {
  const auto pts = random_points<C>(n, kSeed + 23);
  std::mt19937_64 rng(kSeed + 29);
  for (int density : {0, 1, 50, 100}) {
    std::vector<uint64_t> bits((n + 63) / 64, 0);
    for (std::size_t i = 0; i < n; ++i)
      if (int(rng() % 100) < density) bits[i / 64] |= uint64_t(1) << (i % 64);
    SCOPED_TRACE("density " + std::to_string(density));
    EXPECT_TRUE(gpu::batch_add_twin<C>(pts, bits) == batch_add<C>(pts, bits));
  }
  // Every bit set, including the bits past the last point (ignored by contract).
  const std::vector<uint64_t> ones((n + 63) / 64, ~uint64_t(0));
  EXPECT_TRUE(gpu::batch_add_twin<C>(pts, ones) == batch_add<C>(pts, ones));
  std::vector<uint64_t> short_map((n + 63) / 64 - 1);
  EXPECT_THROW(gpu::batch_add_twin<C>(pts, short_map), std::invalid_argument);
}

TEST(BatchAddTwin, G1) { batch_cases<G1Curve>(1000); }
TEST(BatchAddTwin, G2) { batch_cases<G2Curve>(200); }
TEST(BatchAddTwin, Bn254G2) { batch_cases<bn254::G2Curve>(200); }

// ---------------------------------------------------------------- prover

// Fixed-base multiplication against the curve's double-and-add (scalar_mul), including 0, 1,
// -1 and scalars with all-ones or all-zero bytes (every table row's extremes).
template <class C>
void fixed_base_cases(std::size_t n) {
  std::vector<Fr> ks = random_scalars(n, kSeed + 9);
  ks.push_back(Fr::zero());
  ks.push_back(Fr::one());
  ks.push_back(-Fr::one());
  ks.push_back(Fr::from_u64(0xff00ff00ff00ff00ULL));
  const Affine<C> base = testdata::random_points<C>(1, kSeed + 10)[0];
  const std::vector<Affine<C>> got = gpu::fixed_base_twin<C>(base, ks);
  ASSERT_EQ(got.size(), ks.size());
  for (std::size_t i = 0; i < ks.size(); ++i)
    EXPECT_TRUE(Jacobian<C>::from_affine(got[i]) == scalar_mul(base, ks[i])) << "scalar " << i;
}
TEST(FixedBaseTwin, G1) { fixed_base_cases<G1Curve>(60); }
TEST(FixedBaseTwin, G2) { fixed_base_cases<G2Curve>(20); }

// A witness-like assignment: zeros, ones and other values in random order.
std::vector<Fr> mixed_assignment(std::size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Fr> z = random_scalars(n, seed);
  for (Fr& x : z) {
    const auto r = rng() % 10;
    if (r < 4) x = Fr::zero();
    else if (r < 8) x = Fr::one();
  }
  return z;
}

TEST(Classify, SplitsZeroOneAndOtherInPointOrder) {
  const std::size_t num_inputs = 3, num_aux = 300;
  const std::vector<Fr> z = mixed_assignment(num_inputs + num_aux, kSeed + 11);
  const std::span<const Fr> input(z.data(), num_inputs), aux(z.data() + num_inputs, num_aux);
  std::vector<uint64_t> density((num_aux + 63) / 64), input_density(1, 0b101);
  std::mt19937_64 rng(kSeed + 12);
  for (auto& w : density) w = rng() & rng();
  density.back() &= (uint64_t(1) << (num_aux % 64)) - 1;
  for (const bool filtered_inputs : {false, true}) {
    // The A query takes every input, B those with a density bit (QueryLayout's variable maps).
    Densities d;
    d.a_aux = density;
    d.b_aux = density;
    d.b_input = input_density;
    QueryLayout layout;
    layout.num_inputs = num_inputs;
    layout.num_aux = num_aux;
    const std::vector<uint32_t> vars = filtered_inputs ? layout.b_variables(d) : layout.a_variables(d);
    // Independent recount: walk the variables in order.
    std::vector<uint32_t> want;
    for (uint32_t i = 0; i < num_inputs; ++i)
      if (!filtered_inputs || (input_density[0] >> i) & 1) want.push_back(i);
    for (uint32_t j = 0; j < num_aux; ++j)
      if ((density[j / 64] >> (j % 64)) & 1) want.push_back(uint32_t(num_inputs) + j);
    ASSERT_EQ(vars, want);
    const gpu::SplitBits bits = gpu::classify(input, aux, vars, 0, vars.size());
    std::size_t ones = 0, other = 0;
    for (std::size_t p = 0; p < vars.size(); ++p) {
      const Fr& x = z[vars[p]];
      const bool is_one = x == Fr::one(), is_other = !x.is_zero() && !is_one;
      EXPECT_EQ(test_bit(bits.ones, p), is_one) << p;
      EXPECT_EQ(test_bit(bits.other, p), is_other) << p;
      ones += is_one;
      other += is_other;
    }
    EXPECT_EQ(bits.ones_count, ones);
    EXPECT_EQ(bits.other_count, other);
  }
  // Identity map with an offset (the L query: point p is aux variable p).
  const gpu::SplitBits l = gpu::classify(input, aux, {}, num_inputs, num_aux);
  std::size_t l_other = 0;
  for (std::size_t p = 0; p < num_aux; ++p) {
    const Fr& x = z[num_inputs + p];
    EXPECT_EQ(test_bit(l.ones, p), x == Fr::one()) << p;
    EXPECT_EQ(test_bit(l.other, p), !x.is_zero() && x != Fr::one()) << p;
    l_other += !x.is_zero() && x != Fr::one();
  }
  EXPECT_EQ(l.other_count, l_other);
  // A variable past the assignment is an error, not a read past it.
  const std::vector<uint32_t> past = {0, uint32_t(num_inputs + num_aux)};
  EXPECT_THROW(gpu::select_split(gpu::classify_z(input, aux), past, 0, past.size()), std::invalid_argument);
}

// The identity map (the L query) equals the general map over the same variables, at offsets on
// and off word boundaries and lengths that end mid-word; past the assignment it is an error.
TEST(Classify, IdentityMapEqualsTheExplicitMap) {
  const std::vector<Fr> z = mixed_assignment(400, kSeed + 13);
  const gpu::ZClasses classes = gpu::classify_z(std::span<const Fr>(z.data(), 5), std::span<const Fr>(z.data() + 5, 395));
  for (const std::size_t offset : {0, 1, 5, 63, 64, 70, 128}) {
    for (const std::size_t points : {0, 1, 63, 64, 65, 200}) {
      if (offset + points > z.size()) continue;
      std::vector<uint32_t> vars(points);
      for (std::size_t p = 0; p < points; ++p) vars[p] = uint32_t(offset + p);
      const gpu::SplitBits fast = gpu::select_split(classes, {}, offset, points);
      const gpu::SplitBits slow = gpu::select_split(classes, vars, 0, points);
      EXPECT_EQ(fast.ones, slow.ones) << offset << " " << points;
      EXPECT_EQ(fast.other, slow.other) << offset << " " << points;
      EXPECT_EQ(fast.ones_count, slow.ones_count) << offset << " " << points;
      EXPECT_EQ(fast.other_count, slow.other_count) << offset << " " << points;
    }
  }
  EXPECT_THROW(gpu::select_split(classes, {}, 350, 51), std::invalid_argument);
  EXPECT_THROW(gpu::select_split(classes, {}, 401, 1), std::invalid_argument);
  EXPECT_NO_THROW(gpu::select_split(classes, {}, 350, 50));
}

// classify_z with a copy target (a resident SRS's staging copy of the assignment) gives the same
// classes and leaves z = input ‖ aux there, across word boundaries and the input/aux seam; the
// words past the end stay untouched.
TEST(Classify, CopyingTheAssignmentGivesTheSameClasses) {
  for (const std::size_t inputs : {std::size_t(1), std::size_t(9), std::size_t(64), std::size_t(70)}) {
    const std::vector<Fr> z = mixed_assignment(inputs + 1000, kSeed + 17 + inputs);
    const std::span<const Fr> input(z.data(), inputs), aux(z.data() + inputs, z.size() - inputs);
    std::vector<Fr> copy(z.size() + 1, Fr::from_u64(7));
    const gpu::ZClasses plain = gpu::classify_z(input, aux);
    const gpu::ZClasses copied = gpu::classify_z(input, aux, copy.data());
    EXPECT_EQ(plain.ones, copied.ones) << inputs;
    EXPECT_EQ(plain.other, copied.other) << inputs;
    EXPECT_EQ(plain.size, copied.size) << inputs;
    EXPECT_TRUE(std::equal(z.begin(), z.end(), copy.begin())) << inputs;
    EXPECT_EQ(copy.back(), Fr::from_u64(7)) << inputs;
  }
}

// One query of a tail test: n points over a mixed assignment of n + 5 scalars; mapped, point p is
// variable vars[p] = (p·mul + add) mod (n + 5), else variable offset + p. `want_*`: the tail (the
// points whose scalar is neither 0 nor 1) and its scalars, in point order.
template <class C>
struct TailCase {
  std::vector<Fr> z;
  std::vector<Affine<C>> pts;
  std::vector<uint32_t> vars;
  bool mapped = false;
  std::size_t offset = 0, points = 0;
  gpu::SplitBits bits;
  std::vector<Affine<C>> want_pts;
  std::vector<Fr> want_sc;
  std::span<const uint32_t> map() const { return mapped ? std::span<const uint32_t>(vars) : std::span<const uint32_t>(); }
  std::span<const Fr> input() const { return std::span<const Fr>(z).first(2); }
  std::span<const Fr> aux() const { return std::span<const Fr>(z).subspan(2); }
};

template <class C>
TailCase<C> tail_case(std::size_t n, uint64_t seed, uint32_t mul, uint32_t add, bool mapped, std::size_t unmapped_offset) {
  TailCase<C> t;
  t.z = mixed_assignment(n + 5, seed);
  t.pts = random_points<C>(n, seed + 1);
  t.vars.resize(n);
  for (std::size_t p = 0; p < n; ++p) t.vars[p] = uint32_t((p * mul + add) % (n + 5));
  t.mapped = mapped;
  t.offset = mapped ? 0 : unmapped_offset;
  t.points = mapped ? n : n - t.offset;
  t.bits = gpu::classify(t.input(), t.aux(), t.map(), t.offset, t.points);
  for (std::size_t p = 0; p < t.points; ++p)
    if (test_bit(t.bits.other, p)) {
      t.want_pts.push_back(t.pts[p]);
      t.want_sc.push_back(t.z[mapped ? t.vars[p] : t.offset + p]);
    }
  return t;
}

// The tail gather in pieces [lo, hi) yields exactly the "other" points and their scalars, in
// order; summed piece by piece with the MSM it gives the tail's share of the split MSM.
template <class C>
void tail_gather_cases(std::size_t n) {
  for (const bool mapped : {false, true}) {
    const TailCase<C> t = tail_case<C>(n, kSeed + 13, 7, 3, mapped, 0);
    const std::span<const uint32_t> map = t.map();
    const gpu::SplitBits& bits = t.bits;
    const std::vector<Affine<C>>& pts = t.pts;
    const std::vector<Fr>& z = t.z;
    const std::vector<Affine<C>>& want_pts = t.want_pts;
    const std::vector<Fr>& want_sc = t.want_sc;
    ASSERT_EQ(want_pts.size(), bits.other_count);
    for (const std::size_t piece : {std::size_t(1), std::size_t(7), std::size_t(64), bits.other_count + 10}) {
      std::vector<Affine<C>> got_pts, gp;
      std::vector<Fr> got_sc, gs;
      for (std::size_t lo = 0; lo < bits.other_count; lo += piece) {
        gpu::tail_gather_twin<C>(bits.other, lo, lo + piece, pts, z, map, gp, gs);
        ASSERT_EQ(gp.size(), std::min(piece, bits.other_count - lo));
        got_pts.insert(got_pts.end(), gp.begin(), gp.end());
        got_sc.insert(got_sc.end(), gs.begin(), gs.end());
      }
      EXPECT_TRUE(got_pts == want_pts) << "piece " << piece;
      EXPECT_TRUE(got_sc == want_sc) << "piece " << piece;
    }
    // A range past the tail yields nothing.
    std::vector<Affine<C>> gp;
    std::vector<Fr> gs;
    gpu::tail_gather_twin<C>(bits.other, bits.other_count, bits.other_count + 5, pts, z, map, gp, gs);
    EXPECT_TRUE(gp.empty());
  }
}
// Streamed SRS: the tail's scalars in tail order, the chunks' tail counts and the gather plan,
// run as the prover runs them (per chunk: the chunk packed, then ranks [lo, hi) of its packed
// tail points and scalars copied into the buffer at `at`; the MSM takes the buffer at each flush). The flushed buffers, in order, must be exactly the tail:
// every point with its scalar once, all buffers full but the last.
template <class C>
void streamed_tail_cases(std::size_t n) {
  for (const bool mapped : {false, true}) {
    const TailCase<C> t = tail_case<C>(n, kSeed + 15, 11, 2, mapped, 3);
    const std::span<const uint32_t> map = t.map();
    const std::size_t offset = t.offset, points = t.points;
    const gpu::SplitBits& bits = t.bits;
    const std::vector<Affine<C>>& pts = t.pts;
    const std::vector<Affine<C>>& want_pts = t.want_pts;
    const std::vector<Fr>& want_sc = t.want_sc;
    const std::span<const Fr> input = t.input(), aux = t.aux();
    const std::vector<Fr> tail = gpu::tail_scalars(bits, input, aux, map, offset);
    ASSERT_TRUE(tail == want_sc) << "mapped " << mapped;
    for (const std::size_t chunk : {std::size_t(64), std::size_t(192), std::size_t(1024)})
      for (const std::size_t cap : {std::size_t(1), std::size_t(5), std::size_t(37), points + 1}) {
        SCOPED_TRACE("mapped " + std::to_string(mapped) + " chunk " + std::to_string(chunk) + " capacity " +
                     std::to_string(cap));
        const std::vector<std::size_t> counts = gpu::set_bits_per_chunk(bits.other, points, chunk);
        ASSERT_EQ(counts.size(), (points + chunk - 1) / chunk);
        const std::vector<gpu::TailPiece> pieces = gpu::tail_pieces(counts, cap);
        std::vector<Affine<C>> buf_pts(cap), got_pts;
        std::vector<Fr> buf_sc(cap), got_sc;
        std::vector<std::size_t> flushed;
        std::size_t next = 0, first = 0;
        const gpu::ChunkLayout lay = gpu::ChunkLayout::of(chunk, sizeof(Affine<C>));
        std::vector<char> packed(lay.bytes);
        for (std::size_t k = 0; k < counts.size(); ++k) {
          const std::size_t off = k * chunk, m = std::min(chunk, points - off);
          const gpu::PackedCounts pc_counts = gpu::pack_chunk(
              pts.data(), bits, off, m, std::span<const Fr>(tail).subspan(first, counts[k]), packed.data(), lay);
          ASSERT_EQ(pc_counts.tail, counts[k]);
          const Affine<C>* tail_pts = reinterpret_cast<const Affine<C>*>(packed.data()) + pc_counts.ones;
          const Fr* tail_sc = reinterpret_cast<const Fr*>(packed.data() + lay.scalars);
          for (; next < pieces.size() && pieces[next].chunk == k; ++next) {
            const gpu::TailPiece& pc = pieces[next];
            ASSERT_LT(pc.lo, pc.hi);
            ASSERT_LE(pc.hi, counts[k]);
            ASSERT_LE(pc.at + (pc.hi - pc.lo), cap);
            std::copy(tail_pts + pc.lo, tail_pts + pc.hi, buf_pts.begin() + std::ptrdiff_t(pc.at));
            std::copy(tail_sc + pc.lo, tail_sc + pc.hi, buf_sc.begin() + std::ptrdiff_t(pc.at));
            if (pc.flush) {
              const std::size_t used = pc.at + (pc.hi - pc.lo);
              got_pts.insert(got_pts.end(), buf_pts.begin(), buf_pts.begin() + std::ptrdiff_t(used));
              got_sc.insert(got_sc.end(), buf_sc.begin(), buf_sc.begin() + std::ptrdiff_t(used));
              flushed.push_back(used);
            }
          }
          first += counts[k];
        }
        EXPECT_EQ(next, pieces.size());
        EXPECT_EQ(first, bits.other_count);
        EXPECT_TRUE(got_pts == want_pts);
        EXPECT_TRUE(got_sc == want_sc);
        for (std::size_t i = 0; i + 1 < flushed.size(); ++i) EXPECT_EQ(flushed[i], cap) << "flush " << i;
        // The split MSM's tail share, through the flushes, equals the naive sum over the tail.
        if (cap == 37) {
          EXPECT_TRUE(msm_naive<C>(got_pts, got_sc) == msm_naive<C>(want_pts, want_sc));
        }
      }
  }
  std::vector<uint64_t> one_word(1, ~uint64_t(0));
  // A chunk is whole bitmap words, or one chunk of all the points (a lone chunk of a query
  // smaller than the plan's chunk: the prover's chunk_points).
  EXPECT_EQ(gpu::set_bits_per_chunk(one_word, 64, 100), std::vector<std::size_t>{64});
  const std::vector<uint64_t> fifty{(uint64_t(1) << 50) - 1};
  EXPECT_EQ(gpu::set_bits_per_chunk(fifty, 50, 50), std::vector<std::size_t>{50});
  const std::vector<uint64_t> two_words{~uint64_t(0), 1};
  EXPECT_THROW(gpu::set_bits_per_chunk(two_words, 128, 100), std::invalid_argument);
  EXPECT_THROW(gpu::set_bits_per_chunk(one_word, 64, 0), std::invalid_argument);
  EXPECT_THROW(gpu::set_bits_per_chunk(one_word, 200, 64), std::invalid_argument);
  const std::vector<std::size_t> counts{3};
  EXPECT_THROW(gpu::tail_pieces(counts, 0), std::invalid_argument);
}
TEST(StreamedTail, G1) { streamed_tail_cases<G1Curve>(700); }
TEST(StreamedTail, G2) { streamed_tail_cases<G2Curve>(200); }

// Batched split MSMs (MemoryPlan::split_batch): k partitions, each with its own assignment, share
// one pass over a query's points. Per chunk, as the prover does it: the shared points as they are,
// each partition's side packed (pack_batch_side, its tail scalars read in place from z; they must
// be tail_scalars's slice for the chunk) into the batch layout; then per partition the
// batch addition over the side's 1s bitmap and the shared points, and its tail gathered by its tail
// bitmap from the shared points (tail_gather_twin without z: points only) beside the side's
// scalars, in pieces of the gather buffer. Summed over the chunks, each partition's sums must be its
// own query's MSM over every point with its scalar.
template <class C>
void batched_chunk_cases(std::size_t n) {
  for (const bool mapped : {false, true}) {
    constexpr std::size_t kParts = 3;
    std::vector<TailCase<C>> parts;
    for (std::size_t i = 0; i < kParts; ++i)
      parts.push_back(tail_case<C>(n, kSeed + 41 + 7 * i, uint32_t(5 + 2 * i), uint32_t(i), mapped, 3));
    const std::vector<Affine<C>>& pts = parts[0].pts;  // the points every partition's query shares
    const std::size_t points = parts[0].points;
    std::vector<std::vector<Fr>> tails;
    std::vector<Jacobian<C>> want;
    for (const TailCase<C>& t : parts) {
      ASSERT_EQ(t.points, points);
      tails.push_back(gpu::tail_scalars(t.bits, t.input(), t.aux(), t.map(), t.offset));
      std::vector<Fr> all(points);
      for (std::size_t p = 0; p < points; ++p) all[p] = t.z[mapped ? t.vars[p] : t.offset + p];
      want.push_back(msm_naive<C>(std::span<const Affine<C>>(pts.data(), points), all));
    }
    for (const std::size_t chunk : {std::size_t(64), std::size_t(192), std::size_t(1024)})
      for (const std::size_t gcap : {std::size_t(7), std::size_t(1000)}) {
        SCOPED_TRACE("mapped " + std::to_string(mapped) + " chunk " + std::to_string(chunk) + " gather " +
                     std::to_string(gcap));
        const std::size_t cap = std::min(chunk, points);
        const gpu::BatchChunkLayout lay = gpu::BatchChunkLayout::of(cap, kParts, sizeof(Affine<C>));
        ASSERT_EQ(lay.sides % 256, 0u);
        ASSERT_EQ(lay.side_bytes % 256, 0u);
        ASSERT_GE(lay.sides, cap * sizeof(Affine<C>));
        ASSERT_GE(lay.side_bytes, lay.scalars + cap * sizeof(Fr));
        std::vector<char> sides(lay.sides_bytes(kParts));
        std::vector<Jacobian<C>> got(kParts, Jacobian<C>::infinity());
        std::vector<std::size_t> first(kParts, 0), next(kParts, 0);
        // Each partition's own gather area of gcap entries, filled and flushed by its tail pieces.
        std::vector<std::vector<std::size_t>> counts(kParts);
        std::vector<std::vector<gpu::TailPiece>> pieces(kParts);
        std::vector<std::vector<Affine<C>>> area_pts(kParts, std::vector<Affine<C>>(gcap));
        std::vector<std::vector<Fr>> area_sc(kParts, std::vector<Fr>(gcap));
        for (std::size_t i = 0; i < kParts; ++i) {
          counts[i] = gpu::set_bits_per_chunk(parts[i].bits.other, points, cap);
          pieces[i] = gpu::tail_pieces(counts[i], gcap);
        }
        for (std::size_t off = 0, k = 0; off < points; off += cap, ++k) {
          const std::size_t m = std::min(cap, points - off), words = (m + 63) / 64;
          std::fill(sides.begin(), sides.end(), char(0x5a));  // what the pack leaves alone shows up
          for (std::size_t i = 0; i < kParts; ++i) {
            const std::size_t count = counts[i][k];
            char* side = sides.data() + i * lay.side_bytes;
            const TailCase<C>& t = parts[i];
            const gpu::QueryScalars<Fr> z{t.input(), t.aux(), t.map(), t.offset};
            ASSERT_EQ(gpu::pack_batch_side(t.bits, off, m, z, side, lay), count);
            const std::span<const uint64_t> ones(reinterpret_cast<const uint64_t*>(side), words);
            const std::span<const uint64_t> other(reinterpret_cast<const uint64_t*>(side + lay.other), words);
            const Fr* sc = reinterpret_cast<const Fr*>(side + lay.scalars);
            for (std::size_t j = 0; j < count; ++j) ASSERT_TRUE(sc[j] == tails[i][first[i] + j]) << "tail scalar " << j;
            const std::span<const Affine<C>> chunk_pts(pts.data() + off, m);
            got[i] = got[i] + gpu::batch_add_twin<C>(chunk_pts, ones);
            for (; next[i] < pieces[i].size() && pieces[i][next[i]].chunk == k; ++next[i]) {
              const gpu::TailPiece& pc = pieces[i][next[i]];
              std::vector<Affine<C>> gp;
              std::vector<Fr> none;
              gpu::tail_gather_twin<C>(other, pc.lo, pc.hi, chunk_pts, {}, {}, gp, none);
              ASSERT_TRUE(none.empty());
              ASSERT_EQ(gp.size(), pc.hi - pc.lo);
              std::copy(gp.begin(), gp.end(), area_pts[i].begin() + std::ptrdiff_t(pc.at));
              std::copy(sc + pc.lo, sc + pc.hi, area_sc[i].begin() + std::ptrdiff_t(pc.at));
              if (pc.flush) {
                const std::size_t used = pc.at + gp.size();
                got[i] = got[i] + msm_naive<C>(std::span<const Affine<C>>(area_pts[i].data(), used),
                                               std::span<const Fr>(area_sc[i].data(), used));
              }
            }
            first[i] += count;
          }
        }
        for (std::size_t i = 0; i < kParts; ++i) {
          EXPECT_EQ(first[i], parts[i].bits.other_count) << "partition " << i;
          EXPECT_TRUE(got[i] == want[i]) << "partition " << i;
        }
      }
  }
  // A chunk off a bitmap word or past the bitmaps; points past z (L) or mapped past it (A, B); a
  // layout too small.
  const TailCase<C> t = tail_case<C>(200, kSeed + 48, 3, 1, false, 0);
  const std::vector<Fr> tail = gpu::tail_scalars(t.bits, t.input(), t.aux(), {}, 0);
  const gpu::QueryScalars<Fr> z{t.input(), t.aux(), {}, 0};
  const gpu::BatchChunkLayout lay = gpu::BatchChunkLayout::of(256, 1, sizeof(Affine<C>));
  std::vector<char> buf(lay.side_bytes);
  EXPECT_THROW(gpu::pack_batch_side(t.bits, 32, 64, z, buf.data(), lay), std::invalid_argument);
  EXPECT_THROW(gpu::pack_batch_side(t.bits, 192, 128, z, buf.data(), lay), std::invalid_argument);
  const gpu::QueryScalars<Fr> short_z{t.input(), t.aux().first(t.points - 10), {}, 0};
  EXPECT_THROW(gpu::pack_batch_side(t.bits, 0, t.points, short_z, buf.data(), lay), std::invalid_argument);
  std::vector<uint32_t> far(t.points, 0);
  far[t.points - 1] = uint32_t(t.z.size());
  const gpu::QueryScalars<Fr> far_z{t.input(), t.aux(), far, 0};
  EXPECT_THROW(gpu::pack_batch_side(t.bits, 0, t.points, far_z, buf.data(), lay), std::invalid_argument);
  EXPECT_THROW(gpu::pack_batch_side(t.bits, 0, t.points, z, buf.data(), gpu::BatchChunkLayout::of(64, 1, 96)),
               std::invalid_argument);
  EXPECT_EQ(gpu::pack_batch_side(t.bits, 0, t.points, z, buf.data(), lay), tail.size());
  const Fr* packed = reinterpret_cast<const Fr*>(buf.data() + lay.scalars);
  for (std::size_t j = 0; j < tail.size(); ++j) EXPECT_TRUE(packed[j] == tail[j]) << "tail scalar " << j;
  // Bits past the chunk's points are cleared: 200 points end inside the fourth word.
  const uint64_t* other = reinterpret_cast<const uint64_t*>(buf.data() + lay.other);
  EXPECT_EQ(other[3] >> 8, 0u);
}
TEST(BatchedChunk, G1) { batched_chunk_cases<G1Curve>(700); }
TEST(BatchedChunk, G2) { batched_chunk_cases<G2Curve>(200); }

// Streamed SRS, host-side compaction: every chunk packed as the prover sends it holds, at the
// chunk layout's offsets, its 1s' points then its tail's points (each in point order), a bitmap of
// exactly `ones` set bits and its slice of the tail scalars; summed as the device sums them (the
// 1s by batch addition, the tail by MSM), the packed chunks give the query's MSM over every
// point with its own scalar (the 0s dropped on the host).
template <class C>
void packed_chunk_cases(std::size_t n) {
  for (const bool mapped : {false, true}) {
    const TailCase<C> t = tail_case<C>(n, kSeed + 17, 13, 5, mapped, 3);
    const std::span<const uint32_t> map = t.map();
    const gpu::SplitBits& bits = t.bits;
    const std::vector<Fr> tail = gpu::tail_scalars(bits, t.input(), t.aux(), map, t.offset);
    std::vector<Fr> all_scalars(t.points);
    for (std::size_t p = 0; p < t.points; ++p) all_scalars[p] = t.z[mapped ? t.vars[p] : t.offset + p];
    const Jacobian<C> want_sum = msm_naive<C>(std::span<const Affine<C>>(t.pts.data(), t.points), all_scalars);
    for (const std::size_t chunk : {std::size_t(64), std::size_t(192), std::size_t(1024)}) {
      SCOPED_TRACE("mapped " + std::to_string(mapped) + " chunk " + std::to_string(chunk));
      const std::vector<std::size_t> counts = gpu::set_bits_per_chunk(bits.other, t.points, chunk);
      const std::vector<std::size_t> ones = gpu::set_bits_per_chunk(bits.ones, t.points, chunk);
      const gpu::ChunkLayout lay = gpu::ChunkLayout::of(chunk, sizeof(Affine<C>));
      std::vector<char> buf(lay.bytes);
      std::vector<Affine<C>> sent_pts;
      std::vector<Fr> sent_sc;
      std::size_t first = 0, sent = 0;
      for (std::size_t k = 0; k < counts.size(); ++k) {
        const std::size_t off = k * chunk, m = std::min(chunk, t.points - off);
        std::fill(buf.begin(), buf.end(), char(0x5a));  // what the pack leaves alone shows up
        const std::span<const Fr> chunk_tail(tail.data() + first, counts[k]);
        const gpu::PackedCounts got = gpu::pack_chunk(t.pts.data(), bits, off, m, chunk_tail, buf.data(), lay);
        ASSERT_EQ(got.ones, ones[k]) << "chunk " << k;
        ASSERT_EQ(got.tail, counts[k]) << "chunk " << k;
        std::vector<Affine<C>> want_ones, want_tail;
        for (std::size_t p = off; p < off + m; ++p) {
          if (test_bit(bits.ones, p)) want_ones.push_back(t.pts[p]);
          if (test_bit(bits.other, p)) want_tail.push_back(t.pts[p]);
        }
        const Affine<C>* packed = reinterpret_cast<const Affine<C>*>(buf.data());
        ASSERT_TRUE(std::vector<Affine<C>>(packed, packed + got.ones) == want_ones) << "chunk " << k;
        ASSERT_TRUE(std::vector<Affine<C>>(packed + got.ones, packed + got.points()) == want_tail) << "chunk " << k;
        const uint64_t* bitmap = reinterpret_cast<const uint64_t*>(buf.data() + lay.ones);
        for (std::size_t i = 0; i < got.ones_words() * 64; ++i)
          ASSERT_EQ(test_bit(std::span<const uint64_t>(bitmap, got.ones_words()), i), i < got.ones) << "bit " << i;
        const Fr* sc = reinterpret_cast<const Fr*>(buf.data() + lay.scalars);
        ASSERT_TRUE(std::vector<Fr>(sc, sc + got.tail) == std::vector<Fr>(chunk_tail.begin(), chunk_tail.end()));
        sent_pts.insert(sent_pts.end(), packed, packed + got.points());
        sent_sc.insert(sent_sc.end(), got.ones, Fr::one());
        sent_sc.insert(sent_sc.end(), sc, sc + got.tail);
        first += got.tail;
        sent += got.points();
      }
      EXPECT_EQ(first, tail.size());
      EXPECT_EQ(sent, bits.ones_count + bits.other_count);
      EXPECT_LT(sent, t.points);  // the 0s stayed behind
      EXPECT_TRUE(msm_naive<C>(sent_pts, sent_sc) == want_sum);
    }
  }
  // A chunk that does not start on a bitmap word, runs past the bitmaps, or a tail of another length.
  const TailCase<C> t = tail_case<C>(200, kSeed + 18, 3, 1, false, 0);
  const std::vector<Fr> tail = gpu::tail_scalars(t.bits, t.input(), t.aux(), {}, 0);
  const gpu::ChunkLayout lay = gpu::ChunkLayout::of(256, sizeof(Affine<C>));
  std::vector<char> buf(lay.bytes);
  EXPECT_THROW(gpu::pack_chunk(t.pts.data(), t.bits, 32, 64, {}, buf.data(), lay), std::invalid_argument);
  EXPECT_THROW(gpu::pack_chunk(t.pts.data(), t.bits, 192, 128, {}, buf.data(), lay), std::invalid_argument);
  EXPECT_THROW(gpu::pack_chunk(t.pts.data(), t.bits, 0, t.points, std::span<const Fr>(tail).first(tail.size() - 1),
                               buf.data(), lay),
               std::invalid_argument);
  EXPECT_NO_THROW(gpu::pack_chunk(t.pts.data(), t.bits, 0, t.points, tail, buf.data(), lay));
}
// PackedChunk.ManyBlocks into a buffer `shift` bytes past an allocation's (16-byte aligned) start.
void packed_many_blocks(std::size_t shift) {
  const std::size_t n = 70001;
  const std::vector<Fr> z = mixed_assignment(n, kSeed + 19);
  const gpu::SplitBits bits = gpu::classify(std::span<const Fr>(z).first(1), std::span<const Fr>(z).subspan(1), {}, 1, n - 1);
  std::vector<G1Affine> pts(n - 1);
  for (std::size_t p = 0; p < pts.size(); ++p) std::memcpy(static_cast<void*>(&pts[p]), &p, sizeof(p));
  const std::vector<Fr> tail = gpu::tail_scalars(bits, std::span<const Fr>(z).first(1), std::span<const Fr>(z).subspan(1), {}, 1);
  for (const std::size_t chunk : {std::size_t(1) << 15, std::size_t(3) << 14, n}) {
    const gpu::ChunkLayout lay = gpu::ChunkLayout::of(chunk, sizeof(G1Affine));
    std::vector<char> buf(lay.bytes + shift);
    char* out = buf.data() + shift;
    std::size_t first = 0;
    for (std::size_t off = 0; off < pts.size(); off += chunk) {
      const std::size_t m = std::min(chunk, pts.size() - off);
      std::vector<std::size_t> want;
      for (std::size_t p = off; p < off + m; ++p)
        if (test_bit(bits.ones, p)) want.push_back(p);
      const std::size_t ones = want.size();
      for (std::size_t p = off; p < off + m; ++p)
        if (test_bit(bits.other, p)) want.push_back(p);
      const std::size_t count = want.size() - ones;
      const gpu::PackedCounts got =
          gpu::pack_chunk(pts.data(), bits, off, m, std::span<const Fr>(tail).subspan(first, count), out, lay);
      ASSERT_EQ(got.ones, ones);
      ASSERT_EQ(got.tail, count);
      for (std::size_t i = 0; i < want.size(); ++i) {
        std::size_t index = 0;
        std::memcpy(&index, out + i * sizeof(G1Affine), sizeof(index));
        ASSERT_EQ(index, want[i]) << "chunk " << chunk << " at " << off << ", packed point " << i;
      }
      const Fr* sc = reinterpret_cast<const Fr*>(out + lay.scalars);
      ASSERT_TRUE(std::equal(sc, sc + count, tail.begin() + std::ptrdiff_t(first))) << "chunk " << chunk << " at " << off;
      first += count;
    }
    EXPECT_EQ(first, tail.size());
  }
}
// Chunks of many packing blocks (pack_chunk works in blocks of 2^14 points on several threads):
// the order across block ends, with stand-in points that carry their index. Into a 16-byte
// aligned buffer (the stores that bypass the cache, as into the prover's pinned buffers) and
// one 8 bytes off (plain copies).
TEST(PackedChunk, ManyBlocks) {
  for (const std::size_t shift : {std::size_t(0), std::size_t(8)}) {
    SCOPED_TRACE("buffer shifted by " + std::to_string(shift));
    packed_many_blocks(shift);
  }
}
TEST(PackedChunk, G1) { packed_chunk_cases<G1Curve>(700); }
TEST(PackedChunk, G2) { packed_chunk_cases<G2Curve>(200); }

TEST(TailGatherTwin, G1) { tail_gather_cases<G1Curve>(700); }
TEST(TailGatherTwin, G2) { tail_gather_cases<G2Curve>(130); }

}  // namespace
}  // namespace pp::test
