// GPU NTT kernels: the pass, element-wise and table kernels around the shared bodies of
// ntt_kernels.hpp. Nothing here allocates or synchronises.

#include <cuda_runtime.h>

#include <string>

#include "proofpipe/gpu/ntt.hpp"
#include "cuda_status.cuh"
#include "device.cuh"

namespace pp::gpu {

namespace {

constexpr int kElementwiseBlock = 256;

__global__ void tables_kernel(Fr* out, std::size_t count, NttRoots roots, int lg) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) out[i] = table_entry(roots, lg, i);
}

// One block = pass.cols columns of K points in shared memory; one thread per butterfly.
template <bool kDif>
__global__ void __launch_bounds__(kBlockElements / 2) pass_kernel(Fr* a, NttPass p, const Fr* __restrict__ small,
                                                                  const Fr* __restrict__ lo, const Fr* __restrict__ hi,
                                                                  int b, int small_lg) {
  extern __shared__ uint64_t mem[];
  const uint64_t block = blockIdx.x;
  const uint32_t n = p.elements_per_block();
  const LimbSlots s{mem, n};
  for (uint32_t e = threadIdx.x; e < n; e += blockDim.x) {
    Fr v = a[p.global_index(block, e)];
    if (!kDif && p.m != 0) v = v * two_level_pow(lo, hi, b, p.twist_exponent(block, e));
    s.set(e, v);
  }
  __syncthreads();
  if (kDif) {
    for (int j = p.k - 1; j >= 0; --j) {
      dif_butterfly(s, p.cols, j, threadIdx.x, small, small_lg);
      __syncthreads();
    }
  } else {
    for (int j = 0; j < p.k; ++j) {
      dit_butterfly(s, p.cols, j, threadIdx.x, small, small_lg);
      __syncthreads();
    }
  }
  for (uint32_t e = threadIdx.x; e < n; e += blockDim.x) {
    Fr v = s.get(e);
    if (kDif && p.m != 0) v = v * two_level_pow(lo, hi, b, p.twist_exponent(block, e));
    a[p.global_index(block, e)] = v;
  }
}

__global__ void scale_kernel(Fr* a, std::size_t n, NttTables t, Scale kind, bool bit_reversed) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) scale_element(a, i, t, kind, bit_reversed);
}

__global__ void h_step_kernel(Fr* a, const Fr* __restrict__ b, const Fr* __restrict__ c, std::size_t n, Fr factor) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) h_step_element(a, b, c, i, factor);
}

__global__ void bit_reverse_kernel(Fr* a, std::size_t n, int lg) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const std::size_t r = bit_reverse(uint32_t(i), lg);
  if (i < r) {
    const Fr t = a[i];
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

}  // namespace

std::size_t ntt_tables_bytes(int lg) { return table_elements(lg) * sizeof(Fr); }

Status ntt_tables_init(void* d_tables, std::size_t bytes, int lg, const NttRoots& roots, Stream stream,
                       NttTables* out) {
  if (Status s = check_lg(lg); !s) return s;
  if (d_tables == nullptr || out == nullptr) return Status::invalid("pp::gpu::ntt_tables_init: null pointer");
  if (bytes < ntt_tables_bytes(lg))
    return Status::invalid("pp::gpu::ntt_tables_init: " + std::to_string(bytes) + " bytes given, " +
                           std::to_string(ntt_tables_bytes(lg)) + " needed");
  const std::size_t count = table_elements(lg);
  Fr* base = static_cast<Fr*>(d_tables);
  device::launch(tables_kernel, grid_for(count), kElementwiseBlock, 0, stream, base, count, roots, lg);
  // size_inv = 1/2^lg: the same value whichever omega, computed on the host.
  *out = bind_tables(base, lg, Fr::from_u64(uint64_t(1) << lg).inverse());
  return last_error("pp::gpu::ntt_tables_init");
}

Status ntt(Fr* d_a, const NttTables& t, const NttOp& op, Stream stream) {
  if (Status s = check_lg(t.lg); !s) return s;
  if (d_a == nullptr) return Status::invalid("pp::gpu::ntt: null data pointer");
  const std::size_t n = std::size_t(1) << t.lg;
  const NttSchedule s = schedule(op);
  const NttPlan plan = make_ntt_plan(t.lg);
  const Fr* small = s.inverse ? t.small_inv : t.small_fwd;
  const Fr* lo = s.inverse ? t.inv_lo : t.fwd_lo;
  const Fr* hi = s.inverse ? t.inv_hi : t.fwd_hi;

  if (s.pre != Scale::none) device::launch(scale_kernel, grid_for(n), kElementwiseBlock, 0, stream, d_a, n, t, s.pre, !s.dif);
  for (int i = 0; i < plan.count; ++i) {
    const NttPass& p = plan.pass[s.dif ? i : plan.count - 1 - i];
    const std::size_t smem = std::size_t(p.elements_per_block()) * sizeof(Fr);
    if (s.dif)
      device::launch(pass_kernel<true>, unsigned(p.blocks()), p.threads_per_block(), smem, stream, d_a, p, small, lo, hi, t.b,
                                                                                       t.small_lg);
    else
      device::launch(pass_kernel<false>, unsigned(p.blocks()), p.threads_per_block(), smem, stream, d_a, p, small, lo, hi, t.b,
                                                                                        t.small_lg);
  }
  if (s.post != Scale::none) device::launch(scale_kernel, grid_for(n), kElementwiseBlock, 0, stream, d_a, n, t, s.post, s.dif);
  if (s.permute_after) device::launch(bit_reverse_kernel, grid_for(n), kElementwiseBlock, 0, stream, d_a, n, t.lg);
  return last_error("pp::gpu::ntt");
}

Status h_step(Fr* d_a, const Fr* d_b, const Fr* d_c, std::size_t n, const Fr& factor, Stream stream) {
  if (n == 0) return {};
  if (d_a == nullptr || d_b == nullptr || d_c == nullptr) return Status::invalid("pp::gpu::h_step: null pointer");
  device::launch(h_step_kernel, grid_for(n), kElementwiseBlock, 0, stream, d_a, d_b, d_c, n, factor);
  return last_error("pp::gpu::h_step");
}

Status bit_reverse_permute(Fr* d_a, int lg, Stream stream) {
  if (Status s = check_lg(lg); !s) return s;
  const std::size_t n = std::size_t(1) << lg;
  device::launch(bit_reverse_kernel, grid_for(n), kElementwiseBlock, 0, stream, d_a, n, lg);
  return last_error("pp::gpu::bit_reverse_permute");
}

}  // namespace pp::gpu
