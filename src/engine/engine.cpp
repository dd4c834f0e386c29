// SPDX-License-Identifier: Apache-2.0 OR MIT
// The pipelined engine: the shared queue, workers, host budget, slots and tokens in their one
// order (engine.hpp), retries and fallback, stats and the trace it records (trace_export.cpp
// writes it out).
#include "proofpipe/engine/engine.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <map>
#include <stdexcept>
#include <thread>

#include "proofpipe/engine/plan.hpp"
#include "proofpipe/engine/cpu_backend.hpp"
#include "proofpipe/groth16/prover.hpp"
#include "proofpipe/groth16/query_layout.hpp"

namespace pp::engine {

const char* to_string(Interlock i) { return i == Interlock::single ? "single" : "two"; }

const char* to_string(JobStatus s) {
  switch (s) {
    case JobStatus::pending: return "pending";
    case JobStatus::ok: return "ok";
    case JobStatus::failed: return "failed";
    case JobStatus::cancelled: return "cancelled";
  }
  return "?";
}

double EngineStats::gpu_busy() const {
  if (backends.empty()) return 0;
  double sum = 0;
  for (const auto& b : backends) sum += b.gpu_busy;
  return sum / double(backends.size());
}

// ---- jobs ----

enum class Abort : int { none = 0, cancelled = 1, failed = 2 };

template <class E>
struct JobStateOf {
  uint64_t id = 0;
  JobSpecOf<E> spec;
  std::vector<RandomizersOf<typename E::Fr>> randomizers;
  std::atomic<int> abort{int(Abort::none)};  // set once by cancel() or a failure under fail_job
  mutable std::mutex mu;                     // leaf lock: nothing else is acquired under it
  mutable std::condition_variable cv;
  std::vector<PartitionResultOf<E>> parts;
  std::size_t remaining = 0;
  JobResultOf<E> result;  // final once result.status != pending
};

template <class E>
uint64_t JobHandleOf<E>::id() const { return state_ ? state_->id : 0; }

template <class E>
bool JobHandleOf<E>::done() const {
  if (!state_) return true;
  std::lock_guard lock(state_->mu);
  return state_->result.status != JobStatus::pending;
}

template <class E>
JobResultOf<E> JobHandleOf<E>::wait() const {
  if (!state_) throw std::logic_error("JobHandle::wait on an empty handle");
  std::unique_lock lock(state_->mu);
  state_->cv.wait(lock, [&] { return state_->result.status != JobStatus::pending; });
  return state_->result;
}

template <class E>
std::optional<JobResultOf<E>> JobHandleOf<E>::wait_for(std::chrono::milliseconds timeout) const {
  if (!state_) throw std::logic_error("JobHandle::wait_for on an empty handle");
  std::unique_lock lock(state_->mu);
  if (!state_->cv.wait_for(lock, timeout, [&] { return state_->result.status != JobStatus::pending; }))
    return std::nullopt;
  return state_->result;
}

template <class E>
std::vector<PartitionResultOf<E>> JobHandleOf<E>::partitions() const {
  if (!state_) return {};
  std::lock_guard lock(state_->mu);
  return state_->parts;
}

// ---- resources ----

void HostBudget::acquire(uint64_t bytes) {
  if (limit_ != 0 && bytes > limit_)  // nothing could ever make room: no turn taken
    throw HostBudgetError(fmt::format("{} of host memory for a partition, above the whole budget of {}",
                                      format_bytes(bytes), format_bytes(limit_)));
  std::unique_lock lock(mu_);
  const uint64_t ticket = next_ticket_++;
  const auto fits = [&] { return limit_ == 0 || held_ + used_ + bytes <= limit_; };
  // In turn, until the bytes fit, or until no partition holds any (then nothing will make room).
  cv_.wait(lock, [&] { return serving_ == ticket && (fits() || used_ == 0); });
  ++serving_;
  if (!fits()) {
    cv_.notify_all();  // the next in turn goes on
    throw HostBudgetError(fmt::format("{} of host memory for a partition, beside {} held for proving (pinned buffers, "
                                      "streamed keys' host copies), is above the host budget of {}",
                                      format_bytes(bytes), format_bytes(held_), format_bytes(limit_)));
  }
  used_ += bytes;
  peak_ = std::max(peak_, held_ + used_);
  cv_.notify_all();  // the next ticket may fit too
}

void HostBudget::release(uint64_t bytes) {
  {
    std::lock_guard lock(mu_);
    used_ -= bytes;
  }
  cv_.notify_all();
}

void HostBudget::hold(uint64_t bytes, const std::string& what) {
  std::lock_guard lock(mu_);
  if (limit_ != 0 && held_ + bytes > limit_)
    throw HostBudgetError(fmt::format("{} needs {} of host memory held while it lives, beside {} already held: above "
                                      "the host budget of {}",
                                      what, format_bytes(bytes), format_bytes(held_), format_bytes(limit_)));
  held_ += bytes;
  peak_ = std::max(peak_, held_ + used_);
}

void HostBudget::unhold(uint64_t bytes) {
  {
    std::lock_guard lock(mu_);
    held_ -= bytes;
  }
  cv_.notify_all();
}

uint64_t HostBudget::held() const {
  std::lock_guard lock(mu_);
  return held_;
}

uint64_t HostBudget::peak() const {
  std::lock_guard lock(mu_);
  return peak_;
}

std::string HostBudget::describe() const {
  std::lock_guard lock(mu_);
  return fmt::format("host budget: {} of {} bytes in use by partitions, {} held, {} waiting", used_,
                     limit_ ? std::to_string(limit_) : "unlimited", held_, next_ticket_ - serving_);
}

namespace {

// Why a partition fails when the CPU prover's own proof is rejected by the check.
constexpr const char* kUnsatisfied =
    "the CPU prover's proof was rejected by the check: the witness does not satisfy the key's circuit (or the key's "
    "verifying key does not belong to its proving key)";

// A counting resource whose units are numbered (the arena slots).
class SlotPool {
 public:
  explicit SlotPool(int n) {
    for (int i = n - 1; i >= 0; --i) free_.push_back(i);
    total_ = n;
  }
  int acquire() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !free_.empty(); });
    const int slot = free_.back();
    free_.pop_back();
    return slot;
  }
  void release(int slot) {
    {
      std::lock_guard lock(mu_);
      free_.push_back(slot);
    }
    cv_.notify_one();
  }
  std::string describe() const {
    std::lock_guard lock(mu_);
    return fmt::format("{} of {} free", free_.size(), total_);
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<int> free_;
  int total_ = 0;
};

// Releases a slot on scope exit unless released earlier.
class SlotHold {
 public:
  SlotHold(SlotPool& pool, int slot) : pool_(&pool), slot_(slot) {}
  ~SlotHold() { release(); }
  SlotHold(const SlotHold&) = delete;
  SlotHold& operator=(const SlotHold&) = delete;
  void release() {
    if (pool_) pool_->release(slot_);
    pool_ = nullptr;
  }
  int slot() const { return slot_; }

 private:
  SlotPool* pool_;
  int slot_;
};

int64_t ns_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count();
}

}  // namespace

// ---- the engine ----

template <class E>
struct EngineOf<E>::Impl {
  using Fr = typename E::Fr;
  using Proof = ProofOf<E>;
  using ProvingKey = ProvingKeyOf<E>;
  using PreparedVerifyingKey = PreparedVerifyingKeyOf<E>;
  using PartitionTask = PartitionTaskOf<E>;
  using PartitionResult = PartitionResultOf<E>;
  using JobResult = JobResultOf<E>;
  using JobState = JobStateOf<E>;
  using EngineConfig = EngineConfigOf<E>;
  struct Event {  // compact trace record
    const char* name;
    int backend, worker;
    uint64_t job;
    std::size_t partition;
    int64_t start_ns, end_ns;
  };
  struct WorkerInfo {
    std::atomic<const char*> doing{"idle"};
    std::atomic<uint64_t> job{0};
    std::atomic<std::size_t> partition{0};
  };
  // The stage and msm slots of one slot domain (one arena) of a backend.
  struct Domain {
    SlotDomain counts;
    SlotPool stage, msm;
    explicit Domain(const SlotDomain& d) : counts(d), stage(d.stage_slots), msm(d.msm_slots) {}
  };
  struct BackendCtx {
    Backend* backend = nullptr;
    int index = 0;
    mutable std::mutex domains_mu;  // leaf lock: guards the map, never held while waiting for a slot
    std::map<uint64_t, std::unique_ptr<Domain>> domains;
    // The slot pools of domain d, made at first use. A domain's counts must not change.
    Domain& domain(const SlotDomain& d) {
      if (d.stage_slots < 1 || d.msm_slots < d.stage_slots)
        throw std::logic_error(fmt::format("engine: backend {} gave slot domain {} with {} stage and {} msm slots "
                                           "(need 1 <= stage <= msm)", backend->name(), d.id, d.stage_slots, d.msm_slots));
      std::lock_guard lock(domains_mu);
      auto& slot = domains[d.id];
      if (!slot) slot = std::make_unique<Domain>(d);
      if (slot->counts.stage_slots != d.stage_slots || slot->counts.msm_slots != d.msm_slots)
        throw std::logic_error(fmt::format("engine: backend {} changed the slot counts of domain {}", backend->name(), d.id));
      return *slot;
    }
    std::mutex memory_token;   // Interlock::single: the one lock
    std::mutex compute_token;
    std::vector<std::unique_ptr<WorkerInfo>> workers;
    uint64_t forbidden_at_start = 0;
    mutable std::mutex stats_mu;
    std::map<std::string, StageTotals> stages;
    uint64_t partitions = 0, errors = 0, retries = 0, fallbacks = 0, checked = 0, rejected = 0, handed_off = 0;
    std::atomic<bool> loss_seen{false};  // the engine has woken the other workers for this backend's loss
  };
  struct WorkItem {
    std::shared_ptr<JobState> job;
    std::size_t partition = 0;
    // A backend that must not take this partition: one whose proof of it was rejected, or one that
    // was lost while it held it. Another one proves it.
    int avoid = -1;
    int rejections = 0;  // proofs of this partition rejected so far
  };

  EngineConfig config;
  Clock::time_point start = Clock::now();
  std::vector<std::unique_ptr<BackendCtx>> backends;
  std::shared_ptr<HostBudget> budget_owner;
  HostBudget& budget;

  mutable std::mutex q_mu;  // queue, job table, lifecycle flags
  std::condition_variable q_cv;
  std::deque<WorkItem> queue;
  std::map<uint64_t, std::weak_ptr<JobState>> jobs;
  uint64_t next_job = 1;
  bool stopping = false, stopped = false;
  std::mutex shutdown_mu;  // serialises shutdown() callers
  std::vector<std::thread> threads;

  mutable std::mutex trace_mu;
  std::vector<Event> events;

  std::atomic<uint64_t> jobs_submitted{0}, jobs_done{0}, ended{0}, ok{0}, failed{0}, cancelled{0}, cpu{0};
  std::atomic<int64_t> first_submit_ns{-1}, last_end_ns{-1};
  std::atomic<uint64_t> checked{0}, rejected{0}, cpu_rejected{0}, check_ns{0};

  // The prepared verifying key of each key proved (e(alpha, beta) computed once per key). The
  // weak pointer tells a key from a later one at the same address.
  std::mutex pvk_mu;
  std::map<const ProvingKey*, std::pair<std::weak_ptr<const ProvingKey>, std::shared_ptr<const PreparedVerifyingKey>>> pvks;
  std::shared_ptr<const PreparedVerifyingKey> pvk_of(const std::shared_ptr<const ProvingKey>& key) {
    std::lock_guard lock(pvk_mu);
    auto& [weak, pvk] = pvks[key.get()];
    if (!pvk || weak.lock() != key) {
      pvk = std::make_shared<const PreparedVerifyingKey>(prepare(key->vk));
      weak = key;
      // Keys that are gone leave their entries: drop them here, where a new key is added, so a
      // long-running engine that sees many keys keeps one entry per live key.
      std::erase_if(pvks, [](const auto& e) { return e.second.first.expired(); });
    }
    return pvk;
  }

  Impl(EngineConfig c)
      : config(std::move(c)),
        budget_owner(config.shared_host_budget ? config.shared_host_budget
                                               : std::make_shared<HostBudget>(config.host_mem_bytes)),
        budget(*budget_owner) {}

  // RAII: a stage of a worker, timed into the stats and the trace.
  class Span {
   public:
    Span(Impl& e, BackendCtx& b, int worker, const char* name, const PartitionTask& t)
        : e_(e), b_(b), worker_(worker), name_(name), job_(t.job), part_(t.partition), t0_(Clock::now()) {
      WorkerInfo& w = *b.workers[std::size_t(worker)];
      w.doing.store(name);
      w.job.store(t.job);
      w.partition.store(t.partition);
    }
    ~Span() {
      const auto t1 = Clock::now();
      const double ms = std::chrono::duration<double, std::milli>(t1 - t0_).count();
      {
        std::lock_guard lock(b_.stats_mu);
        StageTotals& s = b_.stages[name_];
        ++s.count;
        s.total_ms += ms;
        s.max_ms = std::max(s.max_ms, ms);
      }
      if (e_.config.trace) {
        std::lock_guard lock(e_.trace_mu);
        e_.events.push_back({name_, b_.index, worker_, job_, part_, ns_between(e_.start, t0_), ns_between(e_.start, t1)});
      }
      b_.workers[std::size_t(worker_)]->doing.store("between stages");
    }
    Span(const Span&) = delete;
    Span& operator=(const Span&) = delete;

   private:
    Impl& e_;
    BackendCtx& b_;
    int worker_;
    const char* name_;
    uint64_t job_;
    std::size_t part_;
    Clock::time_point t0_;
  };

  Proof cpu_prove(const PartitionTask& task) {
    return config.cpu_prover ? config.cpu_prover(task) : cpu_prove_task(task);
  }

  // Phases 1..4 on the backend, resources in the documented order. Throws what the backend throws.
  Proof run_on_backend(BackendCtx& b, int w, const PartitionTask& task) {
    Backend& dev = *b.backend;
    std::unique_ptr<Prepared> prep;
    {
      Span s(*this, b, w, "prepare", task);
      prep = dev.prepare(task);
    }
    Domain& slots = b.domain(dev.slot_domain(*prep));
    int msm_slot, stage_slot;
    {
      Span s(*this, b, w, "wait-slots", task);
      msm_slot = slots.msm.acquire();  // order 2
    }
    SlotHold msm_hold(slots.msm, msm_slot);
    {
      Span s(*this, b, w, "wait-slots", task);
      stage_slot = slots.stage.acquire();  // order 3
    }
    SlotHold stage_hold(slots.stage, stage_slot);
    Proof proof;
    if (config.interlock == Interlock::single) {
      // The ablation: one lock from the upload through the wait for the device.
      std::unique_lock<std::mutex> gpu;
      {
        Span s(*this, b, w, "wait-lock", task);
        gpu = std::unique_lock(b.memory_token);
      }
      {
        Span s(*this, b, w, "stage", task);
        dev.stage(*prep, stage_slot, msm_slot);
      }
      {
        Span s(*this, b, w, "compute", task);
        dev.compute(*prep);
      }
      stage_hold.release();
      Span s(*this, b, w, "finish", task);
      proof = dev.finish(*prep);
    } else {
      {
        std::unique_lock<std::mutex> memory;
        {
          Span s(*this, b, w, "wait-memory", task);
          memory = std::unique_lock(b.memory_token);  // order 4
        }
        Span s(*this, b, w, "stage", task);
        dev.stage(*prep, stage_slot, msm_slot);
      }  // memory token released before the compute token is requested
      {
        std::unique_lock<std::mutex> compute;
        {
          Span s(*this, b, w, "wait-compute", task);
          compute = std::unique_lock(b.compute_token);  // order 5
        }
        Span s(*this, b, w, "compute", task);
        dev.compute(*prep);
      }
      stage_hold.release();  // the device orders its reuse after this partition's H step
      Span s(*this, b, w, "finish", task);
      proof = dev.finish(*prep);
    }
    msm_hold.release();
    return proof;
  }

  // The check before release (EngineConfig::check_proofs): true when `proof` verifies against
  // the key's verifying key and the witness's public inputs. Counted, timed as stage "check" of
  // backend b, and reported through on_rejected when it fails.
  bool accept(BackendCtx& b, int w, const PartitionTask& task, const Proof& proof, const std::string& where) {
    if (!config.check_proofs) return true;
    const auto t0 = Clock::now();
    bool valid = false;
    {
      Span s(*this, b, w, "check", task);
      try {
        const HostArray<Fr>& input = task.witness->input;
        valid = !input.empty() &&
                verify(*pvk_of(task.key), std::span<const Fr>(input.data() + 1, input.size() - 1), proof);
      } catch (const std::exception&) {
        valid = false;  // e.g. the public inputs' count does not match the key: nothing can verify
      }
    }
    check_ns.fetch_add(uint64_t(ns_between(t0, Clock::now())));
    checked.fetch_add(1);
    if (where == b.backend->name()) {  // the backend's own proof; a CPU fallback's is the engine's
      std::lock_guard lock(b.stats_mu);
      ++b.checked;
      if (!valid) ++b.rejected;
    } else if (!valid) {
      cpu_rejected.fetch_add(1);
    }
    if (!valid) {
      rejected.fetch_add(1);
      if (config.on_rejected) {
        try {
          config.on_rejected(where, task.job, task.partition);
        } catch (...) {
        }
      }
    }
    return valid;
  }

  // Whether a backend other than b is healthy (a rejected proof, or a partition of a lost
  // backend, is proved again there).
  bool another_backend(const BackendCtx& b) const {
    return std::any_of(backends.begin(), backends.end(),
                       [&](const auto& o) { return o.get() != &b && o->backend->healthy(); });
  }

  // Whether b's workers may take queued partition i (under q_mu). A job pinned to a backend runs
  // there only while it is healthy; its own workers may always take it (lost, it hands the
  // partition over at once: process()), so that a loss their engine was not told of — a device
  // shared with another engine's backend — still reaches the queue. Any other partition
  // (unpinned, or pinned to a backend that was lost: the pin named a device that is gone) goes to a
  // healthy backend other than the one it must avoid; a lost backend's workers take it only when
  // no such backend is left, and prove it on the CPU or fail it, so nothing waits for a dead device.
  bool may_take(const WorkItem& i, const BackendCtx& b) const {
    if (b.index == i.avoid) return false;
    const int pin = i.job->spec.backend;
    if (pin == b.index) return true;
    if (pin >= 0 && backends[std::size_t(pin)]->backend->healthy()) return false;
    if (b.backend->healthy()) return true;
    return std::none_of(backends.begin(), backends.end(),
                        [&](const auto& o) { return o->index != i.avoid && o->backend->healthy(); });
  }

  // Called by b's workers after each partition: the first time b is seen unhealthy, every waiting
  // worker re-evaluates what it may take (the partitions pinned to b are now anyone's). q_mu is
  // taken first so that no worker is between testing its predicate and starting to wait.
  void notice_loss(BackendCtx& b) {
    if (b.backend->healthy() || b.loss_seen.exchange(true)) return;
    { std::lock_guard lock(q_mu); }
    q_cv.notify_all();
  }

  // A partition that b cannot prove because b was lost goes back to the queue for a healthy
  // backend (a retry elsewhere, not the CPU) when there is one and the job still runs. The
  // caller returns at once: its budget hold is released on the way out.
  bool hand_off(BackendCtx& b, const WorkItem& item, int rejections) {
    if (b.backend->healthy() || !another_backend(b) || item.job->abort.load() != int(Abort::none)) return false;
    {
      std::lock_guard lock(b.stats_mu);
      ++b.handed_off;
    }
    requeue({item.job, item.partition, b.index, rejections});
    return true;
  }

  // Puts a partition back at the front of the queue (it was taken first: it goes first again).
  void requeue(WorkItem item) {
    {
      std::lock_guard lock(q_mu);
      queue.push_front(std::move(item));
    }
    q_cv.notify_all();
  }

  void process(BackendCtx& b, int w, const WorkItem& item) {
    JobState& job = *item.job;
    const std::size_t p = item.partition;
    PartitionResult result;
    PartitionTask task;
    task.job = job.id;
    task.partition = job.spec.partition_base + p;
    task.partitions = job.spec.partition_base + job.parts.size();
    task.key = job.spec.key;
    const WitnessSourceOf<E>* source = job.spec.sources.empty() ? nullptr : &job.spec.sources[p];
    task.witness = source ? nullptr : job.spec.witnesses[p].get();  // a source's is made once admitted
    task.randomizers = job.randomizers[p];
    if (job.abort.load() != int(Abort::none)) {
      result.status = JobStatus::cancelled;
      result.error = "the job was cancelled or failed before this partition started";
      return end_partition(job, p, std::move(result));
    }
    if (hand_off(b, item, item.rejections)) return;  // lost since its worker took the partition
    // The partition fails before it starts, its error `why` prefixed with its number; `ex` the
    // exception as thrown, or null for a HostBudgetError carrying the error.
    auto fail_before_start = [&](const std::string& why, std::exception_ptr ex) {
      result.status = JobStatus::failed;
      result.error = fmt::format("partition {}: {}", task.partition, why);
      result.exception = ex ? std::move(ex) : std::make_exception_ptr(HostBudgetError(result.error));
      end_partition(job, p, std::move(result));
    };
    task.host_bytes = source ? source->bytes : b.backend->host_bytes(task);
    try {
      Span s(*this, b, w, "wait-host", task);
      budget.acquire(task.host_bytes);  // order 1
    } catch (const HostBudgetError& e) {  // above the budget, or beside the holdings: it never fits
      return fail_before_start(e.what(), nullptr);
    }
    struct BudgetHold {
      HostBudget& b;
      uint64_t n;
      ~BudgetHold() { b.release(n); }
    } budget_hold{budget, task.host_bytes};
    // Declared after the budget's hold: the witness goes before its bytes are released.
    std::shared_ptr<const WitnessOf<E>> made;
    if (source) {
      try {
        Span s(*this, b, w, "witness", task);
        made = source->make();
        if (!made) throw std::invalid_argument("the witness source made no witness");
      } catch (const std::exception& e) {
        return fail_before_start(e.what(), std::current_exception());
      }
      task.witness = made.get();
    }

    std::string errors;
    std::exception_ptr last_error;  // the failure that decides the partition's outcome
    auto note_error = [&](const std::string& what) { errors += (errors.empty() ? "" : "; ") + what; };
    bool proved = false;
    bool unsatisfied = false;  // the CPU prover's own proof was rejected: no fallback can help
    int rejections = item.rejections;
    bool healthy = b.backend->healthy();
    // Attempts on this backend: retryable faults up to max_retries times, and one more proof after
    // a first rejected one when no other backend can take it.
    int attempts = config.max_retries;  // beyond the first
    for (int attempt = 0; healthy && attempt <= attempts; ++attempt) {
      if (job.abort.load() != int(Abort::none)) break;
      task.attempt = attempt;
      result.attempts = attempt + 1;
      try {
        Proof proof = run_on_backend(b, w, task);
        if (!accept(b, w, task, proof, b.backend->name())) {
          if (b.backend->is_cpu_prover()) {  // proving again on the CPU would only repeat it
            note_error(fmt::format("partition {}: {}", task.partition, kUnsatisfied));
            last_error = std::make_exception_ptr(WitnessError(errors));
            unsatisfied = true;
            break;
          }
          note_error(fmt::format("{}'s proof was rejected by the check", b.backend->name()));
          if (++rejections == 1 && job.spec.backend < 0 && another_backend(b)) {
            requeue({item.job, p, b.index, rejections});  // proved again elsewhere; the budget is released here
            return;
          }
          if (rejections == 1) {  // once more here (not one of the retries of a fault)
            ++attempts;
            continue;
          }
          break;                          // rejected twice: the CPU decides
        }
        result.proof = std::move(proof);
        result.where = b.backend->name();
        proved = true;
        break;
      } catch (const BackendError& e) {
        note_error(e.what());
        last_error = std::current_exception();
        std::lock_guard lock(b.stats_mu);
        ++b.errors;
        if (!e.retryable()) break;
        if (attempt < attempts) ++b.retries;
      } catch (const std::exception& e) {  // not the device's fault (e.g. a bad witness): no retry
        note_error(e.what());
        last_error = std::current_exception();
        std::lock_guard lock(b.stats_mu);
        ++b.errors;
        break;
      }
      healthy = b.backend->healthy();
    }
    if (!proved && !unsatisfied && hand_off(b, item, rejections)) return;
    if (!healthy && errors.empty()) errors = b.backend->name() + " is unhealthy";
    if (!proved && !unsatisfied && job.abort.load() == int(Abort::none)) {
      if (config.fallback == Fallback::cpu) {
        try {
          Proof proof;
          {
            Span s(*this, b, w, "cpu-prove", task);
            proof = cpu_prove(task);
          }
          cpu.fetch_add(1);
          {
            std::lock_guard lock(b.stats_mu);
            ++b.fallbacks;
          }
          if (accept(b, w, task, proof, "cpu")) {
            result.proof = std::move(proof);
            result.where = "cpu";
            proved = true;
          } else {
            note_error(fmt::format("partition {}: {}", task.partition, kUnsatisfied));
            last_error = std::make_exception_ptr(WitnessError(errors));
          }
        } catch (const std::exception& e) {
          note_error(std::string("cpu fallback: ") + e.what());
          last_error = std::current_exception();
        }
      } else if (rejections > 0 && !last_error) {
        last_error = std::make_exception_ptr(std::runtime_error(
            errors + ": rejected on every attempt, and the engine has no CPU fallback"));
      }
    }
    if (proved && job.abort.load() == int(Abort::none)) {
      result.status = JobStatus::ok;
      if (result.where != "cpu") {
        std::lock_guard lock(b.stats_mu);
        ++b.partitions;
      }
    } else if (job.abort.load() != int(Abort::none)) {
      result.status = JobStatus::cancelled;
      result.proof.reset();
      result.error = "the job was cancelled or failed while this partition ran";
    } else {
      result.status = JobStatus::failed;
      result.error = errors;
      result.exception = last_error ? last_error : std::make_exception_ptr(std::runtime_error(errors));
    }
    end_partition(job, p, std::move(result));
  }

  void end_partition(JobState& job, std::size_t p, PartitionResult result) {
    if (result.status == JobStatus::failed) {
      int expected = int(Abort::none);
      job.abort.compare_exchange_strong(expected, int(Abort::failed));  // the job's other partitions stop
    }
    (result.status == JobStatus::ok ? ok : result.status == JobStatus::failed ? failed : cancelled).fetch_add(1);
    if (job.spec.on_partition) {
      try {
        job.spec.on_partition(job.id, p, result);
      } catch (...) {  // a callback must not take a worker down
      }
    }
    bool finished = false;
    {
      std::lock_guard lock(job.mu);
      job.parts[p] = std::move(result);
      if (--job.remaining == 0) {
        finished = true;
        JobResult& r = job.result;
        r.id = job.id;
        r.partitions = job.parts;
        JobStatus status = JobStatus::ok;
        for (const auto& part : job.parts) {
          if (part.status == JobStatus::failed) {
            status = JobStatus::failed;
            if (r.error.empty()) r.error = part.error;
          }
        }
        if (status == JobStatus::ok)
          for (const auto& part : job.parts)
            if (part.status != JobStatus::ok) status = JobStatus::cancelled;
        if (status == JobStatus::ok)
          for (const auto& part : job.parts) r.proofs.push_back(*part.proof);
        r.status = status;
      }
    }
    last_end_ns.store(ns_between(start, Clock::now()));
    ended.fetch_add(1);
    if (finished) {
      job.cv.notify_all();
      jobs_done.fetch_add(1);
      std::lock_guard lock(q_mu);
      jobs.erase(job.id);
    }
  }

  void worker_loop(BackendCtx& b, int w) {
    for (;;) {
      WorkItem item;
      {
        std::unique_lock lock(q_mu);
        b.workers[std::size_t(w)]->doing.store("waiting for work");
        // The oldest queued partition this backend may take (may_take).
        auto mine = [&] {
          return std::find_if(queue.begin(), queue.end(), [&](const WorkItem& i) { return may_take(i, b); });
        };
        q_cv.wait(lock, [&] { return mine() != queue.end() || stopping; });
        const auto it = mine();
        if (it == queue.end()) {
          b.workers[std::size_t(w)]->doing.store("exited");
          return;
        }
        item = std::move(*it);
        queue.erase(it);
      }
      process(b, w, item);
      notice_loss(b);
    }
  }

  // Removes the queued partitions of `job_id` (all jobs when 0) and ends them as cancelled.
  void drop_queued(uint64_t job_id) {
    std::vector<WorkItem> dropped;
    {
      std::lock_guard lock(q_mu);
      for (auto it = queue.begin(); it != queue.end();) {
        if (job_id == 0 || it->job->id == job_id) {
          dropped.push_back(std::move(*it));
          it = queue.erase(it);
        } else {
          ++it;
        }
      }
    }
    for (auto& item : dropped) {
      PartitionResult r;
      r.status = JobStatus::cancelled;
      r.error = "cancelled before it started";
      end_partition(*item.job, item.partition, std::move(r));
    }
  }
};

template <class E>
EngineOf<E>::EngineOf(std::vector<Backend*> backends, Config config) : impl_(std::make_unique<Impl>(std::move(config))) {
  Impl& e = *impl_;
  if (backends.empty()) throw std::invalid_argument("engine: no backend");
  if (e.config.gw < 1 || e.config.gw > 64)
    throw std::invalid_argument(fmt::format("engine: gw is {}; it must be 1 .. 64", e.config.gw));
  if (e.config.max_retries < 0) throw std::invalid_argument("engine: max_retries is negative");
  for (std::size_t i = 0; i < backends.size(); ++i) {
    Backend* dev = backends[i];
    if (!dev) throw std::invalid_argument("engine: a backend is null");
    if (dev->stage_slots() < 1 || dev->msm_slots() < dev->stage_slots())
      throw std::invalid_argument(fmt::format("engine: backend {} has {} stage and {} msm slots (need 1 <= stage <= msm)",
                                              dev->name(), dev->stage_slots(), dev->msm_slots()));
    auto ctx = std::make_unique<typename Impl::BackendCtx>();
    ctx->backend = dev;
    ctx->index = int(i);
    for (int w = 0; w < e.config.gw; ++w) ctx->workers.push_back(std::make_unique<typename Impl::WorkerInfo>());
    ctx->forbidden_at_start = dev->device_calls().forbidden();
    e.backends.push_back(std::move(ctx));
  }
  for (auto& ctx : e.backends)
    for (int w = 0; w < e.config.gw; ++w) e.threads.emplace_back([&e, b = ctx.get(), w] { e.worker_loop(*b, w); });
}

template <class E>
EngineOf<E>::~EngineOf() {
  try {
    shutdown(Shutdown::cancel);
  } catch (...) {
  }
}

template <class E>
typename EngineOf<E>::Handle EngineOf<E>::submit(Spec spec) {
  Impl& e = *impl_;
  if (!spec.key) throw std::invalid_argument("engine: job without a key");
  if (spec.witnesses.empty() && spec.sources.empty()) throw std::invalid_argument("engine: job without witnesses");
  if (!spec.witnesses.empty() && !spec.sources.empty())
    throw std::invalid_argument("engine: a job gives witnesses or witness sources, not both");
  for (std::size_t p = 0; p < spec.witnesses.size(); ++p)
    if (!spec.witnesses[p]) throw std::invalid_argument("engine: partition " + std::to_string(p) + " has no witness");
  for (std::size_t p = 0; p < spec.sources.size(); ++p)
    if (!spec.sources[p].make)
      throw std::invalid_argument("engine: partition " + std::to_string(p) + "'s witness source makes nothing");
  if (spec.backend < -1 || spec.backend >= int(e.backends.size()))
    throw std::invalid_argument(fmt::format("engine: backend {} asked for; the engine has {} (0 .. {}, or -1 for any)",
                                            spec.backend, e.backends.size(), e.backends.size() - 1));
  auto job = std::make_shared<JobStateOf<E>>();
  const std::size_t n = spec.witnesses.size() + spec.sources.size();
  if (!spec.randomizers.empty() && spec.randomizers.size() != n)
    throw std::invalid_argument(fmt::format("engine: {} randomiser pair(s) for {} partition(s)", spec.randomizers.size(), n));
  job->randomizers = spec.randomizers.empty() ? randomizers_from_seed<typename E::Fr>(spec.seed, n) : spec.randomizers;
  job->spec = std::move(spec);
  job->parts.resize(n);
  job->remaining = n;
  {
    std::lock_guard lock(e.q_mu);
    if (e.stopping) throw std::logic_error("engine: submit after shutdown");
    job->id = e.config.job_ids ? e.config.job_ids->fetch_add(1) : e.next_job++;
    e.jobs[job->id] = job;
    for (std::size_t p = 0; p < n; ++p) e.queue.push_back({job, p});
  }
  int64_t unset = -1;
  e.first_submit_ns.compare_exchange_strong(unset, ns_between(e.start, Clock::now()));
  e.jobs_submitted.fetch_add(1);
  e.q_cv.notify_all();
  return Handle(job);
}

template <class E>
bool EngineOf<E>::cancel(uint64_t job_id) {
  Impl& e = *impl_;
  std::shared_ptr<JobStateOf<E>> job;
  {
    std::lock_guard lock(e.q_mu);
    auto it = e.jobs.find(job_id);
    if (it == e.jobs.end()) return false;
    job = it->second.lock();
  }
  if (!job) return false;
  int expected = int(Abort::none);
  job->abort.compare_exchange_strong(expected, int(Abort::cancelled));
  e.drop_queued(job_id);
  return true;
}

template <class E>
void EngineOf<E>::shutdown(Shutdown how) {
  Impl& e = *impl_;
  std::lock_guard serial(e.shutdown_mu);
  if (e.stopped) return;
  if (how == Shutdown::cancel) {
    std::vector<std::shared_ptr<JobStateOf<E>>> all;
    {
      std::lock_guard lock(e.q_mu);
      e.stopping = true;
      for (auto& [id, weak] : e.jobs)
        if (auto j = weak.lock()) all.push_back(j);
    }
    for (auto& j : all) {
      int expected = int(Abort::none);
      j->abort.compare_exchange_strong(expected, int(Abort::cancelled));
    }
    e.drop_queued(0);
  } else {
    std::lock_guard lock(e.q_mu);
    e.stopping = true;
  }
  e.q_cv.notify_all();
  for (auto& t : e.threads) t.join();
  e.threads.clear();
  e.stopped = true;
}

template <class E>
uint64_t EngineOf<E>::partitions_ended() const { return impl_->ended.load(); }

template <class E>
EngineStats EngineOf<E>::stats() const {
  const Impl& e = *impl_;
  EngineStats s;
  const auto now = Clock::now();
  const int64_t first = e.first_submit_ns.load(), last = e.last_end_ns.load();
  const auto from = first >= 0 ? e.start + std::chrono::nanoseconds(first) : e.start;
  const auto to = last >= 0 && last > first ? e.start + std::chrono::nanoseconds(last) : now;
  s.wall_s = std::chrono::duration<double>(to - from).count();
  s.jobs_submitted = e.jobs_submitted.load();
  s.jobs_done = e.jobs_done.load();
  s.partitions_ok = e.ok.load();
  s.partitions_failed = e.failed.load();
  s.partitions_cancelled = e.cancelled.load();
  s.cpu_fallbacks = e.cpu.load();
  s.host_peak_bytes = e.budget.peak();
  s.host_held_bytes = e.budget.held();
  s.proofs_checked = e.checked.load();
  s.proofs_rejected = e.rejected.load();
  s.cpu_proofs_rejected = e.cpu_rejected.load();
  s.check_ms = double(e.check_ns.load()) / 1e6;
  for (const auto& b : e.backends) {
    BackendStats bs;
    bs.name = b->backend->name();
    {
      std::lock_guard lock(b->stats_mu);
      bs.partitions = b->partitions;
      bs.errors = b->errors;
      bs.retries = b->retries;
      bs.fallbacks = b->fallbacks;
      bs.checked = b->checked;
      bs.rejected = b->rejected;
      bs.handed_off = b->handed_off;
      for (const auto& [name, t] : b->stages) bs.stages.emplace_back(name, t);
    }
    const double window = std::chrono::duration<double>(to - from).count();
    if (window > 0)
      bs.gpu_busy = std::chrono::duration<double>(b->backend->timeline().busy("compute", from, to)).count() / window;
    bs.healthy = b->backend->healthy();
    bs.device_calls = b->backend->device_calls().describe();
    bs.forbidden_calls = b->backend->device_calls().forbidden() - b->forbidden_at_start;
    s.backends.push_back(std::move(bs));
  }
  return s;
}

template <class E>
std::vector<TraceEvent> EngineOf<E>::trace() const {
  const Impl& e = *impl_;
  std::vector<TraceEvent> out;
  {
    std::lock_guard lock(e.trace_mu);
    out.reserve(e.events.size());
    for (const auto& ev : e.events)
      out.push_back({ev.name, ev.backend, fmt::format("worker {}", ev.worker), ev.job, ev.partition,
                     double(ev.start_ns) / 1e3, double(ev.end_ns - ev.start_ns) / 1e3});
  }
  if (!e.config.trace) return out;
  for (const auto& b : e.backends) {
    for (const auto& i : b->backend->timeline().snapshot()) {
      if (i.end < e.start) continue;
      out.push_back({i.what, b->index, "device " + i.queue, i.job, i.partition, double(ns_between(e.start, i.start)) / 1e3,
                     double(ns_between(i.start, i.end)) / 1e3});
    }
  }
  return out;
}

template <class E>
const typename EngineOf<E>::Config& EngineOf<E>::config() const {
  return impl_->config;
}

template <class E>
void EngineOf<E>::write_chrome_trace(const std::filesystem::path& path) const {
  engine::write_chrome_trace(trace(), stats(), path);
}

template <class E>
std::filesystem::path EngineOf<E>::write_timeline_script(const std::filesystem::path& png) const {
  return engine::write_timeline_script(trace(), stats(), impl_->config.interlock, png);
}

template <class E>
std::string EngineOf<E>::describe_state() const {
  const Impl& e = *impl_;
  std::string out;
  {
    std::lock_guard lock(e.q_mu);
    out += fmt::format("queue: {} partitions, {} jobs open, stopping={}\n", e.queue.size(), e.jobs.size(), e.stopping);
  }
  out += e.budget.describe() + "\n";
  out += fmt::format("partitions ended: {} (ok {}, failed {}, cancelled {})\n", e.ended.load(), e.ok.load(),
                     e.failed.load(), e.cancelled.load());
  for (const auto& b : e.backends) {
    out += fmt::format("backend {} ({}): healthy={}\n", b->index, b->backend->name(), b->backend->healthy());
    {
      std::lock_guard lock(b->domains_mu);
      for (const auto& [id, d] : b->domains)
        out += fmt::format("  slot domain {}: stage slots {}, msm slots {}\n", id, d->stage.describe(), d->msm.describe());
    }
    for (std::size_t w = 0; w < b->workers.size(); ++w)
      out += fmt::format("  worker {}: {} (job {} partition {})\n", w, b->workers[w]->doing.load(),
                         b->workers[w]->job.load(), b->workers[w]->partition.load());
  }
  return out;
}

template class JobHandleOf<Bls12_381>;
template class JobHandleOf<bn254::Bn254>;
template class EngineOf<Bls12_381>;
template class EngineOf<bn254::Bn254>;

}  // namespace pp::engine
