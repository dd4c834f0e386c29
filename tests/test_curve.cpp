// SPDX-License-Identifier: Apache-2.0 OR MIT
// G1 and G2 group laws against an affine chord-and-tangent oracle; coordinate systems agree. Both
// curves: BLS12-381 and BN254 run the same typed tests (ec/curve.hpp serves both).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "gmp_oracle.hpp"
#include "proofpipe/ec/bls12_381.hpp"
#include "proofpipe/ec/bn254.hpp"

namespace pp::test {
namespace {

constexpr uint64_t kSeed = 0xc0ffee'0002ULL;

// Textbook affine addition with one inversion: the independent oracle for the projective code.
template <class C>
Affine<C> oracle_add(const Affine<C>& p, const Affine<C>& q) {
  using F = typename C::Field;
  if (p.is_infinity()) return q;
  if (q.is_infinity()) return p;
  F lambda;
  if (p.x == q.x) {
    if (p.y != q.y || p.y.is_zero()) return Affine<C>::infinity();
    const F x2 = p.x.sqr();
    lambda = (x2 + x2 + x2) * p.y.dbl().inverse();
  } else {
    lambda = (q.y - p.y) * (q.x - p.x).inverse();
  }
  const F x3 = lambda.sqr() - p.x - q.x;
  return Affine<C>{x3, lambda * (p.x - x3) - p.y};
}

template <class C>
Affine<C> generator();
template <>
G1Affine generator<G1Curve>() {
  return g1_generator();
}
template <>
G2Affine generator<G2Curve>() {
  return g2_generator();
}
template <>
bn254::G1Affine generator<bn254::G1Curve>() {
  return bn254::g1_generator();
}
template <>
bn254::G2Affine generator<bn254::G2Curve>() {
  return bn254::g2_generator();
}

template <class C>
class CurveTest : public ::testing::Test {
 protected:
  using S = typename C::Scalar;
  void SetUp() override {
    std::mt19937_64 rng(kSeed);
    for (int i = 0; i < 24; ++i) {
      const S k = random_element<S>(rng);
      scalars_.push_back(k);
      points_.push_back(scalar_mul(generator<C>(), k).to_affine());
    }
    for (const auto& p : points_) ASSERT_FALSE(p.is_infinity());
  }
  std::vector<S> scalars_;
  std::vector<Affine<C>> points_;
};

using Curves = ::testing::Types<G1Curve, G2Curve, bn254::G1Curve, bn254::G2Curve>;
TYPED_TEST_SUITE(CurveTest, Curves);

TYPED_TEST(CurveTest, GeneratorOnCurveAndInSubgroup) {
  const auto g = generator<TypeParam>();
  EXPECT_TRUE(g.is_on_curve());
  EXPECT_TRUE(is_in_subgroup(g));
  for (const auto& p : this->points_) {
    EXPECT_TRUE(p.is_on_curve());
    EXPECT_TRUE(is_in_subgroup(p));
  }
}

TYPED_TEST(CurveTest, JacobianAddMatchesAffineOracle) {
  using J = Jacobian<TypeParam>;
  const auto& pts = this->points_;
  for (size_t i = 0; i + 1 < pts.size(); ++i) {
    const auto want = oracle_add(pts[i], pts[i + 1]);
    ASSERT_EQ((J::from_affine(pts[i]) + J::from_affine(pts[i + 1])).to_affine(), want);
    ASSERT_EQ(J::from_affine(pts[i]).add_mixed(pts[i + 1]).to_affine(), want);
    // Non-trivial Z on both sides.
    const J a = J::from_affine(pts[i]).dbl() + J::from_affine(pts[i]);
    const J b = J::from_affine(pts[i + 1]).dbl();
    ASSERT_EQ((a + b).to_affine(), oracle_add(a.to_affine(), b.to_affine()));
    ASSERT_EQ(a.add_mixed(pts[i + 1]).to_affine(), oracle_add(a.to_affine(), pts[i + 1]));
  }
}

TYPED_TEST(CurveTest, XyzzAddMatchesAffineOracle) {
  using X = XYZZ<TypeParam>;
  const auto& pts = this->points_;
  for (size_t i = 0; i + 1 < pts.size(); ++i) {
    const auto want = oracle_add(pts[i], pts[i + 1]);
    ASSERT_EQ(X::from_affine(pts[i]).add_mixed(pts[i + 1]).to_affine(), want);
    ASSERT_EQ((X::from_affine(pts[i]) + X::from_affine(pts[i + 1])).to_affine(), want);
    const X a = X::from_affine(pts[i]).dbl().add_mixed(pts[i]);
    const X b = X::dbl_affine(pts[i + 1]);
    ASSERT_EQ((a + b).to_affine(), oracle_add(a.to_affine(), b.to_affine()));
    ASSERT_EQ(a.add_mixed(pts[i + 1]).to_affine(), oracle_add(a.to_affine(), pts[i + 1]));
    ASSERT_EQ(a.to_jacobian().to_affine(), a.to_affine());
    ASSERT_TRUE(a.to_jacobian().is_on_curve());
  }
}

TYPED_TEST(CurveTest, DoublingAndSpecialCases) {
  using J = Jacobian<TypeParam>;
  using X = XYZZ<TypeParam>;
  using A = Affine<TypeParam>;
  for (const auto& p : this->points_) {
    const A twice = oracle_add(p, p);
    ASSERT_EQ(J::from_affine(p).dbl().to_affine(), twice);
    ASSERT_EQ((J::from_affine(p) + J::from_affine(p)).to_affine(), twice) << "add falls back to dbl";
    ASSERT_EQ(J::from_affine(p).add_mixed(p).to_affine(), twice);
    ASSERT_EQ(X::from_affine(p).add_mixed(p).to_affine(), twice);
    ASSERT_EQ((X::from_affine(p) + X::from_affine(p)).to_affine(), twice);
    ASSERT_EQ(X::dbl_affine(p).to_affine(), twice);
    // P + (-P) = O in every representation; O is the identity.
    ASSERT_TRUE((J::from_affine(p) + J::from_affine(-p)).is_infinity());
    ASSERT_TRUE(J::from_affine(p).add_mixed(-p).is_infinity());
    ASSERT_TRUE(X::from_affine(p).add_mixed(-p).is_infinity());
    ASSERT_TRUE((X::from_affine(p) + X::from_affine(-p)).is_infinity());
    ASSERT_EQ((J::infinity() + J::from_affine(p)).to_affine(), p);
    ASSERT_EQ(J::infinity().add_mixed(p).to_affine(), p);
    ASSERT_EQ(J::from_affine(p).add_mixed(A::infinity()).to_affine(), p);
    ASSERT_EQ(X::infinity().add_mixed(p).to_affine(), p);
    ASSERT_EQ((X::from_affine(p) + X::infinity()).to_affine(), p);
    ASSERT_TRUE(J::infinity().dbl().is_infinity());
    ASSERT_TRUE(X::infinity().dbl().is_infinity());
    ASSERT_TRUE(J::infinity().to_affine().is_infinity());
  }
}

TYPED_TEST(CurveTest, GroupLaws) {
  using J = Jacobian<TypeParam>;
  const auto& pts = this->points_;
  for (size_t i = 0; i + 2 < pts.size(); ++i) {
    const J a = J::from_affine(pts[i]), b = J::from_affine(pts[i + 1]), c = J::from_affine(pts[i + 2]);
    ASSERT_EQ(a + b, b + a);
    ASSERT_EQ((a + b) + c, a + (b + c));
    ASSERT_EQ((a + b) - b, a);
  }
}

TYPED_TEST(CurveTest, ScalarMulIsLinearAndOrderIsR) {
  using J = Jacobian<TypeParam>;
  using S = typename TypeParam::Scalar;
  const auto g = generator<TypeParam>();
  const auto& k = this->scalars_;
  for (size_t i = 0; i + 1 < k.size(); ++i) {
    ASSERT_EQ(scalar_mul(g, k[i] + k[i + 1]), scalar_mul(g, k[i]) + scalar_mul(g, k[i + 1]));
    ASSERT_EQ(scalar_mul(g, k[i] * k[i + 1]), scalar_mul(scalar_mul(g, k[i]), k[i + 1]));
  }
  // Small multiples against repeated addition.
  J acc = J::infinity();
  for (uint64_t n = 0; n < 40; ++n) {
    ASSERT_EQ(scalar_mul(g, S::from_u64(n)), acc) << "n = " << n;
    acc = acc.add_mixed(g);
  }
  // r·G = O and (r-1)·G = -G.
  constexpr Limbs<4> r = S::Params::modulus;
  EXPECT_TRUE(J::from_affine(g).mul(r).is_infinity());
  EXPECT_EQ(scalar_mul(g, -S::one()).to_affine(), -g);
}

TYPED_TEST(CurveTest, BatchToAffineMatchesSingle) {
  using J = Jacobian<TypeParam>;
  using A = Affine<TypeParam>;
  std::vector<J> in;
  for (const auto& p : this->points_) {
    in.push_back(J::from_affine(p).dbl());
    in.push_back(J::infinity());
  }
  std::vector<A> out(in.size());
  std::vector<typename TypeParam::Field> scratch(in.size());
  batch_to_affine(in.data(), out.data(), in.size(), scratch.data());
  for (size_t i = 0; i < in.size(); ++i) ASSERT_EQ(out[i], in[i].to_affine()) << "index " << i;
}

// A point on E(Fp) that is not in G1 (the cofactor is large, so the first x that works will do).
TEST(Subgroup, G1PointOutsideSubgroupRejected) {
  for (uint64_t x = 1;; ++x) {
    const Fp fx = Fp::from_u64(x);
    Fp y;
    if (!sqrt(y, fx.sqr() * fx + G1Curve::b)) continue;
    const G1Affine p{fx, y};
    ASSERT_TRUE(p.is_on_curve());
    EXPECT_FALSE(is_in_subgroup(p)) << "x = " << x;
    break;
  }
}

TEST(Subgroup, G2PointOutsideSubgroupRejected) {
  for (uint64_t x = 1;; ++x) {
    const Fp2 fx{Fp::from_u64(x), Fp::one()};
    Fp2 y;
    if (!sqrt(y, fx.sqr() * fx + G2Curve::b)) continue;
    const G2Affine p{fx, y};
    ASSERT_TRUE(p.is_on_curve());
    EXPECT_FALSE(is_in_subgroup(p)) << "x = " << x << " + u";
    break;
  }
}

// BN254: G1 has cofactor 1, so every point of E(Fp) is in it; the twist's G2 has a large
// cofactor h2: the first point found lies outside, and h2 times it inside.
TEST(Subgroup, Bn254G1EveryCurvePointInSubgroup) {
  int found = 0;
  for (uint64_t x = 1; found < 4; ++x) {
    const bn254::Fp fx = bn254::Fp::from_u64(x);
    bn254::Fp y;
    if (!sqrt(y, fx.sqr() * fx + bn254::G1Curve::b)) continue;
    const bn254::G1Affine p{fx, y};
    ASSERT_TRUE(p.is_on_curve());
    EXPECT_TRUE(is_in_subgroup(p)) << "x = " << x;
    ++found;
  }
}

TEST(Subgroup, Bn254G2PointOutsideSubgroupRejectedAndClearedByCofactor) {
  // h2 = 2p - r for BN curves.
  constexpr Limbs<4> h2 = limbs::from_hex<4>("30644e72e131a029b85045b68181585e06ceecda572a2489345f2299c0f9fa8d");
  for (uint64_t x = 1;; ++x) {
    const bn254::Fp2 fx{bn254::Fp::from_u64(x), bn254::Fp::one()};
    bn254::Fp2 y;
    if (!sqrt(y, fx.sqr() * fx + bn254::G2Curve::b)) continue;
    const bn254::G2Affine p{fx, y};
    ASSERT_TRUE(p.is_on_curve());
    EXPECT_FALSE(is_in_subgroup(p)) << "x = " << x << " + u";
    const bn254::G2Affine q = bn254::G2Jacobian::from_affine(p).mul(h2).to_affine();
    ASSERT_TRUE(q.is_on_curve());
    ASSERT_FALSE(q.is_infinity());
    EXPECT_TRUE(is_in_subgroup(q)) << "h2·P, x = " << x << " + u";
    break;
  }
}

TEST(Subgroup, OffCurvePointDetected) {
  G1Affine p = g1_generator();
  p.y = p.y + Fp::one();
  EXPECT_FALSE(p.is_on_curve());
  G2Affine q = g2_generator();
  q.x = q.x + Fp2::one();
  EXPECT_FALSE(q.is_on_curve());
}

}  // namespace
}  // namespace pp::test
