// SPDX-License-Identifier: Apache-2.0 OR MIT
#include "proofpipe/engine_options.hpp"

#include <stdexcept>
#include <string>

#include "proofpipe/engine/plan.hpp"

namespace pp {

uint64_t device_budget_bytes(std::string_view text) { return engine::parse_budget(text); }
uint64_t host_budget_bytes(std::string_view text) { return text.empty() ? 0 : engine::parse_byte_size(text); }

pp_engine_config engine_config(const EngineOptions& o) {
  pp_engine_config config;
  pp_engine_config_default(&config);
  if (o.cpu_only) {
    config.num_gpus = 0;
  } else if (!o.devices.empty()) {
    if (o.devices.size() > PP_MAX_GPUS)
      throw std::invalid_argument("--devices: " + std::to_string(o.devices.size()) + " GPUs, at most " +
                                  std::to_string(PP_MAX_GPUS));
    config.num_gpus = int(o.devices.size());
    for (std::size_t i = 0; i < o.devices.size(); ++i) {
      if (o.devices[i] < 0) throw std::invalid_argument("--devices: " + std::to_string(o.devices[i]) + " is not a CUDA ordinal");
      config.gpus[i] = o.devices[i];
    }
  }
  config.gpu_workers = o.gw;
  auto parsed = [](const char* option, auto&& parse) {
    try {
      return parse();
    } catch (const std::exception& e) {
      throw std::invalid_argument(std::string(option) + ": " + e.what());
    }
  };
  config.device_memory_budget = parsed("--vram-budget", [&] { return device_budget_bytes(o.vram_budget); });
  config.host_memory_budget = parsed("--host-budget", [&] { return host_budget_bytes(o.host_budget); });
  config.threads = o.threads;
  return config;
}

}  // namespace pp
