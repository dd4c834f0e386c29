// SPDX-License-Identifier: Apache-2.0 OR MIT
// The engine a program asks for, as its command line says it (`prove` and `serve` take the same
// flags: --cpu, --devices, --gw, --vram-budget, --host-budget, --threads), turned into the C API's
// pp_engine_config in one place.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "proofpipe/proofpipe.h"

namespace pp {

struct EngineOptions {
  bool cpu_only = false;             // --cpu: never a GPU
  std::vector<int> devices;          // --devices: CUDA ordinals; empty: every visible GPU
  int gw = 2;                        // --gw: engine workers (partitions in flight) per GPU
  std::string vram_budget = "card";  // --vram-budget: device memory per GPU ("card" or a size)
  std::string host_budget;           // --host-budget: host memory for partitions in flight; "": unlimited
  int threads = 0;                   // --threads: CPU worker threads; 0: all cores
};

// The budgets as users write them (--vram-budget, --host-budget, and the drop-ins'
// PROOFPIPE_DEVICE_MEMORY / PROOFPIPE_HOST_MEMORY), in pp_engine_config's bytes:
// device: "card" (0: the card less the reserve) or a byte size ("16GiB", "17179869184"), not 0;
// host: a byte size, "" or 0 for unlimited. std::invalid_argument saying what is wrong.
uint64_t device_budget_bytes(std::string_view text);
uint64_t host_budget_bytes(std::string_view text);

// pp_engine_config_default with these options applied. std::invalid_argument naming the option
// (more than PP_MAX_GPUS devices, a negative ordinal, a budget that does not parse).
pp_engine_config engine_config(const EngineOptions& options);

}  // namespace pp
