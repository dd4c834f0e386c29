// SPDX-License-Identifier: Apache-2.0 OR MIT
// The GPU Groth16 prover (prover.hpp): one arena cut by the memory planner, two streams (copy:
// staging; compute: NTTs and MSMs) and a third for SRS chunks when the SRS is streamed, events
// between them, no allocation, free, memory query or device-wide synchronisation while proving.

#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <future>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cuda_status.cuh"
#include "device.cuh"
#include "prover_kernels.hpp"
#include "proofpipe/engine/backend.hpp"
#include "proofpipe/gpu/cuda_backend.hpp"
#include "proofpipe/gpu/msm.hpp"
#include "proofpipe/gpu/ntt.hpp"
#include "proofpipe/gpu/prover.hpp"

namespace pp::gpu {

namespace {

using engine::DeviceCall;
using engine::MemoryPlan;
using engine::SrsPlacement;


constexpr unsigned kBlock = 256;
unsigned grid_for(uint64_t n, unsigned block = kBlock) { return unsigned((n + block - 1) / block); }
uint64_t align_up(uint64_t x, uint64_t a = 256) { return (x + a - 1) / a * a; }

__global__ void popcount_kernel(const uint64_t* __restrict__ bitmap, uint64_t words, uint32_t* out) {
  const uint64_t t = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t < words) out[t] = uint32_t(popcount64(bitmap[t]));
}

template <class C>
__global__ void tail_gather_kernel(const uint64_t* __restrict__ bitmap, const uint32_t* __restrict__ rank,
                                   uint64_t words, uint64_t lo, uint64_t hi, const Affine<C>* __restrict__ points,
                                   const Fr* __restrict__ z, const uint32_t* __restrict__ vars, Affine<C>* out_points,
                                   Fr* out_scalars) {
  const uint64_t t = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t < words) tail_gather_word<C>(t, bitmap, rank, lo, hi, points, z, vars, out_points, out_scalars);
}

// Host callback in stream order: stamps the host clock when the device gets there.
void CUDART_CB stamp_now(void* arg) {
  static_cast<std::atomic<int64_t>*>(arg)->store(std::chrono::steady_clock::now().time_since_epoch().count());
}

// Timing events of one msm slot, in the order the stages record them.
enum Mark { kUploadStart, kUploadEnd, kStart, kNtt, kH, kL, kA, kB1, kB2, kMarks };

// One split query's inputs: the classes of its scalars and, with a streamed SRS, its tail's
// scalars in tail order and the tail and 1 counts of each SRS chunk.
struct SplitQuery {
  SplitBits bits;
  std::vector<Fr> tail;
  std::vector<std::size_t> tail_counts, ones_counts;
};

// A partition's split-MSM inputs, for the L, A and B queries (B_G1 and B_G2 share B's). Shared: the host
// functions that pack a streamed partition's chunks hold it until they have run, whatever
// becomes of the partition meanwhile. A pack that fails (it cannot once its counts were checked
// when it was queued, but nothing is assumed) is recorded here, and finish() gives no proof.
struct SplitInputs {
  SplitQuery l, a, b;
  std::atomic<int64_t> pack_ns{0};      // host time spent packing this partition's chunks
  std::atomic<uint64_t> pack_bytes{0};  // and the bytes packed (what crossed instead of the chunks)
  std::mutex failure_mutex;
  std::string failure;  // the first pack's failure; empty while none failed
  void fail(const std::string& what) {
    const std::lock_guard<std::mutex> lock(failure_mutex);
    if (failure.empty()) failure = what;
  }
  std::string failed() {
    const std::lock_guard<std::mutex> lock(failure_mutex);
    return failure;
  }
};

// One chunk's host-side packing (pack_chunk), run in stream order by a host function that owns
// the job and deletes it: `pack` writes the chunk into `out` and must give the counts the copies
// were queued with (`want`). It runs in `arena`, the prover's high-priority TBB arena: the
// device waits for it, so it goes before the host work that overlaps the device (the witness
// rows check, the next partitions' prepare).
struct PackJob {
  std::shared_ptr<SplitInputs> keep;
  tbb::task_arena* arena = nullptr;
  std::function<PackedCounts(char*)> pack;
  PackedCounts want;
  std::size_t bytes = 0;  // what crosses: the packed points, the 1s' bitmap words, the tail scalars
  char* out = nullptr;
  std::string what;  // the chunk, for the failure message
};
void CUDART_CB run_pack(void* arg) {
  const std::unique_ptr<PackJob> job(static_cast<PackJob*>(arg));
  try {
    const auto start = std::chrono::steady_clock::now();
    PackedCounts got;
    job->arena->execute([&] { got = job->pack(job->out); });
    job->keep->pack_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
    job->keep->pack_bytes += job->bytes;
    if (got.ones != job->want.ones || got.tail != job->want.tail)
      job->keep->fail("GPU prover: " + job->what + " packed " + std::to_string(got.ones) + " ones and " +
                      std::to_string(got.tail) + " tail points, " + std::to_string(job->want.ones) + " and " +
                      std::to_string(job->want.tail) + " were copied");
  } catch (const std::exception& e) {
    job->keep->fail("GPU prover: " + job->what + ": " + e.what());
  } catch (...) {
    job->keep->fail("GPU prover: " + job->what + ": packing failed");
  }
}

// One query of the split MSM as the compute phase sees it.
template <class C>
struct Query {
  const Affine<C>* d_points = nullptr;  // resident SRS (nullptr when streamed)
  const Affine<C>* h_points = nullptr;  // the host copy (pinned when streamed)
  std::size_t n = 0;
  const uint32_t* d_vars = nullptr;  // variable of each point; nullptr: point p is z[offset + p]
  std::size_t offset = 0;
  const SplitQuery* in = nullptr;       // its classes (and, streamed, tail and counts), in `inputs`
  std::shared_ptr<SplitInputs> inputs;  // held by the streamed chunks' packing jobs
  const uint64_t* d_ones = nullptr;  // resident: the bitmaps in the msm slot
  const uint64_t* d_other = nullptr;
  XYZZ<C>* d_windows = nullptr;                   // accumulated window sums
  XYZZ<C>* d_ones_sum = nullptr;
  MsmShape* shape = nullptr;  // records the window the sums use
};

}  // namespace

// ---------------------------------------------------------------------------------------------

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the error state
    return 0;
  }
  return n;
}

uint64_t device_memory(int device) {
  check(cudaSetDevice(device), "device_memory: cudaSetDevice");
  std::size_t free_bytes = 0, total_bytes = 0;
  check(cudaMemGetInfo(&free_bytes, &total_bytes), "device_memory: cudaMemGetInfo");  // start-up only
  return total_bytes;
}

// ---------------------------------------------------------------------------------------------

class Prover::Partition {
 public:
  const Witness* w = nullptr;
  Randomizers rs;
  Domain domain{1};
  std::size_t h_terms = 0;
  std::shared_ptr<SplitInputs> split;
  int stage_slot = -1, msm_slot = -1;
  bool staged = false, computed = false;
  std::atomic<int64_t> done_ns{0};  // host steady-clock stamp when the device finished it
  MsmShape h_shape, l_shape, a_shape, b1_shape, b2_shape;
  // Every value a field element and a·b = c on every row (check_witness_values), on host threads
  // while the device works: the device never reads c (it makes c = a∘b) and only computes with
  // the other values (an unreduced one gives a wrong sum, never a wrong address), so the check
  // only decides whether finish() gives a proof. Joined by finish(), or by the destructor when the
  // partition is abandoned.
  std::future<void> values_checked;
  std::size_t index = 0;  // the partition's number, for the check's messages
};

struct Prover::Impl {
  const ProvingKey& pk;
  Densities densities;
  ProverConfig config;
  MemoryPlan plan;
  bool resident = false;
  std::size_t num_inputs = 0, num_aux = 0;
  std::vector<uint32_t> a_vars, b_vars;
  int max_windows = 0;  // window sums reserved per MSM in an msm slot

  char* arena = nullptr;
  cudaStream_t copy = nullptr, compute = nullptr, srs = nullptr;
  std::vector<cudaEvent_t> stage_released;               // per stage slot
  std::vector<std::array<cudaEvent_t, kMarks>> marks;    // per msm slot
  std::array<cudaEvent_t, 2> chunk_ready{}, chunk_free{};
  // Streamed: the pinned buffers the split MSMs' chunks are packed into (plan.pinned_pack_bytes()),
  // on their own stream of host functions; `packed`: packing done, `pack_free`: copied out.
  cudaStream_t pack = nullptr;
  std::array<char*, MemoryPlan::kPackBuffers> pack_buffers{};
  std::array<cudaEvent_t, MemoryPlan::kPackBuffers> packed{}, pack_free{};
  std::unique_ptr<tbb::task_arena> pack_arena;  // see PackJob
  std::array<cudaEvent_t, 2> h_ready{}, h_free{};  // the H MSM's point buffers in stage b + c
  std::vector<std::pair<void*, std::size_t>> pinned;     // host ranges registered (streamed)
  std::vector<void*> pinned_copies;                      // streamed, mapped key: the pinned copies
  // The host points the streamed chunks come from: the key's own arrays (registered), or pinned
  // copies of a mapped key's.
  const G1Affine *host_h = nullptr, *host_l = nullptr, *host_a = nullptr, *host_b_g1 = nullptr;
  const G2Affine* host_b_g2 = nullptr;
  std::vector<Fr*> staging;                              // pinned a, b (+ z) buffer per stage slot
  std::vector<cudaEvent_t> staging_free;                 // its last upload, per stage slot
  NttTables tables{};
  // The H step's factor: 1/Z(coset) for bellman (the inverse coset NTT after it leaves Montgomery
  // form); for snarkjs, whose H step is the last, 1 as a canonical integer in the limbs (the
  // product by it leaves Montgomery form). Either way the H MSM gets canonical scalars.
  Fr h_factor;
  // Runtime calls made after start-up, by kind (the engine's count of forbidden calls reads it).
  engine::DeviceCalls own_calls;
  engine::DeviceCalls* calls = &own_calls;
  // Engine workers are plain threads: each phase makes this prover's GPU current first (a
  // thread-local setting, no device work).
  void use_device() const { check(device::SetDevice(config.device), "GPU prover: cudaSetDevice"); }

  Impl(const ProvingKey& key, const Densities& dens, const ProverConfig& cfg) : pk(key), densities(dens), config(cfg) {}
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
  // Start-up and shutdown may wait; proving never does. The last owner may be any thread.
  cudaSetDevice(config.device);
  if (compute) cudaStreamSynchronize(compute);
  if (copy) cudaStreamSynchronize(copy);
  if (srs) cudaStreamSynchronize(srs);
  if (pack) cudaStreamSynchronize(pack);
  for (char* b : pack_buffers)
    if (b) cudaFreeHost(b);
  for (std::size_t b = 0; b < packed.size(); ++b) {
    if (packed[b]) cudaEventDestroy(packed[b]);
    if (pack_free[b]) cudaEventDestroy(pack_free[b]);
  }
  for (auto& [p, bytes] : pinned) cudaHostUnregister(p);
  for (void* p : pinned_copies) cudaFreeHost(p);
  for (auto e : stage_released) cudaEventDestroy(e);
  for (auto e : staging_free) cudaEventDestroy(e);
  for (Fr* b : staging) cudaFreeHost(b);
  for (auto& set : marks)
    for (auto e : set) cudaEventDestroy(e);
  for (int b = 0; b < 2; ++b) {
    if (chunk_ready[b]) cudaEventDestroy(chunk_ready[b]);
    if (chunk_free[b]) cudaEventDestroy(chunk_free[b]);
    if (h_ready[b]) cudaEventDestroy(h_ready[b]);
    if (h_free[b]) cudaEventDestroy(h_free[b]);
  }
  for (cudaStream_t s : {copy, compute, srs, pack})
    if (s) cudaStreamDestroy(s);
  if (arena) cudaFree(arena);
}

  template <class T>
  T* region(const std::string& name) const {
    const engine::Region* r = plan.find(name);
    if (r == nullptr) throw GpuError(Status::invalid("GPU prover: the plan has no region " + name));
    return reinterpret_cast<T*>(arena + r->offset);
  }
  uint64_t region_bytes(const std::string& name) const {
    const engine::Region* r = plan.find(name);
    if (r == nullptr) throw GpuError(Status::invalid("GPU prover: the plan has no region " + name));
    return r->bytes;
  }
  std::string slot(const char* group, int i, const char* part) const {
    return std::string(group) + "[" + std::to_string(i) + "]." + part;
  }

  int window_for(std::size_t n, int limit) const { return std::min(default_gpu_window(std::max<std::size_t>(n, 1)), limit); }

  // The sums of msm slot `ms`: G1 windows of H, L, A, B_G1, the three G1 batch sums, then the
  // G2 windows of B_G2 and its batch sum.
  XYZZ<G1Curve>* g1_sums(int ms) const { return region<XYZZ<G1Curve>>(slot("msm", ms, "sums")); }
  XYZZ<G2Curve>* g2_sums(int ms) const {
    return reinterpret_cast<XYZZ<G2Curve>*>(g1_sums(ms) + (4 * max_windows + 3));
  }
  std::size_t sums_bytes() const {
    return (4 * std::size_t(max_windows) + 3) * sizeof(XYZZ<G1Curve>) + (max_windows + 1) * sizeof(XYZZ<G2Curve>);
  }

  // The host copy a streamed plan reads its chunks from, in page-locked memory. A vector is
  // registered in place; a mapped key cache (file pages) is copied, in parallel, into pinned
  // memory this prover owns, and the mapping's pages are handed back: pinning file pages
  // would tie the pinned set to the page cache's choices (and a private mapping's to copy-on-write).
  template <class T>
  const T* pin(const HostArray<T>& v) {
    if (v.empty()) return v.data();
    const std::size_t bytes = v.size() * sizeof(T);
    if (v.is_view()) {
      void* copy = nullptr;
      check(cudaHostAlloc(&copy, bytes, cudaHostAllocPortable), "GPU prover: pinned copy of the mapped SRS");
      pinned_copies.push_back(copy);
      constexpr std::size_t kGrain = (std::size_t(64) << 20) / sizeof(T);
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, v.size(), kGrain), [&](const tbb::blocked_range<std::size_t>& r) {
        std::memcpy(static_cast<T*>(copy) + r.begin(), v.data() + r.begin(), (r.end() - r.begin()) * sizeof(T));
        v.release_pages(r.begin(), r.end() - r.begin());
      });
      return static_cast<const T*>(copy);
    }
    void* q = const_cast<T*>(v.data());
    // Portable: the provers of the same key on other GPUs use the same pinned pages. A copy that
    // another prover pinned first is pinned already; that prover unregisters it.
    const cudaError_t e = device::HostRegister(q, bytes, cudaHostRegisterPortable);
    if (e == cudaErrorHostMemoryAlreadyRegistered) {
      cudaGetLastError();
      return v.data();
    }
    check(e, "GPU prover: pinning the SRS host copy");
    pinned.emplace_back(q, bytes);
    return v.data();
  }

  // Copies a query to its region in pieces; each piece's host pages go back to the kernel once on
  // the device when the key is a mapped cache (HostArray::release_pages; a no-op for vectors), so
  // uploading a mapped key never holds more than a piece of it in host memory. The copies are on
  // the compute stream and waited for: a plain cudaMemcpy from pageable memory may return before
  // its last bytes reach the device, on the legacy stream, which the prover's non-blocking streams
  // do not wait for, so the H table's kernels (compute stream, right after this) could read points
  // still in flight.
  template <class C>
  void upload(const std::string& name, const HostArray<Affine<C>>& v) {
    constexpr std::size_t kPiece = (std::size_t(256) << 20) / sizeof(Affine<C>);
    Affine<C>* d = region<Affine<C>>(name);
    for (std::size_t at = 0; at < v.size(); at += kPiece) {
      const std::size_t n = std::min(kPiece, v.size() - at);
      check(device::MemcpyAsync(d + at, v.data() + at, n * sizeof(Affine<C>), cudaMemcpyHostToDevice, compute),
            "GPU prover: SRS upload");
      check(device::StreamSynchronize(compute), "GPU prover: SRS upload");
      v.release_pages(at, n);
    }
  }

  // ---- the compute phase's pieces ----

  // Dense MSM over points [0, n) (resident: d_points; streamed: chunks of h_points) with device
  // scalars as canonical integers (the H step leaves them so), accumulated into `windows`.
  // Streamed, stage slot ss's b and c (dead once the event `stage_dead` has passed) may hold its
  // workspace and, after the first piece (which comes through chunk buffer 0, copied while the
  // NTTs run), its point buffers (MemoryPlan::h_chunk).
  void dense_msm_g1(const G1Affine* d_points, const G1Affine* h_points, const Fr* d_scalars, std::size_t n,
                    XYZZ<G1Curve>* windows, MsmShape* shape_out, int ss, cudaEvent_t stage_dead) {
    void* ws = region<void>("compute.workspace");
    std::size_t ws_bytes = plan.workspace_bytes;
    char* stage = nullptr;
    engine::HStageLayout hl;
    const bool in_stage = !resident && plan.h_workspace_in_stage, points_in_stage = in_stage && plan.h_points_in_stage;
    if (in_stage) {
      stage = region<char>(slot("stage", ss, "b"));
      ws = stage;
      ws_bytes = region_bytes(slot("stage", ss, "b")) + region_bytes(slot("stage", ss, "c"));
      if (points_in_stage) {
        hl = engine::HStageLayout::of(plan.h_chunk, plan.window_h);
        if (hl.bytes > ws_bytes) throw GpuError(Status::invalid("GPU prover: the H MSM's stage layout exceeds stage b + c"));
        ws_bytes = hl.points0;
      }
    }
    const std::size_t in_buffer = plan.chunk_buffer_bytes / sizeof(G1Affine);
    const std::size_t piece = resident || points_in_stage ? plan.h_chunk : std::min<std::size_t>(plan.h_chunk, in_buffer);
    const std::size_t first = points_in_stage ? std::min(piece, in_buffer) : piece;
    if (d_points && plan.h_copies > 1) {
      // The resident fixed-base table in srs.h (built at load for plan.window_h): one piece.
      MsmShape sh;
      check(make_msm_shape(n, plan.window_h, &sh, plan.h_copies));
      sh.canonical = true;
      if (n != pk.h.size()) throw GpuError(Status::invalid("GPU prover: the H table holds another count of points"));
      *shape_out = sh;
      check(msm<G1Curve>(d_points, d_scalars, sh, ws, ws_bytes, windows, compute, nullptr, true));
      return;
    }
    const int c = window_for(std::min(piece, n), plan.window_h);
    *shape_out = MsmShape{n, c};
    for (std::size_t off = 0, k = 0, m = 0; off < n; off += m, ++k) {
      m = std::min(k == 0 ? first : piece, n - off);
      MsmShape sh;
      check(make_msm_shape(m, c, &sh));
      sh.canonical = true;
      const bool via_stage = points_in_stage && k > 0;
      const int j = int((k + 1) % 2);  // stage point buffer of piece k >= 1
      const G1Affine* pts = d_points ? d_points + off : nullptr;
      if (!pts && !via_stage) {
        pts = reinterpret_cast<const G1Affine*>(stream_chunk(k, [&](char* buf, cudaStream_t s) {
          check(device::MemcpyAsync(buf, h_points + off, m * sizeof(G1Affine), cudaMemcpyHostToDevice, s),
                "GPU prover: SRS chunk copy");
        }));
      } else if (!pts) {
        char* buf = stage + (j == 0 ? hl.points0 : hl.points1);
        if (k == 1) check(device::StreamWaitEvent(srs, stage_dead, 0), "GPU prover: H stage wait");
        check(device::StreamWaitEvent(srs, h_free[j], 0), "GPU prover: H chunk wait");
        check(device::MemcpyAsync(buf, h_points + off, m * sizeof(G1Affine), cudaMemcpyHostToDevice, srs),
              "GPU prover: SRS chunk copy");
        check(device::EventRecord(h_ready[j], srs), "GPU prover: H chunk event");
        check(device::StreamWaitEvent(compute, h_ready[j], 0), "GPU prover: H chunk wait");
        pts = reinterpret_cast<const G1Affine*>(buf);
      }
      check(msm<G1Curve>(pts, d_scalars + off, sh, ws, ws_bytes, windows, compute, nullptr, true));
      if (d_points) continue;
      if (via_stage) {
        check(device::EventRecord(h_free[j], compute), "GPU prover: H chunk event");
      } else {
        chunk_done(k);
      }
    }
  }

  // Streamed SRS: fills chunk buffer k % 2 on the srs stream once the compute stream is done with
  // its previous contents, and makes the compute stream wait for the copy.
  template <class Fill>
  char* stream_chunk(std::size_t k, Fill&& fill) {
    const int b = int(k % 2);
    char* buf = region<char>("compute.srs_chunk[" + std::to_string(b) + "]");
    check(device::StreamWaitEvent(srs, chunk_free[b], 0), "GPU prover: chunk wait");
    fill(buf, srs);
    check(device::EventRecord(chunk_ready[b], srs), "GPU prover: chunk event");
    check(device::StreamWaitEvent(compute, chunk_ready[b], 0), "GPU prover: chunk wait");
    return buf;
  }
  void chunk_done(std::size_t k) { check(device::EventRecord(chunk_free[k % 2], compute), "GPU prover: chunk event"); }

  // Streamed split MSM: chunk k packed on the host (the job, a host function on the pack stream,
  // into pack buffer k % 2 once that buffer's previous copy has left it), then copied into chunk
  // buffer k % 2 as stream_chunk does: the points that travel, the 1s' bitmap words, the tail's
  // scalars. The host never waits; the compute stream waits for the copy.
  char* stream_packed(std::size_t k, std::unique_ptr<PackJob> job, const engine::ChunkLayout& lay,
                      std::size_t point_bytes) {
    const std::size_t b = k % MemoryPlan::kPackBuffers;
    char* host = pack_buffers[b];
    const PackedCounts want = job->want;
    job->out = host;
    job->arena = pack_arena.get();
    job->bytes = want.points() * point_bytes + want.ones_words() * 8 + want.tail * sizeof(Fr);
    check(device::StreamWaitEvent(pack, pack_free[b], 0), "GPU prover: pack buffer wait");
    check(device::LaunchHostFunc(pack, run_pack, job.get()), "GPU prover: chunk packing");
    job.release();  // run_pack owns it now
    check(device::EventRecord(packed[b], pack), "GPU prover: pack event");
    return stream_chunk(k, [&](char* buf, cudaStream_t st) {
      check(device::StreamWaitEvent(st, packed[b], 0), "GPU prover: packed chunk wait");
      if (want.points() > 0)
        check(device::MemcpyAsync(buf, host, want.points() * point_bytes, cudaMemcpyHostToDevice, st),
              "GPU prover: SRS chunk copy");
      if (want.ones > 0)
        check(device::MemcpyAsync(buf + lay.ones, host + lay.ones, want.ones_words() * 8, cudaMemcpyHostToDevice, st),
              "GPU prover: bitmap copy");
      if (want.tail > 0)
        check(device::MemcpyAsync(buf + lay.scalars, host + lay.scalars, want.tail * sizeof(Fr), cudaMemcpyHostToDevice,
                                  st),
              "GPU prover: tail scalars copy");
      check(device::EventRecord(pack_free[b], st), "GPU prover: pack event");
    });
  }

  // rank[t] = the tail points in bitmap words [0, t) (popcounts, then an exclusive scan whose
  // temporary storage is the workspace), on the compute stream.
  void tail_ranks(const uint64_t* bitmap, std::size_t words, uint32_t* rank, void* ws, std::size_t ws_bytes) {
    device::launch(popcount_kernel, grid_for(words), kBlock, 0, compute, bitmap, words, rank);
    std::size_t temp = 0;
    check(cub::DeviceScan::ExclusiveSum(nullptr, temp, rank, rank, int(words), compute), "GPU prover: scan size");
    if (temp > ws_bytes) throw GpuError(Status::invalid("GPU prover: scan temp exceeds the workspace"));
    check(device::algorithm(cub::DeviceScan::ExclusiveSum(ws, temp, rank, rank, int(words), compute)),
          "GPU prover: tail ranks");
  }

  // Streamed SRS: the points of a query of n points that one chunk carries: the plan's chunk,
  // which must be whole bitmap words, or the whole query as one chunk. prepare() counts each
  // chunk's set bits and split_msm cuts the chunks, both with this.
  // The split MSMs' inputs of the L, A, B queries from the assignment's classes: each query's
  // bits and, streamed, its tail scalars (only they cross PCIe with the chunks) and the set bits
  // per SRS chunk (tail points, and 1s).
  void select_queries(SplitInputs& sp, const ZClasses& z, const Witness& w) const {
    const auto split = [&](SplitQuery& q, std::span<const uint32_t> vars, std::size_t offset, std::size_t n) {
      q.bits = select_split(z, vars, offset, n);
      if (resident || n == 0) return;
      q.tail = tail_scalars(q.bits, w.input, w.aux, vars, offset);
      const std::size_t chunk = chunk_points(n);
      q.tail_counts = set_bits_per_chunk(q.bits.other, n, chunk);
      q.ones_counts = set_bits_per_chunk(q.bits.ones, n, chunk);
    };
    split(sp.l, {}, num_inputs, num_aux);
    split(sp.a, a_vars, 0, a_vars.size());
    split(sp.b, b_vars, 0, b_vars.size());
  }

  std::size_t chunk_points(std::size_t n) const {
    const std::size_t cap = std::min<std::size_t>(plan.msm_chunk, n);
    if (cap < n && cap % 64 != 0)
      throw GpuError(Status::invalid("GPU prover: SRS chunks of " + std::to_string(cap) + " points are not whole bitmap words"));
    return cap;
  }

  // The most points a gather buffer of `bytes` holds with their scalars (points, then scalars
  // from the next aligned offset), at most `limit`.
  template <class C>
  static std::size_t gather_capacity(std::size_t bytes, std::size_t limit) {
    std::size_t cap = std::min(limit, bytes / (sizeof(Affine<C>) + sizeof(Fr)));
    while (cap > 0 && align_up(cap * sizeof(Affine<C>)) + cap * sizeof(Fr) > bytes) --cap;
    return cap;
  }

  template <class C>
  int plan_window() const {
    return std::is_same_v<C, G1Curve> ? plan.window_g1 : plan.window_g2;
  }

  // Split MSM of one query: batch addition of the 1s, Pippenger over the tail.
  template <class C>
  void split_msm(Query<C>& q, int ms) {
    void* ws = region<void>("compute.workspace");
    const std::size_t ws_bytes = plan.workspace_bytes;
    const SplitBits& bits = q.in->bits;
    if (q.n == 0) {
      *q.shape = MsmShape{0, window_for(1, plan_window<C>())};
      return;
    }
    if (resident) {
      // Ones: pieces of at most msm_chunk points (multiples of 64).
      const std::size_t piece = std::max<std::size_t>(64, plan.msm_chunk / 64 * 64);
      if (bits.ones_count > 0)
        for (std::size_t off = 0; off < q.n; off += piece)
          check(batch_add<C>(q.d_points + off, q.d_ones + off / 64, std::min(piece, q.n - off), ws, ws_bytes,
                             q.d_ones_sum, compute, true));
      // Tail: word ranks at the front of the gather buffer, then pieces of gathered points + scalars.
      const std::size_t words = (q.n + 63) / 64;
      char* gather = region<char>("compute.gather");
      const std::size_t rank_bytes = align_up(words * sizeof(uint32_t));
      const std::size_t room = region_bytes("compute.gather") - rank_bytes;
      const std::size_t cap = gather_capacity<C>(room, plan.msm_chunk);
      const std::size_t tail = bits.other_count;
      const int c = window_for(std::min(cap, tail), plan_window<C>());
      *q.shape = MsmShape{tail, c};
      if (tail == 0) return;
      if (cap == 0) throw GpuError(Status::invalid("GPU prover: the gather buffer holds no point"));
      uint32_t* rank = reinterpret_cast<uint32_t*>(gather);
      Affine<C>* g_points = reinterpret_cast<Affine<C>*>(gather + rank_bytes);
      Fr* g_scalars = reinterpret_cast<Fr*>(gather + rank_bytes + align_up(cap * sizeof(Affine<C>)));
      tail_ranks(q.d_other, words, rank, ws, ws_bytes);
      const Fr* z = region<Fr>(slot("msm", ms, "scalars")) + q.offset;
      for (std::size_t lo = 0; lo < tail; lo += cap) {
        const std::size_t m = std::min(cap, tail - lo);
        device::launch(tail_gather_kernel<C>, grid_for(words), kBlock, 0, compute, q.d_other, rank, words, lo, lo + m, q.d_points,
                                                                       z, q.d_vars, g_points, g_scalars);
        MsmShape sh;
        check(make_msm_shape(m, c, &sh));
        check(msm<C>(g_points, g_scalars, sh, ws, ws_bytes, q.d_windows, compute, nullptr, true));
      }
      return;
    }
    // Streamed: each chunk crosses packed (pack_chunk): its points whose scalar is 1, then its
    // tail's points, a bitmap over the first and the tail's scalars (in tail order); the points
    // whose scalar is 0 stay on the host. The 1s are batch-added from the chunk; the tail's points
    // and scalars are copied into the gather buffer, which the MSM takes whenever it is full and
    // after the last chunk (tail_pieces), so only tail points are sorted and the MSMs run on full
    // buffers. Chunks of msm_chunk points (then a power of two >= 2^16) or one chunk of the whole
    // query.
    const std::size_t cap = chunk_points(q.n);
    const engine::ChunkLayout lay = engine::ChunkLayout::of(cap, sizeof(Affine<C>));
    if (lay.bytes > plan.chunk_buffer_bytes)
      throw GpuError(Status::invalid("GPU prover: the SRS chunk buffer is smaller than the plan's chunk"));
    const std::size_t tail = bits.other_count;
    const std::size_t gather_bytes = region_bytes("compute.gather");
    const std::size_t gcap = gather_capacity<C>(gather_bytes, cap);
    if (gcap == 0) throw GpuError(Status::invalid("GPU prover: the gather buffer holds no point"));
    const int c = window_for(std::min(gcap, std::max<std::size_t>(tail, 1)), plan_window<C>());
    *q.shape = MsmShape{tail, c};
    if (q.in->tail.size() != tail)
      throw GpuError(Status::invalid("GPU prover: the partition's tail scalars do not match its bitmap"));
    const std::vector<std::size_t>& counts = q.in->tail_counts;  // made by prepare()
    const std::vector<std::size_t>& ones = q.in->ones_counts;
    const std::size_t chunks = (q.n + cap - 1) / cap;
    if (counts.size() != chunks || ones.size() != chunks)
      throw GpuError(Status::invalid("GPU prover: the partition's tail and 1 counts do not match the SRS chunks"));
    const std::vector<TailPiece> pieces = tail == 0 ? std::vector<TailPiece>{} : tail_pieces(counts, gcap);
    char* gather = region<char>("compute.gather");
    Affine<C>* g_points = reinterpret_cast<Affine<C>*>(gather);
    Fr* g_scalars = reinterpret_cast<Fr*>(gather + align_up(gcap * sizeof(Affine<C>)));
    std::size_t next = 0, first = 0;  // next piece; the chunk's first tail rank
    for (std::size_t off = 0, k = 0; off < q.n; off += cap, ++k) {
      const std::size_t m = std::min(cap, q.n - off), count = counts[k];
      auto job = std::make_unique<PackJob>();
      job->keep = q.inputs;
      job->want = PackedCounts{ones[k], count};
      job->what = "SRS chunk " + std::to_string(k) + " (points " + std::to_string(off) + " + " + std::to_string(m) + ")";
      const Affine<C>* host = q.h_points;
      const SplitBits* split = &bits;
      const std::span<const Fr> chunk_tail(q.in->tail.data() + first, count);
      job->pack = [host, split, off, m, chunk_tail, lay](char* out) {
        return pack_chunk(host, *split, off, m, chunk_tail, out, lay);
      };
      const PackedCounts want = job->want;
      char* buf = stream_packed(k, std::move(job), lay, sizeof(Affine<C>));
      const Affine<C>* pts = reinterpret_cast<const Affine<C>*>(buf);
      if (want.ones > 0)
        check(batch_add<C>(pts, reinterpret_cast<const uint64_t*>(buf + lay.ones), want.ones, ws, ws_bytes,
                           q.d_ones_sum, compute, true));
      const Affine<C>* tail_pts = pts + want.ones;
      const Fr* sc = reinterpret_cast<const Fr*>(buf + lay.scalars);
      for (; next < pieces.size() && pieces[next].chunk == k; ++next) {
        const TailPiece& pc = pieces[next];
        const std::size_t take = pc.hi - pc.lo;
        check(device::MemcpyAsync(g_points + pc.at, tail_pts + pc.lo, take * sizeof(Affine<C>), cudaMemcpyDeviceToDevice,
                                  compute),
              "GPU prover: tail points gather");
        check(device::MemcpyAsync(g_scalars + pc.at, sc + pc.lo, take * sizeof(Fr), cudaMemcpyDeviceToDevice, compute),
              "GPU prover: tail scalars gather");
        if (pc.flush) {
          MsmShape sh;
          check(make_msm_shape(pc.at + take, c, &sh));
          check(msm<C>(g_points, g_scalars, sh, ws, ws_bytes, q.d_windows, compute, nullptr, true));
        }
      }
      chunk_done(k);
      first += count;
    }
  }
};

Prover::Prover(const ProvingKey& pk, const Densities& densities, const ProverConfig& config)
    : impl_(std::make_unique<Impl>(pk, densities, config)) {
  Impl& m = *impl_;
  if (config.calls) m.calls = config.calls;
  m.num_inputs = pk.vk.ic.size();
  m.num_aux = pk.l.size();
  // The key's query layout (its counts checked against each other), the densities against it.
  const QueryLayout layout = QueryLayout::of(pk);
  layout.check_densities(densities, "GPU prover: ");
  m.a_vars = layout.a_variables(densities);
  m.b_vars = layout.b_variables(densities);
  const engine::CircuitShape shape = engine::shape_of(layout);
  const bool bellman = layout.h_basis == HBasis::bellman;
  if (shape.lg > kMaxNttLg)
    throw std::invalid_argument("GPU prover: a 2^" + std::to_string(shape.lg) + " domain exceeds the GPU NTT's 2^" +
                                std::to_string(kMaxNttLg));
  check(cudaSetDevice(config.device), "GPU prover: cudaSetDevice");
  std::size_t free_bytes = 0, total_bytes = 0;
  check(cudaMemGetInfo(&free_bytes, &total_bytes), "GPU prover: cudaMemGetInfo");  // once, at start
  engine::PlanRequest req;
  req.shape = shape;
  req.device_memory = total_bytes;
  req.budget = config.budget;
  req.gw = config.gw;
  req.srs = config.srs;
  req.h_table = config.h_table;
  m.plan = engine::plan_memory(req);
  m.resident = m.plan.srs == SrsPlacement::resident;
  m.max_windows = engine::msm_windows(kMinWindow);
  if (m.sums_bytes() > m.region_bytes("msm[0].sums"))
    throw GpuError(Status::invalid("GPU prover: the plan's sums region is too small"));

  check(cudaMalloc(&m.arena, m.plan.arena_bytes), "GPU prover: allocating the arena");
  check(cudaStreamCreateWithFlags(&m.copy, cudaStreamNonBlocking), "GPU prover: stream");
  check(cudaStreamCreateWithFlags(&m.compute, cudaStreamNonBlocking), "GPU prover: stream");
  check(cudaStreamCreateWithFlags(&m.srs, cudaStreamNonBlocking), "GPU prover: stream");
  m.stage_released.resize(std::size_t(m.plan.stage_slots));
  for (auto& e : m.stage_released) check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "GPU prover: event");
  if (config.pinned_staging) {
    // One pinned buffer per stage slot, allocated once: uploads from pinned memory run at the
    // link's speed and leave the host free, where pageable ones are staged by the driver.
    const std::size_t scalars = 2 * (std::size_t(1) << shape.lg) + (m.resident ? std::size_t(shape.num_variables()) : 0);
    m.staging.assign(std::size_t(m.plan.stage_slots), nullptr);
    m.staging_free.assign(std::size_t(m.plan.stage_slots), nullptr);
    for (std::size_t i = 0; i < m.staging.size(); ++i) {
      check(cudaHostAlloc(reinterpret_cast<void**>(&m.staging[i]), scalars * sizeof(Fr), cudaHostAllocDefault),
            "GPU prover: pinned staging buffer");
      check(cudaEventCreateWithFlags(&m.staging_free[i], cudaEventDisableTiming), "GPU prover: event");
    }
  }
  m.marks.resize(std::size_t(m.plan.msm_slots));
  for (auto& set : m.marks)
    for (auto& e : set) check(cudaEventCreate(&e), "GPU prover: event");
  for (int b = 0; b < 2; ++b) {
    check(cudaEventCreateWithFlags(&m.chunk_ready[b], cudaEventDisableTiming), "GPU prover: event");
    check(cudaEventCreateWithFlags(&m.chunk_free[b], cudaEventDisableTiming), "GPU prover: event");
    check(cudaEventCreateWithFlags(&m.h_ready[b], cudaEventDisableTiming), "GPU prover: event");
    check(cudaEventCreateWithFlags(&m.h_free[b], cudaEventDisableTiming), "GPU prover: event");
  }
  if (!m.resident) {
    m.pack_arena = std::make_unique<tbb::task_arena>(tbb::task_arena::automatic, 1, tbb::task_arena::priority::high);
    check(cudaStreamCreateWithFlags(&m.pack, cudaStreamNonBlocking), "GPU prover: stream");
    for (std::size_t b = 0; b < m.pack_buffers.size(); ++b) {
      check(cudaHostAlloc(reinterpret_cast<void**>(&m.pack_buffers[b]), m.plan.pinned_pack_bytes() / m.pack_buffers.size(),
                          cudaHostAllocDefault),
            "GPU prover: pinned pack buffer");
      check(cudaEventCreateWithFlags(&m.packed[b], cudaEventDisableTiming), "GPU prover: event");
      check(cudaEventCreateWithFlags(&m.pack_free[b], cudaEventDisableTiming), "GPU prover: event");
    }
  }

  const Domain domain(shape.lg, pk.convention.domain_generator);
  const NttRoots roots = bellman ? roots_of(domain) : roots_of(domain, Domain(shape.lg + 1, pk.convention.domain_generator).omega());
  m.h_factor = bellman ? domain.vanishing_on_coset().inverse() : Fr::one().canonical_limbs();
  check(ntt_tables_init(m.region<void>("ntt.tables"), m.region_bytes("ntt.tables"), shape.lg, roots, m.compute,
                        &m.tables, twist_table_lg(shape.lg, m.plan.ntt_full_twist)));
  if (m.resident) {
    m.upload("srs.h", pk.h);
    // The H fixed-base table: copies 1 .. h_copies-1 after the H points (start-up work).
    if (m.plan.h_copies > 1)
      check(precompute_bases<G1Curve>(m.region<G1Affine>("srs.h"), pk.h.size(), m.plan.window_h, m.plan.h_copies,
                                      m.compute));
    m.upload("srs.l", pk.l);
    m.upload("srs.a", pk.a);
    m.upload("srs.b_g1", pk.b_g1);
    m.upload("srs.b_g2", pk.b_g2);
    // Stream-ordered as the SRS (upload): the synchronisation below waits for them.
    check(cudaMemcpyAsync(m.region<uint32_t>("srs.a_vars"), m.a_vars.data(), m.a_vars.size() * 4,
                          cudaMemcpyHostToDevice, m.compute),
          "GPU prover: variable map upload");
    check(cudaMemcpyAsync(m.region<uint32_t>("srs.b_vars"), m.b_vars.data(), m.b_vars.size() * 4,
                          cudaMemcpyHostToDevice, m.compute),
          "GPU prover: variable map upload");
  } else {
    m.host_h = m.pin(pk.h);
    m.host_l = m.pin(pk.l);
    m.host_a = m.pin(pk.a);
    m.host_b_g1 = m.pin(pk.b_g1);
    m.host_b_g2 = m.pin(pk.b_g2);
  }
  check(cudaStreamSynchronize(m.compute), "GPU prover: start-up");
}

Prover::~Prover() = default;

const engine::MemoryPlan& Prover::plan() const { return impl_->plan; }
engine::DeviceCalls& Prover::device_calls() { return *impl_->calls; }
int Prover::device() const { return impl_->config.device; }

void Prover::PartitionDeleter::operator()(Partition* p) const { delete p; }

Prover::PartitionPtr Prover::prepare(const Witness& w, const Randomizers& rs,
                                                   std::size_t index) const {
  const Impl& m = *impl_;
  PartitionPtr p(new Partition);
  p->domain = check_witness_shape(m.pk, w, index);
  const std::string where = "partition " + std::to_string(index) + ": ";
  if (p->domain.lg() != m.plan.shape.lg)
    throw std::invalid_argument(where + "the witness needs a 2^" + std::to_string(p->domain.lg()) +
                                " domain, the prover was planned for 2^" + std::to_string(m.plan.shape.lg));
  if (w.densities.a_aux != m.densities.a_aux || w.densities.b_aux != m.densities.b_aux ||
      w.densities.b_input != m.densities.b_input)
    throw std::invalid_argument(where + "the witness's densities differ from the circuit's the prover was made for");
  p->w = &w;
  p->index = index;
  p->rs = rs;
  p->h_terms = m.pk.h.size();
  p->split = std::make_shared<SplitInputs>();
  // A resident SRS with pinned staging: the classes come with stage()'s copy of the assignment
  // into pinned memory (one read of z instead of two, and the queries' selection beside its DMA).
  if (m.resident && !m.staging.empty()) return p;
  m.select_queries(*p->split, classify_z(w.input, w.aux), w);  // one pass over z for the three queries
  return p;
}

void Prover::stage(Partition& p, int ss, int ms) {
  Impl& m = *impl_;
  if (ss < 0 || ss >= m.plan.stage_slots || ms < 0 || ms >= m.plan.msm_slots)
    throw GpuError(Status::invalid("GPU prover: stage slot " + std::to_string(ss) + " / msm slot " +
                                   std::to_string(ms) + " outside the plan's " + std::to_string(m.plan.stage_slots) +
                                   " / " + std::to_string(m.plan.msm_slots)));
  if (p.staged) throw GpuError(Status::invalid("GPU prover: partition staged twice"));
  const engine::CallScope scope(m.calls);  // this phase's runtime calls count for the device
  m.use_device();
  const Witness& w = *p.w;
  const std::size_t n = p.domain.size();
  auto& ev = m.marks[std::size_t(ms)];
  check(device::StreamWaitEvent(m.copy, m.stage_released[std::size_t(ss)], 0),
       "GPU prover: stage wait");
  // The msm slot's previous user is done with it (finish() waited for this event, unless it
  // failed early: then the device orders the reuse).
  check(device::StreamWaitEvent(m.copy, ev[kB2], 0), "GPU prover: stage wait");
  check(device::EventRecord(ev[kUploadStart], m.copy), "GPU prover: event");
  // With pinned staging the vectors are first copied (in parallel) into the slot's pinned buffer,
  // once its previous upload has finished reading it (a wait on that one event); the link carries
  // one vector while the cores copy the next. (Pieces of 64 or 256 MiB, each piece's DMA enqueued
  // once it is copied, were slower at 2^26: 1.20 against 1.17 s a proof.)
  Fr* pinned = m.staging.empty() ? nullptr : m.staging[std::size_t(ss)];
  if (pinned)
    check(device::EventSynchronize(m.staging_free[std::size_t(ss)]),
         "GPU prover: staging buffer wait");
  auto source = [&](const Fr* data, std::size_t count) -> const Fr* {
    if (!pinned) return data;
    Fr* dst = pinned;
    pinned += count;
    constexpr std::size_t kBlock = std::size_t(1) << 18;
    tbb::parallel_for(std::size_t(0), (count + kBlock - 1) / kBlock, [&](std::size_t b) {
      const std::size_t begin = b * kBlock, end = std::min(count, begin + kBlock);
      std::copy(data + begin, data + end, dst + begin);
    });
    return dst;
  };
  auto put = [&](std::span<const Fr> v, const char* part) {
    Fr* d = m.region<Fr>(m.slot("stage", ss, part));
    check(device::MemcpyAsync(d, source(v.data(), v.size()), v.size() * sizeof(Fr), cudaMemcpyHostToDevice, m.copy),
         "GPU prover: a, b upload");
    if (v.size() < n)
      check(device::MemsetAsync(d + v.size(), 0, (n - v.size()) * sizeof(Fr), m.copy), "GPU prover: a, b padding");
  };
  put(w.a, "a");
  put(w.b, "b");  // c = a∘b is made on the device (c_step)
  if (m.resident) {
    Fr* z = m.region<Fr>(m.slot("msm", ms, "scalars"));
    if (pinned) {
      // z = input ‖ aux copied and classified in one pass; the queries' bits are selected while
      // its DMA runs (prepare() left them to here).
      const std::size_t vars = w.input.size() + w.aux.size();
      const ZClasses classes = classify_z(w.input, w.aux, pinned);
      check(device::MemcpyAsync(z, pinned, vars * sizeof(Fr), cudaMemcpyHostToDevice, m.copy),
            "GPU prover: assignment upload");
      pinned += vars;
      m.select_queries(*p.split, classes, w);
    } else {
      check(device::MemcpyAsync(z, w.input.data(), w.input.size() * sizeof(Fr), cudaMemcpyHostToDevice, m.copy),
            "GPU prover: assignment upload");
      check(device::MemcpyAsync(z + w.input.size(), w.aux.data(), w.aux.size() * sizeof(Fr), cudaMemcpyHostToDevice,
                                m.copy),
            "GPU prover: assignment upload");
    }
    uint64_t* bits = m.region<uint64_t>(m.slot("msm", ms, "bitmaps"));
    const SplitInputs& sp = *p.split;
    for (const std::vector<uint64_t>* v :
         {&sp.l.bits.ones, &sp.l.bits.other, &sp.a.bits.ones, &sp.a.bits.other, &sp.b.bits.ones, &sp.b.bits.other}) {
      check(device::MemcpyAsync(bits, v->data(), v->size() * 8, cudaMemcpyHostToDevice, m.copy), "GPU prover: bitmap upload");
      bits += v->size();
    }
  }
  check(device::EventRecord(ev[kUploadEnd], m.copy), "GPU prover: event");
  if (!m.staging.empty())
    check(device::EventRecord(m.staging_free[std::size_t(ss)], m.copy), "GPU prover: event");
  // The values and rows beside the kernels, from here: not beside the classes or the staging copy,
  // which read host memory on every core too (one 2^26 partition: the stage took 170 ms alone and
  // 340-380 ms beside the check; the check itself ~200 ms, under ~840 ms of kernels).
  p.values_checked = std::async(std::launch::async, [&w, index = p.index] { check_witness_values(w, index); });
  p.stage_slot = ss;
  p.msm_slot = ms;
  p.staged = true;
}

void Prover::compute(Partition& p) {
  Impl& m = *impl_;
  if (!p.staged || p.computed) throw GpuError(Status::invalid("GPU prover: compute() needs a staged partition"));
  const engine::CallScope scope(m.calls);  // this phase's runtime calls count for the device
  m.use_device();
  try {
    enqueue_compute(p);
  } catch (...) {
    // Whatever was enqueued still runs: the slots are released after it, in stream order, so the
    // next users of the slots wait for it rather than race with it.
    device::EventRecord(m.stage_released[std::size_t(p.stage_slot)], m.compute);
    device::EventRecord(m.marks[std::size_t(p.msm_slot)][kB2], m.compute);
    throw;
  }
  p.computed = true;
}

void Prover::enqueue_compute(Partition& p) {
  Impl& m = *impl_;
  const int ss = p.stage_slot, ms = p.msm_slot;
  auto& ev = m.marks[std::size_t(ms)];
  cudaStream_t s = m.compute;
  check(device::StreamWaitEvent(s, ev[kUploadEnd], 0), "GPU prover: wait for staging");
  check(device::EventRecord(ev[kStart], s), "GPU prover: event");
  check(device::MemsetAsync(m.g1_sums(ms), 0, m.sums_bytes(), s), "GPU prover: clear sums");

  // H: c = a∘b, then a, b, c to the coset (bellman) or the odd points (snarkjs), (a·b - c)·factor, back to
  // coefficients for bellman; the result is in a, in natural order, as canonical integers (h_factor).
  Fr* a = m.region<Fr>(m.slot("stage", ss, "a"));
  Fr* b = m.region<Fr>(m.slot("stage", ss, "b"));
  Fr* c = m.region<Fr>(m.slot("stage", ss, "c"));
  const std::size_t n = p.domain.size();
  check(c_step(c, a, b, n, s));
  // The inverse's 1/n goes with the coset's shift into one table product of the forward's first pass.
  NttOp to_coefficients{Direction::inverse, Order::natural, Order::bit_reversed, false};
  to_coefficients.defer_size_inv = true;
  NttOp to_coset{Direction::forward, Order::bit_reversed, Order::natural, true};
  to_coset.take_size_inv = true;
  for (Fr* v : {a, b, c}) {
    check(ntt(v, m.tables, to_coefficients, s));
    check(ntt(v, m.tables, to_coset, s));
  }
  check(h_step(a, b, c, n, m.h_factor, s));
  if (m.pk.convention.h_basis == HBasis::bellman)
    check(ntt(a, m.tables, NttOp{Direction::inverse, Order::natural, Order::natural, true, true}, s));
  check(device::EventRecord(ev[kNtt], s), "GPU prover: event");

  XYZZ<G1Curve>* g1 = m.g1_sums(ms);
  XYZZ<G2Curve>* g2 = m.g2_sums(ms);
  const int W = m.max_windows;
  m.dense_msm_g1(m.resident ? m.region<G1Affine>("srs.h") : nullptr, m.host_h, a, p.h_terms, g1, &p.h_shape, ss, ev[kNtt]);
  check(device::EventRecord(ev[kH], s), "GPU prover: event");
  // a, b, c are dead: the next partition may stage into this slot.
  check(device::EventRecord(m.stage_released[std::size_t(ss)], s), "GPU prover: event");

  const uint64_t* bits = m.resident ? m.region<uint64_t>(m.slot("msm", ms, "bitmaps")) : nullptr;
  auto next_bits = [&](std::size_t words) {
    const uint64_t* here = bits;
    if (bits) bits += words;
    return here;
  };
  SplitInputs& sp = *p.split;
  Query<G1Curve> ql;
  ql.d_points = m.resident ? m.region<G1Affine>("srs.l") : nullptr;
  ql.h_points = m.host_l;
  ql.n = m.num_aux;
  ql.offset = m.num_inputs;
  ql.in = &sp.l;
  ql.inputs = p.split;
  ql.d_ones = next_bits(sp.l.bits.ones.size());
  ql.d_other = next_bits(sp.l.bits.other.size());
  ql.d_windows = g1 + W;
  ql.d_ones_sum = g1 + 4 * W;
  ql.shape = &p.l_shape;
  m.split_msm(ql, ms);
  check(device::EventRecord(ev[kL], s), "GPU prover: event");

  Query<G1Curve> qa = ql;
  qa.d_points = m.resident ? m.region<G1Affine>("srs.a") : nullptr;
  qa.h_points = m.host_a;
  qa.n = m.a_vars.size();
  qa.d_vars = m.resident ? m.region<uint32_t>("srs.a_vars") : nullptr;
  qa.offset = 0;
  qa.in = &sp.a;
  qa.inputs = p.split;
  qa.d_ones = next_bits(sp.a.bits.ones.size());
  qa.d_other = next_bits(sp.a.bits.other.size());
  qa.d_windows = g1 + 2 * W;
  qa.d_ones_sum = g1 + 4 * W + 1;
  qa.shape = &p.a_shape;
  m.split_msm(qa, ms);
  check(device::EventRecord(ev[kA], s), "GPU prover: event");

  Query<G1Curve> qb = qa;
  qb.d_points = m.resident ? m.region<G1Affine>("srs.b_g1") : nullptr;
  qb.h_points = m.host_b_g1;
  qb.n = m.b_vars.size();
  qb.d_vars = m.resident ? m.region<uint32_t>("srs.b_vars") : nullptr;
  qb.in = &sp.b;
  qb.inputs = p.split;
  qb.d_ones = next_bits(sp.b.bits.ones.size());
  qb.d_other = next_bits(sp.b.bits.other.size());
  qb.d_windows = g1 + 3 * W;
  qb.d_ones_sum = g1 + 4 * W + 2;
  qb.shape = &p.b1_shape;
  m.split_msm(qb, ms);
  check(device::EventRecord(ev[kB1], s), "GPU prover: event");

  Query<G2Curve> q2;
  q2.d_points = m.resident ? m.region<G2Affine>("srs.b_g2") : nullptr;
  q2.h_points = m.host_b_g2;
  q2.n = qb.n;
  q2.d_vars = qb.d_vars;
  q2.offset = 0;
  q2.in = &sp.b;
  q2.d_ones = qb.d_ones;
  q2.d_other = qb.d_other;
  q2.inputs = p.split;
  q2.d_windows = g2;
  q2.d_ones_sum = g2 + W;
  q2.shape = &p.b2_shape;
  m.split_msm(q2, ms);
  check(device::LaunchHostFunc(s, stamp_now, &p.done_ns), "GPU prover: host callback");
  check(device::EventRecord(ev[kB2], s), "GPU prover: event");
}

Proof Prover::finish(Partition& p, GpuTimes* times, bool corrupt_result) {
  Impl& m = *impl_;
  if (!p.computed) throw GpuError(Status::invalid("GPU prover: finish() needs a computed partition"));
  const engine::CallScope scope(m.calls);  // this phase's runtime calls count for the device
  m.use_device();
  const int ms = p.msm_slot;
  auto& ev = m.marks[std::size_t(ms)];
  check(device::EventSynchronize(ev[kB2]), "GPU prover: waiting for the partition");
  p.values_checked.get();  // WitnessError when a value is out of range or a row unsatisfied: no proof
  if (const std::string failed = p.split->failed(); !failed.empty()) throw GpuError(Status::invalid(failed));
  const int W = m.max_windows;
  std::vector<XYZZ<G1Curve>> g1(std::size_t(4 * W + 3));
  std::vector<XYZZ<G2Curve>> g2(std::size_t(W + 1));
  check(device::Memcpy(g1.data(), m.g1_sums(ms), g1.size() * sizeof(g1[0]), cudaMemcpyDeviceToHost), "GPU prover: sums");
  check(device::Memcpy(g2.data(), m.g2_sums(ms), g2.size() * sizeof(g2[0]), cudaMemcpyDeviceToHost), "GPU prover: sums");
  if (corrupt_result) {
    // One flipped bit in the first L window sum, as the device returned it.
    unsigned char byte;
    std::memcpy(&byte, reinterpret_cast<const unsigned char*>(&g1[std::size_t(W)]) + 3, 1);
    byte ^= 0x10;
    std::memcpy(reinterpret_cast<unsigned char*>(&g1[std::size_t(W)]) + 3, &byte, 1);
  }
  MsmSums sums;
  sums.h = msm_combine<G1Curve>(g1.data(), p.h_shape);
  sums.l = msm_combine<G1Curve>(g1.data() + W, p.l_shape) + g1[std::size_t(4 * W)].to_jacobian();
  sums.a = msm_combine<G1Curve>(g1.data() + 2 * W, p.a_shape) + g1[std::size_t(4 * W + 1)].to_jacobian();
  sums.b_g1 = msm_combine<G1Curve>(g1.data() + 3 * W, p.b1_shape) + g1[std::size_t(4 * W + 2)].to_jacobian();
  sums.b_g2 = msm_combine<G2Curve>(g2.data(), p.b2_shape) + g2[std::size_t(W)].to_jacobian();
  if (times) {
    auto ms_between = [&](Mark a, Mark b) {
      float t = 0;
      check(device::EventElapsedTime(&t, ev[a], ev[b]), "GPU prover: event timing");
      return double(t);
    };
    times->upload = ms_between(kUploadStart, kUploadEnd);
    times->ntt = ms_between(kStart, kNtt);
    times->msm_h = ms_between(kNtt, kH);
    times->msm_l = ms_between(kH, kL);
    times->msm_a = ms_between(kL, kA);
    times->msm_b_g1 = ms_between(kA, kB1);
    times->msm_b_g2 = ms_between(kB1, kB2);
    times->compute = ms_between(kStart, kB2);
    times->pack = double(p.split->pack_ns.load()) / 1e6;
    times->packed_bytes = p.split->pack_bytes.load();
    times->done_at = std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(p.done_ns.load()));
    auto before = [&](Mark a) { return ms_between(a, kB2); };
    times->spans = {{"copy", "upload", before(kUploadStart), before(kUploadEnd)},
                    {"compute", "ntt", before(kStart), before(kNtt)},
                    {"compute", "msm_h", before(kNtt), before(kH)},
                    {"compute", "msm_l", before(kH), before(kL)},
                    {"compute", "msm_a", before(kL), before(kA)},
                    {"compute", "msm_b_g1", before(kA), before(kB1)},
                    {"compute", "msm_b_g2", before(kB1), 0.0}};
  }
  return assemble_proof(m.pk.vk, sums, p.rs);
}

}  // namespace pp::gpu
