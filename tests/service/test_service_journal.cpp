// SPDX-License-Identifier: Apache-2.0 OR MIT
// The SQLite job journal: insert, idempotency, claims and their fencing, cancel, resume after
// reopen, retention.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>

#include "journal.hpp"
#include "temp_dir.hpp"

using namespace pp::service;

namespace {

NewJob job(const std::string& id, const std::string& request_id = "", int priority = 0, int64_t at = 1000) {
  NewJob j;
  j.job_id = id;
  j.request_id = request_id;
  j.key_path = "k/params";
  j.request = {1, 2, 3, uint8_t(id.size())};
  j.priority = priority;
  j.partitions_total = 2;
  j.submitted_ms = at;
  return j;
}

const std::string kOwner = "test-owner";

Lease lease(const JobRecord& r) { return Lease{r.job_id, r.attempts}; }

}  // namespace

TEST(Journal, InsertIsReadBackQueued) {
  TempDir dir;
  Journal j(dir.path());
  const Journal::Inserted a = j.insert(job("a", "req-a", 3, 1234));
  EXPECT_FALSE(a.duplicate);
  EXPECT_EQ(a.job.job_id, "a");
  const std::optional<JobRecord> r = j.get("a");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->state, JobState::queued);
  EXPECT_EQ(r->request_id, "req-a");
  EXPECT_EQ(r->key_path, "k/params");
  EXPECT_EQ(r->request, (std::vector<uint8_t>{1, 2, 3, 1}));
  EXPECT_EQ(r->priority, 3);
  EXPECT_EQ(r->partitions_total, 2u);
  EXPECT_EQ(r->submitted_ms, 1234);
  EXPECT_EQ(r->attempts, 0u);
  EXPECT_FALSE(j.get("nope"));
  EXPECT_GT(j.insert(job("b")).job.seq, a.job.seq);
}

TEST(Journal, FileIsInWalMode) {
  TempDir dir;
  Journal j(dir.path());
  j.insert(job("a"));
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(j.file().c_str(), &db), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &s, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(s, 0)), "wal");
  sqlite3_finalize(s);
  sqlite3_close(db);
}

TEST(Journal, SameRequestIdReturnsTheFirstJob) {
  TempDir dir;
  Journal j(dir.path());
  EXPECT_FALSE(j.insert(job("a", "req")).duplicate);
  const Journal::Inserted again = j.insert(job("b", "req"));
  EXPECT_TRUE(again.duplicate);
  EXPECT_EQ(again.job.job_id, "a");
  EXPECT_FALSE(j.get("b"));
  ASSERT_TRUE(j.find_request("req"));
  EXPECT_EQ(j.find_request("req")->job_id, "a");
  EXPECT_FALSE(j.find_request("other"));
  // Without a request_id there is no idempotency: two jobs.
  EXPECT_FALSE(j.insert(job("c")).duplicate);
  EXPECT_FALSE(j.insert(job("d")).duplicate);
  EXPECT_EQ(j.count_by_state()[JobState::queued], 3u);
}

TEST(Journal, StateTransitions) {
  TempDir dir;
  Journal j(dir.path());
  j.insert(job("a"));
  const std::optional<JobRecord> a = j.claim(kOwner, 2000, 1000);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->job_id, "a");
  EXPECT_EQ(a->state, JobState::running);
  EXPECT_EQ(a->attempts, 1u);
  EXPECT_FALSE(j.claim(kOwner, 2001, 1000));  // only a queued job is claimed
  j.set_progress(kOwner, lease(*a), 1);
  EXPECT_EQ(j.get("a")->state, JobState::running);
  EXPECT_EQ(j.get("a")->partitions_done, 1u);
  EXPECT_EQ(j.get("a")->started_ms, 2000);
  const std::vector<uint8_t> proofs(384, 7);
  EXPECT_TRUE(j.finish(kOwner, lease(*a), JobState::succeeded, proofs, "", 3000, 1.5, 2.5));
  const JobRecord r = *j.get("a");
  EXPECT_EQ(r.state, JobState::succeeded);
  EXPECT_EQ(r.proofs, proofs);
  EXPECT_EQ(r.partitions_done, 2u);
  EXPECT_EQ(r.finished_ms, 3000);
  EXPECT_DOUBLE_EQ(r.prove_ms, 2.5);
  // A finished job stays finished.
  EXPECT_FALSE(j.finish(kOwner, lease(*a), JobState::failed, {}, "late", 4000, 0, 0));
  EXPECT_EQ(j.get("a")->state, JobState::succeeded);
  EXPECT_THROW(j.finish(kOwner, lease(*a), JobState::running, {}, "", 0, 0, 0), std::invalid_argument);
  EXPECT_EQ(j.cancel("a", 4000), JobStore::Cancelled::finished);
  EXPECT_EQ(j.cancel("nope", 4000), JobStore::Cancelled::not_found);

  // Cancelled while queued: it never starts.
  j.insert(job("b"));
  EXPECT_EQ(j.cancel("b", 5000), JobStore::Cancelled::now);
  EXPECT_EQ(j.get("b")->state, JobState::cancelled);
  EXPECT_FALSE(j.claim(kOwner, 5001, 1000));
  EXPECT_TRUE(j.get("b")->proofs.empty());

  // Failed: the error is kept, no proofs.
  j.insert(job("c"));
  const JobRecord c = *j.claim(kOwner, 6000, 1000);
  EXPECT_TRUE(j.finish(kOwner, lease(c), JobState::failed, proofs, "witness_paths[1]: bad", 6001, 0, 0));
  EXPECT_EQ(j.get("c")->error, "witness_paths[1]: bad");
  EXPECT_TRUE(j.get("c")->proofs.empty());

  // A clean shutdown puts a running job back; the old claim is fenced off after a new one.
  j.insert(job("d"));
  const JobRecord d1 = *j.claim(kOwner, 7000, 1000);
  EXPECT_TRUE(j.requeue(kOwner, lease(d1)));
  EXPECT_FALSE(j.requeue(kOwner, lease(d1)));
  EXPECT_EQ(j.get("d")->state, JobState::queued);
  const JobRecord d2 = *j.claim(kOwner, 7001, 1000);
  EXPECT_EQ(d2.attempts, 2u);
  j.set_progress(kOwner, lease(d1), 2);  // the stale claim writes nothing
  EXPECT_EQ(j.get("d")->partitions_done, 0u);
  EXPECT_FALSE(j.finish(kOwner, lease(d1), JobState::succeeded, proofs, "", 7002, 0, 0));
  EXPECT_TRUE(j.finish(kOwner, lease(d2), JobState::succeeded, proofs, "", 7003, 0, 0));

  // Cancel of a running job: its heartbeat says so; interrupted, it ends CANCELLED.
  j.insert(job("e"));
  const JobRecord e = *j.claim(kOwner, 8000, 1000);
  EXPECT_FALSE(j.heartbeat(kOwner, {lease(e)}, 1000)[0].cancel_requested);
  EXPECT_EQ(j.cancel("e", 8001), JobStore::Cancelled::requested);
  const std::vector<JobStore::Held> held = j.heartbeat(kOwner, {lease(e)}, 1000);
  ASSERT_EQ(held.size(), 1u);
  EXPECT_TRUE(held[0].held);
  EXPECT_TRUE(held[0].cancel_requested);
  EXPECT_TRUE(j.requeue(kOwner, lease(e)));
  EXPECT_EQ(j.get("e")->state, JobState::cancelled);
  EXPECT_EQ(j.active(), 0u);
}

TEST(Journal, ClaimsByPriorityThenSubmissionOrder) {
  TempDir dir;
  Journal j(dir.path());
  j.insert(job("low", "", 0));
  j.insert(job("high", "", 5));
  j.insert(job("low2", "", 0));
  j.insert(job("higher", "", 9));
  EXPECT_EQ(j.active(), 4u);
  std::vector<std::string> order;
  while (const std::optional<JobRecord> r = j.claim(kOwner, 1, 1000)) order.push_back(r->job_id);
  EXPECT_EQ(order, (std::vector<std::string>{"higher", "high", "low", "low2"}));
  EXPECT_EQ(j.active(), 4u);  // all running now
  EXPECT_EQ(j.count_by_state()[JobState::running], 4u);
}

TEST(Journal, ResumesAfterReopen) {
  TempDir dir;
  {
    Journal j(dir.path());
    j.insert(job("low", "r-low", 0));
    j.insert(job("running", "r-running", 0));
    j.insert(job("high", "r-high", 5));
    j.insert(job("done", "r-done", 9));
    const JobRecord done = *j.claim(kOwner, 100, 1000);  // "done": the highest priority
    ASSERT_EQ(done.job_id, "done");
    j.finish(kOwner, lease(done), JobState::succeeded, std::vector<uint8_t>(192, 1), "", 200, 0, 0);
    EXPECT_EQ(j.claim(kOwner, 100, 1000)->job_id, "high");
    j.requeue(kOwner, {"high", 1});
    ASSERT_EQ(j.claim(kOwner, 100, 1000)->job_id, "high");  // attempt 2
    j.set_progress(kOwner, {"high", 2}, 1);
  }  // the daemon dies: nothing else happens to the rows
  Journal j(dir.path());
  EXPECT_EQ(j.recover(), 3u);
  std::vector<JobRecord> queued;
  while (const std::optional<JobRecord> r = j.claim("next", 300, 1000)) queued.push_back(*r);
  ASSERT_EQ(queued.size(), 3u);
  EXPECT_EQ(queued[0].job_id, "high");  // priority first
  EXPECT_EQ(queued[0].partitions_done, 0u);
  EXPECT_EQ(queued[0].attempts, 3u);    // its attempts stay counted
  EXPECT_EQ(queued[1].job_id, "low");   // then submission order
  EXPECT_EQ(queued[2].job_id, "running");
  // The finished job's result is still there, and its request_id still maps to it.
  EXPECT_EQ(j.get("done")->state, JobState::succeeded);
  EXPECT_EQ(j.get("done")->proofs, std::vector<uint8_t>(192, 1));
  EXPECT_TRUE(j.insert(job("again", "r-done")).duplicate);
}

TEST(Journal, RetentionDeletesOnlyOldFinishedJobs) {
  TempDir dir;
  Journal j(dir.path());
  for (const char* id : {"old", "new", "failed-old", "queued-old"}) j.insert(job(id, id, 0, 10));
  const std::map<std::string, int64_t> finished_at = {{"old", 1000}, {"new", 9000}, {"failed-old", 2000}};
  for (int i = 0; i < 3; ++i) {
    const JobRecord r = *j.claim(kOwner, 20, 1000);
    j.finish(kOwner, lease(r), r.job_id == "failed-old" ? JobState::failed : JobState::succeeded,
             std::vector<uint8_t>(192, 1), "x", finished_at.at(r.job_id), 0, 0);
  }
  EXPECT_EQ(j.purge_finished_before(5000), 2);
  EXPECT_FALSE(j.get("old"));
  EXPECT_FALSE(j.get("failed-old"));
  EXPECT_TRUE(j.get("new"));
  EXPECT_TRUE(j.get("queued-old"));  // never finished: never deleted
  EXPECT_EQ(j.purge_finished_before(5000), 0);
}

TEST(Journal, UnusableStateDirectoryIsAnError) {
  TempDir dir;
  std::ofstream(dir.path() / "file") << "x";
  EXPECT_THROW(Journal(dir.path() / "file"), std::runtime_error);
}
