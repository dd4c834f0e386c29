// SPDX-License-Identifier: Apache-2.0 OR MIT
// The GPU MSM and batch addition, written once for both sides; private to src/gpu (and the
// CPU twins' tests). The sizes the planner and the shapes need are in proofpipe/gpu/msm_sizing.hpp.
// (the CUDA kernels in
// src/gpu/msm_impl.cuh and the CPU twin in src/gpu/msm_common.cpp run these bodies).
//
// Pippenger with signed c-bit digits. A "set" is one window (plain MSM) or, with a fixed-base
// table of K copies (copy k = 2^(k·c)·P), K windows whose K·n entries share one set of buckets.
// Sets are run a "pass" of B of them at a time (MsmShape::batch: all sets of a small MSM, one of a
// large one), so the workspace is O(max(n, 2^24)), not O(n · windows), and a small MSM still
// sorts enough entries per pass for long segments:
//   1. digits:  entry j·n + i of a pass (window j of the pass, copy k of its set b) gets key =
//               b·2^(c-1) + |d|-1 (its set's bucket) or the null key B·2^(c-1) when d = 0, and
//               value = its point's index k·n + i | sign << 31;
//   2. sort:    (key, value) pairs by key (CUB radix sort over c bits) — each bucket's points
//               become one contiguous run;
//   3. segments: the sorted entries are cut into segments (segment_length); a segment sums each of
//               its runs with mixed XYZZ additions. A run inside one segment is a whole bucket
//               and is stored directly; a run crossing into the next segment leaves its start as
//               tail[s], a run coming from the previous segment its part as head[s] — so every
//               thread does the same work whatever the bucket sizes;
//   4. chains:  each tail adds the heads of the following segments of its bucket (a block-wide
//               tree when the chain is long, so one huge bucket costs no serial walk);
//   5. reduce:  after the last set, all sets at once: sum_j (j+1)·B_j in chunks of
//               buckets (each chunk's suffix sums in place, then their sum), the chunks' totals
//               weighted by a second, small level of the same, and trees per set — wide
//               kernels, few serial steps;
//   6. combine: the sums are combined by Horner on the host (c·K doublings per set).
// Batch addition (the scalar-1 half of the split MSM) sums the set bits of each bitmap word in
// one thread, then the words' sums by the same tree.
#pragma once

#include <cstddef>
#include <cstdint>

#include "proofpipe/core/hd.hpp"
#include "proofpipe/ec/curve.hpp"
#include "proofpipe/gpu/msm_sizing.hpp"
#include "proofpipe/msm/digits.hpp"

namespace pp::gpu {

inline constexpr uint32_t kSignBit = 0x80000000u;

// Step 1 for scalar i (Montgomery form) and the `windows` windows w0 .. w0+windows-1 of one
// pass, whose sets (of `copies` windows each) start at window w0: window j of the pass is copy
// k = j mod copies of the pass's set b = j / copies; its entry e = j·n + i gets key
// b·2^(c-1) + |d|-1 or null_key when d = 0, and value = (k·n + i) | sign << 31 (the point's
// index in the fixed-base table). A Montgomery scalar leaves that form once per pass (`canonical`:
// its limbs are the integer already), and the carries of windows 0 .. w0-1 are recomputed
// (integer work).
template <class S>
PP_HD PP_INLINE void digit_entries(const S& scalar, bool canonical, uint32_t i, uint64_t n, int c, int w0,
                                   int windows, int copies, uint32_t null_key, uint32_t* keys, uint32_t* values) {
  uint64_t k[4];
  if (canonical) {
    for (int t = 0; t < 4; ++t) k[t] = scalar.l[t];
  } else {
    scalar.to_canonical(k);
  }
  const uint32_t half = uint32_t(1) << (c - 1);
  uint32_t carry = 0;
  for (int v = 0; v < w0; ++v) carry = msm_digits::window_bits_at(k, v * c, c) + carry > half ? 1u : 0u;
  for (int j = 0; j < windows; ++j) {
    // As msm_digits::signed_digit: d > half stands for d - 2^c with a carry out (d = 2^c: 0).
    const uint32_t d = msm_digits::window_bits_at(k, (w0 + j) * c, c) + carry;
    const bool negative = d > half;
    carry = negative ? 1u : 0u;
    const uint32_t magnitude = negative ? (uint32_t(1) << c) - d : d;
    const uint32_t set = uint32_t(j / copies), copy = uint32_t(j % copies);
    const uint64_t e = uint64_t(j) * n + i;
    keys[e] = magnitude == 0 ? null_key : set * half + magnitude - 1;
    values[e] = uint32_t(uint64_t(copy) * n + i) | (negative && magnitude != 0 ? kSignBit : 0u);
  }
}

// Fixed-base tables (precompute_bases): points [b, b + kShiftBatch) of copy k from copy k-1
// (`prev`, n points): c doublings each in XYZZ, then to affine with one inversion for the batch
// (Montgomery's trick over the ZZZs; 1/ZZ = (ZZ/ZZZ)^2).
inline constexpr uint32_t kShiftBatch = 16;
template <class C>
PP_HD void shift_batch(const Affine<C>* prev, Affine<C>* out, uint64_t n, uint64_t b, int c) {
  using F = typename C::Field;
  if (b >= n) return;
  const uint32_t m = n - b < kShiftBatch ? uint32_t(n - b) : kShiftBatch;
  XYZZ<C> q[kShiftBatch];
  F before[kShiftBatch];
  F acc = F::one();
  for (uint32_t j = 0; j < m; ++j) {
    XYZZ<C> p = XYZZ<C>::from_affine(prev[b + j]);
    for (int t = 0; t < c; ++t) p = p.dbl();
    q[j] = p;
    before[j] = acc;
    if (!p.is_infinity()) acc = acc * p.ZZZ;
  }
  F inv = acc.inverse();
  for (uint32_t j = m; j-- > 0;) {
    if (q[j].is_infinity()) {
      out[b + j] = Affine<C>::infinity();
      continue;
    }
    const F zzzi = inv * before[j];
    inv = inv * q[j].ZZZ;
    const F zi = zzzi * q[j].ZZ;
    out[b + j] = Affine<C>{q[j].X * zi.sqr(), q[j].Y * zzzi};
  }
}

template <class C>
PP_HD PP_INLINE Affine<C> signed_point(const Affine<C>* points, uint32_t value) {
  const Affine<C> p = points[value & ~kSignBit];
  return (value & kSignBit) ? -p : p;
}

// Where an accumulation thread keeps its accumulator's ZZ and ZZZ (`load(k)` / `store(k, v)`, k = 0
// for ZZ, 1 for ZZZ): X and Y stay in registers, ZZ and ZZZ are touched twice per addition. The
// CPU twin keeps them in locals (RegisterSides); the kernels keep them in shared memory (msm_impl.cuh),
// which leaves two field elements of registers per thread to the product code: a G2 thread
// needs more than the 255 registers it may have, and spilled to local memory on every addition.
template <class F>
struct RegisterSides {
  F v[2];
  PP_HD PP_INLINE F load(int k) const { return v[k]; }
  PP_HD PP_INLINE void store(int k, const F& x) { v[k] = x; }
};

// acc += q (madd-2008-s) with acc = (X, Y, sides' ZZ and ZZZ), `empty` when acc is infinity. In
// place, in an order that keeps few values live: the peak is five field elements beside X, Y.
template <class C, class Sides>
PP_HD PP_INLINE void accumulate_mixed(typename C::Field& X, typename C::Field& Y, bool& empty, Sides& sides,
                                      const Affine<C>& q) {
  using F = typename C::Field;
  if (q.is_infinity()) return;
  if (empty) {
    X = q.x;
    Y = q.y;
    sides.store(0, F::one());
    sides.store(1, F::one());
    empty = false;
    return;
  }
  F P, R;
  mul_into(P, q.x, sides.load(0));
  sub_into(P, P, X);
  mul_into(R, q.y, sides.load(1));
  sub_into(R, R, Y);
  if (P.is_zero()) {  // q = ±acc: double, or the sum is infinity
    const XYZZ<C> d = R.is_zero() ? XYZZ<C>::dbl_affine(q) : XYZZ<C>::infinity();
    X = d.X;
    Y = d.Y;
    sides.store(0, d.ZZ);
    sides.store(1, d.ZZZ);
    empty = d.is_infinity();
    return;
  }
  F PP, PPP, t;
  sqr_into(PP, P);
  mul_into(t, sides.load(0), PP);
  sides.store(0, t);  // ZZ3 = ZZ·PP
  mul_into(PPP, P, PP);
  mul_into(t, sides.load(1), PPP);
  sides.store(1, t);  // ZZZ3 = ZZZ·PPP
  mul_into(P, X, PP);  // Q = X·PP
  sqr_into(PP, R);
  sub_into(PP, PP, PPP);
  sub_into(PP, PP, P);
  sub_into(X, PP, P);  // X3 = R² - PPP - 2Q
  sub_into(P, P, X);
  mul_sub_into(Y, R, P, Y, PPP);  // Y3 = R·(Q - X3) - Y·PPP
}

// Step 3 for segment s of the n sorted entries. buckets[] must start as infinity (all zero
// bytes decode as infinity: ZZ = 0). head[s] / tail[s] are written only when they exist.
template <class C, class Sides>
PP_HD void segment_sums(uint64_t s, uint32_t seg, const uint32_t* keys, const uint32_t* values, uint64_t n,
                        const Affine<C>* points, uint32_t null_key, XYZZ<C>* buckets, XYZZ<C>* head, XYZZ<C>* tail,
                        Sides& sides) {
  using F = typename C::Field;
  const uint64_t b0 = s * seg;
  if (b0 >= n) return;
  const uint64_t e0 = b0 + seg < n ? b0 + seg : n;
  F X = F::one(), Y = F::one();
  bool empty = true;
  // Where the run [i, j) of `key` goes: its part of a bucket that started in the previous
  // segment (head), its start of a bucket that goes on into the next one (tail), or the whole
  // bucket. The null key's run (digit 0) is summed and dropped.
  auto flush = [&](uint64_t i, uint64_t j, uint32_t key) {
    if (key == null_key) return;
    const bool from_previous = i == b0 && b0 > 0 && keys[b0 - 1] == key;
    const bool into_next = j == e0 && e0 < n && keys[e0] == key;
    const XYZZ<C> acc = empty ? XYZZ<C>::infinity() : XYZZ<C>{X, Y, sides.load(0), sides.load(1)};
    if (from_previous) head[s] = acc;
    else if (into_next) tail[s] = acc;
    else buckets[key] = acc;
  };
  // One flat loop, one addition per entry: the threads of a warp stay in step on the additions
  // whatever the lengths of their runs (a loop per run would make every run cost the warp its
  // longest one). A run ends with a store, the only divergent step. The point is loaded where it
  // is used: loading the next one a step ahead (software pipelining) takes more registers and
  // makes the kernels spill (docs/perf-history/gpu-kernels-v1-v9.md).
  uint64_t start = b0;
  uint32_t key = keys[b0];
  for (uint64_t j = b0; j < e0; ++j) {
    const uint32_t kj = keys[j];
    if (kj != key) {
      flush(start, j, key);
      empty = true;
      key = kj;
      start = j;
    }
    accumulate_mixed(X, Y, empty, sides, signed_point(points, values[j]));
  }
  flush(start, e0, key);
}

// Field k (0 X, 1 Y, 2 ZZ, 3 ZZZ) of the point at q, read where a formula uses it. On the device
// the read is an asm load that the compiler keeps in place: with q whole in registers beside the
// accumulator, a G2 thread needs more than its 255 registers and spills (q must be 16-byte
// aligned there: the workspace pieces are, and an XYZZ is whole 16-byte words).
template <class C>
PP_HD PP_INLINE typename C::Field xyzz_field(const XYZZ<C>* q, int k) {
#if PP_DEVICE_CODE
  using F = typename C::Field;
  static_assert(sizeof(F) % 16 == 0, "a field element is whole 16-byte words");
  F v;
  uint32_t* w = reinterpret_cast<uint32_t*>(&v);
  const char* src = reinterpret_cast<const char*>(q) + std::size_t(k) * sizeof(F);
#pragma unroll
  for (int i = 0; i < int(sizeof(F) / 16); ++i)
    asm volatile("ld.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(w[4 * i]), "=r"(w[4 * i + 1]), "=r"(w[4 * i + 2]), "=r"(w[4 * i + 3])
                 : "l"(src + 16 * i)
                 : "memory");
  return v;
#else
  return k == 0 ? q->X : k == 1 ? q->Y : k == 2 ? q->ZZ : q->ZZZ;
#endif
}

// a += *q (add-2008-s, the formula of XYZZ::operator+, same result), q's fields read as used and
// a updated in place.
template <class C>
PP_HD PP_INLINE void add_from(XYZZ<C>& a, const XYZZ<C>* q) {
  using F = typename C::Field;
  F U1, S1, P, R;
  {
    const F qzz = xyzz_field(q, 2);
    if (qzz.is_zero()) return;  // q is infinity
    if (a.is_infinity()) {
      a = XYZZ<C>{xyzz_field(q, 0), xyzz_field(q, 1), qzz, xyzz_field(q, 3)};
      return;
    }
    mul_into(U1, a.X, qzz);
  }
  mul_into(P, xyzz_field(q, 0), a.ZZ);
  sub_into(P, P, U1);  // U2 - U1
  mul_into(S1, a.Y, xyzz_field(q, 3));
  mul_into(R, xyzz_field(q, 1), a.ZZZ);
  sub_into(R, R, S1);  // S2 - S1
  if (P.is_zero()) {
    a = R.is_zero() ? a.dbl() : XYZZ<C>::infinity();
    return;
  }
  F PP, PPP;
  sqr_into(PP, P);
  mul_into(PPP, P, PP);
  mul_into(a.ZZ, a.ZZ, xyzz_field(q, 2));
  mul_into(a.ZZ, a.ZZ, PP);  // ZZ3 = ZZ1·ZZ2·PP
  mul_into(a.ZZZ, a.ZZZ, xyzz_field(q, 3));
  mul_into(a.ZZZ, a.ZZZ, PPP);  // ZZZ3 = ZZZ1·ZZZ2·PPP
  mul_into(P, U1, PP);  // Q = U1·PP
  sqr_into(PP, R);
  sub_into(PP, PP, PPP);
  sub_into(PP, PP, P);
  sub_into(a.X, PP, P);  // X3 = R² - PPP - 2Q
  sub_into(P, P, a.X);
  mul_sub_into(a.Y, R, P, S1, PPP);  // Y3 = R·(Q - X3) - S1·PPP
}

// Step 4 for segment s: when its last run continues into the next segment and started here
// (a "chain" from segment s to the segment s1 holding the run's end), the bucket is
// tail[s] + head[s+1] + ... + head[s1]. Chains of at most kMaxChain heads are summed here and
// stored (returns kChainDone); longer ones (a bucket with more than ~kMaxChain segments of points,
// e.g. every scalar alike) return kChainLong with *last = s1, for a parallel tree.
enum ChainResult : int { kChainNone = 0, kChainDone = 1, kChainLong = 2 };

template <class C>
PP_HD int chain_sums(uint64_t s, uint32_t seg, const uint32_t* keys, uint64_t n, uint32_t null_key, XYZZ<C>* buckets,
                     const XYZZ<C>* head, const XYZZ<C>* tail, uint64_t* last) {
  const uint64_t b0 = s * seg;
  if (b0 >= n) return kChainNone;
  const uint64_t e0 = b0 + seg < n ? b0 + seg : n;
  const uint32_t key = keys[e0 - 1];
  if (key == null_key || e0 >= n || keys[e0] != key) return kChainNone;
  if (keys[b0] == key && b0 > 0 && keys[b0 - 1] == key) return kChainNone;  // the run started earlier: a head
  // The run's end: the first index in [e0, n) with a larger key (binary search).
  uint64_t lo = e0, hi = n;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (keys[mid] == key) lo = mid + 1;
    else hi = mid;
  }
  const uint64_t s1 = (lo - 1) / seg;
  if (s1 - s > kMaxChain) {
    *last = s1;
    return kChainLong;
  }
  XYZZ<C> acc = tail[s];
  for (uint64_t t = s + 1; t <= s1; ++t) add_from(acc, head + t);
  buckets[key] = acc;
  return kChainDone;
}

// Step 5, for chunk t (of `chunk` buckets) of one set's 2^(c-1) buckets B_j, whose sum is
// sum_j (j+1)·B_j. With l = t·chunk and T_t the chunk's total, that is
//   sum_t S_t + chunk · sum_t t·T_t,   S_t = sum_{j in chunk t} (j - l + 1)·B_j,
// so no chunk multiplies by its own offset (log2 l doublings each, more than its additions when
// chunks are short). Level 1, one accumulator per pass (two in one thread spilled on G2):
// (a) bucket_chunk_scan turns the chunk into its suffix sums B'_j = sum_{i >= j} B_i in place
// (B'_l = T_t); (b) bucket_chunk_local gives S_t = sum_j B'_j. Level 2: sum_t t·T_t is the same
// weighted sum over the array T_1, T_2, ... (weights 1, 2, ...), now few enough that its chunks'
// offsets cost little: scan again, then bucket_chunk_total adds l·B'_l per chunk. Then
// set sum = sum_t S_t + chunk · level 2 (bucket_set_sum).
template <class C>
PP_HD void bucket_chunk_scan(XYZZ<C>* buckets, uint32_t num_buckets, uint32_t chunk, uint32_t t) {
  const uint32_t l = t * chunk;
  const uint32_t h = l + chunk < num_buckets ? l + chunk : num_buckets;
  XYZZ<C> running = XYZZ<C>::infinity();
  for (uint32_t j = h; j-- > l;) {
    add_from(running, buckets + j);
    buckets[j] = running;
  }
}
template <class C>
PP_HD XYZZ<C> bucket_chunk_local(const XYZZ<C>* scanned, uint32_t num_buckets, uint32_t chunk, uint32_t t) {
  const uint32_t l = t * chunk;
  const uint32_t h = l + chunk < num_buckets ? l + chunk : num_buckets;
  XYZZ<C> acc = XYZZ<C>::infinity();
  for (uint32_t j = l; j < h; ++j) add_from(acc, scanned + j);
  return acc;
}
// sum_{j in chunk t} (j+1)·B_j from the scanned chunk: its local sum plus l·B'_l.
template <class C>
PP_HD XYZZ<C> bucket_chunk_total(const XYZZ<C>* scanned, uint32_t num_buckets, uint32_t chunk, uint32_t t) {
  const uint32_t l = t * chunk;
  XYZZ<C> acc = bucket_chunk_local(scanned, num_buckets, chunk, t);
  if (l == 0 || l >= num_buckets) return acc;
  // l·B'_l, B'_l read from memory at each addition.
  return acc + msm_digits::mul_small_with(scanned[l], l, [&](XYZZ<C>& r) { add_from(r, scanned + l); });
}
template <class C>
PP_HD XYZZ<C> bucket_set_sum(const XYZZ<C>& local_sums, const XYZZ<C>& weighted_totals, uint32_t chunk) {
  return local_sums + msm_digits::mul_small(weighted_totals, chunk);
}

// Batch addition: the set bits of bitmap word t (points 64t .. 64t+63). A thread walks only
// the set bits (find-first-set), so sparse bitmaps leave no lanes idle inside a warp.
template <class C>
PP_HD XYZZ<C> batch_word_sum(const Affine<C>* points, const uint64_t* bitmap, uint64_t n, uint64_t t) {
  uint64_t word = bitmap[t];
  const uint64_t base = t * 64;
  if (n - base < 64) word &= (uint64_t(1) << (n - base)) - 1;  // bits past the last point are ignored
  XYZZ<C> acc = XYZZ<C>::infinity();
  while (word != 0) {
#if PP_DEVICE_CODE
    const int b = __ffsll(static_cast<long long>(word)) - 1;
#else
    const int b = __builtin_ctzll(word);
#endif
    acc = acc.add_mixed(points[base + uint64_t(b)]);
    word &= word - 1;
  }
  return acc;
}

// Step 6: sum_w 2^(shift·w)·W_w, most significant sum first (shift = c, or c·copies for a
// fixed-base table's sets). A chain of shift·sums doublings: microseconds on the host,
// milliseconds in one GPU thread, so the caller runs it on the host.
template <class C>
PP_HD Jacobian<C> combine_windows(const XYZZ<C>* window_sums, int windows, int shift) {
  XYZZ<C> acc = XYZZ<C>::infinity();
  for (int w = windows - 1; w >= 0; --w) {
    for (int i = 0; i < shift; ++i) acc = acc.dbl();
    acc += window_sums[w];
  }
  return acc.to_jacobian();
}

}  // namespace pp::gpu
