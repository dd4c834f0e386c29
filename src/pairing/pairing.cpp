// SPDX-License-Identifier: Apache-2.0 OR MIT
// Optimal ate pairing for BLS12-381 on the CPU: projective Miller loop on the twist + final exponentiation.
#include "proofpipe/pairing/pairing.hpp"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace pp {
namespace {

// |x| for the BLS parameter x = -0xd201000000010000.
constexpr uint64_t kBlsX = 0xd201000000010000ULL;
// (1 - x)/3 = (|x| + 1)/3; x = 1 mod 3, so (x - 1)/3 = -kBlsXPlus1Div3 is an integer.
constexpr uint64_t kBlsXPlus1Div3 = 0x460055555555aaabULL;
static_assert((kBlsX + 1) % 3 == 0 && (kBlsX + 1) / 3 == kBlsXPlus1Div3);

// Line functions.
// The untwist psi(x', y') = (x'·w^-2, y'·w^-3) maps E'(Fp2) into E(Fp12); a line of slope
// lambda' on the twist has slope lambda'·w^-1 on E. The line through T = (xT, yT) evaluated at
// P = (xP, yP) in E(Fp) is
//   l(P) = yP - yT·w^-3 - lambda'·w^-1·(xP - xT·w^-2)
//        = w^-3 · ( (lambda'·xT - yT) + (-lambda'·xP)·w^2 + yP·w^3 ).
// The factor w^-3 lies in the subfield Fp2[w^3] = Fp4 and any factor in Fp2 lies in Fp6; both are
// removed by the final exponentiation (p^4 - 1 and p^6 - 1 divide (p^12 - 1)/r). So we multiply
// by the sparse element
//   L = A + B·v + C·v·w,  i.e. L.c0 = (A, B, 0), L.c1 = (0, C, 0),
// with (A, B, C) = s·(lambda'·xT - yT, -lambda'·xP, yP) for some convenient s in Fp2* that
// clears the denominators of the projective formulas below. Vertical lines xP - xT·w^-2 lie in
// Fp6 and are dropped.
struct Line {
  Fp2 a, b, c;
};

// f·L for the sparse L above: 13 Fp2 multiplications instead of 18.
Fp12 mul_by_line(const Fp12& f, const Line& l) {
  const Fp6 t0 = f.c0.mul_by_01(l.a, l.b);
  const Fp6 t1 = (f.c1 * l.c).mul_by_nonresidue();  // f.c1 · (C·v)
  const Fp6 s = (f.c0 + f.c1).mul_by_01(l.a, l.b + l.c);  // (f.c0 + f.c1)(A + (B + C)·v)
  return {t0 + t1.mul_by_nonresidue(), s - t0 - t1};
}

// T on the twist y^2 = x^3 + b' (b' = 4·xi) in homogeneous projective coordinates
// (x, y) = (X/Z, Y/Z); no inversions in the Miller loop.
struct G2Proj {
  Fp2 X, Y, Z;
};

// b'·a = 4(1 + u)·a.
inline Fp2 mul_by_b_twist(const Fp2& a) { return a.mul_by_nonresidue().dbl().dbl(); }

// T <- 2T and the tangent line at T evaluated at P (xp_neg = -xP).
// Line: lambda' = 3X^2/(2YZ); scaled by s = 2YZ and using Y^2 Z = X^3 + b' Z^3,
//   A = Y^2 - 3b'Z^2,  B = 3X^2·(-xP),  C = 2YZ·yP.
// Point (Costello-Lange-Naehrig, "Faster pairing computations on curves with high-degree
// twists", homogeneous doubling for a = 0, all outputs scaled by 4 to avoid halvings):
//   X3 = 2XY(Y^2 - 9b'Z^2),  Y3 = (Y^2 + 9b'Z^2)^2 - 108 b'^2 Z^4,  Z3 = 8 Y^3 Z.
inline Line doubling_step(G2Proj& t, const Fp& xp_neg, const Fp& yp) {
  const Fp2 xx = t.X.sqr();
  const Fp2 yy = t.Y.sqr();
  const Fp2 zz = t.Z.sqr();
  const Fp2 e = mul_by_b_twist(zz.dbl() + zz);  // 3b'Z^2
  const Fp2 f = e.dbl() + e;                    // 9b'Z^2
  const Fp2 h = (t.Y + t.Z).sqr() - yy - zz;    // 2YZ
  const Line l{yy - e, (xx.dbl() + xx) * xp_neg, h * yp};
  const Fp2 ee = e.sqr();
  const Fp2 x3 = ((t.X * t.Y) * (yy - f)).dbl();
  const Fp2 y3 = (yy + f).sqr() - (ee.dbl() + ee).dbl().dbl();  // (Y^2 + 9b'Z^2)^2 - 12 (3b'Z^2)^2
  const Fp2 z3 = (yy * h).dbl().dbl();                           // 4·Y^2·2YZ
  t = G2Proj{x3, y3, z3};
  return l;
}

// T <- T + Q (Q affine, T != +-Q) and the line through T and Q evaluated at P.
// theta = Y - yQ·Z, Lambda = X - xQ·Z, lambda' = theta/Lambda; the line through Q scaled by Lambda:
//   A = theta·xQ - Lambda·yQ,  B = theta·(-xP),  C = Lambda·yP.
// Point (mixed homogeneous addition): D = Lambda^2, E = Lambda^3, G = X·D,
//   H = E + Z·theta^2 - 2G,  X3 = Lambda·H,  Y3 = theta·(G - H) - E·Y,  Z3 = Z·E.
inline Line addition_step(G2Proj& t, const Fp2& xq, const Fp2& yq, const Fp& xp_neg,
                          const Fp& yp) {
  const Fp2 theta = t.Y - yq * t.Z;
  const Fp2 lam = t.X - xq * t.Z;
  const Line l{theta * xq - lam * yq, theta * xp_neg, lam * yp};
  const Fp2 d = lam.sqr();
  const Fp2 e = d * lam;
  const Fp2 g = t.X * d;
  const Fp2 h = e + t.Z * theta.sqr() - g.dbl();
  t = G2Proj{lam * h, theta * (g - h) - e * t.Y, t.Z * e};
  return l;
}

// x-th power in the cyclotomic subgroup for the negative BLS x: conj(g^|x|).
Fp12 cyclotomic_exp_by_x(const Fp12& g) { return g.cyclotomic_pow_u64(kBlsX).conjugate(); }

}  // namespace

Fp12 multi_miller_loop(std::span<const G1Affine> P, std::span<const G2Affine> Q) {
  if (P.size() != Q.size()) throw std::invalid_argument("multi_miller_loop: P and Q sizes differ");
  struct Pair {
    Fp xp_neg, yp;  // -xP, yP
    Fp2 xq, yq;     // Q
    G2Proj t;       // running T
  };
  std::vector<Pair> pairs;
  pairs.reserve(P.size());
  for (std::size_t i = 0; i < P.size(); ++i) {
    if (P[i].is_infinity() || Q[i].is_infinity()) continue;
    pairs.push_back(Pair{-P[i].x, P[i].y, Q[i].x, Q[i].y, G2Proj{Q[i].x, Q[i].y, Fp2::one()}});
  }
  Fp12 f = Fp12::one();
  if (pairs.empty()) return f;

  // Bits of |x| below the leading one, most significant first. For points of order r, T never
  // equals +-Q nor has y = 0 here (all partial multiples are smaller than r), so the formulas
  // need no special cases.
  for (int bit = 62; bit >= 0; --bit) {
    if (bit != 62) f = f.sqr();
    for (Pair& pr : pairs) f = mul_by_line(f, doubling_step(pr.t, pr.xp_neg, pr.yp));
    if (!((kBlsX >> bit) & 1)) continue;
    for (Pair& pr : pairs) f = mul_by_line(f, addition_step(pr.t, pr.xq, pr.yq, pr.xp_neg, pr.yp));
  }
  // x < 0: f_{x,Q} = 1/(f_{|x|,Q}·v_{[|x|]Q}); the vertical line is dropped and, after the final
  // exponentiation (whose outputs have norm 1 over Fp6), 1/f may be replaced by f^(p^6).
  return f.conjugate();
}

Fp12 miller_loop(const G1Affine& P, const G2Affine& Q) {
  return multi_miller_loop(std::span<const G1Affine>(&P, 1), std::span<const G2Affine>(&Q, 1));
}

// Hard part exponent h = (p^4 - p^2 + 1)/r. With p = (x-1)^2 (x^4 - x^2 + 1)/3 + x and
// r = x^4 - x^2 + 1 one has (Hayashida, Hayasaka, Teruya, ePrint 2020/875)
//   3h = (x - 1)^2 (x + p) (x^2 + p^2 - 1) + 3,
// and since x = 1 mod 3 this divides exactly:
//   h = ((x - 1)/3) · (x - 1) · (x + p) · (x^2 + p^2 - 1) + 1.
// Libraries that skip the division by 3 compute e^3 instead; we keep the exact exponent at the
// price of one exponentiation by (|x| + 1)/3 (Hamming weight 28) instead of one by |x| (weight 6).
// tests/test_pairing.cpp checks this identity with GMP and compares with f^((p^12 - 1)/r).
//
// Cost: the final exponentiation is about 60 % of one pairing and a multi-pairing shares it, so
// four pairs cost well under four pairings; all of it scales with the Fp multiplication.
// Possible speed-ups, roughly in order of payoff:
//  - an assembly (ADX/MULX) Montgomery multiplication and lazy reduction (unreduced double-width
//    products summed before one reduction) in Fp2/Fp6/Fp12: the Fp multiplication dominates
//    everything here and the portable one is ~3-4x slower than blst's;
//  - compressed cyclotomic squarings (Karabina) with a simultaneous decompression for the long
//    zero runs of |x|, and an addition chain for (|x| + 1)/3;
//  - precomputed line coefficients for a fixed Q (Groth16's [beta]_2, [gamma]_2, [delta]_2 are
//    fixed per verifying key), and multiplying the sparse lines of two pairs with each other
//    before multiplying into f;
//  - doubling/addition steps interleaved with the line evaluation in the CLN/Aranha order to
//    share a few more products.
Fp12 final_exponentiation(const Fp12& f) {
  // Easy part: g = f^((p^6 - 1)(p^2 + 1)); afterwards g is in the cyclotomic subgroup.
  Fp12 g = f.conjugate() * f.inverse();
  g = g.frobenius_map<2>() * g;

  // Hard part: g^h with h as above; inverses are conjugates in the cyclotomic subgroup.
  const Fp12 a = g.cyclotomic_pow_u64(kBlsXPlus1Div3).conjugate();   // g^((x-1)/3)
  const Fp12 b = (a.cyclotomic_pow_u64(kBlsX) * a).conjugate();      // a^(x-1)
  const Fp12 c = cyclotomic_exp_by_x(b) * b.frobenius();             // b^(x+p)
  const Fp12 cx2 = cyclotomic_exp_by_x(cyclotomic_exp_by_x(c));      // c^(x^2)
  const Fp12 d = cx2 * c.frobenius_map<2>() * c.conjugate();         // c^(x^2+p^2-1)
  return d * g;
}

Fp12 pairing(const G1Affine& P, const G2Affine& Q) { return final_exponentiation(miller_loop(P, Q)); }

Fp12 multi_pairing(std::span<const G1Affine> P, std::span<const G2Affine> Q) {
  return final_exponentiation(multi_miller_loop(P, Q));
}

}  // namespace pp
