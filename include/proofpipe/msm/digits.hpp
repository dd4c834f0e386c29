// SPDX-License-Identifier: Apache-2.0 OR MIT
// Signed-digit window decomposition of scalars and small multiples: the pieces of Pippenger's
// method that the CPU MSM (src/msm) and the GPU MSM (src/gpu) share, host and device.
#pragma once

#include <cstdint>

#include "proofpipe/core/hd.hpp"
#include "proofpipe/ec/curve.hpp"
#include "proofpipe/ff/bls12_381.hpp"

namespace pp::msm_digits {

inline constexpr int kScalarBits = Fr::BITS;  // canonical scalars are < r < 2^255

// Windows needed for c-bit signed digits of a kScalarBits-bit scalar. floor(255/c) + 1 covers
// every bit and leaves the top window with at most (255 mod c) < c bits, so the carry coming
// into it can never push it past 2^(c-1): it never produces a carry of its own. When c divides
// 255 that top window is the "extra" one holding only the final carry.
PP_HD constexpr int num_windows(int c) { return kScalarBits / c + 1; }

// c bits (c <= 32) of the canonical scalar k (4 little-endian limbs) starting at bit s, zero
// past bit 255.
PP_HD PP_INLINE uint32_t window_bits_at(const uint64_t* k, int s, int c) {
  if (s >= 256) return 0;
  const int limb = s / 64, off = s % 64;
  uint64_t v = k[limb] >> off;
  if (off + c > 64 && limb + 1 < 4) v |= k[limb + 1] << (64 - off);
  return uint32_t(v & ((uint64_t(1) << c) - 1));
}

// The signed digit of window w: d in [-2^(c-1)+1, 2^(c-1)] with sum_w d_w·2^(c·w) = k. A raw
// window value above 2^(c-1) is taken as d - 2^c with a carry into the next window, so the
// digit of window w needs the carries of windows 0..w-1 (cheap integer work, recomputed).
PP_HD PP_INLINE int32_t signed_digit(const uint64_t* k, int c, int w) {
  const uint32_t half = uint32_t(1) << (c - 1);
  uint32_t carry = 0;
  for (int v = 0; v < w; ++v) carry = window_bits_at(k, v * c, c) + carry > half ? 1u : 0u;
  const uint32_t d = window_bits_at(k, w * c, c) + carry;
  return d > half ? int32_t(int64_t(d) - (int64_t(1) << c)) : int32_t(d);
}

// All nw digits of k, window by window, into out[w * stride].
PP_HD PP_INLINE void signed_digits(const uint64_t* k, int c, int nw, int32_t* out, std::size_t stride) {
  const uint32_t half = uint32_t(1) << (c - 1);
  const int64_t full = int64_t(1) << c;
  uint32_t carry = 0;
  for (int w = 0; w < nw; ++w) {
    const uint32_t d = window_bits_at(k, w * c, c) + carry;
    carry = d > half ? 1u : 0u;
    out[std::size_t(w) * stride] = int32_t(int64_t(d) - (carry ? full : 0));
  }
}

// g·P for a small non-negative g, double-and-add from the top bit; add_p(r) does r += P (the
// GPU reduction adds P read from memory, msm_kernels.hpp).
template <class C, class AddP>
PP_HD XYZZ<C> mul_small_with(const XYZZ<C>& p, uint32_t g, AddP add_p) {
  if (g == 0) return XYZZ<C>::infinity();
  if (g == 1 || p.is_infinity()) return p;
  XYZZ<C> r = p;
  int top = 31;
  while (!((g >> top) & 1)) --top;
  for (int b = top - 1; b >= 0; --b) {
    r = r.dbl();
    if ((g >> b) & 1) add_p(r);
  }
  return r;
}
template <class C>
PP_HD XYZZ<C> mul_small(const XYZZ<C>& p, uint32_t g) {
  return mul_small_with(p, g, [&](XYZZ<C>& r) { r += p; });
}

}  // namespace pp::msm_digits
