// SPDX-License-Identifier: Apache-2.0 OR MIT
// The GPU prover's private parts (not installed, not public), shared by its three sources:
// prover_resources.cu (start-up and shutdown: the arena the planner cut, streams, events, pinned
// buffers, the SRS uploaded or pinned), prover_msm.cu (the compute phase's MSMs, resident and
// streamed: SRS chunks, host packing, tail gathers) and prover.cu (the four phases of prover.hpp).
#pragma once

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
#include <condition_variable>
#include <deque>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
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
namespace prover_detail {

using engine::DeviceCall;
using engine::MemoryPlan;
using engine::SrsPlacement;

inline constexpr unsigned kBlock = 256;
inline unsigned grid_for(uint64_t n, unsigned block = kBlock) { return unsigned((n + block - 1) / block); }
inline uint64_t align_up(uint64_t x, uint64_t a = 256) { return (x + a - 1) / a * a; }

// Timing events of one msm slot, in the order the stages record them: each split MSM between its
// start (kLs …) and its end (kL …); batched (MemoryPlan::split_batch), a split MSM is a pass that
// the batch's partitions share, recorded in each one's slot.
enum Mark { kUploadStart, kUploadEnd, kStart, kNtt, kH, kLs, kL, kAs, kA, kB1s, kB1, kB2s, kB2, kMarks };

// One split query's inputs: the classes of its scalars and, with a streamed SRS, the tail and 1
// counts of each SRS chunk and its tail's scalars (F: the curve's scalar field): copied out in
// tail order (`tail`), or, batched, read in place from the witness's z (`z`, which the batch's
// packing reads until the partition's passes have run) when each chunk's side is packed.
template <class F>
struct SplitQuery {
  SplitBits bits;
  std::vector<F> tail;
  QueryScalars<F> z;
  std::vector<std::size_t> tail_counts, ones_counts;
};

// What the packing of a partition's chunks reports: its time and bytes, and its first failure. A
// pack that fails (it cannot once its counts were checked when it was queued, but nothing is
// assumed) is recorded here, and finish() gives no proof.
struct PackState {
  std::atomic<int64_t> pack_ns{0};      // host time spent packing this partition's chunks
  std::atomic<uint64_t> pack_bytes{0};  // and the bytes packed (what crossed instead of the chunks)
  // SRS points copied to the device for this partition (streamed: H's chunks and the split MSMs'
  // packed points; 0 when the SRS is resident), counted as the copies are queued.
  std::atomic<uint64_t> srs_bytes{0};
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

// A partition's split-MSM inputs, for the L, A and B queries (B_G1 and B_G2 share B's). Shared: the host
// functions that pack a streamed partition's chunks hold it until they have run, whatever
// becomes of the partition meanwhile.
template <class F>
struct SplitInputs : PackState {
  SplitQuery<F> l, a, b;
};

// One chunk's host-side packing (pack_chunk), run in stream order by a host function that owns
// the job and deletes it: `pack` writes the chunk into `out` and must give the counts the copies
// were queued with (`want`). It runs in `arena`, the prover's high-priority TBB arena: the
// device waits for it, so it goes before the host work that overlaps the device (the witness
// rows check, the next partitions' prepare).
struct PackJob {
  std::shared_ptr<PackState> keep;
  tbb::task_arena* arena = nullptr;
  std::function<PackedCounts(char*)> pack;
  PackedCounts want;
  std::size_t bytes = 0;  // what crosses: the packed points, the 1s' bitmap words, the tail scalars
  char* out = nullptr;
  std::string what;  // the chunk, for the failure message
};

// Runs a PackJob (and deletes it): a host function on the pack stream (prover_msm.cu).
void CUDART_CB run_pack(void* arg);

// Partitions whose split MSMs share one pass over the streamed SRS chunks (MemoryPlan::split_batch),
// P: the prover's Partition. Its passes (0 L, 1 A, 2 B_G1, 3 B_G2) are enqueued in order; the
// packing of its chunks reports here (PackState), and so does a pass that failed to enqueue.
template <class P>
struct SplitBatch : PackState {
  std::vector<P*> parts;
  int next_pass = 0;  // 4: all enqueued
  Status error;       // a pass failed to enqueue: every partition of the batch fails with it
};

// One query of the split MSM as the compute phase sees it.
template <class C>
struct Query {
  const Affine<C>* d_points = nullptr;  // resident SRS (nullptr when streamed)
  const Affine<C>* h_points = nullptr;  // the host copy (pinned when streamed)
  std::size_t n = 0;
  const uint32_t* d_vars = nullptr;  // variable of each point; nullptr: point p is z[offset + p]
  std::size_t offset = 0;
  const SplitQuery<typename C::Scalar>* in = nullptr;   // its classes (and, streamed, tail and counts), in `inputs`
  std::shared_ptr<SplitInputs<typename C::Scalar>> inputs;  // held by the streamed chunks' packing jobs
  const uint64_t* d_ones = nullptr;  // resident: the bitmaps in the msm slot
  const uint64_t* d_other = nullptr;
  XYZZ<C>* d_windows = nullptr;                   // accumulated window sums
  XYZZ<C>* d_ones_sum = nullptr;
  MsmShape* shape = nullptr;  // records the window the sums use
};

// A batch pass being enqueued one chunk at a time (Impl::step_pass): its queries, one per
// partition of the batch, and what the chunks so far have left for the next: the chunk, and each
// partition's gather area, window, tail pieces and next piece.
template <class C>
struct PassCursor {
  std::vector<Query<C>> qs;
  std::shared_ptr<PackState> keep;  // the batch: its chunks' packing reports there
  std::size_t n = 0, cap = 0, chunks = 0, k = 0;
  BatchChunkLayout lay;
  std::size_t rank_bytes = 0, area_bytes = 0;
  GatherLayout glay;
  std::vector<int> window;
  std::vector<std::vector<TailPiece>> pieces;
  std::vector<std::size_t> next;
  bool done() const { return k >= chunks; }
};

}  // namespace prover_detail
using namespace prover_detail;  // this header's three sources only

template <class E>
class ProverOf<E>::Partition {
 public:
  using F = typename E::Fr;
  const WitnessOf<E>* w = nullptr;
  RandomizersOf<F> rs;
  DomainOf<F> domain{1};
  std::size_t h_terms = 0;
  std::shared_ptr<SplitInputs<F>> split;
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
  // Batched split MSMs: the batch once formed (null while the partition waits in Impl::pending);
  // `passes_done`: its four passes are enqueued (true when not batched); `staged_counted`: counted
  // in Impl::staged_waiting (stage() began, compute() has not).
  std::shared_ptr<SplitBatch<Partition>> batch;
  bool batched = false, passes_done = true, staged_counted = false;
  typename ProverOf<E>::Impl* owner = nullptr;  // the prover, for the deleter of a batched partition
};

template <class E>
struct ProverOf<E>::Impl {
  using F = typename E::Fr;
  using G1 = typename E::G1;
  using G2 = typename E::G2;
  // The planner's sizes of this curve's points: those of the types the kernels hold.
  static constexpr engine::PointSizes kPoints{sizeof(Affine<G1>), sizeof(Affine<G2>), sizeof(XYZZ<G1>), sizeof(XYZZ<G2>)};
  static_assert(kPoints == engine::kBls12_381Points || kPoints == engine::kBn254Points,
                "the planner knows this curve's point sizes");
  const ProvingKeyOf<E>& pk;
  Densities densities;
  ProverConfig config;
  MemoryPlan plan;
  StartupTimes startup;
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
  const Affine<G1> *host_h = nullptr, *host_l = nullptr, *host_a = nullptr, *host_b_g1 = nullptr;
  const Affine<G2>* host_b_g2 = nullptr;
  std::vector<F*> staging;                              // pinned a, b (+ z) buffer per stage slot
  std::array<cudaEvent_t, 2> upload_done{};              // start-up: the SRS upload's staging halves
  std::vector<cudaEvent_t> staging_free;                 // its last upload, per stage slot
  NttTablesOf<F> tables{};
  // The H step's factor: 1/Z(coset) for bellman (the inverse coset NTT after it leaves Montgomery
  // form); for snarkjs, whose H step is the last, 1 as a canonical integer in the limbs (the
  // product by it leaves Montgomery form). Either way the H MSM gets canonical scalars.
  F h_factor;
  // The holdings charged to config.host_budget (MemoryPlan::held_host_bytes), released last.
  uint64_t held_host = 0;
  // Runtime calls made after start-up, by kind (the engine's count of forbidden calls reads it).
  engine::DeviceCalls own_calls;
  engine::DeviceCalls* calls = &own_calls;
  // Engine workers are plain threads: each phase makes this prover's GPU current first (a
  // thread-local setting, no device work).
  void use_device() const { check(device::SetDevice(config.device), "GPU prover: cudaSetDevice"); }

  Impl(const ProvingKeyOf<E>& key, const Densities& dens, const ProverConfig& cfg) : pk(key), densities(dens), config(cfg) {}
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl();

  template <class T>
  T* region(const std::string& name) const {
    const engine::Region* r = plan.find(name);
    if (r == nullptr) throw GpuError(Status::invalid("GPU prover: the plan has no region " + name));
    return reinterpret_cast<T*>(arena + r->offset);
  }
  // A resident SRS's region; nullptr when the SRS is streamed.
  template <class T>
  const T* srs_region(const std::string& name) const {
    return resident ? region<T>(name) : nullptr;
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
  XYZZ<G1>* g1_sums(int ms) const { return region<XYZZ<G1>>(slot("msm", ms, "sums")); }
  XYZZ<G2>* g2_sums(int ms) const {
    return reinterpret_cast<XYZZ<G2>*>(g1_sums(ms) + engine::msm_g1_sums(max_windows));
  }
  std::size_t sums_bytes() const { return engine::msm_sums_bytes(kPoints, max_windows); }

  // Start-up (prover_resources.cu): the host copy a streamed plan reads its chunks from, pinned;
  // a resident query's upload.
  template <class T>
  const T* pin(const HostArray<T>& v);
  static constexpr std::size_t kUploadHalfBytes = std::size_t(32) << 20;
  template <class C>
  void upload(const std::string& name, const HostArray<Affine<C>>& v, void* staging_buffer);

  // ---- the compute phase's pieces (prover_msm.cu) ----
  void dense_msm_g1(const Affine<G1>* d_points, const Affine<G1>* h_points, const F* d_scalars, std::size_t n,
                    XYZZ<G1>* windows, MsmShape* shape_out, int ss, cudaEvent_t stage_dead);
  template <class Fill>
  char* stream_chunk(std::size_t k, Fill&& fill);
  void chunk_done(std::size_t k);
  // Queues job on the pack stream into pack buffer k % kPackBuffers (once its last copy has left
  // it) and records the buffer's `packed` event after it; returns the buffer.
  char* launch_pack(std::size_t k, std::unique_ptr<PackJob> job);
  char* stream_packed(std::size_t k, std::unique_ptr<PackJob> job, const ChunkLayout& lay, std::size_t point_bytes);
  void tail_ranks(const uint64_t* bitmap, std::size_t words, uint32_t* rank, void* ws, std::size_t ws_bytes);
  void select_queries(SplitInputs<F>& sp, const ZClasses& z, const WitnessOf<E>& w) const;
  std::size_t chunk_points(std::size_t n) const;
  template <class C>
  int plan_window() const {
    return std::is_same_v<C, G1> ? plan.window_g1 : plan.window_g2;
  }

  template <class C>
  void split_msm(Query<C>& q, int ms);
  template <class C>
  Query<C> query_of(Partition& p, int pass);  // prover.cu

  // ---- batched split MSMs (plan.split_batch > 1; prover.cu, prover_msm.cu) ----
  bool batched() const { return !resident && plan.split_batch > 1; }
  // Enqueueing on the compute stream: compute() (one at a time, the engine's compute token), the
  // pass thread, and a finish() or a partition's deleter that runs its batch's passes. Guards
  // everything below.
  std::mutex batch_mu;
  std::condition_variable batch_cv;  // a pass enqueued, a partition staged
  std::vector<Partition*> pending;   // H MSM enqueued, in no batch yet
  std::deque<std::shared_ptr<SplitBatch<Partition>>> batches;  // formed, passes left to enqueue
  int staged_waiting = 0;  // partitions between the start of stage() and compute()
  // Recorded after every enqueue on the compute stream: passed, the device has nothing queued.
  cudaEvent_t compute_tail = nullptr;
  // The front batch's pass under way (pass 0-2 in cursor_g1, 3 in cursor_g2), -1: none.
  int cursor_pass = -1;
  std::unique_ptr<PassCursor<G1>> cursor_g1;
  std::unique_ptr<PassCursor<G2>> cursor_g2;
  // The pass thread (config.pass_thread): steps the front batch's passes while there are batches,
  // waiting before step s for the event recorded after step s - kPassesAhead.
  std::thread pass_worker;
  bool stop_passes = false;
  std::array<cudaEvent_t, kPassesAhead> pass_ahead{};
  void pass_loop();
  // After partition p's H MSM: joins it to the pending ones (forming a batch at split_batch);
  // without the pass thread, enqueues the passes due after an H MSM (4 / split_batch, rounded up)
  // from the oldest batch.
  void after_h(Partition& p);
  // Forms a batch of the pending partitions (p among them) if p is in none, then enqueues passes,
  // oldest batch first, until p's are.
  void flush_for(Partition& p);
  void form_batch();  // of the pending partitions
  // One chunk of the front batch's pass under way (begun here if none is; ended here after its
  // last chunk); false when there is no batch. A pass that fails to enqueue fails the batch
  // (SplitBatch::error) and ends its partitions' marks, so that nothing waits forever.
  bool step_pass();
  // The front batch's pass under way (or its next) to its end.
  void run_pass();
  void begin_pass(const std::shared_ptr<SplitBatch<Partition>>& b, int pass);
  void drop_cursor();  // no pass under way
  void end_pass(const std::shared_ptr<SplitBatch<Partition>>& b, int pass);
  // A pass over one split query for every partition of a batch (the same points): pass_begin
  // checks the batch and lays out the gather buffer, pass_chunk enqueues the cursor's next chunk,
  // pass_end checks that every tail piece was taken.
  template <class C>
  void pass_begin(PassCursor<C>& c);
  template <class C>
  void pass_chunk(PassCursor<C>& c);
  template <class C>
  void pass_end(const PassCursor<C>& c) const;
  char* stream_batch_chunk(std::size_t k, std::unique_ptr<PackJob> job, const char* points, std::size_t points_bytes,
                           std::size_t sides_at, std::size_t side_bytes, const std::vector<std::size_t>& side_used);
};

}  // namespace pp::gpu
