// SPDX-License-Identifier: Apache-2.0 OR MIT
// GPU NTT kernels: the pass, element-wise and table kernels around the shared bodies of
// ntt_kernels.hpp. Nothing here allocates or synchronises.

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "proofpipe/gpu/ntt.hpp"
#include "cuda_status.cuh"
#include "device.cuh"
#include "ntt_kernels.hpp"

namespace pp::gpu {

namespace {

constexpr int kElementwiseBlock = 256;

template <class F>
__global__ void tables_kernel(F* out, std::size_t count, NttRootsOf<F> roots, int lg, int twist_lg) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) out[i] = table_entry(roots, lg, i, twist_lg);
}

// One block = p.cols() columns of K points: copied into shared memory in 16-byte chunks (threads
// side by side read neighbouring chunks), p.rounds() rounds of pass_round, copied back. Four
// blocks an SM (64 registers a thread, 32 warps): faster than 3 blocks (85 registers), than 5
// (a tighter register cap spills) and than 8-element rounds in two 64 KiB blocks of 128
// registers, as more warps hide the products' dependent chains
// (docs/perf-history/gpu-kernels-v1-v9.md).
// Threads of 2^kTL elements: the same registers a thread (2 elements: blocks of up to 512
// threads, two an SM's register file).
constexpr int kPassBlocksPerSm = 4;
template <bool kDif, int kTL, class F>
__global__ void __launch_bounds__(kBlockElements >> kTL, kPassBlocksPerSm >> (kThreadLg - kTL))
    pass_kernel(F* a, NttPass p, NttTablesOf<F> t, PassJob job) {
  extern __shared__ __align__(16) uint64_t mem[];
  const HalfSlots s{mem, p.elements_per_block() + 4};
  const uint64_t block = blockIdx.x;
  const uint32_t chunks = 2 * p.elements_per_block();
  PP_UNROLL for (int i = 0; i < 2 << kTL; ++i) {
    const uint32_t x = threadIdx.x + uint32_t(i) * blockDim.x;
    if (x >= chunks) break;
    const ulonglong2 v = reinterpret_cast<const ulonglong2*>(a + p.global_index(block, x >> 1))[x & 1];
    s.set_half(x >> 1, int(x & 1), v.x, v.y);
  }
  __syncthreads();
  const int rounds = NttPass::rounds_of(p.k, kTL);  // p.rounds(), with the thread shape a constant
  for (int r = 0; r < rounds; ++r) {
    pass_round<kDif, kTL>(p, t, job, s, block, threadIdx.x, r);
    __syncthreads();
  }
  PP_UNROLL for (int i = 0; i < 2 << kTL; ++i) {
    const uint32_t x = threadIdx.x + uint32_t(i) * blockDim.x;
    if (x >= chunks) break;
    uint64_t lo, hi;
    s.get_half(x >> 1, int(x & 1), lo, hi);
    reinterpret_cast<ulonglong2*>(a + p.global_index(block, x >> 1))[x & 1] = make_ulonglong2(lo, hi);
  }
}

// The pass kernel for a direction and a thread shape (kThreadLg or kSmallThreadLg): what a plan's
// pass launches, and what start-up allows its shared memory.
template <class F>
auto pass_kernel_for(bool dif, int thread_lg) {
  const bool small = thread_lg == kSmallThreadLg;
  return dif ? (small ? pass_kernel<true, kSmallThreadLg, F> : pass_kernel<true, kThreadLg, F>)
             : (small ? pass_kernel<false, kSmallThreadLg, F> : pass_kernel<false, kThreadLg, F>);
}

template <class F>
__global__ void c_step_kernel(F* c, const F* __restrict__ a, const F* __restrict__ b, std::size_t n) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) c_step_element(c, a, b, i);
}

template <class F>
__global__ void h_step_kernel(F* a, const F* __restrict__ b, const F* __restrict__ c, std::size_t n, F factor) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) h_step_element(a, b, c, i, factor);
}

template <class F>
__global__ void bit_reverse_kernel(F* a, std::size_t n, int lg) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const std::size_t r = bit_reverse(uint32_t(i), lg);
  if (i < r) {
    const F t = a[i];
    a[i] = a[r];
    a[r] = t;
  }
}

unsigned grid_for(std::size_t n) { return unsigned((n + kElementwiseBlock - 1) / kElementwiseBlock); }

Status check_lg(int lg) {
  if (lg < 1 || lg > kMaxNttLg)
    return Status::invalid("pp::gpu::ntt: log size " + std::to_string(lg) + " outside [1, " +
                           std::to_string(kMaxNttLg) + "]");
  return {};
}

template <class F>
Status tables_init(void* d_tables, std::size_t bytes, int lg, const NttRootsOf<F>& roots, Stream stream,
                   NttTablesOf<F>* out, int twist_lg) {
  if (Status s = check_lg(lg); !s) return s;
  if (d_tables == nullptr || out == nullptr) return Status::invalid("pp::gpu::ntt_tables_init: null pointer");
  if (reinterpret_cast<std::uintptr_t>(d_tables) % 16 != 0)
    return Status::invalid("pp::gpu::ntt_tables_init: the table buffer is not 16-byte aligned (the kernels read its entries in 16-byte words)");
  if (bytes < ntt_tables_bytes(lg, twist_lg))
    return Status::invalid("pp::gpu::ntt_tables_init: " + std::to_string(bytes) + " bytes given, " +
                           std::to_string(ntt_tables_bytes(lg, twist_lg)) + " needed");
  // A pass's block may hold up to kBlockElements elements: above the default 48 KiB of shared
  // memory, so each kernel is allowed that much (a start-up call, not on the proving path).
  const int smem = int(slots_bytes(kBlockElements));
  for (bool dif : {true, false})
    for (int thread_lg : {kThreadLg, kSmallThreadLg})
      if (Status st = from_cuda(cudaFuncSetAttribute(reinterpret_cast<const void*>(pass_kernel_for<F>(dif, thread_lg)),
                                                     cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
                                "pp::gpu::ntt_tables_init: shared memory limit");
          !st)
        return st;
  const std::size_t count = table_elements(lg, twist_lg);
  F* base = static_cast<F*>(d_tables);
  device::launch(tables_kernel<F>, grid_for(count), kElementwiseBlock, 0, stream, base, count, roots, lg, twist_lg);
  // size_inv = 1/2^lg: the same value whichever omega, computed on the host.
  *out = bind_tables(base, lg, F::from_u64(uint64_t(1) << lg).inverse(), twist_lg);
  return last_error("pp::gpu::ntt_tables_init");
}

template <class F>
Status transform(F* d_a, const NttTablesOf<F>& t, const NttOp& op, Stream stream) {
  if (Status s = check_lg(t.lg); !s) return s;
  if (d_a == nullptr) return Status::invalid("pp::gpu::ntt: null data pointer");
  if (const std::string why = check_op(op); !why.empty()) return Status::invalid("pp::gpu::ntt: " + why);
  const std::size_t n = std::size_t(1) << t.lg;
  const NttSchedule s = schedule(op);
  const NttPlan plan = make_ntt_plan(t.lg);
  for (int i = 0; i < plan.count; ++i) {
    const PassStep step = pass_step(s, plan, i);
    const NttPass& p = step.pass;
    device::launch(pass_kernel_for<F>(s.dif, p.thread_lg), unsigned(p.blocks()), p.threads_per_block(),
                   pass_shared_bytes(p), stream, d_a, p, t, step.job);
  }
  if (s.permute_after) device::launch(bit_reverse_kernel<F>, grid_for(n), kElementwiseBlock, 0, stream, d_a, n, t.lg);
  return last_error("pp::gpu::ntt");
}

template <class F>
Status c_step_of(F* d_c, const F* d_a, const F* d_b, std::size_t n, Stream stream) {
  if (n == 0) return {};
  if (d_a == nullptr || d_b == nullptr || d_c == nullptr) return Status::invalid("pp::gpu::c_step: null pointer");
  device::launch(c_step_kernel<F>, grid_for(n), kElementwiseBlock, 0, stream, d_c, d_a, d_b, n);
  return last_error("pp::gpu::c_step");
}

template <class F>
Status h_step_of(F* d_a, const F* d_b, const F* d_c, std::size_t n, const F& factor, Stream stream) {
  if (n == 0) return {};
  if (d_a == nullptr || d_b == nullptr || d_c == nullptr) return Status::invalid("pp::gpu::h_step: null pointer");
  device::launch(h_step_kernel<F>, grid_for(n), kElementwiseBlock, 0, stream, d_a, d_b, d_c, n, factor);
  return last_error("pp::gpu::h_step");
}

template <class F>
Status permute(F* d_a, int lg, Stream stream) {
  if (Status s = check_lg(lg); !s) return s;
  const std::size_t n = std::size_t(1) << lg;
  device::launch(bit_reverse_kernel<F>, grid_for(n), kElementwiseBlock, 0, stream, d_a, n, lg);
  return last_error("pp::gpu::bit_reverse_permute");
}

}  // namespace

static_assert(sizeof(Fr) == sizeof(bn254::Fr), "the tables' size is the same for both scalar fields");
std::size_t ntt_tables_bytes(int lg, int twist_lg) { return table_elements(lg, twist_lg) * sizeof(Fr); }

// The entry points, one overload per scalar field (the same kernels, instantiated twice).
#define PP_GPU_NTT_ENTRY_POINTS(F)                                                                              \
  Status ntt_tables_init(void* d_tables, std::size_t bytes, int lg, const NttRootsOf<F>& roots, Stream stream, \
                         NttTablesOf<F>* out, int twist_lg) {                                                   \
    return tables_init(d_tables, bytes, lg, roots, stream, out, twist_lg);                                      \
  }                                                                                                             \
  Status ntt(F* d_a, const NttTablesOf<F>& t, const NttOp& op, Stream stream) {                                 \
    return transform(d_a, t, op, stream);                                                                       \
  }                                                                                                             \
  Status c_step(F* d_c, const F* d_a, const F* d_b, std::size_t n, Stream stream) {                             \
    return c_step_of(d_c, d_a, d_b, n, stream);                                                                 \
  }                                                                                                             \
  Status h_step(F* d_a, const F* d_b, const F* d_c, std::size_t n, const F& factor, Stream stream) {            \
    return h_step_of(d_a, d_b, d_c, n, factor, stream);                                                         \
  }                                                                                                             \
  Status bit_reverse_permute(F* d_a, int lg, Stream stream) { return permute(d_a, lg, stream); }
PP_GPU_NTT_ENTRY_POINTS(Fr)
PP_GPU_NTT_ENTRY_POINTS(bn254::Fr)
#undef PP_GPU_NTT_ENTRY_POINTS

}  // namespace pp::gpu
