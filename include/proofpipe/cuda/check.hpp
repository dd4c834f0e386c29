// Error helper for host code calling the CUDA runtime: a failed cudaError_t becomes a pp::cuda::Error.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace pp::cuda {

// Formats "<file>:<line>: <expr> failed: <cudaErrorName> (<code>): <cudaGetErrorString>".
inline std::string error_message(cudaError_t err, const char* expr, const char* file, int line) {
  std::string m;
  m += file;
  m += ':';
  m += std::to_string(line);
  m += ": ";
  m += expr;
  m += " failed: ";
  m += cudaGetErrorName(err);
  m += " (";
  m += std::to_string(static_cast<int>(err));
  m += "): ";
  m += cudaGetErrorString(err);
  return m;
}

// The exception thrown by PP_CUDA_CHECK; code() is the original cudaError_t.
class Error : public std::runtime_error {
 public:
  Error(cudaError_t err, const char* expr, const char* file, int line)
      : std::runtime_error(error_message(err, expr, file, line)), code_(err) {}
  cudaError_t code() const noexcept { return code_; }

 private:
  cudaError_t code_;
};

inline void check(cudaError_t err, const char* expr, const char* file, int line) {
  if (err != cudaSuccess) throw Error(err, expr, file, line);
}

// For noexcept contexts (destructors, cleanup): reports to stderr and returns false instead of
// throwing.
inline bool check_nothrow(cudaError_t err, const char* expr, const char* file, int line) noexcept {
  if (err == cudaSuccess) return true;
  std::fprintf(stderr, "%s:%d: %s failed: %s (%d): %s\n", file, line, expr, cudaGetErrorName(err),
               static_cast<int>(err), cudaGetErrorString(err));
  return false;
}

}  // namespace pp::cuda

// PP_CUDA_CHECK(cudaMalloc(&p, n)); throws pp::cuda::Error carrying expression, file and line.
#define PP_CUDA_CHECK(expr) ::pp::cuda::check((expr), #expr, __FILE__, __LINE__)
// After a kernel launch: picks up launch-configuration errors (does not synchronise).
#define PP_CUDA_CHECK_LAUNCH() ::pp::cuda::check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
// Non-throwing variant; evaluates to true on success.
#define PP_CUDA_WARN(expr) ::pp::cuda::check_nothrow((expr), #expr, __FILE__, __LINE__)
