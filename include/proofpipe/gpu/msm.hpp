// SPDX-License-Identifier: Apache-2.0 OR MIT
// GPU multi-scalar multiplication and bitmap batch addition for G1 and G2 (BLS12-381's, and
// BN254's: instantiated in msm_bn254_g1.cu and msm_bn254_g2.cu), and their CPU twins
// (the same kernel bodies, src/gpu/msm_kernels.hpp, run in loops; CI checks them against pp::msm_naive).
//
// Device entry points never allocate and never synchronise: the caller queries the workspace
// size, passes device memory of that size and a stream, and reads the results from device
// memory once the stream has reached them: the MSM leaves one XYZZ sum per window, which the
// host combines (msm_combine: c doublings per window, microseconds on a CPU), batch addition
// leaves one XYZZ sum.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "proofpipe/ec/bls12_381.hpp"
#include "proofpipe/ec/bn254.hpp"
#include "proofpipe/gpu/msm_sizing.hpp"
#include "proofpipe/gpu/status.hpp"
#include "proofpipe/msm/digits.hpp"

namespace pp::gpu {

// Sizes of one MSM: n points, c-bit windows (0 = default_gpu_window(n)), and `copies` of the
// bases in a fixed-base table (precompute_bases): copy k holds 2^(k·c)·P_i, so the digits of
// windows jK .. jK+K-1 (K = copies) index one table and share one set of buckets: an MSM runs
// sets() sorts of up to K·n entries and sets() bucket reductions instead of windows() of each,
// and its sums are 2^(c·K) apart. copies = 1 is the plain MSM. The sets run `batch` at a time:
// one pass sorts and accumulates the entries of B sets at once (each into its own buckets), so a
// small MSM fills the GPU with long segments instead of one short sort per window.
struct MsmShape {
  std::size_t n = 0;
  int c = 0;
  int copies = 1;
  int batch = 1;
  // The form the scalars come in: Montgomery (false: each pass takes them out of it) or the
  // canonical integers themselves, below r (true: a producer that can emit them for free, such
  // as the prover's last H step, spares every pass that product).
  bool canonical = false;
  int windows() const { return msm_digits::num_windows(c); }
  int sets() const { return (windows() + copies - 1) / copies; }
  // Copies (windows) in set j: the last set may hold fewer.
  int set_copies(int j) const { return windows() - j * copies < copies ? windows() - j * copies : copies; }
  int shift() const { return c * copies; }  // bits between consecutive sums
  int passes() const { return (sets() + batch - 1) / batch; }
  // Windows in pass p (its sets p·B .. p·B+B-1): the last pass may hold fewer.
  int pass_windows(int p) const {
    const int left = windows() - p * batch * copies;
    return left < batch * copies ? left : batch * copies;
  }
  std::size_t entries() const { return n * std::size_t(copies) * std::size_t(batch); }  // of a full pass
  uint32_t buckets() const { return uint32_t(1) << (c - 1); }  // per set
  // The key of digit 0 (sorted after every bucket of the pass), and the key bits the sort needs.
  uint32_t null_key() const { return uint32_t(batch) * buckets(); }
  int sort_bits() const {
    int b = 0;
    while ((uint64_t(1) << b) <= null_key()) ++b;
    return b;
  }
  uint32_t segment() const { return segment_length(entries()); }
  std::size_t segments() const { return (entries() + segment() - 1) / segment(); }
  // Buckets per reduction thread: about 2^17 threads over all sets, 4..64 buckets each.
  uint32_t reduce_chunk() const {
    const uint64_t want = (uint64_t(sets()) * buckets()) >> 17;
    return uint32_t(want < 4 ? 4 : want > 64 ? 64 : want);
  }
  uint32_t reduce_chunks() const { return (buckets() + reduce_chunk() - 1) / reduce_chunk(); }
  // The second level of the reduction: the chunk totals T_1 .. T_{chunks-1} of a set, weighted
  // 1, 2, ... (msm_kernels.hpp, step 5), in chunks of 4..32 of them.
  uint32_t reduce_chunk2() const {
    const uint64_t want = (uint64_t(sets()) * reduce_chunks()) >> 12;
    return uint32_t(want < 4 ? 4 : want > 32 ? 32 : want);
  }
  uint32_t reduce_chunks2() const { return (reduce_chunks() - 1 + reduce_chunk2() - 1) / reduce_chunk2(); }
};
// Resolves c and checks n < 2^31, c in [kMinWindow, kMaxWindow], copies >= 1 and
// copies·n < 2^31 (an entry's index into the table); invalid_argument otherwise. Copies beyond
// the window count are not used (the shape holds min(copies, windows)). `batch`: sets per pass,
// 0 for msm_batch(n, c, copies) (more than there are sets: all of them); a pass must hold fewer
// than 2^31 entries.
Status make_msm_shape(std::size_t n, int c, MsmShape* out, int copies = 1, int batch = 0);
// Sorted entries a pass aims for: as many sets as keep a pass within this (at least one). 2^24
// entries make segments of 128, which a G1 MSM of 2^20 points at c = 16 (buckets of 32 entries)
// needs to be rid of most chains.
inline constexpr std::size_t kPassEntries = std::size_t(1) << 24;
int msm_batch(std::size_t n, int c, int copies);
// Sorted entries a pass of any shape of n <= m points with `copies` copies holds at most, at any
// window (monotone in m; the memory planner sizes with it).
std::size_t msm_entries_bound(std::size_t m, int copies);

// The MSM workspace piece by piece, in carve order, each piece 256-byte aligned: the one layout
// that msm() carves (msm_impl.cuh) and the memory planner sizes (plan.cpp). Byte offsets, and the
// total. `entries` and `segments`: the sorted entries and segments of a pass to make room for
// (msm() passes shape.entries() and shape.segments(); the planner bounds over every piece size
// it may run); `sort_bytes`: the radix sort's temporary storage (msm() passes CUB's own query;
// the planner radix_sort_temp_bound(entries)).
struct MsmLayout {
  std::size_t keys, values, keys_alt, values_alt, sort_temp, buckets, head, tail, chunks, totals, level2, set_sums,
      scratch, long_chains, long_count, total;
};
MsmLayout msm_layout(const MsmShape& shape, std::size_t entries, std::size_t segments, std::size_t xyzz_bytes,
                     std::size_t sort_bytes);
// An upper bound of CUB's radix-sort temporary storage for n key-value pairs of 32-bit keys
// (the GPU harness checks it against CUB's query).
std::size_t radix_sort_temp_bound(std::size_t n);
// Long chains (buckets crossing more than kMaxChain segment ends) one window can have.
inline std::size_t max_long_chains(std::size_t segments) { return segments / (kMaxChain + 1) + 1; }
// The batch-addition workspace: one XYZZ sum per 64 points (one bitmap word) and the tree-sum
// scratch over them.
struct BatchLayout {
  std::size_t chunks, scratch, total;
};
BatchLayout batch_add_layout(std::size_t n, std::size_t xyzz_bytes);
inline constexpr std::size_t kWorkspaceAlign = 256;
inline constexpr std::size_t kTreeItems = 1024;  // items one reduction block folds into one

// ---- CPU twins ----
// `points`: copies·n points, a fixed-base table when copies > 1 (precompute_twin).
template <class C>
Jacobian<C> msm_twin(std::span<const Affine<C>> points, std::span<const typename C::Scalar> scalars, int c = 0, int copies = 1,
                     int batch = 0, bool canonical = false);
// The fixed-base table of `copies` copies of the n = points.size() bases for c-bit windows:
// copy k (at k·n) holds 2^(k·c)·P_i, copy 0 the bases (precompute_bases' twin).
template <class C>
std::vector<Affine<C>> precompute_twin(std::span<const Affine<C>> points, int c, int copies);
template <class C>
Jacobian<C> batch_add_twin(std::span<const Affine<C>> points, std::span<const uint64_t> bitmap);

// ---- Device API (library proofpipe_gpu, built with CUDA) ----
template <class C>
std::size_t msm_workspace_bytes(const MsmShape& shape);
// Optional stage timing of one msm() call: when `events` holds at least
// msm_trace_events(shape) created CUDA events (cudaEvent_t), msm() records events[0] at the
// start, events[1 + 4p + k] after stage k of pass p (k: 0 digits, 1 sort, 2 segment sums,
// 3 chains) and the last one after the all-set reduction.
struct MsmTrace {
  CUevent_st** events = nullptr;
  std::size_t count = 0;
};
inline std::size_t msm_trace_events(const MsmShape& shape) { return 2 + 4 * std::size_t(shape.passes()); }

// d_window_sums[0 .. shape.sets()) = the sums of sum_i scalars[i]·points[i], one per set of
// windows (scalars in Montgomery form, or canonical ones with shape.canonical; points may be
// infinity); msm_combine finishes it on the host. d_points holds shape.copies·n points (a
// fixed-base table, copy k at k·n; one copy: the bases). With `accumulate` the sums are added
// to d_window_sums instead (an MSM in pieces of one shape's c and copies; all-zero bytes are
// the point at infinity).
template <class C>
Status msm(const Affine<C>* d_points, const typename C::Scalar* d_scalars, const MsmShape& shape, void* d_workspace,
           std::size_t workspace_bytes, XYZZ<C>* d_window_sums, Stream stream, const MsmTrace* trace = nullptr,
           bool accumulate = false);
template <class C>
Jacobian<C> msm_combine(const XYZZ<C>* window_sums, const MsmShape& shape);
// msm + copy of the sums + cudaStreamSynchronize(stream) + msm_combine, for callers that want
// the point now (tests, benchmarks). `host_sums` holds shape.sets() elements.
template <class C>
Status msm_wait(const Affine<C>* d_points, const typename C::Scalar* d_scalars, const MsmShape& shape, void* d_workspace,
                std::size_t workspace_bytes, XYZZ<C>* d_window_sums, XYZZ<C>* host_sums, Stream stream,
                Jacobian<C>* result);

// Fills copies 1 .. copies-1 of the fixed-base table at d_table (copy 0, the n bases, already
// there; the table holds copies·n points): copy k = 2^c · copy k-1, in kShiftBatch-point batches
// that share one inversion. Start-up work (once per key), not the proving path.
template <class C>
Status precompute_bases(Affine<C>* d_table, std::size_t n, int c, int copies, Stream stream);

template <class C>
std::size_t batch_add_workspace_bytes(std::size_t n);
// *d_sum = sum of d_points[i] whose bit is set in d_bitmap (ceil(n/64) words, LSB first);
// added to *d_sum with `accumulate`.
template <class C>
Status batch_add(const Affine<C>* d_points, const uint64_t* d_bitmap, std::size_t n, void* d_workspace,
                 std::size_t workspace_bytes, XYZZ<C>* d_sum, Stream stream, bool accumulate = false);

}  // namespace pp::gpu
