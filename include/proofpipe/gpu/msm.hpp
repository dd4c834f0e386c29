// GPU multi-scalar multiplication and bitmap batch addition for G1 and G2, and their CPU twins
// (the same kernel bodies, msm_kernels.hpp, run in loops; CI checks them against pp::msm_naive).
//
// Device entry points never allocate and never synchronise: the caller queries the workspace
// size, passes device memory of that size and a stream, and reads the result (a Jacobian
// point in device memory) once the stream has reached it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "proofpipe/ec/bls12_381.hpp"
#include "proofpipe/gpu/msm_kernels.hpp"
#include "proofpipe/gpu/status.hpp"

namespace pp::gpu {

// Sizes of one MSM: n points, c-bit windows (0 = default_gpu_window(n)).
struct MsmShape {
  std::size_t n = 0;
  int c = 0;
  int windows() const { return msm_digits::num_windows(c); }
  uint32_t buckets() const { return uint32_t(1) << (c - 1); }
  std::size_t segments() const { return (n + kSegment - 1) / kSegment; }
  uint32_t reduce_chunks() const { return (buckets() + kReduceChunk - 1) / kReduceChunk; }
};
// Resolves c (and checks n < 2^31, c in [kMinWindow, kMaxWindow]); invalid_argument otherwise.
Status make_msm_shape(std::size_t n, int c, MsmShape* out);

// ---- CPU twins ----
template <class C>
Jacobian<C> msm_twin(std::span<const Affine<C>> points, std::span<const Fr> scalars, int c = 0);
template <class C>
Jacobian<C> batch_add_twin(std::span<const Affine<C>> points, std::span<const uint64_t> bitmap);

// ---- Device API (library proofpipe_gpu, built with CUDA) ----
template <class C>
std::size_t msm_workspace_bytes(const MsmShape& shape);
// *d_result = sum_i scalars[i]·points[i] (scalars in Montgomery form, points may be infinity).
template <class C>
Status msm(const Affine<C>* d_points, const Fr* d_scalars, const MsmShape& shape, void* d_workspace,
           std::size_t workspace_bytes, Jacobian<C>* d_result, Stream stream);

template <class C>
std::size_t batch_add_workspace_bytes(std::size_t n);
// *d_result = sum of d_points[i] whose bit is set in d_bitmap (ceil(n/64) words, LSB first).
template <class C>
Status batch_add(const Affine<C>* d_points, const uint64_t* d_bitmap, std::size_t n, void* d_workspace,
                 std::size_t workspace_bytes, Jacobian<C>* d_result, Stream stream);

}  // namespace pp::gpu
