// The NTT of the GPU, written once for both sides: the pass plan, the per-thread butterfly and
// twist steps and the tables. src/gpu/ntt.cu runs these bodies in CUDA blocks; the CPU twin
// (ntt_twin.hpp) runs the very same bodies in loops, so CI checks the GPU algorithm without a GPU.
//
// The algorithm. A 2^L-point radix-2 transform is split into passes of k <= kMaxPassLg
// consecutive butterfly levels. A pass over the bits [m, m+k) treats the array as 2^(L-k)
// independent K-point columns (K = 2^k, stride 2^m): it loads a few columns into shared memory,
// runs k levels of a plain K-point transform there (roots from one small table), and applies the
// "twist" — the factors that couple the columns, omega_n^(c·f·2^(L-m-k)) for column c and
// frequency f — once per element instead of once per butterfly (the four-step identity):
//   Gentleman-Sande / DIF (natural -> bit-reversed): passes from the top bits down, the twist
//     multiplies a pass's outputs (local position p holds frequency f = bitrev_k(p));
//   Cooley-Tukey / DIT (bit-reversed -> natural): passes from the low bits up, the twist
//     multiplies a pass's inputs (it is the transpose of DIF).
// So every element crosses memory once per pass (3 passes at 2^27) and a butterfly costs one
// multiplication; the twist costs two per element per pass (its root omega_n^e comes from two
// small tables, omega^(e mod 2^b) · omega^(2^b·floor(e/2^b))), none in the last DIF pass or the
// first DIT pass (column 0 only).
#pragma once

#include <cstddef>
#include <cstdint>

#include "proofpipe/core/hd.hpp"
#include "proofpipe/ff/bls12_381.hpp"

namespace pp::gpu {

inline constexpr int kMaxNttLg = 28;       // the largest transform the GPU path supports
inline constexpr int kMaxPassLg = 10;      // butterfly levels per pass (K <= 1024)
inline constexpr int kBlockElements = 1024;  // elements a block holds in shared memory (32 KiB)

PP_HD PP_INLINE uint32_t bit_reverse(uint32_t x, int bits) {
#if PP_DEVICE_CODE
  return bits == 0 ? 0u : (__brev(x) >> (32 - bits));
#else
  if (bits == 0) return 0;
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  x = __builtin_bswap32(x);
  return x >> (32 - bits);
#endif
}

// One pass: levels [m, m + k) of a 2^lg transform, `cols` columns per block.
struct NttPass {
  int lg, m, k, cols;
  PP_HD uint32_t K() const { return 1u << k; }
  PP_HD uint32_t elements_per_block() const { return uint32_t(cols) << k; }
  PP_HD uint32_t threads_per_block() const { return elements_per_block() / 2; }
  PP_HD uint64_t blocks() const { return (uint64_t(1) << (lg - k)) / uint64_t(cols); }
  // Global index of local element e = t·cols + col (row t of the K-point column) of block `block`.
  PP_HD uint64_t global_index(uint64_t block, uint32_t e) const {
    const uint64_t groups = (uint64_t(1) << m) / uint64_t(cols);  // column groups per row block
    const uint64_t hi = block / groups, cg = block % groups;
    const uint32_t t = e / uint32_t(cols), col = e % uint32_t(cols);
    return (hi << (m + k)) + (uint64_t(t) << m) + cg * uint64_t(cols) + col;
  }
  // Twist exponent of local element e: column c (the low m bits of its index) times its
  // frequency bitrev_k(t), scaled to the full domain. Zero when m == 0 (no twist needed).
  PP_HD uint64_t twist_exponent(uint64_t block, uint32_t e) const {
    const uint64_t groups = (uint64_t(1) << m) / uint64_t(cols);
    const uint64_t c = (block % groups) * uint64_t(cols) + e % uint32_t(cols);
    const uint64_t f = bit_reverse(e / uint32_t(cols), k);
    return (c * f) << (lg - m - k);
  }
};

// Passes of a 2^lg transform, ordered from the top bits down (the DIF order; DIT runs them in
// reverse). Levels are spread evenly: 27 = 9 + 9 + 9.
struct NttPlan {
  int lg = 0;
  int count = 0;
  NttPass pass[kMaxNttLg];
};

// `max_pass` < kMaxPassLg gives more, smaller passes (tests use it to reach multi-pass plans
// at small sizes).
PP_HD inline NttPlan make_ntt_plan(int lg, int max_pass = kMaxPassLg) {
  NttPlan plan;
  plan.lg = lg;
  plan.count = (lg + max_pass - 1) / max_pass;
  int top = lg;
  for (int i = 0; i < plan.count; ++i) {
    const int k = (top + (plan.count - i) - 1) / (plan.count - i);  // ceil(remaining / passes left)
    const int m = top - k;
    int cols = kBlockElements >> k;
    if (cols > (1 << m)) cols = 1 << m;
    plan.pass[i] = NttPass{lg, m, k, cols};
    top = m;
  }
  return plan;
}

// The roots a transform of size 2^lg needs, all in one table set that lives in device memory
// (or host memory for the twin). lo[i] = w^i (i < 2^b), hi[j] = w^(j·2^b) (j < 2^(lg-b)),
// small[v] = w_K^v for the largest pass size K (v < K/2), for w = omega and w = omega^-1, and
// the same two-level powers of the coset shift and its inverse.
struct NttTables {
  int lg = 0, b = 0, small_lg = 0;
  const Fr* fwd_lo = nullptr; const Fr* fwd_hi = nullptr;
  const Fr* inv_lo = nullptr; const Fr* inv_hi = nullptr;
  const Fr* shift_lo = nullptr; const Fr* shift_hi = nullptr;
  const Fr* shift_inv_lo = nullptr; const Fr* shift_inv_hi = nullptr;
  const Fr* small_fwd = nullptr; const Fr* small_inv = nullptr;
  Fr size_inv;  // 1 / 2^lg
};

// Table layout in one buffer of table_elements(lg) Fr, in the order of the fields above.
PP_HD inline int table_split(int lg) { return (lg + 1) / 2; }
PP_HD inline int table_small_lg(int lg) { return lg < kMaxPassLg ? lg : kMaxPassLg; }
PP_HD inline std::size_t table_elements(int lg) {
  const int b = table_split(lg);
  const std::size_t two_level = (std::size_t(1) << b) + (std::size_t(1) << (lg - b));
  return 4 * two_level + 2 * (std::size_t(1) << (table_small_lg(lg) - 1));
}
// Points `t` into a buffer of table_elements(lg) elements (no values written).
PP_HD inline NttTables bind_tables(Fr* base, int lg, const Fr& size_inv) {
  NttTables t;
  t.lg = lg;
  t.b = table_split(lg);
  t.small_lg = table_small_lg(lg);
  const std::size_t lo = std::size_t(1) << t.b, hi = std::size_t(1) << (lg - t.b);
  Fr* p = base;
  t.fwd_lo = p; p += lo; t.fwd_hi = p; p += hi;
  t.inv_lo = p; p += lo; t.inv_hi = p; p += hi;
  t.shift_lo = p; p += lo; t.shift_hi = p; p += hi;
  t.shift_inv_lo = p; p += lo; t.shift_inv_hi = p; p += hi;
  t.small_fwd = p; p += std::size_t(1) << (t.small_lg - 1);
  t.small_inv = p;
  t.size_inv = size_inv;
  return t;
}

// The four base values the tables are powers of.
struct NttRoots {
  Fr omega, omega_inv, shift, shift_inv;
};

// Entry i of the table buffer (bind_tables order), computed from the roots alone, so the device
// fills its tables with a kernel (no host staging) and the twin with a loop.
PP_HD inline Fr table_entry(const NttRoots& r, int lg, std::size_t i) {
  const int b = table_split(lg);
  const std::size_t lo = std::size_t(1) << b, hi = std::size_t(1) << (lg - b);
  const Fr* bases[] = {&r.omega, &r.omega_inv, &r.shift, &r.shift_inv};
  for (int s = 0; s < 4; ++s) {
    if (i < lo) return bases[s]->pow_u64(i);
    i -= lo;
    if (i < hi) return bases[s]->pow_u64(uint64_t(i) << b);
    i -= hi;
  }
  // small tables: w_K = omega^(2^(lg - small_lg))
  const std::size_t half = std::size_t(1) << (table_small_lg(lg) - 1);
  const int s = i < half ? 0 : 1;
  if (s == 1) i -= half;
  return (s == 0 ? r.omega : r.omega_inv).pow_u64(uint64_t(i) << (lg - table_small_lg(lg)));
}

PP_HD PP_INLINE Fr two_level_pow(const Fr* lo, const Fr* hi, int b, uint64_t e) {
  return lo[e & ((uint64_t(1) << b) - 1)] * hi[e >> b];
}

// A block's elements in shared memory, limb-major: limb l of element e at s[l·stride + e]. A warp
// touching consecutive elements then reads consecutive 64-bit words (no bank conflicts), where
// whole 32-byte elements side by side would collide 4 ways.
struct LimbSlots {
  uint64_t* s;
  uint32_t stride;
  PP_HD PP_INLINE Fr get(uint32_t e) const {
    Fr r;
    PP_UNROLL for (int l = 0; l < 4; ++l) r.l[l] = s[l * stride + e];
    return r;
  }
  PP_HD PP_INLINE void set(uint32_t e, const Fr& v) const {
    PP_UNROLL for (int l = 0; l < 4; ++l) s[l * stride + e] = v.l[l];
  }
};

// One butterfly of local level j (half-size 2^j) of a K-point column transform held in `s`
// (element (t, col) at slot t·cols + col); q in [0, cols·K/2) picks the butterfly. `small` holds
// w_Kmax^v, so the level's root w_(2^(j+1))^u is small[u << (small_lg - 1 - j)].
PP_HD PP_INLINE void dif_butterfly(const LimbSlots& s, int cols, int j, uint32_t q, const Fr* small, int small_lg) {
  const uint32_t col = q % uint32_t(cols), r = q / uint32_t(cols);
  const uint32_t h = 1u << j, u = r & (h - 1);
  const uint32_t i0 = ((r >> j) << (j + 1)) + u, i1 = i0 + h;
  const Fr x = s.get(i0 * cols + col), y = s.get(i1 * cols + col);
  s.set(i0 * cols + col, x + y);
  const Fr diff = x - y;
  s.set(i1 * cols + col, u == 0 ? diff : diff * small[u << (small_lg - 1 - j)]);
}

PP_HD PP_INLINE void dit_butterfly(const LimbSlots& s, int cols, int j, uint32_t q, const Fr* small, int small_lg) {
  const uint32_t col = q % uint32_t(cols), r = q / uint32_t(cols);
  const uint32_t h = 1u << j, u = r & (h - 1);
  const uint32_t i0 = ((r >> j) << (j + 1)) + u, i1 = i0 + h;
  const Fr x = s.get(i0 * cols + col), y = s.get(i1 * cols + col);
  const Fr t = u == 0 ? y : y * small[u << (small_lg - 1 - j)];
  s.set(i0 * cols + col, x + t);
  s.set(i1 * cols + col, x - t);
}

// ---------------------------------------------------------------------------------------------
// Element-wise steps (one body per element index i of an n = 2^lg array).

enum class Scale : uint8_t {
  none,
  shift,          // a[i] *= shift^idx           (coset forward, before the transform)
  shift_inv,      // a[i] *= shift^-idx · factor (coset inverse, after it; factor = 1/n)
  size_inv,       // a[i] *= 1/n
};

// idx is i in natural order, bitrev(i) when the array is in bit-reversed order.
PP_HD PP_INLINE void scale_element(Fr* a, uint64_t i, const NttTables& t, Scale kind, bool bit_reversed) {
  const uint64_t idx = bit_reversed ? bit_reverse(uint32_t(i), t.lg) : i;
  switch (kind) {
    case Scale::none:
      return;
    case Scale::shift:
      a[i] = a[i] * two_level_pow(t.shift_lo, t.shift_hi, t.b, idx);
      return;
    case Scale::shift_inv:
      a[i] = a[i] * two_level_pow(t.shift_inv_lo, t.shift_inv_hi, t.b, idx) * t.size_inv;
      return;
    case Scale::size_inv:
      a[i] = a[i] * t.size_inv;
      return;
  }
}

// The prover's H step on the coset: a[i] = (a[i]·b[i] - c[i])·factor (factor = 1/Z(coset) for
// bellman's convention, 1 for snarkjs's).
PP_HD PP_INLINE void h_step_element(Fr* a, const Fr* b, const Fr* c, uint64_t i, const Fr& factor) {
  a[i] = (a[i] * b[i] - c[i]) * factor;
}

}  // namespace pp::gpu
