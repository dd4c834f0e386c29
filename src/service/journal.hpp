// The job journal: one SQLite database (WAL mode) in the daemon's --state directory. A job is
// acknowledged only after its row is committed; on start-up, jobs that were queued or running go
// back to the queue; finished jobs keep their result until the retention limit.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

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
  std::vector<uint8_t> proofs;
  std::string error;
  uint32_t partitions_done = 0, partitions_total = 0;
  uint32_t attempts = 0;  // times the job was started
  int64_t seq = 0;        // submission order (the row id)
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

class Journal {
 public:
  // Opens (creating if needed) DIR/jobs.sqlite3 in WAL mode. std::runtime_error naming the file
  // when it cannot.
  explicit Journal(const std::filesystem::path& dir);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  struct Inserted {
    JobRecord job;
    bool duplicate = false;  // request_id existed: job is the earlier one, nothing was written
  };
  // Commits a new queued job, or returns the job already holding job.request_id.
  Inserted insert(const NewJob& job);

  std::optional<JobRecord> get(const std::string& job_id) const;
  std::optional<JobRecord> find_request(const std::string& request_id) const;
  // queued -> running: attempts + 1, started_ms = now_ms, partitions_done = 0.
  // false when the job was not queued (cancelled meanwhile).
  bool mark_running(const std::string& job_id, int64_t now_ms);
  void set_progress(const std::string& job_id, uint32_t partitions_done);
  // running or queued -> a final state, with the proofs (succeeded) or the error.
  // false when the job was already finished.
  bool finish(const std::string& job_id, JobState state, const std::vector<uint8_t>& proofs, const std::string& error,
              int64_t now_ms, double key_load_ms, double prove_ms);
  // running -> queued (a clean shutdown interrupted it).
  void requeue(const std::string& job_id);

  // Start-up: every running job goes back to queued (its daemon died or stopped); returns every
  // queued job, highest priority first, then in submission order.
  std::vector<JobRecord> recover();
  // Deletes finished jobs that finished before cutoff_ms; the count deleted.
  int purge_finished_before(int64_t cutoff_ms);
  std::map<JobState, uint64_t> count_by_state() const;

  const std::filesystem::path& file() const { return file_; }

 private:
  sqlite3_stmt* prepare(const char* sql);
  void exec(const char* sql);
  [[noreturn]] void fail(const std::string& what) const;

  std::filesystem::path file_;
  sqlite3* db_ = nullptr;
  mutable std::mutex mu_;  // one connection, one writer: every statement runs under it
  sqlite3_stmt* insert_ = nullptr;
  sqlite3_stmt* by_request_ = nullptr;
  sqlite3_stmt* by_id_ = nullptr;
  sqlite3_stmt* running_ = nullptr;
  sqlite3_stmt* progress_ = nullptr;
  sqlite3_stmt* finish_ = nullptr;
  sqlite3_stmt* requeue_ = nullptr;
  sqlite3_stmt* requeue_all_ = nullptr;
  sqlite3_stmt* queued_ = nullptr;
  sqlite3_stmt* purge_ = nullptr;
  sqlite3_stmt* counts_ = nullptr;
};

}  // namespace pp::service
