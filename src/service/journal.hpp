// SPDX-License-Identifier: Apache-2.0 OR MIT
// The job journal: one SQLite database (WAL mode) in the daemon's --state directory, the job store
// of a single host. A job is acknowledged only after its row is committed; on start-up, jobs that
// were running go back to the queue; finished jobs keep their result until the retention limit.
// One process uses it: leases never expire (there is no other daemon to take a job over), and a
// Cancel of a running job is remembered in memory until its worker's next heartbeat.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "job_store.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace pp::service {

class Journal final : public JobStore {
 public:
  // Opens (creating if needed) DIR/jobs.sqlite3 in WAL mode. std::runtime_error naming the file
  // when it cannot.
  explicit Journal(const std::filesystem::path& dir);
  ~Journal() override;
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

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
  // Every running job goes back to queued (its daemon died or stopped).
  std::size_t recover() override;
  std::size_t reap(int64_t) override { return 0; }  // one daemon: no lease expires
  int purge_finished_before(int64_t cutoff_ms) override;
  std::map<JobState, uint64_t> count_by_state() const override;
  uint64_t active() const override;
  std::string describe() const override { return "journal " + file_.string(); }

  const std::filesystem::path& file() const { return file_; }

 private:
  sqlite3_stmt* prepare(const char* sql);
  void exec(const char* sql);
  [[noreturn]] void fail(const std::string& what) const;
  // The job that statement `s` (one text parameter: `key`) selects; nullopt when none. On an
  // error, fail(what + key).
  std::optional<JobRecord> lookup(sqlite3_stmt* s, const std::string& key, const char* what) const;

  std::filesystem::path file_;
  sqlite3* db_ = nullptr;
  mutable std::mutex mu_;  // one connection, one writer: every statement runs under it
  sqlite3_stmt* insert_ = nullptr;
  sqlite3_stmt* by_request_ = nullptr;
  sqlite3_stmt* by_id_ = nullptr;
  sqlite3_stmt* claim_ = nullptr;
  sqlite3_stmt* progress_ = nullptr;
  sqlite3_stmt* finish_ = nullptr;
  sqlite3_stmt* requeue_ = nullptr;
  sqlite3_stmt* requeue_all_ = nullptr;
  sqlite3_stmt* cancel_queued_ = nullptr;
  sqlite3_stmt* purge_ = nullptr;
  sqlite3_stmt* counts_ = nullptr;
  std::set<std::string> cancel_requested_;  // running jobs a Cancel asked to stop (guarded by mu_)
};

}  // namespace pp::service
