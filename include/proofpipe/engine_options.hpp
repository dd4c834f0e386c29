// SPDX-License-Identifier: Apache-2.0 OR MIT
// The engine a program asks for, as its command line says it (`prove` and `serve` take the same
// flags: --cpu, --devices, --gw, --vram-budget, --host-budget, --threads), turned into the C API's
// pp_engine_config in one place.
#pragma once

#include <string>
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

// pp_engine_config_default with these options applied. std::invalid_argument naming the option
// (more than PP_MAX_GPUS devices, a negative ordinal, a budget that does not parse).
pp_engine_config engine_config(const EngineOptions& options);

}  // namespace pp
