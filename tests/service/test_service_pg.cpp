// SPDX-License-Identifier: Apache-2.0 OR MIT
// The PostgreSQL job store of `serve --queue` against a real server: idempotent inserts, claims
// that concurrent claimers never share, lease expiry and re-queueing, fencing of a stale claim,
// cancel, concurrent schema creation, URIs whose password never shows. Each test works in a
// database of its own. The server: PROOFPIPE_TEST_PG (a URI) or the file PROOFPIPE_TEST_PG_FILE
// names (ctest's fixture service_pg writes it: scripts/pg-test-cluster). With neither the tests
// are skipped; a named file that is missing is a failure (CI sets it: a skip there would hide
// everything).
#include <gtest/gtest.h>

#include <pqxx/pqxx>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <random>
#include <set>
#include <thread>

#include "pg_queue.hpp"

using namespace pp::service;
using namespace std::chrono_literals;

namespace {

// Concatenation by appending (GCC 12's -Wrestrict misfires on "literal" + std::string).
template <class... T>
std::string cat(const T&... parts) {
  std::string out;
  (out += ... += parts);
  return out;
}

// nullopt: no server configured (skip); "" : configured but unusable (fail).
std::optional<std::string> base_uri() {
  if (const char* uri = std::getenv("PROOFPIPE_TEST_PG"); uri && *uri) return std::string(uri);
  if (const char* file = std::getenv("PROOFPIPE_TEST_PG_FILE"); file && *file) {
    std::ifstream f(file);
    std::string uri;
    std::getline(f, uri);
    return uri;
  }
  return std::nullopt;
}

// The URI with another database name.
std::string with_database(const std::string& uri, const std::string& db) {
  const std::size_t authority = uri.find("://") + 3;
  const std::size_t path = uri.find('/', authority);
  const std::size_t query = uri.find('?', authority);
  const std::string tail = query == std::string::npos ? "" : uri.substr(query);
  return cat(uri.substr(0, path == std::string::npos ? query : path), "/", db, tail);
}

NewJob job(const std::string& id, const std::string& request_id = "", int priority = 0) {
  NewJob j;
  j.job_id = id;
  j.request_id = request_id;
  j.key_path = "k/params";
  j.request = {1, 0, 2, 0, uint8_t(id.size())};  // zero bytes: a blob, not text
  j.priority = priority;
  j.partitions_total = 2;
  j.submitted_ms = 1000;
  return j;
}

Lease lease(const JobRecord& r) { return Lease{r.job_id, r.attempts}; }

class PgQueueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::optional<std::string> base = base_uri();
    if (!base) GTEST_SKIP() << "no PostgreSQL: set PROOFPIPE_TEST_PG or PROOFPIPE_TEST_PG_FILE (ctest does)";
    ASSERT_FALSE(base->empty()) << "PROOFPIPE_TEST_PG_FILE names no readable URI: did the fixture start the cluster?";
    base_ = *base;
    std::random_device rd;
    db_ = cat("pp_test_", std::to_string(rd()), std::to_string(rd()));
    pqxx::connection admin(base_);
    pqxx::nontransaction tx(admin);
    tx.exec(cat("CREATE DATABASE ", db_));
    uri_ = with_database(base_, db_);
  }
  void TearDown() override {
    if (db_.empty()) return;
    try {
      pqxx::connection admin(base_);
      pqxx::nontransaction tx(admin);
      tx.exec(cat("DROP DATABASE IF EXISTS ", db_, " WITH (FORCE)"));
    } catch (const std::exception& e) {
      ADD_FAILURE() << "cannot drop " << db_ << ": " << e.what();
    }
  }
  // Runs SQL in the test's database (to look at or bend rows).
  pqxx::result sql(const std::string& statement) {
    pqxx::connection c(uri_);
    pqxx::nontransaction tx(c);
    return tx.exec(statement);
  }
  std::string base_, db_, uri_;
};

}  // namespace

TEST(PgUri, PasswordIsRedacted) {
  EXPECT_EQ(redact_uri("postgresql://u:secret@h:5432/db"), "postgresql://u:***@h:5432/db");
  EXPECT_EQ(redact_uri("postgresql://u@h/db"), "postgresql://u@h/db");
  EXPECT_EQ(redact_uri("postgres://u:p%40ss@h/db?sslmode=require&password=two&x=1"),
            "postgres://u:***@h/db?sslmode=require&password=***&x=1");
  EXPECT_EQ(redact_uri("postgresql://h/db?password=only"), "postgresql://h/db?password=***");
  EXPECT_EQ(redact_uri("postgresql://u:p@ss@h/db"), "postgresql://u:***@h/db");  // the last '@' ends the user part
}

TEST(PgUri, BadUrisAreClearErrorsWithoutThePassword) {
  try {
    PgQueue q("mysql://u:hunter2@h/db");
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--queue"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("hunter2"), std::string::npos) << e.what();
  }
  // Nobody listens on port 1.
  try {
    PgQueue q("postgresql://u:hunter2@127.0.0.1:1/db");
    FAIL() << "connected";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--queue postgresql://u:***@127.0.0.1:1/db"), std::string::npos) << what;
    EXPECT_EQ(what.find("hunter2"), std::string::npos) << what;
  }
  // libpq quotes a malformed parameter string back: still no password.
  try {
    PgQueue q("postgresql://u:hunter2@127.0.0.1:1/db?bogus_option=1");
    FAIL() << "connected";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).find("hunter2"), std::string::npos) << e.what();
  }
}

TEST_F(PgQueueTest, WrongPasswordIsRefusedWithoutShowingIt) {
  std::string uri = uri_;
  const std::size_t colon = uri.find(':', uri.find("://") + 3), at = uri.find('@');
  uri.replace(colon + 1, at - colon - 1, "wrong-pw-4711");
  try {
    PgQueue q(uri);
    FAIL() << "a wrong password was accepted";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--queue postgresql://proofpipe:***@"), std::string::npos) << what;
    EXPECT_EQ(what.find("wrong-pw-4711"), std::string::npos) << what;
  }
}

TEST_F(PgQueueTest, InsertIsReadBackAndIdempotent) {
  PgQueue q(uri_);
  const JobStore::Inserted a = q.insert(job("a", "req-a", 3));
  EXPECT_FALSE(a.duplicate);
  const std::optional<JobRecord> r = q.get("a");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->state, JobState::queued);
  EXPECT_EQ(r->request_id, "req-a");
  EXPECT_EQ(r->request, (std::vector<uint8_t>{1, 0, 2, 0, 1}));
  EXPECT_EQ(r->priority, 3);
  EXPECT_EQ(r->attempts, 0u);
  EXPECT_FALSE(q.get("nope"));
  const JobStore::Inserted again = q.insert(job("b", "req-a"));
  EXPECT_TRUE(again.duplicate);
  EXPECT_EQ(again.job.job_id, "a");
  EXPECT_FALSE(q.get("b"));
  EXPECT_EQ(q.find_request("req-a")->job_id, "a");
  EXPECT_FALSE(q.find_request("other"));
  EXPECT_FALSE(q.insert(job("c")).duplicate);  // no request_id: never a duplicate
  EXPECT_FALSE(q.insert(job("d")).duplicate);
  EXPECT_EQ(q.active(), 3u);

  // Daemons racing with the same request_id: one job.
  std::vector<std::thread> threads;
  std::atomic<int> fresh{0};
  std::vector<std::string> ids(8);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      PgQueue mine(uri_, 1);
      const JobStore::Inserted ins = mine.insert(job(cat("race-", std::to_string(t)), "req-race"));
      if (!ins.duplicate) ++fresh;
      ids[std::size_t(t)] = ins.job.job_id;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(fresh.load(), 1);
  for (const std::string& id : ids) EXPECT_EQ(id, ids[0]);
  EXPECT_EQ(sql("SELECT count(*) FROM proofpipe_jobs WHERE request_id = 'req-race'")[0][0].as<int>(), 1);
}

TEST_F(PgQueueTest, ClaimsByPriorityThenOrderAndNeverTwice) {
  PgQueue q(uri_);
  q.insert(job("low", "", 0));
  q.insert(job("high", "", 5));
  q.insert(job("low2", "", 0));
  q.insert(job("higher", "", 9));
  std::vector<std::string> order;
  while (const std::optional<JobRecord> r = q.claim("A", 1, 60000)) {
    EXPECT_EQ(r->state, JobState::running);
    EXPECT_EQ(r->attempts, 1u);
    EXPECT_EQ(r->started_ms, 1);
    order.push_back(r->job_id);
  }
  EXPECT_EQ(order, (std::vector<std::string>{"higher", "high", "low", "low2"}));

  // Six claimers, each with its own connections as separate daemons would: every job once.
  constexpr int kJobs = 300, kClaimers = 6;
  for (int i = 0; i < kJobs; ++i) q.insert(job(cat("j", std::to_string(i)), "", i % 3));
  std::vector<std::vector<std::string>> got(kClaimers);
  std::vector<std::thread> threads;
  std::atomic<int> ready{0};
  for (int t = 0; t < kClaimers; ++t)
    threads.emplace_back([&, t] {
      PgQueue mine(uri_, 1);
      const std::string owner = cat("claimer-", std::to_string(t));
      mine.active();  // connected: now wait for the others, then all claim at once
      for (++ready; ready.load() < kClaimers;) std::this_thread::yield();
      while (const std::optional<JobRecord> r = mine.claim(owner, 2, 60000)) got[std::size_t(t)].push_back(r->job_id);
    });
  for (auto& t : threads) t.join();
  std::multiset<std::string> all;
  std::size_t busy = 0;
  for (const auto& g : got) {
    all.insert(g.begin(), g.end());
    busy += !g.empty();
  }
  EXPECT_EQ(all.size(), std::size_t(kJobs));
  EXPECT_EQ(std::set<std::string>(all.begin(), all.end()).size(), std::size_t(kJobs)) << "a job was claimed twice";
  EXPECT_GE(busy, 2u) << "the claimers did not overlap";
  EXPECT_EQ(sql("SELECT count(*) FROM proofpipe_jobs WHERE attempts <> 1")[0][0].as<int>(), 0);
  EXPECT_EQ(q.count_by_state()[JobState::running], std::size_t(kJobs + 4));
}

TEST_F(PgQueueTest, ExpiredLeasesAreRequeuedLiveOnesAreNot) {
  PgQueue q(uri_);
  q.insert(job("kept"));
  q.insert(job("dropped"));
  const JobRecord kept = *q.claim("A", 1, 200);
  const JobRecord dropped = *q.claim("B", 1, 200);
  // A keeps renewing its lease, B went silent (its daemon was killed).
  const std::vector<JobStore::Held> held = q.heartbeat("A", {lease(kept)}, 60000);
  ASSERT_EQ(held.size(), 1u);
  EXPECT_TRUE(held[0].held);
  EXPECT_FALSE(held[0].cancel_requested);
  EXPECT_EQ(q.reap(5), 0u);  // nothing expired yet
  std::this_thread::sleep_for(600ms);
  EXPECT_EQ(q.reap(5), 1u);
  EXPECT_EQ(q.get("kept")->state, JobState::running);
  const JobRecord back = *q.get("dropped");
  EXPECT_EQ(back.state, JobState::queued);
  EXPECT_EQ(back.attempts, 1u);
  EXPECT_EQ(back.partitions_done, 0u);
  // A heartbeat from the silent daemon does not take it back.
  EXPECT_FALSE(q.heartbeat("B", {lease(dropped)}, 60000)[0].held);
  const JobRecord again = *q.claim("C", 2, 60000);
  EXPECT_EQ(again.job_id, "dropped");
  EXPECT_EQ(again.attempts, 2u);
  // recover() (a daemon starting) re-queues expired leases too.
  sql("UPDATE proofpipe_jobs SET lease_until_ms = 0 WHERE job_id = 'kept'");
  EXPECT_EQ(q.recover(), 1u);
  EXPECT_EQ(q.get("kept")->state, JobState::queued);
}

TEST_F(PgQueueTest, AStaleClaimIsFencedOff) {
  PgQueue a(uri_), b(uri_);
  a.insert(job("x", "rx"));
  const JobRecord first = *a.claim("A", 1, 100);
  a.set_progress("A", lease(first), 1);
  EXPECT_EQ(a.get("x")->partitions_done, 1u);
  std::this_thread::sleep_for(400ms);  // A stalls past its lease
  EXPECT_EQ(b.reap(2), 1u);
  const JobRecord second = *b.claim("B", 3, 60000);
  EXPECT_EQ(second.attempts, 2u);
  // A wakes up: its heartbeat says the job is gone and none of its writes lands.
  EXPECT_FALSE(a.heartbeat("A", {lease(first)}, 60000)[0].held);
  a.set_progress("A", lease(first), 2);
  EXPECT_EQ(a.get("x")->partitions_done, 0u);
  EXPECT_FALSE(a.finish("A", lease(first), JobState::succeeded, std::vector<uint8_t>(192, 0xaa), "", 4, 0, 0));
  EXPECT_FALSE(a.requeue("A", lease(first)));
  // Even the same owner with an older attempt (a worker that lost its claim and got it again elsewhere).
  EXPECT_FALSE(b.finish("B", lease(first), JobState::failed, {}, "stale", 4, 0, 0));
  EXPECT_EQ(b.get("x")->state, JobState::running);
  std::vector<uint8_t> proofs(384);
  for (std::size_t i = 0; i < proofs.size(); ++i) proofs[i] = uint8_t(i);  // opaque bytes, zeros included
  EXPECT_TRUE(b.finish("B", lease(second), JobState::succeeded, proofs, "", 5, 1.5, 2.5));
  EXPECT_FALSE(b.finish("B", lease(second), JobState::succeeded, proofs, "", 6, 0, 0));  // once
  const JobRecord r = *a.get("x");
  EXPECT_EQ(r.state, JobState::succeeded);
  EXPECT_EQ(r.proofs, proofs);
  EXPECT_EQ(r.partitions_done, 2u);
  EXPECT_EQ(r.finished_ms, 5);
  EXPECT_DOUBLE_EQ(r.prove_ms, 2.5);
  EXPECT_EQ(a.finished_by("x"), "B");
  EXPECT_EQ(a.reap(7), 0u);  // a finished job is never re-queued
}

TEST_F(PgQueueTest, CancelQueuedRunningAndExpired) {
  PgQueue q(uri_);
  EXPECT_EQ(q.cancel("nope", 1), JobStore::Cancelled::not_found);
  q.insert(job("queued"));
  EXPECT_EQ(q.cancel("queued", 10), JobStore::Cancelled::now);
  EXPECT_EQ(q.get("queued")->state, JobState::cancelled);
  EXPECT_EQ(q.get("queued")->finished_ms, 10);
  EXPECT_EQ(q.cancel("queued", 11), JobStore::Cancelled::finished);
  EXPECT_FALSE(q.claim("A", 1, 60000));

  q.insert(job("running"));
  const JobRecord r = *q.claim("A", 1, 60000);
  EXPECT_EQ(q.cancel("running", 12), JobStore::Cancelled::requested);
  const std::vector<JobStore::Held> held = q.heartbeat("A", {lease(r)}, 60000);
  EXPECT_TRUE(held[0].held);
  EXPECT_TRUE(held[0].cancel_requested);  // the owner learns it at its heartbeat
  EXPECT_TRUE(q.finish("A", lease(r), JobState::cancelled, {}, "cancelled by a Cancel call", 13, 0, 0));
  EXPECT_EQ(q.get("running")->state, JobState::cancelled);

  // Interrupted by a shutdown after a Cancel: it ends CANCELLED, not queued.
  q.insert(job("shutdown"));
  const JobRecord s = *q.claim("A", 1, 60000);
  q.cancel("shutdown", 14);
  EXPECT_TRUE(q.requeue("A", lease(s)));
  EXPECT_EQ(q.get("shutdown")->state, JobState::cancelled);

  // Its daemon died after a Cancel reached it: the reaper ends it CANCELLED.
  q.insert(job("orphan"));
  q.claim("B", 1, 100);
  q.cancel("orphan", 15);
  std::this_thread::sleep_for(400ms);
  EXPECT_EQ(q.reap(16), 1u);
  EXPECT_EQ(q.get("orphan")->state, JobState::cancelled);
  EXPECT_EQ(q.get("orphan")->finished_ms, 16);
  EXPECT_EQ(q.active(), 0u);
}

TEST_F(PgQueueTest, DaemonsStartingTogetherCreateTheSchemaOnce) {
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 6; ++t)
    threads.emplace_back([&] {
      try {
        PgQueue q(uri_, 1);
      } catch (const std::exception& e) {
        ++failures;
        ADD_FAILURE() << e.what();
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  PgQueue q(uri_);
  q.insert(job("a"));
  EXPECT_EQ(q.count_by_state()[JobState::queued], 1u);
}

TEST_F(PgQueueTest, RetentionDeletesOnlyOldFinishedJobs) {
  PgQueue q(uri_);
  for (const char* id : {"old", "new", "queued"}) q.insert(job(id, id));
  const JobRecord old = *q.claim("A", 1, 60000);
  const JobRecord young = *q.claim("A", 1, 60000);
  q.finish("A", lease(old), JobState::succeeded, {1}, "", 1000, 0, 0);
  q.finish("A", lease(young), JobState::failed, {}, "x", 9000, 0, 0);
  EXPECT_EQ(q.purge_finished_before(5000), 1);
  EXPECT_FALSE(q.get("old"));
  EXPECT_TRUE(q.get("new"));
  EXPECT_TRUE(q.get("queued"));
  EXPECT_TRUE(q.get("new")->proofs.empty());  // a failed job keeps no proofs
  EXPECT_EQ(q.active(), 1u);
}
