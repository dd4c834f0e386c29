// Step 3a of the GPU MSM (msm_kernels.hpp), when MsmShape::rounds > 0: affine rounds that halve
// every bucket's run of sorted points before the XYZZ segment sums take over.
//
// After the sort, run r holds the L_r entries of one bucket. A round adds the run's points in
// pairs (entries 2q and 2q+1 of the run give output q; an odd run's last point is passed on), so
// run r leaves ceil(L_r / 2) points, still in key order, at the round's output offsets. Every
// addition of a round is independent of the others, so they are done in affine coordinates
// with one inversion for many (Montgomery's trick): a thread forms the denominators of its
// kAffineBatch slots and their running products, the product is inverted (on the device one
// Fermat inversion per warp: the lanes' products are joined by shuffles), and a backward walk
// turns it into each slot's inverse. An affine addition then costs 6 multiplications
// (1 running product, 2 to take out its inverse, slope, slope², y) against 10 for a mixed
// XYZZ addition; the inversion adds about 600 multiplications per warp, spread over 32·16.
// After R rounds the runs are about 2^R times shorter and the segment sums (step 3) add the rest
// in XYZZ, reading the rounds' points directly (DensePoints) — so a bucket of any size, a long
// run included, still ends with the usual segments and chains.
//
// Offsets: off[r] is where run r starts (exclusive scan of the lengths; off[runs] = the total),
// over a bound `runs` of runs (runs past the pass's count, and the null key's run, have length 0).
#pragma once

#include <cstdint>

#include "proofpipe/core/hd.hpp"
#include "proofpipe/ec/curve.hpp"
#include "proofpipe/gpu/msm_kernels.hpp"

namespace pp::gpu {

inline constexpr uint32_t kAffineBatch = 16;  // output slots per thread and round
inline constexpr int kMaxAffineRounds = 8;

// Entries left after `rounds` rounds of a pass of m entries in at most `runs` runs: each run of
// L leaves ceil(L / 2^rounds) <= L / 2^rounds + 1.
PP_HD inline uint64_t affine_entries_bound(uint64_t m, uint64_t runs, int rounds) {
  const uint64_t b = (m >> rounds) + runs;
  return b < m ? b : m;
}

// Where the sorted entries come from: round 1 reads the pass's (key-sorted) values, later rounds
// and the segment sums after them the previous round's points.
template <class C>
struct IndexedPoints {
  const Affine<C>* points;
  const uint32_t* values;
  PP_HD PP_INLINE Affine<C> operator()(uint64_t j) const { return signed_point(points, values[j]); }
};
template <class C>
struct DensePoints {
  const Affine<C>* points;
  PP_HD PP_INLINE Affine<C> operator()(uint64_t j) const { return points[j]; }
};

// What slot pair (P, Q) needs: `pair` false when P is its run's odd last point.
enum AffinePairKind : int { kPairCopyP = 0, kPairCopyQ = 1, kPairInfinity = 2, kPairAdd = 3, kPairDouble = 4 };

// The kind of P + Q and, for an addition or a doubling, the slope's denominator d (never zero).
template <class C>
PP_HD PP_INLINE int affine_pair_kind(const Affine<C>& P, const Affine<C>& Q, bool pair, typename C::Field& d) {
  if (!pair || Q.is_infinity()) return kPairCopyP;
  if (P.is_infinity()) return kPairCopyQ;
  if (!(P.x == Q.x)) {
    sub_into(d, Q.x, P.x);
    return kPairAdd;
  }
  if (P.y == Q.y && !P.y.is_zero()) {
    add_into(d, P.y, P.y);
    return kPairDouble;
  }
  return kPairInfinity;  // Q = -P
}

// P + Q of that kind, `inv` = 1/d.
template <class C>
PP_HD PP_INLINE Affine<C> affine_pair_sum(const Affine<C>& P, const Affine<C>& Q, int kind,
                                          const typename C::Field& inv) {
  using F = typename C::Field;
  switch (kind) {
    case kPairCopyP: return P;
    case kPairCopyQ: return Q;
    case kPairInfinity: return Affine<C>::infinity();
    default: break;
  }
  F lambda, t;
  if (kind == kPairAdd) {
    sub_into(t, Q.y, P.y);
  } else {  // 3x² / 2y
    sqr_into(t, P.x);
    add_into(lambda, t, t);
    add_into(t, lambda, t);
  }
  mul_into(lambda, t, inv);
  Affine<C> r;
  sqr_into(t, lambda);
  sub_into(t, t, P.x);
  sub_into(r.x, t, kind == kPairAdd ? Q.x : P.x);  // λ² - x_P - x_Q (x_Q = x_P when doubling)
  sub_into(t, P.x, r.x);
  mul_into(t, lambda, t);
  sub_into(r.y, t, P.y);
  return r;
}

// The largest r with off[r] <= o (off has runs + 1 non-decreasing entries, o < off[runs]): the
// non-empty run holding output slot o.
PP_HD inline uint32_t run_of(const uint32_t* off, uint32_t runs, uint64_t o) {
  uint32_t lo = 0, hi = runs;  // off[lo] <= o < off[hi]
  while (hi - lo > 1) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (off[mid] <= o) lo = mid;
    else hi = mid;
  }
  return lo;
}

// One thread's part of a round: output slots [g·kAffineBatch, ...) below off_out[runs]. Run r's
// entries are at off_in[r] .. off_in[r+1] (read with `fetch`) and its outputs at off_out[r]
// (written to out, and with their keys to out_keys when it is not null). `pre` holds
// kAffineBatch field elements of scratch. `invert(x)` returns 1/x; it is called exactly once by
// every thread, with 1 when the thread has nothing to add (the device's shares its inversion
// among a warp).
template <class C, class Fetch, class Invert>
PP_HD void affine_round(uint64_t g, const uint32_t* off_in, const uint32_t* off_out, uint32_t runs,
                        const uint32_t* run_keys, Fetch fetch, Affine<C>* out, uint32_t* out_keys,
                        typename C::Field* pre, Invert invert) {
  using F = typename C::Field;
  const uint64_t total = off_out[runs];
  const uint64_t o0 = g * kAffineBatch;
  const uint64_t o1 = o0 + kAffineBatch < total ? o0 + kAffineBatch : total;
  F acc = F::one(), d = F::one();
  uint32_t r = o0 < total ? run_of(off_out, runs, o0) : 0;
  for (uint64_t o = o0; o < o1; ++o) {
    while (off_out[r + 1] <= o) ++r;
    const uint64_t i = off_in[r] + 2 * (o - off_out[r]);
    const bool pair = i + 1 < off_in[r + 1];
    const Affine<C> P = fetch(i), Q = pair ? fetch(i + 1) : Affine<C>::infinity();
    const int kind = affine_pair_kind(P, Q, pair, d);
    pre[o - o0] = acc;
    if (kind >= kPairAdd) mul_into(acc, acc, d);
  }
  F inv = invert(acc);
  for (uint64_t o = o1; o-- > o0;) {
    while (off_out[r] > o) --r;
    const uint64_t i = off_in[r] + 2 * (o - off_out[r]);
    const bool pair = i + 1 < off_in[r + 1];
    const Affine<C> P = fetch(i), Q = pair ? fetch(i + 1) : Affine<C>::infinity();
    const int kind = affine_pair_kind(P, Q, pair, d);
    F slot_inv = F::one();
    if (kind >= kPairAdd) {
      mul_into(slot_inv, inv, pre[o - o0]);
      mul_into(inv, inv, d);
    }
    out[o] = affine_pair_sum(P, Q, kind, slot_inv);
    if (out_keys != nullptr) out_keys[o] = run_keys[r];
  }
}

// Run lengths into round 1's: the null key's run (digit 0) and runs past the pass's count
// (`count`, on the device) are empty. counts[runs] = 0 ends the scan's input.
PP_HD inline void affine_first_lengths(uint32_t r, uint32_t runs, const uint32_t* count, const uint32_t* run_keys,
                                       uint32_t null_key, uint32_t* counts) {
  if (r > runs) return;
  if (r == runs || r >= *count || run_keys[r] == null_key) counts[r] = 0;
}
// The next round's lengths: ceil(L / 2) from the offsets of lengths L.
PP_HD inline void affine_halves(uint32_t r, uint32_t runs, const uint32_t* off, uint32_t* lengths) {
  if (r > runs) return;
  lengths[r] = r == runs ? 0 : (off[r + 1] - off[r] + 1) / 2;
}

}  // namespace pp::gpu
