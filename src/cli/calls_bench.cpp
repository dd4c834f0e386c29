// SPDX-License-Identifier: Apache-2.0 OR MIT
// `proofpipe bench calls`: calls in flight through the C API, on one GPU and on several
// (commands.hpp, BenchCallsOptions).
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.hpp"
#include "proofpipe/engine_options.hpp"
#include "proofpipe/proofpipe.h"

namespace pp::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct Run {
  uint32_t gpus = 0;
  double s_per_round = 0, partitions_per_s = 0, min_busy = 0;
  std::vector<double> busy;  // per GPU
};

std::vector<pp_gpu_info> gpu_infos(pp_engine* engine) {
  pp_error err;
  pp_engine_stats st;
  check(pp_engine_stats_get(engine, &st, &err), err);
  std::vector<pp_gpu_info> out(st.gpus);
  for (uint32_t i = 0; i < st.gpus; ++i) check(pp_engine_gpu_info_get(engine, i, &out[i], &err), err);
  return out;
}

// The rounds on an engine made from `config`; every call's proofs must equal `reference` (filled
// by the first call when empty).
Run run_on(const BenchCallsOptions& o, const pp_engine_config& config, const pp_key* key, std::vector<uint8_t>& reference) {
  pp_error err;
  const EngineHandle engine = create_engine(config);
  const std::size_t n = o.witnesses.size();
  PpwInputs ppw(o.witnesses);
  const std::vector<pp_input>& inputs = ppw.inputs;
  check(pp_key_preload(engine.get(), key, &inputs[0], &err), err);
  auto round = [&] {
    std::vector<std::unique_ptr<pp_pending, void (*)(pp_pending*)>> pending;
    for (int c = 0; c < o.calls; ++c) {
      pp_pending* p = nullptr;
      check(pp_prove_start(engine.get(), key, inputs.data(), n, &o.seed, &p, &err), err);
      pending.emplace_back(p, pp_pending_free);
    }
    for (auto& p : pending) {
      std::vector<uint8_t> proofs(n * PP_PROOF_BYTES);
      std::size_t size = proofs.size();
      check(pp_prove_finalize(p.get(), proofs.data(), &size, &err), err);
      if (reference.empty()) reference = proofs;
      if (proofs != reference)
        throw std::runtime_error("bench calls: a call's proofs differ from the first call's (same key, witnesses, seed)");
    }
  };
  round();  // warm-up: the key's device copy, the engine's workers
  const std::vector<pp_gpu_info> before = gpu_infos(engine.get());
  const Clock::time_point t0 = Clock::now();
  for (int r = 0; r < o.rounds; ++r) round();
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  const std::vector<pp_gpu_info> after = gpu_infos(engine.get());
  Run out;
  out.gpus = uint32_t(after.size());
  out.s_per_round = wall / o.rounds;
  out.partitions_per_s = double(o.rounds) * o.calls * double(n) / wall;
  for (std::size_t i = 0; i < after.size(); ++i) {
    out.busy.push_back((after[i].ms_busy - before[i].ms_busy) / (1e3 * wall));
    if (!after[i].healthy) throw std::runtime_error(fmt::format("bench calls: GPU {} was lost during the run", after[i].device));
  }
  out.min_busy = out.busy.empty() ? 0 : *std::min_element(out.busy.begin(), out.busy.end());
  std::string busy;
  for (double b : out.busy) busy += fmt::format("{}{:.3f}", busy.empty() ? "" : ",", b);
  fmt::print("proofpipe op=calls entry=capi gpus={} calls={} partitions={} rounds={} s_per_round={:.4f} "
             "partitions_per_s={:.3f} min_gpu_busy={:.3f} gpu_busy={}\n",
             out.gpus, o.calls, n, o.rounds, out.s_per_round, out.partitions_per_s, out.min_busy, busy.empty() ? "-" : busy);
  std::fflush(stdout);
  return out;
}

}  // namespace

int run_bench_calls(const BenchCallsOptions& o) {
  if (o.witnesses.empty()) throw std::invalid_argument("bench calls: give at least one --witness");
  if (o.calls < 1 || o.rounds < 1) throw std::invalid_argument("bench calls: --calls and --rounds must be at least 1");
  const KeyHandle key = load_key(o.params, false);
  const pp_engine_config all = engine_config(o.engine);
  std::vector<uint8_t> reference;
  if (!o.compare_gpus) {
    run_on(o, all, key.get(), reference);
    return 0;
  }
  // The first GPU of those the options select, alone; then all of them.
  std::vector<int> devices;
  for (const pp_gpu_info& g : gpu_infos(create_engine(all).get())) devices.push_back(g.device);
  if (devices.size() < 2)
    throw std::invalid_argument(fmt::format("bench calls --compare-gpus: the engine options select {} GPU(s); it needs "
                                            "two or more", devices.size()));
  pp_engine_config one = all;
  one.num_gpus = 1;
  one.gpus[0] = devices[0];
  const Run base = run_on(o, one, key.get(), reference);
  const Run many = run_on(o, all, key.get(), reference);
  fmt::print("proofpipe op=multi-gpu entry=capi gpus={} speedup={:.3f} min_gpu_busy={:.3f} one_gpu_partitions_per_s={:.3f} "
             "partitions_per_s={:.3f}\n",
             many.gpus, many.partitions_per_s / base.partitions_per_s, many.min_busy, base.partitions_per_s,
             many.partitions_per_s);
  return 0;
}

}  // namespace pp::cli
