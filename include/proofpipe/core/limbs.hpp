// SPDX-License-Identifier: Apache-2.0 OR MIT
// Compile-time multi-limb integers: parse moduli and derive Montgomery constants from them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "proofpipe/core/hd.hpp"

namespace pp {

// N little-endian 64-bit limbs. A literal type so constants can be computed by constexpr code
// and copied into local constexpr variables of device functions.
template <int N>
struct Limbs {
  uint64_t v[N];
};

namespace limbs {

// Parses a big-endian hex string ("0x..." allowed) at compile time.
template <int N>
consteval Limbs<N> from_hex(const char* s) {
  Limbs<N> r{};
  if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s += 2;
  int len = 0;
  while (s[len] != '\0') ++len;
  for (int i = 0; i < len; ++i) {
    const char c = s[len - 1 - i];
    uint64_t d = 0;
    if (c >= '0' && c <= '9') d = uint64_t(c - '0');
    else if (c >= 'a' && c <= 'f') d = uint64_t(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') d = uint64_t(c - 'A' + 10);
    else throw "invalid hex digit";  // a compile error in consteval context
    if (i / 16 >= N) {
      if (d != 0) throw "hex constant does not fit";
      continue;
    }
    r.v[i / 16] |= d << (4 * (i % 16));
  }
  return r;
}

template <int N>
constexpr bool less(const Limbs<N>& a, const Limbs<N>& b) {
  for (int i = N - 1; i >= 0; --i) {
    if (a.v[i] != b.v[i]) return a.v[i] < b.v[i];
  }
  return false;
}

template <int N>
constexpr bool equal(const Limbs<N>& a, const Limbs<N>& b) {
  for (int i = 0; i < N; ++i)
    if (a.v[i] != b.v[i]) return false;
  return true;
}

// a - b, returning the borrow.
template <int N>
constexpr uint64_t sub(Limbs<N>& r, const Limbs<N>& a, const Limbs<N>& b) {
  uint64_t borrow = 0;
  for (int i = 0; i < N; ++i) {
    const unsigned __int128 d = (unsigned __int128)a.v[i] - b.v[i] - borrow;
    r.v[i] = uint64_t(d);
    borrow = uint64_t(d >> 64) & 1;
  }
  return borrow;
}

// a + b, returning the carry.
template <int N>
constexpr uint64_t add(Limbs<N>& r, const Limbs<N>& a, const Limbs<N>& b) {
  uint64_t carry = 0;
  for (int i = 0; i < N; ++i) {
    const unsigned __int128 s = (unsigned __int128)a.v[i] + b.v[i] + carry;
    r.v[i] = uint64_t(s);
    carry = uint64_t(s >> 64);
  }
  return carry;
}

// 2^bits mod m by repeated doubling (m odd, any size); used for R = 2^(64N) and R^2.
template <int N>
constexpr Limbs<N> pow2_mod(int bits, const Limbs<N>& m) {
  Limbs<N> x{};
  x.v[0] = 1;
  for (int i = 0; i < bits; ++i) {
    Limbs<N> d{};
    const uint64_t carry = add(d, x, x);
    Limbs<N> t{};
    const uint64_t borrow = sub(t, d, m);
    x = (carry || !borrow) ? t : d;
  }
  return x;
}

// -m^{-1} mod 2^64 by Newton iteration (m odd).
constexpr uint64_t neg_inv64(uint64_t m0) {
  uint64_t x = 1;
  for (int i = 0; i < 7; ++i) x *= 2 - m0 * x;
  return uint64_t(0) - x;
}

template <int N>
constexpr int bit_length(const Limbs<N>& a) {
  for (int i = N - 1; i >= 0; --i) {
    if (a.v[i] != 0) {
      int b = 64;
      while (!((a.v[i] >> (b - 1)) & 1)) --b;
      return 64 * i + b;
    }
  }
  return 0;
}

template <int N>
constexpr bool bit(const Limbs<N>& a, int i) {
  return (a.v[i / 64] >> (i % 64)) & 1;
}

// Shift right by one bit.
template <int N>
constexpr Limbs<N> shr1(const Limbs<N>& a) {
  Limbs<N> r{};
  for (int i = 0; i < N; ++i) {
    r.v[i] = a.v[i] >> 1;
    if (i + 1 < N) r.v[i] |= a.v[i + 1] << 63;
  }
  return r;
}

template <int N>
constexpr Limbs<N> sub_small(const Limbs<N>& a, uint64_t s) {
  Limbs<N> b{};
  b.v[0] = s;
  Limbs<N> r{};
  sub(r, a, b);
  return r;
}

template <int N>
constexpr Limbs<N> add_small(const Limbs<N>& a, uint64_t s) {
  Limbs<N> b{};
  b.v[0] = s;
  Limbs<N> r{};
  add(r, a, b);
  return r;
}

}  // namespace limbs
}  // namespace pp
