// SPDX-License-Identifier: Apache-2.0 OR MIT
// The daemon's job side (docs/SERVICE.md, "How it proves"): --jobs workers that claim jobs from
// the job store and prove them on the C API's engine, the heartbeat thread that keeps their
// leases (and reaps other daemons' expired ones), and the maintenance thread that applies
// --retention-hours. The RPCs (server.cpp) reach the running jobs only through this class.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "clock.hpp"
#include "job_store.hpp"
#include "key_cache.hpp"
#include "metrics.hpp"
#include "proofpipe/proofpipe.h"
#include "server.hpp"

namespace pp::service {

class Workers {
 public:
  // What the workers share with the daemon; all of it outlives the Workers.
  struct Env {
    const ServiceConfig& config;
    const std::filesystem::path& root;  // --data-root, canonical
    JobStore& journal;
    const std::string& owner;           // this daemon's name in the store
    pp_engine* engine;
    KeyCache& keys;
    FinishedCounts& finished;           // counted when a worker brings a job to a final state
  };

  explicit Workers(const Env& env) : env_(env) {}
  ~Workers() { join(); }
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;

  // Deletes finished jobs older than --retention-hours (also every quarter of it, at most every
  // 10 minutes, once started).
  void purge();
  // Starts the --jobs workers, the maintenance thread and the heartbeat thread.
  void start();
  // Shutdown, first step: stopping; Await and Watch return, running jobs are interrupted.
  void stop();
  // Shutdown, last step (or a constructor that fails): stopping; waits for every thread.
  void join();

  // For the RPCs.
  bool stopping();
  void notify();  // some job changed (Await and Watch look again)
  void job_submitted();  // a job was queued here: wakes a worker at once
  uint64_t version();
  // Waits until some job changes after `seen`, the deadline passes or the daemon stops.
  void wait_change(uint64_t seen, Clock::time_point deadline);
  // A Cancel of a job that runs here: stopped at its next partition boundary.
  void cancel(const std::string& job_id);
  // The partitions done of a job that runs here.
  std::optional<uint32_t> partitions_done(const std::string& job_id);
  std::size_t running();  // jobs this daemon is proving now

 private:
  // A job a worker holds: its claim, its live progress and what Cancel needs.
  struct Live {
    uint32_t attempt = 0;  // the claim's fencing token (JobRecord::attempts)
    uint32_t partitions_done = 0;
    bool cancel = false;
    bool lost = false;  // the lease went to another daemon: stop, write nothing
    pp_pending* pending = nullptr;  // set while proving; guarded by mu_
  };

  void worker();
  void maintain();
  void heartbeat();
  void run(const JobRecord& rec);
  std::chrono::milliseconds poll_interval() const;
  Lease lease_of(const std::string& id);
  bool finish_job(const std::string& id, JobState state, const std::vector<uint8_t>& proofs, const std::string& error,
                  double key_load_ms, double prove_ms);
  void progress_job(const std::string& id, uint32_t partitions_done);
  void requeue_job(const std::string& id);
  bool lost(const std::string& id);

  Env env_;
  std::mutex mu_;                   // live_, stopping_, version_, submitted_
  std::condition_variable work_;    // a job was submitted or re-queued here, or stopping changed
  std::condition_variable changed_; // some job changed (version_ moved)
  uint64_t version_ = 0;
  uint64_t submitted_ = 0;          // jobs queued by this daemon (wakes the workers)
  std::map<std::string, Live> live_;
  bool stopping_ = false;

  std::vector<std::thread> workers_;
  std::thread maintenance_;
  std::thread heartbeats_;
};

}  // namespace pp::service
