// SPDX-License-Identifier: Apache-2.0 OR MIT
// Device memory planner (engine/plan.hpp): workspace bounds against a hand computation and a
// second implementation of the formula, the budget x size x gw sweep of issue 6, chosen
// placements, errors below the minimum, a checker that catches corrupted plans, and a seeded
// property test over random shapes and budgets.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "proofpipe/engine/plan.hpp"
#include "proofpipe/gpu/msm_sizing.hpp"
#include "proofpipe/gpu/prover_host.hpp"
#include "proofpipe/groth16/synthetic.hpp"

namespace pp::engine {
namespace {

constexpr uint64_t kReserve = kDefaultReserve;

PlanRequest request_for(const CircuitShape& s, uint64_t budget, int gw, SrsPlacement srs = SrsPlacement::automatic) {
  PlanRequest r;
  r.shape = s;
  r.device_memory = budget + kReserve;
  r.budget = budget;
  r.gw = gw;
  r.srs = srs;
  return r;
}

// Second implementation of the MSM workspace formula, written from the text of the brief.
uint64_t brief_workspace(uint64_t xyzz, uint64_t m, int c) {
  const auto a = [](uint64_t x) { return (x + 255) / 256 * 256; };
  const uint64_t w = 255 / uint64_t(c) + 1, b = uint64_t(1) << (c - 1);
  const uint64_t l = std::min<uint64_t>(64, std::max<uint64_t>(4, (w * b) >> 17));
  // Sorted entries of a pass: one window's m, or windows of fewer than 2^24 entries up to 2^24 of
  // them (at most 128 windows, c = 2).
  const uint64_t e = m >= (uint64_t(1) << 24) ? m : std::min<uint64_t>(uint64_t(1) << 24, 128 * m);
  // Segments: 8 entries each below 2^20 entries, e >> 17 in the middle (at most 2^17 + 2^14 + 1
  // of them), 1024 above 2^27 — the most any e' <= e can have.
  const uint64_t middle = (uint64_t(1) << 17) + (uint64_t(1) << 14) + 1;
  const uint64_t red = (b + l - 1) / l, seg = std::min((e + 7) / 8, std::max((e + 1023) / 1024, middle));
  // The reduction's second level: the chunk totals 1 .. red-1 in chunks of clamp(w·red >> 12, 4, 32).
  const uint64_t l2 = std::min<uint64_t>(32, std::max<uint64_t>(4, (w * red) >> 12)), red2 = (red - 1 + l2 - 1) / l2;
  return 4 * a(4 * e) + a(8 * e + (64u << 20)) + a(w * b * xyzz) + 2 * a(seg * xyzz) + 2 * a(w * red * xyzz) +
         a(w * red2 * xyzz) + a(2 * w * xyzz) + a(w * ((red + 1023) / 1024) * xyzz) + a(2 * (seg / 33 + 1) * 8) + a(4);
}

// Regions sorted by offset, each inside [0, arena), none overlapping another.
void expect_disjoint(const MemoryPlan& p) {
  std::vector<Region> r = p.regions;
  std::sort(r.begin(), r.end(), [](const Region& x, const Region& y) {
    return std::pair(x.offset, x.end()) < std::pair(y.offset, y.end());  // empty regions first
  });
  for (std::size_t i = 0; i < r.size(); ++i) {
    EXPECT_LE(r[i].end(), p.arena_bytes) << r[i].name;
    if (i) {
      EXPECT_LE(r[i - 1].end(), r[i].offset) << r[i - 1].name << " overlaps " << r[i].name;
    }
  }
}

TEST(PlanBounds, WindowsAndDefaults) {
  EXPECT_EQ(msm_windows(21), 13);
  EXPECT_EQ(msm_windows(16), 16);
  EXPECT_EQ(msm_windows(4), 64);
  EXPECT_EQ(default_msm_window(uint64_t(1) << 27), 22);
  EXPECT_EQ(default_msm_window((uint64_t(1) << 27) - 1), 22);
  EXPECT_EQ(default_msm_window((uint64_t(1) << 26) + 1), 22);
  EXPECT_EQ(default_msm_window(uint64_t(1) << 26), 22);
  EXPECT_EQ(default_msm_window(uint64_t(1) << 25), 20);
  EXPECT_EQ(default_msm_window((uint64_t(1) << 24) + 1), 20);
  EXPECT_EQ(default_msm_window(uint64_t(1) << 24), 20);
  EXPECT_EQ(default_msm_window(uint64_t(1) << 20), 16);
  EXPECT_EQ(default_msm_window((uint64_t(1) << 20) + 1), 17);
  EXPECT_EQ(default_msm_window(1024), 6);
  EXPECT_EQ(default_msm_window(1), 4);
  EXPECT_THROW(msm_windows(0), std::invalid_argument);
}

TEST(PlanBounds, WorkspaceByHand) {
  // m = 2^20, c = 16, G1: W 16, B 2^15, L = clamp(2^19 >> 17) = 4, 8192 chunks; a pass sorts
  // 2^24 entries (all 16 windows), in at most 2^17 + 2^14 + 1 = 147457 segments of any m' <= m.
  //   keys/values 4 x 64 MiB = 268435456; sort 128 MiB + 64 MiB = 201326592; buckets
  //   16 x 2^15 x 192 = 100663296; head + tail 2 x (147457 x 192 = 28311744 -> 28311808) =
  //   56623616; chunks' local sums and totals 2 x 16 x 8192 x 192 = 50331648; level 2 (chunks of
  //   32 of the 8191 totals) 16 x 256 x 192 = 786432; set sums 2 x 16 x 192 = 6144; scratch
  //   16 x 8 x 192 = 24576; long chains 2 x 4469 x 8 = 71504 -> 71680; count 4 -> 256.
  EXPECT_EQ(msm_workspace_bound(kBls12_381Points, Curve::g1, uint64_t(1) << 20, 16), 678269696u);
  EXPECT_EQ(msm_workspace_bound(kBls12_381Points, Curve::g1, 0, 16), 0u);
  // Batch addition of 2^20 G1 points: 16384 partial sums (3 MiB) + 16 of scratch (3072 B).
  EXPECT_EQ(batch_add_workspace_bound(kBls12_381Points, Curve::g1, uint64_t(1) << 20), 3145728u + 3072u);
  // NTT tables at 2^28: four two-level tables of 2^14 + 2^14 roots, two more hi tables with the
  // 1/n folded in (2^14 each), two small tables of 512 and the direct twist table of the 10 + 9 +
  // 9 plan's middle pass (2^18 roots, both directions): 13.03 MiB.
  EXPECT_EQ(ntt_tables_bound(28),
            (4 * (2 * (uint64_t(1) << 14)) + 2 * (uint64_t(1) << 14) + 2 * 512 + (uint64_t(1) << 18)) * 32);
  // 2^24 (8 + 8 + 8): 2^12 + 2^12 per two-level table, two sized hi tables of 2^12, small 512,
  // middle pass 2^16.
  EXPECT_EQ(ntt_tables_bound(24),
            (4 * (2 * (uint64_t(1) << 12)) + 2 * (uint64_t(1) << 12) + 2 * 512 + (uint64_t(1) << 16)) * 32);
  // A root per twist at 2^27 (9 + 9 + 9): the direct table holds all 2^27 roots, 4 GiB more.
  EXPECT_EQ(ntt_tables_bound(27, true), (4 * ((uint64_t(1) << 14) + (uint64_t(1) << 13)) + 2 * (uint64_t(1) << 13) +
                                         2 * 512 + (uint64_t(1) << 27)) *
                                            32);
}

TEST(PlanBounds, WorkspaceMatchesBriefFormulaAndIsMonotone) {
  for (uint64_t m : {uint64_t(1), uint64_t(1000), uint64_t(1) << 16, (uint64_t(1) << 20) + 7, uint64_t(130278869)}) {
    uint64_t last_c = 0;
    for (int c = 4; c <= 24; ++c) {
      const uint64_t g1 = msm_workspace_bound(kBls12_381Points, Curve::g1, m, c), g2 = msm_workspace_bound(kBls12_381Points, Curve::g2, m, c);
      EXPECT_EQ(g1, brief_workspace(kBls12_381Points.g1_xyzz, m, c)) << "m " << m << " c " << c;
      EXPECT_EQ(g2, brief_workspace(kBls12_381Points.g2_xyzz, m, c)) << "m " << m << " c " << c;
      EXPECT_GT(g2, g1);
      EXPECT_GE(g1, last_c) << "not monotone in c at m " << m << " c " << c;
      last_c = g1;
      EXPECT_GE(g1, msm_workspace_bound(kBls12_381Points, Curve::g1, m / 2 + 1, c)) << "not monotone in m";
      EXPECT_GE(g1, batch_add_workspace_bound(kBls12_381Points, Curve::g1, m));
    }
  }
}

TEST(PlanBounds, FixedBaseTables) {
  // A table's workspace: a pass sorts copies x m entries a set (or several sets, up to 2^24
  // entries), its buckets are one set per `copies` windows; one copy is the plain MSM's.
  const uint64_t m = uint64_t(1) << 20;
  EXPECT_EQ(msm_workspace_bound(kBls12_381Points, Curve::g1, m, 16, 1), msm_workspace_bound(kBls12_381Points, Curve::g1, m, 16));
  // At 2^20 every pass holds 2^24 entries: 4 copies sort as many and need 4 sets of buckets and
  // reduction sums instead of 16, 16 copies one set.
  EXPECT_LT(msm_workspace_bound(kBls12_381Points, Curve::g1, m, 16, 4), msm_workspace_bound(kBls12_381Points, Curve::g1, m, 16));
  EXPECT_LT(msm_workspace_bound(kBls12_381Points, Curve::g1, m, 16, 16), msm_workspace_bound(kBls12_381Points, Curve::g1, m, 16, 4));
  EXPECT_EQ(msm_workspace_bound(kBls12_381Points, Curve::g1, m, 16, 16), msm_workspace_bound(kBls12_381Points, Curve::g1, m, 16, 40));
  // At 2^24 a set is a pass: 4 copies sort 4x the entries (+1.5 GiB of keys, values and sort
  // storage), far more than the 12 sets of buckets they save.
  const uint64_t big = uint64_t(1) << 24;
  EXPECT_GT(msm_workspace_bound(kBls12_381Points, Curve::g1, big, 16, 4), msm_workspace_bound(kBls12_381Points, Curve::g1, big, 16));
  EXPECT_THROW(msm_workspace_bound(kBls12_381Points, Curve::g1, m, 16, 0), std::invalid_argument);

  // No room: the bases alone at the default window.
  FixedBaseChoice none = choose_fixed_base(kBls12_381Points, Curve::g1, m, 0);
  EXPECT_EQ(none.copies, 1);
  EXPECT_EQ(none.c, default_msm_window(m));
  // Room for everything: a table that needs a single set, and cheaper than the plain MSM.
  const uint64_t tib = uint64_t(1) << 40;
  for (uint64_t n : {uint64_t(1) << 16, uint64_t(1) << 20, uint64_t(1) << 24}) {
    const FixedBaseChoice all = choose_fixed_base(kBls12_381Points, Curve::g1, n, tib);
    EXPECT_EQ((msm_windows(all.c) + all.copies - 1) / all.copies, 1) << "n " << n;
    EXPECT_LT(all.cost, choose_fixed_base(kBls12_381Points, Curve::g1, n, 0).cost);
    EXPECT_EQ(all.table_bytes, n * kBls12_381Points.g1_affine * uint64_t(all.copies));
    EXPECT_EQ(all.workspace_bytes, msm_workspace_bound(kBls12_381Points, Curve::g1, n, all.c, all.copies));
  }
  // A budget is never exceeded, and more room never costs more.
  const uint64_t n27 = uint64_t(1) << 27;
  double last = 1e300;
  for (uint64_t gib : {16, 40, 64, 100, 130}) {
    const FixedBaseChoice ch = choose_fixed_base(kBls12_381Points, Curve::g1, n27, gib << 30);
    if (ch.copies > 1) {
      EXPECT_LE(ch.table_bytes + ch.workspace_bytes, gib << 30) << gib << " GiB";
    }
    EXPECT_LE(ch.cost, last) << gib << " GiB";
    EXPECT_LT(uint64_t(ch.copies) * n27, uint64_t(1) << 31);
    last = ch.cost;
  }
  EXPECT_GT(choose_fixed_base(kBls12_381Points, Curve::g1, n27, uint64_t(130) << 30).copies, 1);
  const FixedBaseChoice g2 = choose_fixed_base(kBls12_381Points, Curve::g2, uint64_t(1) << 24, uint64_t(20) << 30);
  EXPECT_GT(g2.copies, 1);
  EXPECT_LE(g2.table_bytes + g2.workspace_bytes, uint64_t(20) << 30);
  EXPECT_EQ(g2.table_bytes, (uint64_t(1) << 24) * kBls12_381Points.g2_affine * uint64_t(g2.copies));
}

TEST(PlanShape, PorepLikeSizes) {
  const CircuitShape s = porep_like_shape(27);
  EXPECT_EQ(s.num_inputs, 9u);
  EXPECT_EQ(s.num_aux, (uint64_t(1) << 27) - 9);
  EXPECT_EQ(s.h_points, (uint64_t(1) << 27) - 1);
  EXPECT_NEAR(double(s.a_points - 9) / double(s.num_aux), 0.997, 1e-6);
  EXPECT_NEAR(double(s.b_points - 9) / double(s.num_aux), 0.254, 1e-6);
  // BRIEF: ~47 GB of SRS for 130 M aux; 134 M here.
  EXPECT_GT(s.srs_bytes(), 44 * kGiB);
  EXPECT_LT(s.srs_bytes(), 46 * kGiB);
  const CircuitShape k =
      shape_of(QueryLayout::of_sizes(HBasis::bellman, 9, s.h_points, s.num_aux, s.a_points, s.b_points, s.b_points),
               kBls12_381Points);
  EXPECT_EQ(k.lg, 27);
  EXPECT_EQ(k.h_points, s.h_points);
  EXPECT_EQ(k.b_points, s.b_points);
  EXPECT_EQ(shape_of(QueryLayout::of_sizes(HBasis::snarkjs, 9, uint64_t(1) << 27, s.num_aux, s.a_points, s.b_points,
                                           s.b_points),
                     kBn254Points)
                .lg,
            27);
  EXPECT_EQ(shape_of(QueryLayout::of_sizes(HBasis::snarkjs, 9, uint64_t(1) << 27, s.num_aux, s.a_points, s.b_points,
                                           s.b_points),
                     kBn254Points)
                .points,
            kBn254Points);
}

// The gather buffer holds a whole piece of every tail query in the prover's layout (the word
// ranks in front when resident, each section 256-byte aligned), for tiny keys too: a 4-constraint
// bn128 key's GPU proof once found room for no point (the bound had no alignment) and fell back
// to the CPU.
TEST(PlanShape, GatherHoldsAPieceOfEveryTailQuery) {
  CircuitShape tiny;
  tiny.lg = 2;
  tiny.num_inputs = 2;
  tiny.num_aux = 3;
  tiny.h_points = 4;
  tiny.a_points = 3;
  tiny.b_points = 2;
  for (const PointSizes& points : {kBls12_381Points, kBn254Points})
    for (CircuitShape s : {tiny, porep_like_shape(12), porep_like_shape(18)}) {
      s.points = points;
      for (SrsPlacement srs : {SrsPlacement::resident, SrsPlacement::streamed}) {
        const MemoryPlan p = plan_memory(request_for(s, 8 * kGiB, 2, srs));
        SCOPED_TRACE(testing::Message() << "2^" << s.lg << " G1 " << points.g1_affine << " B " << to_string(srs));
        const uint64_t gather = p.find("compute.gather")->bytes;
        const auto holds = [&](uint64_t n, uint64_t point_bytes) {
          const uint64_t words = srs == SrsPlacement::resident ? (n + 63) / 64 : 0;
          const uint64_t piece = std::min(p.msm_chunk, n);
          return gpu::GatherLayout::capacity(gather, words, point_bytes, piece) == piece;
        };
        EXPECT_TRUE(holds(s.num_aux, points.g1_affine)) << "L";
        EXPECT_TRUE(holds(s.a_points, points.g1_affine)) << "A";
        EXPECT_TRUE(holds(s.b_points, points.g1_affine)) << "B_G1";
        EXPECT_TRUE(holds(s.b_points, points.g2_affine)) << "B_G2";
      }
    }
  // The layout itself: ranks, then points, then scalars, each aligned.
  const gpu::GatherLayout g = gpu::GatherLayout::of(3, 4, 64);
  EXPECT_EQ(g.points, 256u);
  EXPECT_EQ(g.scalars, 512u);
  EXPECT_EQ(g.bytes, 512u + 4 * 32);
  EXPECT_EQ(gpu::GatherLayout::capacity(g.bytes, 3, 64, 100), 4u);
  EXPECT_EQ(gpu::GatherLayout::capacity(g.bytes - 1, 3, 64, 100), 3u);
  EXPECT_EQ(gpu::GatherLayout::capacity(g.bytes, 3, 64, 2), 2u);
  EXPECT_EQ(gpu::GatherLayout::capacity(511, 3, 64, 100), 0u);
}

// A BN254 key's shape plans with BN254's points (G1 64 bytes, G2 128; XYZZ 128 / 256): its
// regions are those sizes, not BLS12-381's, and the plan is sound resident and streamed.
TEST(PlanShape, Bn254PointsSizeTheRegions) {
  CircuitShape bls = porep_like_shape(22), bn = bls;
  bn.points = kBn254Points;
  EXPECT_EQ(kBn254Points.g1_affine, 64u);
  EXPECT_EQ(kBn254Points.g2_xyzz, 256u);
  EXPECT_EQ(bn.srs_bytes() * 3, bls.srs_bytes() * 2);
  const MemoryPlan p = plan_memory(request_for(bn, 80 * kGiB, 2));
  EXPECT_TRUE(plan_violations(p).empty()) << plan_violations(p).front();
  ASSERT_EQ(p.srs, SrsPlacement::resident);
  EXPECT_EQ(p.find("srs.l")->bytes, bn.num_aux * 64);
  EXPECT_EQ(p.find("srs.b_g2")->bytes, bn.b_points * 128);
  EXPECT_EQ(p.find("msm[0].sums")->bytes, msm_sums_bytes(kBn254Points, msm_windows(gpu::kMinWindow)));
  EXPECT_LT(p.find("msm[0].sums")->bytes, msm_sums_bytes(kBls12_381Points, msm_windows(gpu::kMinWindow)));
  EXPECT_LT(msm_workspace_bound(kBn254Points, Curve::g1, uint64_t(1) << 20, 16),
            msm_workspace_bound(kBls12_381Points, Curve::g1, uint64_t(1) << 20, 16));
  EXPECT_LT(minimum_budget(bn), minimum_budget(bls));
  EXPECT_LT(minimum_budget(bn, SrsPlacement::resident), minimum_budget(bls, SrsPlacement::resident));
  const MemoryPlan streamed =
      plan_memory(request_for(bn, minimum_budget(bn, SrsPlacement::streamed), 2, SrsPlacement::streamed));
  EXPECT_TRUE(plan_violations(streamed).empty()) << plan_violations(streamed).front();
  // A plan checked against the other curve's points is caught: its regions are too small.
  MemoryPlan wrong = p;
  wrong.shape.points = kBls12_381Points;
  EXPECT_FALSE(plan_violations(wrong).empty());
  // Sizes of neither curve are refused.
  CircuitShape odd = bls;
  odd.points = PointSizes::over(40);
  EXPECT_THROW(odd.validate(), std::invalid_argument);
}

// A resident SRS's spare budget goes to a fixed-base table for the H MSM; a streamed one, or a
// request without it, keeps the bases alone.
TEST(PlanShape, HTableFromTheSpareBudget) {
  const CircuitShape s = porep_like_shape(27);
  const MemoryPlan card = plan_memory(request_for(s, 139 * kGiB, 2));
  EXPECT_TRUE(plan_violations(card).empty()) << plan_violations(card).front();
  ASSERT_EQ(card.srs, SrsPlacement::resident);
  EXPECT_GT(card.h_copies, 1);
  EXPECT_LE(card.arena_bytes, card.budget);
  EXPECT_GE(card.find("srs.h")->bytes, s.h_points * kBls12_381Points.g1_affine * uint64_t(card.h_copies));
  EXPECT_GE(card.workspace_bytes, msm_workspace_bound(kBls12_381Points, Curve::g1, s.h_points, card.window_h, card.h_copies));
  EXPECT_NE(card.describe().find("fixed-base table"), std::string::npos);

  PlanRequest off = request_for(s, 139 * kGiB, 2);
  off.h_table = false;
  const MemoryPlan plain = plan_memory(off);
  EXPECT_EQ(plain.h_copies, 1);
  EXPECT_LT(plain.arena_bytes, card.arena_bytes);
  EXPECT_EQ(plain.find("srs.h")->bytes, s.h_points * kBls12_381Points.g1_affine);

  const MemoryPlan small = plan_memory(request_for(s, 16 * kGiB, 2));
  EXPECT_EQ(small.h_copies, 1);
  EXPECT_TRUE(plan_violations(small).empty());

  // The re-check catches a table the regions cannot hold, or its MSM's workspace.
  MemoryPlan bad = card;
  bad.h_copies += 1;
  EXPECT_FALSE(plan_violations(bad).empty());
  bad = card;
  bad.window_h += 1;
  EXPECT_FALSE(plan_violations(bad).empty());
  bad = plan_memory(request_for(s, 139 * kGiB, 2, SrsPlacement::streamed));
  bad.h_copies = 2;
  EXPECT_FALSE(plan_violations(bad).empty());
}

// A resident plan holds a root per NTT twist when what the H table left has room for it (the
// table keeps its copies); a request without it, a streamed plan, or a resident one at its minimum
// budget keeps the default tables, and the re-check catches a flag its region cannot hold.
TEST(PlanShape, FullNttTwistTableWhenItFits) {
  const CircuitShape s = porep_like_shape(27);
  const MemoryPlan card = plan_memory(request_for(s, 139 * kGiB, 2));
  ASSERT_EQ(card.srs, SrsPlacement::resident);
  EXPECT_TRUE(card.ntt_full_twist);
  EXPECT_TRUE(plan_violations(card).empty()) << plan_violations(card).front();
  EXPECT_GE(card.find("ntt.tables")->bytes, s.domain() * kScalarBytes);
  EXPECT_EQ(card.find("ntt.tables")->bytes, ntt_tables_bound(27, true));
  EXPECT_GT(card.h_copies, 1);
  EXPECT_NE(card.describe().find("a root per twist"), std::string::npos);

  PlanRequest off = request_for(s, 139 * kGiB, 2);
  off.ntt_full_twist = false;
  const MemoryPlan plain = plan_memory(off);
  EXPECT_FALSE(plain.ntt_full_twist);
  EXPECT_EQ(plain.find("ntt.tables")->bytes, ntt_tables_bound(27));
  EXPECT_LT(plain.find("ntt.tables")->bytes, 64 * kMiB);

  EXPECT_FALSE(plan_memory(request_for(s, 16 * kGiB, 2)).ntt_full_twist);
  const uint64_t minimum = minimum_budget(s, SrsPlacement::resident);
  const MemoryPlan tight = plan_memory(request_for(s, minimum, 2, SrsPlacement::resident));
  EXPECT_FALSE(tight.ntt_full_twist);
  EXPECT_TRUE(plan_violations(tight).empty());

  MemoryPlan bad = plain;
  bad.ntt_full_twist = true;
  EXPECT_FALSE(plan_violations(bad).empty());
}

TEST(PlanShape, BadShapesAndRequestsAreRejected) {
  const CircuitShape good = porep_like_shape(12);
  EXPECT_NO_THROW(plan_memory(request_for(good, kGiB, 2)));
  auto bad = [&](auto edit) {
    CircuitShape s = good;
    edit(s);
    EXPECT_THROW(plan_memory(request_for(s, kGiB, 2)), std::invalid_argument);
  };
  bad([](CircuitShape& s) { s.lg = 0; });
  bad([](CircuitShape& s) { s.lg = 32; });
  bad([](CircuitShape& s) { s.num_inputs = 0; });
  bad([](CircuitShape& s) { s.h_points = 0; });
  bad([](CircuitShape& s) { s.h_points = s.domain() + 1; });
  bad([](CircuitShape& s) { s.a_points = s.num_variables() + 1; });
  bad([](CircuitShape& s) { s.b_points = s.num_variables() + 1; });
  bad([](CircuitShape& s) { s.num_aux = uint64_t(1) << 32; });
  for (int gw : {0, -1, 65}) EXPECT_THROW(plan_memory(request_for(good, kGiB, gw)), std::invalid_argument) << gw;
  PlanRequest r = request_for(good, kGiB, 2);
  r.budget = r.device_memory - kReserve + 1;  // budget eats into the context reserve
  EXPECT_THROW(plan_memory(r), std::invalid_argument);
  r.device_memory = kReserve;  // nothing left for an arena
  r.budget = 0;
  EXPECT_THROW(plan_memory(r), std::invalid_argument);
}

// Issue 6: budgets 8, 16, 24, 80, 141 GiB x sizes 2^10 .. 2^28 x gw 1 .. 4.
TEST(PlanSweep, BudgetsSizesWorkers) {
  int feasible = 0, infeasible = 0, resident = 0;
  for (uint64_t gib : {8, 16, 24, 80, 141}) {
    const uint64_t budget = gib * kGiB;
    for (int lg = 10; lg <= 28; ++lg) {
      const CircuitShape s = porep_like_shape(lg);
      const uint64_t minimum = minimum_budget(s), res_min = minimum_budget(s, SrsPlacement::resident);
      ASSERT_LE(minimum, res_min);
      // Nothing fits below a, b, c of one partition plus the SRS chunk buffers.
      ASSERT_GT(minimum, 3 * 32 * s.domain());
      ASSERT_GT(res_min, s.srs_bytes() + 3 * 32 * s.domain());
      for (int gw = 1; gw <= 4; ++gw) {
        SCOPED_TRACE(testing::Message() << gib << " GiB, 2^" << lg << ", gw " << gw);
        const PlanRequest req = request_for(s, budget, gw);
        if (budget < minimum) {
          ++infeasible;
          try {
            plan_memory(req);
            ADD_FAILURE() << "a plan below the minimum";
          } catch (const PlanError& e) {
            const std::string m = e.what();
            EXPECT_EQ(e.budget(), budget);
            EXPECT_EQ(e.minimum(), minimum);
            EXPECT_NE(m.find("below the minimum " + format_bytes(minimum)), std::string::npos) << m;
            EXPECT_NE(m.find("budget " + format_bytes(budget)), std::string::npos) << m;
            EXPECT_NE(m.find("do not fit"), std::string::npos) << m;
          }
          continue;
        }
        ++feasible;
        const MemoryPlan p = plan_memory(req);
        const auto problems = plan_violations(p);
        EXPECT_TRUE(problems.empty()) << problems.front();
        EXPECT_LE(p.arena_bytes, budget);
        expect_disjoint(p);
        EXPECT_GE(p.stage_slots, 1);
        EXPECT_LE(p.stage_slots, p.msm_slots);
        EXPECT_LE(p.msm_slots, gw);
        // At gw >= 2 a second msm slot lets the next partition stage while this one computes;
        // only a resident SRS (worth more than the overlap) may leave no room for it.
        if (gw >= 2 && p.msm_slots < 2) {
          EXPECT_EQ(p.srs, SrsPlacement::resident);
          EXPECT_LT(budget, res_min + p.group_bytes(RegionGroup::msm, 0)) << "room for a second msm slot unused";
        }
        EXPECT_EQ(p.srs == SrsPlacement::resident, budget >= res_min) << "resident must be chosen when it fits";
        EXPECT_EQ(p.resident_minimum, res_min);
        EXPECT_EQ(p.streamed_minimum, minimum_budget(s, SrsPlacement::streamed));
        resident += p.srs == SrsPlacement::resident;
      }
    }
  }
  // The sweep covers all three outcomes.
  EXPECT_GT(feasible, 0);
  EXPECT_GT(infeasible, 0);
  EXPECT_GT(resident, 0);
  EXPECT_GT(feasible - resident, 0);
}

TEST(PlanChoices, Lg27OnAnH200IsResident) {
  const CircuitShape s = porep_like_shape(27);
  for (int gw = 1; gw <= 4; ++gw) {
    const MemoryPlan p = plan_memory(request_for(s, 141 * kGiB, gw));
    EXPECT_EQ(p.srs, SrsPlacement::resident);
    EXPECT_EQ(p.stage_slots, gw);  // 45 GiB SRS + gw x 16 GiB per partition fit
    EXPECT_EQ(p.msm_slots, gw);
    EXPECT_LE(p.msm_cost_ratio, 1.10);
    ASSERT_NE(p.find("srs.b_g2"), nullptr);
    EXPECT_EQ(p.find("srs.b_g2")->bytes, s.b_points * kBls12_381Points.g2_affine);
  }
  // The card itself: 141 GB with the default budget (the device less the reserve).
  PlanRequest r;
  r.shape = s;
  r.device_memory = 141000000000;
  r.gw = 2;
  const MemoryPlan p = plan_memory(r);
  EXPECT_EQ(p.budget, r.device_memory - kDefaultReserve);
  EXPECT_EQ(p.srs, SrsPlacement::resident);
  EXPECT_EQ(p.stage_slots, 2);
  EXPECT_EQ(p.msm_chunk, s.h_points);  // every MSM in one pass
  // Nothing cut: the default window of its largest MSMs (22 at 2^27: a window fewer than 20 or 21,
  // which the cost model prefers too) fits beside everything.
  EXPECT_EQ(p.window_g1, default_msm_window(s.h_points));
  EXPECT_LE(p.msm_cost_ratio, 1.0);
}

TEST(PlanChoices, Lg27At16GiBIsStreamed) {
  const CircuitShape s = porep_like_shape(27);
  for (int gw = 1; gw <= 4; ++gw) {
    const MemoryPlan p = plan_memory(request_for(s, 16 * kGiB, gw));
    EXPECT_EQ(p.srs, SrsPlacement::streamed);
    EXPECT_EQ(p.stage_slots, 1);  // a, b, c are 12 GiB: one set, handed over after the H MSM
    EXPECT_EQ(p.msm_slots, gw);
    EXPECT_NE(p.find("compute.srs_chunk[1]"), nullptr);
    EXPECT_EQ(p.find("srs.h"), nullptr);
    EXPECT_LT(p.msm_chunk, s.h_points);  // pieces
    EXPECT_LE(p.arena_bytes, 16 * kGiB);
    // The H MSM takes stage b + c (8 GiB, dead after the H step) for its workspace and two point
    // buffers: pieces of (2^27 - 1) / 8 points, about four times msm_chunk, more than a chunk buffer holds.
    EXPECT_TRUE(p.h_workspace_in_stage);
    EXPECT_TRUE(p.h_points_in_stage);
    EXPECT_GE(p.h_chunk, 4 * p.msm_chunk - 1);
    EXPECT_GT(p.h_chunk * kBls12_381Points.g1_affine, p.chunk_buffer_bytes);
    EXPECT_LE(HStageLayout::of(kBls12_381Points, p.h_chunk, p.window_h).bytes, 2 * s.domain() * kScalarBytes);
    EXPECT_TRUE(plan_violations(p).empty());
    MemoryPlan q = p;
    q.h_chunk = 2 * s.h_points;  // two point buffers of this size overflow stage b + c
    EXPECT_FALSE(plan_violations(q).empty());
    q = p;
    q.h_points_in_stage = false;  // then its points would have to fit a chunk buffer
    EXPECT_FALSE(plan_violations(q).empty());
    q = p;
    q.window_h = 24;  // a workspace beyond stage b + c at these pieces
    for (Region& r : q.regions)
      if (r.name == "stage[0].c") r.bytes = 1 << 20;
    EXPECT_FALSE(plan_violations(q).empty());
  }
  // 24 GiB: still streamed (the SRS alone is 45 GiB), bigger pieces than at 16 GiB.
  EXPECT_EQ(plan_memory(request_for(s, 24 * kGiB, 2)).srs, SrsPlacement::streamed);
  EXPECT_GT(plan_memory(request_for(s, 24 * kGiB, 2)).msm_chunk, plan_memory(request_for(s, 16 * kGiB, 2)).msm_chunk);
  // 80 GiB: resident, with room to stage while computing.
  const MemoryPlan p80 = plan_memory(request_for(s, 80 * kGiB, 2));
  EXPECT_EQ(p80.srs, SrsPlacement::resident);
  EXPECT_EQ(p80.msm_slots, 2);
}

// What a prover of a plan holds on the host while it lives (charged to a host budget), by hand:
// streamed at 16 GiB, one stage slot's pinned a and b (2 · 2^27 scalars), two pack buffers of a
// chunk buffer each, and the 45 GiB SRS host copy the chunks come from; resident at 80 GiB, each
// stage slot's a, b and z, and no SRS copy.
TEST(PlanChoices, HostHoldingsByHand) {
  const CircuitShape s = porep_like_shape(27);
  const MemoryPlan streamed = plan_memory(request_for(s, 16 * kGiB, 2));
  ASSERT_EQ(streamed.srs, SrsPlacement::streamed);
  ASSERT_EQ(streamed.stage_slots, 1);
  EXPECT_EQ(streamed.pinned_staging_bytes(), 2 * s.domain() * kScalarBytes);  // 8 GiB
  EXPECT_EQ(streamed.held_host_bytes(true),
            8 * kGiB + 2 * streamed.chunk_buffer_bytes + s.srs_bytes());
  EXPECT_EQ(streamed.held_host_bytes(false), 2 * streamed.chunk_buffer_bytes + s.srs_bytes());
  const MemoryPlan resident = plan_memory(request_for(s, 80 * kGiB, 2));
  ASSERT_EQ(resident.srs, SrsPlacement::resident);
  EXPECT_EQ(resident.pinned_pack_bytes(), 0u);
  EXPECT_EQ(resident.held_host_bytes(true),
            uint64_t(resident.stage_slots) * (2 * s.domain() + s.num_variables()) * kScalarBytes);
  EXPECT_EQ(resident.held_host_bytes(false), 0u);
  EXPECT_NE(streamed.describe().find("charged to a host budget"), std::string::npos);
}

// Issue 45: a streamed plan lets 4 (or 2) partitions share one pass over the split queries'
// chunks when the msm slots carry twice as many partitions in flight, with chunks whose shared
// points and every partition's side fit the chunk buffer; resident plans, gw 2, and a request
// for none stay unbatched.
TEST(PlanChoices, StreamedPlansBatchTheSplitPasses) {
  const CircuitShape s = porep_like_shape(27);
  for (const uint64_t budget : {16 * kGiB, 24 * kGiB, 32 * kGiB}) {
    SCOPED_TRACE(format_bytes(budget));
    for (const auto& [gw, want] : std::vector<std::pair<int, int>>{{2, 1}, {3, 1}, {4, 2}, {7, 2}, {8, 4}, {12, 4}}) {
      const MemoryPlan p = plan_memory(request_for(s, budget, gw));
      ASSERT_EQ(p.srs, SrsPlacement::streamed);
      EXPECT_EQ(p.msm_slots, gw);
      EXPECT_EQ(p.split_batch, want) << "gw " << gw;
      EXPECT_TRUE(plan_violations(p).empty());
      if (want == 1) {
        EXPECT_EQ(p.batch_chunk, 0u);
        continue;
      }
      EXPECT_EQ(p.batch_chunk % 64, 0u);  // 2^27: chunks of whole bitmap words
      EXPECT_LE(p.batch_chunk, p.msm_chunk);
      EXPECT_LE(gpu::BatchChunkLayout::of(p.batch_chunk, uint64_t(want), kBls12_381Points.g2_affine).bytes,
                p.chunk_buffer_bytes);
      // The largest such chunk: twice as many points would not fit.
      if (2 * p.batch_chunk <= p.msm_chunk) {
        EXPECT_GT(gpu::BatchChunkLayout::of(2 * p.batch_chunk, uint64_t(want), kBls12_381Points.g2_affine).bytes,
                  p.chunk_buffer_bytes);
      }
      EXPECT_NE(p.describe().find("one pass over the L, A, B chunks serves"), std::string::npos);
      MemoryPlan q = p;
      q.batch_chunk = 2 * p.msm_chunk;
      EXPECT_FALSE(plan_violations(q).empty());
      q = p;
      q.split_batch = 3;
      EXPECT_FALSE(plan_violations(q).empty());
      q = p;
      q.msm_slots = q.stage_slots = 1;
      EXPECT_FALSE(plan_violations(q).empty());
    }
    PlanRequest none = request_for(s, budget, 8);
    none.split_batch = 1;
    EXPECT_EQ(plan_memory(none).split_batch, 1);
    PlanRequest two = request_for(s, budget, 8);
    two.split_batch = 2;
    EXPECT_EQ(plan_memory(two).split_batch, 2);
  }
  // A small circuit's pieces are its whole queries (msm_chunk 2^10 - 1, not whole bitmap words):
  // its batch chunks are the largest power of two whose sides fit, or a whole query when that fits.
  const CircuitShape small = porep_like_shape(10);
  const MemoryPlan ps = plan_memory(request_for(small, 1 * kGiB, 8, SrsPlacement::streamed));
  EXPECT_EQ(ps.split_batch, 4);
  EXPECT_EQ(ps.batch_chunk, 512u);
  EXPECT_TRUE(plan_violations(ps).empty());
  MemoryPlan whole = ps;  // one chunk of a whole query, when the buffer holds it
  whole.batch_chunk = whole.msm_chunk;
  whole.chunk_buffer_bytes = 1ull << 30;
  EXPECT_NE(whole.msm_chunk % 64, 0u);
  const std::vector<std::string> found = plan_violations(whole);
  EXPECT_TRUE(std::none_of(found.begin(), found.end(),
                           [](const std::string& v) { return v.find("batch chunks") != std::string::npos; }));
  whole.batch_chunk = 100;  // neither whole words nor a whole query
  EXPECT_FALSE(plan_violations(whole).empty());
  const MemoryPlan resident = plan_memory(request_for(s, 80 * kGiB, 8));
  EXPECT_EQ(resident.srs, SrsPlacement::resident);
  EXPECT_EQ(resident.split_batch, 1);
  MemoryPlan q = resident;
  q.split_batch = 2;
  q.batch_chunk = 1 << 20;
  EXPECT_FALSE(plan_violations(q).empty());
  PlanRequest bad = request_for(s, 16 * kGiB, 8);
  bad.split_batch = -1;
  EXPECT_THROW(plan_memory(bad), std::invalid_argument);
}

TEST(PlanChoices, BelowTheMinimumSaysWhatDidNotFit) {
  const CircuitShape s = porep_like_shape(27);
  try {
    plan_memory(request_for(s, 8 * kGiB, 2));
    FAIL() << "8 GiB cannot hold 12 GiB of a, b, c";
  } catch (const PlanError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("8.00 GiB"), std::string::npos) << m;
    EXPECT_NE(m.find("a, b, c of one partition (12.00 GiB) do not fit"), std::string::npos) << m;
    EXPECT_GT(e.minimum(), 12 * kGiB);
  }
  // Forcing a resident SRS into 16 GiB names the placement.
  try {
    plan_memory(request_for(s, 16 * kGiB, 2, SrsPlacement::resident));
    FAIL() << "a 45 GiB SRS cannot be resident in 16 GiB";
  } catch (const PlanError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("resident SRS"), std::string::npos) << m;
    EXPECT_NE(m.find("the resident SRS and NTT tables"), std::string::npos) << m;
    EXPECT_EQ(e.minimum(), minimum_budget(s, SrsPlacement::resident));
  }
  // Forcing streamed on a big card is honoured.
  EXPECT_EQ(plan_memory(request_for(s, 141 * kGiB, 2, SrsPlacement::streamed)).srs, SrsPlacement::streamed);
  // 2^28 does not fit 16 GiB at all (a, b, c are 24 GiB) but fits resident in 141 GiB.
  EXPECT_THROW(plan_memory(request_for(porep_like_shape(28), 16 * kGiB, 1)), PlanError);
  EXPECT_EQ(plan_memory(request_for(porep_like_shape(28), 141 * kGiB, 1)).srs, SrsPlacement::resident);
}

TEST(PlanChoices, MinimumIsExact) {
  for (int lg : {10, 16, 22, 27}) {
    const CircuitShape s = porep_like_shape(lg);
    for (SrsPlacement srs : {SrsPlacement::automatic, SrsPlacement::resident, SrsPlacement::streamed}) {
      SCOPED_TRACE(testing::Message() << "2^" << lg << " " << to_string(srs));
      const uint64_t m = minimum_budget(s, srs);
      const MemoryPlan p = plan_memory(request_for(s, m, 3, srs));
      EXPECT_TRUE(plan_violations(p).empty());
      EXPECT_EQ(p.arena_bytes, m);
      EXPECT_EQ(p.stage_slots, 1);
      EXPECT_EQ(p.msm_slots, 1);
      EXPECT_THROW(plan_memory(request_for(s, m - 1, 3, srs)), PlanError);
    }
  }
}

TEST(PlanChecker, CatchesCorruptedPlans) {
  // Without an H table (its workspace would cover the G1 window's: HTableFromTheSpareBudget
  // corrupts a plan with one).
  PlanRequest req = request_for(porep_like_shape(20), 4 * kGiB, 2);
  req.h_table = false;
  const MemoryPlan good = plan_memory(req);
  ASSERT_TRUE(plan_violations(good).empty());
  ASSERT_GE(good.regions.size(), 6u);
  auto expect_caught = [&](const char* what, auto edit) {
    MemoryPlan p = good;
    edit(p);
    EXPECT_FALSE(plan_violations(p).empty()) << what;
  };
  expect_caught("overlap", [](MemoryPlan& p) { p.regions[2].offset = p.regions[1].offset; });
  expect_caught("misaligned", [](MemoryPlan& p) { p.regions.back().offset += 8; });
  expect_caught("past the arena", [](MemoryPlan& p) { p.regions.back().bytes = p.arena_bytes; });
  expect_caught("over budget", [](MemoryPlan& p) { p.arena_bytes = p.budget + 1; });
  expect_caught("budget above device", [](MemoryPlan& p) { p.budget = p.device_memory; });
  expect_caught("a too small", [](MemoryPlan& p) {
    for (Region& r : p.regions)
      if (r.name == "stage[0].a") r.bytes -= 1;
  });
  expect_caught("workspace too small", [](MemoryPlan& p) { p.window_g1 += 1; });
  expect_caught("H pieces without a stage workspace", [](MemoryPlan& p) { p.h_chunk = 2 * p.msm_chunk; });
  expect_caught("gather buffer too small", [](MemoryPlan& p) {
    for (Region& r : p.regions)
      if (r.name == "compute.gather") r.bytes -= 1;
  });
  expect_caught("missing msm slot", [](MemoryPlan& p) {
    std::erase_if(p.regions, [](const Region& r) { return r.name == "msm[1].sums"; });
  });
  expect_caught("stage > msm", [](MemoryPlan& p) { p.stage_slots = p.msm_slots + 1; });
  expect_caught("slots > gw", [](MemoryPlan& p) { p.msm_slots = p.gw + 1; });
  expect_caught("duplicate", [](MemoryPlan& p) { p.regions[1].name = p.regions[0].name; });
  expect_caught("other placement", [](MemoryPlan& p) {
    p.srs = p.srs == SrsPlacement::resident ? SrsPlacement::streamed : SrsPlacement::resident;
  });
}

TEST(PlanDescribe, ListsModeAndRegions) {
  const MemoryPlan p = plan_memory(request_for(porep_like_shape(27), 141 * kGiB, 2));
  const std::string d = p.describe();
  EXPECT_NE(d.find("resident"), std::string::npos);
  for (const Region& r : p.regions) EXPECT_NE(d.find(r.name), std::string::npos) << r.name;
  EXPECT_NE(d.find(format_bytes(p.arena_bytes)), std::string::npos);
}

TEST(PlanBytes, ParsesSizes) {
  EXPECT_EQ(parse_byte_size("16GiB"), 16 * kGiB);
  EXPECT_EQ(parse_byte_size("141GB"), 141000000000u);
  EXPECT_EQ(parse_byte_size("4096"), 4096u);
  EXPECT_EQ(parse_byte_size(" 512 MiB "), 512 * kMiB);
  EXPECT_EQ(parse_byte_size("1.5gib"), 3 * kGiB / 2);
  EXPECT_EQ(parse_byte_size("2TB"), 2000000000000u);
  EXPECT_EQ(parse_byte_size("1KiB"), 1024u);
  EXPECT_EQ(parse_byte_size("7b"), 7u);
  for (const char* bad : {"", "GiB", "16 G", "16XB", "-1", "1e9", "99999999999999999999", "16GiB extra", "20000000TiB"})
    EXPECT_THROW(parse_byte_size(bad), std::invalid_argument) << bad;
  EXPECT_EQ(format_bytes(12 * kGiB), "12.00 GiB");
  EXPECT_EQ(format_bytes(100), "100 B");
}

// Random shapes, budgets, gw and placements (seed logged): a plan is either sound or refused
// with PlanError exactly when the budget is below the minimum; more budget never hurts.
TEST(PlanProperty, RandomShapesAndBudgets) {
  const uint64_t seed = 20240606;
  std::printf("PlanProperty seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  auto uniform = [&](uint64_t lo, uint64_t hi) { return std::uniform_int_distribution<uint64_t>(lo, hi)(rng); };
  int planned = 0, refused = 0;
  for (int iter = 0; iter < 5000; ++iter) {
    CircuitShape s;
    s.lg = int(uniform(4, 30));
    s.num_inputs = uniform(1, std::min<uint64_t>(s.domain(), 4096));
    s.num_aux = uniform(0, s.domain() * 2);
    s.h_points = uniform(0, 1) ? s.domain() : s.domain() - 1;
    s.a_points = uniform(0, s.num_variables());
    s.b_points = uniform(0, s.num_variables());
    s.points = uniform(0, 1) ? kBls12_381Points : kBn254Points;
    const uint64_t budget = uint64_t(std::exp2(std::uniform_real_distribution<double>(24, 38.5)(rng)));
    const int gw = int(uniform(1, 8));
    const SrsPlacement srs = SrsPlacement(uniform(0, 2));
    SCOPED_TRACE(testing::Message() << "iter " << iter << ": 2^" << s.lg << " inputs " << s.num_inputs << " aux "
                                    << s.num_aux << " a " << s.a_points << " b " << s.b_points << " budget " << budget
                                    << " gw " << gw << " " << to_string(srs) << " G1 " << s.points.g1_affine << " B");
    const uint64_t minimum = minimum_budget(s, srs);
    try {
      const MemoryPlan p = plan_memory(request_for(s, budget, gw, srs));
      ++planned;
      ASSERT_GE(budget, minimum);
      const auto problems = plan_violations(p);
      ASSERT_TRUE(problems.empty()) << problems.front();
      expect_disjoint(p);
      if (srs != SrsPlacement::automatic) {
        EXPECT_EQ(p.srs, srs);
      } else {
        EXPECT_EQ(p.srs == SrsPlacement::resident, budget >= minimum_budget(s, SrsPlacement::resident));
      }
      // Twice the budget: still a plan, never a worse placement or fewer slots.
      const MemoryPlan q = plan_memory(request_for(s, 2 * budget, gw, srs));
      EXPECT_TRUE(plan_violations(q).empty());
      EXPECT_GE(q.srs == SrsPlacement::resident, p.srs == SrsPlacement::resident);
      if (q.srs == p.srs) {
        EXPECT_GE(gw == 1 || q.msm_slots >= 2, gw == 1 || p.msm_slots >= 2);
      }
    } catch (const PlanError& e) {
      ++refused;
      EXPECT_LT(budget, minimum);
      EXPECT_EQ(e.minimum(), minimum);
    }
  }
  EXPECT_GT(planned, 500);
  EXPECT_GT(refused, 500);
}

}  // namespace
}  // namespace pp::engine
