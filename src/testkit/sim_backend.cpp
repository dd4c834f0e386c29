// SPDX-License-Identifier: Apache-2.0 OR MIT
// The simulated device: in-order copy and compute queues (threads), events, arena accounting on
// the device timeline, latencies and injected faults.
#include "proofpipe/engine/sim_backend.hpp"

#include <fmt/core.h>

#include <stdexcept>
#include <utility>

namespace pp::engine {

SimConfig SimConfig::from_plan(const MemoryPlan& plan) {
  SimConfig c;
  c.arena_capacity = plan.budget;
  c.shared_bytes = plan.group_bytes(RegionGroup::shared);
  c.compute_bytes = plan.group_bytes(RegionGroup::compute);
  c.stage_slots = plan.stage_slots;
  c.msm_slots = plan.msm_slots;
  c.stage_slot_bytes = plan.stage_slots > 0 ? plan.group_bytes(RegionGroup::stage, 0) : 0;
  c.msm_slot_bytes = plan.msm_slots > 0 ? plan.group_bytes(RegionGroup::msm, 0) : 0;
  return c;
}

void SimConfig::validate() const {
  auto bad = [&](const std::string& what) { throw std::invalid_argument("sim backend " + name + ": " + what); };
  if (stage_slots < 1) bad(fmt::format("stage_slots is {}; at least 1", stage_slots));
  if (msm_slots < stage_slots) bad(fmt::format("msm_slots ({}) below stage_slots ({})", msm_slots, stage_slots));
  if (planned_bytes() > arena_capacity)
    bad(fmt::format("the regions need {} bytes, the arena has {}", planned_bytes(), arena_capacity));
  for (int64_t us : {latency.prepare_us, latency.stage_us, latency.h_us, latency.msm_us, latency.finish_us})
    if (us < 0) bad("negative latency");
  for (double p : {faults.stage, faults.compute, faults.finish, faults.retryable_fraction, faults.device_lost, faults.corrupt,
                   faults.forbidden})
    if (!(p >= 0 && p <= 1)) bad("fault probability outside [0, 1]");
}

// ---- events and queues ----

struct SimBackend::Event {
  std::mutex mu;
  std::condition_variable cv;
  bool fired = false;
  void fire() {
    {
      std::lock_guard lock(mu);
      fired = true;
    }
    cv.notify_all();
  }
  void wait() {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return fired; });
  }
  static std::shared_ptr<Event> already_fired() {
    auto e = std::make_shared<Event>();
    e->fired = true;
    return e;
  }
};

struct SimBackend::Partition {
  PartitionTask task;  // copy: key and witness pointers stay valid while the engine runs it
  Proof proof;
  int stage_slot = -1, msm_slot = -1;
  std::shared_ptr<Event> staged, done, stage_released, msm_released;
  std::shared_ptr<Event> wait_stage_free, wait_msm_free;  // previous users' release events
  bool staged_called = false, computed = false;
};

namespace {
struct SimPrepared final : Prepared {
  std::shared_ptr<SimBackend::Partition> part;
};
SimBackend::Partition& state_of(Prepared& p) {
  auto* sp = dynamic_cast<SimPrepared*>(&p);
  if (!sp || !sp->part) throw std::logic_error("sim backend: Prepared of another backend");
  return *sp->part;
}
}  // namespace

// One in-order queue: a thread runs the enqueued work items one after another.
class SimBackend::Queue {
 public:
  Queue() : thread_([this] { run(); }) {}
  ~Queue() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void push(std::function<void()> work) {
    {
      std::lock_guard lock(mu_);
      work_.push_back(std::move(work));
    }
    cv_.notify_all();
  }

 private:
  void run() {
    for (;;) {
      std::function<void()> work;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stop_ || !work_.empty(); });
        if (work_.empty()) return;  // stop, and everything enqueued has run
        work = std::move(work_.front());
        work_.pop_front();
      }
      work();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> work_;
  bool stop_ = false;
  std::thread thread_;  // last: starts after the members it uses
};

// ---- the backend ----

namespace {
constexpr int kStage = 0, kMsm = 1;
}

SimBackend::SimBackend(SimConfig config) : config_(std::move(config)) {
  config_.validate();
  if (!config_.kernel) config_.kernel = cpu_prove_task<Bls12_381>;
  rng_.seed(config_.faults.seed);
  stage_busy_.assign(std::size_t(config_.stage_slots), false);
  msm_busy_.assign(std::size_t(config_.msm_slots), false);
  for (int i = 0; i < config_.stage_slots; ++i) stage_free_.push_back(Event::already_fired());
  for (int i = 0; i < config_.msm_slots; ++i) msm_free_.push_back(Event::already_fired());
  // Start-up, not steady state: the one arena allocation and the query of free memory.
  calls_.count(DeviceCall::mem_get_info);
  calls_.count(DeviceCall::malloc);
  in_use_ = peak_ = config_.shared_bytes + config_.compute_bytes;
  copy_ = std::make_unique<Queue>();
  compute_ = std::make_unique<Queue>();
}

SimBackend::~SimBackend() {
  // Queues drain what was enqueued, then stop; the compute queue may wait on the copy queue's
  // events, so it goes first while the copy queue still runs.
  compute_.reset();
  copy_.reset();
}

bool SimBackend::healthy() const {
  std::lock_guard lock(mu_);
  return healthy_;
}

uint64_t SimBackend::faults_injected() const {
  std::lock_guard lock(mu_);
  return faults_;
}

void SimBackend::synchronize() {
  // The copy queue first: the compute queue's items wait for its uploads, never the reverse.
  for (Queue* q : {copy_.get(), compute_.get()}) {
    auto drained = std::make_shared<Event>();
    q->push([drained] { drained->fire(); });
    drained->wait();
  }
}

SimArenaStats SimBackend::arena() const {
  std::lock_guard lock(mu_);
  return {config_.arena_capacity, in_use_, peak_, violations_, first_violation_};
}

void SimBackend::delay(int64_t us) const {
  if (us <= 0) return;
  const auto until = Clock::now() + std::chrono::microseconds(us);
  if (config_.latency.spin) {
    while (Clock::now() < until) {
    }
  } else {
    std::this_thread::sleep_until(until);
  }
}

void SimBackend::occupy(int kind, int slot, const std::string& who) {
  std::lock_guard lock(mu_);
  auto& busy = kind == kStage ? stage_busy_ : msm_busy_;
  const uint64_t bytes = kind == kStage ? config_.stage_slot_bytes : config_.msm_slot_bytes;
  if (busy[std::size_t(slot)]) {
    ++violations_;
    if (first_violation_.empty())
      first_violation_ = fmt::format("{}: {} slot {} occupied twice", who, kind == kStage ? "stage" : "msm", slot);
  }
  busy[std::size_t(slot)] = true;
  in_use_ += bytes;
  peak_ = std::max(peak_, in_use_);
  if (in_use_ > config_.arena_capacity) {
    ++violations_;
    if (first_violation_.empty())
      first_violation_ = fmt::format("{}: {} bytes in use, capacity {}", who, in_use_, config_.arena_capacity);
  }
}

void SimBackend::release(int kind, int slot) {
  std::lock_guard lock(mu_);
  auto& busy = kind == kStage ? stage_busy_ : msm_busy_;
  busy[std::size_t(slot)] = false;
  in_use_ -= kind == kStage ? config_.stage_slot_bytes : config_.msm_slot_bytes;
}

void SimBackend::maybe_fail(double probability, const char* phase, const PartitionTask& task) {
  bool retryable = false;
  {
    std::lock_guard lock(mu_);
    if (!healthy_)
      throw BackendError(fmt::format("{}: device lost ({} of job {} partition {})", config_.name, phase, task.job,
                                     task.partition),
                         false);
    if (probability <= 0) return;
    std::uniform_real_distribution<double> u(0, 1);
    if (u(rng_) >= probability) return;
    ++faults_;
    retryable = u(rng_) < config_.faults.retryable_fraction;
    if (config_.faults.device_lost > 0 && u(rng_) < config_.faults.device_lost) healthy_ = false;
  }
  throw BackendError(fmt::format("{}: injected {} fault (job {} partition {}, {})", config_.name, phase, task.job,
                                 task.partition, retryable ? "retryable" : "not retryable"),
                     retryable);
}

std::unique_ptr<Prepared> SimBackend::prepare(const PartitionTask& task) {
  auto part = std::make_shared<Partition>();
  part->task = task;
  part->proof = config_.kernel(task);
  delay(config_.latency.prepare_us);
  auto p = std::make_unique<SimPrepared>();
  p->part = std::move(part);
  return p;
}

void SimBackend::stage(Prepared& prepared, int stage_slot, int msm_slot) {
  Partition& part = state_of(prepared);
  if (stage_slot < 0 || stage_slot >= config_.stage_slots || msm_slot < 0 || msm_slot >= config_.msm_slots)
    throw std::logic_error(fmt::format("{}: stage slot {} / msm slot {} out of range", config_.name, stage_slot, msm_slot));
  if (part.staged_called) throw std::logic_error(config_.name + ": stage() called twice");
  maybe_fail(config_.faults.stage, "stage", part.task);  // before anything is enqueued
  part.staged_called = true;
  part.stage_slot = stage_slot;
  part.msm_slot = msm_slot;
  part.staged = std::make_shared<Event>();
  part.done = std::make_shared<Event>();
  part.stage_released = std::make_shared<Event>();
  part.msm_released = std::make_shared<Event>();
  {
    // The slots' previous users; this partition's release events replace them.
    std::lock_guard lock(mu_);
    part.wait_stage_free = std::exchange(stage_free_[std::size_t(stage_slot)], part.stage_released);
    part.wait_msm_free = std::exchange(msm_free_[std::size_t(msm_slot)], part.msm_released);
  }
  calls_.count(DeviceCall::stream_wait_event, 2);
  calls_.count(DeviceCall::memcpy_async, 4);
  calls_.count(DeviceCall::event_record);
  std::shared_ptr<Partition> self = dynamic_cast<SimPrepared&>(prepared).part;
  copy_->push([this, self] {
    self->wait_stage_free->wait();
    self->wait_msm_free->wait();
    const std::string who = fmt::format("job {} partition {}", self->task.job, self->task.partition);
    const auto t0 = Clock::now();
    occupy(kStage, self->stage_slot, who);
    occupy(kMsm, self->msm_slot, who);
    delay(config_.latency.stage_us);
    timeline_.record({"copy", "upload", self->task.job, self->task.partition, t0, Clock::now()});
    self->staged->fire();
  });
}

void SimBackend::compute(Prepared& prepared) {
  Partition& part = state_of(prepared);
  if (!part.staged_called || part.computed) throw std::logic_error(config_.name + ": compute() out of order");
  part.computed = true;
  std::shared_ptr<Partition> self = dynamic_cast<SimPrepared&>(prepared).part;
  try {
    maybe_fail(config_.faults.compute, "compute", part.task);
  } catch (...) {
    // Nothing of the partition's kernels was enqueued; its slots must still be freed in stream
    // order (after the upload that occupies them), or their next users would wait forever.
    compute_->push([this, self] {
      self->staged->wait();
      release(kStage, self->stage_slot);
      self->stage_released->fire();
      release(kMsm, self->msm_slot);
      self->msm_released->fire();
      self->done->fire();
    });
    throw;
  }
  calls_.count(DeviceCall::stream_wait_event);
  calls_.count(DeviceCall::kernel_launch, 8);
  calls_.count(DeviceCall::event_record, 2);
  compute_->push([this, self] {
    self->staged->wait();
    auto t0 = Clock::now();
    delay(config_.latency.h_us);
    auto t1 = Clock::now();
    timeline_.record({"compute", "h", self->task.job, self->task.partition, t0, t1});
    release(kStage, self->stage_slot);  // a, b, c are dead once H is done
    self->stage_released->fire();
    delay(config_.latency.msm_us);
    timeline_.record({"compute", "msm", self->task.job, self->task.partition, t1, Clock::now()});
    self->done->fire();
  });
}

Proof SimBackend::finish(Prepared& prepared) {
  Partition& part = state_of(prepared);
  if (!part.computed) throw std::logic_error(config_.name + ": finish() before compute()");
  calls_.count(DeviceCall::event_synchronize);
  part.done->wait();  // this partition's event only
  calls_.count(DeviceCall::memcpy_async);
  // Only reached after a successful compute(), so the msm slot is still this partition's.
  auto release_msm = [&] {
    release(kMsm, part.msm_slot);
    part.msm_released->fire();
  };
  try {
    maybe_fail(config_.faults.finish, "finish", part.task);
  } catch (...) {
    release_msm();
    throw;
  }
  delay(config_.latency.finish_us);
  release_msm();
  Proof proof = part.proof;
  if (config_.faults.corrupt > 0) {
    std::lock_guard lock(mu_);
    if (std::uniform_real_distribution<double>(0, 1)(rng_) < config_.faults.corrupt) {
      proof.c = -proof.c;
      ++corrupted_;
    }
  }
  if (config_.faults.forbidden > 0) {
    std::lock_guard lock(mu_);
    if (std::uniform_real_distribution<double>(0, 1)(rng_) < config_.faults.forbidden) {
      calls_.count(DeviceCall::device_synchronize);
      ++forbidden_;
    }
  }
  return proof;
}

uint64_t SimBackend::forbidden_made() const {
  std::lock_guard lock(mu_);
  return forbidden_;
}

uint64_t SimBackend::results_corrupted() const {
  std::lock_guard lock(mu_);
  return corrupted_;
}

}  // namespace pp::engine
