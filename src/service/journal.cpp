// SPDX-License-Identifier: Apache-2.0 OR MIT
#include "journal.hpp"

#include <fmt/core.h>
#include <sqlite3.h>

#include <chrono>
#include <stdexcept>

namespace pp::service {

namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS jobs (
  seq              INTEGER PRIMARY KEY AUTOINCREMENT,  -- submission order
  job_id           TEXT    NOT NULL UNIQUE,
  request_id       TEXT    UNIQUE,                     -- NULL: the client gave no idempotency key
  key_path         TEXT    NOT NULL,
  request          BLOB    NOT NULL,                   -- serialized proofpipe.v1.SubmitRequest
  priority         INTEGER NOT NULL,
  state            INTEGER NOT NULL,                   -- proofpipe.v1.JobState
  proofs           BLOB,
  error            TEXT    NOT NULL DEFAULT '',
  partitions_done  INTEGER NOT NULL DEFAULT 0,
  partitions_total INTEGER NOT NULL,
  attempts         INTEGER NOT NULL DEFAULT 0,
  submitted_ms     INTEGER NOT NULL,
  started_ms       INTEGER NOT NULL DEFAULT 0,
  finished_ms      INTEGER NOT NULL DEFAULT 0,
  key_load_ms      REAL    NOT NULL DEFAULT 0,
  prove_ms         REAL    NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS jobs_by_state ON jobs(state, priority, seq);
)sql";

constexpr const char* kColumns =
    "job_id, request_id, key_path, request, priority, state, proofs, error, partitions_done, partitions_total, "
    "attempts, seq, submitted_ms, started_ms, finished_ms, key_load_ms, prove_ms";

// Resets and unbinds a statement when the scope ends, so that every path leaves it reusable.
class Use {
 public:
  explicit Use(sqlite3_stmt* s) : s_(s) {}
  ~Use() {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
  }
  Use(const Use&) = delete;
  Use& operator=(const Use&) = delete;

 private:
  sqlite3_stmt* s_;
};

std::string text(sqlite3_stmt* s, int col) {
  const unsigned char* t = sqlite3_column_text(s, col);
  return t ? std::string(reinterpret_cast<const char*>(t), std::size_t(sqlite3_column_bytes(s, col))) : std::string();
}

std::vector<uint8_t> blob(sqlite3_stmt* s, int col) {
  const auto* b = static_cast<const uint8_t*>(sqlite3_column_blob(s, col));
  return b ? std::vector<uint8_t>(b, b + sqlite3_column_bytes(s, col)) : std::vector<uint8_t>();
}

JobRecord read_row(sqlite3_stmt* s) {
  JobRecord r;
  r.job_id = text(s, 0);
  r.request_id = text(s, 1);
  r.key_path = text(s, 2);
  r.request = blob(s, 3);
  r.priority = sqlite3_column_int(s, 4);
  r.state = JobState(sqlite3_column_int(s, 5));
  r.proofs = blob(s, 6);
  r.error = text(s, 7);
  r.partitions_done = uint32_t(sqlite3_column_int64(s, 8));
  r.partitions_total = uint32_t(sqlite3_column_int64(s, 9));
  r.attempts = uint32_t(sqlite3_column_int64(s, 10));
  r.seq = sqlite3_column_int64(s, 11);
  r.submitted_ms = sqlite3_column_int64(s, 12);
  r.started_ms = sqlite3_column_int64(s, 13);
  r.finished_ms = sqlite3_column_int64(s, 14);
  r.key_load_ms = sqlite3_column_double(s, 15);
  r.prove_ms = sqlite3_column_double(s, 16);
  return r;
}

void bind_text(sqlite3_stmt* s, int i, const std::string& v) {
  sqlite3_bind_text(s, i, v.data(), int(v.size()), SQLITE_TRANSIENT);
}
void bind_blob(sqlite3_stmt* s, int i, const std::vector<uint8_t>& v) {
  // A zero-length blob, not NULL, for an empty vector.
  sqlite3_bind_blob(s, i, v.empty() ? "" : static_cast<const void*>(v.data()), int(v.size()), SQLITE_TRANSIENT);
}

}  // namespace

const char* to_string(JobState state) {
  switch (state) {
    case JobState::queued: return "QUEUED";
    case JobState::running: return "RUNNING";
    case JobState::succeeded: return "SUCCEEDED";
    case JobState::failed: return "FAILED";
    case JobState::cancelled: return "CANCELLED";
  }
  return "UNSPECIFIED";
}

Journal::Journal(const std::filesystem::path& dir) : file_(dir / "jobs.sqlite3") {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error(fmt::format("--state {}: {}", dir.string(), ec.message()));
  if (sqlite3_open_v2(file_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr) !=
      SQLITE_OK) {
    const std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw std::runtime_error(fmt::format("{}: cannot open the journal: {}", file_.string(), why));
  }
  try {
    sqlite3_busy_timeout(db_, 5000);
    // WAL: readers never block the writer; synchronous=FULL: a committed Submit survives power loss.
    exec("PRAGMA journal_mode=WAL");
    exec("PRAGMA synchronous=FULL");
    exec(kSchema);
    const std::string cols = kColumns;
    insert_ = prepare(
        "INSERT INTO jobs(job_id, request_id, key_path, request, priority, state, partitions_total, submitted_ms) "
        "VALUES(?1, ?2, ?3, ?4, ?5, 1, ?6, ?7) ON CONFLICT(request_id) DO NOTHING");
    by_request_ = prepare(("SELECT " + cols + " FROM jobs WHERE request_id = ?1").c_str());
    by_id_ = prepare(("SELECT " + cols + " FROM jobs WHERE job_id = ?1").c_str());
    // One statement: pick and take the job atomically (the connection is this process's only one).
    claim_ = prepare(("UPDATE jobs SET state = 2, attempts = attempts + 1, started_ms = ?1, partitions_done = 0 "
                      "WHERE seq = (SELECT seq FROM jobs WHERE state = 1 ORDER BY priority DESC, seq ASC LIMIT 1) "
                      "RETURNING " + cols).c_str());
    // The writes of a worker are fenced by its attempt: a requeued and re-claimed job has moved on.
    progress_ = prepare("UPDATE jobs SET partitions_done = ?2 WHERE job_id = ?1 AND state = 2 AND attempts = ?3");
    finish_ = prepare(
        "UPDATE jobs SET state = ?2, proofs = ?3, error = ?4, finished_ms = ?5, key_load_ms = ?6, prove_ms = ?7, "
        "partitions_done = CASE WHEN ?2 = 3 THEN partitions_total ELSE partitions_done END "
        "WHERE job_id = ?1 AND state = 2 AND attempts = ?8");
    requeue_ = prepare(
        "UPDATE jobs SET state = 1, partitions_done = 0 WHERE job_id = ?1 AND state = 2 AND attempts = ?2");
    requeue_all_ = prepare("UPDATE jobs SET state = 1, partitions_done = 0 WHERE state = 2");
    cancel_queued_ = prepare(
        "UPDATE jobs SET state = 5, error = ?3, finished_ms = ?2, proofs = NULL WHERE job_id = ?1 AND state = 1");
    purge_ = prepare("DELETE FROM jobs WHERE state IN (3, 4, 5) AND finished_ms < ?1");
    counts_ = prepare("SELECT state, COUNT(*) FROM jobs GROUP BY state");
  } catch (...) {
    for (sqlite3_stmt* s : {insert_, by_request_, by_id_, claim_, progress_, finish_, requeue_, requeue_all_,
                            cancel_queued_, purge_, counts_})
      sqlite3_finalize(s);
    sqlite3_close(db_);
    throw;
  }
}

Journal::~Journal() {
  for (sqlite3_stmt* s : {insert_, by_request_, by_id_, claim_, progress_, finish_, requeue_, requeue_all_,
                          cancel_queued_, purge_, counts_})
    sqlite3_finalize(s);
  sqlite3_close(db_);
}

void Journal::fail(const std::string& what) const {
  throw std::runtime_error(fmt::format("{}: {}: {}", file_.string(), what, sqlite3_errmsg(db_)));
}

sqlite3_stmt* Journal::prepare(const char* sql) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db_, sql, -1, &s, nullptr) != SQLITE_OK) fail(fmt::format("cannot prepare '{}'", sql));
  return s;
}

void Journal::exec(const char* sql) {
  char* msg = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &msg) != SQLITE_OK) {
    const std::string why = msg ? msg : "unknown error";
    sqlite3_free(msg);
    throw std::runtime_error(fmt::format("{}: {}", file_.string(), why));
  }
}

Journal::Inserted Journal::insert(const NewJob& job) {
  std::lock_guard lock(mu_);
  {
    Use u(insert_);
    bind_text(insert_, 1, job.job_id);
    if (job.request_id.empty())
      sqlite3_bind_null(insert_, 2);
    else
      bind_text(insert_, 2, job.request_id);
    bind_text(insert_, 3, job.key_path);
    bind_blob(insert_, 4, job.request);
    sqlite3_bind_int(insert_, 5, job.priority);
    sqlite3_bind_int64(insert_, 6, job.partitions_total);
    sqlite3_bind_int64(insert_, 7, job.submitted_ms);
    if (sqlite3_step(insert_) != SQLITE_DONE) fail("cannot journal job " + job.job_id);
  }
  const bool written = sqlite3_changes(db_) == 1;
  sqlite3_stmt* s = written ? by_id_ : by_request_;
  Use u(s);
  bind_text(s, 1, written ? job.job_id : job.request_id);
  if (sqlite3_step(s) != SQLITE_ROW) fail("journaled job " + job.job_id + " cannot be read back");
  return Inserted{read_row(s), !written};
}

std::optional<JobRecord> Journal::lookup(sqlite3_stmt* s, const std::string& key, const char* what) const {
  std::lock_guard lock(mu_);
  Use u(s);
  bind_text(s, 1, key);
  const int rc = sqlite3_step(s);
  if (rc == SQLITE_ROW) return read_row(s);
  if (rc != SQLITE_DONE) fail(what + key);
  return std::nullopt;
}

std::optional<JobRecord> Journal::get(const std::string& job_id) const {
  return lookup(by_id_, job_id, "cannot read job ");
}

std::optional<JobRecord> Journal::find_request(const std::string& request_id) const {
  return lookup(by_request_, request_id, "cannot look up request_id ");
}

std::optional<JobRecord> Journal::claim(const std::string&, int64_t now_ms, int64_t) {
  std::lock_guard lock(mu_);
  Use u(claim_);
  sqlite3_bind_int64(claim_, 1, now_ms);
  const int rc = sqlite3_step(claim_);
  if (rc == SQLITE_DONE) return std::nullopt;
  if (rc != SQLITE_ROW) fail("cannot claim a job");
  JobRecord r = read_row(claim_);
  // RETURNING rows come before the change is complete: run the statement to its end.
  if (sqlite3_step(claim_) != SQLITE_DONE) fail("cannot claim job " + r.job_id);
  return r;
}

std::vector<JobStore::Held> Journal::heartbeat(const std::string&, const std::vector<Lease>& leases, int64_t) {
  // One process: nobody else can take a job over, so every lease is still held.
  std::lock_guard lock(mu_);
  std::vector<Held> out;
  for (const Lease& l : leases) out.push_back({l.job_id, true, cancel_requested_.count(l.job_id) != 0});
  return out;
}

void Journal::set_progress(const std::string&, const Lease& lease, uint32_t partitions_done) {
  std::lock_guard lock(mu_);
  Use u(progress_);
  bind_text(progress_, 1, lease.job_id);
  sqlite3_bind_int64(progress_, 2, partitions_done);
  sqlite3_bind_int64(progress_, 3, lease.attempt);
  if (sqlite3_step(progress_) != SQLITE_DONE) fail("cannot record progress of job " + lease.job_id);
}

bool Journal::finish(const std::string&, const Lease& lease, JobState state, const std::vector<uint8_t>& proofs,
                     const std::string& error, int64_t now_ms, double key_load_ms, double prove_ms) {
  if (!is_final(state)) throw std::invalid_argument(fmt::format("finish: {} is not a final state", to_string(state)));
  std::lock_guard lock(mu_);
  Use u(finish_);
  bind_text(finish_, 1, lease.job_id);
  sqlite3_bind_int(finish_, 2, int(state));
  if (state == JobState::succeeded)
    bind_blob(finish_, 3, proofs);
  else
    sqlite3_bind_null(finish_, 3);
  bind_text(finish_, 4, error);
  sqlite3_bind_int64(finish_, 5, now_ms);
  sqlite3_bind_double(finish_, 6, key_load_ms);
  sqlite3_bind_double(finish_, 7, prove_ms);
  sqlite3_bind_int64(finish_, 8, lease.attempt);
  if (sqlite3_step(finish_) != SQLITE_DONE) fail("cannot finish job " + lease.job_id);
  const bool done = sqlite3_changes(db_) == 1;
  if (done) cancel_requested_.erase(lease.job_id);
  return done;
}

bool Journal::requeue(const std::string&, const Lease& lease) {
  std::lock_guard lock(mu_);
  if (cancel_requested_.count(lease.job_id)) {
    // A Cancel reached it while it ran: it ends CANCELLED rather than going back to the queue.
    cancel_requested_.erase(lease.job_id);
    Use u(finish_);
    bind_text(finish_, 1, lease.job_id);
    sqlite3_bind_int(finish_, 2, int(JobState::cancelled));
    sqlite3_bind_null(finish_, 3);
    bind_text(finish_, 4, "cancelled by a Cancel call");
    sqlite3_bind_int64(finish_, 5, int64_t(std::chrono::duration_cast<std::chrono::milliseconds>(
                                               std::chrono::system_clock::now().time_since_epoch())
                                               .count()));
    sqlite3_bind_double(finish_, 6, 0);
    sqlite3_bind_double(finish_, 7, 0);
    sqlite3_bind_int64(finish_, 8, lease.attempt);
    if (sqlite3_step(finish_) != SQLITE_DONE) fail("cannot cancel job " + lease.job_id);
    return sqlite3_changes(db_) == 1;
  }
  Use u(requeue_);
  bind_text(requeue_, 1, lease.job_id);
  sqlite3_bind_int64(requeue_, 2, lease.attempt);
  if (sqlite3_step(requeue_) != SQLITE_DONE) fail("cannot requeue job " + lease.job_id);
  return sqlite3_changes(db_) == 1;
}

JobStore::Cancelled Journal::cancel(const std::string& job_id, int64_t now_ms) {
  std::lock_guard lock(mu_);
  {
    Use u(cancel_queued_);
    bind_text(cancel_queued_, 1, job_id);
    sqlite3_bind_int64(cancel_queued_, 2, now_ms);
    bind_text(cancel_queued_, 3, "cancelled by a Cancel call");
    if (sqlite3_step(cancel_queued_) != SQLITE_DONE) fail("cannot cancel job " + job_id);
    if (sqlite3_changes(db_) == 1) return Cancelled::now;
  }
  Use u(by_id_);
  bind_text(by_id_, 1, job_id);
  const int rc = sqlite3_step(by_id_);
  if (rc == SQLITE_DONE) return Cancelled::not_found;
  if (rc != SQLITE_ROW) fail("cannot read job " + job_id);
  if (is_final(JobState(sqlite3_column_int(by_id_, 5)))) return Cancelled::finished;
  cancel_requested_.insert(job_id);  // running (a queued job was cancelled above)
  return Cancelled::requested;
}

std::size_t Journal::recover() {
  {
    std::lock_guard lock(mu_);
    Use u(requeue_all_);
    if (sqlite3_step(requeue_all_) != SQLITE_DONE) fail("cannot requeue the running jobs");
    cancel_requested_.clear();
  }
  const auto counts = count_by_state();
  const auto it = counts.find(JobState::queued);
  return it == counts.end() ? 0 : std::size_t(it->second);
}

int Journal::purge_finished_before(int64_t cutoff_ms) {
  std::lock_guard lock(mu_);
  Use u(purge_);
  sqlite3_bind_int64(purge_, 1, cutoff_ms);
  if (sqlite3_step(purge_) != SQLITE_DONE) fail("cannot delete old jobs");
  return sqlite3_changes(db_);
}

std::map<JobState, uint64_t> Journal::count_by_state() const {
  std::lock_guard lock(mu_);
  std::map<JobState, uint64_t> out;
  Use u(counts_);
  int rc;
  while ((rc = sqlite3_step(counts_)) == SQLITE_ROW)
    out[JobState(sqlite3_column_int(counts_, 0))] = uint64_t(sqlite3_column_int64(counts_, 1));
  if (rc != SQLITE_DONE) fail("cannot count jobs");
  return out;
}

uint64_t Journal::active() const {
  const auto counts = count_by_state();
  uint64_t n = 0;
  for (JobState st : {JobState::queued, JobState::running})
    if (const auto it = counts.find(st); it != counts.end()) n += it->second;
  return n;
}

}  // namespace pp::service
