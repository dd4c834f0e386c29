// SPDX-License-Identifier: Apache-2.0 OR MIT
// Large vectors of trivially copyable elements (a 2^27 witness vector is 4 GiB) allocated so that
// the serial part of std::vector's value-initialisation runs at memory bandwidth: the storage is
// reserved, offered to transparent huge pages, and its pages are first touched on every core
// (page faults, where the kernel zeroes each page, are what makes a fresh multi-GiB resize slow:
// ~2.5 GB/s on one core). Readers then fill the elements in parallel.
#pragma once

#include <sys/mman.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace pp {

template <class T>
std::vector<T> big_vector(std::size_t n) {
  static_assert(std::is_trivially_copyable_v<T>, "big_vector: trivially copyable elements only");
  std::vector<T> v;
  constexpr std::size_t kSmall = std::size_t(1) << 24;  // below 16 MiB the plain path is as fast
  if (n * sizeof(T) < kSmall) {
    v.resize(n);
    return v;
  }
  v.reserve(n);
  auto* base = reinterpret_cast<unsigned char*>(v.data());
  const std::size_t bytes = n * sizeof(T);
  constexpr std::size_t kHuge = std::size_t(1) << 21, kPage = 4096;
  const auto first = (reinterpret_cast<std::uintptr_t>(base) + kHuge - 1) & ~(kHuge - 1);
  const auto last = (reinterpret_cast<std::uintptr_t>(base) + bytes) & ~(kHuge - 1);
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);  // advice only
  // The reserved storage is raw memory of implicit-lifetime objects: zero bytes on every core.
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, (bytes + kPage - 1) / kPage, 512),
                    [&](const tbb::blocked_range<std::size_t>& r) {
                      for (std::size_t p = r.begin(); p != r.end(); ++p) base[p * kPage] = 0;
                    });
  v.resize(n);  // value-initialises over faulted pages
  return v;
}

}  // namespace pp
