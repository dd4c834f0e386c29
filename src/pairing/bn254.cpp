// SPDX-License-Identifier: Apache-2.0 OR MIT
// Optimal ate pairing for BN254 on the CPU: an affine Miller loop on the D-twist and the final
// exponentiation. Correct first: every step inverts in Fp2 and the hard part is one cyclotomic
// power; a verifier makes a handful of pairings, so this is not on any prover's path.
#include "proofpipe/pairing/bn254.hpp"

#include <cstdint>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace pp::bn254 {
namespace {

// The BN parameter x (positive) and the loop count 6x + 2 (65 bits).
constexpr uint64_t kX = 4965661367192848881ULL;
constexpr unsigned __int128 kLoop = (unsigned __int128)6 * kX + 2;
static_assert(uint64_t(kLoop >> 64) == 1 && uint64_t(kLoop) == 0x9d797039be763ba8ULL);

// (p^4 - p^2 + 1)/r, the hard part's exponent (761 bits).
constexpr Limbs<12> kHardExponent = limbs::from_hex<12>(
    "1baaa710b0759ad331ec15183177faf6c0eb522d5b122784e529a5861876f6b3b1b1355d189227d79581e16f3fd90c66b"
    "887d56d5095f23aaa441e3954bcf8adcc7b44c87cdbacff1154e7e1da014fd5abf5cc4f49c36d4e81bb482ccdf42b1");

// The untwist psi(x', y') = (x'·w^2, y'·w^3) maps the D-twist E'(Fp2): y^2 = x^3 + 3/xi into
// E(Fp12) (w^6 = xi). A line of slope lambda on the twist has slope lambda·w on E; the line through
// T = (xT, yT) evaluated at P = (xP, yP) in E(Fp) is
//   l(P) = yP - lambda·xP·w + (lambda·xT - yT)·w^3,
// the sparse element L = a + (b + c·v)·w with a = yP (in Fp2), b = -lambda·xP, c = lambda·xT - yT.
// Vertical lines lie in Fp6 and are dropped (the final exponentiation kills them).
struct Line {
  Fp2 a, b, c;
};

Line line_at(const Fp2& lambda, const G2Affine& t, const G1Affine& p) {
  return {Fp2{p.y, Fp::zero()}, -(lambda * p.x), lambda * t.x - t.y};
}

// f·L: f0·a + v·(f1·(b + c·v)) + w·((f0 + f1)(a + b + c·v) - f0·a - f1·(b + c·v)).
Fp12 mul_by_line(const Fp12& f, const Line& l) {
  const Fp6 t0 = f.c0 * l.a;
  const Fp6 t1 = f.c1.mul_by_01(l.b, l.c);
  const Fp6 s = (f.c0 + f.c1).mul_by_01(l.a + l.b, l.c);
  return {t0 + t1.mul_by_nonresidue(), s - t0 - t1};
}

// T <- 2T; the tangent at T, at P.
Line double_step(G2Affine& t, const G1Affine& p) {
  const Fp2 xx = t.x.sqr();
  const Fp2 lambda = (xx.dbl() + xx) * t.y.dbl().inverse();
  const Line l = line_at(lambda, t, p);
  const Fp2 x3 = lambda.sqr() - t.x.dbl();
  t = G2Affine{x3, lambda * (t.x - x3) - t.y};
  return l;
}

// T <- T + Q (T != +-Q: T is a multiple of Q far below r, or the loop's last sums); the line
// through T and Q, at P.
Line add_step(G2Affine& t, const G2Affine& q, const G1Affine& p) {
  const Fp2 lambda = (q.y - t.y) * (q.x - t.x).inverse();
  const Line l = line_at(lambda, t, p);
  const Fp2 x3 = lambda.sqr() - t.x - q.x;
  t = G2Affine{x3, lambda * (t.x - x3) - t.y};
  return l;
}

// pi^k on the twist: (x, y) -> (frob^k(x)·(w^(p^k - 1))^2, frob^k(y)·(w^(p^k - 1))^3), where
// w^(p^k - 1) = gamma[k][1] (ff/tower.hpp's table).
template <int K>
G2Affine frobenius_twist(const G2Affine& q) {
  constexpr Fp2 g2 = detail::tower::frobenius_table<Fp2>.gamma[K][2];
  constexpr Fp2 g3 = detail::tower::frobenius_table<Fp2>.gamma[K][3];
  using detail::tower::frob_fp2;
  return G2Affine{frob_fp2<K>(q.x) * g2, frob_fp2<K>(q.y) * g3};
}

// x^e in the cyclotomic subgroup (cyclotomic squarings), e of M limbs.
template <int M>
Fp12 cyclotomic_pow(const Fp12& x, const Limbs<M>& e) {
  Fp12 r = Fp12::one();
  bool started = false;
  for (int i = 64 * M - 1; i >= 0; --i) {
    if (started) r = r.cyclotomic_sqr();
    if (limbs::bit(e, i)) {
      r = started ? r * x : x;
      started = true;
    }
  }
  return r;
}

}  // namespace

Fp12 miller_loop(const G1Affine& P, const G2Affine& Q) {
  if (P.is_infinity() || Q.is_infinity()) return Fp12::one();
  G2Affine t = Q;
  Fp12 f = Fp12::one();
  for (int i = 63; i >= 0; --i) {  // bit 64 of 6x + 2 is its top bit: T starts at Q
    f = mul_by_line(f.sqr(), double_step(t, P));
    if ((kLoop >> i) & 1) f = mul_by_line(f, add_step(t, Q, P));
  }
  const G2Affine q1 = frobenius_twist<1>(Q);
  const G2Affine q2 = -frobenius_twist<2>(Q);
  f = mul_by_line(f, add_step(t, q1, P));
  f = mul_by_line(f, add_step(t, q2, P));
  return f;
}

Fp12 final_exponentiation(const Fp12& f) {
  Fp12 g = f.conjugate() * f.inverse();  // f^(p^6 - 1)
  g = g.frobenius_map<2>() * g;          // ^(p^2 + 1): now in the cyclotomic subgroup
  return cyclotomic_pow(g, kHardExponent);
}

Fp12 pairing(const G1Affine& P, const G2Affine& Q) { return final_exponentiation(miller_loop(P, Q)); }

Fp12 multi_pairing(std::span<const G1Affine> P, std::span<const G2Affine> Q) {
  if (P.size() != Q.size())
    throw std::invalid_argument("bn254::multi_pairing: " + std::to_string(P.size()) + " G1 points and " +
                                std::to_string(Q.size()) + " G2 points");
  Fp12 f = Fp12::one();
  for (std::size_t i = 0; i < P.size(); ++i) f = f * miller_loop(P[i], Q[i]);
  return final_exponentiation(f);
}

}  // namespace pp::bn254
