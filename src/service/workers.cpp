// SPDX-License-Identifier: Apache-2.0 OR MIT
#include "workers.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <memory>
#include <stdexcept>

#include "errors.hpp"
#include "inputs.hpp"
#include "paths.hpp"
#include "proofpipe/v1/prover.grpc.pb.h"

namespace pp::service {

namespace v1 = ::proofpipe::v1;

namespace {

const char* paths_or_inline(const v1::SubmitRequest& req) {
  return req.witness_paths_size() ? "witness_paths" : "witnesses";
}

}  // namespace

void Workers::start() {
  for (int i = 0; i < env_.config.jobs_in_flight; ++i) workers_.emplace_back([this] { worker(); });
  maintenance_ = std::thread([this] { maintain(); });
  heartbeats_ = std::thread([this] { heartbeat(); });
}

void Workers::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    ++version_;
  }
  work_.notify_all();
  changed_.notify_all();
}

void Workers::join() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  work_.notify_all();
  for (auto& t : workers_)
    if (t.joinable()) t.join();
  work_.notify_all();  // the heartbeat thread ends once no job is held
  if (maintenance_.joinable()) maintenance_.join();
  if (heartbeats_.joinable()) heartbeats_.join();
}

bool Workers::stopping() {
  std::lock_guard lock(mu_);
  return stopping_;
}

void Workers::notify() {
  {
    std::lock_guard lock(mu_);
    ++version_;
  }
  changed_.notify_all();
}

void Workers::job_submitted() {
  {
    std::lock_guard lock(mu_);
    ++submitted_;
    ++version_;
  }
  work_.notify_all();  // all: the maintenance thread and polling workers wait on it too
  changed_.notify_all();
}

uint64_t Workers::version() {
  std::lock_guard lock(mu_);
  return version_;
}

void Workers::wait_change(uint64_t seen, Clock::time_point deadline) {
  std::unique_lock lock(mu_);
  const auto until = std::min(deadline, Clock::now() + std::chrono::milliseconds(200));
  changed_.wait_until(lock, until, [&] { return version_ != seen || stopping_; });
}

void Workers::cancel(const std::string& job_id) {
  std::lock_guard lock(mu_);
  if (auto it = live_.find(job_id); it != live_.end()) {
    it->second.cancel = true;
    if (it->second.pending) pp_cancel(it->second.pending, nullptr);
  }
}

std::optional<uint32_t> Workers::partitions_done(const std::string& job_id) {
  std::lock_guard lock(mu_);
  if (auto it = live_.find(job_id); it != live_.end()) return it->second.partitions_done;
  return std::nullopt;
}

std::size_t Workers::running() {
  std::lock_guard lock(mu_);
  return live_.size();
}

void Workers::purge() {
  const int64_t cutoff = unix_ms() - int64_t(env_.config.retention_hours * 3600.0 * 1000.0);
  if (const int n = env_.journal.purge_finished_before(cutoff); n > 0)
    fmt::print(stderr, "proofpipe serve: deleted {} finished job(s) older than {} h\n", n, env_.config.retention_hours);
}

void Workers::maintain() {
  const auto every = std::chrono::duration<double>(std::clamp(env_.config.retention_hours * 3600.0 / 4, 1.0, 600.0));
  std::unique_lock lock(mu_);
  while (!work_.wait_for(lock, every, [this] { return stopping_; })) {
    lock.unlock();
    try {
      purge();
    } catch (const std::exception& e) {
      fmt::print(stderr, "proofpipe serve: retention: {}\n", e.what());
    }
    lock.lock();
  }
}

// The claim a worker of this daemon holds on job `id` (live_[id]).
Lease Workers::lease_of(const std::string& id) {
  std::lock_guard lock(mu_);
  const auto it = live_.find(id);
  if (it == live_.end()) throw std::logic_error(fmt::format("job {}: not held by a worker", id));
  return Lease{id, it->second.attempt};
}

// journal.finish under this worker's claim, counted for the metrics when it finished the job;
// false when the claim was lost (another daemon took the job over: it finishes it).
bool Workers::finish_job(const std::string& id, JobState state, const std::vector<uint8_t>& proofs, const std::string& error,
                double key_load_ms, double prove_ms) {
  const bool done = env_.journal.finish(env_.owner, lease_of(id), state, proofs, error, unix_ms(), key_load_ms, prove_ms);
  if (done)
    env_.finished[std::size_t(state)].fetch_add(1, std::memory_order_relaxed);
  else
    fmt::print(stderr, "proofpipe serve: job {}: not finished here: its lease was lost to another daemon\n", id);
  return done;
}

// Progress is for watchers only: a store that fails here does not fail the job.
void Workers::progress_job(const std::string& id, uint32_t partitions_done) {
  try {
    env_.journal.set_progress(env_.owner, lease_of(id), partitions_done);
  } catch (const std::exception& e) {
    fmt::print(stderr, "proofpipe serve: job {}: progress not recorded: {}\n", id, e.what());
  }
}

// Interrupted (a clean shutdown, a lost lease): back to the queue (CANCELLED when a Cancel
// reached it) if the claim is still this worker's.
void Workers::requeue_job(const std::string& id) {
  if (!env_.journal.requeue(env_.owner, lease_of(id)))
    fmt::print(stderr, "proofpipe serve: job {}: stopped here: its lease was lost to another daemon\n", id);
}

// The lease of job `id` went to another daemon (or could not be renewed for a whole lease).
bool Workers::lost(const std::string& id) {
  std::lock_guard lock(mu_);
  const auto it = live_.find(id);
  return it != live_.end() && it->second.lost;
}

// How often an idle worker asks the store for a job: other daemons submit to a shared queue
// and jobs come back from expired leases; the journal of one host only gets jobs from here.
std::chrono::milliseconds Workers::poll_interval() const {
  return std::chrono::milliseconds(env_.config.queue.empty() ? 1000 : 150);
}

// Claims the best queued job from the store: at once after a Submit to this daemon, otherwise
// every poll_interval().
void Workers::worker() {
  bool failing = false;  // the last claim failed: logged once until one works again
  for (;;) {
    uint64_t seen;
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      seen = submitted_;
    }
    std::optional<JobRecord> claimed;
    try {
      claimed = env_.journal.claim(env_.owner, unix_ms(), env_.config.lease_ms);
      if (failing) fmt::print(stderr, "proofpipe serve: claiming jobs again\n");
      failing = false;
    } catch (const std::exception& e) {
      if (!failing) fmt::print(stderr, "proofpipe serve: cannot claim a job (retrying): {}\n", e.what());
      failing = true;
    }
    if (!claimed) {
      std::unique_lock lock(mu_);
      work_.wait_for(lock, poll_interval(), [&] { return stopping_ || submitted_ != seen; });
      continue;
    }
    const std::string id = claimed->job_id;
    {
      std::lock_guard lock(mu_);
      Live& l = live_[id];
      l = Live{};
      l.attempt = claimed->attempts;
    }
    try {
      run(*claimed);
    } catch (const std::exception& e) {
      // A journal or memory failure mid-job: fail the job if the journal still takes it (if
      // not, the next start runs it again).
      fmt::print(stderr, "proofpipe serve: job {}: {}\n", id, e.what());
      try {
        finish_job(id, JobState::failed, {}, fmt::format("internal error: {}", e.what()), 0, 0);
      } catch (const std::exception& again) {
        fmt::print(stderr, "proofpipe serve: job {}: {}\n", id, again.what());
      }
    }
    {
      std::lock_guard lock(mu_);
      live_.erase(id);
      ++version_;
    }
    changed_.notify_all();
  }
}

// Keeps the leases of this daemon's jobs alive (renewed every third of --lease-ms, at least
// every second), stops jobs whose lease was lost or that a Cancel sent to another daemon
// reached, and re-queues the jobs of daemons whose leases expired. Ends once the daemon stops
// and holds no job.
void Workers::heartbeat() {
  const auto every = std::chrono::milliseconds(std::clamp<int64_t>(env_.config.lease_ms / 3, 10, 1000));
  const auto lease = std::chrono::milliseconds(env_.config.lease_ms);
  auto last_ok = Clock::now();
  bool failing = false;
  std::unique_lock lock(mu_);
  while (!(stopping_ && live_.empty())) {
    std::vector<Lease> leases;
    for (const auto& [id, l] : live_) leases.push_back({id, l.attempt});
    const bool reap = !stopping_;
    lock.unlock();
    std::optional<std::vector<JobStore::Held>> held;
    std::size_t reaped = 0;
    try {
      held = env_.journal.heartbeat(env_.owner, leases, env_.config.lease_ms);
      if (reap) reaped = env_.journal.reap(unix_ms());
      if (failing) fmt::print(stderr, "proofpipe serve: leases renewed again\n");
      failing = false;
    } catch (const std::exception& e) {
      if (!failing) fmt::print(stderr, "proofpipe serve: cannot renew leases (retrying): {}\n", e.what());
      failing = true;
    }
    if (reaped)
      fmt::print(stderr, "proofpipe serve: re-queued {} job(s) whose daemon's lease expired\n", reaped);
    lock.lock();
    auto stop = [](Live& l) {
      l.cancel = true;
      if (l.pending) pp_cancel(l.pending, nullptr);
    };
    if (held) {
      last_ok = Clock::now();
      for (std::size_t i = 0; i < leases.size() && i < held->size(); ++i) {
        const auto it = live_.find(leases[i].job_id);
        if (it == live_.end() || it->second.attempt != leases[i].attempt) continue;  // ended meanwhile
        if (!(*held)[i].held && !it->second.lost) {
          it->second.lost = true;
          stop(it->second);
        } else if ((*held)[i].cancel_requested && !it->second.cancel) {
          stop(it->second);
        }
      }
    } else if (Clock::now() - last_ok > lease) {
      // Not renewed for a whole lease: other daemons may have taken these jobs over.
      for (auto& [id, l] : live_)
        if (!l.lost) {
          l.lost = true;
          stop(l);
        }
    }
    if (reaped) {
      ++submitted_;
      work_.notify_all();
    }
    work_.wait_for(lock, every, [&] { return stopping_ && live_.empty(); });
  }
}

// The claimed job: its record as claim() returned it (the request, inline witnesses included,
// is not read from the store a second time).
void Workers::run(const JobRecord& rec) {
  const std::string& id = rec.job_id;
  notify();
  double key_load_ms = 0;
  const auto t0 = Clock::now();
  std::unique_ptr<pp_pending, void (*)(pp_pending*)> pending(nullptr, pp_pending_free);
  auto fail = [&](const std::string& why) {
    finish_job(id, JobState::failed, {}, why, key_load_ms, ms_since(t0));
  };
  std::size_t n = 0;
  v1::SubmitRequest req;
  std::shared_ptr<pp_key> key;  // held until the job ends (an EvictKey may drop the cache's entry)
  bool snarkjs = false;
  std::size_t num_public = 0;
  pp_curve curve = PP_CURVE_BLS12_381;
  std::size_t proof_bytes = PP_PROOF_BYTES;
  try {
    if (!req.ParseFromArray(rec.request.data(), int(rec.request.size())))
      return fail("the journaled request cannot be parsed");
    // Resolved again: the files may have changed since Submit (or since the daemon restarted).
    const LoadedKey loaded = env_.keys.get(resolve_key(env_.root, req.key_path()), &key_load_ms);
    key = loaded.key;
    snarkjs = loaded.snarkjs;
    num_public = loaded.num_public;
    curve = loaded.curve;
    proof_bytes = loaded.proof_bytes;
    std::vector<std::string> paths;
    n = std::size_t(req.witness_paths_size() + req.witnesses_size());
    for (int i = 0; i < req.witness_paths_size(); ++i)
      paths.push_back(confine(env_.root, req.witness_paths(i), "witness_paths", std::size_t(i)).string());
    std::vector<pp_input> inputs(n, pp_input{});
    for (std::size_t i = 0; i < n; ++i) {
      // A .ppw for a .params key; a .wtns for a .zkey key (the C API computes its witness from
      // the key's coefficients, as snarkjs does).
      inputs[i].kind = snarkjs ? PP_INPUT_WTNS : PP_INPUT_PPW;
      pp_source& src = snarkjs ? inputs[i].wtns : inputs[i].ppw;
      if (!paths.empty()) {
        src.path = paths[i].c_str();
      } else {
        const std::string& w = req.witnesses(int(i));
        src.data = reinterpret_cast<const uint8_t*>(w.data());
        src.size = w.size();
      }
    }
    pp_error err;
    pp_pending* p = nullptr;
    if (pp_prove_start(env_.engine, key.get(), inputs.data(), n, nullptr, &p, &err) != PP_OK)
      return fail(fmt::format("{}: {}", paths.empty() ? "witnesses" : "witness_paths", err.message));
    pending.reset(p);
  } catch (const RequestError& e) {
    return fail(e.what());
  }
  {
    std::lock_guard lock(mu_);
    Live& l = live_[id];
    l.pending = pending.get();
    if (l.cancel) pp_cancel(pending.get(), nullptr);
  }
  // Cancel reaches the handle through live_[id].pending: cleared on every way out of here (an
  // exception included) before `pending` frees it.
  struct Unpublish {
    Workers* self;
    const std::string& id;
    ~Unpublish() {
      std::lock_guard lock(self->mu_);
      if (auto it = self->live_.find(id); it != self->live_.end()) it->second.pending = nullptr;
    }
  } unpublish{this, id};
  bool interrupted = false;  // by shutdown: the job goes back to the queue
  std::size_t reported = 0;
  for (int done = 0; !done;) {
    std::size_t parts = 0;
    pp_error err;
    if (pp_prove_poll(pending.get(), &done, &parts, &err) != PP_OK) break;  // finalize reports it
    if (parts != reported) {
      reported = parts;
      {
        std::lock_guard lock(mu_);
        live_[id].partitions_done = uint32_t(parts);
        ++version_;
      }
      changed_.notify_all();
      progress_job(id, uint32_t(parts));
    }
    if (done) break;
    std::unique_lock lock(mu_);
    if (stopping_ && !interrupted) {
      interrupted = true;
      pp_cancel(pending.get(), nullptr);
    }
    work_.wait_for(lock, std::chrono::milliseconds(20), [&] { return stopping_ && !interrupted; });
  }
  std::vector<uint8_t> proofs(n * proof_bytes);
  std::size_t size = proofs.size();
  pp_error err;
  const pp_status st = pp_prove_finalize(pending.get(), proofs.data(), &size, &err);
  if (st == PP_OK && snarkjs) {  // one .wtns: its proof and public signals as snarkjs's JSON
    std::vector<uint8_t> result;
    try {
      if (req.witness_paths_size() > 0) {
        result = snarkjs_result(curve, proofs, confine(env_.root, req.witness_paths(0), "witness_paths", 0), {}, num_public,
                                "witness_paths[0]");
      } else {
        const std::string& w = req.witnesses(0);
        result = snarkjs_result(curve, proofs, {}, {reinterpret_cast<const uint8_t*>(w.data()), w.size()}, num_public,
                                "witnesses[0]");
      }
    } catch (const std::invalid_argument& e) {
      return fail(e.what());
    } catch (const RequestError& e) {
      return fail(e.what());
    }
    finish_job(id, JobState::succeeded, result, "", key_load_ms, ms_since(t0));
  } else if (st == PP_OK) {
    proofs.resize(size);
    finish_job(id, JobState::succeeded, proofs, "", key_load_ms, ms_since(t0));
  } else if (st == PP_ERR_CANCELLED && (interrupted || lost(id))) {
    requeue_job(id);
  } else if (st == PP_ERR_CANCELLED) {
    finish_job(id, JobState::cancelled, {}, "cancelled by a Cancel call", key_load_ms, ms_since(t0));
  } else {
    fail(fmt::format("{} ({}): {}", paths_or_inline(req), pp_status_name(st), err.message));
  }
}

}  // namespace pp::service
