// SPDX-License-Identifier: Apache-2.0 OR MIT
// The daemon's two clocks: Unix milliseconds for what the job store records, the steady clock for
// durations (key loads, proving, uptime).
#pragma once

#include <chrono>
#include <cstdint>

namespace pp::service {

using Clock = std::chrono::steady_clock;

inline int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

inline double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace pp::service
