// SPDX-License-Identifier: Apache-2.0 OR MIT
// The pipelined proving engine: jobs of N partitions, gw workers per backend (GPU), one shared
// queue, a host-memory budget, the memory and compute tokens, retries and CPU fallback, stats and
// a trace of every stage. docs/ENGINE.md explains the design; model/engine.pml checks the protocol.
//
// RESOURCE ORDER. A worker acquires resources only in this order and releases each before it
// could need an earlier one again (never holding a later one while waiting for an earlier one):
//
//   1. host-memory budget   (engine-wide, bytes; FIFO so a big partition is not starved)
//   2. msm slot             (per backend, counting; held until finish() returns)
//   3. stage slot           (per backend, counting; held until compute() has returned)
//   4. memory token         (per backend; held only around stage(); released before 5)
//   5. compute token        (per backend; held only around compute())
//
// The memory and compute tokens are never held together (Interlock::two). prepare() runs with
// only (1) held, finish() with (1) and (2). Interlock::single is the ablation of the old design:
// one mutex per backend held from stage() through finish() (upload, kernels and the wait for the
// device), acquired after both slots.
//
// Failure: a BackendError is retried on the same backend up to max_retries times when it is
// retryable; then (or at once when it is not) the partition is proved on the CPU
// (Fallback::cpu) or the whole job fails (Fallback::fail_job). A backend that is lost (healthy()
// false) while another is healthy hands its partitions over: the one it held goes back to the
// queue marked to avoid it, its workers take no more work while a healthy backend can, and a job
// pinned to it is then anyone's (a GPU lost mid-run costs its partitions a retry elsewhere). When
// no backend is healthy, their workers keep pulling work and prove it on the CPU / fail it, so
// nothing waits for a dead device. Every partition ends proved, failed or cancelled; every job ends.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "proofpipe/engine/backend.hpp"
#include "proofpipe/engine/host_budget.hpp"

namespace pp::engine {

enum class Interlock { single, two };
enum class Fallback { cpu, fail_job };
enum class Shutdown { drain, cancel };
const char* to_string(Interlock i);

template <class E>
struct EngineConfigOf {
  int gw = 2;                    // workers per backend, 1 .. 64
  Interlock interlock = Interlock::two;
  uint64_t host_mem_bytes = 0;   // host budget for partitions in flight; 0: unlimited
  // A budget shared with other engines (then host_mem_bytes is unused); null: the engine's own.
  std::shared_ptr<HostBudget> shared_host_budget;
  // The source of job ids shared with other engines, so that no two of their jobs have the same
  // id (a runtime's cancel(id) reaches either); null: the engine's own count from 1.
  std::shared_ptr<std::atomic<uint64_t>> job_ids;
  int max_retries = 2;           // extra attempts on the backend for retryable errors
  Fallback fallback = Fallback::cpu;
  bool trace = true;             // record every stage (for write_chrome_trace / timeline)
  // Every proof a backend (or the CPU fallback) makes is verified against the key's verifying key
  // and the witness's public inputs before the partition is reported (stage "check"). A rejected
  // proof is proved again: on another backend when there is a healthy one and the job is not
  // pinned, else once more on the same one; rejected again, on the CPU (Fallback::cpu); a CPU
  // proof that is rejected fails the partition. Off: proofs are returned unchecked.
  bool check_proofs = true;
  // Called (from a worker) for every rejected proof: the backend's name ("cpu" for the
  // fallback), the job and the partition's number. For logs; must not throw.
  std::function<void(const std::string& where, uint64_t job, std::size_t partition)> on_rejected;
  // The CPU prover used for fallback; empty: prove_partition (tests substitute a cached one).
  std::function<ProofOf<E>(const PartitionTaskOf<E>&)> cpu_prover;
};
using EngineConfig = EngineConfigOf<Bls12_381>;

enum class JobStatus { pending, ok, failed, cancelled };
const char* to_string(JobStatus s);

template <class E>
struct PartitionResultOf {
  JobStatus status = JobStatus::pending;  // ok, failed or cancelled once done
  std::optional<ProofOf<E>> proof;
  std::string error;    // why it failed (every attempt's error, joined)
  // The exception that decided the failure (the last attempt's, or the CPU fallback's), kept as
  // thrown so that a boundary (the C API) can map its type once; null unless failed.
  std::exception_ptr exception;
  std::string where;    // backend name, or "cpu" for the fallback
  int attempts = 0;     // backend attempts made
};
using PartitionResult = PartitionResultOf<Bls12_381>;

template <class E>
struct JobResultOf {
  uint64_t id = 0;
  JobStatus status = JobStatus::pending;
  std::vector<ProofOf<E>> proofs;                // all partitions', in order, when ok
  std::vector<PartitionResultOf<E>> partitions;  // each partition's outcome
  std::string error;                             // first failure, when failed
};
using JobResult = JobResultOf<Bls12_381>;

// A witness made when its partition is admitted (JobSpecOf::sources), so that it exists only
// while its partition is in flight, inside the host budget: `bytes` is what it will take (charged
// before it is made; witness_bytes of its counts), `make` makes it (reads a file, say), called by
// the worker that proves the partition once those bytes are acquired, on every attempt that
// starts the partition afresh (a partition proved again elsewhere makes it again). A `make` that
// throws fails the partition with its message. The witness is released when the attempt ends.
template <class E>
struct WitnessSourceOf {
  uint64_t bytes = 0;
  std::function<std::shared_ptr<const WitnessOf<E>>()> make;
};
using WitnessSource = WitnessSourceOf<Bls12_381>;

// A proof of N partitions sharing one key. key and witnesses are shared, not copied: one
// witness per partition, and the same witness may serve several partitions (benchmarks at 2^27,
// where a witness is 16 GiB, reuse a few). Or, instead of witnesses, one source per partition
// (then `witnesses` is empty): each witness made when its partition is admitted.
template <class E>
struct JobSpecOf {
  std::shared_ptr<const ProvingKeyOf<E>> key;
  std::vector<std::shared_ptr<const WitnessOf<E>>> witnesses;
  std::vector<WitnessSourceOf<E>> sources;
  uint64_t seed = 0;  // r, s: randomizers_from_seed(seed, N) -> the proofs equal prove(key, witnesses, seed)
  // Explicit r, s per partition (then seed is unused): empty, or one pair per witness.
  std::vector<RandomizersOf<typename E::Fr>> randomizers;
  // Partition p is named partition_base + p to backends, in errors and in traces (a caller that
  // submits the partitions of one proof as separate jobs keeps their numbers).
  std::size_t partition_base = 0;
  // The backend (index in the engine's list) every partition of the job runs on; -1: whichever
  // backend's worker is free first. A pinned partition waits for its backend's workers; once that
  // backend is lost it goes to any healthy one (the CPU or a failure only when none is left).
  int backend = -1;
  // Called from a worker thread as each partition ends (ok, failed or cancelled).
  std::function<void(uint64_t job, std::size_t partition, const PartitionResultOf<E>&)> on_partition;
};
using JobSpec = JobSpecOf<Bls12_381>;

template <class E>
class EngineOf;
template <class E>
struct JobStateOf;

template <class E>
class JobHandleOf {
 public:
  JobHandleOf() = default;
  uint64_t id() const;
  bool done() const;
  JobResultOf<E> wait() const;
  // nullopt when not done within `timeout`.
  std::optional<JobResultOf<E>> wait_for(std::chrono::milliseconds timeout) const;
  // Snapshot of the partitions (finished ones have their status set).
  std::vector<PartitionResultOf<E>> partitions() const;

 private:
  friend class EngineOf<E>;
  explicit JobHandleOf(std::shared_ptr<JobStateOf<E>> s) : state_(std::move(s)) {}
  std::shared_ptr<JobStateOf<E>> state_;
};
using JobHandle = JobHandleOf<Bls12_381>;

// One recorded stage of a worker (or of a device queue).
struct TraceEvent {
  std::string name;     // wait-host, prepare, wait-slots, stage, wait-compute, compute, finish, cpu-prove, ...
  int backend = 0;      // index of the backend; -1: the engine
  std::string lane;     // "worker 1", "device compute", "device copy"
  uint64_t job = 0;
  std::size_t partition = 0;
  double start_us = 0, dur_us = 0;  // from the engine's start
};

struct StageTotals {
  uint64_t count = 0;
  double total_ms = 0, max_ms = 0;
};

struct BackendStats {
  std::string name;
  uint64_t partitions = 0;        // proved on this backend
  uint64_t errors = 0, retries = 0, fallbacks = 0;
  uint64_t checked = 0, rejected = 0;  // proofs this backend made that were verified, and rejected
  uint64_t handed_off = 0;        // partitions it held when it was lost, proved again on another backend
  bool healthy = true;            // Backend::healthy() now (false: lost; its work goes elsewhere)
  double gpu_busy = 0;            // fraction of [start, now] the compute queue was executing
  std::vector<std::pair<std::string, StageTotals>> stages;  // per stage name
  std::string device_calls;       // DeviceCalls::describe()
  uint64_t forbidden_calls = 0;   // since the engine started (steady state)
};

struct EngineStats {
  double wall_s = 0;
  uint64_t jobs_submitted = 0, jobs_done = 0;
  uint64_t partitions_ok = 0, partitions_failed = 0, partitions_cancelled = 0, cpu_fallbacks = 0;
  uint64_t proofs_checked = 0, proofs_rejected = 0;  // every backend's and the CPU fallback's
  uint64_t cpu_proofs_rejected = 0;                  // of the rejected, CPU fallback proofs
  double check_ms = 0;                                 // time spent verifying them (all workers)
  uint64_t host_peak_bytes = 0;   // peak of the host budget in use (partitions and holdings)
  uint64_t host_held_bytes = 0;   // held now outside partitions: GPU provers' pinned buffers, streamed keys' host copies
  std::vector<BackendStats> backends;
  double gpu_busy() const;        // mean over backends
};

// The engine for keys over curve E (groth16/curves.hpp): the same queue, workers, tokens, checks
// and fallback whatever the curve. Engine is BLS12-381's; EngineOf<bn254::Bn254> proves BN254 keys.
template <class E>
class EngineOf {
 public:
  using Backend = BackendOf<E>;
  using Config = EngineConfigOf<E>;
  using Spec = JobSpecOf<E>;
  using Handle = JobHandleOf<E>;
  // The backends must outlive the engine. Workers start at once. std::invalid_argument for no
  // backend, gw outside 1..64, negative retries.
  EngineOf(std::vector<Backend*> backends, Config config);
  ~EngineOf();  // shutdown(Shutdown::cancel) if not shut down
  EngineOf(const EngineOf&) = delete;
  EngineOf& operator=(const EngineOf&) = delete;

  // std::invalid_argument for no key, no witnesses (or sources), both, a null witness or a source
  // without a maker, a backend that is not one of the engine's; std::logic_error after shutdown.
  Handle submit(Spec spec);
  // Queued partitions of the job are dropped, running ones finish and are discarded; the job
  // ends cancelled (unless it had already ended). false when the job is unknown or done.
  bool cancel(uint64_t job);
  // drain: run everything submitted, then stop. cancel: cancel every job, then stop. Idempotent;
  // waits for the workers.
  void shutdown(Shutdown how);

  EngineStats stats() const;
  const Config& config() const;
  std::vector<TraceEvent> trace() const;  // worker stages and device intervals
  // Chrome / Perfetto trace JSON: {"traceEvents":[{"name","ph":"X","ts","dur","pid","tid"}...]}.
  void write_chrome_trace(const std::filesystem::path& path) const;
  // The timeline of every worker and device queue as gnuplot input, for a PNG at `png`: the data
  // (png + ".dat") and the script (png + ".gp", one lane per worker and device queue, coloured by
  // stage, GPU-busy % in the title) are written; the script's path is returned. Drawing it is
  // the caller's business (the CLI runs gnuplot): a library does not start programs.
  std::filesystem::path write_timeline_script(const std::filesystem::path& png) const;
  // Human-readable state for deadlock reports: queue, budget, slots, tokens, what each worker does.
  std::string describe_state() const;
  // Partitions that ended so far (any outcome) — a progress counter for watchdogs.
  uint64_t partitions_ended() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};
using Engine = EngineOf<Bls12_381>;

// What Engine::write_chrome_trace and write_timeline_script write, from an engine's public view.
void write_chrome_trace(const std::vector<TraceEvent>& events, const EngineStats& stats, const std::filesystem::path& path);
std::filesystem::path write_timeline_script(const std::vector<TraceEvent>& events, const EngineStats& stats,
                                            Interlock interlock, const std::filesystem::path& png);

}  // namespace pp::engine
