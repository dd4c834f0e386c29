// SPDX-License-Identifier: Apache-2.0 OR MIT
// Device runtime calls, counted per device: what the engine's forbidden-call check reads. In a
// header of its own so that the GPU kernels' thin runtime layer (src/gpu/device.cuh) depends on
// this and nothing else of the engine (the MSM and NTT translation units are the slowest to build).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace pp::engine {

// Device runtime calls, counted. A CUDA backend routes every runtime call through one thin layer
// that calls count(); the simulated device counts what a real one would do. Forbidden on the
// steady-state path: anything that allocates, frees, queries or synchronises the whole device.
enum class DeviceCall : int {
  malloc,              // cudaMalloc / cudaMallocAsync / cudaMallocHost   (forbidden)
  free,                // cudaFree / cudaFreeAsync / cudaFreeHost         (forbidden)
  mem_get_info,        // cudaMemGetInfo                                  (forbidden)
  device_synchronize,  // cudaDeviceSynchronize                           (forbidden)
  mem_pool_trim,       // cudaMemPoolTrimTo                               (forbidden)
  host_register,       // cudaHostRegister / Unregister (pinning)         (forbidden)
  memcpy_async,        // cudaMemcpyAsync, cudaMemcpy (of a few bytes: the MSM sums)
  kernel_launch,       // a kernel, a CUB algorithm, a host function in stream order
  event_record,        // cudaEventRecord
  stream_wait_event,   // cudaStreamWaitEvent
  event_synchronize,   // cudaEventSynchronize (one event, not the device)
  memset_async,        // cudaMemsetAsync
  stream_synchronize,  // cudaStreamSynchronize (one stream, not the device)
  host_query,          // cudaSetDevice, cudaEventElapsedTime: host-side, no device work
  count_
};
const char* to_string(DeviceCall call);
bool is_forbidden(DeviceCall call);

class DeviceCalls {
 public:
  void count(DeviceCall call, uint64_t n = 1) { counts_[std::size_t(call)].fetch_add(n, std::memory_order_relaxed); }
  uint64_t calls(DeviceCall call) const { return counts_[std::size_t(call)].load(std::memory_order_relaxed); }
  // Sum of the forbidden kinds.
  uint64_t forbidden() const;
  // "malloc=1 memcpy_async=30 ..." (kinds with a non-zero count).
  std::string describe() const;

 private:
  std::array<std::atomic<uint64_t>, std::size_t(DeviceCall::count_)> counts_{};
};

// Where device runtime calls are counted: every call of the GPU code goes through one thin
// wrapper (gpu/device.cuh) that calls count_call(); a backend phase makes its device's counter
// the calling thread's current one with a CallScope. Outside any scope (start-up, key loads,
// shutdown) calls are not counted: they are not the steady state.
DeviceCalls* current_calls();
void count_call(DeviceCall call);
class CallScope {
 public:
  explicit CallScope(DeviceCalls* calls);
  ~CallScope();
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

 private:
  DeviceCalls* previous_;
};

}  // namespace pp::engine
