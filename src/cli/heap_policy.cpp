// SPDX-License-Identifier: Apache-2.0 OR MIT
// The heap policy of a one-shot proving command: freed memory kept for reuse, the heap backed by huge pages.
#include "heap_policy.hpp"

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace pp::cli {

// A proof allocates and frees a few hundred MB of vectors (the key's points, each MSM's digits,
// GLV points and bucket lists). With glibc's defaults every vector of more than 128 KiB is an
// mmap of its own, unmapped on free, and the next one is faulted in again 4 KiB at a time, zeroed:
// the page faults' system time was a large share of a small proof's CPU time, more so under a
// paravirtualised MMU (docs/perf-history/cpu-issue18.md, "Issue 18, fifth round"). So, for this
// process only:
// - vectors up to 32 MiB (the most M_MMAP_THRESHOLD accepts) come from the heap, which is never
//   trimmed, so a freed vector's pages serve the next one without a fault;
// - one arena: TBB's workers would otherwise each grow (and fault in) a heap of their own;
// - the heap grows by 256 MiB at a time, and the first step is advised for transparent huge pages
//   (the kernel's THP mode here is "madvise"): a 2 MiB page per fault instead of 4 KiB.
// Larger allocations (PoRep-sized keys) still get mmaps of their own. Every call is advisory:
// if one is refused, allocation works as before.
void use_one_shot_heap_policy() {
  constexpr std::size_t kMiB = std::size_t(1) << 20;
  constexpr std::uintptr_t kHugePage = 2 * kMiB;
  mallopt(M_ARENA_MAX, 1);
  mallopt(M_MMAP_THRESHOLD, int(32 * kMiB));
  mallopt(M_TRIM_THRESHOLD, int(1024 * kMiB));
  mallopt(M_TOP_PAD, int(256 * kMiB));
  // The next small allocation that does not fit the current heap grows it by the pad; the
  // growth is one new range [before, after) of the main heap.
  const auto before = reinterpret_cast<std::uintptr_t>(sbrk(0));
  // volatile: a malloc whose result is only freed may be elided by the compiler.
  void* volatile probe = malloc(256 * 1024);
  const auto after = reinterpret_cast<std::uintptr_t>(sbrk(0));
  const std::uintptr_t begin = (before + kHugePage - 1) & ~(kHugePage - 1);
  if (before != std::uintptr_t(-1) && after > begin + kHugePage)
    madvise(reinterpret_cast<void*>(begin), after - begin, MADV_HUGEPAGE);
  free(probe);
}

}  // namespace pp::cli
