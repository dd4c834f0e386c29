// SPDX-License-Identifier: Apache-2.0 OR MIT
// lowest_failing (core/lowest_failing.hpp): the parallel pass the readers use to name the first
// bad item of a section reports the lowest failing index, not the first one a thread found.
#include <gtest/gtest.h>
#include <tbb/task_arena.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "proofpipe/core/lowest_failing.hpp"

namespace pp {
namespace {

TEST(LowestFailing, NoneFailing) {
  EXPECT_EQ(lowest_failing(0, 16, [](uint64_t) { return false; }), kNoneFailed);
  EXPECT_EQ(lowest_failing(10000, 16, [](uint64_t) { return true; }), kNoneFailed);
}

TEST(LowestFailing, EveryIndexBelowTheLowestIsCheckedOnce) {
  constexpr uint64_t n = 100000, bad = 77777;
  auto calls = std::make_unique<std::atomic<int>[]>(n);
  const uint64_t got = lowest_failing(n, 64, [&](uint64_t i) {
    calls[i].fetch_add(1);
    return i != bad && i % 50000 != 49999;  // 49999 fails too: it is the lowest
  });
  EXPECT_EQ(got, 49999u);
  for (uint64_t i = 0; i < 49999; ++i) ASSERT_EQ(calls[i].load(), 1) << i;
}

// A failure found first at a high index must not hide a lower one found later: the check of the
// low index waits (up to 2 s) until the high one has failed on another thread, so that a "first
// found wins" pass would return the high index. On one thread the wait times out and the result
// must still be the low index.
TEST(LowestFailing, ALaterFoundLowerFailureWins) {
  constexpr uint64_t n = 1 << 16, low = 5, high = n - 5;
  tbb::task_arena arena(4);
  for (int round = 0; round < 5; ++round) {
    std::atomic<bool> high_failed{false};
    const uint64_t got = arena.execute([&] {
      return lowest_failing(n, 256, [&](uint64_t i) {
        if (i == high) {
          high_failed.store(true);
          return false;
        }
        if (i == low) {
          const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
          while (!high_failed.load() && std::chrono::steady_clock::now() < until) std::this_thread::yield();
          return false;
        }
        return true;
      });
    });
    EXPECT_EQ(got, low) << "round " << round;
  }
}

}  // namespace
}  // namespace pp
