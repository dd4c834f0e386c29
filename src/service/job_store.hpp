// SPDX-License-Identifier: Apache-2.0 OR MIT
// Where the daemon keeps its jobs: the SQLite journal of one host (journal.hpp) or a PostgreSQL
// database shared by many daemons (pg_queue.hpp, `serve --queue postgresql://...`). Workers
// claim jobs from the store; a claim is a lease that its owner keeps alive with heartbeats, and
// every write a worker makes afterwards is fenced by the claim (owner and attempt number), so a
// daemon that lost its lease can never finish a job that another daemon has since claimed.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace pp::service {

// The numbers are proofpipe.v1.JobState's.
enum class JobState : int { queued = 1, running = 2, succeeded = 3, failed = 4, cancelled = 5 };
const char* to_string(JobState state);
inline bool is_final(JobState s) { return s == JobState::succeeded || s == JobState::failed || s == JobState::cancelled; }

struct JobRecord {
  std::string job_id;
  std::string request_id;        // "" when the client gave none
  std::string key_path;          // as the client gave it (for listings)
  std::vector<uint8_t> request;  // the serialized SubmitRequest (paths or inline witnesses)
  int priority = 0;
  JobState state = JobState::queued;
  std::vector<uint8_t> proofs;   // opaque to the store: whatever the server finished the job with
  std::string error;
  uint32_t partitions_done = 0, partitions_total = 0;
  uint32_t attempts = 0;  // times the job was claimed; the current claim's fencing token
  int64_t seq = 0;        // submission order
  int64_t submitted_ms = 0, started_ms = 0, finished_ms = 0;  // Unix ms; 0: not yet
  double key_load_ms = 0, prove_ms = 0;
};

struct NewJob {
  std::string job_id;
  std::string request_id;  // "": no idempotency key
  std::string key_path;
  std::vector<uint8_t> request;
  int priority = 0;
  uint32_t partitions_total = 0;
  int64_t submitted_ms = 0;
};

// A claim on a running job: who holds it and which attempt. Every write of the worker names it.
struct Lease {
  std::string job_id;
  uint32_t attempt = 0;  // JobRecord::attempts as claim() returned it
};

class JobStore {
 public:
  virtual ~JobStore() = default;

  struct Inserted {
    JobRecord job;
    bool duplicate = false;  // request_id existed: job is the earlier one, nothing was written
  };
  // Commits a new queued job, or returns the job already holding job.request_id.
  virtual Inserted insert(const NewJob& job) = 0;
  virtual std::optional<JobRecord> get(const std::string& job_id) const = 0;
  virtual std::optional<JobRecord> find_request(const std::string& request_id) const = 0;

  // The queued job of highest priority, then oldest, now running for `owner`: attempts + 1,
  // started_ms = now_ms, partitions_done = 0, the lease held until lease_ms from now. nullopt
  // when nothing is queued. Concurrent claimers (threads or daemons) never get the same job.
  virtual std::optional<JobRecord> claim(const std::string& owner, int64_t now_ms, int64_t lease_ms) = 0;

  struct Held {
    std::string job_id;
    bool held = false;              // still this owner's: the lease now runs lease_ms from now
    bool cancel_requested = false;  // a Cancel call asked for it to stop
  };
  // Extends the leases `owner` still holds; one answer per lease, in order.
  virtual std::vector<Held> heartbeat(const std::string& owner, const std::vector<Lease>& leases,
                                      int64_t lease_ms) = 0;
  // Writes of the lease holder: each does nothing (progress) or returns false when the lease is
  // no longer `owner`'s (expired and re-queued, claimed again, cancelled).
  virtual void set_progress(const std::string& owner, const Lease& lease, uint32_t partitions_done) = 0;
  // running -> a final state, with the proofs (succeeded) or the error.
  virtual bool finish(const std::string& owner, const Lease& lease, JobState state, const std::vector<uint8_t>& proofs,
                      const std::string& error, int64_t now_ms, double key_load_ms, double prove_ms) = 0;
  // running -> queued (a clean shutdown interrupted it).
  virtual bool requeue(const std::string& owner, const Lease& lease) = 0;

  enum class Cancelled {
    not_found,
    finished,   // already final: nothing changed
    now,        // it was queued: now CANCELLED
    requested,  // it is running: its owner stops it at its next heartbeat (or at once, when local)
  };
  virtual Cancelled cancel(const std::string& job_id, int64_t now_ms) = 0;

  // Start-up: jobs whose daemon is gone go back to the queue (the journal: every running job;
  // PostgreSQL: those whose lease expired). The number of queued jobs.
  virtual std::size_t recover() = 0;
  // Running jobs whose lease expired go back to the queue (or end CANCELLED when a Cancel asked
  // for it); the number. Every daemon calls it now and then.
  virtual std::size_t reap(int64_t now_ms) = 0;
  // Deletes finished jobs that finished before cutoff_ms; the count deleted.
  virtual int purge_finished_before(int64_t cutoff_ms) = 0;
  virtual std::map<JobState, uint64_t> count_by_state() const = 0;
  // Queued + running jobs (--max-queue).
  virtual uint64_t active() const = 0;
  // For logs: the journal's file, or the URI without its password.
  virtual std::string describe() const = 0;
};

}  // namespace pp::service
