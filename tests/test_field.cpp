// SPDX-License-Identifier: Apache-2.0 OR MIT
// Fp and Fr (BLS12-381's and BN254's) against a GMP reference on seeded random and edge values, plus field axioms, on
// every host arithmetic path (x86-64 mulx/adx kernels and portable code).
#include <gtest/gtest.h>

#include <iostream>
#include <random>
#include <utility>
#include <vector>

#include "gmp_oracle.hpp"
#include "proofpipe/ff/bls12_381.hpp"
#include "proofpipe/ff/bn254.hpp"

namespace pp::test {
namespace {

constexpr uint64_t kSeed = 0x5eed'f1e1d'0001ULL;
constexpr int kRandomCount = 2000;

template <class F>
class FieldTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::mt19937_64 rng(kSeed);
    p_ = modulus_mpz<F>();
    // Edge values: 0, 1, 2, p-1, p-2, (p-1)/2, (p+1)/2, and 2^(64k) +/- 1 at every limb boundary.
    std::vector<Mpz> edges;
    auto add_mod = [&](const Mpz& x) {
      Mpz r;
      mpz_mod(r.get(), x.get(), p_.get());
      edges.push_back(r);
    };
    for (long v : {0L, 1L, 2L, -1L, -2L}) {
      Mpz x;
      mpz_set_si(x.get(), v);
      add_mod(x);
    }
    Mpz half;
    mpz_sub_ui(half.get(), p_.get(), 1);
    mpz_fdiv_q_2exp(half.get(), half.get(), 1);
    add_mod(half);
    Mpz half1;
    mpz_add_ui(half1.get(), half.get(), 1);
    add_mod(half1);
    for (int k = 1; k < F::N; ++k) {
      for (long d : {-1L, 0L, 1L}) {
        Mpz x;
        mpz_setbit(x.get(), 64 * k);
        if (d < 0) mpz_sub_ui(x.get(), x.get(), 1);
        if (d > 0) mpz_add_ui(x.get(), x.get(), 1);
        add_mod(x);
      }
    }
    for (const Mpz& e : edges) {
      values_.push_back(e);
      elems_.push_back(element<F>(e));
    }
    edge_count_ = elems_.size();
    for (int i = 0; i < kRandomCount; ++i) {
      const F a = random_element<F>(rng);
      elems_.push_back(a);
      values_.push_back(value(a));
    }
    ASSERT_GT(elems_.size(), 20u);
  }
  Mpz reduce(const Mpz& x) const {
    Mpz r;
    mpz_mod(r.get(), x.get(), p_.get());
    return r;
  }
  // Applies `op` to each pair (i, i+offset) and checks it against `ref`.
  template <class Op, class Ref>
  void check_binary(Op op, Ref ref) {
    const size_t n = elems_.size();
    for (size_t i = 0; i < n; ++i) {
      for (size_t off : {size_t(0), size_t(1), size_t(7)}) {
        const size_t j = (i + off) % n;
        const F got = op(elems_[i], elems_[j]);
        Mpz want;
        ref(want, values_[i], values_[j]);
        want = reduce(want);
        ASSERT_EQ(value(got).hex(), want.hex()) << "inputs " << values_[i].hex() << ", " << values_[j].hex();
      }
    }
  }
  Mpz p_;
  std::vector<F> elems_;  // edge values first (edge_count_ of them), then random ones
  std::vector<Mpz> values_;
  size_t edge_count_ = 0;
};

using FieldTypes = ::testing::Types<Fp, Fr, bn254::Fp, bn254::Fr>;
TYPED_TEST_SUITE(FieldTest, FieldTypes);

TYPED_TEST(FieldTest, AddMatchesGmp) {
  this->check_binary([](auto a, auto b) { return a + b; },
                     [](Mpz& r, const Mpz& a, const Mpz& b) { mpz_add(r.get(), a.get(), b.get()); });
}
TYPED_TEST(FieldTest, SubMatchesGmp) {
  this->check_binary([](auto a, auto b) { return a - b; },
                     [](Mpz& r, const Mpz& a, const Mpz& b) { mpz_sub(r.get(), a.get(), b.get()); });
}
TYPED_TEST(FieldTest, MulMatchesGmp) {
  this->check_binary([](auto a, auto b) { return a * b; },
                     [](Mpz& r, const Mpz& a, const Mpz& b) { mpz_mul(r.get(), a.get(), b.get()); });
}
TYPED_TEST(FieldTest, SquareNegDoubleMatchGmp) {
  for (size_t i = 0; i < this->elems_.size(); ++i) {
    const auto& a = this->elems_[i];
    const Mpz& v = this->values_[i];
    Mpz sq, neg, dbl;
    mpz_mul(sq.get(), v.get(), v.get());
    mpz_neg(neg.get(), v.get());
    mpz_add(dbl.get(), v.get(), v.get());
    ASSERT_EQ(value(a.sqr()), this->reduce(sq));
    ASSERT_EQ(value(-a), this->reduce(neg));
    ASSERT_EQ(value(a.dbl()), this->reduce(dbl));
  }
}
TYPED_TEST(FieldTest, InverseMatchesGmp) {
  for (size_t i = 0; i < this->elems_.size(); i += 7) {
    const auto& a = this->elems_[i];
    if (a.is_zero()) {
      EXPECT_TRUE(a.inverse().is_zero()) << "inverse of zero is defined as zero";
      continue;
    }
    Mpz want;
    ASSERT_NE(mpz_invert(want.get(), this->values_[i].get(), this->p_.get()), 0);
    ASSERT_EQ(value(a.inverse()), want);
    ASSERT_TRUE((a * a.inverse()).is_one());
  }
}
TYPED_TEST(FieldTest, PowMatchesGmp) {
  std::mt19937_64 rng(kSeed + 1);
  for (size_t i = 0; i < this->elems_.size(); i += 50) {
    const Limbs<3> e{{rng(), rng(), rng() >> 7}};
    Mpz ev = to_mpz<3>(e.v);
    Mpz want;
    mpz_powm(want.get(), this->values_[i].get(), ev.get(), this->p_.get());
    ASSERT_EQ(value(this->elems_[i].pow(e)), want);
  }
}
TYPED_TEST(FieldTest, LegendreMatchesGmp) {
  for (size_t i = 0; i < this->elems_.size(); i += 3) {
    ASSERT_EQ(this->elems_[i].legendre(), mpz_legendre(this->values_[i].get(), this->p_.get()));
  }
}
TYPED_TEST(FieldTest, CanonicalRoundTripAndRangeCheck) {
  using F = TypeParam;
  for (const F& a : this->elems_) {
    uint8_t be[F::BYTES], le[F::BYTES];
    a.to_bytes_be(be);
    a.to_bytes_le(le);
    F b, c;
    ASSERT_TRUE(b.from_bytes_be(be));
    ASSERT_TRUE(c.from_bytes_le(le));
    ASSERT_EQ(a, b);
    ASSERT_EQ(a, c);
    for (int k = 0; k < F::BYTES; ++k) ASSERT_EQ(be[k], le[F::BYTES - 1 - k]);
  }
  // p itself, p + 1 and 2^(8·BYTES) - 1 are not canonical.
  for (int add : {0, 1}) {
    Mpz x = this->p_;
    mpz_add_ui(x.get(), x.get(), add);
    uint64_t limbs[F::N];
    from_mpz<F::N>(limbs, x);
    F out;
    EXPECT_FALSE(F::from_canonical(out, limbs)) << "accepted p + " << add;
  }
  uint8_t ones[F::BYTES];
  for (auto& b : ones) b = 0xff;
  F out;
  EXPECT_FALSE(out.from_bytes_be(ones));
}
TYPED_TEST(FieldTest, Axioms) {
  using F = TypeParam;
  const auto& e = this->elems_;
  for (size_t i = 0; i + 2 < e.size(); i += 3) {
    const F a = e[i], b = e[i + 1], c = e[i + 2];
    ASSERT_EQ(a + b, b + a);
    ASSERT_EQ(a * b, b * a);
    ASSERT_EQ((a + b) + c, a + (b + c));
    ASSERT_EQ((a * b) * c, a * (b * c));
    ASSERT_EQ(a * (b + c), a * b + a * c);
    ASSERT_EQ(a + F::zero(), a);
    ASSERT_EQ(a * F::one(), a);
    ASSERT_TRUE((a - a).is_zero());
    ASSERT_TRUE((a + (-a)).is_zero());
  }
}
TYPED_TEST(FieldTest, MontgomeryConstantsMatchGmp) {
  using F = TypeParam;
  // R = 2^(64N) mod p, R^2 mod p and -p^-1 mod 2^64 recomputed by GMP.
  Mpz r, r2, two64, inv;
  mpz_setbit(r.get(), 64 * F::N);
  mpz_mod(r.get(), r.get(), this->p_.get());
  mpz_mul(r2.get(), r.get(), r.get());
  mpz_mod(r2.get(), r2.get(), this->p_.get());
  constexpr Limbs<F::N> r1c = F::Consts::r1, r2c = F::Consts::r2;
  EXPECT_EQ(to_mpz<F::N>(r1c.v), r);
  EXPECT_EQ(to_mpz<F::N>(r2c.v), r2);
  mpz_setbit(two64.get(), 64);
  ASSERT_NE(mpz_invert(inv.get(), this->p_.get(), two64.get()), 0);
  mpz_sub(inv.get(), two64.get(), inv.get());
  EXPECT_EQ(mpz_get_ui(inv.get()), F::Consts::inv64);
  // one() is R mod p in memory and 1 in value.
  EXPECT_EQ(value(F::one()).hex(), "1");
  EXPECT_EQ(value(F::from_u64(12345)).hex(), "3039");
}

// ----- host arithmetic paths -----
// The host code has x86-64 BMI2/ADX kernels and portable C++ (the fallback on other CPUs and
// architectures). The tests above run on the default path (the kernels where the CPU has them);
// these run the GMP comparisons on every path available here and compare the paths bit for bit.

// Forces one path for a scope and restores the default, also when an assertion fails.
class HostPath {
 public:
  explicit HostPath(bool kernels) { field_allow_asm(kernels); }
  ~HostPath() { field_allow_asm(true); }
  HostPath(const HostPath&) = delete;
  HostPath& operator=(const HostPath&) = delete;
};

std::vector<bool> host_paths() {
  std::vector<bool> paths{false};
  if (field_asm_supported()) paths.push_back(true);
  return paths;
}

const char* path_name(bool kernels) { return kernels ? "mulx/adx kernels" : "portable"; }

TYPED_TEST(FieldTest, EveryHostPathMatchesGmp) {
  using F = TypeParam;
  std::cout << "[field] mulx/adx kernels " << (field_asm_supported() ? "available" : "unavailable")
            << "; testing " << host_paths().size() << " host path(s)\n";
  for (bool kernels : host_paths()) {
    SCOPED_TRACE(path_name(kernels));
    HostPath path(kernels);
    ASSERT_EQ(field_asm_enabled(), kernels);
    this->check_binary([](auto a, auto b) { return a + b; },
                       [](Mpz& r, const Mpz& a, const Mpz& b) { mpz_add(r.get(), a.get(), b.get()); });
    this->check_binary([](auto a, auto b) { return a - b; },
                       [](Mpz& r, const Mpz& a, const Mpz& b) { mpz_sub(r.get(), a.get(), b.get()); });
    this->check_binary([](auto a, auto b) { return a * b; },
                       [](Mpz& r, const Mpz& a, const Mpz& b) { mpz_mul(r.get(), a.get(), b.get()); });
    // In place (the result overwrites the first operand), as the kernels are called by *=.
    this->check_binary([](auto a, auto b) { return a *= b; },
                       [](Mpz& r, const Mpz& a, const Mpz& b) { mpz_mul(r.get(), a.get(), b.get()); });
    if (this->HasFatalFailure()) return;
    for (size_t i = 0; i < this->elems_.size(); ++i) {
      const F& a = this->elems_[i];
      const Mpz& v = this->values_[i];
      Mpz sq, neg, dbl;
      mpz_mul(sq.get(), v.get(), v.get());
      mpz_neg(neg.get(), v.get());
      mpz_add(dbl.get(), v.get(), v.get());
      ASSERT_EQ(value(a.sqr()), this->reduce(sq)) << v.hex();
      F s = a, t = a;
      s.square_inplace();
      t *= t;  // both operands and the result are one object
      ASSERT_EQ(value(s), this->reduce(sq)) << v.hex();
      ASSERT_EQ(value(t), this->reduce(sq)) << v.hex();
      ASSERT_EQ(value(-a), this->reduce(neg)) << v.hex();
      ASSERT_EQ(value(a.dbl()), this->reduce(dbl)) << v.hex();
      // The conversions in and out of Montgomery form are products too.
      ASSERT_EQ(value(element<F>(v)), v);
    }
    for (size_t i = 1; i < this->elems_.size(); i += 37) {
      Mpz want;
      if (mpz_invert(want.get(), this->values_[i].get(), this->p_.get()) == 0) continue;
      ASSERT_EQ(value(this->elems_[i].inverse()), want);
    }
  }
}

// Raw Montgomery limbs (any value below p is an element) built from carry-heavy limb patterns:
// 0, 1, all ones, 2^63, the modulus limbs and their neighbours.
template <class F>
F patterned_element(std::mt19937_64& rng) {
  constexpr Limbs<F::N> m = F::Consts::modulus;
  for (;;) {
    F a;
    for (int i = 0; i < F::N; ++i) {
      const uint64_t choices[] = {0, 1, ~uint64_t(0), ~uint64_t(0) - 1, uint64_t(1) << 63,
                                  m.v[i], m.v[i] - 1, m.v[i] + 1, rng()};
      a.l[i] = choices[rng() % (sizeof(choices) / sizeof(choices[0]))];
    }
    Limbs<F::N> v{};
    for (int i = 0; i < F::N; ++i) v.v[i] = a.l[i];
    if (limbs::less(v, m)) return a;
  }
}

// The device's a·b - c·d with one reduction (ff/mont_words.hpp, mul_sub_words: the Y of the XYZZ
// additions) run with the host emulation of its carry-chain instructions, against the host's two
// products and subtraction, on carry-patterned and random values (a·b < c·d or not).
TYPED_TEST(FieldTest, DeviceMulSubSequenceMatchesHost) {
  using F = TypeParam;
  constexpr Limbs<F::N> m = F::Consts::modulus;
  std::mt19937_64 rng(kSeed + 23);
  for (int t = 0; t < 50000; ++t) {
    const auto value_of = [&] { return t % 2 ? patterned_element<F>(rng) : random_element<F>(rng); };
    const F a = value_of(), b = value_of(), c = value_of(), d = value_of();
    F r;
    detail::EmuCarry k;
    detail::mul_sub_words<2 * F::N>(k, r.w(), a.w(), b.w(), c.w(), d.w(), reinterpret_cast<const uint32_t*>(m.v),
                                    uint32_t(F::Consts::inv64));
    ASSERT_EQ(r, a * b - c * d) << "case " << t;
  }
}

// The device's product, sum and difference (ff/mont_words.hpp: mont_mul_words, mod_add_words,
// mod_sub_words, the sequences Field's operators run on the GPU) with the host emulation of their
// carry-chain instructions, against the host's arithmetic (checked against GMP above): every pair
// of edge values, then carry-patterned and random pairs, aliased output included.
TYPED_TEST(FieldTest, DeviceWordSequencesMatchHost) {
  using F = TypeParam;
  constexpr Limbs<F::N> m = F::Consts::modulus;
  const auto* mw = reinterpret_cast<const uint32_t*>(m.v);
  constexpr int W = 2 * F::N;
  std::vector<std::pair<F, F>> pairs;
  for (size_t i = 0; i < this->edge_count_; ++i)
    for (size_t j = 0; j < this->edge_count_; ++j) pairs.emplace_back(this->elems_[i], this->elems_[j]);
  std::mt19937_64 rng(kSeed + 29);
  for (int t = 0; t < 50000; ++t) {
    const F a = t % 2 ? patterned_element<F>(rng) : random_element<F>(rng);
    const F b = t % 3 ? patterned_element<F>(rng) : random_element<F>(rng);
    pairs.emplace_back(a, b);
  }
  for (size_t t = 0; t < pairs.size(); ++t) {
    const auto& [a, b] = pairs[t];
    detail::EmuCarry k;
    F prod, sum, diff, sq = a;
    detail::mont_mul_words<W>(k, prod.w(), a.w(), b.w(), mw, uint32_t(F::Consts::inv64));
    detail::mont_mul_words<W>(k, sq.w(), sq.w(), sq.w(), mw, uint32_t(F::Consts::inv64));
    detail::mod_add_words<W>(k, sum.w(), a.w(), b.w(), mw);
    detail::mod_sub_words<W>(k, diff.w(), a.w(), b.w(), mw);
    ASSERT_EQ(prod, a * b) << "pair " << t;
    ASSERT_EQ(sq, a.sqr()) << "pair " << t;
    ASSERT_EQ(sum, a + b) << "pair " << t;
    ASSERT_EQ(diff, a - b) << "pair " << t;
  }
}

TYPED_TEST(FieldTest, HostPathsAgreeBitForBit) {
  using F = TypeParam;
  if (!field_asm_supported()) GTEST_SKIP() << "no BMI2/ADX here: the portable path is the only one";
  // Every pair of edge values, then random and carry-patterned pairs.
  std::vector<std::pair<F, F>> pairs;
  for (size_t i = 0; i < this->edge_count_; ++i)
    for (size_t j = 0; j < this->edge_count_; ++j)
      pairs.emplace_back(this->elems_[i], this->elems_[j]);
  std::mt19937_64 rng(kSeed + 9);
  for (int k = 0; k < 100000; ++k) {
    const F a = k % 2 ? patterned_element<F>(rng) : random_element<F>(rng);
    const F b = k % 3 ? patterned_element<F>(rng) : random_element<F>(rng);
    pairs.emplace_back(a, b);
  }
  constexpr size_t kOps = 8;  // a·b, a², a + b, a - b, -a, then a *= b, a in place², b *= b
  auto run = [&](bool kernels) {
    HostPath path(kernels);
    std::vector<F> out;
    out.reserve(kOps * pairs.size());
    for (const auto& [a, b] : pairs) {
      out.push_back(a * b);
      out.push_back(a.sqr());
      out.push_back(a + b);
      out.push_back(a - b);
      out.push_back(-a);
      F c = a, d = a, e = b;
      c *= b;
      d.square_inplace();
      e *= e;
      out.push_back(c);
      out.push_back(d);
      out.push_back(e);
    }
    return out;
  };
  const std::vector<F> fast = run(true), portable = run(false);
  constexpr Limbs<F::N> m = F::Consts::modulus;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const auto& [a, b] = pairs[i];
    // The constexpr CIOS that builds compile-time constants is the third opinion.
    F ref;
    detail::mont_mul_portable<F::N>(ref.l, a.l, b.l, m.v, F::Consts::inv64);
    ASSERT_EQ(fast[kOps * i], ref) << "pair " << i;
    ASSERT_EQ(fast[kOps * i + 5], ref) << "pair " << i << ", in place";
    ASSERT_EQ(fast[kOps * i + 6], fast[kOps * i + 1]) << "pair " << i << ", square in place";
    for (size_t k = 0; k < kOps; ++k)
      ASSERT_EQ(fast[kOps * i + k], portable[kOps * i + k]) << "pair " << i << ", op " << k;
  }
}

TEST(FpSqrt, RoundTripAndNonSquares) {
  std::mt19937_64 rng(kSeed + 2);
  const Mpz p = modulus_mpz<Fp>();
  int squares = 0, non_squares = 0;
  for (int i = 0; i < 300; ++i) {
    const Fp a = random_element<Fp>(rng);
    Fp s;
    const bool ok = sqrt(s, a);
    ASSERT_EQ(ok, mpz_legendre(value(a).get(), p.get()) >= 0);
    if (ok) {
      ASSERT_EQ(s.sqr(), a);
      ++squares;
    } else {
      ++non_squares;
    }
    Fp t;
    ASSERT_TRUE(sqrt(t, a.sqr()));
    ASSERT_TRUE(t == a || t == -a);
  }
  EXPECT_GT(squares, 100);
  EXPECT_GT(non_squares, 100);
}



// The Fp2 template on both curves' fields: axioms, u^2 = -1, the non-residue, Frobenius, the
// product against GMP's schoolbook, square roots.
template <class E>
class Fp2Test : public ::testing::Test {};
using Fp2Types = ::testing::Types<Fp2, bn254::Fp2>;
TYPED_TEST_SUITE(Fp2Test, Fp2Types);

TYPED_TEST(Fp2Test, AxiomsAndInverse) {
  using E = TypeParam;
  using F = typename E::Base;
  std::mt19937_64 rng(kSeed + 3);
  for (int i = 0; i < 300; ++i) {
    const E a{random_element<F>(rng), random_element<F>(rng)};
    const E b{random_element<F>(rng), random_element<F>(rng)};
    const E c{random_element<F>(rng), random_element<F>(rng)};
    ASSERT_EQ(a * b, b * a);
    ASSERT_EQ((a * b) * c, a * (b * c));
    ASSERT_EQ(a * (b + c), a * b + a * c);
    ASSERT_EQ(a.sqr(), a * a);
    ASSERT_TRUE((a * a.inverse()).is_one());
    // u^2 = -1 and xi = kXiC0 + u.
    const E u{F::zero(), F::one()};
    ASSERT_EQ(u.sqr(), -E::one());
    ASSERT_EQ(a.mul_by_nonresidue(), (a * E{F::from_u64(E::kXiC0), F::one()}));
    // Frobenius is the p-th power.
    constexpr auto p = F::Params::modulus;
    ASSERT_EQ(a.frobenius(), a.pow(p));
  }
}

TYPED_TEST(Fp2Test, MultiplicationMatchesGmpSchoolbook) {
  using E = TypeParam;
  using F = typename E::Base;
  std::mt19937_64 rng(kSeed + 4);
  const Mpz p = modulus_mpz<F>();
  for (int i = 0; i < 500; ++i) {
    const E a{random_element<F>(rng), random_element<F>(rng)};
    const E b{random_element<F>(rng), random_element<F>(rng)};
    const E c = a * b;
    E d;
    mul_into(d, a, b);
    Mpz t0, t1, re, im;
    mpz_mul(t0.get(), value(a.c0).get(), value(b.c0).get());
    mpz_mul(t1.get(), value(a.c1).get(), value(b.c1).get());
    mpz_sub(re.get(), t0.get(), t1.get());
    mpz_mod(re.get(), re.get(), p.get());
    mpz_mul(t0.get(), value(a.c0).get(), value(b.c1).get());
    mpz_mul(t1.get(), value(a.c1).get(), value(b.c0).get());
    mpz_add(im.get(), t0.get(), t1.get());
    mpz_mod(im.get(), im.get(), p.get());
    ASSERT_EQ(value(c.c0), re);
    ASSERT_EQ(value(c.c1), im);
    ASSERT_EQ(d, c);
    // The norm c0^2 + c1^2.
    Mpz n;
    mpz_mul(t0.get(), value(a.c0).get(), value(a.c0).get());
    mpz_mul(t1.get(), value(a.c1).get(), value(a.c1).get());
    mpz_add(n.get(), t0.get(), t1.get());
    mpz_mod(n.get(), n.get(), p.get());
    ASSERT_EQ(value(a.norm()), n);
  }
}

TYPED_TEST(Fp2Test, SqrtRoundTripAndNonSquares) {
  using E = TypeParam;
  using F = typename E::Base;
  std::mt19937_64 rng(kSeed + 5);
  int non_squares = 0;
  for (int i = 0; i < 200; ++i) {
    const E a{random_element<F>(rng), random_element<F>(rng)};
    E s;
    ASSERT_TRUE(sqrt(s, a.sqr()));
    ASSERT_TRUE(s == a || s == -a);
    const bool ok = sqrt(s, a);
    ASSERT_EQ(ok, a.is_square());
    if (ok) ASSERT_EQ(s.sqr(), a);
    else ++non_squares;
  }
  EXPECT_GT(non_squares, 50);
  // Elements of Fp embedded in Fp2 are all squares there.
  E s;
  const E minus_one = -E::one();
  ASSERT_TRUE(sqrt(s, minus_one));
  EXPECT_EQ(s.sqr(), minus_one);
}

// Square roots in BN254's Fp (p = 3 mod 4, as BLS12-381's: the same template).
TEST(Bn254FpSqrt, RoundTripAndNonSquares) {
  std::mt19937_64 rng(kSeed + 6);
  int non_squares = 0;
  for (int i = 0; i < 200; ++i) {
    const bn254::Fp a = random_element<bn254::Fp>(rng);
    bn254::Fp s;
    ASSERT_TRUE(sqrt(s, a.sqr()));
    ASSERT_TRUE(s == a || s == -a);
    const bool ok = sqrt(s, a);
    ASSERT_EQ(ok, a.legendre() >= 0);
    if (ok) ASSERT_EQ(s.sqr(), a);
    else ++non_squares;
  }
  EXPECT_GT(non_squares, 50);
}

// Canonical a0 + a1·u times b0 + b1·u, reduced, from the GMP values of the coordinates.
void fp2_product_gmp(Mpz& re, Mpz& im, const Mpz* a, const Mpz* b, const Mpz& p) {
  Mpz t0, t1;
  mpz_mul(t0.get(), a[0].get(), b[0].get());
  mpz_mul(t1.get(), a[1].get(), b[1].get());
  mpz_sub(re.get(), t0.get(), t1.get());
  mpz_mod(re.get(), re.get(), p.get());
  mpz_mul(t0.get(), a[0].get(), b[1].get());
  mpz_mul(t1.get(), a[1].get(), b[0].get());
  mpz_add(im.get(), t0.get(), t1.get());
  mpz_mod(im.get(), im.get(), p.get());
}

// The device's Fp2 product (ff/mont_words.hpp) is one instruction sequence over carry-chain
// primitives; here it runs with their host emulation, on the same words the GPU sees.
Fp2 emulated_device_fp2_mul(const Fp2& a, const Fp2& b) {
  constexpr Limbs<Fp::N> m = Fp::Consts::modulus;
  Fp2 r;
  detail::EmuCarry k;
  detail::fp2_mul_words<2 * Fp::N>(k, r.c0.w(), r.c1.w(), a.c0.w(), a.c1.w(), b.c0.w(), b.c1.w(),
                                   reinterpret_cast<const uint32_t*>(m.v), uint32_t(Fp::Consts::inv64));
  return r;
}

// Fp2 products and norms with edge coordinates (0, 1, 2, p-1, p-2, (p±1)/2, 2^(64k)±1) mixed with
// random ones, on every host path, by value and through mul_into with every aliasing of the result:
// the lazy-reduction product (a0·b0 < a1·b1 or not, the largest sums) meets its extremes here.
TEST(Fp2, ProductsOnEdgeCoordinatesMatchGmp) {
  std::mt19937_64 rng(kSeed + 6);
  const Mpz p = modulus_mpz<Fp>();
  std::vector<Mpz> pool;
  for (long v : {0L, 1L, 2L, -1L, -2L}) {
    Mpz x;
    mpz_set_si(x.get(), v);
    mpz_mod(x.get(), x.get(), p.get());
    pool.push_back(x);
  }
  Mpz half;
  mpz_sub_ui(half.get(), p.get(), 1);
  mpz_fdiv_q_2exp(half.get(), half.get(), 1);
  pool.push_back(half);
  mpz_add_ui(half.get(), half.get(), 1);
  pool.push_back(half);
  for (int k = 1; k < 6; ++k)
    for (int d : {-1, 1}) {
      Mpz x;
      mpz_setbit(x.get(), 64 * k);
      if (d < 0) mpz_sub_ui(x.get(), x.get(), 1);
      else mpz_add_ui(x.get(), x.get(), 1);
      pool.push_back(x);
    }
  const size_t edges = pool.size();
  for (int i = 0; i < 16; ++i) pool.push_back(value(random_element<Fp>(rng)));
  for (bool kernels : host_paths()) {
    SCOPED_TRACE(path_name(kernels));
    HostPath path(kernels);
    for (int t = 0; t < 20000; ++t) {
      Mpz av[2], bv[2];
      for (Mpz* v : {&av[0], &av[1], &bv[0], &bv[1]}) *v = pool[t % 3 ? rng() % edges : rng() % pool.size()];
      const Fp2 a{element<Fp>(av[0]), element<Fp>(av[1])};
      const Fp2 b{element<Fp>(bv[0]), element<Fp>(bv[1])};
      Mpz re, im, sre, sim;
      fp2_product_gmp(re, im, av, bv, p);
      fp2_product_gmp(sre, sim, av, av, p);
      Fp2 by_value = a * b, into, alias_a = a, alias_b = b, square = a;
      mul_into(into, a, b);
      mul_into(alias_a, alias_a, b);
      mul_into(alias_b, a, alias_b);
      mul_into(square, square, square);
      Fp2 device = emulated_device_fp2_mul(a, b);
      for (const Fp2* got : {&by_value, &into, &alias_a, &alias_b, &device}) {
        ASSERT_EQ(value(got->c0), re) << "a = " << av[0].hex() << " + " << av[1].hex() << "u, b = " << bv[0].hex()
                                      << " + " << bv[1].hex() << "u";
        ASSERT_EQ(value(got->c1), im) << "a = " << av[0].hex() << " + " << av[1].hex() << "u, b = " << bv[0].hex()
                                      << " + " << bv[1].hex() << "u";
      }
      ASSERT_EQ(value(square.c0), sre);
      ASSERT_EQ(value(square.c1), sim);
      ASSERT_EQ(value((a * a).c0), sre);
      // The norm a0^2 + a1^2 (one reduction for both squares on the kernel path).
      Mpz norm, t1;
      mpz_mul(norm.get(), av[0].get(), av[0].get());
      mpz_mul(t1.get(), av[1].get(), av[1].get());
      mpz_add(norm.get(), norm.get(), t1.get());
      mpz_mod(norm.get(), norm.get(), p.get());
      Fp n = a.c1;
      norm_into(n, a);
      ASSERT_EQ(value(n), norm);
      ASSERT_EQ(value(a.norm()), norm);
    }
  }
}

// The device's Fp2 product on carry-heavy coordinates (all-ones words, the modulus' own words)
// and random ones, against GMP: both signs of a0·b0 - a1·b1, the largest sums a0 + a1.
TEST(Fp2, DeviceProductSequenceOnCarryPatterns) {
  std::mt19937_64 rng(kSeed + 19);
  const Mpz p = modulus_mpz<Fp>();
  for (int t = 0; t < 50000; ++t) {
    const bool random = t % 4 == 0;
    const auto coordinate = [&] { return random ? random_element<Fp>(rng) : patterned_element<Fp>(rng); };
    const Fp2 a{coordinate(), coordinate()};
    const Fp2 b{coordinate(), coordinate()};
    const Mpz av[2] = {value(a.c0), value(a.c1)}, bv[2] = {value(b.c0), value(b.c1)};
    Mpz re, im;
    fp2_product_gmp(re, im, av, bv, p);
    const Fp2 got = emulated_device_fp2_mul(a, b);
    ASSERT_EQ(value(got.c0), re) << "case " << t;
    ASSERT_EQ(value(got.c1), im) << "case " << t;
  }
}

// The device's Fp2 a·b - c·d with two reductions (ff/mont_words.hpp, fp2_mul_sub_words: the Y of the
// G2 XYZZ additions) through the host emulation of its instructions, against GMP's two products and
// difference, on carry-patterned, random and edge coordinates (either product the larger, c·d = a·b).
TEST(Fp2, DeviceMulSubSequenceMatchesGmp) {
  std::mt19937_64 rng(kSeed + 31);
  const Mpz p = modulus_mpz<Fp>();
  constexpr Limbs<Fp::N> m = Fp::Consts::modulus;
  const Fp edges[] = {Fp::zero(), Fp::one(), -Fp::one(), Fp::from_u64(2), -Fp::from_u64(2)};
  for (int t = 0; t < 50000; ++t) {
    const auto coordinate = [&] {
      switch (t % 4) {
        case 0: return random_element<Fp>(rng);
        case 1: return edges[rng() % 5];
        default: return patterned_element<Fp>(rng);
      }
    };
    const Fp2 a{coordinate(), coordinate()}, b{coordinate(), coordinate()};
    const bool same = t % 97 == 0;  // a·b - a·b = 0
    const Fp2 c = same ? a : Fp2{coordinate(), coordinate()}, d = same ? b : Fp2{coordinate(), coordinate()};
    const Mpz av[2] = {value(a.c0), value(a.c1)}, bv[2] = {value(b.c0), value(b.c1)};
    const Mpz cv[2] = {value(c.c0), value(c.c1)}, dv[2] = {value(d.c0), value(d.c1)};
    Mpz re, im, re2, im2;
    fp2_product_gmp(re, im, av, bv, p);
    fp2_product_gmp(re2, im2, cv, dv, p);
    mpz_sub(re.get(), re.get(), re2.get());
    mpz_mod(re.get(), re.get(), p.get());
    mpz_sub(im.get(), im.get(), im2.get());
    mpz_mod(im.get(), im.get(), p.get());
    Fp2 r;
    detail::EmuCarry k;
    detail::fp2_mul_sub_words<2 * Fp::N>(k, r.c0.w(), r.c1.w(), a.c0.w(), a.c1.w(), b.c0.w(), b.c1.w(), c.c0.w(),
                                         c.c1.w(), d.c0.w(), d.c1.w(), reinterpret_cast<const uint32_t*>(m.v),
                                         uint32_t(Fp::Consts::inv64));
    ASSERT_EQ(value(r.c0), re) << "case " << t;
    ASSERT_EQ(value(r.c1), im) << "case " << t;
  }
}

#if defined(__x86_64__)
// The kernels under the lazy Fp2 product and the Fp squaring, against GMP: the 12-limb product
// and square for any 6-limb operands (carry-heavy limb patterns: all ones, 2^63, the modulus limbs), the reduction
// t·2^-384 mod p for t up to its bound p·2^384 - 1, its edges included.
TEST(FpLazy, WideProductAndReductionMatchGmp) {
  if (!field_asm_supported()) GTEST_SKIP() << "no BMI2/ADX here: the kernels cannot run";
  std::mt19937_64 rng(kSeed + 7);
  const Mpz p = modulus_mpz<Fp>();
  constexpr Limbs<6> m = FpParams::modulus;
  const uint64_t* k = detail::kMulxTable<FpParams>.v;
  Mpz r, rinv, bound;
  mpz_setbit(r.get(), 384);
  ASSERT_NE(mpz_invert(rinv.get(), r.get(), p.get()), 0);
  mpz_mul_2exp(bound.get(), p.get(), 384);  // p·2^384
  auto limb = [&](int i) {
    const uint64_t choices[] = {0, 1, ~uint64_t(0), ~uint64_t(0) - 1, uint64_t(1) << 63, m.v[i % 6], rng(), rng()};
    return choices[rng() % (sizeof(choices) / sizeof(choices[0]))];
  };
  for (int t = 0; t < 50000; ++t) {
    uint64_t a[6], b[6], w[12];
    for (int i = 0; i < 6; ++i) {
      a[i] = t == 0 ? ~uint64_t(0) : limb(i);
      b[i] = t == 0 ? ~uint64_t(0) : limb(i);
    }
    detail::mul_wide_mulx6(w, a, b);
    Mpz want;
    mpz_mul(want.get(), to_mpz<6>(a).get(), to_mpz<6>(b).get());
    ASSERT_EQ(to_mpz<12>(w), want) << to_mpz<6>(a).hex() << " * " << to_mpz<6>(b).hex();
    detail::sqr_wide_mulx6(w, a);
    mpz_mul(want.get(), to_mpz<6>(a).get(), to_mpz<6>(a).get());
    ASSERT_EQ(to_mpz<12>(w), want) << to_mpz<6>(a).hex() << " squared";
  }
  // Reduction inputs: 0, 1, the bound minus 1, 2, 2^64, 2^384 and their neighbours below it,
  // (p-1)·2^384 + (2^384 - 1), p^2 - 1, then patterned and uniform values reduced below it.
  std::vector<Mpz> inputs;
  auto push = [&](const Mpz& x) { inputs.push_back(x); };
  for (unsigned long v : {0UL, 1UL, 2UL}) {
    Mpz x;
    mpz_set_ui(x.get(), v);
    push(x);
    mpz_sub_ui(x.get(), bound.get(), v + 1);
    push(x);
  }
  for (int bit : {64, 383, 384, 385, 700, 761}) {
    Mpz x;
    mpz_setbit(x.get(), bit);
    push(x);
    mpz_sub_ui(x.get(), x.get(), 1);
    push(x);
  }
  {
    Mpz x;
    mpz_mul(x.get(), p.get(), p.get());
    mpz_sub_ui(x.get(), x.get(), 1);
    push(x);
    mpz_mul_ui(x.get(), x.get(), 2);
    push(x);
  }
  for (int t = 0; t < 50000; ++t) {
    uint64_t v[12];
    for (int i = 0; i < 12; ++i) v[i] = t % 2 ? limb(i) : rng();
    Mpz x = to_mpz<12>(v);
    mpz_mod(x.get(), x.get(), bound.get());
    push(x);
  }
  for (const Mpz& x : inputs) {
    ASSERT_LT(mpz_cmp(x.get(), bound.get()), 0);
    uint64_t in[12], out[6];
    from_mpz<12>(in, x);
    detail::redc_mulx6(out, in, k);
    Mpz want;
    mpz_mul(want.get(), x.get(), rinv.get());
    mpz_mod(want.get(), want.get(), p.get());
    ASSERT_EQ(to_mpz<6>(out), want) << "t = " << x.hex();
  }
}
#endif


}  // namespace
}  // namespace pp::test
