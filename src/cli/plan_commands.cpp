// SPDX-License-Identifier: Apache-2.0 OR MIT
// `proofpipe info --plan`: prints the device memory plan (engine/plan.hpp) without a GPU.
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <stdexcept>

#include "commands.hpp"
#include "proofpipe/engine/plan.hpp"
#include "proofpipe/groth16/synthetic.hpp"
#include "proofpipe/io/params.hpp"

namespace pp::cli {

void add_plan_options(CLI::App* info, PlanCliOptions& o) {
  auto* plan = info->add_flag("--plan", o.enabled,
                              "Print the GPU memory plan: SRS placement, partition slots, MSM pieces, arena regions");
  info->add_option("--lg", o.lg, "With --plan: log2 of the domain of the synthetic PoRep-shaped circuit (default 27)")
      ->check(CLI::Range(4, 28))
      ->needs(plan);
  info->add_option("--inputs", o.public_inputs, "With --plan: public inputs of the synthetic circuit (without the 1)")
      ->capture_default_str()
      ->needs(plan);
  info->add_option("--vram-budget", o.vram_budget,
                   "With --plan: device memory the arena may use, e.g. 16GiB, 141GB or bytes (default: the device "
                   "less 512 MiB for the CUDA context)")
      ->needs(plan);
  info->add_option("--device-memory", o.device_memory, "With --plan: device memory of the GPU (no GPU is queried)")
      ->capture_default_str()
      ->needs(plan);
  info->add_option("--gw", o.gw, "With --plan: workers per GPU")
      ->check(CLI::Range(1, 64))
      ->capture_default_str()
      ->needs(plan);
  info->add_option("--srs", o.srs, "With --plan: SRS placement (auto picks resident when it fits)")
      ->check(CLI::IsMember({"auto", "resident", "streamed"}))
      ->capture_default_str()
      ->needs(plan);
}

int run_info_plan(const PlanCliOptions& o, const std::filesystem::path& key_file) {
  using namespace pp::engine;
  PlanRequest request;
  if (!key_file.empty()) {
    if (o.lg) throw std::invalid_argument("info --plan: give either --lg or a .params key, not both");
    const ParamsHeader h = read_params_header(key_file);
    request.shape = shape_of(params_layout(h, key_file.string()), kBls12_381Points);  // .params: BLS12-381
  } else {
    request.shape = porep_like_shape(o.lg.value_or(27), o.public_inputs);
  }
  request.device_memory = parse_byte_size(o.device_memory);
  request.budget = o.vram_budget.empty() ? 0 : parse_budget(o.vram_budget);
  request.gw = o.gw;
  request.srs = o.srs == "resident"   ? SrsPlacement::resident
                : o.srs == "streamed" ? SrsPlacement::streamed
                                      : SrsPlacement::automatic;
  const MemoryPlan plan = plan_memory(request);
  if (const auto problems = plan_violations(plan); !problems.empty())
    throw std::logic_error("info --plan: the plan fails its own check: " + problems.front());
  fmt::print("{}", plan.describe());
  return 0;
}

}  // namespace pp::cli
