// SPDX-License-Identifier: Apache-2.0 OR MIT
// A test hook: a backend that loses its device partway through a run, as if the GPU had been made
// unavailable to the process, so that what the engine does then can be shown on any backend (the
// simulated device in CI, a real GPU through PROOFPIPE_TEST_LOSE_GPU; runtime.cpp, docs/ENGINE.md).
//
// LosingBackendOf<E> wraps a backend. When the `lose_at`-th prepare() call of the device starts
// (counted over every backend that shares its DeviceLoss: a GPU's BLS12-381 and BN254 backends
// are one device), the device is lost for good: healthy() is false from then on and every phase
// of every partition fails with a BackendError that is not retryable. A partition that was already
// staged when the loss happened first completes its device work inside the wrapped backend (its
// compute and finish run, the result is dropped), so the wrapped backend never has device work in
// flight for a Prepared the engine has destroyed; only then does the phase fail.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "proofpipe/engine/backend.hpp"

namespace pp::engine {

// One device's loss, shared by the wrappers of the backends that use that device.
struct DeviceLoss {
  explicit DeviceLoss(uint64_t lose_at_prepare) : lose_at(lose_at_prepare) {
    if (lose_at == 0) throw std::invalid_argument("DeviceLoss: lose_at must be at least 1 (the first prepare)");
  }
  const uint64_t lose_at;             // the prepare() call (1-based) at which the device is lost
  std::atomic<uint64_t> prepares{0};  // prepare() calls so far
  std::atomic<bool> lost{false};
};

template <class E>
class LosingBackendOf final : public BackendOf<E> {
 public:
  using Task = PartitionTaskOf<E>;
  // `inner` must outlive the wrapper.
  LosingBackendOf(BackendOf<E>& inner, std::shared_ptr<DeviceLoss> loss) : inner_(inner), loss_(std::move(loss)) {
    if (!loss_) throw std::invalid_argument("LosingBackend: no DeviceLoss");
  }

  std::string name() const override { return inner_.name(); }
  int stage_slots() const override { return inner_.stage_slots(); }
  int msm_slots() const override { return inner_.msm_slots(); }
  uint64_t host_bytes(const Task& task) const override { return inner_.host_bytes(task); }

  std::unique_ptr<Prepared> prepare(const Task& task) override {
    if (loss_->prepares.fetch_add(1) + 1 >= loss_->lose_at) loss_->lost.store(true);
    if (loss_->lost.load()) fail("prepare");
    auto p = std::make_unique<Wrapped>();
    p->inner = inner_.prepare(task);
    return p;
  }
  SlotDomain slot_domain(const Prepared& p) const override { return inner_.slot_domain(*as(p).inner); }
  void stage(Prepared& p, int stage_slot, int msm_slot) override {
    if (loss_->lost.load()) fail("stage");
    inner_.stage(*as(p).inner, stage_slot, msm_slot);
    as(p).state = State::staged;
  }
  void compute(Prepared& p) override {
    Wrapped& w = as(p);
    if (loss_->lost.load()) {
      drain(w);
      fail("compute");
    }
    inner_.compute(*w.inner);
    w.state = State::computed;
  }
  ProofOf<E> finish(Prepared& p) override {
    Wrapped& w = as(p);
    if (loss_->lost.load()) {
      drain(w);
      fail("finish");
    }
    w.state = State::finished;
    return inner_.finish(*w.inner);
  }
  bool healthy() const override { return !loss_->lost.load() && inner_.healthy(); }
  bool is_cpu_prover() const override { return inner_.is_cpu_prover(); }
  DeviceCalls& device_calls() override { return inner_.device_calls(); }
  DeviceTimeline& timeline() override { return inner_.timeline(); }

 private:
  enum class State { prepared, staged, computed, finished };
  struct Wrapped final : Prepared {
    std::unique_ptr<Prepared> inner;
    State state = State::prepared;
  };
  static Wrapped& as(Prepared& p) { return static_cast<Wrapped&>(p); }
  static const Wrapped& as(const Prepared& p) { return static_cast<const Wrapped&>(p); }

  // Runs the wrapped partition's remaining device phases to their end and drops the result.
  void drain(Wrapped& w) {
    try {
      if (w.state == State::staged) {
        inner_.compute(*w.inner);
        w.state = State::computed;
      }
      if (w.state == State::computed) {
        w.state = State::finished;
        (void)inner_.finish(*w.inner);
      }
    } catch (const std::exception&) {  // the wrapped backend's own fault: the partition fails anyway
    }
  }
  [[noreturn]] void fail(const char* phase) const {
    throw BackendError(inner_.name() + ": device lost in " + phase + " (test hook: the device was made unavailable)",
                       false);
  }

  BackendOf<E>& inner_;
  std::shared_ptr<DeviceLoss> loss_;
};
using LosingBackend = LosingBackendOf<Bls12_381>;

}  // namespace pp::engine
