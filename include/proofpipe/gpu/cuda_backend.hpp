// The GPU prover as a device of the pipelined engine (engine/backend.hpp): one CudaBackend per
// GPU, its four phases the Prover's, its stage and msm slots the plan's. Errors become
// BackendError: a witness that does not fit the key is not retryable; a CUDA error marks the
// device unhealthy (the engine then proves that device's partitions on the CPU or fails them).
// The device timeline comes from the Prover's CUDA events, anchored by a host callback.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "proofpipe/engine/backend.hpp"
#include "proofpipe/gpu/prover.hpp"

namespace pp::gpu {

class CudaBackend final : public engine::Backend {
 public:
  // The prover (and the key it was made for) must outlive the backend.
  CudaBackend(std::string name, Prover& prover);

  std::string name() const override { return name_; }
  int stage_slots() const override { return prover_.plan().stage_slots; }
  int msm_slots() const override { return prover_.plan().msm_slots; }
  std::unique_ptr<engine::Prepared> prepare(const engine::PartitionTask& task) override;
  void stage(engine::Prepared& p, int stage_slot, int msm_slot) override;
  void compute(engine::Prepared& p) override;
  Proof finish(engine::Prepared& p) override;
  bool healthy() const override { return healthy_.load(); }
  engine::DeviceCalls& device_calls() override { return prover_.device_calls(); }
  engine::DeviceTimeline& timeline() override { return timeline_; }

 private:
  template <class Fn>
  auto guarded(const char* phase, Fn&& fn) -> decltype(fn());

  std::string name_;
  Prover& prover_;
  std::atomic<bool> healthy_{true};
  engine::DeviceTimeline timeline_;
};

}  // namespace pp::gpu
