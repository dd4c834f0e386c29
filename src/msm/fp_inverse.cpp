// SPDX-License-Identifier: Apache-2.0 OR MIT
// Variable-time Fp inversion by Bernstein–Yang divsteps ("Fast constant-time gcd computation and
// modular inversion", 2019), in batches of 62 steps on the low 64 bits of f and g, each batch's
// 2x2 transition matrix then applied to the full numbers (signed, 62-bit limbs).
//
// One divstep on (delta, f odd, g): if delta > 0 and g is odd, (1 - delta, g, (g - f)/2); else
// if g is odd, (1 + delta, f, (g + f)/2); else (1 + delta, f, g/2). From f = p, g = x it reaches
// g = 0 with f = ±gcd = ±1. Tracking d, e with f = d·x and g = e·x (mod p) gives 1/x = ±d.
#include "proofpipe/msm/fp_inverse.hpp"

#include <cstdint>

namespace pp::msm_inverse {
namespace {

using i128 = __int128;
constexpr int kLimbs = 7;  // 7·62 = 434 bits: room for signed values of a few times p
constexpr int64_t kM62 = (int64_t(1) << 62) - 1;

// Signed value sum_i v[i]·2^(62i): v[0..5] in [0, 2^62), v[6] signed.
struct S62 {
  int64_t v[kLimbs];
};

using Consts = FieldConsts<FpParams>;

constexpr S62 to_s62(const uint64_t* w) {  // a non-negative value below 2^384
  S62 r{};
  for (int i = 0; i < kLimbs; ++i) {
    const int bit = 62 * i, k = bit / 64, s = bit % 64;
    uint64_t x = k < 6 ? w[k] >> s : 0;
    if (s > 2 && k + 1 < 6) x |= w[k + 1] << (64 - s);
    r.v[i] = int64_t(x & uint64_t(kM62));
  }
  return r;
}
void from_s62(uint64_t* w, const S62& a) {  // a in [0, 2^384)
  for (int k = 0; k < 6; ++k) w[k] = 0;
  for (int i = 0; i < kLimbs; ++i) {
    const int bit = 62 * i, k = bit / 64, s = bit % 64;
    const uint64_t x = uint64_t(a.v[i]);
    if (k < 6) w[k] |= x << s;
    if (s > 2 && k + 1 < 6) w[k + 1] |= x >> (64 - s);
  }
}

constexpr S62 kP = to_s62(Consts::modulus.v);
// p^-1 mod 2^62 (inv64 is -p^-1 mod 2^64).
constexpr uint64_t kPinv62 = (0 - Consts::inv64) & uint64_t(kM62);
static_assert(((kPinv62 * Consts::modulus.v[0]) & uint64_t(kM62)) == 1);
/* R^3 mod p = 2^1152 mod p: Montgomery-multiplying the plain inverse of a raw value a = x·R
   (which is x^-1·R^-1) by it gives x^-1·R, the raw form of 1/x. */
constexpr Limbs<6> kR3 = limbs::pow2_mod(3 * 384, Consts::modulus);

struct Matrix {
  int64_t u, v, q, r;  // f' = (u·f + v·g)/2^62, g' = (q·f + r·g)/2^62
};

// 62 divsteps on the low bits of f (odd) and g; returns the new delta. The f row is scaled by 2
// at every halving, so after 62 steps |u| + |v| <= 2^62 and |q| + |r| <= 2^62. Branch-free in the
// step itself (the delta > 0 test is a coin flip); runs of even g are taken at once.
int64_t divsteps62(int64_t delta, uint64_t f, uint64_t g, Matrix& t) {
  uint64_t u = 1, v = 0, q = 0, r = 1;
  int left = 62;
  for (;;) {
    const int z = __builtin_ctzll(g | (uint64_t(1) << left));  // halvings, at most `left`
    g >>= z;
    u <<= z;
    v <<= z;
    delta += z;
    left -= z;
    if (left == 0) break;
    // g odd: if delta > 0, (f, g) <- (g, -f) and delta <- -delta; then g <- g + f (even).
    const uint64_t m = uint64_t(0) - uint64_t(delta > 0);
    uint64_t x = (f ^ g) & m;
    f ^= x;
    g ^= x;
    g = (g ^ m) - m;
    x = (u ^ q) & m;
    u ^= x;
    q ^= x;
    q = (q ^ m) - m;
    x = (v ^ r) & m;
    v ^= x;
    r ^= x;
    r = (r ^ m) - m;
    delta = int64_t((uint64_t(delta) ^ m) - m);
    g += f;
    q += u;
    r += v;
  }
  t = Matrix{int64_t(u), int64_t(v), int64_t(q), int64_t(r)};
  return delta;
}

// (f, g) <- (u·f + v·g, q·f + r·g) / 2^62, exact (the low 62 bits are zero by construction).
void update_fg(S62& f, S62& g, const Matrix& t) {
  i128 cf = i128(t.u) * f.v[0] + i128(t.v) * g.v[0];
  i128 cg = i128(t.q) * f.v[0] + i128(t.r) * g.v[0];
  cf >>= 62;
  cg >>= 62;
  for (int i = 1; i < kLimbs; ++i) {
    cf += i128(t.u) * f.v[i] + i128(t.v) * g.v[i];
    cg += i128(t.q) * f.v[i] + i128(t.r) * g.v[i];
    f.v[i - 1] = int64_t(cf) & kM62;
    g.v[i - 1] = int64_t(cg) & kM62;
    cf >>= 62;
    cg >>= 62;
  }
  f.v[kLimbs - 1] = int64_t(cf);
  g.v[kLimbs - 1] = int64_t(cg);
}

// a <- a + p if a < 0, else a - p: from |a| <= 1.5p back to |a| <= p.
void toward_zero(S62& a) {
  const int64_t s = a.v[kLimbs - 1] < 0 ? 1 : -1;
  int64_t carry = 0;
  for (int i = 0; i < kLimbs; ++i) {
    const int64_t x = a.v[i] + s * kP.v[i] + carry;
    if (i + 1 < kLimbs) {
      a.v[i] = x & kM62;
      carry = x >> 62;
    } else {
      a.v[i] = x;
    }
  }
}

// (d, e) <- (u·d + v·e + md·p, q·d + r·e + me·p) / 2^62 with md, me in [-2^61, 2^61) making the
// sums divisible by 2^62: the same as (d, e)·matrix / 2^62 mod p. For |d|, |e| <= p the results
// are at most p + p/2 in size, and one step toward zero brings them back to |.| <= p.
void update_de(S62& d, S62& e, const Matrix& t) {
  i128 cd = i128(t.u) * d.v[0] + i128(t.v) * e.v[0];
  i128 ce = i128(t.q) * d.v[0] + i128(t.r) * e.v[0];
  auto fix = [](i128 c) {
    int64_t m = int64_t((0 - uint64_t(c) * kPinv62) & uint64_t(kM62));
    if (m >= (int64_t(1) << 61)) m -= int64_t(1) << 62;
    return m;
  };
  const int64_t md = fix(cd), me = fix(ce);
  cd += i128(md) * kP.v[0];
  ce += i128(me) * kP.v[0];
  cd >>= 62;
  ce >>= 62;
  for (int i = 1; i < kLimbs; ++i) {
    cd += i128(t.u) * d.v[i] + i128(t.v) * e.v[i] + i128(md) * kP.v[i];
    ce += i128(t.q) * d.v[i] + i128(t.r) * e.v[i] + i128(me) * kP.v[i];
    d.v[i - 1] = int64_t(cd) & kM62;
    e.v[i - 1] = int64_t(ce) & kM62;
    cd >>= 62;
    ce >>= 62;
  }
  d.v[kLimbs - 1] = int64_t(cd);
  e.v[kLimbs - 1] = int64_t(ce);
  toward_zero(d);
  toward_zero(e);
}

bool is_zero(const S62& a) {
  int64_t o = 0;
  for (int i = 0; i < kLimbs; ++i) o |= a.v[i];
  return o == 0;
}

}  // namespace

Fp inverse_vartime(const Fp& a) {
  if (a.is_zero()) return Fp::zero();
  // The plain inverse of the raw value: f = p, g = a.
  S62 f = kP, g = to_s62(a.l), d{}, e{};
  e.v[0] = 1;
  int64_t delta = 1;
  // A 381-bit input needs about 550 divsteps on average; the bound of Bernstein and Yang for
  // 381 bits is below 1200 (20 batches). 40 batches fall back to Fermat, never seen.
  for (int batch = 0; batch < 40; ++batch) {
    Matrix t;
    delta = divsteps62(delta, uint64_t(f.v[0]) | (uint64_t(f.v[1]) << 62), uint64_t(g.v[0]) | (uint64_t(g.v[1]) << 62), t);
    update_fg(f, g, t);
    update_de(d, e, t);
    if (!is_zero(g)) continue;
    // f = ±1: the inverse is ±d, |d| <= p.
    if (f.v[kLimbs - 1] < 0) {
      for (int i = 0; i < kLimbs; ++i) d.v[i] = -d.v[i];
      int64_t carry = 0;  // renormalize the negated limbs
      for (int i = 0; i < kLimbs; ++i) {
        const int64_t x = d.v[i] + carry;
        if (i + 1 < kLimbs) {
          d.v[i] = x & kM62;
          carry = x >> 62;
        } else {
          d.v[i] = x;
        }
      }
    }
    if (d.v[kLimbs - 1] < 0) {  // into [0, p)
      int64_t carry = 0;
      for (int i = 0; i < kLimbs; ++i) {
        const int64_t x = d.v[i] + kP.v[i] + carry;
        if (i + 1 < kLimbs) {
          d.v[i] = x & kM62;
          carry = x >> 62;
        } else {
          d.v[i] = x;
        }
      }
    }
    Fp plain, r3;
    from_s62(plain.l, d);
    for (int i = 0; i < 6; ++i) r3.l[i] = kR3.v[i];
    return plain * r3;
  }
  return a.inverse();
}

}  // namespace pp::msm_inverse
