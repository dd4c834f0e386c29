// SPDX-License-Identifier: Apache-2.0 OR MIT
// A request proved on the process's engine (internal): each partition its own engine job,
// partitions read or copied while the earlier ones prove, cancellation, call counters.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "inputs.hpp"

namespace pp::capi {

// Where a running request reports progress and registers its engine jobs (for pp_cancel).
struct Progress {
  const std::atomic<bool>* cancel = nullptr;
  std::atomic<std::size_t>* partitions_done = nullptr;
  std::mutex* jobs_mu = nullptr;
  std::vector<uint64_t>* jobs = nullptr;
  // Called once no copy_abc input's a, b, c will be read again (each copied, or the request
  // ended); at most once, possibly never when the request has no copy_abc input.
  std::function<void()> abc_released;
};

// Proves `req` (its inputs in order) and books the outcome in the engine's call counters. The
// first failure, in input order, cancels the rest and is rethrown as it was thrown (status_of
// maps it); a pp_cancel is rethrown as Cancelled. Returns the proofs' bytes in input order (the
// key's proof_bytes each: BLS12-381's bellperson form, BN254's Ethereum form).
std::vector<uint8_t> run_batch(const std::shared_ptr<EngineImpl>& engine, const KeyImpl& key, Request& req,
                               const Progress& progress);

}  // namespace pp::capi
