// SPDX-License-Identifier: Apache-2.0 OR MIT
// Tests of the Fp6/Fp12 tower and the BLS12-381 optimal ate pairing (axioms, bilinearity, noble vectors).
#include <gmp.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "proofpipe/ec/bls12_381.hpp"
#include "proofpipe/ff/tower.hpp"
#include "proofpipe/pairing/pairing.hpp"

namespace pp {
namespace {

// ---------------------------------------------------------------------------------------------
// Deterministic randomness.
constexpr uint64_t kSeed = 0x70726f6f66706970ULL;  // "proofpip"

std::mt19937_64& rng() {
  static std::mt19937_64 g = [] {
    std::printf("[test_pairing] mt19937_64 seed = 0x%016llx\n", (unsigned long long)kSeed);
    return std::mt19937_64(kSeed);
  }();
  return g;
}

Fp rand_fp() {
  for (;;) {
    uint64_t x[6];
    for (auto& w : x) w = rng()();
    x[5] &= (uint64_t(1) << 61) - 1;  // p < 2^381
    Fp r;
    if (Fp::from_canonical(r, x)) return r;
  }
}
Fr rand_fr() {
  for (;;) {
    uint64_t x[4];
    for (auto& w : x) w = rng()();
    x[3] &= (uint64_t(1) << 63) - 1;  // r < 2^255
    Fr r;
    if (Fr::from_canonical(r, x) && !r.is_zero()) return r;
  }
}
Fp2 rand_fp2() { return {rand_fp(), rand_fp()}; }
Fp6 rand_fp6() { return {rand_fp2(), rand_fp2(), rand_fp2()}; }
Fp12 rand_fp12() { return {rand_fp6(), rand_fp6()}; }

// ---------------------------------------------------------------------------------------------
// GMP helpers.
struct Mpz {
  mpz_t z;
  Mpz() { mpz_init(z); }
  ~Mpz() { mpz_clear(z); }
  Mpz(const Mpz&) = delete;
  Mpz& operator=(const Mpz&) = delete;
};
template <int N>
void mpz_from_limbs(mpz_t out, const Limbs<N>& a) {
  mpz_import(out, N, -1, sizeof(uint64_t), 0, 0, a.v);
}
template <int M>
Limbs<M> limbs_from_mpz(const mpz_t a) {
  if (mpz_sgn(a) < 0 || mpz_sizeinbase(a, 2) > size_t(64 * M)) throw std::runtime_error("too big");
  Limbs<M> r{};
  size_t count = 0;
  mpz_export(r.v, &count, -1, sizeof(uint64_t), 0, 0, a);
  return r;
}
void set_p(mpz_t z) { mpz_from_limbs(z, FpParams::modulus); }
void set_r(mpz_t z) { mpz_from_limbs(z, FrParams::modulus); }
// (p^k - 1) / d
template <int M>
Limbs<M> p_pow_minus_one_div(int k, unsigned long d) {
  Mpz p, e;
  set_p(p.z);
  mpz_pow_ui(e.z, p.z, k);
  mpz_sub_ui(e.z, e.z, 1);
  EXPECT_TRUE(mpz_divisible_ui_p(e.z, d));
  mpz_divexact_ui(e.z, e.z, d);
  return limbs_from_mpz<M>(e.z);
}
// p^k
template <int M>
Limbs<M> p_pow(int k) {
  Mpz p, e;
  set_p(p.z);
  mpz_pow_ui(e.z, p.z, k);
  return limbs_from_mpz<M>(e.z);
}

Limbs<4> canonical(const Fr& a) {
  Limbs<4> r{};
  a.to_canonical(r.v);
  return r;
}

// ---------------------------------------------------------------------------------------------
// Points.
G1Affine mul_g1(const G1Affine& p, const Fr& k) { return scalar_mul(p, k).to_affine(); }
G2Affine mul_g2(const G2Affine& q, const Fr& k) { return scalar_mul(q, k).to_affine(); }
G1Affine rand_g1() { return mul_g1(g1_generator(), rand_fr()); }
G2Affine rand_g2() { return mul_g2(g2_generator(), rand_fr()); }

Fr fr_from_hex(const char* hex) {
  Fr r;
  uint64_t v[4] = {};
  const std::string s(hex);
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[s.size() - 1 - i];
    const uint64_t d = (c >= '0' && c <= '9') ? uint64_t(c - '0') : uint64_t(c - 'a' + 10);
    v[i / 16] |= d << (4 * (i % 16));
  }
  EXPECT_TRUE(Fr::from_canonical(r, v));
  return r;
}
Fp12 fp12_from_hex(const std::array<const char*, 12>& h) {
  // Order c0.c0.c0, c0.c0.c1, c0.c1.c0, ..., c1.c2.c1 (noble's Fp12.toBytes order).
  Fp c[12];
  for (int i = 0; i < 12; ++i) {
    uint8_t bytes[48];
    for (int j = 0; j < 48; ++j) {
      auto nib = [](char ch) { return uint8_t(ch <= '9' ? ch - '0' : ch - 'a' + 10); };
      bytes[j] = uint8_t(nib(h[i][2 * j]) << 4 | nib(h[i][2 * j + 1]));
    }
    EXPECT_TRUE(c[i].from_bytes_be(bytes));
  }
  return Fp12{Fp6{Fp2{c[0], c[1]}, Fp2{c[2], c[3]}, Fp2{c[4], c[5]}},
              Fp6{Fp2{c[6], c[7]}, Fp2{c[8], c[9]}, Fp2{c[10], c[11]}}};
}

// Element of the cyclotomic subgroup: the easy part of the final exponentiation of x.
Fp12 easy_part(const Fp12& x) {
  Fp12 g = x.conjugate() * x.inverse();
  return g.frobenius_map<2>() * g;
}

// ---------------------------------------------------------------------------------------------
// Tower.

TEST(Tower, Fp6FieldAxioms) {
  const Fp6 v{Fp2::zero(), Fp2::one(), Fp2::zero()};
  for (int it = 0; it < 20; ++it) {
    const Fp6 a = rand_fp6(), b = rand_fp6(), c = rand_fp6();
    EXPECT_EQ((a * b) * c, a * (b * c));
    EXPECT_EQ(a * b, b * a);
    EXPECT_EQ(a * (b + c), a * b + a * c);
    EXPECT_EQ((a + b) - b, a);
    EXPECT_EQ(a + (-a), Fp6::zero());
    EXPECT_EQ(a.sqr(), a * a);
    EXPECT_EQ(a.dbl(), a + a);
    EXPECT_EQ(a * Fp6::one(), a);
    EXPECT_EQ(a * a.inverse(), Fp6::one());
    EXPECT_EQ(a.mul_by_nonresidue(), a * v);
    EXPECT_EQ(a.mul_by_01(b.c0, b.c1), (a * Fp6{b.c0, b.c1, Fp2::zero()}));
    EXPECT_EQ(a * c.c0, (a * Fp6{c.c0, Fp2::zero(), Fp2::zero()}));
  }
  // v^3 = xi = 1 + u.
  EXPECT_EQ(v * v * v, (Fp6{Fp2{Fp::one(), Fp::one()}, Fp2::zero(), Fp2::zero()}));
}

TEST(Tower, Fp12FieldAxioms) {
  const Fp12 w{Fp6::zero(), Fp6::one()};
  const Fp12 v{Fp6{Fp2::zero(), Fp2::one(), Fp2::zero()}, Fp6::zero()};
  EXPECT_EQ(w.sqr(), v);
  for (int it = 0; it < 20; ++it) {
    const Fp12 a = rand_fp12(), b = rand_fp12(), c = rand_fp12();
    EXPECT_EQ((a * b) * c, a * (b * c));
    EXPECT_EQ(a * b, b * a);
    EXPECT_EQ(a * (b + c), a * b + a * c);
    EXPECT_EQ((a - b) + b, a);
    EXPECT_EQ(a + (-a), Fp12::zero());
    EXPECT_EQ(a.sqr(), a * a);
    EXPECT_EQ(a * Fp12::one(), a);
    EXPECT_EQ(a * a.inverse(), Fp12::one());
    EXPECT_EQ(a.conjugate(), a.frobenius_map<6>());
  }
  // pow: small exponents and (p^12 - 1) -> 1.
  const Fp12 a = rand_fp12();
  EXPECT_EQ(a.pow(Limbs<1>{{5}}), a * a * a * a * a);
  EXPECT_EQ(a.pow(Limbs<1>{{0}}), Fp12::one());
  EXPECT_EQ(a.pow(p_pow_minus_one_div<72>(12, 1)), Fp12::one());
}

TEST(Tower, FrobeniusCoefficientsRecomputed) {
  // gamma[k][1] = xi^((p^k - 1)/6), gamma[k][i] = gamma[k][1]^i.
  const Fp2 xi{Fp::one(), Fp::one()};
  for (int k = 1; k < 12; ++k) {
    const Fp2 g = xi.pow(p_pow_minus_one_div<72>(k, 6));
    Fp2 gi = Fp2::one();
    for (int i = 0; i < 6; ++i) {
      EXPECT_EQ(detail::tower::frobenius_table<Fp2>.gamma[k][i], gi) << "k=" << k << " i=" << i;
      gi = gi * g;
    }
  }
  // gamma_1^6 = xi^(p-1) = conj(xi)/xi.
  const Fp2 g1 = detail::tower::frobenius_table<Fp2>.gamma[1][1];
  EXPECT_EQ(g1.pow(Limbs<1>{{6}}) * xi, xi.conjugate());
}

template <int K>
void check_frobenius_map_k(const Fp6& a6, const Fp12& a12) {
  // frobenius_map<K> == frobenius^K and == pow(p^K)
  Fp6 f6 = a6;
  Fp12 f12 = a12;
  for (int i = 0; i < K; ++i) {
    f6 = f6.frobenius();
    f12 = f12.frobenius();
  }
  EXPECT_EQ(a6.frobenius_map<K>(), f6) << "K=" << K;
  EXPECT_EQ(a12.frobenius_map<K>(), f12) << "K=" << K;
  if constexpr (K <= 3) {
    EXPECT_EQ(a6.frobenius_map<K>(), a6.pow(p_pow<18>(K))) << "K=" << K;
    EXPECT_EQ(a12.frobenius_map<K>(), a12.pow(p_pow<18>(K))) << "K=" << K;
  }
}
template <int... K>
void check_all_frobenius(const Fp6& a6, const Fp12& a12, std::integer_sequence<int, K...>) {
  (check_frobenius_map_k<K>(a6, a12), ...);
}

TEST(Tower, FrobeniusIsPowP) {
  for (int it = 0; it < 3; ++it) {
    const Fp6 a6 = rand_fp6();
    const Fp12 a12 = rand_fp12();
    EXPECT_EQ(a6.frobenius(), a6.pow(FpParams::modulus));
    EXPECT_EQ(a12.frobenius(), a12.pow(FpParams::modulus));
    check_all_frobenius(a6, a12, std::make_integer_sequence<int, 12>{});
    // x^(p^6) on Fp6 and x^(p^12) on Fp12 are the identity.
    Fp6 f6 = a6;
    for (int i = 0; i < 6; ++i) f6 = f6.frobenius();
    EXPECT_EQ(f6, a6);
    Fp12 f12 = a12;
    for (int i = 0; i < 12; ++i) f12 = f12.frobenius();
    EXPECT_EQ(f12, a12);
    // Frobenius is a ring homomorphism.
    const Fp12 b12 = rand_fp12();
    EXPECT_EQ((a12 * b12).frobenius(), a12.frobenius() * b12.frobenius());
  }
}

TEST(Tower, CyclotomicSquare) {
  for (int it = 0; it < 10; ++it) {
    const Fp12 g = easy_part(rand_fp12());
    // g is in the cyclotomic subgroup: g^(p^4 - p^2 + 1) = 1 and conj(g) = g^-1.
    EXPECT_EQ(g.conjugate() * g, Fp12::one());
    EXPECT_EQ(g.cyclotomic_sqr(), g.sqr());
    EXPECT_EQ(g.cyclotomic_sqr().cyclotomic_sqr(), g.sqr().sqr());
    const uint64_t e = rng()();
    EXPECT_EQ(g.cyclotomic_pow_u64(e), g.pow(Limbs<1>{{e}}));
  }
}

// ---------------------------------------------------------------------------------------------
// Final exponentiation.

TEST(FinalExponentiation, HardPartChainIdentity) {
  // h = (p^4 - p^2 + 1)/r = ((x - 1)/3)(x - 1)(x + p)(x^2 + p^2 - 1) + 1 with x = -0xd201000000010000.
  Mpz p, r, x, num, h, t, rhs;
  set_p(p.z);
  set_r(r.z);
  mpz_set_str(x.z, "-d201000000010000", 16);
  // r = x^4 - x^2 + 1, p = (x-1)^2 (x^4 - x^2 + 1)/3 + x
  mpz_pow_ui(t.z, x.z, 4);
  mpz_submul(t.z, x.z, x.z);
  mpz_add_ui(t.z, t.z, 1);
  EXPECT_EQ(mpz_cmp(t.z, r.z), 0);
  mpz_sub_ui(rhs.z, x.z, 1);
  mpz_mul(rhs.z, rhs.z, rhs.z);
  mpz_mul(rhs.z, rhs.z, r.z);
  EXPECT_TRUE(mpz_divisible_ui_p(rhs.z, 3));
  mpz_divexact_ui(rhs.z, rhs.z, 3);
  mpz_add(rhs.z, rhs.z, x.z);
  EXPECT_EQ(mpz_cmp(rhs.z, p.z), 0);

  mpz_pow_ui(num.z, p.z, 4);
  mpz_submul(num.z, p.z, p.z);
  mpz_add_ui(num.z, num.z, 1);
  EXPECT_TRUE(mpz_divisible_p(num.z, r.z));
  mpz_divexact(h.z, num.z, r.z);
  // r * h == p^4 - p^2 + 1
  mpz_mul(t.z, r.z, h.z);
  EXPECT_EQ(mpz_cmp(t.z, num.z), 0);

  Mpz xm1, xm1d3, f3, f4;
  mpz_sub_ui(xm1.z, x.z, 1);
  EXPECT_TRUE(mpz_divisible_ui_p(xm1.z, 3));
  mpz_divexact_ui(xm1d3.z, xm1.z, 3);
  EXPECT_EQ(mpz_cmp_si(xm1d3.z, 0), -1);
  Mpz expect_abs;
  mpz_set_str(expect_abs.z, "460055555555aaab", 16);  // kBlsXPlus1Div3 in pairing.cpp
  mpz_neg(expect_abs.z, expect_abs.z);
  EXPECT_EQ(mpz_cmp(xm1d3.z, expect_abs.z), 0);
  mpz_add(f3.z, x.z, p.z);                       // x + p
  mpz_mul(f4.z, x.z, x.z);
  mpz_addmul(f4.z, p.z, p.z);
  mpz_sub_ui(f4.z, f4.z, 1);                     // x^2 + p^2 - 1
  mpz_mul(rhs.z, xm1d3.z, xm1.z);
  mpz_mul(rhs.z, rhs.z, f3.z);
  mpz_mul(rhs.z, rhs.z, f4.z);
  mpz_add_ui(rhs.z, rhs.z, 1);
  EXPECT_EQ(mpz_cmp(rhs.z, h.z), 0);
}

TEST(FinalExponentiation, EqualsDirectPowerExactExponent) {
  // f^((p^12 - 1)/r) by plain square-and-multiply, computed with GMP; not the cube.
  const Limbs<72> e = [] {
    Mpz p, r, e;
    set_p(p.z);
    set_r(r.z);
    mpz_pow_ui(e.z, p.z, 12);
    mpz_sub_ui(e.z, e.z, 1);
    EXPECT_TRUE(mpz_divisible_p(e.z, r.z));
    mpz_divexact(e.z, e.z, r.z);
    return limbs_from_mpz<72>(e.z);
  }();
  for (int it = 0; it < 2; ++it) {
    const Fp12 f = rand_fp12();
    const Fp12 fe = final_exponentiation(f);
    EXPECT_EQ(fe, f.pow(e));
    EXPECT_EQ(fe.pow(FrParams::modulus), Fp12::one());
    EXPECT_NE(fe, Fp12::one());
  }
  // Also on a genuine Miller loop output.
  const Fp12 m = miller_loop(g1_generator(), g2_generator());
  EXPECT_EQ(final_exponentiation(m), m.pow(e));
}

// ---------------------------------------------------------------------------------------------
// Pairing.

TEST(Pairing, NonDegenerateAndOrderR) {
  const Fp12 e = pairing(g1_generator(), g2_generator());
  EXPECT_NE(e, Fp12::one());
  EXPECT_EQ(e.pow(FrParams::modulus), Fp12::one());
  const Fp12 e2 = pairing(rand_g1(), rand_g2());
  EXPECT_NE(e2, Fp12::one());
  EXPECT_EQ(e2.pow(FrParams::modulus), Fp12::one());
}

TEST(Pairing, Bilinearity) {
  const G1Affine P = g1_generator();
  const G2Affine Q = g2_generator();
  const Fp12 e = pairing(P, Q);
  for (int it = 0; it < 3; ++it) {
    const Fr a = rand_fr(), b = rand_fr();
    const Fr ab = a * b;
    const Fp12 lhs = pairing(mul_g1(P, a), mul_g2(Q, b));
    EXPECT_EQ(lhs, e.pow(canonical(ab)));
    EXPECT_EQ(lhs, pairing(mul_g1(P, ab), Q));
    EXPECT_EQ(lhs, pairing(P, mul_g2(Q, ab)));
    EXPECT_EQ(lhs, pairing(mul_g1(P, b), mul_g2(Q, a)));
  }
  // Linearity in each argument separately, on random points.
  const G1Affine P1 = rand_g1(), P2 = rand_g1();
  const G2Affine Q1 = rand_g2(), Q2 = rand_g2();
  const G1Affine P12 = (G1Jacobian::from_affine(P1) + G1Jacobian::from_affine(P2)).to_affine();
  const G2Affine Q12 = (G2Jacobian::from_affine(Q1) + G2Jacobian::from_affine(Q2)).to_affine();
  EXPECT_EQ(pairing(P12, Q1), pairing(P1, Q1) * pairing(P2, Q1));
  EXPECT_EQ(pairing(P1, Q12), pairing(P1, Q1) * pairing(P1, Q2));
  // Small scalars: e(2P, Q) = e(P, Q)^2, e(P, 3Q) = e(P, Q)^3.
  EXPECT_EQ(pairing(mul_g1(P, Fr::from_u64(2)), Q), e.sqr());
  EXPECT_EQ(pairing(P, mul_g2(Q, Fr::from_u64(3))), e.sqr() * e);
}

TEST(Pairing, NegationIsConjugate) {
  const G1Affine P = rand_g1();
  const G2Affine Q = rand_g2();
  const Fp12 e = pairing(P, Q);
  EXPECT_EQ(pairing(-P, Q), e.conjugate());
  EXPECT_EQ(pairing(-P, Q), e.inverse());
  EXPECT_EQ(pairing(P, -Q), e.conjugate());
  EXPECT_EQ(pairing(-P, -Q), e);
}

TEST(Pairing, InfinityGivesOne) {
  const G1Affine P = rand_g1();
  const G2Affine Q = rand_g2();
  EXPECT_EQ(pairing(G1Affine::infinity(), Q), Fp12::one());
  EXPECT_EQ(pairing(P, G2Affine::infinity()), Fp12::one());
  EXPECT_EQ(pairing(G1Affine::infinity(), G2Affine::infinity()), Fp12::one());
  EXPECT_EQ(miller_loop(G1Affine::infinity(), Q), Fp12::one());
  EXPECT_EQ(multi_pairing({}, {}), Fp12::one());
  const std::vector<G1Affine> ps{P, G1Affine::infinity(), P};
  const std::vector<G2Affine> qs{G2Affine::infinity(), Q, Q};
  EXPECT_EQ(multi_pairing(ps, qs), pairing(P, Q));
}

TEST(Pairing, MultiPairingIsProductOfPairings) {
  std::vector<G1Affine> ps;
  std::vector<G2Affine> qs;
  Fp12 prod = Fp12::one();
  Fp12 prod_ml = Fp12::one();
  for (int i = 0; i < 4; ++i) {
    ps.push_back(rand_g1());
    qs.push_back(rand_g2());
    prod = prod * pairing(ps.back(), qs.back());
    prod_ml = prod_ml * miller_loop(ps.back(), qs.back());
  }
  EXPECT_EQ(multi_pairing(ps, qs), prod);
  // The shared Miller loop equals the product of the single ones exactly (not only after the
  // final exponentiation).
  EXPECT_EQ(multi_miller_loop(ps, qs), prod_ml);
  EXPECT_EQ(final_exponentiation(multi_miller_loop(ps, qs)), prod);
  // A single pair.
  EXPECT_EQ(multi_pairing(std::span<const G1Affine>(ps.data(), 1),
                          std::span<const G2Affine>(qs.data(), 1)),
            pairing(ps[0], qs[0]));
}

TEST(Pairing, MultiPairingCancels) {
  const G1Affine P = rand_g1();
  const G2Affine Q = rand_g2();
  {
    const std::vector<G1Affine> ps{P, -P};
    const std::vector<G2Affine> qs{Q, Q};
    EXPECT_EQ(multi_pairing(ps, qs), Fp12::one());
  }
  {
    // Groth16-shaped check: e(aP, bQ) · e(-abP, Q) · e(P, aQ) · e(-P, aQ) == 1.
    const Fr a = rand_fr(), b = rand_fr();
    const std::vector<G1Affine> ps{mul_g1(P, a), -mul_g1(P, a * b), P, -P};
    const std::vector<G2Affine> qs{mul_g2(Q, b), Q, mul_g2(Q, a), mul_g2(Q, a)};
    EXPECT_EQ(multi_pairing(ps, qs), Fp12::one());
    const std::vector<G1Affine> bad{mul_g1(P, a), -mul_g1(P, a * b + Fr::one()), P, -P};
    EXPECT_NE(multi_pairing(bad, qs), Fp12::one());
  }
}

TEST(Pairing, SizeMismatchThrows) {
  const std::vector<G1Affine> ps{g1_generator(), g1_generator()};
  const std::vector<G2Affine> qs{g2_generator()};
  EXPECT_THROW(multi_pairing(ps, qs), std::invalid_argument);
}

// Vectors from tests/oracle/noble_vectors.mjs (@noble/curves 1.9.7, bls12_381.pairing). noble's
// final exponentiation raises to 3(p^12 - 1)/r, so its values are the cube of ours.
TEST(Pairing, MatchesNobleCubed) {
  struct Vec {
    const char* a;
    const char* b;
    std::array<const char*, 12> value;
  };
  const Vec vecs[] = {
      {"1", "1",
       {"1250ebd871fc0a92a7b2d83168d0d727272d441befa15c503dd8e90ce98db3e7b6d194f60839c508a84305aaca1789b6",
        "089a1c5b46e5110b86750ec6a532348868a84045483c92b7af5af689452eafabf1a8943e50439f1d59882a98eaa0170f",
        "1368bb445c7c2d209703f239689ce34c0378a68e72a6b3b216da0e22a5031b54ddff57309396b38c881c4c849ec23e87",
        "193502b86edb8857c273fa075a50512937e0794e1e65a7617c90d8bd66065b1fffe51d7a579973b1315021ec3c19934f",
        "01b2f522473d171391125ba84dc4007cfbf2f8da752f7c74185203fcca589ac719c34dffbbaad8431dad1c1fb597aaa5",
        "018107154f25a764bd3c79937a45b84546da634b8f6be14a8061e55cceba478b23f7dacaa35c8ca78beae9624045b4b6",
        "19f26337d205fb469cd6bd15c3d5a04dc88784fbb3d0b2dbdea54d43b2b73f2cbb12d58386a8703e0f948226e47ee89d",
        "06fba23eb7c5af0d9f80940ca771b6ffd5857baaf222eb95a7d2809d61bfe02e1bfd1b68ff02f0b8102ae1c2d5d5ab1a",
        "11b8b424cd48bf38fcef68083b0b0ec5c81a93b330ee1a677d0d15ff7b984e8978ef48881e32fac91b93b47333e2ba57",
        "03350f55a7aefcd3c31b4fcb6ce5771cc6a0e9786ab5973320c806ad360829107ba810c5a09ffdd9be2291a0c25a99a2",
        "04c581234d086a9902249b64728ffd21a189e87935a954051c7cdba7b3872629a4fafc05066245cb9108f0242d0fe3ef",
        "0f41e58663bf08cf068672cbd01a7ec73baca4d72ca93544deff686bfd6df543d48eaa24afe47e1efde449383b676631"}},
      {"3a82a73178e488fa5b63ac8e867d11a1f36c46c3654002e516c1ee7273df7064",
       "57dfa9afd19c019f40db14bc143f4fb816de2bc825e094778a791b92bcec7e8e",
       {"10430801a8825938ba9f94aefbaa528aeb508fab83cdccef6befd7b6d8677d6fd625df76a45a95f9fcc34f93586cf1bd",
        "10bb5d4140582c7b710c97b4500fb3f0ccf53cfec37b0608e36711834177ce8ec494d95e4f03463e91dbdff482fc2857",
        "13e80811482784be43da30646b07cb0128f03fd0bfed42e8088ae39d5823a5775bf294e15ba672438d3f698ce036cefc",
        "068da4a4a0581a988f86a779dff711936c0c63428219fa6776039bea80f976501702bdafd3db1b8b23a3bcc9e24249ec",
        "0e10a0cdb04fdcf3d46226ebf1245aaec6abd13e6d4897c49d170b908ccac76a6e60483c871936d3c5d47710e1d1c341",
        "1646a3c19de5d2cb3dea042b7e6a78c9c097c72ae1f4c1343f62cf82e9fbf352f50d58ca7f13604cf78592e10ef853ba",
        "0d908aa7c25867f003db7a468590d834f4ba091113b8c0bfa2e73557edf11a54e05900da74bdcf83526fb431b36d39bb",
        "073b15bc24c9a50d20618ae9bfede00ecd7599ab65ec14278696ca5f381986f325ad4d43a06594cfb3256ac725a199f0",
        "08174afe8f37e4793387a4b08306dca96a958daefd731e03dcf2e52a731ac04c54948f00a5b70eb2a8ff3707bd09a1f6",
        "10b2b1810a82af9bf1d8be69518d6cc14e125ef233d0c420324b06ea8fc910d76962ae36918a6fb7705d71145cd18c76",
        "184626735a20f404789d6a308e0e9ddb5d797b55d0310b265402df31a172e0ca096f73bb080376f657e00176348b3cdb",
        "0bb1e42b13becfa0c717980a5c77ac764b07877d85533272069df8205e9a332b765529013f95aa71d5c48c32f0150f7f"}},
  };
  for (const Vec& v : vecs) {
    const G1Affine P = mul_g1(g1_generator(), fr_from_hex(v.a));
    const G2Affine Q = mul_g2(g2_generator(), fr_from_hex(v.b));
    const Fp12 expected = fp12_from_hex(v.value);
    const Fp12 e = pairing(P, Q);
    EXPECT_EQ(e.sqr() * e, expected) << "a=" << v.a;
    EXPECT_NE(e, expected);  // documents the convention: exact exponent, not noble's cube
    // Recovering noble's value from ours and back: cube, then ^(3^-1 mod r).
    const Fr inv3 = Fr::from_u64(3).inverse();
    EXPECT_EQ(expected.pow(canonical(inv3)), e);
  }
}

}  // namespace
}  // namespace pp
