// SPDX-License-Identifier: Apache-2.0 OR MIT
#include "pg_queue.hpp"

#include <fmt/core.h>

#include <pqxx/pqxx>

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace pp::service {

namespace {

// Milliseconds since the epoch on the database server's clock: leases are measured with it, so
// that the daemons' hosts need not agree on the time.
#define PP_DB_NOW_MS "(extract(epoch from clock_timestamp()) * 1000)::bigint"

// Any constant: the advisory lock that serializes schema creation among daemons starting at once.
constexpr int64_t kSchemaLock = 0x70726f6f66706970;  // "proofpip"

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS proofpipe_jobs (
  seq              BIGSERIAL PRIMARY KEY,               -- submission order
  job_id           TEXT    NOT NULL UNIQUE,
  request_id       TEXT    UNIQUE,                      -- NULL: the client gave no idempotency key
  key_path         TEXT    NOT NULL,
  request          BYTEA   NOT NULL,                    -- serialized proofpipe.v1.SubmitRequest
  priority         INTEGER NOT NULL,
  state            INTEGER NOT NULL,                    -- proofpipe.v1.JobState
  proofs           BYTEA,                               -- opaque: what the server finished it with
  error            TEXT    NOT NULL DEFAULT '',
  partitions_done  INTEGER NOT NULL DEFAULT 0,
  partitions_total INTEGER NOT NULL,
  attempts         INTEGER NOT NULL DEFAULT 0,          -- claims so far; the fencing token
  submitted_ms     BIGINT  NOT NULL,
  started_ms       BIGINT  NOT NULL DEFAULT 0,
  finished_ms      BIGINT  NOT NULL DEFAULT 0,
  key_load_ms      DOUBLE PRECISION NOT NULL DEFAULT 0,
  prove_ms         DOUBLE PRECISION NOT NULL DEFAULT 0,
  owner            TEXT,                                -- the daemon holding it while running
  lease_until_ms   BIGINT  NOT NULL DEFAULT 0,          -- the database's clock
  cancel_requested BOOLEAN NOT NULL DEFAULT FALSE,      -- a Cancel reached it while it ran
  finished_by      TEXT                                 -- the daemon that finished it
);
CREATE INDEX IF NOT EXISTS proofpipe_jobs_queued ON proofpipe_jobs (priority DESC, seq) WHERE state = 1;
CREATE INDEX IF NOT EXISTS proofpipe_jobs_leases ON proofpipe_jobs (lease_until_ms) WHERE state = 2;
CREATE INDEX IF NOT EXISTS proofpipe_jobs_finished ON proofpipe_jobs (finished_ms) WHERE state >= 3;
)sql";

#define PP_COLUMNS                                                                                          \
  "job_id, request_id, key_path, request, priority, state, proofs, error, partitions_done, partitions_total, " \
  "attempts, seq, submitted_ms, started_ms, finished_ms, key_load_ms, prove_ms"

constexpr const char* kCancelledError = "cancelled by a Cancel call";

// Every statement, prepared on each connection of the pool.
const std::pair<const char*, const char*> kStatements[] = {
    {"insert",
     "INSERT INTO proofpipe_jobs(job_id, request_id, key_path, request, priority, state, partitions_total, "
     "submitted_ms) VALUES($1, $2, $3, $4, $5, 1, $6, $7) ON CONFLICT (request_id) DO NOTHING RETURNING " PP_COLUMNS},
    {"by_id", "SELECT " PP_COLUMNS " FROM proofpipe_jobs WHERE job_id = $1"},
    {"by_request", "SELECT " PP_COLUMNS " FROM proofpipe_jobs WHERE request_id = $1"},
    // The subquery locks the best queued row, skipping rows other claimers hold: no two claims
    // get the same job and none waits for another.
    {"claim",
     "UPDATE proofpipe_jobs SET state = 2, attempts = attempts + 1, owner = $1, started_ms = $2, "
     "lease_until_ms = " PP_DB_NOW_MS " + $3, partitions_done = 0, cancel_requested = FALSE "
     "WHERE seq = (SELECT seq FROM proofpipe_jobs WHERE state = 1 ORDER BY priority DESC, seq ASC "
     "LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING " PP_COLUMNS},
    // $2, $3: the leases' job ids and attempts, comma-separated (job ids are checked for commas).
    {"heartbeat",
     "UPDATE proofpipe_jobs j SET lease_until_ms = " PP_DB_NOW_MS " + $4 "
     "FROM unnest(string_to_array($2, ','), string_to_array($3, ',')::integer[]) AS l(job_id, attempt) "
     "WHERE j.job_id = l.job_id AND j.attempts = l.attempt AND j.owner = $1 AND j.state = 2 "
     "RETURNING j.job_id, j.cancel_requested"},
    {"progress",
     "UPDATE proofpipe_jobs SET partitions_done = $4 WHERE job_id = $1 AND owner = $2 AND attempts = $3 AND state = 2"},
    // Accepted while the row still names this owner and attempt: after a lease ran out too, as long
    // as no reaper re-queued the job (the row lock orders the two).
    {"finish",
     "UPDATE proofpipe_jobs SET state = $4, proofs = $5, error = $6, finished_ms = $7, key_load_ms = $8, "
     "prove_ms = $9, finished_by = $2, lease_until_ms = 0, "
     "partitions_done = CASE WHEN $4 = 3 THEN partitions_total ELSE partitions_done END "
     "WHERE job_id = $1 AND owner = $2 AND attempts = $3 AND state = 2"},
    // A job a Cancel reached while it ran ends CANCELLED rather than going back to the queue.
    {"requeue",
     "UPDATE proofpipe_jobs SET state = CASE WHEN cancel_requested THEN 5 ELSE 1 END, "
     "finished_ms = CASE WHEN cancel_requested THEN $4::bigint ELSE 0 END, "
     "error = CASE WHEN cancel_requested THEN $5 ELSE error END, "
     "owner = NULL, lease_until_ms = 0, partitions_done = 0 "
     "WHERE job_id = $1 AND owner = $2 AND attempts = $3 AND state = 2"},
    {"cancel_queued",
     "UPDATE proofpipe_jobs SET state = 5, finished_ms = $2, error = $3 WHERE job_id = $1 AND state = 1"},
    {"cancel_running", "UPDATE proofpipe_jobs SET cancel_requested = TRUE WHERE job_id = $1 AND state = 2"},
    {"state_of", "SELECT state FROM proofpipe_jobs WHERE job_id = $1"},
    {"reap",
     "UPDATE proofpipe_jobs SET state = CASE WHEN cancel_requested THEN 5 ELSE 1 END, "
     "finished_ms = CASE WHEN cancel_requested THEN $1::bigint ELSE 0 END, "
     "error = CASE WHEN cancel_requested THEN $2 ELSE error END, "
     "owner = NULL, lease_until_ms = 0, partitions_done = 0 "
     "WHERE state = 2 AND lease_until_ms < " PP_DB_NOW_MS " RETURNING job_id"},
    {"purge", "DELETE FROM proofpipe_jobs WHERE state IN (3, 4, 5) AND finished_ms < $1"},
    {"counts", "SELECT state, count(*) FROM proofpipe_jobs GROUP BY state"},
    {"active", "SELECT count(*) FROM proofpipe_jobs WHERE state IN (1, 2)"},
    {"finished_by", "SELECT finished_by FROM proofpipe_jobs WHERE job_id = $1"},
};

std::string text(const pqxx::field& f) { return f.is_null() ? std::string() : std::string(f.c_str(), f.size()); }

std::vector<uint8_t> bytes(const pqxx::field& f) {
  if (f.is_null()) return {};
  const pqxx::binarystring b(f);
  return std::vector<uint8_t>(b.data(), b.data() + b.size());
}

pqxx::binarystring blob(const std::vector<uint8_t>& v) {
  static const char empty = 0;
  return v.empty() ? pqxx::binarystring(&empty, 0) : pqxx::binarystring(v.data(), v.size());
}

JobRecord read_row(const pqxx::row& r) {
  JobRecord j;
  j.job_id = text(r[0]);
  j.request_id = text(r[1]);
  j.key_path = text(r[2]);
  j.request = bytes(r[3]);
  j.priority = r[4].as<int>();
  j.state = JobState(r[5].as<int>());
  j.proofs = bytes(r[6]);
  j.error = text(r[7]);
  j.partitions_done = r[8].as<uint32_t>();
  j.partitions_total = r[9].as<uint32_t>();
  j.attempts = r[10].as<uint32_t>();
  j.seq = r[11].as<int64_t>();
  j.submitted_ms = r[12].as<int64_t>();
  j.started_ms = r[13].as<int64_t>();
  j.finished_ms = r[14].as<int64_t>();
  j.key_load_ms = r[15].as<double>();
  j.prove_ms = r[16].as<double>();
  return j;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string percent_decoded(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex_value(s[i + 1]) >= 0 && hex_value(s[i + 2]) >= 0) {
      out += char(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

bool has_scheme(const std::string& uri) {
  return uri.rfind("postgresql://", 0) == 0 || uri.rfind("postgres://", 0) == 0;
}

// Where the password of a URI is: [begin, end) of the user part's password and of every
// `password=` parameter's value.
std::vector<std::pair<std::size_t, std::size_t>> password_spans(const std::string& uri) {
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  const std::size_t scheme = uri.find("://");
  if (scheme == std::string::npos) return spans;
  const std::size_t start = scheme + 3;
  const std::size_t end = std::min(uri.find_first_of("/?", start), uri.size());
  const std::size_t at = uri.rfind('@', end == 0 ? 0 : end - 1);
  if (at != std::string::npos && at >= start && at < end) {
    const std::size_t colon = uri.find(':', start);
    if (colon < at) spans.emplace_back(colon + 1, at);
  }
  const std::size_t query = uri.find('?', start);
  if (query != std::string::npos) {
    for (std::size_t p = query + 1; p < uri.size();) {
      std::size_t amp = uri.find('&', p);
      if (amp == std::string::npos) amp = uri.size();
      const std::size_t eq = uri.find('=', p);
      if (eq < amp && percent_decoded(uri.substr(p, eq - p)) == "password") spans.emplace_back(eq + 1, amp);
      p = amp + 1;
    }
  }
  return spans;
}

}  // namespace

std::string redact_uri(const std::string& uri) {
  std::string out = uri;
  auto spans = password_spans(uri);
  std::sort(spans.rbegin(), spans.rend());  // from the end, so that earlier offsets stay valid
  for (const auto& [b, e] : spans) out.replace(b, e - b, "***");
  return out;
}

// A few connections, opened when needed, each used by one thread at a time.
class PgQueue::Pool {
 public:
  Pool(std::string uri, std::size_t max) : uri_(std::move(uri)), max_(std::max<std::size_t>(max, 1)) {}

  // A connection of the pool while it lives; broken() drops it instead of giving it back.
  class Handle {
   public:
    Handle(Pool& pool, std::unique_ptr<pqxx::connection> c) : pool_(pool), c_(std::move(c)) {}
    ~Handle() { pool_.give_back(std::move(c_), broken_); }
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
    pqxx::connection& operator*() { return *c_; }
    void broken() { broken_ = true; }

   private:
    Pool& pool_;
    std::unique_ptr<pqxx::connection> c_;
    bool broken_ = false;
  };

  Handle acquire() {
    std::unique_lock lock(mu_);
    free_.wait(lock, [this] { return !idle_.empty() || open_ < max_; });
    if (!idle_.empty()) {
      auto c = std::move(idle_.back());
      idle_.pop_back();
      return Handle(*this, std::move(c));
    }
    ++open_;
    lock.unlock();
    try {
      auto c = std::make_unique<pqxx::connection>(uri_);
      for (const auto& [name, sql] : kStatements) c->prepare(name, sql);
      return Handle(*this, std::move(c));
    } catch (...) {
      lock.lock();
      --open_;
      free_.notify_one();
      throw;
    }
  }

 private:
  void give_back(std::unique_ptr<pqxx::connection> c, bool broken) {
    {
      std::lock_guard lock(mu_);
      if (broken || !c->is_open())
        --open_;
      else
        idle_.push_back(std::move(c));
    }
    free_.notify_one();
  }

  const std::string uri_;
  const std::size_t max_;
  std::mutex mu_;
  std::condition_variable free_;
  std::vector<std::unique_ptr<pqxx::connection>> idle_;
  std::size_t open_ = 0;
};

std::string PgQueue::scrub(const std::string& message) const {
  std::string out = message;
  for (std::size_t i = 0; i < secrets_.size(); ++i) {
    const std::string& secret = secrets_[i];
    const std::string& by = i < 2 ? redacted_ : std::string("***");  // the URIs, then the passwords
    if (secret.empty()) continue;
    for (std::size_t p = 0; (p = out.find(secret, p)) != std::string::npos; p += by.size())
      out.replace(p, secret.size(), by);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  std::replace(out.begin(), out.end(), '\n', ' ');
  return out;
}

template <class F>
auto PgQueue::with(const char* what, F&& f) const {
  try {
    Pool::Handle c = pool_->acquire();
    try {
      pqxx::nontransaction tx(*c);  // each statement commits on its own
      return f(tx);
    } catch (const pqxx::broken_connection&) {
      c.broken();
      throw;
    }
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("{}: {}: {}", shown_, what, scrub(e.what())));
  }
}

PgQueue::PgQueue(const std::string& uri, std::size_t max_connections) {
  if (!has_scheme(uri))
    throw std::invalid_argument(
        "--queue: expected a URI postgresql://USER:PASSWORD@HOST:PORT/DATABASE (or postgres://...); the value "
        "given is not one (not shown: it may hold a password)");
  for (const auto& [b, e] : password_spans(uri)) {
    secrets_.push_back(uri.substr(b, e - b));
    secrets_.push_back(percent_decoded(secrets_.back()));
  }
  shown_ = fmt::format("--queue {}", redact_uri(uri));
  uri_ = uri;
  // Without a limit libpq waits for the operating system's TCP timeout on an unreachable host.
  if (uri_.find("connect_timeout=") == std::string::npos) {
    uri_ += uri_.find('?') == std::string::npos ? '?' : '&';
    uri_ += "connect_timeout=10";
  }
  // libpq may quote the whole string back (a malformed URI): longest first.
  secrets_.insert(secrets_.begin(), {uri_, uri});
  redacted_ = redact_uri(uri);
  pool_ = std::make_unique<Pool>(uri_, max_connections);
  try {
    Pool::Handle c = pool_->acquire();
    pqxx::work tx(*c);
    tx.exec_params("SELECT pg_advisory_xact_lock($1)", kSchemaLock);
    tx.exec(kSchema);
    tx.commit();
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("{}: cannot connect and create the table proofpipe_jobs: {}", shown_,
                                         scrub(e.what())));
  }
}

PgQueue::~PgQueue() = default;

PgQueue::Inserted PgQueue::insert(const NewJob& job) {
  return with("cannot insert a job", [&](pqxx::transaction_base& tx) {
    const pqxx::result r =
        tx.exec_prepared("insert", job.job_id, job.request_id.empty() ? nullptr : job.request_id.c_str(), job.key_path,
                         blob(job.request), job.priority, job.partitions_total, job.submitted_ms);
    if (!r.empty()) return Inserted{read_row(r[0]), false};
    // The request_id was taken (ON CONFLICT waited for the other insert to commit): that job.
    const pqxx::result earlier = tx.exec_prepared("by_request", job.request_id);
    if (earlier.empty()) throw std::runtime_error("request_id " + job.request_id + " conflicts but cannot be read");
    return Inserted{read_row(earlier[0]), true};
  });
}

std::optional<JobRecord> PgQueue::get(const std::string& job_id) const {
  return with("cannot read a job", [&](pqxx::transaction_base& tx) {
    const pqxx::result r = tx.exec_prepared("by_id", job_id);
    return r.empty() ? std::nullopt : std::optional<JobRecord>(read_row(r[0]));
  });
}

std::optional<JobRecord> PgQueue::find_request(const std::string& request_id) const {
  return with("cannot look up a request_id", [&](pqxx::transaction_base& tx) {
    const pqxx::result r = tx.exec_prepared("by_request", request_id);
    return r.empty() ? std::nullopt : std::optional<JobRecord>(read_row(r[0]));
  });
}

std::optional<JobRecord> PgQueue::claim(const std::string& owner, int64_t now_ms, int64_t lease_ms) {
  return with("cannot claim a job", [&](pqxx::transaction_base& tx) {
    const pqxx::result r = tx.exec_prepared("claim", owner, now_ms, lease_ms);
    return r.empty() ? std::nullopt : std::optional<JobRecord>(read_row(r[0]));
  });
}

std::vector<JobStore::Held> PgQueue::heartbeat(const std::string& owner, const std::vector<Lease>& leases,
                                               int64_t lease_ms) {
  std::vector<Held> out;
  if (leases.empty()) return out;
  std::string ids, attempts;
  for (const Lease& l : leases) {
    if (l.job_id.find(',') != std::string::npos)
      throw std::invalid_argument(fmt::format("heartbeat: job id '{}' holds a comma", l.job_id));
    if (!ids.empty()) {
      ids += ',';
      attempts += ',';
    }
    ids += l.job_id;
    attempts += std::to_string(l.attempt);
  }
  const std::map<std::string, bool> held = with("cannot renew leases", [&](pqxx::transaction_base& tx) {
    std::map<std::string, bool> m;
    for (const auto& row : tx.exec_prepared("heartbeat", owner, ids, attempts, lease_ms))
      m[text(row[0])] = row[1].as<bool>();
    return m;
  });
  for (const Lease& l : leases) {
    const auto it = held.find(l.job_id);
    out.push_back({l.job_id, it != held.end(), it != held.end() && it->second});
  }
  return out;
}

void PgQueue::set_progress(const std::string& owner, const Lease& lease, uint32_t partitions_done) {
  with("cannot record progress", [&](pqxx::transaction_base& tx) {
    return tx.exec_prepared("progress", lease.job_id, owner, lease.attempt, partitions_done).affected_rows();
  });
}

bool PgQueue::finish(const std::string& owner, const Lease& lease, JobState state, const std::vector<uint8_t>& proofs,
                     const std::string& error, int64_t now_ms, double key_load_ms, double prove_ms) {
  if (!is_final(state)) throw std::invalid_argument(fmt::format("finish: {} is not a final state", to_string(state)));
  return with("cannot finish a job", [&](pqxx::transaction_base& tx) {
    const pqxx::result r =
        state == JobState::succeeded
            ? tx.exec_prepared("finish", lease.job_id, owner, lease.attempt, int(state), blob(proofs), error, now_ms,
                               key_load_ms, prove_ms)
            : tx.exec_prepared("finish", lease.job_id, owner, lease.attempt, int(state), nullptr, error, now_ms,
                               key_load_ms, prove_ms);
    return r.affected_rows() == 1;
  });
}

bool PgQueue::requeue(const std::string& owner, const Lease& lease) {
  return with("cannot requeue a job", [&](pqxx::transaction_base& tx) {
    const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
    return tx.exec_prepared("requeue", lease.job_id, owner, lease.attempt, now_ms, kCancelledError)
               .affected_rows() == 1;
  });
}

JobStore::Cancelled PgQueue::cancel(const std::string& job_id, int64_t now_ms) {
  return with("cannot cancel a job", [&](pqxx::transaction_base& tx) {
    // A job may move between the statements (claimed, re-queued by a reaper): try again then.
    for (int round = 0; round < 5; ++round) {
      if (tx.exec_prepared("cancel_queued", job_id, now_ms, kCancelledError).affected_rows() == 1)
        return Cancelled::now;
      if (tx.exec_prepared("cancel_running", job_id).affected_rows() == 1) return Cancelled::requested;
      const pqxx::result r = tx.exec_prepared("state_of", job_id);
      if (r.empty()) return Cancelled::not_found;
      if (is_final(JobState(r[0][0].as<int>()))) return Cancelled::finished;
    }
    throw std::runtime_error(fmt::format("job {} kept changing state", job_id));
  });
}

std::size_t PgQueue::recover() {
  reap(std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
           .count());
  const auto counts = count_by_state();
  const auto it = counts.find(JobState::queued);
  return it == counts.end() ? 0 : std::size_t(it->second);
}

std::size_t PgQueue::reap(int64_t now_ms) {
  return with("cannot re-queue expired leases", [&](pqxx::transaction_base& tx) {
    return std::size_t(tx.exec_prepared("reap", now_ms, kCancelledError).size());
  });
}

int PgQueue::purge_finished_before(int64_t cutoff_ms) {
  return with("cannot delete old jobs", [&](pqxx::transaction_base& tx) {
    return int(tx.exec_prepared("purge", cutoff_ms).affected_rows());
  });
}

std::map<JobState, uint64_t> PgQueue::count_by_state() const {
  return with("cannot count jobs", [&](pqxx::transaction_base& tx) {
    std::map<JobState, uint64_t> out;
    for (const auto& row : tx.exec_prepared("counts")) out[JobState(row[0].as<int>())] = row[1].as<uint64_t>();
    return out;
  });
}

uint64_t PgQueue::active() const {
  return with("cannot count jobs", [&](pqxx::transaction_base& tx) { return tx.exec_prepared("active")[0][0].as<uint64_t>(); });
}

std::string PgQueue::finished_by(const std::string& job_id) const {
  return with("cannot read a job", [&](pqxx::transaction_base& tx) {
    const pqxx::result r = tx.exec_prepared("finished_by", job_id);
    return r.empty() ? std::string() : text(r[0][0]);
  });
}

}  // namespace pp::service
