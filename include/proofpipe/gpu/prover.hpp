// SPDX-License-Identifier: Apache-2.0 OR MIT
// The Groth16 prover on one GPU: the key's SRS resident in device memory or streamed from a
// pinned host copy, as the memory planner decides (engine/plan.hpp), all device memory one
// arena allocated at construction, and one partition's work split into the four phases the
// pipelined engine interleaves:
//
//   prepare  CPU only: checks the witness, classifies the L, A, B scalars into 0 / 1 / other
//            (bitmaps), nothing on the device. With a resident SRS and pinned staging the
//            classes are left to stage, which reads the assignment anyway to copy it.
//   stage    memory side: uploads a, b into a stage slot (c = a∘b is made on the device: the
//            witness satisfies the circuit, which prepare checks) and (resident SRS) the assignment and
//            bitmaps into an msm slot (classifying z as it copies it into pinned memory, and
//            selecting the queries' bits while z crosses), on the copy stream, after the slot's previous user has
//            released it (stream-ordered events; the host never waits).
//   compute  compute side: on the compute stream, after the staging event: the NTTs and the
//            fused H step of the key's convention, the H MSM, the event that releases the stage
//            slot, then the split MSMs — batch addition of the points whose scalar is 1 and a
//            Pippenger MSM over the gathered "other" tail — for L, A, B_G1 (G1) and B_G2 (G2).
//            With a resident SRS this only enqueues; streamed, it also packs the split MSMs' SRS
//            chunks on the host (pack_chunk, in stream-ordered host functions: only the points
//            whose scalar is not 0 cross, with the tail's scalars) and copies them through two
//            device buffers (the tail's points go on into the gather buffer, see tail_pieces),
//            waiting for its own chunk events (never for the device).
//   finish   waits for the partition's last event, reads its MSM sums and assembles the proof
//            with the CPU prover's code (assemble_proof), so GPU and CPU proofs are equal bit
//            for bit for the same r, s.
//
// Errors: GpuError carrying a Status (CUDA error text, or an invalid witness/slot).
#pragma once

#include <cstddef>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <vector>

#include "proofpipe/engine/backend.hpp"
#include "proofpipe/engine/plan.hpp"
#include "proofpipe/gpu/status.hpp"
#include "proofpipe/groth16/prover.hpp"

namespace pp::gpu {

// ---- CPU side (always built; CI tests it) ----

// The split MSM's classes of a query's scalars: bitmaps over the points (LSB first) of the
// scalars equal to 1 and of those neither 0 nor 1 (the tail). Point p has scalar z[vars[p]],
// or z[offset + p] when vars is empty, where z = input ‖ aux. Multithreaded.
struct SplitBits {
  std::vector<uint64_t> ones, other;
  std::size_t ones_count = 0, other_count = 0;
};
SplitBits classify(std::span<const Fr> input, std::span<const Fr> aux, std::span<const uint32_t> vars,
                   std::size_t offset, std::size_t points);
// The same in two steps, so that a partition's three queries read the assignment once (at 2^26
// each classify pass read 2 GiB of scalars): the classes of every variable of z = input ‖ aux as
// bitmaps over z, then each query's bits selected from them. classify(...) ==
// select_split(classify_z(input, aux), vars, offset, points).
struct ZClasses {
  std::vector<uint64_t> ones, other;  // bit v: z[v] == 1, z[v] not in {0, 1}
  std::size_t size = 0;               // variables
};
// copy_to (input.size() + aux.size() scalars, or null): also copies z = input ‖ aux there in the
// same pass, as a resident SRS's staging copy of the assignment needs (one read of z, not two).
ZClasses classify_z(std::span<const Fr> input, std::span<const Fr> aux, Fr* copy_to = nullptr);
SplitBits select_split(const ZClasses& z, std::span<const uint32_t> vars, std::size_t offset, std::size_t points);

// The tail's scalars in point order (z of each point whose bit is set in bits.other), as they
// cross to the device with a streamed SRS. Multithreaded.
std::vector<Fr> tail_scalars(const SplitBits& bits, std::span<const Fr> input, std::span<const Fr> aux,
                             std::span<const uint32_t> vars, std::size_t offset);

// Streamed SRS: how one split MSM's tail moves. The query's points cross in chunks of `chunk`
// points (a multiple of 64, or all of them in one chunk); set_bits_per_chunk gives the number of
// tail points (or of 1s, from the other bitmap) in each chunk. On the device each chunk's tail is
// gathered into a buffer of `capacity` entries, and the buffer goes
// to the MSM whenever it is full and after the last chunk, so the MSMs run on full buffers
// rather than one small MSM per chunk. tail_pieces lists the gathers in order: ranks [lo, hi)
// of chunk `chunk`'s tail go to buffer positions [at, at + hi - lo); `flush`: the MSM takes
// buffer entries [0, at + hi - lo) after this piece. Throws std::invalid_argument for a chunk
// that is neither a positive multiple of 64 nor all the points, or a zero capacity.
std::vector<std::size_t> set_bits_per_chunk(std::span<const uint64_t> bitmap, std::size_t points, std::size_t chunk);
struct TailPiece {
  std::size_t chunk = 0, lo = 0, hi = 0, at = 0;
  bool flush = false;
};
std::vector<TailPiece> tail_pieces(std::span<const std::size_t> counts, std::size_t capacity);

// Streamed SRS, host-side compaction: what of chunk [off, off + m) of a split query crosses PCIe,
// packed into `out` at the offsets of engine::ChunkLayout::of(m, sizeof(P)): from `out`, the
// points whose scalar is 1 (point order), then the tail's points (point order); at lay.ones a
// bitmap with the first `ones` bits set (the batch addition's input); at lay.scalars the chunk's
// tail scalars `tail` (its slice of tail_scalars). Points whose scalar is 0 stay on the host, so
// on the 0/1-heavy witnesses of PoRep about half the bytes do not travel. `off` is a multiple of
// 64. Throws std::invalid_argument for a chunk outside the bitmaps or a tail of another length
// than the bitmap's count. Multithreaded; the CPU side is all there is (no kernel to twin).
struct PackedCounts {
  std::size_t ones = 0, tail = 0;
  std::size_t points() const { return ones + tail; }
  std::size_t ones_words() const { return (ones + 63) / 64; }
};
template <class P>
PackedCounts pack_chunk(const P* points, const SplitBits& bits, std::size_t off, std::size_t m, std::span<const Fr> tail,
                        char* out, const engine::ChunkLayout& lay);

// CPU twins of the prover's kernels: the tail gather (ranks [lo, hi) of the "other" bitmap
// over `points`), and fixed-base multiplication of `base` by every scalar.
template <class C>
void tail_gather_twin(std::span<const uint64_t> bitmap, std::size_t lo, std::size_t hi, std::span<const Affine<C>> points,
                      std::span<const Fr> z, std::span<const uint32_t> vars, std::vector<Affine<C>>& out_points,
                      std::vector<Fr>& out_scalars);
template <class C>
std::vector<Affine<C>> fixed_base_twin(const Affine<C>& base, std::span<const Fr> scalars);

// ---- Device side (library proofpipe_gpu, built with CUDA) ----

// CUDA devices visible to this process; 0 when there is no driver or no device.
int device_count();

// The key's points from its exponents (setup's second half) multiplied on `device`:
// key_points(key_scalars(r1cs, seed, conv), d) == setup(r1cs, seed, {}, conv).
ProvingKey key_points(const KeyScalars& scalars, int device = 0);

struct ProverConfig {
  int device = 0;
  uint64_t budget = 0;  // bytes the arena may use; 0: the card's memory minus the planner's reserve
  engine::SrsPlacement srs = engine::SrsPlacement::automatic;
  int gw = 2;  // workers the plan provides slots for (2: the next partition stages while one computes)
  // One pinned host buffer per stage slot for a, b (and z with a resident SRS), allocated at
  // start-up ((2·2^lg + variables) · 32 bytes each): uploads at the link's speed.
  bool pinned_staging = true;
  // A resident SRS's spare budget holds a fixed-base table for the H MSM (PlanRequest::h_table).
  // Serving several keys from one GPU's cache, the spare memory may be wanted by the next key.
  bool h_table = true;
  // Where the steady-state runtime calls are counted (a backend shares one counter among the
  // provers of its device); null: the prover's own.
  engine::DeviceCalls* calls = nullptr;
};

// GPU time of one partition's stages (ms, from CUDA events): upload on the copy stream, the rest
// on the compute stream (compute = ntt + the five MSMs).
struct GpuTimes {
  double upload = 0, ntt = 0, msm_h = 0, msm_l = 0, msm_a = 0, msm_b_g1 = 0, msm_b_g2 = 0, compute = 0;
  // Streamed SRS: host time spent packing the split MSMs' chunks (pack_chunk; ms, summed over the
  // chunks, overlapping the device) and the bytes that crossed for them. 0 when resident.
  double pack = 0;
  uint64_t packed_bytes = 0;
  // Where the stages ran, for timelines: the host steady-clock time at which the device reached
  // the end of the partition (stamped by a host callback in stream order), and each stage's
  // start and end in ms before that.
  struct Span {
    const char* queue;  // "copy" or "compute"
    const char* what;   // "upload", "ntt", "msm_h", "msm_l", "msm_a", "msm_b_g1", "msm_b_g2"
    double begin_ms, end_ms;
  };
  std::chrono::steady_clock::time_point done_at;
  std::vector<Span> spans;

  // Sums the stage times (not the spans or done_at: those belong to one partition).
  GpuTimes& operator+=(const GpuTimes& o) {
    upload += o.upload;
    ntt += o.ntt;
    msm_h += o.msm_h;
    msm_l += o.msm_l;
    msm_a += o.msm_a;
    msm_b_g1 += o.msm_b_g1;
    msm_b_g2 += o.msm_b_g2;
    compute += o.compute;
    return *this;
  }
  // The stages the CPU prover also has, in its shape.
  ProveTimings stages() const {
    ProveTimings t;
    t.ntt = ntt;
    t.msm_h = msm_h;
    t.msm_l = msm_l;
    t.msm_a = msm_a;
    t.msm_b_g1 = msm_b_g1;
    t.msm_b_g2 = msm_b_g2;
    return t;
  }
};

class Prover {
 public:
  // Plans the arena for pk's shape (densities: the circuit's, as every witness carries them),
  // allocates it, builds the NTT tables and uploads (resident) or pins (streamed) the SRS.
  // pk must outlive the prover. Throws engine::PlanError when the budget is too small,
  // std::invalid_argument for a key the GPU cannot take, GpuError for CUDA failures.
  Prover(const ProvingKey& pk, const Densities& densities, const ProverConfig& config = {});
  ~Prover();
  Prover(const Prover&) = delete;
  Prover& operator=(const Prover&) = delete;

  const engine::MemoryPlan& plan() const;
  // CUDA runtime calls made since start-up, by kind (none of the forbidden kinds, by design).
  engine::DeviceCalls& device_calls();
  int device() const;

  class Partition;  // one partition's host state, events and slots
  struct PartitionDeleter {
    void operator()(Partition* p) const;
  };
  using PartitionPtr = std::unique_ptr<Partition, PartitionDeleter>;
  // The witness must outlive the partition's stage() call. Throws std::invalid_argument naming
  // partition `index`, as pp::prove does, for a witness that does not match the key.
  PartitionPtr prepare(const Witness& w, const Randomizers& rs, std::size_t index = 0) const;
  void stage(Partition& p, int stage_slot, int msm_slot);
  void compute(Partition& p);
  // corrupt_result: a test hook (CudaBackendConfig::debug_corrupt_every) that flips a bit of the
  // device's L sum as it is read back, so that the proof is wrong the way a fault in device memory
  // would make it; only the engine's check can tell.
  Proof finish(Partition& p, GpuTimes* times = nullptr, bool corrupt_result = false);

 private:
  void enqueue_compute(Partition& p);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pp::gpu
