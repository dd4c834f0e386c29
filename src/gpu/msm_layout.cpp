// SPDX-License-Identifier: Apache-2.0 OR MIT
// The GPU MSM's and batch addition's workspace layouts (msm.hpp): host code in the core, since
// the memory planner sizes with them as the kernels carve with them (every build has the planner,
// the engine-only tsan build included).

#include <algorithm>
#include <cstddef>

#include "proofpipe/gpu/msm.hpp"

namespace pp::gpu {

namespace {

// A bump allocator that only measures: each piece starts on a kWorkspaceAlign boundary.
struct Measure {
  std::size_t used = 0;
  std::size_t take(std::size_t bytes) {
    used = (used + kWorkspaceAlign - 1) / kWorkspaceAlign * kWorkspaceAlign;
    const std::size_t at = used;
    used += bytes;
    return at;
  }
};

}  // namespace

MsmLayout msm_layout(const MsmShape& sh, std::size_t entries, std::size_t segments, std::size_t xyzz_bytes,
                     std::size_t sort_bytes) {
  const std::size_t sets = std::size_t(sh.sets()), chunks = sh.reduce_chunks();
  MsmLayout l{};
  Measure m;
  l.keys = m.take(4 * entries);
  l.values = m.take(4 * entries);
  l.keys_alt = m.take(4 * entries);  // the sort's double buffers
  l.values_alt = m.take(4 * entries);
  l.sort_temp = m.take(sort_bytes);
  l.buckets = m.take(sets * sh.buckets() * xyzz_bytes);  // every set's buckets
  l.head = m.take(segments * xyzz_bytes);                // segment head sums
  l.tail = m.take(segments * xyzz_bytes);                // segment tail sums
  l.chunks = m.take(sets * chunks * xyzz_bytes);         // bucket-reduction chunks' local sums
  l.totals = m.take(sets * chunks * xyzz_bytes);         // and their totals
  l.level2 = m.take(sets * std::size_t(sh.reduce_chunks2()) * xyzz_bytes);  // the totals' weighted chunk sums
  l.set_sums = m.take(2 * sets * xyzz_bytes);            // per set: sum of local sums, weighted totals
  l.scratch = m.take(sets * ((chunks + kTreeItems - 1) / kTreeItems) * xyzz_bytes);  // tree sums
  l.long_chains = m.take(2 * max_long_chains(segments) * sizeof(uint64_t));
  l.long_count = m.take(sizeof(unsigned int));
  l.total = m.used;
  return l;
}

std::size_t msm_entries_bound(std::size_t m, int copies) {
  // A pass holds one set of m·copies entries, or sets of fewer than kPassEntries up to that many,
  // never more sets than the narrowest window has windows.
  const std::size_t per_set = m * std::size_t(copies);
  if (per_set >= kPassEntries) return per_set;
  return std::min(kPassEntries, per_set * std::size_t(msm_digits::num_windows(kMinWindow)));
}

std::size_t radix_sort_temp_bound(std::size_t n) { return 8 * n + (std::size_t(64) << 20); }

BatchLayout batch_add_layout(std::size_t n, std::size_t xyzz_bytes) {
  const std::size_t chunks = (n + 63) / 64;
  BatchLayout l{};
  Measure m;
  l.chunks = m.take(chunks * xyzz_bytes);
  l.scratch = m.take((chunks + kTreeItems - 1) / kTreeItems * xyzz_bytes);
  l.total = m.used;
  return l;
}

}  // namespace pp::gpu
