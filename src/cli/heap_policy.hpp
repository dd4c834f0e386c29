// SPDX-License-Identifier: Apache-2.0 OR MIT
// The heap policy of a one-shot proving command (glibc malloc tuning, see heap_policy.cpp).
#pragma once

namespace pp::cli {

// Keeps freed memory for reuse and backs the heap with transparent huge pages. Call before the
// first large allocation (and before TBB's workers start); process-wide, so only for commands
// that prove once and exit.
void use_one_shot_heap_policy();

}  // namespace pp::cli
