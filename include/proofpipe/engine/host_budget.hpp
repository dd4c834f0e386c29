// SPDX-License-Identifier: Apache-2.0 OR MIT
// The host-memory budget (--host-budget): what the engine's partitions in flight and the GPU
// provers' holdings — pinned staging and pack buffers, a streamed key's host copy — may use
// together. docs/ENGINE.md, "Host memory".
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>

namespace pp::engine {

// A partition, or a holding, that the host budget can never make room for.
class HostBudgetError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A host-memory budget in bytes. Partitions acquire their bytes FIFO, so that a large one is
// served in its turn; holdings are charged at once. An engine makes its own from its config's
// host_mem_bytes; engines that must share one (a runtime's two curves) and the GPU provers of
// their backends are given the same one.
class HostBudget {
 public:
  explicit HostBudget(uint64_t limit) : limit_(limit) {}  // 0: unlimited
  uint64_t limit() const { return limit_; }
  // A partition's bytes: waits, in turn, until they fit beside the other partitions' and the
  // holdings. HostBudgetError when they never can: no partition holds any and they still do not
  // fit beside the holdings (then nothing is charged and the next in turn goes on).
  void acquire(uint64_t bytes);
  void release(uint64_t bytes);
  // Memory held for proving outside the partitions, for as long as its holder lives (a GPU
  // prover's pinned buffers and a streamed key's host copy): charged at once, without waiting —
  // a key is loaded by a worker that holds its partition's bytes, which would wait for itself —
  // so a holding taken while partitions are in flight may pass the budget until they end; the
  // partitions admitted after it fit in what is left. HostBudgetError when the holdings alone
  // would pass the limit (`what` names the holding in the message; nothing is charged).
  void hold(uint64_t bytes, const std::string& what);
  void unhold(uint64_t bytes);
  uint64_t held() const;
  uint64_t peak() const;  // the most the partitions and the holdings have had together
  std::string describe() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  const uint64_t limit_;
  uint64_t used_ = 0, held_ = 0, peak_ = 0, next_ticket_ = 0, serving_ = 0;
};

}  // namespace pp::engine
