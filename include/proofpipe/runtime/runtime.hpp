// SPDX-License-Identifier: Apache-2.0 OR MIT
// The proving engines of a process, as every entry point reaches them (the C API and through it
// the CLI and the SupraSeal drop-in; later the daemon): engine::Engine over one CudaBackend per
// chosen GPU (every visible GPU by default), gw workers each, the two tokens, retries and the CPU
// fallback — or, without a GPU, over the CPU backend. Keys stay resident on the GPUs that proved
// them (one device copy per key per GPU, planned by the memory planner) until evict().
//
// BN254 keys (snarkjs bn128) go to a second engine of the same template over the same GPUs: each
// GPU has one backend per curve and one ledger of its memory (gpu::CardLedger), so the two
// curves' resident keys together stay within the GPU's budget. The two engines share the host
// budget and the job ids (cancel(id) reaches either).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "proofpipe/engine/engine.hpp"
#include "proofpipe/engine/plan.hpp"

namespace pp::runtime {

struct Config {
  bool all_gpus = true;       // every visible GPU (gpus ignored)
  std::vector<int> gpus;      // else these CUDA ordinals (empty: CPU only)
  int gw = 2;                 // engine workers per GPU, 1 .. 64
  uint64_t device_budget = 0; // bytes of each GPU the resident keys may use; 0: the card less the reserve
  uint64_t host_budget = 0;   // bytes of host memory for partitions in flight; 0: unlimited
  bool cpu_fallback = true;   // prove on the CPU when a GPU cannot; false: fail the job
  int threads = 0;            // CPU prover threads; 0: every core
  engine::SrsPlacement srs = engine::SrsPlacement::automatic;
  engine::Interlock interlock = engine::Interlock::two;
  bool trace = false;         // record every stage (traces, timelines)
  bool check_proofs = true;   // engine::EngineConfig::check_proofs: every proof verified before release
};

// Stage times summed over every partition proved, in ms: the GPUs' (from CUDA events) and the
// CPU prover's (own partitions and fallbacks).
struct StageTimes : ProveTimings {
  double gpu_upload = 0, gpu_compute = 0;  // copy-stream uploads; compute-stream busy time
};

struct KeyResidency {
  int gpu = 0;
  engine::SrsPlacement srs = engine::SrsPlacement::resident;
  uint64_t arena_bytes = 0;
};

// One GPU of the runtime.
struct GpuInfo {
  int device = 0;               // CUDA ordinal
  engine::DeviceMemory memory;  // the card, the budget, the keys' arenas now and at peak
  uint32_t resident_keys = 0;   // keys with a copy on this GPU
  uint64_t proofs_checked = 0, proofs_rejected = 0;  // this GPU's proofs verified, and rejected
  bool healthy = true;          // false once the GPU was lost (its partitions go to the others)
  uint64_t partitions = 0;      // proved on this GPU (both curves)
  uint64_t handed_off = 0;      // partitions it held when it was lost, proved again elsewhere
  double busy_ms = 0;           // its compute stream's busy time for the partitions it proved (both curves)
};

struct Stats {
  engine::EngineStats engine;  // both curves' engines: counts summed; BN254's backends after, once it had a job
  int gpus = 0;
  std::vector<GpuInfo> devices;  // one per GPU, in the engine's order
  uint64_t key_loads = 0;      // SRS uploads (or pinnings, when streamed), all GPUs
  uint64_t srs_bytes_streamed = 0;  // SRS points copied per partition of streamed keys (gpu::GpuTimes::srs_bytes), all GPUs
  uint64_t key_evictions = 0;  // device copies dropped (evict() and making room)
  uint64_t partitions_on_cpu = 0;
  StageTimes times;
};

// The test hook PROOFPIPE_TEST_LOSE_GPU=DEVICE@N (docs/ENGINE.md; never for production): GPU
// DEVICE (a CUDA ordinal the runtime proves on) is lost when its Nth partition starts
// (engine::LosingBackend), and the engine proves what it held on the other GPUs.
struct LoseGpu {
  int device = 0;
  uint64_t at_prepare = 1;
};
// nullopt for ""; std::invalid_argument naming the variable for anything but DEVICE@N, N >= 1.
std::optional<LoseGpu> parse_lose_gpu(const std::string& value);
std::optional<LoseGpu> lose_gpu_from_env();  // the variable's value parsed; nullopt when unset

// The test hook PROOFPIPE_TEST_SIM_GPUS=N (docs/ENGINE.md; never for production): the runtime
// proves on N simulated GPUs, ordinals 0 .. N-1 (each a CPU prover named sim<d> standing in for a
// device), instead of the CUDA devices, so that several GPUs can be driven through every entry
// point on a machine without one (CI). --devices / PROOFPIPE_GPUS select among them.
inline constexpr int kMaxSimGpus = 16;
// nullopt for ""; std::invalid_argument naming the variable for anything but 1 .. kMaxSimGpus.
std::optional<int> parse_sim_gpus(const std::string& value);
std::optional<int> sim_gpus_from_env();

class Runtime {
 public:
  // std::invalid_argument for a configuration this build or machine cannot serve (a GPU that is
  // not visible, no GPU with cpu_fallback false, gw out of range, a budget above the card).
  explicit Runtime(const Config& config);
  ~Runtime();  // cancels what is still queued, waits for the workers
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  engine::JobHandle submit(engine::JobSpec spec);
  engine::JobHandleOf<bn254::Bn254> submit(engine::JobSpecOf<bn254::Bn254> spec);
  bool cancel(uint64_t job);  // a job of either curve
  void shutdown(engine::Shutdown how);

  // Loads `key` onto every GPU now; false (why in *why) if some GPU could not take it.
  bool preload(const std::shared_ptr<const ProvingKey>& key, const Densities& densities, std::string* why = nullptr);
  bool preload(const std::shared_ptr<const bn254::ProvingKey>& key, const Densities& densities, std::string* why = nullptr);
  // Drops every GPU's copy of `key` (freed once its partitions in flight end); the count dropped.
  int evict(const ProvingKey* key);
  int evict(const bn254::ProvingKey* key);
  std::vector<KeyResidency> residency(const ProvingKey* key) const;
  std::vector<KeyResidency> residency(const bn254::ProvingKey* key) const;

  Stats stats() const;
  int gpu_count() const;
  const Config& config() const;
  engine::Engine& engine();
  engine::EngineOf<bn254::Bn254>& engine_bn254();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace pp::runtime
