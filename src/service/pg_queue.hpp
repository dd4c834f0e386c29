// SPDX-License-Identifier: Apache-2.0 OR MIT
// `proofpipe serve --queue postgresql://...`: the job store of many daemons sharing one PostgreSQL
// database (libpqxx). Table proofpipe_jobs (created if absent, under an advisory lock so that
// daemons starting together do not race). Claims take the best queued row with
// `FOR UPDATE SKIP LOCKED`, so concurrent claimers never wait for nor get the same job; a claim
// is a lease (lease_until_ms, on the database server's clock, so hosts' clocks need not agree)
// that the owner extends with heartbeats; reap() re-queues running jobs whose lease ran out.
// Every write of a worker names its owner and attempt: once a job was re-queued or claimed
// again, the old holder's progress, finish and requeue change nothing (fencing).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "job_store.hpp"

namespace pp::service {

// The URI as it may be shown: the password (in the user part or a `password=` parameter) replaced
// by "***".
std::string redact_uri(const std::string& uri);

class PgQueue final : public JobStore {
 public:
  // Connects (at most max_connections at once, opened as needed), creates the schema if absent.
  // std::invalid_argument for a URI that is not postgresql:// or postgres://,
  // std::runtime_error when the server cannot be reached or refuses; messages start with
  // "--queue <the URI without its password>".
  explicit PgQueue(const std::string& uri, std::size_t max_connections = 8);
  ~PgQueue() override;
  PgQueue(const PgQueue&) = delete;
  PgQueue& operator=(const PgQueue&) = delete;

  Inserted insert(const NewJob& job) override;
  std::optional<JobRecord> get(const std::string& job_id) const override;
  std::optional<JobRecord> find_request(const std::string& request_id) const override;
  std::optional<JobRecord> claim(const std::string& owner, int64_t now_ms, int64_t lease_ms) override;
  std::vector<Held> heartbeat(const std::string& owner, const std::vector<Lease>& leases, int64_t lease_ms) override;
  void set_progress(const std::string& owner, const Lease& lease, uint32_t partitions_done) override;
  bool finish(const std::string& owner, const Lease& lease, JobState state, const std::vector<uint8_t>& proofs,
              const std::string& error, int64_t now_ms, double key_load_ms, double prove_ms) override;
  bool requeue(const std::string& owner, const Lease& lease) override;
  Cancelled cancel(const std::string& job_id, int64_t now_ms) override;
  // Re-queues the jobs of daemons whose leases expired; the number of queued jobs.
  std::size_t recover() override;
  std::size_t reap(int64_t now_ms) override;
  int purge_finished_before(int64_t cutoff_ms) override;
  std::map<JobState, uint64_t> count_by_state() const override;
  uint64_t active() const override;
  std::string describe() const override { return shown_; }

  // The daemon that finished the job (its owner id), "" when none did (not finished, or
  // cancelled while queued / by the reaper). For tests and audits.
  std::string finished_by(const std::string& job_id) const;

 private:
  class Pool;
  // Runs f(pqxx::transaction_base&) on a pooled connection; errors become std::runtime_error
  // naming --queue and `what`, never showing the password.
  template <class F>
  auto with(const char* what, F&& f) const;
  std::string scrub(const std::string& message) const;

  std::string uri_;     // with connect_timeout added when absent
  std::string shown_;   // "--queue " + redacted URI
  std::vector<std::string> secrets_;  // the URIs, the password as written and decoded: never shown
  std::string redacted_;              // what a URI is shown as
  std::unique_ptr<Pool> pool_;
};

}  // namespace pp::service
