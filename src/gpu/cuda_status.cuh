// SPDX-License-Identifier: Apache-2.0 OR MIT
// The one CUDA error helper (internal to src/gpu and the GPU test programs): a cudaError_t becomes
// a pp::gpu::Status, the type the device entry points return, or a GpuError carrying that Status
// where host code throws. device.cuh's counted runtime calls return cudaError_t unchanged; their
// callers pass it through from_cuda (ntt.cu, msm_impl.cuh: Status) or check (prover.cu: GpuError).
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <string>

#include "proofpipe/gpu/status.hpp"

namespace pp::gpu {

// "<where>: <cudaErrorName>: <cudaGetErrorString>"; success for cudaSuccess.
inline Status from_cuda(cudaError_t err, const char* where) {
  if (err == cudaSuccess) return {};
  return Status{Code::cuda_error, std::string(where) + ": " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err)};
}
// Launch errors of the kernels queued so far (does not synchronise).
inline Status last_error(const char* where) { return from_cuda(cudaGetLastError(), where); }

// Throwing forms, for host code outside the Status-returning entry points (the prover, key set-up,
// benchmarks, test programs).
inline void check(const Status& s) {
  if (!s) throw GpuError(s);
}
inline void check(cudaError_t err, const char* where) {
  if (err != cudaSuccess) throw GpuError(from_cuda(err, where));
}
// For noexcept contexts (destructors, cleanup): reports to stderr and returns false instead of
// throwing.
inline bool warn(cudaError_t err, const char* where) noexcept {
  if (err == cudaSuccess) return true;
  std::fprintf(stderr, "%s: %s: %s\n", where, cudaGetErrorName(err), cudaGetErrorString(err));
  return false;
}

}  // namespace pp::gpu

#define PP_CUDA_STR_(x) #x
#define PP_CUDA_STR(x) PP_CUDA_STR_(x)
#define PP_CUDA_WHERE(what) __FILE__ ":" PP_CUDA_STR(__LINE__) ": " what
// PP_CUDA_CHECK(cudaMalloc(&p, n)); throws pp::gpu::GpuError naming file, line and expression.
#define PP_CUDA_CHECK(expr) ::pp::gpu::check((expr), PP_CUDA_WHERE(#expr))
// After a kernel launch: picks up launch-configuration errors (does not synchronise).
#define PP_CUDA_CHECK_LAUNCH() ::pp::gpu::check(cudaGetLastError(), PP_CUDA_WHERE("kernel launch"))
// Non-throwing variant; evaluates to true on success.
#define PP_CUDA_WARN(expr) ::pp::gpu::warn((expr), PP_CUDA_WHERE(#expr))
