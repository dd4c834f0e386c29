// SPDX-License-Identifier: Apache-2.0 OR MIT
// The NTT of the GPU, written once for both sides: the per-thread rounds, the twist, the table
// entries and the element-wise steps; private to src/gpu (and the CPU twins' tests). The pass plan
// and the tables' layout, which the planner and the entry points need, are public:
// proofpipe/gpu/ntt_sizing.hpp. src/gpu/ntt.cu runs these bodies in CUDA blocks; the CPU twin
// (ntt_common.cpp) runs the very same bodies in loops, so CI checks the GPU algorithm without a GPU.
//
// The algorithm. A 2^L-point radix-2 transform is split into passes of k <= kMaxPassLg
// consecutive butterfly levels. A pass over the bits [m, m+k) treats the array as 2^(L-k)
// independent K-point columns (K = 2^k, stride 2^m): a block copies `cols` columns into shared
// memory, runs k levels of a plain K-point transform on them (roots from one small table), and
// applies the "twist" — the factors that couple the columns, omega_n^(c·f·2^(L-m-k)) for column c
// and frequency f — once per element instead of once per butterfly (the four-step identity):
//   Gentleman-Sande / DIF (natural -> bit-reversed): passes from the top bits down, the twist
//     multiplies a pass's outputs (position p of a column holds frequency f = bitrev_k(p));
//   Cooley-Tukey / DIT (bit-reversed -> natural): passes from the low bits up, the twist
//     multiplies a pass's inputs (it is the transpose of DIF).
// Every element crosses device memory once per pass (3 passes at 2^27), in 16-byte chunks that
// neighbouring threads read and write side by side.
//
// Inside a pass a thread holds 4 elements of one column in registers and runs up to 2 levels on
// them (a "round"); the block exchanges elements through shared memory between rounds, so an
// 8-level pass is 4 rounds and 5 barriers (the plan gives passes whole rounds where it can). In
// the round that holds the lowest 2 bits of a position the roots of the lowest levels are the
// same for every thread, and the trivial ones (u = 0) are skipped: 2 products per 4 elements
// instead of 4. Blocks of 2^10 elements (32 KiB of shared memory) and 256 threads, four to an SM:
// 32 warps an SM hide the latency of the products' dependent chains better than 8 elements a
// thread in 16 warps (docs/perf-history/gpu-kernels-v1-v9.md). Transforms up to 2^kSmallNttLg
// give a thread 2 elements and a round 1 level (the thread shape, NttPass::thread_lg, is a
// template parameter of the kernel): they have too few elements to keep the warps busy otherwise.
// Table entries are read as two 16-byte words, and the rare edge factors (scalings, twists past
// the direct table) are out of line, so that the kernel stays small (5,000 instructions, where
// inlining them per register and case made 21,000 and small transforms stalled on instruction
// fetch; docs/results/ncu_ntt_vs_sppark_h100.txt).
//
// The twist's root comes from one direct table when the pass's exponents are small enough
// (m + k <= twist_lg, by default kTwistTableLg: the middle pass of a 3-pass plan), else from two
// tables, omega^(e mod 2^b) · omega^(2^b·floor(e/2^b)). With twist_lg = lg (a "full" twist table,
// 2^lg roots: 4 GiB at 2^27) every twist is one load and no product. The coset shift and the 1/n of an inverse are
// applied as the first pass loads and the last pass stores (no pass of their own).
#pragma once

#include <cstddef>
#include <cstdint>

#include "proofpipe/core/hd.hpp"
#include "proofpipe/ff/bls12_381.hpp"
#include "proofpipe/gpu/ntt_sizing.hpp"

// Out of line on both sides (the rare edge factors below; the only such functions of the GPU code).
#if defined(__CUDACC__)
#define PP_NOINLINE __noinline__
#else
#define PP_NOINLINE __attribute__((noinline))
#endif

namespace pp::gpu {

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

// The levels of round r of a pass: the thread's 2^tl registers (tl = the pass's thread_lg, given
// separately so that the kernels fold it as a constant) hold the positions whose bits
// [lo, lo + bits) vary (bits = min(k, tl)), and the round runs levels [level_lo, level_hi) — from
// the top down for DIF, from the bottom up for DIT.
struct NttRound {
  int lo, bits, level_lo, level_hi;
};
PP_HD PP_INLINE NttRound round_of(const NttPass& p, bool dif, int r, int tl) {
  const int bits = p.k < tl ? p.k : tl;
  if (dif) {
    const int top = p.k - tl * r;
    const int bottom = top > tl ? top - tl : 0;
    return NttRound{bottom, bits, bottom, top};
  }
  const int bottom = tl * r;
  const int top = bottom + tl < p.k ? bottom + tl : p.k;
  return NttRound{bottom < p.k - bits ? bottom : p.k - bits, bits, bottom, top};
}

// Which element register q of thread `tid` holds in a round. The low bits of tid pick the column
// (threads side by side read neighbouring columns); the rest, `o`, fills the position bits
// outside [lo, lo + bits). A pass with k < tl packs 2^(tl - k) columns into a
// thread's registers; `valid` is false for registers past the block's last column (tiny
// transforms only).
struct RoundMap {
  uint32_t o, tcol;
  int lo, bits, extra;  // extra = thread_lg - bits column bits in q
  uint32_t cols;
  PP_HD PP_INLINE uint32_t pos(int q) const {
    const uint32_t low = o & ((1u << lo) - 1);
    return low | (uint32_t(q & ((1 << bits) - 1)) << lo) | ((o >> lo) << (lo + bits));
  }
  PP_HD PP_INLINE uint32_t col(int q) const { return (tcol << extra) | uint32_t(q >> bits); }
  PP_HD PP_INLINE bool valid(int q) const { return col(q) < cols; }
  PP_HD PP_INLINE uint32_t element(int q, int cols_lg) const { return pos(q) << cols_lg | col(q); }
  // Exponent u of the level-j root of the butterfly whose lower element is register q: the
  // position's bits below j.
  PP_HD PP_INLINE uint32_t root_exponent(int q, int d) const {
    return (o & ((1u << lo) - 1)) | (uint32_t(q & ((1 << d) - 1)) << lo);
  }
};
PP_HD PP_INLINE RoundMap round_map(const NttPass& p, const NttRound& rd, uint32_t tid, int tl) {
  const int extra = tl - rd.bits;
  const int tcols_lg = p.cols_lg > extra ? p.cols_lg - extra : 0;
  return RoundMap{tid >> tcols_lg, tid & ((1u << tcols_lg) - 1), rd.lo, rd.bits, extra, p.cols()};
}

// ---------------------------------------------------------------------------------------------
// Tables.

// Entry i of the table buffer (bind_tables order), computed from the roots alone, so the device
// fills its tables with a kernel (no host staging) and the twin with a loop.
template <class F>
PP_HD inline F table_entry(const NttRootsOf<F>& r, int lg, std::size_t i, int twist_lg = kTwistTableLg) {
  const int b = table_split(lg);
  const std::size_t lo = std::size_t(1) << b, hi = std::size_t(1) << (lg - b);
  const F* bases[] = {&r.omega, &r.omega_inv, &r.shift, &r.shift_inv};
  for (int s = 0; s < 4; ++s) {
    if (i < lo) return bases[s]->pow_u64(i);
    i -= lo;
    if (i < hi) return s == 3 ? bases[s]->pow_u64(uint64_t(i) << b) * r.size_inv : bases[s]->pow_u64(uint64_t(i) << b);
    i -= hi;
  }
  // the sized hi tables: shift^(j·2^b)/n, then shift^(-j·2^b)/n as canonical integers
  if (i < hi) return r.shift.pow_u64(uint64_t(i) << b) * r.size_inv;
  i -= hi;
  if (i < hi) return (r.shift_inv.pow_u64(uint64_t(i) << b) * r.size_inv).canonical_limbs();
  i -= hi;
  // small tables: w_K = omega^(2^(lg - small_lg))
  const std::size_t half = std::size_t(1) << (table_small_lg(lg) - 1);
  for (int s = 0; s < 2; ++s) {
    if (i < half) return bases[s]->pow_u64(uint64_t(i) << (lg - table_small_lg(lg)));
    i -= half;
  }
  // the direct twist table: omega^(e·2^(lg - mid_lg))
  return r.omega.pow_u64(uint64_t(i) << (lg - table_mid_lg(lg, twist_lg)));
}

// Table entry i, on the device as two 16-byte loads through the read-only path (a plain F load
// is eight 4-byte loads: F is 8-byte aligned, and the kernels' arithmetic works on 32-bit words).
// Every entry is 32-byte aligned: the buffer's start is 16-byte aligned (ntt_tables_init checks
// it) and entries are 32 bytes.
template <class F>
PP_HD PP_INLINE F load_entry(const F* table, uint64_t i) {
#if PP_DEVICE_CODE
  static_assert(sizeof(F) == 32, "a table entry is two 16-byte words");
  const ulonglong2* w = reinterpret_cast<const ulonglong2*>(table + i);
  const ulonglong2 a = __ldg(w), b = __ldg(w + 1);
  F r;
  r.l[0] = a.x;
  r.l[1] = a.y;
  r.l[2] = b.x;
  r.l[3] = b.y;
  return r;
#else
  return table[i];
#endif
}

template <class F>
PP_HD PP_INLINE F two_level_pow(const F* lo, const F* hi, int b, uint64_t e) {
  return load_entry(lo, e & ((uint64_t(1) << b) - 1)) * load_entry(hi, e >> b);
}

// x · lo[e mod 2^b] · hi[e >> b], out of line: the rare edge factors (scalings, twists past the
// direct table) are one call site each instead of a product inlined per register and per case
// (the pass kernel was 21,000 instructions, mostly such copies, and small transforms stalled on
// instruction fetch).
template <class F>
PP_HD PP_NOINLINE F times_two_level(F x, const F* lo, const F* hi, int b, uint64_t e) {
  return x * two_level_pow(lo, hi, b, e);
}
template <class F>
PP_HD PP_NOINLINE F times_constant(F x, F c) {
  return x * c;
}

// ---------------------------------------------------------------------------------------------
// Shared memory.

// A block's elements in shared memory as two 16-byte halves (limbs 0-1, limbs 2-3) in two arrays
// of `stride` words, element e at word swizzle(e) of each. The swizzle (the low 3 bits XOR bits
// 3-5) and the 4-word offset of the second array make every access pattern of the 8-element
// rounds conflict-free (8 threads reading 16 bytes each touch all 32 banks once; checked for
// every pass shape, docs/perf-history/gpu-kernels-v1-v9.md); the 4-element rounds' patterns have
// not been re-checked.
struct HalfSlots {
  uint64_t* s;
  uint32_t stride;  // 16-byte words per array: elements + 4
  PP_HD PP_INLINE static uint32_t swizzle(uint32_t e) { return e ^ ((e >> 3) & 7u); }
  PP_HD PP_INLINE uint64_t* word(uint32_t e, int half) const { return s + 2 * (half * stride + swizzle(e)); }
  template <class F = Fr>
  PP_HD PP_INLINE F get(uint32_t e) const {
    F r;
    get_half(e, 0, r.l[0], r.l[1]);
    get_half(e, 1, r.l[2], r.l[3]);
    return r;
  }
  template <class F>
  PP_HD PP_INLINE void set(uint32_t e, const F& v) const {
    set_half(e, 0, v.l[0], v.l[1]);
    set_half(e, 1, v.l[2], v.l[3]);
  }
  PP_HD PP_INLINE void get_half(uint32_t e, int half, uint64_t& a, uint64_t& b) const {
#if PP_DEVICE_CODE
    const ulonglong2 w = *reinterpret_cast<const ulonglong2*>(word(e, half));
    a = w.x;
    b = w.y;
#else
    const uint64_t* w = word(e, half);
    a = w[0];
    b = w[1];
#endif
  }
  PP_HD PP_INLINE void set_half(uint32_t e, int half, uint64_t a, uint64_t b) const {
#if PP_DEVICE_CODE
    *reinterpret_cast<ulonglong2*>(word(e, half)) = make_ulonglong2(a, b);
#else
    uint64_t* w = word(e, half);
    w[0] = a;
    w[1] = b;
#endif
  }
};
// Bytes of shared memory the HalfSlots of `elements` elements take, and those of a pass's block.
PP_HD constexpr std::size_t slots_bytes(uint32_t elements) { return std::size_t(elements + 4) * 2 * 16; }
PP_HD inline std::size_t pass_shared_bytes(const NttPass& p) { return slots_bytes(p.elements_per_block()); }

// ---------------------------------------------------------------------------------------------
// Element-wise factors.

// x times the factor of Scale `kind` (not none) for natural index idx: one product of two table
// entries at most (the 1/n is in the sized hi tables). For the canonical kinds the factor is its
// integer f itself (not f·R), so that x·R times it (a Montgomery product) is the integer of x·f.
template <class F>
PP_HD PP_INLINE F times_scale(F x, const NttTablesOf<F>& t, Scale kind, uint64_t idx) {
  const F* lo = t.shift_lo;
  const F* hi = nullptr;
  switch (kind) {
    case Scale::shift: hi = t.shift_hi; break;
    case Scale::shift_size_inv: hi = t.shift_hi_sized; break;
    case Scale::shift_inv: lo = t.shift_inv_lo; hi = t.shift_inv_hi; break;
    case Scale::shift_inv_canonical: lo = t.shift_inv_lo; hi = t.shift_inv_hi_plain; break;  // lo[.]·R ⊗ hi_plain[.]
    default: break;
  }
  if (hi != nullptr) return times_two_level(x, lo, hi, t.b, idx);
  return times_constant(x, kind == Scale::size_inv_canonical ? t.size_inv_plain : t.size_inv);
}

// x times the twist root of position pos in column c of pass p: one entry of the direct table
// (inline: every element of a twisted pass takes one), or two of the two-level tables.
template <class F>
PP_HD PP_INLINE F times_twist(F x, const NttPass& p, const NttTablesOf<F>& t, bool inverse, uint32_t c, uint32_t pos) {
  const uint32_t cf = c * bit_reverse(pos, p.k);  // < 2^(m + k) <= 2^28
  if (p.m + p.k <= t.mid_lg) {
    const uint32_t e = cf << (t.mid_lg - p.m - p.k);
    return x * load_entry(t.mid, inverse ? (0u - e) & ((1u << t.mid_lg) - 1) : e);
  }
  return times_two_level(x, inverse ? t.inv_lo : t.fwd_lo, inverse ? t.inv_hi : t.fwd_hi, t.b,
                         uint64_t(cf) << (p.lg - p.m - p.k));
}

// The element-wise work on register q of the first round (loads: pre-scale, DIT twist) or the
// last round (stores: DIF twist, post-scale).
template <bool kDif, class F>
PP_HD PP_INLINE void edge_factors(F& x, const NttPass& p, const NttTablesOf<F>& t, const PassJob& job, uint64_t block,
                                  uint32_t pos, uint32_t col, bool loading) {
  const Scale scale = loading ? job.pre : job.post;
  if (scale != Scale::none) {
    const uint64_t g = p.global_index(block, pos, col);
    const bool bit_reversed = loading != kDif;  // DIF reads natural order and writes bit-reversed
    x = times_scale(x, t, scale, bit_reversed ? bit_reverse(uint32_t(g), p.lg) : g);
  }
  if (p.m != 0 && loading != kDif) x = times_twist(x, p, t, job.inverse, p.column(block, col), pos);
}

// ---------------------------------------------------------------------------------------------
// The round: one thread's 2^kTL registers (kTL = the pass's thread_lg) through the round's levels.

// Round r of pass p for thread tid of block `block`: read the thread's elements from shared
// memory, apply the first round's load factors, run the levels, apply the last round's store
// factors, write them back to the same slots. Threads of a round touch disjoint slots, so a round
// needs one barrier after it and none inside.
template <bool kDif, int kTL, class F>
PP_HD PP_INLINE void pass_round(const NttPass& p, const NttTablesOf<F>& t, const PassJob& job, const HalfSlots& s,
                                uint64_t block, uint32_t tid, int r) {
  constexpr int kElements = 1 << kTL;
  const NttRound rd = round_of(p, kDif, r, kTL);
  const RoundMap map = round_map(p, rd, tid, kTL);
  const F* small = job.inverse ? t.small_inv : t.small_fwd;
  F x[kElements];
  PP_UNROLL for (int q = 0; q < kElements; ++q) {
    x[q] = F::zero();
    if (!map.valid(q)) continue;
    x[q] = s.template get<F>(map.element(q, p.cols_lg));
    if (r == 0) edge_factors<kDif>(x[q], p, t, job, block, map.pos(q), map.col(q), true);
  }
  // Level j = lo + d: butterflies (q, q + 2^d) for q with bit d clear; root w_(2^(j+1))^u with
  // u the position's bits below j. With lo == 0, u depends on q only: the same for every thread,
  // and u == 0 needs no product.
  PP_UNROLL for (int i = 0; i < kTL; ++i) {
    const int d = kDif ? kTL - 1 - i : i;
    const int j = rd.lo + d;
    if (d >= rd.bits || j < rd.level_lo || j >= rd.level_hi) continue;
    PP_UNROLL for (int q = 0; q < kElements; ++q) {
      if (q & (1 << d)) continue;
      const int q1 = q | (1 << d);
      const bool trivial = rd.lo == 0 && (q & ((1 << d) - 1)) == 0;
      if (kDif) {
        const F diff = x[q] - x[q1];
        x[q] += x[q1];
        x[q1] = diff;
        if (!trivial) x[q1] *= load_entry(small, map.root_exponent(q, d) << (t.small_lg - 1 - j));
      } else {
        F y = x[q1];
        if (!trivial) y *= load_entry(small, map.root_exponent(q, d) << (t.small_lg - 1 - j));
        x[q1] = x[q] - y;
        x[q] += y;
      }
    }
  }
  const bool last = r == p.rounds() - 1;
  PP_UNROLL for (int q = 0; q < kElements; ++q) {
    if (!map.valid(q)) continue;
    if (last) edge_factors<kDif>(x[q], p, t, job, block, map.pos(q), map.col(q), false);
    s.set(map.element(q, p.cols_lg), x[q]);
  }
}

// c from a and b: for a satisfying witness c = a∘b on every constraint row (check_witness
// verifies it) and on the zero padding, so c is made on the device and never crosses PCIe.
template <class F>
PP_HD PP_INLINE void c_step_element(F* c, const F* a, const F* b, uint64_t i) { c[i] = a[i] * b[i]; }

// The prover's H step on the coset: a[i] = (a[i]·b[i] - c[i])·factor (factor = 1/Z(coset) for
// bellman's convention, 1 for snarkjs's).
template <class F>
PP_HD PP_INLINE void h_step_element(F* a, const F* b, const F* c, uint64_t i, const F& factor) {
  a[i] = (a[i] * b[i] - c[i]) * factor;
}

}  // namespace pp::gpu
