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
#include "proofpipe/engine/host_budget.hpp"
#include "proofpipe/engine/plan.hpp"
#include "proofpipe/gpu/prover_host.hpp"
#include "proofpipe/gpu/status.hpp"
#include "proofpipe/groth16/prover.hpp"

namespace pp::gpu {

// ---- Device side (library proofpipe_gpu, built with CUDA) ----

// CUDA devices visible to this process; 0 when there is no driver or no device.
int device_count();
// Creates `device`'s CUDA context (the first call on a device takes 0.1–0.5 s), so that a caller
// can pay it beside host work that does not need the GPU (reading a key). False on any CUDA
// error, which the prover started afterwards reports itself.
bool start_device(int device) noexcept;

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
  // Streamed SRS: partitions that share one pass over the split queries' chunks (PlanRequest::
  // split_batch; 0: as the plan's msm slots allow, 1: none). Batched, compute() queues a partition's
  // split MSMs for its batch and enqueues the passes due after its H MSM (or leaves them to the
  // pass thread, below); finish() of a partition whose batch is not complete waits for the next
  // partitions while one is staged (at most kBatchWait), then runs its passes with the partitions
  // there are.
  int split_batch = 0;
  // Batched: a thread of the prover's own enqueues the passes, one chunk at a time and at most
  // kPassesAhead chunks ahead of the device, so that compute() returns once a partition's H MSM is
  // queued and the next partition stages at once (a pass is thousands of launches: enqueued by
  // compute(), the host blocks on the full launch queue and the next stage waits for it). false
  // (the default until the thread has been measured on a GPU): compute() enqueues the passes due
  // after each H MSM itself, the first design, measured (docs/PERF.md K21).
  bool pass_thread = false;
  // The host budget the prover's holdings are charged to while it lives (MemoryPlan::
  // held_host_bytes: pinned staging and pack buffers, a streamed key's host copy); null: none.
  // engine::HostBudgetError from the constructor when they alone would pass it.
  engine::HostBudget* host_budget = nullptr;
  // Where the steady-state runtime calls are counted (a backend shares one counter among the
  // provers of its device); null: the prover's own.
  engine::DeviceCalls* calls = nullptr;
};

// GPU time of one partition's stages (ms, from CUDA events): upload on the copy stream, the rest
// (ProverStageTimes) on the compute stream; compute = ntt + the five MSMs.
struct GpuTimes : ProverStageTimes {
  double upload = 0, compute = 0;
  // Streamed SRS: host time spent packing the split MSMs' chunks (pack_chunk; ms, summed over the
  // chunks, overlapping the device) and the bytes that crossed for them. 0 when resident.
  double pack = 0;
  uint64_t packed_bytes = 0;
  // The SRS points that crossed PCIe for this partition (streamed: every H point, and the split
  // MSMs' points whose scalar is not 0; 0 when resident): the PCIe traffic a streamed plan pays
  // per partition, summed by operator+= (the key's own upload is not in it: key loads count that).
  uint64_t srs_bytes = 0;
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
    ProverStageTimes::operator+=(o);
    upload += o.upload;
    compute += o.compute;
    srs_bytes += o.srs_bytes;
    return *this;
  }
};

// Where a prover's start-up went (ms of host time, in order): the plan, the arena and the streams
// and events, the pinned staging buffers, the NTT tables, the SRS uploaded (resident, with the H
// table) or pinned (streamed); total includes the rest (checks, the final synchronisation).
struct StartupTimes {
  double plan = 0, arena = 0, staging = 0, tables = 0, srs = 0, total = 0;
};

// The longest finish() holds a partition back for a batch to fill (ProverConfig::split_batch), and
// how long it waits for a next partition to be staged when none is.
inline constexpr std::chrono::milliseconds kBatchWait{5000}, kBatchGrace{50};
// Chunks of batch passes the pass thread keeps queued ahead of the device (ProverConfig::pass_thread).
inline constexpr int kPassesAhead = 4;

// E: the curve (groth16/curves.hpp), BLS12-381 or BN254; the kernels, the plan and the phases are
// the same for both.
template <class E>
class ProverOf {
 public:
  using Key = ProvingKeyOf<E>;
  using WitnessType = WitnessOf<E>;
  using RandomizersType = RandomizersOf<typename E::Fr>;
  using ProofType = ProofOf<E>;
  // Plans the arena for pk's shape (densities: the circuit's, as every witness carries them),
  // allocates it, builds the NTT tables and uploads (resident) or pins (streamed) the SRS.
  // pk must outlive the prover. Throws engine::PlanError when the budget is too small,
  // std::invalid_argument for a key the GPU cannot take, GpuError for CUDA failures.
  ProverOf(const Key& pk, const Densities& densities, const ProverConfig& config = {});
  ~ProverOf();
  ProverOf(const ProverOf&) = delete;
  ProverOf& operator=(const ProverOf&) = delete;

  const engine::MemoryPlan& plan() const;
  const StartupTimes& startup_times() const;
  // CUDA runtime calls made since start-up, by kind (none of the forbidden kinds, by design).
  engine::DeviceCalls& device_calls();
  int device() const;

  class Partition;  // one partition's host state, events and slots
  struct PartitionDeleter {
    void operator()(Partition* p) const;
  };
  using PartitionPtr = std::unique_ptr<Partition, PartitionDeleter>;
  // The witness must outlive the partition (its values are checked beside the kernels until finish(),
  // and batched passes read its tail scalars in place). Throws std::invalid_argument naming
  // partition `index`, as pp::prove does, for a witness that does not match the key.
  PartitionPtr prepare(const WitnessType& w, const RandomizersType& rs, std::size_t index = 0) const;
  void stage(Partition& p, int stage_slot, int msm_slot);
  void compute(Partition& p);
  // corrupt_result: a test hook (CudaBackendConfig::debug_corrupt_every) that flips a bit of the
  // device's L sum as it is read back, so that the proof is wrong the way a fault in device memory
  // would make it; only the engine's check can tell.
  ProofType finish(Partition& p, GpuTimes* times = nullptr, bool corrupt_result = false);

 private:
  void stage_partition(Partition& p, int stage_slot, int msm_slot);
  void enqueue_compute(Partition& p);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};
// Instantiated for both curves in src/gpu (prover_resources.cu, prover.cu, prover_msm.cu):
// ProverOf<Bls12_381> (Prover) and ProverOf<bn254::Bn254>.
using Prover = ProverOf<Bls12_381>;

}  // namespace pp::gpu
