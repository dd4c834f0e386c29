// SPDX-License-Identifier: Apache-2.0 OR MIT
// GPU MSM and batch addition kernels around the shared bodies of msm_kernels.hpp, and the
// host functions that queue them. Included once per curve (msm_g1.cu, msm_g2.cu), each of which
// instantiates PP_GPU_MSM_INSTANTIATE for its curve: the device compiler spends ~10 minutes on the
// two curves in one translation unit, and as two they build side by side.
// Nothing here allocates or synchronises: the workspace is carved from caller memory and every
// step is queued on the caller's stream.
#pragma once

#include <cub/device/device_radix_sort.cuh>
#include <cuda_runtime.h>

#include <string>
#include <type_traits>

#include "cuda_status.cuh"
#include "device.cuh"
#include "msm_kernels.hpp"
#include "proofpipe/gpu/msm.hpp"

namespace pp::gpu {

namespace {

constexpr int kThreads = 128;           // accumulation / reduction block size

unsigned blocks_for(uint64_t items, unsigned threads = kThreads) { return unsigned((items + threads - 1) / threads); }

template <bool kCanonical, class S>
__global__ void digits_kernel(const S* __restrict__ scalars, uint32_t n, int c, int w0, int windows, int copies,
                              uint32_t null_key, uint32_t* keys, uint32_t* values) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) digit_entries(scalars[i], kCanonical, i, n, c, w0, windows, copies, null_key, keys, values);
}

template <class C>
__global__ void shift_kernel(const Affine<C>* prev, Affine<C>* out, uint64_t n, int c) {
  const uint64_t t = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  shift_batch(prev, out, n, t * kShiftBatch, c);
}

// G1 of either curve: coordinates in the prime field (G2's are in Fp2, which has a Base).
template <class C>
constexpr bool kG1 = !requires { typename C::Field::Base; };

// Resident blocks per SM the batch-addition kernel is compiled for: enough warps per scheduler
// to hide the latency of the dependent multiply-add chains (G2: 2, its 255 registers).
template <class C>
constexpr int kBatchBlocks = kG1<C> ? 4 : 2;
// The same for the accumulation kernel (segments_kernel). G1 runs 3 blocks (168 registers, no
// spill) rather than 4 (128 registers, which spill): its warps wait mostly on fixed-latency
// dependencies either way, so a quarter fewer warps costs less than the spills and the tighter
// schedule. G2 at 3 blocks spills on every addition, which costs far more than the extra warps
// gain (docs/perf-history/gpu-kernels-v1-v9.md).
template <class C>
constexpr int kSegmentBlocks = kG1<C> ? 3 : 2;

// An accumulation thread's ZZ and ZZZ in shared memory (segment_sums' Sides): 16-byte chunks,
// chunk k of thread t at (k·kThreads + t)·16 bytes, so a warp's access to one chunk covers
// consecutive 16-byte words (no bank conflicts). The asm keeps each access where the formula
// has it (the compiler would otherwise forward stores to loads and keep the values in registers,
// which is what this is for not to do).
template <class F>
struct SharedSides {
  static constexpr int kChunks = int(sizeof(F) / 16);
  static_assert(sizeof(F) % 16 == 0, "a field element is whole 16-byte chunks");
  uint32_t base;  // shared address of this thread's chunk 0 of ZZ

  __device__ PP_INLINE F load(int k) const {
    F v;
    uint32_t* w = reinterpret_cast<uint32_t*>(&v);
#pragma unroll
    for (int i = 0; i < kChunks; ++i) {
      const uint32_t a = base + uint32_t(k * kChunks + i) * kThreads * 16u;
      asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(w[4 * i]), "=r"(w[4 * i + 1]), "=r"(w[4 * i + 2]), "=r"(w[4 * i + 3])
                   : "r"(a)
                   : "memory");
    }
    return v;
  }
  __device__ PP_INLINE void store(int k, const F& v) {
    const uint32_t* w = reinterpret_cast<const uint32_t*>(&v);
#pragma unroll
    for (int i = 0; i < kChunks; ++i) {
      const uint32_t a = base + uint32_t(k * kChunks + i) * kThreads * 16u;
      asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};"
                   :
                   : "r"(a), "r"(w[4 * i]), "r"(w[4 * i + 1]), "r"(w[4 * i + 2]), "r"(w[4 * i + 3])
                   : "memory");
    }
  }
};

template <class C>
__global__ void __launch_bounds__(kThreads, kSegmentBlocks<C>)
    segments_kernel(const uint32_t* __restrict__ keys, const uint32_t* __restrict__ values, uint64_t n, uint32_t seg,
                    const Affine<C>* __restrict__ points, uint32_t null_key, XYZZ<C>* buckets, XYZZ<C>* head,
                    XYZZ<C>* tail, uint64_t segments) {
  using F = typename C::Field;
  __shared__ uint4 sides_memory[2 * SharedSides<F>::kChunks * kThreads];
  const uint64_t s = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  SharedSides<F> sides{uint32_t(__cvta_generic_to_shared(sides_memory)) + threadIdx.x * 16u};
  if (s < segments) segment_sums(s, seg, keys, values, n, points, null_key, buckets, head, tail, sides);
}

template <class C>
__global__ void chains_kernel(const uint32_t* __restrict__ keys, uint64_t n, uint32_t seg, uint32_t null_key,
                              XYZZ<C>* buckets, const XYZZ<C>* head, const XYZZ<C>* tail, uint64_t segments,
                              uint64_t* long_chains, unsigned int* long_count) {
  const uint64_t s = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s >= segments) return;
  uint64_t last = 0;
  if (chain_sums(s, seg, keys, n, null_key, buckets, head, tail, &last) == kChainLong) {
    const unsigned int slot = atomicAdd(long_count, 1u);
    long_chains[2 * slot] = s;
    long_chains[2 * slot + 1] = last;
  }
}

// One block per long chain (grid = an upper bound; blocks past the count exit): a strided
// partial sum per thread, then a shared-memory tree, tail added by thread 0.
template <class C>
__global__ void __launch_bounds__(kThreads) long_chains_kernel(const uint32_t* __restrict__ keys, uint32_t seg,
                                                               XYZZ<C>* buckets,
                                                               const XYZZ<C>* head, const XYZZ<C>* tail,
                                                               const uint64_t* long_chains,
                                                               const unsigned int* long_count) {
  if (blockIdx.x >= *long_count) return;
  __shared__ XYZZ<C> sh[kThreads];
  const uint64_t s = long_chains[2 * blockIdx.x], last = long_chains[2 * blockIdx.x + 1];
  XYZZ<C> acc = XYZZ<C>::infinity();
  for (uint64_t t = s + 1 + threadIdx.x; t <= last; t += kThreads) add_from(acc, head + t);
  sh[threadIdx.x] = acc;
  __syncthreads();
  for (unsigned half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) sh[threadIdx.x] = sh[threadIdx.x] + sh[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) buckets[keys[(s + 1) * seg - 1]] = sh[0] + tail[s];
}

// Step 5 over `rows` rows at once (a row: `count` items from row·stride at `items`, in chunks of
// `chunk`; thread i = (row i / chunks, chunk i % chunks)): the scan first, then level 1's local
// sums and totals (bucket_chunk_local) or level 2's offset sums (bucket_chunk_total).
template <class C>
__global__ void bucket_scan_kernel(XYZZ<C>* items, uint64_t stride, uint32_t count, uint32_t chunk, uint32_t chunks,
                                   uint32_t rows) {
  const uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= uint64_t(chunks) * rows) return;
  bucket_chunk_scan(items + i / chunks * stride, count, chunk, uint32_t(i % chunks));
}
template <class C>
__global__ void bucket_local_kernel(const XYZZ<C>* buckets, uint32_t num_buckets, uint32_t chunk, uint32_t chunks,
                                    uint32_t sets, XYZZ<C>* local, XYZZ<C>* totals) {
  const uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= uint64_t(chunks) * sets) return;
  const XYZZ<C>* set = buckets + i / chunks * num_buckets;
  local[i] = bucket_chunk_local(set, num_buckets, chunk, uint32_t(i % chunks));
  totals[i] = set[uint64_t(i % chunks) * chunk];
}
template <class C>
__global__ void bucket_total_kernel(const XYZZ<C>* items, uint64_t stride, uint32_t count, uint32_t chunk,
                                    uint32_t chunks, uint32_t rows, XYZZ<C>* out) {
  const uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= uint64_t(chunks) * rows) return;
  out[i] = bucket_chunk_total(items + i / chunks * stride, count, chunk, uint32_t(i % chunks));
}
// Set w's sum from its two tree sums (level 1 at sums[w], level 2 at sums[sets + w]).
template <class C>
__global__ void set_sum_kernel(const XYZZ<C>* sums, uint32_t sets, uint32_t chunk, XYZZ<C>* out, bool accumulate) {
  const uint32_t w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w >= sets) return;
  const XYZZ<C> r = bucket_set_sum(sums[w], sums[sets + w], chunk);
  out[w] = accumulate ? out[w] + r : r;
}

template <class C>
__global__ void __launch_bounds__(kThreads, kBatchBlocks<C>)
    batch_words_kernel(const Affine<C>* __restrict__ points, const uint64_t* __restrict__ bitmap, uint64_t n,
                       XYZZ<C>* out, uint64_t words) {
  const uint64_t t = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t < words) out[t] = batch_word_sum(points, bitmap, n, t);
}

// Row r = blockIdx.y of `in` (rows of m items, stride m): block b folds its items
// [b·kTreeItems, ...) into out[r·gridDim.x + b] — strided partial sums, then a shared tree.
template <class C>
__global__ void __launch_bounds__(kThreads) tree_kernel(const XYZZ<C>* __restrict__ in, uint64_t m, XYZZ<C>* out,
                                                        bool accumulate) {
  __shared__ XYZZ<C> s[kThreads];
  const XYZZ<C>* row = in + uint64_t(blockIdx.y) * m;
  const uint64_t begin = uint64_t(blockIdx.x) * kTreeItems;
  const uint64_t end = begin + kTreeItems < m ? begin + kTreeItems : m;
  XYZZ<C> acc = XYZZ<C>::infinity();
  for (uint64_t i = begin + threadIdx.x; i < end; i += kThreads) add_from(acc, row + i);
  s[threadIdx.x] = acc;
  __syncthreads();
  for (unsigned half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) s[threadIdx.x] = s[threadIdx.x] + s[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    XYZZ<C>& o = out[uint64_t(blockIdx.y) * gridDim.x + blockIdx.x];
    o = accumulate ? o + s[0] : s[0];
  }
}

// Folds `rows` rows of m points each (contiguous, stride m) at `in` to one point per row at
// out[0 .. rows) (or adds them to out when accumulating). `scratch` holds
// rows·ceil(m / kTreeItems) points; `in` is overwritten.
template <class C>
void tree_sum(XYZZ<C>* in, uint64_t m, unsigned rows, XYZZ<C>* scratch, XYZZ<C>* out, bool accumulate,
              Stream stream) {
  while (m > kTreeItems) {
    const uint64_t blocks = (m + kTreeItems - 1) / kTreeItems;
    device::launch(tree_kernel<C>, dim3(unsigned(blocks), rows), kThreads, 0, stream, in, m, scratch, false);
    std::swap(in, scratch);  // the next round reads scratch and writes into in (larger)
    m = blocks;
  }
  device::launch(tree_kernel<C>, dim3(1, rows), kThreads, 0, stream, in, m, out, accumulate);
}

// The pieces of the MSM workspace.
template <class C>
struct MsmSpace {
  uint32_t *keys, *values, *keys_alt, *values_alt;
  void* sort_temp;
  std::size_t sort_bytes;
  XYZZ<C> *buckets, *head, *tail, *chunks, *totals, *level2, *set_sums, *scratch;
  uint64_t* long_chains;
  unsigned int* long_count;
  std::size_t total;
};

// The workspace cut as msm_layout (msm.hpp) lays it out, with CUB's own sort-storage query.
template <class C>
MsmSpace<C> carve_msm(void* base, const MsmShape& sh) {
  MsmSpace<C> s{};
  cub::DoubleBuffer<uint32_t> k(nullptr, nullptr), v(nullptr, nullptr);
  s.sort_bytes = 0;
  cub::DeviceRadixSort::SortPairs(nullptr, s.sort_bytes, k, v, int(sh.entries()), 0, sh.sort_bits());
  const MsmLayout l = msm_layout(sh, sh.entries(), sh.segments(), sizeof(XYZZ<C>), s.sort_bytes);
  char* b = static_cast<char*>(base);
  const auto at = [&](std::size_t offset) { return b ? static_cast<void*>(b + offset) : nullptr; };
  s.keys = static_cast<uint32_t*>(at(l.keys));
  s.values = static_cast<uint32_t*>(at(l.values));
  s.keys_alt = static_cast<uint32_t*>(at(l.keys_alt));
  s.values_alt = static_cast<uint32_t*>(at(l.values_alt));
  s.sort_temp = at(l.sort_temp);
  s.buckets = static_cast<XYZZ<C>*>(at(l.buckets));
  s.head = static_cast<XYZZ<C>*>(at(l.head));
  s.tail = static_cast<XYZZ<C>*>(at(l.tail));
  s.chunks = static_cast<XYZZ<C>*>(at(l.chunks));
  s.totals = static_cast<XYZZ<C>*>(at(l.totals));
  s.level2 = static_cast<XYZZ<C>*>(at(l.level2));
  s.set_sums = static_cast<XYZZ<C>*>(at(l.set_sums));
  s.scratch = static_cast<XYZZ<C>*>(at(l.scratch));
  s.long_chains = static_cast<uint64_t*>(at(l.long_chains));
  s.long_count = static_cast<unsigned int*>(at(l.long_count));
  s.total = l.total;
  return s;
}

}  // namespace

template <class C>
std::size_t msm_workspace_bytes(const MsmShape& shape) {
  return carve_msm<C>(nullptr, shape).total;
}

template <class C>
Status msm(const Affine<C>* d_points, const typename C::Scalar* d_scalars, const MsmShape& sh, void* d_workspace,
           std::size_t workspace_bytes, XYZZ<C>* d_window_sums, Stream stream, const MsmTrace* trace,
           bool accumulate) {
  if (d_window_sums == nullptr) return Status::invalid("pp::gpu::msm: null result pointer");
  const bool timed = trace != nullptr && trace->events != nullptr && trace->count >= msm_trace_events(sh);
  std::size_t next_event = 0;
  auto mark = [&] {
    if (timed) device::EventRecord(trace->events[next_event++], stream);
  };
  if (sh.c < kMinWindow || sh.c > kMaxWindow || sh.copies < 1 || sh.copies > sh.windows() || sh.batch < 1 ||
      sh.batch > sh.sets() || sh.entries() >= (std::size_t(1) << 31))
    return Status::invalid("pp::gpu::msm: shape not made by make_msm_shape");
  if (sh.n == 0)
    return accumulate ? Status{}
                      : from_cuda(device::MemsetAsync(d_window_sums, 0, sizeof(XYZZ<C>) * sh.sets(), stream),
                                  "pp::gpu::msm");
  if (d_points == nullptr || d_scalars == nullptr || d_workspace == nullptr)
    return Status::invalid("pp::gpu::msm: null pointer");
  MsmSpace<C> ws = carve_msm<C>(d_workspace, sh);
  if (workspace_bytes < ws.total)
    return Status::invalid("pp::gpu::msm: workspace of " + std::to_string(workspace_bytes) + " bytes, " +
                           std::to_string(ws.total) + " needed");
  const uint32_t n = uint32_t(sh.n);
  const uint32_t null_key = sh.null_key();
  mark();
  if (Status s = from_cuda(device::MemsetAsync(ws.buckets, 0, sizeof(XYZZ<C>) * sh.buckets() * sh.sets(), stream),
                           "pp::gpu::msm: clear buckets");
      !s)
    return s;
  for (int p = 0; p < sh.passes(); ++p) {
    const int j = p * sh.batch, windows = sh.pass_windows(p);  // first set, windows of this pass
    XYZZ<C>* bw = ws.buckets + std::size_t(j) * sh.buckets();
    const uint64_t m = uint64_t(n) * uint64_t(windows);  // this pass's entries
    const uint64_t segs = (m + sh.segment() - 1) / sh.segment();
    device::launch(sh.canonical ? digits_kernel<true, typename C::Scalar> : digits_kernel<false, typename C::Scalar>, blocks_for(n, 256), 256, 0, stream,
                   d_scalars, n, sh.c, j * sh.copies, windows, sh.copies, null_key, ws.keys, ws.values);
    mark();
    cub::DoubleBuffer<uint32_t> k(ws.keys, ws.keys_alt), v(ws.values, ws.values_alt);
    std::size_t temp = ws.sort_bytes;
    if (cudaError_t e = device::algorithm(
            cub::DeviceRadixSort::SortPairs(ws.sort_temp, temp, k, v, int(m), 0, sh.sort_bits(), stream));
        e != cudaSuccess)
      return from_cuda(e, "pp::gpu::msm: radix sort");
    mark();
    if (Status s = from_cuda(device::MemsetAsync(ws.long_count, 0, sizeof(unsigned int), stream), "pp::gpu::msm"); !s)
      return s;
    device::launch(segments_kernel<C>, blocks_for(segs), kThreads, 0, stream, k.Current(), v.Current(), m, sh.segment(),
                   d_points, null_key, bw, ws.head, ws.tail, segs);
    mark();
    device::launch(chains_kernel<C>, blocks_for(segs), kThreads, 0, stream, k.Current(), m, sh.segment(), null_key, bw,
                   ws.head, ws.tail, segs, ws.long_chains, ws.long_count);
    device::launch(long_chains_kernel<C>, unsigned(max_long_chains(segs)), kThreads, 0, stream, k.Current(),
                   sh.segment(), bw, ws.head, ws.tail, ws.long_chains, ws.long_count);
    mark();
  }
  const uint32_t sets = uint32_t(sh.sets()), chunk = sh.reduce_chunk(), chunks = sh.reduce_chunks();
  const uint64_t all_chunks = uint64_t(chunks) * sets;
  device::launch(bucket_scan_kernel<C>, blocks_for(all_chunks), kThreads, 0, stream, ws.buckets, uint64_t(sh.buckets()),
                 sh.buckets(), chunk, chunks, sets);
  device::launch(bucket_local_kernel<C>, blocks_for(all_chunks), kThreads, 0, stream, ws.buckets, sh.buckets(), chunk,
                 chunks, sets, ws.chunks, ws.totals);
  const uint32_t chunk2 = sh.reduce_chunk2(), chunks2 = sh.reduce_chunks2();
  if (chunks2 > 0) {
    const uint64_t all2 = uint64_t(chunks2) * sets;
    device::launch(bucket_scan_kernel<C>, blocks_for(all2), kThreads, 0, stream, ws.totals + 1, uint64_t(chunks),
                   chunks - 1, chunk2, chunks2, sets);
    device::launch(bucket_total_kernel<C>, blocks_for(all2), kThreads, 0, stream, ws.totals + 1, uint64_t(chunks),
                   chunks - 1, chunk2, chunks2, sets, ws.level2);
    tree_sum<C>(ws.level2, chunks2, sets, ws.scratch, ws.set_sums + sets, false, stream);
  } else if (Status s = from_cuda(device::MemsetAsync(ws.set_sums + sets, 0, sizeof(XYZZ<C>) * sets, stream),
                                  "pp::gpu::msm");
             !s) {
    return s;
  }
  tree_sum<C>(ws.chunks, chunks, sets, ws.scratch, ws.set_sums, false, stream);
  device::launch(set_sum_kernel<C>, blocks_for(sets), kThreads, 0, stream, ws.set_sums, sets, chunk, d_window_sums,
                 accumulate);
  mark();
  return last_error("pp::gpu::msm");
}

template <class C>
Status msm_wait(const Affine<C>* d_points, const typename C::Scalar* d_scalars, const MsmShape& shape, void* d_workspace,
                std::size_t workspace_bytes, XYZZ<C>* d_window_sums, XYZZ<C>* host_sums, Stream stream,
                Jacobian<C>* result) {
  if (host_sums == nullptr || result == nullptr) return Status::invalid("pp::gpu::msm_wait: null pointer");
  if (Status s = msm<C>(d_points, d_scalars, shape, d_workspace, workspace_bytes, d_window_sums, stream); !s) return s;
  if (Status s = from_cuda(device::MemcpyAsync(host_sums, d_window_sums, sizeof(XYZZ<C>) * shape.sets(),
                                           cudaMemcpyDeviceToHost, stream),
                           "pp::gpu::msm_wait");
      !s)
    return s;
  if (Status s = from_cuda(device::StreamSynchronize(stream), "pp::gpu::msm_wait"); !s) return s;
  *result = msm_combine<C>(host_sums, shape);
  return {};
}

namespace {
template <class C>
struct BatchSpace {
  XYZZ<C> *chunks, *scratch;
  std::size_t total;
};
template <class C>
BatchSpace<C> carve_batch(void* base, std::size_t n) {
  const BatchLayout l = batch_add_layout(n, sizeof(XYZZ<C>));
  char* b = static_cast<char*>(base);
  BatchSpace<C> s{};
  s.chunks = b ? reinterpret_cast<XYZZ<C>*>(b + l.chunks) : nullptr;
  s.scratch = b ? reinterpret_cast<XYZZ<C>*>(b + l.scratch) : nullptr;
  s.total = l.total;
  return s;
}
}  // namespace

template <class C>
Status precompute_bases(Affine<C>* d_table, std::size_t n, int c, int copies, Stream stream) {
  if (c < kMinWindow || c > kMaxWindow || copies < 1)
    return Status::invalid("pp::gpu::precompute_bases: window " + std::to_string(c) + ", " + std::to_string(copies) +
                           " copies");
  if (n == 0 || copies == 1) return {};
  if (d_table == nullptr) return Status::invalid("pp::gpu::precompute_bases: null table");
  const uint64_t batches = (n + kShiftBatch - 1) / kShiftBatch;
  for (int k = 1; k < copies; ++k)
    device::launch(shift_kernel<C>, blocks_for(batches), kThreads, 0, stream, d_table + std::size_t(k - 1) * n,
                   d_table + std::size_t(k) * n, uint64_t(n), c);
  return last_error("pp::gpu::precompute_bases");
}

template <class C>
std::size_t batch_add_workspace_bytes(std::size_t n) {
  return carve_batch<C>(nullptr, n).total;
}

template <class C>
Status batch_add(const Affine<C>* d_points, const uint64_t* d_bitmap, std::size_t n, void* d_workspace,
                 std::size_t workspace_bytes, XYZZ<C>* d_sum, Stream stream, bool accumulate) {
  if (d_sum == nullptr) return Status::invalid("pp::gpu::batch_add: null result pointer");
  if (n == 0)
    return accumulate ? Status{}
                      : from_cuda(device::MemsetAsync(d_sum, 0, sizeof(XYZZ<C>), stream), "pp::gpu::batch_add");
  if (d_points == nullptr || d_bitmap == nullptr || d_workspace == nullptr)
    return Status::invalid("pp::gpu::batch_add: null pointer");
  BatchSpace<C> ws = carve_batch<C>(d_workspace, n);
  if (workspace_bytes < ws.total)
    return Status::invalid("pp::gpu::batch_add: workspace of " + std::to_string(workspace_bytes) + " bytes, " +
                           std::to_string(ws.total) + " needed");
  const uint64_t chunks = (n + 63) / 64;
  device::launch(batch_words_kernel<C>, blocks_for(chunks), kThreads, 0, stream, d_points, d_bitmap, n, ws.chunks, chunks);
  tree_sum<C>(ws.chunks, chunks, 1, ws.scratch, d_sum, accumulate, stream);
  return last_error("pp::gpu::batch_add");
}

#define PP_GPU_MSM_INSTANTIATE(C)                                                                              \
  template std::size_t msm_workspace_bytes<C>(const MsmShape&);                                              \
  template Status msm<C>(const Affine<C>*, const typename C::Scalar*, const MsmShape&, void*, std::size_t, XYZZ<C>*, Stream,      \
                         const MsmTrace*, bool);                                                               \
  template Status msm_wait<C>(const Affine<C>*, const typename C::Scalar*, const MsmShape&, void*, std::size_t, XYZZ<C>*, XYZZ<C>*, \
                              Stream, Jacobian<C>*);                                                           \
  template Status precompute_bases<C>(Affine<C>*, std::size_t, int, int, Stream);                            \
  template std::size_t batch_add_workspace_bytes<C>(std::size_t);                                            \
  template Status batch_add<C>(const Affine<C>*, const uint64_t*, std::size_t, void*, std::size_t, XYZZ<C>*,     \
                               Stream, bool);

}  // namespace pp::gpu
