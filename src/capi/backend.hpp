// The one seam between the C API and a prover: proves a batch of partitions for an engine.
//
// Today the CPU prover (groth16/prover.hpp) sits behind it. The pipelined GPU engine
// (pp::engine) replaces make_backend()'s choice later; nothing else in src/capi knows which
// prover runs. Contract for an implementation:
//  * prove_batch may be called concurrently from several threads on one Backend;
//  * the request's key and witnesses stay alive and unchanged for the whole call;
//  * it calls on_partition(k) after partition k is proven, from the calling thread, and stops
//    (throwing Cancelled) at the next partition boundary once *cancel is true;
//  * errors are exceptions: std::invalid_argument for a witness that does not fit the key,
//    anything else for failures of the prover itself.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <vector>

#include "proofpipe/groth16/prover.hpp"

namespace pp::capi {

// What pp_engine_config says, validated (see proofpipe.h for the meaning of each field).
struct EngineConfig {
  std::vector<int> gpus;  // empty: none
  bool all_gpus = true;
  int gpu_workers = 2;
  uint64_t device_memory_budget = 0, host_memory_budget = 0;
  bool cpu_fallback = true;
  int threads = 0;
};

struct Cancelled : std::runtime_error {
  Cancelled() : std::runtime_error("cancelled by pp_cancel") {}
};

struct BatchRequest {
  const ProvingKey& key;
  std::span<const Witness> witnesses;
  std::span<const Randomizers> randomizers;  // one per witness
  const std::atomic<bool>* cancel = nullptr;
  std::function<void(std::size_t partition)> on_partition;
};

struct BatchResult {
  std::vector<Proof> proofs;  // one per witness, in order
  ProveTimings timings;       // summed over the partitions
  std::size_t partitions_on_cpu = 0;
  double ms_gpu_busy = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual BatchResult prove_batch(const BatchRequest& request) = 0;
};

// The prover for a configuration; throws std::invalid_argument (→ PP_ERR_UNSUPPORTED) when no
// prover of this build can serve it.
std::unique_ptr<Backend> make_backend(const EngineConfig& config);

}  // namespace pp::capi
