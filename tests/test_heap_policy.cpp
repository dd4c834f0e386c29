// SPDX-License-Identifier: Apache-2.0 OR MIT
// The one-shot heap policy of `proofpipe prove` (src/cli/heap_policy.cpp): freed memory is
// reused without page faults, and fresh heap memory comes in transparent huge pages.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "../src/cli/heap_policy.hpp"

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitizerAllocator = true;  // the sanitizer's allocator ignores mallopt
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitizerAllocator = true;
#else
constexpr bool kSanitizerAllocator = false;
#endif
#else
constexpr bool kSanitizerAllocator = false;
#endif

long minor_faults() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

// Allocates and writes every byte (through a volatile read back, so the compiler keeps it).
char* touched(std::size_t bytes) {
  char* p = static_cast<char*>(std::malloc(bytes));
  if (!p) return nullptr;
  std::memset(p, 0x5a, bytes);
  const volatile char* v = p;
  (void)v[bytes - 1];
  return p;
}

constexpr std::size_t kMiB = std::size_t(1) << 20;

class HeapPolicy : public ::testing::Test {
 protected:
  void SetUp() override {
    if (kSanitizerAllocator) GTEST_SKIP() << "sanitizer allocator";
    pp::cli::use_one_shot_heap_policy();
  }
};

// glibc's default maps a 24 MiB block on its own and unmaps it on free, so the 8 and 16 MiB
// blocks after it would be faulted in afresh (thousands of 4 KiB faults).
TEST_F(HeapPolicy, FreedMemoryServesLaterBlocksWithoutFaults) {
  char* first = touched(24 * kMiB);
  ASSERT_NE(first, nullptr);
  std::free(first);
  const long before = minor_faults();
  char* a = touched(8 * kMiB);
  char* b = touched(15 * kMiB);
  const long faults = minor_faults() - before;
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  std::free(a);
  std::free(b);
  EXPECT_LT(faults, 64) << "23 MiB after a freed 24 MiB block";
}

// 32 MiB of fresh heap is 8192 faults in 4 KiB pages and 16 in 2 MiB pages.
TEST_F(HeapPolicy, FreshHeapComesInHugePages) {
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode;
  std::getline(thp, mode);
  if (mode.empty() || mode.find("[never]") != std::string::npos) GTEST_SKIP() << "no transparent huge pages";
  const long before = minor_faults();
  char* p = touched(32 * kMiB);
  const long faults = minor_faults() - before;
  ASSERT_NE(p, nullptr);
  std::free(p);
  EXPECT_LT(faults, 1024);
}

}  // namespace
