// SPDX-License-Identifier: Apache-2.0 OR MIT
// BN254's extension tower (ff/tower.hpp's templates with xi = 9 + u): field axioms, v^3 = xi and
// w^2 = v, the compile-time Frobenius coefficients against the p-th power, the cyclotomic squaring;
// and its pairing's laws (pairing/bn254.hpp): bilinearity, non-degeneracy, order r, the final
// exponentiation against the direct power. Its fields and groups are checked with BLS12-381's in
// test_field, test_curve and test_noble; test_noble also compares the pairing with noble's.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <span>
#include <stdexcept>
#include <utility>

#include "gmp_oracle.hpp"
#include "proofpipe/ff/bn254.hpp"
#include "proofpipe/ff/tower.hpp"
#include "proofpipe/pairing/bn254.hpp"

namespace pp::test {
namespace {

using bn254::Fp;
using bn254::Fp12;
using bn254::Fr;
using bn254::G1Affine;
using bn254::G2Affine;
using bn254::Fp2;
using bn254::Fp6;

constexpr uint64_t kSeed = 0xb254'0001ULL;

std::mt19937_64& rng() {
  static std::mt19937_64 r(kSeed);
  return r;
}
Fp2 rand_fp2() { return Fp2{random_element<Fp>(rng()), random_element<Fp>(rng())}; }
Fp6 rand_fp6() { return Fp6{rand_fp2(), rand_fp2(), rand_fp2()}; }
Fp12 rand_fp12() { return Fp12{rand_fp6(), rand_fp6()}; }

// p^k as limbs (k <= 3: 4·64·3 bits), for pow.
Limbs<12> p_pow(int k) {
  Mpz p = modulus_mpz<Fp>(), e;
  mpz_pow_ui(e.get(), p.get(), unsigned(k));
  Limbs<12> r{};
  from_mpz<12>(r.v, e);
  return r;
}

TEST(Bn254Tower, Fp6FieldAxioms) {
  const Fp6 v{Fp2::zero(), Fp2::one(), Fp2::zero()};
  for (int it = 0; it < 20; ++it) {
    const Fp6 a = rand_fp6(), b = rand_fp6(), c = rand_fp6();
    EXPECT_EQ((a * b) * c, a * (b * c));
    EXPECT_EQ(a * b, b * a);
    EXPECT_EQ(a * (b + c), a * b + a * c);
    EXPECT_EQ(a.sqr(), a * a);
    EXPECT_EQ(a * a.inverse(), Fp6::one());
    EXPECT_EQ(a.mul_by_nonresidue(), a * v);
    EXPECT_EQ(a.mul_by_01(b.c0, b.c1), (a * Fp6{b.c0, b.c1, Fp2::zero()}));
  }
  // v^3 = xi = 9 + u.
  EXPECT_EQ(v * v * v, (Fp6{Fp2{Fp::from_u64(9), Fp::one()}, Fp2::zero(), Fp2::zero()}));
}

TEST(Bn254Tower, Fp12FieldAxioms) {
  const Fp12 w{Fp6::zero(), Fp6::one()};
  const Fp12 v{Fp6{Fp2::zero(), Fp2::one(), Fp2::zero()}, Fp6::zero()};
  EXPECT_EQ(w.sqr(), v);
  for (int it = 0; it < 20; ++it) {
    const Fp12 a = rand_fp12(), b = rand_fp12(), c = rand_fp12();
    EXPECT_EQ((a * b) * c, a * (b * c));
    EXPECT_EQ(a * (b + c), a * b + a * c);
    EXPECT_EQ(a.sqr(), a * a);
    EXPECT_EQ(a * a.inverse(), Fp12::one());
    EXPECT_EQ(a.conjugate(), a.frobenius_map<6>());
  }
}

// The table is computed at compile time from xi = 9 + u and BN254's p: a wrong xi or modulus in the
// template would make frobenius differ from the p-th power.
TEST(Bn254Tower, FrobeniusIsPowP) {
  for (int it = 0; it < 3; ++it) {
    const Fp6 a6 = rand_fp6();
    const Fp12 a12 = rand_fp12();
    EXPECT_EQ(a6.frobenius(), a6.pow(bn254::FpParams::modulus));
    EXPECT_EQ(a12.frobenius(), a12.pow(bn254::FpParams::modulus));
    EXPECT_EQ(a12.frobenius_map<2>(), a12.pow(p_pow(2)));
    EXPECT_EQ(a12.frobenius_map<3>(), a12.pow(p_pow(3)));
    Fp12 f = a12;
    for (int i = 0; i < 12; ++i) f = f.frobenius();
    EXPECT_EQ(f, a12);
    const Fp12 b12 = rand_fp12();
    EXPECT_EQ((a12 * b12).frobenius(), a12.frobenius() * b12.frobenius());
  }
}

TEST(Bn254Tower, CyclotomicSquare) {
  for (int it = 0; it < 5; ++it) {
    const Fp12 x = rand_fp12();
    Fp12 g = x.conjugate() * x.inverse();  // x^(p^6 - 1)
    g = g.frobenius_map<2>() * g;          // then ^(p^2 + 1): the cyclotomic subgroup
    EXPECT_EQ(g.conjugate() * g, Fp12::one());
    EXPECT_EQ(g.cyclotomic_sqr(), g.sqr());
    const uint64_t e = rng()();
    EXPECT_EQ(g.cyclotomic_pow_u64(e), g.pow(Limbs<1>{{e}}));
  }
}

Fr rand_fr() { return random_element<Fr>(rng()); }
G1Affine g1_times(const Fr& k) { return scalar_mul(bn254::g1_generator(), k).to_affine(); }
G2Affine g2_times(const Fr& k) { return scalar_mul(bn254::g2_generator(), k).to_affine(); }

TEST(Bn254Pairing, NonDegenerateAndOrderR) {
  const Fp12 e = bn254::pairing(bn254::g1_generator(), bn254::g2_generator());
  EXPECT_FALSE(e.is_one());
  EXPECT_EQ(e.pow(bn254::FrParams::modulus), Fp12::one());
}

TEST(Bn254Pairing, Bilinearity) {
  const Fp12 e = bn254::pairing(bn254::g1_generator(), bn254::g2_generator());
  for (int it = 0; it < 3; ++it) {
    const Fr a = rand_fr(), b = rand_fr();
    uint64_t ab[4];
    (a * b).to_canonical(ab);
    const Limbs<4> abl{{ab[0], ab[1], ab[2], ab[3]}};
    EXPECT_EQ(bn254::pairing(g1_times(a), g2_times(b)), e.pow(abl));
    EXPECT_EQ(bn254::pairing(g1_times(a * b), bn254::g2_generator()), bn254::pairing(bn254::g1_generator(), g2_times(a * b)));
  }
}

TEST(Bn254Pairing, NegationInfinityAndMultiPairing) {
  const Fr a = rand_fr(), b = rand_fr();
  const G1Affine p = g1_times(a);
  const G2Affine q = g2_times(b);
  const Fp12 e = bn254::pairing(p, q);
  EXPECT_EQ(bn254::pairing(-p, q), e.conjugate());
  EXPECT_EQ(bn254::pairing(p, -q), e.conjugate());
  EXPECT_TRUE(bn254::pairing(G1Affine::infinity(), q).is_one());
  EXPECT_TRUE(bn254::pairing(p, G2Affine::infinity()).is_one());
  // e(aP, Q) · e(-P, aQ) = 1: the shape of a Groth16 check.
  const G1Affine ps[] = {g1_times(a * b), -g1_times(a)};
  const G2Affine qs[] = {bn254::g2_generator(), g2_times(b)};
  EXPECT_TRUE(bn254::multi_pairing(ps, qs).is_one());
  // A wrong factor breaks it.
  const G2Affine bad[] = {bn254::g2_generator(), g2_times(b + Fr::one())};
  EXPECT_FALSE(bn254::multi_pairing(ps, bad).is_one());
  EXPECT_THROW(bn254::multi_pairing(std::span<const G1Affine>(ps, 2), std::span<const G2Affine>(qs, 1)),
               std::invalid_argument);
}

// The final exponentiation against f^((p^12 - 1)/r) by plain square-and-multiply (GMP exponent).
TEST(Bn254Pairing, FinalExponentiationIsTheDirectPower) {
  const Fp12 f = rand_fp12();
  Mpz p = modulus_mpz<Fp>(), r = modulus_mpz<Fr>(), e;
  mpz_pow_ui(e.get(), p.get(), 12);
  mpz_sub_ui(e.get(), e.get(), 1);
  ASSERT_TRUE(mpz_divisible_p(e.get(), r.get()));
  mpz_divexact(e.get(), e.get(), r.get());
  Limbs<48> el{};
  from_mpz<48>(el.v, e);
  EXPECT_EQ(bn254::final_exponentiation(f), f.pow(el));
}

}  // namespace
}  // namespace pp::test
