// SPDX-License-Identifier: Apache-2.0 OR MIT
// The one thin layer between proofpipe's GPU code and the CUDA runtime: every runtime call of the
// proving path (prover.cu, msm_impl.cuh, ntt.cu) goes through these functions, which count it in the
// calling thread's current DeviceCalls (engine/device_calls.hpp: CallScope) and then make the call
// unchanged. The counts are what the engine's forbidden-call check reads, so a call that bypasses
// this file is a call nobody sees: src/gpu has no other cuda* runtime call on the proving path
// (start-up and key loads may call the runtime directly; they are not the steady state).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "proofpipe/engine/device_calls.hpp"

namespace pp::gpu::device {

using engine::DeviceCall;

inline cudaError_t counted(DeviceCall kind, cudaError_t e) {
  engine::count_call(kind);
  return e;
}

// A kernel launch: kernel<<<grid, block, shared, stream>>>(args...), counted.
template <class... Params, class... Args>
void launch(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t shared, cudaStream_t stream, Args&&... args) {
  engine::count_call(DeviceCall::kernel_launch);
  kernel<<<grid, block, shared, stream>>>(std::forward<Args>(args)...);
}
// A library algorithm that launches kernels (CUB), counted as one launch; returns its error.
inline cudaError_t algorithm(cudaError_t e) { return counted(DeviceCall::kernel_launch, e); }

inline cudaError_t MemcpyAsync(void* dst, const void* src, std::size_t n, cudaMemcpyKind kind, cudaStream_t s) {
  return counted(DeviceCall::memcpy_async, cudaMemcpyAsync(dst, src, n, kind, s));
}
inline cudaError_t Memcpy(void* dst, const void* src, std::size_t n, cudaMemcpyKind kind) {
  return counted(DeviceCall::memcpy_async, cudaMemcpy(dst, src, n, kind));
}
inline cudaError_t MemsetAsync(void* p, int value, std::size_t n, cudaStream_t s) {
  return counted(DeviceCall::memset_async, cudaMemsetAsync(p, value, n, s));
}
inline cudaError_t EventRecord(cudaEvent_t e, cudaStream_t s) {
  return counted(DeviceCall::event_record, cudaEventRecord(e, s));
}
inline cudaError_t StreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned flags) {
  return counted(DeviceCall::stream_wait_event, cudaStreamWaitEvent(s, e, flags));
}
inline cudaError_t EventSynchronize(cudaEvent_t e) {
  return counted(DeviceCall::event_synchronize, cudaEventSynchronize(e));
}
// Whether the device has passed the event: cudaSuccess or cudaErrorNotReady (cleared from the
// thread's last error, so that a later launch check does not read it), without waiting.
inline cudaError_t EventQuery(cudaEvent_t e) {
  const cudaError_t r = counted(DeviceCall::event_synchronize, cudaEventQuery(e));
  if (r == cudaErrorNotReady) cudaGetLastError();
  return r;
}
inline cudaError_t StreamSynchronize(cudaStream_t s) {
  return counted(DeviceCall::stream_synchronize, cudaStreamSynchronize(s));
}
inline cudaError_t SetDevice(int device) { return counted(DeviceCall::host_query, cudaSetDevice(device)); }
inline cudaError_t EventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b) {
  return counted(DeviceCall::host_query, cudaEventElapsedTime(ms, a, b));
}
inline cudaError_t LaunchHostFunc(cudaStream_t s, cudaHostFn_t fn, void* arg) {
  return counted(DeviceCall::kernel_launch, cudaLaunchHostFunc(s, fn, arg));
}
// The forbidden kinds, for the start-up code that needs them and for tests that must see them
// counted when misused on the proving path.
inline cudaError_t Malloc(void** p, std::size_t n) { return counted(DeviceCall::malloc, cudaMalloc(p, n)); }
inline cudaError_t HostAlloc(void** p, std::size_t n, unsigned flags) {
  return counted(DeviceCall::malloc, cudaHostAlloc(p, n, flags));
}
inline cudaError_t Free(void* p) { return counted(DeviceCall::free, cudaFree(p)); }
inline cudaError_t FreeHost(void* p) { return counted(DeviceCall::free, cudaFreeHost(p)); }
inline cudaError_t HostRegister(void* p, std::size_t n, unsigned flags) {
  return counted(DeviceCall::host_register, cudaHostRegister(p, n, flags));
}
inline cudaError_t HostUnregister(void* p) { return counted(DeviceCall::host_register, cudaHostUnregister(p)); }
inline cudaError_t MemGetInfo(std::size_t* free_bytes, std::size_t* total_bytes) {
  return counted(DeviceCall::mem_get_info, cudaMemGetInfo(free_bytes, total_bytes));
}
inline cudaError_t DeviceSynchronize() { return counted(DeviceCall::device_synchronize, cudaDeviceSynchronize()); }

}  // namespace pp::gpu::device
