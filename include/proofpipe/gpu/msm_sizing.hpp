// SPDX-License-Identifier: Apache-2.0 OR MIT
// The GPU MSM's sizes, public: segment lengths, window limits, the default window and the chain
// limit, for the shapes and workspace bounds (gpu/msm.hpp) and the planner (engine/plan.cpp). The
// kernel bodies that use them are private: src/gpu/msm_kernels.hpp.
#pragma once

#include <cstdint>

#include "proofpipe/core/hd.hpp"

namespace pp::gpu {

// Sorted entries per accumulation thread: about 2^17 threads (enough to fill an H200 twice),
// at least kMinSegment. Long segments make chains (buckets crossing a segment end) rare; short
// ones keep small MSMs (a partition's tails) from being latency-bound: one thread's dependent
// additions take ~20 µs each, so 32-entry segments cost an MSM of 2^14 points 20 ms.
inline constexpr uint32_t kMinSegment = 8, kMaxSegment = 1024;
PP_HD inline uint32_t segment_length(uint64_t n) {
  const uint64_t want = n >> 17;
  return uint32_t(want < kMinSegment ? kMinSegment : want > kMaxSegment ? kMaxSegment : want);
}
inline constexpr int kMinWindow = 2, kMaxWindow = 24;
// Heads a chain sums by itself (chain_sums, src/gpu/msm_kernels.hpp, step 4); a longer chain goes
// to a tree, and max_long_chains (gpu/msm.hpp) sizes their list.
inline constexpr uint64_t kMaxChain = 32;

// The window the GPU MSM uses for n points when none is given, from window sweeps (G1;
// docs/perf-history/gpu-kernels-v1-v9.md): lg(n) - 4 up to 2^24 points; above, 13 windows of 20
// bits at 2^25 and 12 of 22 from 2^26 (c = 21 keeps 13 windows with twice the buckets of c = 20,
// and from 2^26 a window fewer outweighs the larger buckets' reduction).
PP_HD inline int default_gpu_window(uint64_t n) {
  int lg = 0;
  while ((uint64_t(1) << lg) < n) ++lg;
  if (lg >= 26) return 22;
  if (lg == 25) return 20;
  return lg - 4 < 4 ? 4 : lg - 4;
}

}  // namespace pp::gpu
