// SPDX-License-Identifier: Apache-2.0 OR MIT
// `proofpipe engine bench`: the pipelined engine on the simulated device or on the GPUs (one
// gpu::CudaBackend each), with s/proof, GPU-busy %, peak RSS, trace and timeline.
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.hpp"
#include "proofpipe/engine/engine.hpp"
#include "proofpipe/engine/plan.hpp"
#include "proofpipe/engine/sim_backend.hpp"
#include "proofpipe/groth16/synthetic.hpp"
#include "proofpipe/io/key_cache.hpp"
#include "proofpipe/io/witness.hpp"
#if PROOFPIPE_HAS_CUDA
#include "proofpipe/gpu/cuda_backend.hpp"
#endif

namespace pp::cli {

void add_engine_bench_options(CLI::App* cmd, EngineBenchOptions& o) {
  cmd->add_option("--backend", o.backend, "Device backend: sim (the simulated device) or cuda (the GPUs)")
      ->check(CLI::IsMember({"sim", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--lg", o.lg, "log2 of the domain of the synthetic PoRep-shaped circuit")
      ->check(CLI::Range(4, 28))
      ->capture_default_str();
  cmd->add_option("--partitions", o.partitions, "Partitions per proof")->check(CLI::Range(1, 1000))->capture_default_str();
  cmd->add_option("--proofs", o.proofs, "Proofs (jobs) submitted at once")->check(CLI::Range(1, 100000))->capture_default_str();
  cmd->add_option("--gw", o.gw, "Workers per device (several: one run each)")->check(CLI::Range(1, 64))->capture_default_str();
  cmd->add_flag("--zip", o.zip,
                "Pair the i-th --vram-budget with the i-th --gw (as many of each; and with the i-th --batch-passes when "
                "there are as many) instead of running every combination");
  cmd->add_option("--devices", o.devices, "Simulated devices sharing the queue")->check(CLI::Range(1, 16))->capture_default_str();
  cmd->add_option("--interlock", o.interlock,
                  "two: memory and compute tokens; single: one lock (the old design); several: one run each")
      ->check(CLI::IsMember({"single", "two"}))
      ->capture_default_str();
  cmd->add_option("--host-budget,--host-mem", o.host_mem,
                  "Host memory budget for partitions in flight and the GPU provers' holdings (pinned buffers, a "
                  "streamed key's host copy), e.g. 64GiB (default: unlimited)");
  cmd->add_option("--vram-budget", o.vram_budget, "Arena budget of each device (planner), e.g. 16GiB, or card")
      ->capture_default_str();

  cmd->add_option("--sim-latency", o.sim_latency,
                  "Simulated device latencies in microseconds: stage=,h=,msm=,finish=,prepare= (comma separated)")
      ->capture_default_str();
  cmd->add_flag("--spin", o.spin, "Busy-wait the simulated latencies instead of sleeping");
  cmd->add_option("--trace", o.trace, "Write a Chrome/Perfetto trace JSON here");
  cmd->add_option("--timeline", o.timeline, "Draw the timeline PNG here (gnuplot)");
  cmd->add_option("--key-cache", o.key_cache,
                  "Write the generated key to this key cache file and prove with it mapped from there: the GPU "
                  "hands its pages back once the key is resident (peak_rss_gib then counts no host copy of the key)");
  cmd->add_option("--seed", o.seed, "Seed of the circuit, key, witnesses and r, s")->capture_default_str();
  cmd->add_option("--check", o.check,
                  "The engine's check of every proof before release: on, off, or both (one run each, same key)")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  cmd->add_option("--corrupt-every", o.corrupt_every,
                  "Test hook: corrupt every Nth device result (cuda: a flipped bit in the L sum read back; sim: "
                  "probability 1/N), to show the check catches it (0: none)");
  cmd->add_option("--batch-passes", o.batch_passes,
                  "cuda, batched split passes: inline (compute() enqueues them after each H MSM, the measured "
                  "design) or thread (the prover's pass thread, a chunk at a time); several: one run each")
      ->check(CLI::IsMember({"thread", "inline"}))
      ->capture_default_str();
  cmd->add_option("--witness-dir", o.witness_dir,
                  "Write the distinct witnesses here as .ppw files and give the engine sources that read each when its "
                  "partition is admitted (inside --host-budget) instead of witnesses held in memory");
  cmd->add_option("--witnesses", o.witnesses,
                  "Distinct witnesses, shared (not copied) round-robin by the partitions; 0: one per partition")
      ->capture_default_str();
}

namespace {

engine::SimLatency parse_latency(const std::string& text, bool spin) {
  engine::SimLatency l;
  l.spin = spin;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(pos, end - pos);
    pos = end + 1;
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos) throw std::invalid_argument("--sim-latency: expected NAME=MICROSECONDS, got '" + item + "'");
    const std::string name = item.substr(0, eq), value = item.substr(eq + 1);
    int64_t us = 0;
    try {
      std::size_t used = 0;
      us = std::stoll(value, &used);
      if (used != value.size() || us < 0) throw std::invalid_argument(value);
    } catch (const std::exception&) {
      throw std::invalid_argument("--sim-latency: '" + value + "' is not a non-negative number of microseconds");
    }
    if (name == "stage") l.stage_us = us;
    else if (name == "h") l.h_us = us;
    else if (name == "msm") l.msm_us = us;
    else if (name == "finish") l.finish_us = us;
    else if (name == "prepare") l.prepare_us = us;
    else throw std::invalid_argument("--sim-latency: unknown stage '" + name + "' (stage, h, msm, finish, prepare)");
  }
  return l;
}

// The process's peak resident set (VmHWM) since it started or since the last reset_peak_rss(), in
// MiB; 0 where /proc is not readable.
double peak_rss_mib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::strtod(line.c_str() + 6, nullptr) / 1024.0;  // in kB
  return 0;
}

// Restarts the peak at the current resident set (Linux: "5" to /proc/self/clear_refs), so that a
// run's peak excludes the set-up before it (the synthetic circuit, key and witnesses are made in
// this process, which a prover fed from files never does). False where that is not possible.
bool reset_peak_rss() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  return bool(clear);
}

}  // namespace

namespace {

// Runs gnuplot on a timeline script the engine wrote (the data and the script stay, so a
// machine without gnuplot can hand them to one that has it).
void draw_timeline(const std::filesystem::path& script) {
  if (std::system("gnuplot --version >/dev/null 2>&1") != 0)
    throw std::runtime_error("timeline: gnuplot was not found on PATH (Debian package gnuplot-nox); the data and "
                             "script are in " + script.string() + ": run `gnuplot " + script.string() + "` elsewhere");
  const std::string cmd = "gnuplot '" + script.string() + "'";
  if (std::system(cmd.c_str()) != 0) throw std::runtime_error("timeline: gnuplot failed on " + script.string());
}

// "out/t.json" + "_two_gw2_card" -> "out/t_two_gw2_card.json".
std::string with_suffix(const std::string& path, const std::string& suffix) {
  const std::size_t slash = path.find_last_of('/'), dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return path + suffix;
  return path.substr(0, dot) + suffix + path.substr(dot);
}

// The partitions' witnesses: held in memory (shared round-robin by the partitions) or, with
// --witness-dir, files each partition's source reads once the partition is admitted.
struct BenchWitnesses {
  std::vector<std::shared_ptr<const Witness>> held;  // one per partition (shared), or empty
  std::vector<std::filesystem::path> files;          // one per partition (shared), or empty
  Densities densities;                               // the circuit's (every witness has them)
  uint64_t bytes = 0;                                // one witness's host bytes (witness_bytes)
  std::size_t partitions() const { return held.size() + files.size(); }
  void give(engine::JobSpec& spec) const {
    spec.witnesses = held;
    for (const std::filesystem::path& f : files)
      spec.sources.push_back({bytes, [f] { return std::make_shared<const Witness>(read_witness(f)); }});
  }
};

// One engine run (one gw, interlock and budget) over `proofs` jobs of the shared key and witnesses.
int run_engine_config(const EngineBenchOptions& o, int gw, const std::string& interlock, const std::string& budget,
                      bool check, const std::string& batch_passes,
                      const std::string& suffix, const std::shared_ptr<const ProvingKey>& key,
                      const BenchWitnesses& witnesses,
                      const std::vector<std::vector<Fr>>& publics) {
  using namespace pp::engine;
  const bool cuda = o.backend == "cuda";
  fmt::print("--- gw {}, interlock {}, budget {}, check {}, batch passes {}\n", gw, interlock, budget, check ? "on" : "off",
             batch_passes);
  const double setup_peak = peak_rss_mib();
  const bool peak_reset = reset_peak_rss();
  std::vector<std::unique_ptr<SimBackend>> sims;
  std::vector<Backend*> backends;
  // One budget for the engine's partitions and the GPU provers' holdings.
  const auto host_budget = std::make_shared<HostBudget>(o.host_mem.empty() ? 0 : parse_byte_size(o.host_mem));
#if PROOFPIPE_HAS_CUDA
  std::vector<std::unique_ptr<gpu::CudaBackend>> gpus;
  if (cuda) {
    for (int d = 0; d < o.devices; ++d) {
      gpu::CudaBackendConfig c;
      c.device = d;
      c.gw = gw;
      c.budget = parse_budget(budget);
      c.debug_corrupt_every = o.corrupt_every;
      c.pass_thread = batch_passes == "thread";
      c.host_budget = host_budget;
      gpus.push_back(std::make_unique<gpu::CudaBackend>(c));
      std::string why;
      if (!gpus.back()->preload(key, witnesses.densities, &why)) throw std::runtime_error(why);
      backends.push_back(gpus.back().get());
    }
    const gpu::ResidentKey k = gpus[0]->resident().at(0);
    fmt::print("devices: {} x GPU ({} SRS{}, arena {}), gw {}, interlock {}\n", o.devices, to_string(k.srs),
               k.split_batch > 1 ? fmt::format(", one pass over it per {} partitions", k.split_batch) : std::string(),
               format_bytes(k.arena_bytes), gw, interlock);
  }
#endif
  PlanRequest req;
  req.shape = porep_like_shape(o.lg);
  req.device_memory = parse_byte_size("141GB");
  req.budget = parse_budget(budget);
  req.gw = gw;
  const MemoryPlan plan = plan_memory(req);
  for (int d = 0; !cuda && d < o.devices; ++d) {
    SimConfig c = SimConfig::from_plan(plan);
    c.name = fmt::format("sim{}", d);
    c.latency = parse_latency(o.sim_latency, o.spin);
    if (o.corrupt_every) c.faults.corrupt = 1.0 / double(o.corrupt_every);
    sims.push_back(std::make_unique<SimBackend>(c));
    backends.push_back(sims.back().get());
  }
  if (!cuda)
    fmt::print("devices: {} x sim ({} stage slot(s), {} msm slot(s), arena {}), gw {}, interlock {}\n", o.devices,
               plan.stage_slots, plan.msm_slots, format_bytes(plan.arena_bytes), gw, interlock);

  EngineConfig ec;
  ec.gw = gw;
  ec.interlock = interlock == "single" ? Interlock::single : Interlock::two;
  ec.shared_host_budget = host_budget;
  ec.check_proofs = check;
  Engine engine(backends, ec);
  std::vector<JobHandle> jobs;
  const auto t0 = std::chrono::steady_clock::now();
  for (int j = 0; j < o.proofs; ++j) {
    JobSpec spec;
    spec.key = key;
    witnesses.give(spec);
    spec.seed = o.seed + uint64_t(j);
    jobs.push_back(engine.submit(std::move(spec)));
  }
  int bad = 0;
  std::size_t wrong = 0;  // proofs returned that do not verify
  const PreparedVerifyingKey pvk = prepare(key->vk);
  std::vector<JobResult> results;
  for (auto& j : jobs) results.push_back(j.wait());
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  engine.shutdown(Shutdown::drain);
  for (const auto& r : results) {
    if (r.status != JobStatus::ok) {
      fmt::print(stderr, "job {}: {}: {}\n", r.id, to_string(r.status), r.error);
      ++bad;
      continue;
    }
    if (!batch_verify(key->vk, publics, r.proofs, o.seed)) {
      for (std::size_t p = 0; p < r.proofs.size(); ++p) wrong += verify(pvk, publics[p], r.proofs[p]) ? 0 : 1;
      fmt::print(stderr, "job {}: the proofs did NOT verify\n", r.id);
      ++bad;
    }
  }
  uint64_t corrupted = 0;
  for (const auto& sim : sims) corrupted += sim->results_corrupted();
#if PROOFPIPE_HAS_CUDA
  for (const auto& g : gpus) corrupted += g->results_corrupted();
#endif
  const EngineStats st = engine.stats();
  // Peak RSS of this run (the GPUs' key loads, the engine, the proofs), from the reset at its start
  // when the kernel allows one; the set-up's peak (circuit, key, witnesses) before it.
  const double peak = peak_rss_mib();
  // PCIe traffic for the key: its uploads (or pinnings, streamed) and the SRS points streamed per
  // proof (0 when resident), summed over the GPUs.
  uint64_t key_loads = 0, srs_bytes = 0;
  int split_batch = 1;  // partitions per pass over a streamed SRS (the first GPU's plan)
#if PROOFPIPE_HAS_CUDA
  for (const auto& g : gpus) {
    key_loads += g->key_loads();
    srs_bytes += g->totals().srs_bytes;
  }
  if (!gpus.empty() && !gpus[0]->resident().empty()) split_batch = gpus[0]->resident()[0].split_batch;
#endif
  const double srs_gib_per_proof = double(srs_bytes) / double(1ull << 30) / o.proofs;
  fmt::print("{:.4f} s/proof ({} proofs in {:.3f} s), GPU busy {:.1f} %, peak host RSS {:.1f} MiB {} (set-up before "
             "it: {:.1f} MiB)\n", wall / o.proofs, o.proofs, wall, 100 * st.gpu_busy(), peak,
             peak_reset ? "in this run" : "since the process started", setup_peak);
  // The same in the anchors' key=value shape (docs/PERF.md divides these lines).
  fmt::print("proofpipe op=engine lg={} partitions={} budget={} backend={} devices={} gw={} interlock={} proofs={} "
             "s_per_proof={:.4f} gpu_busy={:.4f} peak_rss_gib={:.2f} peak_rss_scope={} setup_peak_rss_gib={:.2f} "
             "key={} host_budget={} host_held_gib={:.2f} host_charged_peak_gib={:.2f} srs_gib_per_proof={:.3f} "
             "key_loads={} split_batch={} batch_passes={} witnesses={}\n",
             o.lg, witnesses.partitions(), budget, o.backend, o.devices, gw, interlock, o.proofs, wall / o.proofs,
             st.gpu_busy(), peak / 1024.0, peak_reset ? "run" : "process", setup_peak / 1024.0,
             o.key_cache.empty() ? "memory" : "mapped", o.host_mem.empty() ? "unlimited" : o.host_mem,
             double(st.host_held_bytes) / double(1ull << 30), double(st.host_peak_bytes) / double(1ull << 30),
             srs_gib_per_proof, key_loads, split_batch, split_batch > 1 ? batch_passes : "none",
             witnesses.files.empty() ? "memory" : "files");
  fmt::print("proofpipe op=engine-check lg={} partitions={} proofs={} check={} s_per_proof={:.4f} proofs_checked={} "
             "proofs_rejected={} check_ms_per_partition={:.3f}\n",
             o.lg, witnesses.partitions(), o.proofs, check ? "on" : "off", wall / o.proofs, st.proofs_checked,
             st.proofs_rejected, st.proofs_checked ? st.check_ms / double(st.proofs_checked) : 0.0);
  if (o.corrupt_every)
    fmt::print("proofpipe op=fault-injection backend={} partitions={} corrupted={} retried={} returned_wrong={}\n",
               o.backend, std::size_t(o.proofs) * witnesses.partitions(), corrupted, st.proofs_rejected, wrong);
  for (const auto& b : st.backends) {
    fmt::print("  {}: {} partitions, busy {:.1f} %, forbidden device calls {}\n", b.name, b.partitions, 100 * b.gpu_busy,
               b.forbidden_calls);
    for (const auto& [name, t] : b.stages)
      fmt::print("    {:<13} {:>7} x  mean {:9.3f} ms  max {:9.3f} ms\n", name, t.count,
                 t.count ? t.total_ms / double(t.count) : 0.0, t.max_ms);
  }
#if PROOFPIPE_HAS_CUDA
  for (const auto& g : gpus) {
    const DeviceMemory m = g->memory();
    fmt::print("  {}: key loads {} (the SRS uploaded once per GPU), evictions {}; device memory {} in use (peak {}) of "
               "a {} budget on a {} card\n", g->name(), g->key_loads(), g->evictions(), format_bytes(m.used),
               format_bytes(m.peak), format_bytes(m.budget), format_bytes(m.total));
  }
#endif
  if (!o.trace.empty()) {
    const std::string path = with_suffix(o.trace, suffix);
    engine.write_chrome_trace(path);
    fmt::print("trace: {}\n", path);
  }
  if (!o.timeline.empty()) {
    const std::string path = with_suffix(o.timeline, suffix);
    try {
      draw_timeline(engine.write_timeline_script(path));
      fmt::print("timeline: {}\n", path);
    } catch (const std::runtime_error& e) {
      // The proofs are fine; only the drawing is missing (e.g. no gnuplot on a GPU host).
      fmt::print(stderr, "warning: {}\n", e.what());
    }
  }
  if (bad) {
    fmt::print(stderr, "engine bench: {} job(s) failed or did not verify\n", bad);
    return 1;
  }
  return 0;
}

}  // namespace

int run_engine_bench(const EngineBenchOptions& o) {
  using namespace pp::engine;
  if (o.zip && o.batch_passes.size() != 1 && o.batch_passes.size() != o.vram_budget.size())
    throw std::invalid_argument(fmt::format("engine bench --zip: {} --batch-passes values for {} --vram-budget values "
                                            "(one for all, or one each)",
                                            o.batch_passes.size(), o.vram_budget.size()));
  if (o.zip && o.gw.size() != o.vram_budget.size())
    throw std::invalid_argument(fmt::format("engine bench --zip: {} --vram-budget values and {} --gw values (pairs "
                                            "need as many of each)",
                                            o.vram_budget.size(), o.gw.size()));
  SyntheticOptions so;
  so.lg_constraints = o.lg;
  so.seed = o.seed;
  fmt::print("engine bench: synthetic PoRep-shaped 2^{}, {} partition(s) per proof, {} proof(s)\n", o.lg, o.partitions,
             o.proofs);
  const bool cuda = o.backend == "cuda";
#if !PROOFPIPE_HAS_CUDA
  if (cuda) throw std::runtime_error("engine bench --backend cuda: this proofpipe was built without CUDA");
#endif
  std::shared_ptr<const ProvingKey> key;
  BenchWitnesses witnesses;
  std::vector<std::vector<Fr>> publics;
  {
    const R1cs r1cs = make_porep_like_r1cs(so);
    // --witnesses K: K distinct witnesses cycled over the partitions, shared, not copied (a
    // 2^27 witness is 16 GiB); 0: one per partition.
    const std::size_t distinct = o.witnesses == 0 ? o.partitions : std::min(o.witnesses, o.partitions);
    // --witness-dir: each distinct witness written to a file once, then dropped from memory.
    if (!o.witness_dir.empty()) std::filesystem::create_directories(o.witness_dir);
    for (std::size_t p = 0; p < o.partitions; ++p) {
      if (p < distinct) {
        const std::vector<Fr> z = make_witness(r1cs, so, o.seed + 1000 + p);
        auto w = std::make_shared<const Witness>(witness_from_assignment(r1cs, z));
        witnesses.densities = w->densities;
        witnesses.bytes = witness_bytes(*w);
        if (o.witness_dir.empty()) {
          witnesses.held.push_back(std::move(w));
        } else {
          const std::filesystem::path f = std::filesystem::path(o.witness_dir) / fmt::format("witness{}.ppw", p);
          write_witness(f, *w);
          witnesses.files.push_back(f);
        }
        publics.emplace_back(z.begin() + 1, z.begin() + std::ptrdiff_t(r1cs.num_inputs));
      } else {
        if (o.witness_dir.empty()) witnesses.held.push_back(witnesses.held[p % distinct]);
        else witnesses.files.push_back(witnesses.files[p % distinct]);
        std::vector<Fr> inputs = publics[p % distinct];
        publics.push_back(std::move(inputs));
      }
    }
#if PROOFPIPE_HAS_CUDA
    if (cuda) key = std::make_shared<const ProvingKey>(gpu::key_points(key_scalars(r1cs, o.seed), 0));
#endif
    if (!key) key = std::make_shared<const ProvingKey>(setup(r1cs, o.seed));
  }
  if (!o.key_cache.empty()) {
    const auto seconds_since = [](std::chrono::steady_clock::time_point t) {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    };
    auto t = std::chrono::steady_clock::now();
    write_key_cache(o.key_cache, *key);
    const double write_s = seconds_since(t);
    key.reset();  // the generated copy goes; the mapping's pages come and go with use
    t = std::chrono::steady_clock::now();
    key = std::make_shared<const ProvingKey>(map_key_cache(o.key_cache));
    fmt::print("key: written to the key cache {} in {:.1f} s, mapped and checked in {:.1f} s\n", o.key_cache, write_s,
               seconds_since(t));
  }

  int failed = 0;
  const bool several =
      o.gw.size() * o.interlock.size() * o.vram_budget.size() * o.check.size() * o.batch_passes.size() > 1;
  const bool zip_passes = o.zip && o.batch_passes.size() == o.vram_budget.size() && o.batch_passes.size() > 1;
  for (const std::string& check : o.check)
    for (std::size_t b = 0; b < o.vram_budget.size(); ++b)
      for (const std::string& interlock : o.interlock)
        for (std::size_t g = 0; g < o.gw.size(); ++g)
          for (std::size_t m = 0; m < o.batch_passes.size(); ++m) {
            if (o.zip && g != b) continue;
            if (zip_passes && m != b) continue;
            const std::string& budget = o.vram_budget[b];
            const int gw = o.gw[g];
            const std::string& passes = o.batch_passes[m];
            const std::string suffix =
                several ? fmt::format("_{}_gw{}_{}_check{}_{}", interlock, gw, budget, check, passes) : std::string();
            failed += run_engine_config(o, gw, interlock, budget, check == "on", passes, suffix, key, witnesses, publics);
          }
  if (failed) return 1;
  fmt::print("all proofs verified\n");
  return 0;
}

}  // namespace pp::cli
