// SPDX-License-Identifier: Apache-2.0 OR MIT
// What the GPU entry points return: a status code with the CUDA error text, never an exception
// across the device layer, so callers (engine, C API) decide between retry, fallback and failure.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

struct CUstream_st;
struct CUevent_st;

namespace pp::gpu {

// The same type as cudaStream_t, usable from code that does not include the CUDA headers.
using Stream = CUstream_st*;

enum class Code : int {
  ok = 0,
  invalid_argument,   // sizes, pointers or workspace too small: a caller bug, not retryable
  cuda_error,         // a CUDA runtime error; message carries its name and text
  unsupported,        // built without CUDA, or the size exceeds what the kernels support
};

struct Status {
  Code code = Code::ok;
  std::string message;

  bool ok() const { return code == Code::ok; }
  explicit operator bool() const { return ok(); }
  static Status success() { return {}; }
  static Status invalid(std::string m) { return {Code::invalid_argument, std::move(m)}; }
};

// A Status thrown: by the GPU prover and the host code that throws (src/gpu/cuda_status.cuh).
class GpuError : public std::runtime_error {
 public:
  explicit GpuError(Status s) : std::runtime_error(s.message), status_(std::move(s)) {}
  const Status& status() const { return status_; }
  // A CUDA error may pass on a retry; a bad argument will not.
  bool retryable() const { return status_.code == Code::cuda_error; }

 private:
  Status status_;
};

}  // namespace pp::gpu
