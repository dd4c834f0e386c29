// Prime field in Montgomery form, one source for host (64-bit limbs) and device (32-bit PTX).
#pragma once

#include <cstdint>
#include <cstring>

#include "proofpipe/core/hd.hpp"
#include "proofpipe/core/limbs.hpp"

namespace pp {

// A field is described by a parameter struct holding only its modulus:
//   struct P { static constexpr int N = <64-bit limbs>;
//              static constexpr Limbs<N> modulus = limbs::from_hex<N>("..."); };
// Everything else is derived here at compile time.
template <class P>
struct FieldConsts {
  static constexpr int N = P::N;
  static constexpr Limbs<N> modulus = P::modulus;
  static constexpr int bits = limbs::bit_length(modulus);
  static_assert(modulus.v[0] & 1, "Montgomery arithmetic needs an odd modulus");
  static_assert(bits < 64 * N, "the top limb must have a spare bit (lazy carry handling)");
  /* R = 2^(64N) mod p */
  static constexpr Limbs<N> r1 = limbs::pow2_mod(64 * N, modulus);
  /* R^2 = 2^(128N) mod p */
  static constexpr Limbs<N> r2 = limbs::pow2_mod(128 * N, modulus);
  /* -p^{-1} mod 2^64 */
  static constexpr uint64_t inv64 = limbs::neg_inv64(modulus.v[0]);
  static_assert(uint64_t(modulus.v[0] * inv64) == ~uint64_t(0), "inv64 * p == -1 mod 2^64");
  /* p - 2, the inversion exponent (Fermat) */
  static constexpr Limbs<N> p_minus_2 = limbs::sub_small(modulus, 2);
  /* (p - 1) / 2, the Legendre exponent */
  static constexpr Limbs<N> p_minus_1_half = limbs::shr1(limbs::sub_small(modulus, 1));
};

namespace detail {

// Portable CIOS Montgomery multiplication over 64-bit limbs; constexpr so that compile-time
// constants (curve coefficients, tower non-residues) can be built from it.
template <int N>
constexpr void mont_mul_portable(uint64_t* out, const uint64_t* a, const uint64_t* b,
                                 const uint64_t* m, uint64_t inv) {
  using u128 = unsigned __int128;
  uint64_t t[N + 1] = {};
PP_UNROLL
  for (int i = 0; i < N; ++i) {
    // t += a * b[i]
    uint64_t carry = 0;
PP_UNROLL
    for (int j = 0; j < N; ++j) {
      const u128 s = (u128)a[j] * b[i] + t[j] + carry;
      t[j] = uint64_t(s);
      carry = uint64_t(s >> 64);
    }
    const uint64_t top = t[N] + carry;  // no overflow: p < 2^(64N-1) keeps t < 2p
    // t = (t + q p) / 2^64
    const uint64_t q = t[0] * inv;
    u128 s = (u128)q * m[0] + t[0];
    carry = uint64_t(s >> 64);
PP_UNROLL
    for (int j = 1; j < N; ++j) {
      s = (u128)q * m[j] + t[j] + carry;
      t[j - 1] = uint64_t(s);
      carry = uint64_t(s >> 64);
    }
    s = (u128)top + carry;
    t[N - 1] = uint64_t(s);
    t[N] = uint64_t(s >> 64);
  }
  // t < 2p: one conditional subtraction.
  uint64_t d[N] = {};
  uint64_t borrow = 0;
PP_UNROLL
  for (int i = 0; i < N; ++i) {
    const u128 x = (u128)t[i] - m[i] - borrow;
    d[i] = uint64_t(x);
    borrow = uint64_t(x >> 64) & 1;
  }
  const bool keep = t[N] == 0 && borrow;
PP_UNROLL
  for (int i = 0; i < N; ++i) out[i] = keep ? t[i] : d[i];
}

#if PP_DEVICE_CODE
// Device CIOS Montgomery multiplication over 2N 32-bit words with carry-chained PTX.
// Each row adds a*b[i] as two chains (low halves into t[j], high halves into t[j+1]), then
// reduces with q = t[0]*inv32 the same way and drops the zero low word.
template <int W>
__device__ PP_INLINE void mont_mul_ptx(uint32_t* r, const uint32_t* a, const uint32_t* b,
                                       const uint32_t* m, uint32_t inv) {
  uint32_t t[W + 2];
#pragma unroll
  for (int j = 0; j < W + 2; ++j) t[j] = 0;
#pragma unroll
  for (int i = 0; i < W; ++i) {
    const uint32_t bi = b[i];
    asm volatile("mad.lo.cc.u32 %0, %1, %2, %0;" : "+r"(t[0]) : "r"(a[0]), "r"(bi));
#pragma unroll
    for (int j = 1; j < W; ++j)
      asm volatile("madc.lo.cc.u32 %0, %1, %2, %0;" : "+r"(t[j]) : "r"(a[j]), "r"(bi));
    asm volatile("addc.cc.u32 %0, %0, 0;" : "+r"(t[W]));
    asm volatile("addc.u32 %0, %0, 0;" : "+r"(t[W + 1]));

    asm volatile("mad.hi.cc.u32 %0, %1, %2, %0;" : "+r"(t[1]) : "r"(a[0]), "r"(bi));
#pragma unroll
    for (int j = 1; j < W; ++j)
      asm volatile("madc.hi.cc.u32 %0, %1, %2, %0;" : "+r"(t[j + 1]) : "r"(a[j]), "r"(bi));
    asm volatile("addc.u32 %0, %0, 0;" : "+r"(t[W + 1]));

    const uint32_t q = t[0] * inv;
    asm volatile("mad.lo.cc.u32 %0, %1, %2, %0;" : "+r"(t[0]) : "r"(q), "r"(m[0]));
#pragma unroll
    for (int j = 1; j < W; ++j)
      asm volatile("madc.lo.cc.u32 %0, %1, %2, %0;" : "+r"(t[j]) : "r"(q), "r"(m[j]));
    asm volatile("addc.cc.u32 %0, %0, 0;" : "+r"(t[W]));
    asm volatile("addc.u32 %0, %0, 0;" : "+r"(t[W + 1]));

    asm volatile("mad.hi.cc.u32 %0, %1, %2, %0;" : "+r"(t[1]) : "r"(q), "r"(m[0]));
#pragma unroll
    for (int j = 1; j < W; ++j)
      asm volatile("madc.hi.cc.u32 %0, %1, %2, %0;" : "+r"(t[j + 1]) : "r"(q), "r"(m[j]));
    asm volatile("addc.u32 %0, %0, 0;" : "+r"(t[W + 1]));

#pragma unroll
    for (int j = 0; j < W + 1; ++j) t[j] = t[j + 1];
    t[W + 1] = 0;
  }
  uint32_t d[W];
  uint32_t borrow;
  asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(d[0]) : "r"(t[0]), "r"(m[0]));
#pragma unroll
  for (int j = 1; j < W; ++j)
    asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(d[j]) : "r"(t[j]), "r"(m[j]));
  asm volatile("subc.u32 %0, %1, 0;" : "=r"(borrow) : "r"(t[W]));
  // borrow == 0xffffffff when t < p (keep t); 0 when t >= p (take d).
#pragma unroll
  for (int j = 0; j < W; ++j) r[j] = borrow ? t[j] : d[j];
}

// r = a + b - (m if a + b >= m), with add.cc/sub.cc chains.
template <int W>
__device__ PP_INLINE void mod_add_ptx(uint32_t* r, const uint32_t* a, const uint32_t* b,
                                      const uint32_t* m) {
  uint32_t s[W], d[W], top, borrow;
  asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(s[0]) : "r"(a[0]), "r"(b[0]));
#pragma unroll
  for (int j = 1; j < W; ++j)
    asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(s[j]) : "r"(a[j]), "r"(b[j]));
  asm volatile("addc.u32 %0, 0, 0;" : "=r"(top));
  asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(d[0]) : "r"(s[0]), "r"(m[0]));
#pragma unroll
  for (int j = 1; j < W; ++j)
    asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(d[j]) : "r"(s[j]), "r"(m[j]));
  asm volatile("subc.u32 %0, %1, 0;" : "=r"(borrow) : "r"(top));
#pragma unroll
  for (int j = 0; j < W; ++j) r[j] = borrow ? s[j] : d[j];
}

// r = a - b + (m if a < b).
template <int W>
__device__ PP_INLINE void mod_sub_ptx(uint32_t* r, const uint32_t* a, const uint32_t* b,
                                      const uint32_t* m) {
  uint32_t d[W], borrow;
  asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(d[0]) : "r"(a[0]), "r"(b[0]));
#pragma unroll
  for (int j = 1; j < W; ++j)
    asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(d[j]) : "r"(a[j]), "r"(b[j]));
  asm volatile("subc.u32 %0, 0, 0;" : "=r"(borrow));
  uint32_t mm[W];
#pragma unroll
  for (int j = 0; j < W; ++j) mm[j] = m[j] & borrow;
  asm volatile("add.cc.u32 %0, %0, %1;" : "+r"(d[0]) : "r"(mm[0]));
#pragma unroll
  for (int j = 1; j < W; ++j) asm volatile("addc.cc.u32 %0, %0, %1;" : "+r"(d[j]) : "r"(mm[j]));
  asm volatile("addc.u32 %0, 0, 0;" : "=r"(borrow));  // closes the chain; value unused
#pragma unroll
  for (int j = 0; j < W; ++j) r[j] = d[j];
}
#endif

}  // namespace detail

// An element of Z/pZ in Montgomery form (value·R mod p), fully reduced (< p).
// The layout is N little-endian 64-bit limbs on both host and device; device code views the
// same bytes as 2N little-endian 32-bit words.
template <class P>
struct alignas(8) Field {
  using Consts = FieldConsts<P>;
  static constexpr int N = P::N;
  static constexpr int W = 2 * N;  // 32-bit words
  static constexpr int BYTES = 8 * N;
  static constexpr int BITS = Consts::bits;

  uint64_t l[N];

  // ----- construction -----
  PP_HD static constexpr Field zero() { return Field{}; }
  PP_HD static constexpr Field one() {
    constexpr Limbs<N> c = Consts::r1;
    Field r{};
    for (int i = 0; i < N; ++i) r.l[i] = c.v[i];
    return r;
  }
  // From a canonical integer (< p) given as little-endian limbs; constexpr for constants.
  static constexpr Field from_canonical_constexpr(const Limbs<N>& x) {
    Field a{};
    for (int i = 0; i < N; ++i) a.l[i] = x.v[i];
    Field r{};
    detail::mont_mul_portable<N>(r.l, a.l, Consts::r2.v, Consts::modulus.v, Consts::inv64);
    return r;
  }
  static consteval Field from_hex(const char* s) {
    return from_canonical_constexpr(limbs::from_hex<N>(s));
  }
  static constexpr Field from_u64_constexpr(uint64_t x) {
    Limbs<N> v{};
    v.v[0] = x;
    return from_canonical_constexpr(v);
  }
  PP_HD static Field from_u64(uint64_t x) {
    Field a{};
    a.l[0] = x;
    return a.mul_r2();
  }
  // From canonical little-endian limbs; returns false if x >= p (out of range).
  PP_HD static bool from_canonical(Field& out, const uint64_t* x) {
    if (!less_than_modulus(x)) return false;
    Field a;
    for (int i = 0; i < N; ++i) a.l[i] = x[i];
    out = a.mul_r2();
    return true;
  }
  // To canonical little-endian limbs.
  PP_HD void to_canonical(uint64_t* x) const {
    Field one_raw{};
    one_raw.l[0] = 1;
    const Field c = *this * one_raw;
    for (int i = 0; i < N; ++i) x[i] = c.l[i];
  }

  // ----- bytes (canonical value) -----
  // Big-endian, BYTES long. False when the value is >= p.
  bool from_bytes_be(const uint8_t* in) {
    uint64_t x[N];
    for (int i = 0; i < N; ++i) {
      uint64_t w = 0;
      for (int k = 0; k < 8; ++k) w = (w << 8) | in[8 * (N - 1 - i) + k];
      x[i] = w;
    }
    return from_canonical(*this, x);
  }
  void to_bytes_be(uint8_t* out) const {
    uint64_t x[N];
    to_canonical(x);
    for (int i = 0; i < N; ++i)
      for (int k = 0; k < 8; ++k) out[8 * (N - 1 - i) + k] = uint8_t(x[i] >> (56 - 8 * k));
  }
  bool from_bytes_le(const uint8_t* in) {
    uint64_t x[N];
    for (int i = 0; i < N; ++i) {
      uint64_t w = 0;
      for (int k = 7; k >= 0; --k) w = (w << 8) | in[8 * i + k];
      x[i] = w;
    }
    return from_canonical(*this, x);
  }
  void to_bytes_le(uint8_t* out) const {
    uint64_t x[N];
    to_canonical(x);
    for (int i = 0; i < N; ++i)
      for (int k = 0; k < 8; ++k) out[8 * i + k] = uint8_t(x[i] >> (8 * k));
  }

  // ----- predicates -----
  PP_HD bool is_zero() const {
    uint64_t acc = 0;
    for (int i = 0; i < N; ++i) acc |= l[i];
    return acc == 0;
  }
  PP_HD bool is_one() const { return *this == one(); }
  PP_HD friend bool operator==(const Field& a, const Field& b) {
    uint64_t acc = 0;
    for (int i = 0; i < N; ++i) acc |= a.l[i] ^ b.l[i];
    return acc == 0;
  }
  PP_HD friend bool operator!=(const Field& a, const Field& b) { return !(a == b); }
  // Canonical value > (p-1)/2: the "lexicographically largest" sign of zcash encodings.
  bool is_lexicographically_largest() const {
    uint64_t x[N];
    to_canonical(x);
    Limbs<N> v{};
    for (int i = 0; i < N; ++i) v.v[i] = x[i];
    return limbs::less(Consts::p_minus_1_half, v);
  }

  // ----- arithmetic -----
  PP_HD friend Field operator+(const Field& a, const Field& b) {
    Field r;
#if PP_DEVICE_CODE
    constexpr Limbs<N> m = Consts::modulus;
    detail::mod_add_ptx<W>(r.w(), a.w(), b.w(), reinterpret_cast<const uint32_t*>(m.v));
#else
    uint64_t s[N];
    uint64_t carry = 0;
    for (int i = 0; i < N; ++i) {
      const unsigned __int128 x = (unsigned __int128)a.l[i] + b.l[i] + carry;
      s[i] = uint64_t(x);
      carry = uint64_t(x >> 64);
    }
    r.reduce_once_from(s, carry);
#endif
    return r;
  }
  PP_HD friend Field operator-(const Field& a, const Field& b) {
    Field r;
#if PP_DEVICE_CODE
    constexpr Limbs<N> m = Consts::modulus;
    detail::mod_sub_ptx<W>(r.w(), a.w(), b.w(), reinterpret_cast<const uint32_t*>(m.v));
#else
    uint64_t borrow = 0;
    for (int i = 0; i < N; ++i) {
      const unsigned __int128 x = (unsigned __int128)a.l[i] - b.l[i] - borrow;
      r.l[i] = uint64_t(x);
      borrow = uint64_t(x >> 64) & 1;
    }
    const uint64_t mask = uint64_t(0) - borrow;
    uint64_t carry = 0;
    for (int i = 0; i < N; ++i) {
      const unsigned __int128 x = (unsigned __int128)r.l[i] + (Consts::modulus.v[i] & mask) + carry;
      r.l[i] = uint64_t(x);
      carry = uint64_t(x >> 64);
    }
#endif
    return r;
  }
  PP_HD Field operator-() const { return zero() - *this; }
  PP_HD friend Field operator*(const Field& a, const Field& b) {
    Field r;
#if PP_DEVICE_CODE
    constexpr Limbs<N> m = Consts::modulus;
    constexpr uint32_t inv32 = uint32_t(Consts::inv64);
    detail::mont_mul_ptx<W>(r.w(), a.w(), b.w(), reinterpret_cast<const uint32_t*>(m.v), inv32);
#else
    detail::mont_mul_portable<N>(r.l, a.l, b.l, Consts::modulus.v, Consts::inv64);
#endif
    return r;
  }
  PP_HD Field& operator+=(const Field& b) { return *this = *this + b; }
  PP_HD Field& operator-=(const Field& b) { return *this = *this - b; }
  PP_HD Field& operator*=(const Field& b) { return *this = *this * b; }
  PP_HD Field sqr() const { return *this * *this; }
  PP_HD Field dbl() const { return *this + *this; }

  // x^e for e given as little-endian limbs of any count (left-to-right binary).
  template <int M>
  PP_HD Field pow(const Limbs<M>& e) const {
    Field r = one();
    bool started = false;
    for (int i = 64 * M - 1; i >= 0; --i) {
      if (started) r = r.sqr();
      if ((e.v[i / 64] >> (i % 64)) & 1) {
        r = started ? r * *this : *this;
        started = true;
      }
    }
    return r;
  }
  PP_HD Field pow_u64(uint64_t e) const {
    Limbs<1> x{{e}};
    return pow(x);
  }
  // Multiplicative inverse by Fermat; inverse of zero is zero.
  PP_HD Field inverse() const {
    constexpr Limbs<N> e = Consts::p_minus_2;
    return pow(e);
  }
  // Legendre symbol: 1 for non-zero squares, -1 for non-squares, 0 for zero.
  PP_HD int legendre() const {
    if (is_zero()) return 0;
    constexpr Limbs<N> e = Consts::p_minus_1_half;
    return pow(e).is_one() ? 1 : -1;
  }
  PP_HD bool is_square() const { return legendre() >= 0; }

  // ----- raw views -----
  PP_HD uint32_t* w() { return reinterpret_cast<uint32_t*>(l); }
  PP_HD const uint32_t* w() const { return reinterpret_cast<const uint32_t*>(l); }

 private:
  PP_HD Field mul_r2() const {
    constexpr Limbs<N> c = Consts::r2;
    Field r2{};
    for (int i = 0; i < N; ++i) r2.l[i] = c.v[i];
    return *this * r2;
  }
  PP_HD static bool less_than_modulus(const uint64_t* x) {
    constexpr Limbs<N> m = Consts::modulus;
    for (int i = N - 1; i >= 0; --i) {
      if (x[i] != m.v[i]) return x[i] < m.v[i];
    }
    return false;
  }
  PP_HD void reduce_once_from(const uint64_t* s, uint64_t carry) {
    uint64_t d[N];
    uint64_t borrow = 0;
    for (int i = 0; i < N; ++i) {
      const unsigned __int128 x = (unsigned __int128)s[i] - Consts::modulus.v[i] - borrow;
      d[i] = uint64_t(x);
      borrow = uint64_t(x >> 64) & 1;
    }
    const bool keep = !carry && borrow;
    for (int i = 0; i < N; ++i) l[i] = keep ? s[i] : d[i];
  }
};

}  // namespace pp
