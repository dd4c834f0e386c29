// SPDX-License-Identifier: Apache-2.0 OR MIT
// A parallel pass over [0, count) that reports the lowest index at which a check fails, as a
// serial pass would: readers decode large sections on every core and still name the first bad
// item (its index, its byte offset) in their error, whatever the order the chunks ran in.
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <atomic>
#include <cstdint>
#include <limits>

namespace pp {

inline constexpr uint64_t kNoneFailed = std::numeric_limits<uint64_t>::max();

// Calls ok(i) for the indices of [0, count) in chunks of `grain` on every core and returns the
// lowest i for which it returned false (kNoneFailed when none did). Indices above a failure
// already found are skipped, so ok(i) may be left uncalled for some i past the lowest failure;
// every i below it is called exactly once.
template <class Ok>
uint64_t lowest_failing(uint64_t count, uint64_t grain, Ok&& ok) {
  std::atomic<uint64_t> lowest{kNoneFailed};
  tbb::parallel_for(tbb::blocked_range<uint64_t>(0, count, grain), [&](const tbb::blocked_range<uint64_t>& r) {
    for (uint64_t i = r.begin(); i != r.end(); ++i) {
      if (i >= lowest.load(std::memory_order_relaxed)) return;
      if (!ok(i)) {
        uint64_t seen = lowest.load(std::memory_order_relaxed);
        while (i < seen && !lowest.compare_exchange_weak(seen, i, std::memory_order_relaxed)) {
        }
        return;
      }
    }
  });
  return lowest.load();
}

}  // namespace pp
