// GPU MSM and batch addition kernels around the shared bodies of msm_kernels.hpp.
// Nothing here allocates or synchronises: the workspace is carved from caller memory and every
// step is queued on the caller's stream.

#include <cub/device/device_radix_sort.cuh>
#include <cuda_runtime.h>

#include <string>

#include "cuda_status.cuh"
#include "proofpipe/gpu/msm.hpp"

namespace pp::gpu {

namespace {

constexpr int kThreads = 128;           // accumulation / reduction block size
constexpr uint32_t kTreeItems = 1024;   // items one reduction block folds into one

unsigned blocks_for(uint64_t items, unsigned threads = kThreads) { return unsigned((items + threads - 1) / threads); }

// Bump allocator over the caller's workspace (256-byte aligned pieces). With base == nullptr
// it only measures.
struct Carve {
  char* base;
  std::size_t used = 0;
  template <class T>
  T* take(std::size_t count) {
    used = (used + 255) & ~std::size_t(255);
    T* p = base ? reinterpret_cast<T*>(base + used) : nullptr;
    used += count * sizeof(T);
    return p;
  }
};

__global__ void digits_kernel(const Fr* __restrict__ scalars, uint32_t n, int c, int w, uint32_t* keys,
                              uint32_t* values) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) digit_entry(scalars[i], i, c, w, keys[i], values[i]);
}

template <class C>
__global__ void segments_kernel(const uint32_t* __restrict__ keys, const uint32_t* __restrict__ values, uint64_t n,
                                const Affine<C>* __restrict__ points, uint32_t null_key, XYZZ<C>* buckets,
                                XYZZ<C>* head, XYZZ<C>* tail, uint64_t segments) {
  const uint64_t s = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s < segments) segment_sums(s, keys, values, n, points, null_key, buckets, head, tail);
}

template <class C>
__global__ void chains_kernel(const uint32_t* __restrict__ keys, uint64_t n, uint32_t null_key, XYZZ<C>* buckets,
                              const XYZZ<C>* head, const XYZZ<C>* tail, uint64_t segments) {
  const uint64_t s = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s < segments) chain_sums(s, keys, n, null_key, buckets, head, tail);
}

template <class C>
__global__ void bucket_chunks_kernel(const XYZZ<C>* __restrict__ buckets, uint32_t num_buckets, XYZZ<C>* out,
                                     uint32_t chunks) {
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < chunks) out[t] = bucket_chunk_sum(buckets, num_buckets, t);
}

template <class C>
__global__ void batch_chunks_kernel(const Affine<C>* __restrict__ points, const uint64_t* __restrict__ bitmap,
                                    uint64_t n, XYZZ<C>* out, uint64_t chunks) {
  const uint64_t t = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t < chunks) out[t] = batch_chunk_sum(points, bitmap, n, t);
}

// Block b folds in[b·kTreeItems, ...) into out[b]: strided partial sums, then a shared tree.
template <class C>
__global__ void __launch_bounds__(kThreads) tree_kernel(const XYZZ<C>* __restrict__ in, uint64_t m, XYZZ<C>* out) {
  __shared__ XYZZ<C> s[kThreads];
  const uint64_t begin = uint64_t(blockIdx.x) * kTreeItems;
  const uint64_t end = begin + kTreeItems < m ? begin + kTreeItems : m;
  XYZZ<C> acc = XYZZ<C>::infinity();
  for (uint64_t i = begin + threadIdx.x; i < end; i += kThreads) acc += in[i];
  s[threadIdx.x] = acc;
  __syncthreads();
  for (unsigned half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) s[threadIdx.x] = s[threadIdx.x] + s[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}

template <class C>
__global__ void combine_kernel(const XYZZ<C>* window_sums, int windows, int c, Jacobian<C>* result) {
  *result = combine_windows(window_sums, windows, c);
}

template <class C>
__global__ void to_jacobian_kernel(const XYZZ<C>* in, Jacobian<C>* result) {
  *result = in->to_jacobian();
}

// Folds m points at `in` to one at `out` (scratch: ceil(m / kTreeItems) points; may alias in's
// storage only when m <= kTreeItems).
template <class C>
void tree_sum(XYZZ<C>* in, uint64_t m, XYZZ<C>* scratch, XYZZ<C>* out, Stream stream) {
  while (m > kTreeItems) {
    const uint64_t blocks = (m + kTreeItems - 1) / kTreeItems;
    tree_kernel<C><<<unsigned(blocks), kThreads, 0, stream>>>(in, m, scratch);
    // The next round reads scratch and writes back into in (it is at least as large).
    std::swap(in, scratch);
    m = blocks;
  }
  tree_kernel<C><<<1, kThreads, 0, stream>>>(in, m, out);
}

// The pieces of the MSM workspace.
template <class C>
struct MsmSpace {
  uint32_t *keys, *values, *keys_alt, *values_alt;
  void* sort_temp;
  std::size_t sort_bytes;
  XYZZ<C> *buckets, *head, *tail, *chunks, *scratch, *window_sums;
  std::size_t total;
};

template <class C>
MsmSpace<C> carve_msm(void* base, const MsmShape& sh) {
  MsmSpace<C> s{};
  Carve cv{static_cast<char*>(base)};
  s.keys = cv.take<uint32_t>(sh.n);
  s.values = cv.take<uint32_t>(sh.n);
  s.keys_alt = cv.take<uint32_t>(sh.n);
  s.values_alt = cv.take<uint32_t>(sh.n);
  cub::DoubleBuffer<uint32_t> k(nullptr, nullptr), v(nullptr, nullptr);
  s.sort_bytes = 0;
  cub::DeviceRadixSort::SortPairs(nullptr, s.sort_bytes, k, v, int(sh.n), 0, sh.c);
  s.sort_temp = cv.take<char>(s.sort_bytes);
  s.buckets = cv.take<XYZZ<C>>(sh.buckets());
  s.head = cv.take<XYZZ<C>>(sh.segments());
  s.tail = cv.take<XYZZ<C>>(sh.segments());
  s.chunks = cv.take<XYZZ<C>>(sh.reduce_chunks());
  s.scratch = cv.take<XYZZ<C>>((sh.reduce_chunks() + kTreeItems - 1) / kTreeItems);
  s.window_sums = cv.take<XYZZ<C>>(std::size_t(sh.windows()));
  s.total = cv.used;
  return s;
}

}  // namespace

template <class C>
std::size_t msm_workspace_bytes(const MsmShape& shape) {
  return carve_msm<C>(nullptr, shape).total;
}

template <class C>
Status msm(const Affine<C>* d_points, const Fr* d_scalars, const MsmShape& sh, void* d_workspace,
           std::size_t workspace_bytes, Jacobian<C>* d_result, Stream stream) {
  if (d_result == nullptr) return Status::invalid("pp::gpu::msm: null result pointer");
  if (sh.c < kMinWindow || sh.c > kMaxWindow) return Status::invalid("pp::gpu::msm: shape not made by make_msm_shape");
  if (sh.n == 0) {
    const Jacobian<C> inf = Jacobian<C>::infinity();
    return from_cuda(cudaMemcpyAsync(d_result, &inf, sizeof inf, cudaMemcpyHostToDevice, stream), "pp::gpu::msm");
  }
  if (d_points == nullptr || d_scalars == nullptr || d_workspace == nullptr)
    return Status::invalid("pp::gpu::msm: null pointer");
  MsmSpace<C> ws = carve_msm<C>(d_workspace, sh);
  if (workspace_bytes < ws.total)
    return Status::invalid("pp::gpu::msm: workspace of " + std::to_string(workspace_bytes) + " bytes, " +
                           std::to_string(ws.total) + " needed");
  const uint32_t n = uint32_t(sh.n);
  const uint32_t null_key = kNullKey(sh.c);
  for (int w = 0; w < sh.windows(); ++w) {
    digits_kernel<<<blocks_for(n, 256), 256, 0, stream>>>(d_scalars, n, sh.c, w, ws.keys, ws.values);
    cub::DoubleBuffer<uint32_t> k(ws.keys, ws.keys_alt), v(ws.values, ws.values_alt);
    std::size_t temp = ws.sort_bytes;
    if (cudaError_t e = cub::DeviceRadixSort::SortPairs(ws.sort_temp, temp, k, v, int(n), 0, sh.c, stream);
        e != cudaSuccess)
      return from_cuda(e, "pp::gpu::msm: radix sort");
    if (Status s = from_cuda(cudaMemsetAsync(ws.buckets, 0, sizeof(XYZZ<C>) * sh.buckets(), stream), "pp::gpu::msm");
        !s)
      return s;
    const uint64_t segs = sh.segments();
    segments_kernel<C><<<blocks_for(segs), kThreads, 0, stream>>>(k.Current(), v.Current(), n, d_points, null_key,
                                                                  ws.buckets, ws.head, ws.tail, segs);
    chains_kernel<C><<<blocks_for(segs), kThreads, 0, stream>>>(k.Current(), n, null_key, ws.buckets, ws.head,
                                                                ws.tail, segs);
    bucket_chunks_kernel<C><<<blocks_for(sh.reduce_chunks()), kThreads, 0, stream>>>(ws.buckets, sh.buckets(),
                                                                                    ws.chunks, sh.reduce_chunks());
    tree_sum<C>(ws.chunks, sh.reduce_chunks(), ws.scratch, ws.window_sums + w, stream);
  }
  combine_kernel<C><<<1, 1, 0, stream>>>(ws.window_sums, sh.windows(), sh.c, d_result);
  return last_error("pp::gpu::msm");
}

namespace {
template <class C>
struct BatchSpace {
  XYZZ<C> *chunks, *scratch, *sum;
  std::size_t total;
};
template <class C>
BatchSpace<C> carve_batch(void* base, std::size_t n) {
  Carve cv{static_cast<char*>(base)};
  BatchSpace<C> s{};
  const std::size_t chunks = (n + kBatchChunk - 1) / kBatchChunk;
  s.chunks = cv.take<XYZZ<C>>(chunks);
  s.scratch = cv.take<XYZZ<C>>((chunks + kTreeItems - 1) / kTreeItems);
  s.sum = cv.take<XYZZ<C>>(1);
  s.total = cv.used;
  return s;
}
}  // namespace

template <class C>
std::size_t batch_add_workspace_bytes(std::size_t n) {
  return carve_batch<C>(nullptr, n).total;
}

template <class C>
Status batch_add(const Affine<C>* d_points, const uint64_t* d_bitmap, std::size_t n, void* d_workspace,
                 std::size_t workspace_bytes, Jacobian<C>* d_result, Stream stream) {
  if (d_result == nullptr) return Status::invalid("pp::gpu::batch_add: null result pointer");
  if (n == 0) {
    const Jacobian<C> inf = Jacobian<C>::infinity();
    return from_cuda(cudaMemcpyAsync(d_result, &inf, sizeof inf, cudaMemcpyHostToDevice, stream),
                     "pp::gpu::batch_add");
  }
  if (d_points == nullptr || d_bitmap == nullptr || d_workspace == nullptr)
    return Status::invalid("pp::gpu::batch_add: null pointer");
  BatchSpace<C> ws = carve_batch<C>(d_workspace, n);
  if (workspace_bytes < ws.total)
    return Status::invalid("pp::gpu::batch_add: workspace of " + std::to_string(workspace_bytes) + " bytes, " +
                           std::to_string(ws.total) + " needed");
  const uint64_t chunks = (n + kBatchChunk - 1) / kBatchChunk;
  batch_chunks_kernel<C><<<blocks_for(chunks), kThreads, 0, stream>>>(d_points, d_bitmap, n, ws.chunks, chunks);
  tree_sum<C>(ws.chunks, chunks, ws.scratch, ws.sum, stream);
  to_jacobian_kernel<C><<<1, 1, 0, stream>>>(ws.sum, d_result);
  return last_error("pp::gpu::batch_add");
}

#define PP_GPU_MSM_INSTANTIATE(C)                                                                              \
  template std::size_t msm_workspace_bytes<C>(const MsmShape&);                                              \
  template Status msm<C>(const Affine<C>*, const Fr*, const MsmShape&, void*, std::size_t, Jacobian<C>*, Stream); \
  template std::size_t batch_add_workspace_bytes<C>(std::size_t);                                            \
  template Status batch_add<C>(const Affine<C>*, const uint64_t*, std::size_t, void*, std::size_t, Jacobian<C>*, \
                               Stream);
PP_GPU_MSM_INSTANTIATE(G1Curve)
PP_GPU_MSM_INSTANTIATE(G2Curve)

}  // namespace pp::gpu
