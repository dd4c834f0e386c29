// SPDX-License-Identifier: Apache-2.0 OR MIT
// CPU multi-scalar multiplication (signed-digit Pippenger over XYZZ buckets) and bitmap batch addition,
// one source for BLS12-381's and BN254's G1 and G2 (instantiated at the end).
#include "proofpipe/msm/msm.hpp"

#include "proofpipe/msm/digits.hpp"
#include "proofpipe/msm/fp_inverse.hpp"
#include "proofpipe/msm/glv.hpp"
#include "proofpipe/msm/simd.hpp"

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <bit>
#include <cassert>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace pp {

namespace {

using msm_digits::mul_small;
constexpr int kMaxWindow = 20;

// The prime field under C's coordinates: Fp for G1, the Fp of Fp2 for G2. Montgomery's trick runs
// in it for both groups (see diff_key).
template <class F>
struct PrimeOf {
  using type = F;
};
template <class F>
  requires requires { typename F::Base; }
struct PrimeOf<F> {
  using type = typename F::Base;
};
template <class C>
using KeyField = typename PrimeOf<typename C::Field>::type;
template <class C>
constexpr bool kIsG2 = !std::is_same_v<typename C::Field, KeyField<C>>;
// The vector kernels (msm/simd.hpp): BLS12-381's and BN254's.
template <class C>
constexpr bool kHasSimd = std::is_same_v<C, G1Curve> || std::is_same_v<C, G2Curve> ||
                          std::is_same_v<C, bn254::G1Curve> || std::is_same_v<C, bn254::G2Curve>;

// The GLV split doubles the points (P_i, then φ(P_i) at n + i) and halves the scalars.
constexpr int kHalfBits = 128;  // glv::split_scalar's k1, k2 < 2^128 (either curve)
constexpr int glv_windows(int c) { return kHalfBits / c + 1; }  // as num_windows, for 128 bits

// Calls f(i, part, j) for every point of the parts' concatenation, i = the point's index in it
// and j its index in `part`, in parallel.
template <class C, class F>
void for_each_point(std::span<const MsmPart<C>> parts, std::size_t n, const F& f) {
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 1024), [&](const tbb::blocked_range<std::size_t>& r) {
    std::size_t p = 0, off = 0;
    while (off + parts[p].points.size() <= r.begin()) off += parts[p++].points.size();
    for (std::size_t i = r.begin(); i != r.end(); ++i) {
      while (i - off >= parts[p].points.size()) off += parts[p++].points.size();
      f(i, parts[p], i - off);
    }
  });
}

// Signed digits of every half scalar, window-major (digits[w*2n + j]) so that the bucket pass
// over one window streams through memory: column i holds k1 (for P_i), column n + i holds k2
// (for φ(P_i)), i counting through the parts' concatenation; a negative half (BN254's split)
// negates its column's digits. A point at infinity gets all-zero digits: it contributes nothing
// and would only cost a bucket visit.
template <class C>
std::vector<int32_t> signed_digits(std::span<const MsmPart<C>> parts, std::size_t n, int c, int nw) {
  const std::size_t m = 2 * n;
  std::vector<int32_t> digits(std::size_t(nw) * m);
  for_each_point(parts, n, [&](std::size_t i, const MsmPart<C>& part, std::size_t j) {
    if (part.points[j].is_infinity()) {
      for (int w = 0; w < nw; ++w) digits[std::size_t(w) * m + i] = digits[std::size_t(w) * m + n + i] = 0;
      return;
    }
    uint64_t k[4];
    part.scalars[j].to_canonical(k);
    const glv::Split s = glv::split_scalar<C>(k);
    msm_digits::signed_digits(s.k1, c, nw, digits.data() + i, m);
    msm_digits::signed_digits(s.k2, c, nw, digits.data() + n + i, m);
    if (s.neg1)
      for (int w = 0; w < nw; ++w) digits[std::size_t(w) * m + i] = -digits[std::size_t(w) * m + i];
    if (s.neg2)
      for (int w = 0; w < nw; ++w) digits[std::size_t(w) * m + n + i] = -digits[std::size_t(w) * m + n + i];
  });
  return digits;
}

// The 2n points the digits refer to, as runs of the index space [0, 2n): each part's points
// where they lie (index i of the concatenation), then φ(P_i) = (β·x, y) at n + i, the one array
// this MSM computes (one product per point). The parts are read in place, not copied: a 2^16 G1
// MSM copies 6 MB less, memory that a one-shot proof would otherwise fault in fresh.
template <class C>
struct PointRun {
  const Affine<C>* pts;  // pts[0] has index `first`
  std::size_t first, size;
};

template <class C>
std::vector<Affine<C>> endo_points(std::span<const MsmPart<C>> parts, std::size_t n) {
  std::vector<Affine<C>> out(n);
  for_each_point(parts, n,
                 [&](std::size_t i, const MsmPart<C>& part, std::size_t j) { out[i] = glv::endo(part.points[j]); });
  return out;
}

// Calls f(run, lo, hi) for each run's share [lo, hi) (indices relative to the run) of [begin, end).
template <class C, class F>
void for_each_run(std::span<const PointRun<C>> runs, std::size_t begin, std::size_t end, const F& f) {
  for (const PointRun<C>& r : runs) {
    const std::size_t lo = std::max(begin, r.first), hi = std::min(end, r.first + r.size);
    if (lo < hi) f(r, lo - r.first, hi - r.first);
  }
}

// The point at index i of the runs' index space (the runs cover it). i - first wraps around
// for a run that starts after i, so one unsigned compare tests both ends.
template <class C>
const Affine<C>& point_at(std::span<const PointRun<C>> runs, std::size_t i) {
  for (const PointRun<C>& r : runs)
    if (i - r.first < r.size) return r.pts[i - r.first];
  throw std::logic_error("msm: point index " + std::to_string(i) + " outside the runs");
}

// The products of the affine additions: Fp's inline (one kernel call each), Fp2's out of line
// (three calls and five additions each; inlined, the addition loop spills heavily).
template <class P>
PP_INLINE void fmul(Field<P>& r, const Field<P>& a, const Field<P>& b) { mul_into(r, a, b); }
template <class P>
PP_INLINE void fsqr(Field<P>& r, const Field<P>& a) { sqr_into(r, a); }
template <class F, int X>
__attribute__((noinline)) void fmul(Fp2Of<F, X>& r, const Fp2Of<F, X>& a, const Fp2Of<F, X>& b) { mul_into(r, a, b); }
template <class F, int X>
__attribute__((noinline)) void fsqr(Fp2Of<F, X>& r, const Fp2Of<F, X>& a) { sqr_into(r, a); }

// Montgomery's trick runs in Fp for both groups: an Fp2 denominator d enters through its norm
// N(d) = d0^2 + d1^2 (zero only for d = 0, since -1 is not a square in Fp) and comes back as
// 1/d = conj(d)/N(d). The batch's prefix products and their unwinding are then Fp products
// (3 per element, one dependent chain of Fp latency) instead of Fp2 ones (9 Fp products, a
// chain of Fp2 latency), for 4 more Fp products per element: 15 instead of 17 in all.
// key = the Fp value to invert for the denominator x1 - x0.
template <class P>
PP_INLINE void diff_key(Field<P>& key, const Field<P>& x1, const Field<P>& x0) { sub_into(key, x1, x0); }
template <class F, int X>
PP_INLINE void diff_key(F& key, const Fp2Of<F, X>& x1, const Fp2Of<F, X>& x0) {
  Fp2Of<F, X> d;
  sub_into(d, x1, x0);
  norm_into(key, d);
}
// lambda = dy / (x1 - x0) given ik = 1/key.
template <class P>
PP_INLINE void slope(Field<P>& l, const Field<P>& dy, const Field<P>&, const Field<P>&, const Field<P>& ik) {
  fmul(l, dy, ik);
}
template <class F, int X>
PP_INLINE void slope(Fp2Of<F, X>& l, const Fp2Of<F, X>& dy, const Fp2Of<F, X>& x1, const Fp2Of<F, X>& x0, const F& ik) {
  Fp2Of<F, X> inv;
  F d0, d1;
  sub_into(d0, x1.c0, x0.c0);
  sub_into(d1, x0.c1, x1.c1);  // conjugate: -(x1 - x0).c1
  mul_into(inv.c0, d0, ik);
  mul_into(inv.c1, d1, ik);
  fmul(l, dy, inv);
}

// sum_j j·B_j fed with the non-empty buckets in decreasing j, as the running sum sum_t S_t
// with S_t = sum_{j>=t} B_j. S_t only changes at non-empty buckets, so a run of g equal S_t is
// one g·S instead of g additions: sparse windows (small chunks, wide explicit windows) cost
// about as much as their non-empty buckets.
// r += q (madd-2008-s) and r += q (add-2008-s) as XYZZ::add_mixed and operator+ compute them,
// with the products written in place (fmul, fsqr: no by-value temporaries, see mul_into); the
// equal-x cases (doubling, cancellation) and infinities go to those operators.
template <class C>
void add_into(XYZZ<C>& r, const Affine<C>& q) {
  using F = typename C::Field;
  if (q.is_infinity() || r.is_infinity()) {
    r = r.add_mixed(q);
    return;
  }
  F u, s, p, rr, pp, ppp, t;
  fmul(u, q.x, r.ZZ);
  fmul(s, q.y, r.ZZZ);
  sub_into(p, u, r.X);
  sub_into(rr, s, r.Y);
  if (p.is_zero()) {
    r = r.add_mixed(q);
    return;
  }
  fsqr(pp, p);
  fmul(ppp, p, pp);
  fmul(u, r.X, pp);  // Q
  fsqr(t, rr);
  sub_into(t, t, ppp);
  sub_into(t, t, u);
  sub_into(t, t, u);  // X3 = R^2 - PPP - 2Q
  sub_into(u, u, t);
  fmul(u, rr, u);
  fmul(s, r.Y, ppp);
  sub_into(r.Y, u, s);  // Y3 = R(Q - X3) - Y1·PPP
  r.X = t;
  fmul(r.ZZ, r.ZZ, pp);
  fmul(r.ZZZ, r.ZZZ, ppp);
}

template <class C>
void add_into(XYZZ<C>& r, const XYZZ<C>& q) {
  using F = typename C::Field;
  if (q.is_infinity() || r.is_infinity()) {
    r = r + q;
    return;
  }
  F u1, u2, s1, s2, p, rr, pp, ppp, t;
  fmul(u1, r.X, q.ZZ);
  fmul(u2, q.X, r.ZZ);
  fmul(s1, r.Y, q.ZZZ);
  fmul(s2, q.Y, r.ZZZ);
  sub_into(p, u2, u1);
  sub_into(rr, s2, s1);
  if (p.is_zero()) {
    r = r + q;
    return;
  }
  fsqr(pp, p);
  fmul(ppp, p, pp);
  fmul(u1, u1, pp);  // Q
  fsqr(t, rr);
  sub_into(t, t, ppp);
  sub_into(t, t, u1);
  sub_into(t, t, u1);  // X3
  sub_into(u1, u1, t);
  fmul(u1, rr, u1);
  fmul(s1, s1, ppp);
  sub_into(r.Y, u1, s1);  // Y3 = R(Q - X3) - S1·PPP
  r.X = t;
  fmul(r.ZZ, r.ZZ, q.ZZ);
  fmul(r.ZZ, r.ZZ, pp);
  fmul(r.ZZZ, r.ZZZ, q.ZZZ);
  fmul(r.ZZZ, r.ZZZ, ppp);
}

template <class C>
class BucketReducer {
 public:
  void push(uint32_t j, const XYZZ<C>& bucket) {
    step(j);
    add_into(sum_, bucket);
  }
  // An affine bucket: the mixed addition is 4M cheaper than the XYZZ one.
  void push(uint32_t j, const Affine<C>& bucket) {
    step(j);
    add_into(sum_, bucket);
  }
  XYZZ<C> finish() {
    if (prev_) acc_ += mul_small(sum_, prev_);
    return acc_;
  }

 private:
  // acc += (prev - j)·sum: the buckets between j and the last one pushed were empty.
  void step(uint32_t j) {
    if (prev_ - j == 1) add_into(acc_, sum_);
    else if (prev_ != 0) acc_ += mul_small(sum_, prev_ - j);
    prev_ = j;
  }

  XYZZ<C> sum_ = XYZZ<C>::infinity(), acc_ = XYZZ<C>::infinity();
  uint32_t prev_ = 0;
};

// One window over points [begin, end) with a bucket array: 2^(c-1) buckets, then reduce.
template <class C>
XYZZ<C> window_sum_dense(std::span<const PointRun<C>> runs, const int32_t* window_dig, std::size_t begin,
                         std::size_t end, int c) {
  const std::size_t nb = std::size_t(1) << (c - 1);
  const std::unique_ptr<XYZZ<C>[]> buckets(new XYZZ<C>[nb]);
  std::fill_n(buckets.get(), nb, XYZZ<C>::infinity());
  uint32_t top = 0;
  constexpr std::size_t kAhead = 4;
  for_each_run(runs, begin, end, [&](const PointRun<C>& run, std::size_t lo, std::size_t hi) {
    const Affine<C>* pts = run.pts;
    const int32_t* dig = window_dig + run.first;
    for (std::size_t i = lo; i < hi; ++i) {
      // Wide windows spill the buckets out of L1/L2; fetching a later bucket now hides the
      // random access behind the current addition.
      if (i + kAhead < hi) {
        const int32_t da = dig[i + kAhead];
        if (da != 0) __builtin_prefetch(&buckets[std::size_t(da > 0 ? da : -da) - 1], 1);
      }
      const int32_t d = dig[i];
      if (d == 0) continue;
      if (d > 0) {
        XYZZ<C>& b = buckets[std::size_t(d) - 1];
        b = b.add_mixed(pts[i]);
        top = std::max(top, uint32_t(d));
      } else {
        XYZZ<C>& b = buckets[std::size_t(-d) - 1];
        b = b.add_mixed(-pts[i]);
        top = std::max(top, uint32_t(-d));
      }
    }
  });
  BucketReducer<C> red;
  for (uint32_t j = top; j >= 1; --j)
    if (!buckets[j - 1].is_infinity()) red.push(j, buckets[j - 1]);
  return red.finish();
}

// The same sum when the points are far fewer than the buckets: sorting the (digit, point)
// pairs groups each bucket's points without touching (or allocating) 2^(c-1) buckets.
template <class C>
XYZZ<C> window_sum_sparse(std::span<const PointRun<C>> runs, const int32_t* dig, std::size_t begin, std::size_t end) {
  std::vector<std::pair<uint32_t, uint32_t>> e;  // (|digit|, index)
  e.reserve(end - begin);
  for (std::size_t i = begin; i < end; ++i)
    if (dig[i] != 0) e.emplace_back(uint32_t(dig[i] > 0 ? dig[i] : -dig[i]), uint32_t(i));
  std::sort(e.begin(), e.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  BucketReducer<C> red;
  for (std::size_t s = 0; s < e.size();) {
    XYZZ<C> b = XYZZ<C>::infinity();
    std::size_t t = s;
    for (; t < e.size() && e[t].first == e[s].first; ++t) {
      const std::size_t i = e[t].second;
      const Affine<C>& p = point_at(runs, i);
      b = b.add_mixed(dig[i] > 0 ? p : -p);
    }
    if (!b.is_infinity()) red.push(e[s].first, b);
    s = t;
  }
  return red.finish();
}

// The same sum with affine bucket additions. An affine addition costs one field inversion plus
// 2M + 1S, and one inversion serves a whole batch (Montgomery's trick: 3M per element), so with
// large batches an addition is ~6M against ~10M for the XYZZ mixed addition (G1; G2 similar).
// The points of a block are grouped by bucket (a counting sort, signs applied), then each
// bucket's list is summed pairwise, level by level, with all buckets' pairs of a level sharing
// one inversion; the first level writes its sums to a second list, later levels work in place
// on the packed sums there. Equal x (a doubling or a cancellation) is rare and goes to a side
// list that the reduction adds with XYZZ formulas, which handle both. The field products write
// into their destinations (mul_into, sqr_into): on x86-64 a by-value temporary defeats store
// forwarding and slows every product (see Field::operator*=).
template <class C>
class AffineBuckets {
  using F = typename C::Field;
  using Fp = KeyField<C>;

 public:
  // Empty buckets for a window of 2^(c-1); the scratch keeps its memory from earlier windows.
  void reset(std::size_t nb) {
    nb_ = nb;
    acc_.assign(nb, Affine<C>::infinity());
    side_.clear();
    first_block_ = true;
  }

  // Adds sign(d)·pts[i] to bucket |d| - 1 for the non-zero digits of [begin, end).
  void add_block(const Affine<C>* pts, const int32_t* dig, std::size_t begin, std::size_t end) {
    // Counting sort of the points by bucket: the sizes first.
    count_.assign(nb_, 0);
    for (std::size_t i = begin; i < end; ++i)
      if (dig[i] != 0) ++count_[std::size_t(dig[i] > 0 ? dig[i] : -dig[i]) - 1];
    seg_.resize(nb_);
    touched_.clear();
    std::size_t sl = 0;
    for (std::size_t b = 0; b < nb_; ++b) {
      seg_[b] = sl;
      const uint32_t k = count_[b];
      if (k == 0) continue;
      touched_.push_back(uint32_t(b));
      // The k points, then room for the running sum of earlier blocks, which level one
      // appends to its ceil(k/2) sums.
      sl += k + (acc_[b].is_infinity() ? 0 : 1);
    }
    list_.resize(sl);
    // Scatter the block's points into bucket order, sign applied (branch-free: the sign is a
    // coin flip): the input is read in order and each bucket's segment is written in order.
    // (Reading the points through sorted indices instead, a gather from all over the input, is
    // slower, most of all while another core loads the shared caches.)
    // The writes go to up to nb_ places at once, beyond L1 and L2 (a block's list is several MB):
    // each would wait for its cache line. Fetching the line for a write kPrefetch points ahead
    // (the entry the bucket's next point goes to, give or take a point of the same bucket)
    // hides that.
    fill_.assign(seg_.begin(), seg_.end());
    constexpr std::size_t kPrefetch = 16;
    for (std::size_t i = begin; i < end; ++i) {
      if (i + kPrefetch < end) {
        const int32_t da = dig[i + kPrefetch];
        if (da != 0) __builtin_prefetch(&list_[fill_[std::size_t(da > 0 ? da : -da) - 1]], 1);
      }
      const int32_t d = dig[i];
      if (d == 0) continue;
      // Negated in a local, then stored once: negating into the list entry, which might alias
      // the input as far as the compiler knows, made GCC store and reload every limb.
      Affine<C> p = pts[i];
      neg_into_if(p.y, p.y, d < 0);
      list_[fill_[std::size_t(d > 0 ? d : -d) - 1]++] = p;
    }
    // Level one (with the running sums), then the later levels: pairs of each bucket's
    // entries, the sums packed at the front of its segment, in place.
    level(touched_, !first_block_);
    next_.clear();
    for (uint32_t b : touched_)
      if (count_[b] >= 2) next_.push_back(b);
    while (!next_.empty()) {
      active_.swap(next_);
      level(active_, false);
      next_.clear();
      for (uint32_t b : active_)
        if (count_[b] >= 2) next_.push_back(b);
    }
    for (uint32_t b : touched_) acc_[b] = count_[b] ? list_[seg_[b]] : Affine<C>::infinity();
    first_block_ = false;
  }

  // sum_j j·B_j over the buckets B_1..B_nb.
  XYZZ<C> reduce() {
    if (side_.empty() && nb_ >= kSplitMin) return reduce_split();
    std::sort(side_.begin(), side_.end(), [](const Side& a, const Side& b) { return a.bucket > b.bucket; });
    BucketReducer<C> red;
    std::size_t s = 0;
    for (std::size_t j = nb_; j >= 1; --j) {
      const Affine<C>& a = acc_[j - 1];
      if (s < side_.size() && side_[s].bucket == j - 1) {
        XYZZ<C> b = XYZZ<C>::from_affine(a);
        for (; s < side_.size() && side_[s].bucket == j - 1; ++s) b = b.add_mixed(side_[s].p);
        if (!b.is_infinity()) red.push(uint32_t(j), b);
      } else if (!a.is_infinity()) {
        red.push(uint32_t(j), a);
      }
    }
    return red.finish();
  }

 private:
  // From this many buckets on (and when no bucket has side-list fix-ups) the reduction splits
  // each weight as j = s·h + l (s = 2^floor(lg(nb)/2), 0 <= l < s):
  //   sum_j j·B_j = sum_l l·C_l + s·sum_h h·D_h,  C_l = sum_h B_{s·h+l},  D_h = sum_l B_{s·h+l}.
  // C and D are bucket sums of the nb bucket values into s and nb/s + 1 buckets, done by a
  // second AffineBuckets with batch-affine additions (~6 products each); their own weighted
  // sums are running sums over a few dozen buckets. The running sum over all nb buckets costs
  // two XYZZ additions (~24 products) per bucket.
  static constexpr std::size_t kSplitMin = 1024;

  XYZZ<C> reduce_split() {
    const int half = std::countr_zero(nb_) / 2;
    const std::size_t s = std::size_t(1) << half;
    if (!sub_) sub_ = std::make_unique<AffineBuckets<C>>();
    split_dig_.resize(nb_);
    // Bucket value B_j is acc_[j - 1]; digit 0 leaves it out (an empty bucket, or weight 0).
    auto sum_by = [&](std::size_t buckets, auto digit) {
      for (std::size_t j = 1; j <= nb_; ++j)
        split_dig_[j - 1] = acc_[j - 1].is_infinity() ? 0 : int32_t(digit(j));
      sub_->reset(buckets);
      sub_->add_block(acc_.data(), split_dig_.data(), 0, nb_);
      return sub_->reduce();
    };
    const XYZZ<C> low = sum_by(s, [&](std::size_t j) { return j & (s - 1); });
    XYZZ<C> high = sum_by(nb_ / s + 1, [&](std::size_t j) { return j >> half; });
    for (int i = 0; i < half; ++i) high = high.dbl();
    return high + low;
  }

  struct Side {
    std::size_t bucket;
    Affine<C> p;
  };

  // One pairing level over the buckets in `buckets`, each holding count_[b] entries at the
  // front of its segment of list_: entries 2i and 2i+1 become one sum at entry i, an odd last
  // entry moves down after them, then (with_acc) the bucket's running sum of earlier blocks;
  // count_[b] becomes the number written. Writes never pass the reads: output i <= 2i reads
  // entries 2i, 2i+1 first (get returns a copy).
  const F& x(uint32_t b, uint32_t j) const { return list_[seg_[b] + j].x; }
  Affine<C> get(uint32_t b, uint32_t j) const { return list_[seg_[b] + j]; }

  void level(const std::vector<uint32_t>& buckets, bool with_acc) {
    std::size_t pairs = 0;
    for (uint32_t b : buckets) pairs += count_[b] / 2;
    if constexpr (kHasSimd<C>)
      if (msm_simd::enabled()) return level_simd(buckets, with_acc, pairs);
    den_.resize(pairs);
    pre_.resize(pairs);
    at_.resize(pairs);
    // The x differences' keys in a pass of their own: it streams through the list (from L3 or
    // memory at level one, several MB per block). Inside the prefix-product loop each load
    // waited: one kernel call per step keeps the next step's load out of the reorder window.
    std::size_t t = 0;
    for (uint32_t b : buckets) {
      const uint32_t k = count_[b];
      for (uint32_t j = 0; j + 1 < k; j += 2, ++t) {
        at_[t] = PairAt{b, j};
        Fp& d = den_[t];
        diff_key(d, x(b, j + 1), x(b, j));
        if (d.is_zero()) d = Fp::one();  // equal x: no inverse needed (side list)
      }
    }
    // Forward: prefix products of the keys (1M each).
    Fp acc = Fp::one();
    for (t = 0; t < pairs; ++t) {
      pre_[t] = acc;
      mul_into(acc, acc, den_[t]);
    }
    // Backward: pre_[t] becomes 1/den_[t] (2M each).
    if (pairs) {
      Fp inv;
      if constexpr (std::is_same_v<Fp, pp::Fp>)
        inv = msm_inverse::inverse_vartime(acc);
      else
        inv = acc.inverse();  // BN254: Fermat, once per level
      for (std::size_t u = pairs; u-- > 0;) {
        mul_into(pre_[u], pre_[u], inv);
        mul_into(inv, inv, den_[u]);
      }
    }
    // The additions, two pairs at a time: one addition is a chain of three dependent products
    // (lambda, lambda^2, y3), and the products of two independent ones interleave. Pair (b, j)
    // writes list_[seg_[b] + j/2], below every entry that a later pair of the bucket reads
    // (each step loads its inputs first). A doubling or cancellation leaves infinity there,
    // which no real sum can be, for the compaction below.
    bool holes = false;
    auto load = [&](std::size_t u, uint32_t w) { return get(at_[u].b, at_[u].j + w); };
    t = 0;
    for (; t + 1 < pairs; t += 2) {
      const Affine<C> p0 = load(t, 0), q0 = load(t, 1), p1 = load(t + 1, 0), q1 = load(t + 1, 1);
      Affine<C>& r0 = list_[seg_[at_[t].b] + at_[t].j / 2];
      Affine<C>& r1 = list_[seg_[at_[t + 1].b] + at_[t + 1].j / 2];
      if (p0.x == q0.x || p1.x == q1.x) {  // rare: one at a time
        holes |= add_pair(r0, p0, q0, pre_[t], at_[t].b);
        holes |= add_pair(r1, p1, q1, pre_[t + 1], at_[t + 1].b);
        continue;
      }
      F l0, l1, s0, s1, y0, y1;
      sub_into(s0, q0.y, p0.y);
      sub_into(s1, q1.y, p1.y);
      slope(l0, s0, q0.x, p0.x, pre_[t]);
      slope(l1, s1, q1.x, p1.x, pre_[t + 1]);
      fsqr(s0, l0);
      fsqr(s1, l1);
      sub_into(s0, s0, p0.x);
      sub_into(s1, s1, p1.x);
      sub_into(s0, s0, q0.x);  // x3
      sub_into(s1, s1, q1.x);
      sub_into(y0, p0.x, s0);
      sub_into(y1, p1.x, s1);
      fmul(y0, l0, y0);
      fmul(y1, l1, y1);
      r0.x = s0;
      sub_into(r0.y, y0, p0.y);
      r1.x = s1;
      sub_into(r1.y, y1, p1.y);
    }
    if (t < pairs) {
      const Affine<C> p = load(t, 0), q = load(t, 1);
      holes |= add_pair(list_[seg_[at_[t].b] + at_[t].j / 2], p, q, pre_[t], at_[t].b);
    }
    compact(buckets, with_acc, holes);
  }

  // The same level with the vector unit (msm/simd.hpp): the equal-x pairs here, the keys, the
  // inversions and the additions eight pairs at a time there.
  void level_simd(const std::vector<uint32_t>& buckets, bool with_acc, std::size_t pairs) {
    static_assert(kHasSimd<C>);
    in_.resize(pairs);
    out_.resize(pairs);
    special_.assign((pairs + 7) / 8, 0);
    bool holes = false;
    std::size_t t = 0;
    for (uint32_t b : buckets) {
      const uint32_t k = count_[b];
      const uint32_t s = uint32_t(seg_[b]);
      for (uint32_t j = 0; j + 1 < k; j += 2, ++t) {
        in_[t] = s + j;
        out_[t] = s + j / 2;
        if (x(b, j + 1) == x(b, j)) {  // to the side list, infinity in its place
          special_[t / 8] |= uint8_t(1u << (t % 8));
          side_.push_back(Side{b, get(b, j)});
          side_.push_back(Side{b, get(b, j + 1)});
          holes = true;
        }
      }
    }
    if constexpr (!kIsG2<C>)
      msm_simd::g1_add_pairs(list_.data(), in_.data(), out_.data(), special_.data(), pairs, simd_);
    else
      msm_simd::g2_add_pairs(list_.data(), in_.data(), out_.data(), special_.data(), pairs, simd_);
    compact(buckets, with_acc, holes);
  }

  // Per bucket: drop the holes, then the odd entry out and the running sum of earlier blocks.
  void compact(const std::vector<uint32_t>& buckets, bool with_acc, bool holes) {
    for (uint32_t b : buckets) {
      const uint32_t k = count_[b];
      Affine<C>* out = list_.data() + seg_[b];
      uint32_t o = k / 2;
      if (holes) {
        o = 0;
        for (uint32_t j = 0; j < k / 2; ++j)
          if (!out[j].is_infinity()) out[o++] = out[j];
      }
      if (k % 2 == 1) out[o++] = get(b, k - 1);
      if (with_acc && !acc_[b].is_infinity()) out[o++] = acc_[b];
      count_[b] = o;
    }
  }

  // r = p + q for p.x != q.x with inv = 1/key(q.x - p.x); for p.x == q.x (P + P or P - P) the
  // points go to the side list, which the reduction adds with XYZZ formulas that handle both,
  // r becomes infinity and the result is true.
  bool add_pair(Affine<C>& r, const Affine<C>& p, const Affine<C>& q, const Fp& inv, uint32_t b) {
    if (p.x == q.x) {
      side_.push_back(Side{b, p});
      side_.push_back(Side{b, q});
      r = Affine<C>::infinity();
      return true;
    }
    F lambda, x3, y3;
    sub_into(y3, q.y, p.y);
    slope(lambda, y3, q.x, p.x, inv);
    fsqr(x3, lambda);
    sub_into(x3, x3, p.x);
    sub_into(x3, x3, q.x);
    sub_into(y3, p.x, x3);
    fmul(y3, lambda, y3);
    r.x = x3;
    sub_into(r.y, y3, p.y);
    return false;
  }

  struct PairAt {
    uint32_t b, j;
  };
  std::size_t nb_ = 0;
  bool first_block_ = true;
  std::vector<Affine<C>> acc_, list_;
  std::vector<Side> side_;
  std::vector<uint32_t> count_, touched_, active_, next_;
  std::vector<std::size_t> seg_, fill_;
  std::vector<Fp> den_, pre_;
  std::vector<PairAt> at_;
  // level_simd's pairs: first input entry, output entry (a list holds fewer than 2^32 entries:
  // a block and the running sums, at most 5·2^19 for the widest window).
  std::vector<uint32_t> in_, out_;
  std::vector<uint8_t> special_;    // level_simd's equal-x pairs, a bit per pair
  msm_simd::Scratch simd_;
  std::unique_ptr<AffineBuckets<C>> sub_;  // reduce_split's bucket sums
  std::vector<int32_t> split_dig_;
};

template <class C>
XYZZ<C> window_sum_affine(std::span<const PointRun<C>> runs, const int32_t* dig, std::size_t begin, std::size_t end, int c,
                          AffineBuckets<C>& buckets) {
  const std::size_t nb = std::size_t(1) << (c - 1);
  // Blocks bound the scratch memory (the block's points, scattered) for any n; each block
  // after the first also re-adds the nb running sums, so blocks are several times the bucket
  // count. Smaller is faster while that re-adding stays small: every pairing level reads the
  // block's points, and at 2^16 G1 (one thread, 2^17 points after the GLV split) blocks of
  // 2^16 points (6 MB) are slower than 2^15, 2^17 slower still. 4·nb = 2^14 (1.5 MB) matches
  // 2^15 on a quiet machine and beats it while another core loads the shared L3, so 4·nb it is.
  // (G2 keeps 2^14 points: its 4·nb is smaller, and 2^13 is no faster.) The evidence is in
  // docs/perf-history/cpu-issue18.md.
  const std::size_t block = std::max<std::size_t>(4 * nb, std::size_t(1) << 14);
  buckets.reset(nb);
  // Blocks stay inside a run (add_block reads one array).
  for_each_run(runs, begin, end, [&](const PointRun<C>& run, std::size_t lo, std::size_t hi) {
    for (std::size_t b = lo; b < hi; b += block) buckets.add_block(run.pts, dig + run.first, b, std::min(hi, b + block));
  });
  return buckets.reduce();
}

template <class C>
XYZZ<C> window_sum(std::span<const PointRun<C>> runs, const int32_t* dig, std::size_t begin, std::size_t end, int c,
                   AffineBuckets<C>& scratch) {
  // The array costs a fill and a scan per bucket, sorting about log2(m) compares per point.
  const std::size_t m = end - begin, nb = std::size_t(1) << (c - 1);
  if (m * 16 < nb) return window_sum_sparse(runs, dig, begin, end);
  // Affine batches pay off once a level's pairs amortise the inversion: several points per
  // bucket and enough of them.
  if (m >= 4 * nb && m >= 256) return window_sum_affine(runs, dig, begin, end, c, scratch);
  return window_sum_dense(runs, dig, begin, end, c);
}

// How many point chunks each window is split into. Tasks are equal in size, so a window pass
// over a chunk runs in rounds of `threads`; each extra chunk adds one bucket reduction. Picks
// the k with the least modelled wall time (in mixed-addition units; a full XYZZ addition in the
// reduction costs about 1.4 of them, two per non-empty bucket).
std::size_t choose_chunks(std::size_t n, int c, int nw, int threads) {
  if (threads <= 1 || n < 256) return 1;
  const double half = double(std::size_t(1) << (c - 1));
  std::size_t best_k = 1;
  double best = 0;
  const std::size_t max_k = std::min<std::size_t>(std::size_t(8) * threads, n / 64 + 1);
  for (std::size_t k = 1; k <= max_k; ++k) {
    const double chunk = double(n) / double(k);
    const double task = chunk + 2.8 * std::min(half, chunk);
    const double rounds = double((std::size_t(nw) * k + threads - 1) / threads);
    const double t = rounds * task;
    if (k == 1 || t < best * 0.97) {  // prefer fewer chunks unless clearly faster
      best = t;
      best_k = k;
    }
  }
  return best_k;
}

}  // namespace

int msm_default_window(std::size_t n) {
  // Tuned with bench_msm --msm_window_sweep (G1, one thread, CPU time, 2^10..2^20 points) and
  // below 2^10 with a direct sweep; each boundary sits where the two neighbouring windows are
  // within noise of each other, and agrees with the operation count nw(c)·(n + 2.8·buckets)
  // within a few percent. Past 2^18 the bucket array outgrowing L2 favours the smaller of
  // near-equal windows. It holds with the GLV split and the affine buckets too (one thread: at
  // 2^16 G1 13 beats 12 and 14, at 2^14 G2 10..13 are within noise of each other;
  // docs/perf-history/cpu-issue18.md). From 786432 points on it said 16 until the vector
  // kernels made bucket additions cheap: BLS12-381 G1 at 2^20 on one thread took 2.79 s at 14,
  // 3.80 s at 15 and 4.74 s at 16, BN254 G1 at 2^21 on two 2.82 s at 14, 3.03 s at 15 and 3.90 s
  // at 16 (docs/results/bn254_msm_windows_2core.txt). With 128-bit GLV halves 16 is never better
  // than 15 (as many windows, twice the buckets); 15 from 2^22 points on is not measured.
  struct Step {
    std::size_t below;
    int c;
  };
  static constexpr Step table[] = {
      {4, 2},      {24, 3},      {48, 4},      {160, 5},     {320, 6},     {768, 7},
      {1536, 8},   {5120, 9},    {12288, 10},  {24576, 11},  {49152, 12},  {327680, 13},
      {std::size_t(1) << 22, 14},
  };
  for (const Step& s : table)
    if (n < s.below) return s.c;
  return 15;
}

int msm_default_window_g2(std::size_t n) {
  // G2 with two threads (B_G2 points of a snarkjs key, random scalars, under load;
  // docs/perf-history/cpu-issue18.md): from 2048 up to 12288 points c = 11 is clearly faster than
  // G1's 9 or 10; at 1024 G1's 8 is best, from 12288 on one bit wider gains nothing beyond noise
  // and from 24576 on it loses.
  if (n >= 2048 && n < 12288) return 11;
  return msm_default_window(n);
}

template <class C>
Jacobian<C> msm(std::span<const Affine<C>> points, std::span<const ScalarOf<C>> scalars, const MsmOptions& options) {
  if (points.size() != scalars.size())
    throw std::invalid_argument("msm: " + std::to_string(points.size()) + " points but " +
                                std::to_string(scalars.size()) + " scalars");
  const MsmPart<C> part{points, scalars};
  return msm_sum<C>(std::span<const MsmPart<C>>(&part, 1), options);
}

template <class C>
Jacobian<C> msm_sum(std::span<const MsmPart<C>> all_parts, const MsmOptions& options) {
  std::vector<MsmPart<C>> parts;  // the non-empty ones
  std::size_t total = 0;
  for (const MsmPart<C>& part : all_parts) {
    if (part.points.size() != part.scalars.size())
      throw std::invalid_argument("msm: " + std::to_string(part.points.size()) + " points but " +
                                  std::to_string(part.scalars.size()) + " scalars");
    if (part.points.empty()) continue;
    parts.push_back(part);
    total += part.points.size();
  }
  if (options.window_bits < 0 || options.window_bits > kMaxWindow)
    throw std::invalid_argument("msm: window_bits must be 0 (auto) or 1.." + std::to_string(kMaxWindow) +
                                ", got " + std::to_string(options.window_bits));
  if (total == 0) return Jacobian<C>::infinity();
  const int c = options.window_bits                   ? options.window_bits
                : kIsG2<C>                    ? msm_default_window_g2(total)
                                             : msm_default_window(total);
  // GLV: sum_i k_i·P_i = sum_i k1_i·P_i + k2_i·φ(P_i), an MSM over twice the points with
  // 128-bit scalars: as many bucket additions, half the windows (bucket reductions).
  const int nw = glv_windows(c);
  const std::vector<int32_t> digits = signed_digits<C>(parts, total, c, nw);
  const std::vector<Affine<C>> endo_pts = endo_points<C>(parts, total);
  std::vector<PointRun<C>> runs;
  std::size_t first = 0;
  for (const MsmPart<C>& part : parts) {
    runs.push_back({part.points.data(), first, part.points.size()});
    first += part.points.size();
  }
  runs.push_back({endo_pts.data(), total, total});
  const std::size_t n = 2 * total;

  const int threads = tbb::this_task_arena::max_concurrency();
  const std::size_t k = choose_chunks(n, c, nw, threads);
  std::vector<XYZZ<C>> partial(std::size_t(nw) * k, XYZZ<C>::infinity());
  // Each worker's affine bucket scratch, kept across its windows (no re-allocation per task).
  tbb::enumerable_thread_specific<AffineBuckets<C>> scratch;
  // One task per (window, chunk): they are near-equal in cost, so no further splitting helps.
  tbb::parallel_for(
      tbb::blocked_range<std::size_t>(0, partial.size(), 1),
      [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t t = r.begin(); t != r.end(); ++t) {
          const std::size_t w = t / k, j = t % k;
          const std::size_t begin = n * j / k, end = n * (j + 1) / k;
          partial[t] = window_sum<C>(runs, digits.data() + w * n, begin, end, c, scratch.local());
        }
      },
      tbb::simple_partitioner());

  // Horner over the windows, most significant first: acc = acc·2^c + W_w.
  XYZZ<C> acc = XYZZ<C>::infinity();
  for (int w = nw - 1; w >= 0; --w) {
    for (int i = 0; i < c; ++i) acc = acc.dbl();
    for (std::size_t j = 0; j < k; ++j) acc += partial[std::size_t(w) * k + j];
  }
  return acc.to_jacobian();
}

template <class C>
Jacobian<C> batch_add(std::span<const Affine<C>> points, std::span<const uint64_t> bitmap) {
  const std::size_t n = points.size();
  const std::size_t words = (n + 63) / 64;
  if (bitmap.size() < words)
    throw std::invalid_argument("batch_add: bitmap has " + std::to_string(bitmap.size()) + " words, " +
                                std::to_string(n) + " points need " + std::to_string(words));
  if (n == 0) return Jacobian<C>::infinity();
  // 16 words = 1024 points per task at least: plenty of additions to amortise scheduling.
  const XYZZ<C> sum = tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, words, 16), XYZZ<C>::infinity(),
      [&](const tbb::blocked_range<std::size_t>& r, XYZZ<C> acc) {
        for (std::size_t wi = r.begin(); wi != r.end(); ++wi) {
          uint64_t bits = bitmap[wi];
          // Bits past the last point are not ours to read.
          if (wi + 1 == words && n % 64 != 0) bits &= (uint64_t(1) << (n % 64)) - 1;
          while (bits) {
            const std::size_t i = wi * 64 + std::size_t(std::countr_zero(bits));
            bits &= bits - 1;
            acc = acc.add_mixed(points[i]);
          }
        }
        return acc;
      },
      [](const XYZZ<C>& a, const XYZZ<C>& b) { return a + b; });
  return sum.to_jacobian();
}

template <class C>
Jacobian<C> msm_naive(std::span<const Affine<C>> points, std::span<const ScalarOf<C>> scalars) {
  if (points.size() != scalars.size())
    throw std::invalid_argument("msm_naive: " + std::to_string(points.size()) + " points but " +
                                std::to_string(scalars.size()) + " scalars");
  return tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, points.size(), 16), Jacobian<C>::infinity(),
      [&](const tbb::blocked_range<std::size_t>& r, Jacobian<C> acc) {
        for (std::size_t i = r.begin(); i != r.end(); ++i) acc += scalar_mul(points[i], scalars[i]);
        return acc;
      },
      [](const Jacobian<C>& a, const Jacobian<C>& b) { return a + b; });
}

#define PP_MSM_DEFINE(C)                                                                               \
  template Jacobian<C> msm(std::span<const Affine<C>>, std::span<const ScalarOf<C>>, const MsmOptions&); \
  template Jacobian<C> msm_sum(std::span<const MsmPart<C>>, const MsmOptions&);                        \
  template Jacobian<C> batch_add(std::span<const Affine<C>>, std::span<const uint64_t>);               \
  template Jacobian<C> msm_naive(std::span<const Affine<C>>, std::span<const ScalarOf<C>>);
PP_MSM_DEFINE(G1Curve)
PP_MSM_DEFINE(G2Curve)
PP_MSM_DEFINE(bn254::G1Curve)
PP_MSM_DEFINE(bn254::G2Curve)
#undef PP_MSM_DEFINE

}  // namespace pp
