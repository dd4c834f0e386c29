// CUDA error -> pp::gpu::Status, for the device entry points (internal to src/gpu).
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "proofpipe/gpu/status.hpp"

namespace pp::gpu {

inline Status from_cuda(cudaError_t err, const char* where) {
  if (err == cudaSuccess) return {};
  return Status{Code::cuda_error, std::string(where) + ": " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err)};
}
// Launch errors of the kernels queued so far (does not synchronise).
inline Status last_error(const char* where) { return from_cuda(cudaGetLastError(), where); }

}  // namespace pp::gpu
