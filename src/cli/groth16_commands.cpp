// SPDX-License-Identifier: Apache-2.0 OR MIT
// `proofpipe setup | prove | verify | info | bench prove`: the Groth16 workflow on files.
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>

#include "commands.hpp"
#include "proofpipe/engine/plan.hpp"
#include "proofpipe/groth16/prover.hpp"
#include "proofpipe/groth16/synthetic.hpp"
#include "proofpipe/io/key_cache.hpp"
#include "proofpipe/io/params.hpp"
#include "proofpipe/io/witness.hpp"
#include "proofpipe/proofpipe.h"
#if PROOFPIPE_HAS_CUDA
#include "proofpipe/engine/engine.hpp"
#include "proofpipe/gpu/cuda_backend.hpp"
#include "proofpipe/gpu/prover.hpp"
#endif

namespace pp::cli {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// One line per stage on stderr, so that long runs show where they are.
class Stage {
 public:
  explicit Stage(std::string name) : name_(std::move(name)), t0_(Clock::now()) {
    fmt::print(stderr, "  {} ...\n", name_);
  }
  ~Stage() { fmt::print(stderr, "  {} done in {:.2f} s\n", name_, seconds_since(t0_)); }

 private:
  std::string name_;
  Clock::time_point t0_;
};

// A progress bar on stderr, redrawn in place on a terminal and printed every 10 % otherwise
// (logs stay readable).
class ProgressBar {
 public:
  explicit ProgressBar(std::string label) : label_(std::move(label)), tty_(isatty(STDERR_FILENO) != 0) {}
  ~ProgressBar() {
    if (tty_ && drawn_) fmt::print(stderr, "\n");
  }
  ProgressFn fn() {
    return [this](std::size_t done, std::size_t total) { update(done, total); };
  }

 private:
  void update(std::size_t done, std::size_t total) {
    const int percent = total ? int(100 * done / total) : 100;
    if (tty_) {
      const int width = 30, filled = width * percent / 100;
      fmt::print(stderr, "\r  {} [{}{}] {:3d}% ({}/{})", label_, std::string(std::size_t(filled), '='),
                 std::string(std::size_t(width - filled), ' '), percent, done, total);
      drawn_ = true;
    } else if (percent / 10 != last_decile_) {
      last_decile_ = percent / 10;
      fmt::print(stderr, "  {} {}% ({}/{})\n", label_, percent, done, total);
    }
  }
  std::string label_;
  bool tty_;
  bool drawn_ = false;
  int last_decile_ = -1;
};

SyntheticOptions synthetic_options(const SyntheticCliOptions& c) {
  if (c.kind != "porep") throw std::invalid_argument("unknown synthetic circuit '" + c.kind + "' (known: porep)");
  SyntheticOptions o;
  o.lg_constraints = c.lg;
  o.num_public_inputs = c.public_inputs;
  o.zero_fraction = c.zero_fraction;
  o.one_fraction = c.one_fraction;
  o.seed = c.seed;
  return o;
}

std::vector<uint8_t> read_file(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error(path.string() + ": cannot open");
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

std::vector<Proof> read_proofs(const std::filesystem::path& path) {
  const std::vector<uint8_t> bytes = read_file(path);
  if (bytes.size() % Proof::kBytes != 0)
    throw std::runtime_error(path.string() + ": size " + std::to_string(bytes.size()) + " is not a multiple of " +
                             std::to_string(Proof::kBytes) + " bytes");
  std::vector<Proof> proofs;
  for (std::size_t i = 0; i < bytes.size() / Proof::kBytes; ++i) {
    try {
      proofs.push_back(Proof::from_bytes(std::span<const uint8_t, Proof::kBytes>(bytes.data() + i * Proof::kBytes, Proof::kBytes)));
    } catch (const std::exception& e) {
      throw std::runtime_error(path.string() + ": proof " + std::to_string(i) + ": " + e.what());
    }
  }
  return proofs;
}

void print_timings(const ProveTimings& t, std::size_t partitions) {
  const double total = t.evaluate + t.ntt + t.msm_h + t.msm_l + t.msm_a + t.msm_b_g1 + t.msm_b_g2 + t.assembly;
  fmt::print("stage        total ms   per partition ms\n");
  auto row = [&](const char* name, double ms) {
    fmt::print("{:<12} {:>9.1f}   {:>9.1f}\n", name, ms, ms / double(partitions));
  };
  row("checks", t.evaluate);
  row("ntt (H)", t.ntt);
  row("msm H", t.msm_h);
  row("msm L", t.msm_l);
  row("msm A", t.msm_a);
  row("msm B_G1", t.msm_b_g1);
  row("msm B_G2", t.msm_b_g2);
  row("assembly", t.assembly);
  row("total", total);
}

}  // namespace

int run_setup(const SetupOptions& options) {
  const SyntheticOptions opts = synthetic_options(options.circuit);
  fmt::print(stderr,
             "proofpipe setup: NOTE this key comes from fresh random toxic waste on this machine; it is for\n"
             "tests and benchmarks only, not a trusted-setup ceremony.\n");
  std::filesystem::create_directories(options.out);
  R1cs r1cs;
  {
    Stage s(fmt::format("synthesising the {} circuit, 2^{} rows", options.circuit.kind, opts.lg_constraints));
    r1cs = make_porep_like_r1cs(opts);
  }
  ProvingKey pk;
  if (options.gpu) {
#if PROOFPIPE_HAS_CUDA
    // The same key as the CPU's setup (key_points(key_scalars(...)) == setup(...)), points on the GPU.
    Stage s("generating the proving key (exponents on the CPU, points on GPU 0)");
    pk = gpu::key_points(key_scalars(r1cs, opts.seed ^ 0x5e70ULL), 0);
#else
    throw std::runtime_error("setup --gpu: this proofpipe was built without CUDA");
#endif
  } else {
    Stage s("generating the proving key");
    ProgressBar bar("key points");
    pk = setup(r1cs, opts.seed ^ 0x5e70ULL, bar.fn());
  }
  {
    Stage s("writing " + (options.out / "params").string());
    write_params(options.out / "params", pk);
  }
  const std::size_t distinct = options.distinct_witnesses == 0 ? options.circuit.partitions
                                                                : std::min(options.distinct_witnesses, options.circuit.partitions);
  for (std::size_t p = 0; p < options.circuit.partitions; ++p) {
    Stage s(fmt::format("witness {} of {}", p, options.circuit.partitions));
    if (p >= distinct) {  // a copy of witness p % distinct, as its own file
      namespace fs = std::filesystem;
      for (const char* name : {"witness-{}.ppw", "public-{}.json"})
        fs::copy_file(options.out / fmt::format(fmt::runtime(name), p % distinct), options.out / fmt::format(fmt::runtime(name), p),
                      fs::copy_options::overwrite_existing);
      continue;
    }
    const std::vector<Fr> z = make_witness(r1cs, opts, opts.seed + 1000 + p);
    write_witness(options.out / fmt::format("witness-{}.ppw", p), witness_from_assignment(r1cs, z));
    write_public_json(options.out / fmt::format("public-{}.json", p),
                      std::span<const Fr>(z.data() + 1, r1cs.num_inputs - 1));
  }
  fmt::print("wrote {}/params, {} witness file(s) and public input file(s)\n", options.out.string(),
             options.circuit.partitions);
  return 0;
}

// A failed C API call as the CLI reports it (the message names the file, partition and offset).
void check(pp_status status, const pp_error& err) {
  if (status != PP_OK) throw std::runtime_error(err.message);
}

KeyHandle load_key(const std::filesystem::path& path, bool subgroup_check) {
  pp_error err;
  pp_key* k = nullptr;
  check(pp_key_load(path.c_str(), subgroup_check ? 1 : 0, &k, &err), err);
  return KeyHandle(k, pp_key_release);
}

EngineHandle create_engine(const pp_engine_config& config) {
  pp_error err;
  pp_engine* e = nullptr;
  check(pp_engine_create(&config, &e, &err), err);
  return EngineHandle(e, pp_engine_free);
}

PpwInputs::PpwInputs(const std::vector<std::filesystem::path>& files) : inputs(files.size(), pp_input{}) {
  for (const auto& f : files) paths.push_back(f.string());
  for (std::size_t k = 0; k < files.size(); ++k) {
    inputs[k].kind = PP_INPUT_PPW;
    inputs[k].ppw.path = paths[k].c_str();
  }
}

// `prove --params` goes through the C API (include/proofpipe/proofpipe.h), as an FFI caller does.
int run_prove(const ProveOptions& options) {
  if (options.witnesses.empty()) throw std::invalid_argument("prove: give at least one --witness");
  pp_error err;
  KeyHandle key(nullptr, pp_key_release);
  {
    Stage s("reading " + options.params.string());
    key = load_key(options.params, options.subgroup_check);
  }
  // The engine on every visible GPU (or --devices; none with --cpu), else on the CPU.
  const EngineHandle engine = create_engine(engine_config(options.engine));
  const std::size_t n = options.witnesses.size();
  PpwInputs ppw(options.witnesses);
  std::vector<pp_input>& inputs = ppw.inputs;
  if (!options.engine.cpu_only) {
    // The SRS upload is the key's, once per process: timed on its own, not as part of proving.
    Stage s("loading the key onto the GPU(s)");
    check(pp_key_preload(engine.get(), key.get(), &inputs[0], &err), err);
  }
  // Without --seed, r and s come from the OS random source (pp_prove's NULL seed).
  const uint64_t seed = options.seed.value_or(0);
  std::unique_ptr<pp_pending, void (*)(pp_pending*)> pending(nullptr, pp_pending_free);
  {
    Stage s(fmt::format("checking {} witness file(s)", n));
    pp_pending* p = nullptr;
    check(pp_prove_start(engine.get(), key.get(), inputs.data(), n, options.seed ? &seed : nullptr, &p, &err), err);
    pending.reset(p);
  }
  std::vector<uint8_t> proof_bytes(n * PP_PROOF_BYTES);
  {
    Stage s(fmt::format("reading and proving {} partition(s)", n));
    ProgressBar bar("partitions");
    const ProgressFn progress = bar.fn();
    for (int done = 0; !done;) {
      std::size_t parts = 0;
      check(pp_prove_poll(pending.get(), &done, &parts, &err), err);
      progress(parts, n);
      if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::size_t size = proof_bytes.size();
    check(pp_prove_finalize(pending.get(), proof_bytes.data(), &size, &err), err);
  }
  pp_engine_stats stats;
  check(pp_engine_stats_get(engine.get(), &stats, &err), err);
  const ProveTimings timings{stats.ms_checks, stats.ms_ntt,      stats.ms_msm_h,     stats.ms_msm_l,
                             stats.ms_msm_a,  stats.ms_msm_b_g1, stats.ms_msm_b_g2, stats.ms_assembly};
  std::vector<Proof> proofs;
  for (std::size_t k = 0; k < n; ++k)
    proofs.push_back(
        Proof::from_bytes(std::span<const uint8_t, Proof::kBytes>(proof_bytes.data() + k * PP_PROOF_BYTES, Proof::kBytes)));
  std::ofstream out(options.out, std::ios::binary | std::ios::trunc);
  for (const Proof& p : proofs) {
    const auto bytes = p.to_bytes();
    out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  }
  out.close();
  if (!out) throw std::runtime_error(options.out.string() + ": write failed");
  if (options.json_out) {
    std::ofstream json(*options.json_out, std::ios::trunc);
    json << "[\n";
    for (std::size_t i = 0; i < proofs.size(); ++i) json << proof_to_json(proofs[i]) << (i + 1 < proofs.size() ? ",\n" : "\n");
    json << "]\n";
    json.close();
    if (!json) throw std::runtime_error(options.json_out->string() + ": write failed");
  }
  print_timings(timings, proofs.size());
  if (stats.gpus > 0)
    fmt::print("proved on {} GPU(s): {:.1f} ms of kernels, {:.1f} ms of uploads, {} key upload(s), {:.2f} GiB of SRS "
               "streamed, {} partition(s) on the CPU\n", stats.gpus, stats.ms_gpu_busy, stats.ms_gpu_upload, stats.key_loads,
               double(stats.srs_bytes_streamed) / double(1ull << 30), stats.partitions_on_cpu);
  for (uint32_t i = 0; i < stats.gpus; ++i) {
    pp_gpu_info g;
    check(pp_engine_gpu_info_get(engine.get(), i, &g, &err), err);
    fmt::print("  GPU {}: {} partition(s), {:.1f} ms of kernels, {} key(s) resident, device memory {} in use (peak {}) of a "
               "{} budget on a {} card{}\n", g.device, g.partitions, g.ms_busy, g.resident_keys,
               engine::format_bytes(g.memory_used), engine::format_bytes(g.memory_peak), engine::format_bytes(g.memory_budget),
               engine::format_bytes(g.memory_total),
               g.healthy ? std::string() : fmt::format("; LOST, {} partition(s) handed to the other GPUs", g.partitions_handed_off));
  }
  fmt::print("wrote {} proof(s) to {}\n", proofs.size(), options.out.string());
  return 0;
}

int run_bench_read(const std::vector<std::filesystem::path>& files, int repeat) {
  uint64_t bytes = 0;
  for (const auto& f : files) bytes += std::filesystem::file_size(f);
  for (int pass = 0; pass < repeat; ++pass) {
    const auto t0 = Clock::now();
    for (const auto& f : files) {
      const Witness w = read_witness(f);
      if (w.a.empty()) throw std::runtime_error(f.string() + ": empty witness");
    }
    const double s = seconds_since(t0);
    fmt::print("proofpipe op=read-ppw pass={} files={} bytes={} seconds={:.3f} gb_per_s={:.3f}\n", pass, files.size(), bytes,
               s, double(bytes) / s / 1e9);
  }
  return 0;
}

int run_verify(const VerifyOptions& options) {
  const VerifyingKey vk = read_params_header(options.params).vk;
  const std::vector<Proof> proofs = read_proofs(options.proofs);
  if (proofs.size() != options.publics.size())
    throw std::invalid_argument(fmt::format("verify: {} has {} proof(s) but {} --public file(s) were given",
                                            options.proofs.string(), proofs.size(), options.publics.size()));
  std::vector<std::vector<Fr>> publics;
  for (const auto& p : options.publics) publics.push_back(read_public_json(p));
  for (std::size_t i = 0; i < publics.size(); ++i)
    if (publics[i].size() + 1 != vk.ic.size())
      throw std::invalid_argument(fmt::format("verify: {} has {} public input(s), the key expects {}",
                                              options.publics[i].string(), publics[i].size(), vk.ic.size() - 1));
  if (batch_verify(vk, publics, proofs, std::random_device{}())) {
    fmt::print("all {} proof(s) valid\n", proofs.size());
    return 0;
  }
  // The batch failed: say which proofs are bad.
  const PreparedVerifyingKey pvk = prepare(vk);
  for (std::size_t i = 0; i < proofs.size(); ++i)
    if (!verify(pvk, publics[i], proofs[i])) fmt::print("proof {} INVALID (public inputs {})\n", i, options.publics[i].string());
  return 1;
}

int run_info(const std::filesystem::path& file) {
  const std::vector<uint8_t> head = [&] {
    std::ifstream f(file, std::ios::binary);
    if (!f) throw std::runtime_error(file.string() + ": cannot open");
    std::vector<uint8_t> b(8, 0);
    f.read(reinterpret_cast<char*>(b.data()), 8);
    b.resize(std::size_t(f.gcount()));
    return b;
  }();
  if (head.size() >= 4 && run_info_iden3(file, std::string(head.begin(), head.begin() + 4))) return 0;
  if (head.size() == 8 && std::string(head.begin(), head.end()) == "PPWITNS1") {
    const Witness w = read_witness(file);
    fmt::print("{}: proofpipe witness (BLS12-381 scalars)\n  rows (constraints + inputs): {}\n  inputs (with the 1): {}\n"
               "  aux variables: {}\n",
               file.string(), w.a.size(), w.input.size(), w.aux.size());
    return 0;
  }
  const ParamsHeader h = read_params_header(file);
  if (h.key_cache)
    fmt::print("{}: Groth16 proving key, proofpipe key cache (points as held in memory, {} H basis), curve BLS12-381\n",
               file.string(), h.convention.h_basis == HBasis::bellman ? "bellman's" : "snarkjs's");
  else
    fmt::print("{}: Groth16 proving key, bellperson .params layout, curve BLS12-381\n", file.string());
  fmt::print("  public inputs (with the 1): {}\n  H points: {} (domain 2^{})\n  L points (aux): {}\n  A points: {}\n"
             "  B_G1 points: {}\n  B_G2 points: {}\n",
             h.vk.ic.size(), h.h, std::bit_width(h.h), h.l, h.a, h.b_g1, h.b_g2);
  return 0;
}

int run_key_cache(const std::filesystem::path& params, const std::filesystem::path& out, bool subgroup_check) {
  const auto t0 = std::chrono::steady_clock::now();
  const ProvingKey pk = read_params(params, ParamsReadOptions{subgroup_check ? SubgroupCheck::yes : SubgroupCheck::no});
  write_key_cache(out, pk);
  fmt::print(stderr, "wrote the key cache {} ({} bytes) from {} in {:.2f} s\n", out.string(),
             std::filesystem::file_size(out), params.string(),
             std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return 0;
}

namespace {

#if PROOFPIPE_HAS_CUDA
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// The engine on one GPU (one budget) over the partitions, `repeat` proofs in turn.
int bench_gpu_budget(const BenchProveOptions& options, const SyntheticOptions& opts,
                     const std::shared_ptr<const ProvingKey>& pk, const std::vector<std::shared_ptr<const Witness>>& witnesses,
                     const std::vector<std::vector<Fr>>& publics, const std::string& budget) {
  gpu::CudaBackendConfig cfg;
  cfg.device = options.device;
  cfg.budget = engine::parse_budget(budget);
  cfg.srs = options.srs == "resident"   ? engine::SrsPlacement::resident
            : options.srs == "streamed" ? engine::SrsPlacement::streamed
                                        : engine::SrsPlacement::automatic;
  gpu::CudaBackend backend(cfg);
  {
    Stage s("GPU start-up for the key (arena, tables, SRS upload or pinning)");
    std::string why;
    if (!backend.preload(pk, witnesses[0]->densities, &why)) throw std::runtime_error(why);
  }
  std::mutex times_mu;
  std::vector<gpu::GpuTimes> all;
  backend.set_on_times([&](uint64_t, std::size_t, const gpu::GpuTimes& t) {
    std::lock_guard lock(times_mu);
    all.push_back(t);
  });
  engine::EngineConfig ec;
  ec.fallback = engine::Fallback::fail_job;
  ec.max_retries = 0;
  engine::Engine eng({&backend}, ec);
  const gpu::ResidentKey k = backend.resident().at(0);
  fmt::print("budget {}: SRS {}, arena {}\n", budget, engine::to_string(k.srs), engine::format_bytes(k.arena_bytes));
  std::vector<double> walls;
  for (int rep = 0; rep < options.repeat; ++rep) {
    engine::JobSpec spec;
    spec.key = pk;
    spec.witnesses = witnesses;
    spec.seed = opts.seed + uint64_t(rep);
    const auto t0 = Clock::now();
    const engine::JobResult r = eng.submit(spec).wait();
    const double wall = seconds_since(t0);
    if (r.status != engine::JobStatus::ok) throw std::runtime_error("bench: the GPU job failed: " + r.error);
    const std::vector<Proof>& proofs = r.proofs;
    walls.push_back(wall / double(proofs.size()));
    fmt::print("run {}: {} partition(s) of 2^{} in {:.3f} s wall ({:.3f} s per partition, host staging included)\n",
               rep, proofs.size(), opts.lg_constraints, wall, wall / double(proofs.size()));
    if (!batch_verify(pk->vk, publics, proofs, opts.seed)) {
      fmt::print(stderr, "bench: the GPU proofs did NOT verify\n");
      return 1;
    }
    if (options.check_cpu) {
      std::vector<Witness> plain;
      for (const auto& w : witnesses) plain.push_back(*w);
      const std::vector<Proof> cpu = prove(*pk, plain, opts.seed + uint64_t(rep));
      for (std::size_t i = 0; i < cpu.size(); ++i)
        if (cpu[i].to_bytes() != proofs[i].to_bytes()) {
          fmt::print(stderr, "bench: GPU and CPU proofs differ at partition {}\n", i);
          return 1;
        }
      fmt::print("run {}: GPU proofs equal the CPU prover's byte for byte\n", rep);
    }
  }
  eng.shutdown(engine::Shutdown::drain);
  auto col = [&](double gpu::GpuTimes::*field) {
    std::vector<double> v;
    for (const gpu::GpuTimes& t : all) v.push_back(t.*field);
    return median(v);
  };
  fmt::print("GPU time per partition, median of {} (ms): upload {:.1f} | ntt+H {:.1f} | msm H {:.1f} | L {:.1f} | "
             "A {:.1f} | B_G1 {:.1f} | B_G2 {:.1f} | compute total {:.1f}; wall per partition {:.3f} s; key loads {}\n",
             all.size(), col(&gpu::GpuTimes::upload), col(&gpu::GpuTimes::ntt), col(&gpu::GpuTimes::msm_h),
             col(&gpu::GpuTimes::msm_l), col(&gpu::GpuTimes::msm_a), col(&gpu::GpuTimes::msm_b_g1),
             col(&gpu::GpuTimes::msm_b_g2), col(&gpu::GpuTimes::compute), median(walls), backend.key_loads());
  std::vector<double> srs_gib;
  for (const gpu::GpuTimes& t : all) srs_gib.push_back(double(t.srs_bytes) / double(1ull << 30));
  if (k.srs == engine::SrsPlacement::streamed) {
    std::vector<double> gb;
    for (const gpu::GpuTimes& t : all) gb.push_back(double(t.packed_bytes) / 1e9);
    fmt::print("host packing of the split MSMs' SRS chunks, median per partition: {:.1f} ms for {:.2f} GB\n",
               col(&gpu::GpuTimes::pack), median(gb));
  }
  // The same in the anchors' key=value shape (docs/PERF.md divides these lines).
  fmt::print("proofpipe op=prove lg={} budget={} srs={} partitions={} gpu_ms_per_partition={:.1f} "
             "wall_s_per_partition={:.3f} upload_ms={:.1f} ntt_ms={:.1f} msm_h_ms={:.1f} msm_l_ms={:.1f} msm_a_ms={:.1f} "
             "msm_b_g1_ms={:.1f} msm_b_g2_ms={:.1f} srs_gib_per_partition={:.3f}\n",
             opts.lg_constraints, budget, engine::to_string(k.srs), witnesses.size(), col(&gpu::GpuTimes::compute),
             median(walls), col(&gpu::GpuTimes::upload), col(&gpu::GpuTimes::ntt), col(&gpu::GpuTimes::msm_h),
             col(&gpu::GpuTimes::msm_l), col(&gpu::GpuTimes::msm_a), col(&gpu::GpuTimes::msm_b_g1),
             col(&gpu::GpuTimes::msm_b_g2), median(srs_gib));
  return 0;
}

// The GPU prover on a synthetic circuit: key exponents on the CPU, points on the GPU, then
// `repeat` runs over the partitions; per-stage GPU times (CUDA events) as medians over all
// partitions of all runs; every run's proofs batch-verified.
int bench_prove_gpu(const BenchProveOptions& options) {
  const SyntheticOptions opts = synthetic_options(options.circuit);
  std::vector<std::shared_ptr<const Witness>> witnesses;
  std::vector<std::vector<Fr>> publics;
  ProvingKey pk;
  {
    KeyScalars ks;
    {
      Stage s(fmt::format("circuit and {} witness(es) at 2^{}", options.circuit.partitions, opts.lg_constraints));
      const R1cs r1cs = make_porep_like_r1cs(opts);
      for (std::size_t p = 0; p < options.circuit.partitions; ++p) {
        const std::vector<Fr> z = make_witness(r1cs, opts, opts.seed + 1000 + p);
        witnesses.push_back(std::make_shared<const Witness>(witness_from_assignment(r1cs, z)));
        publics.emplace_back(z.begin() + 1, z.begin() + std::ptrdiff_t(r1cs.num_inputs));
      }
      Stage k("key exponents (CPU)");
      ks = key_scalars(r1cs, opts.seed);
    }
    Stage s("key points (GPU)");
    pk = gpu::key_points(ks, options.device);
  }
  if (options.write_params) {
    Stage s("writing " + options.write_params->string());
    write_params(*options.write_params, pk);
  }
  std::vector<std::string> budgets = options.vram_budgets;
  if (budgets.empty()) budgets.push_back("card");
  const auto key = std::make_shared<const ProvingKey>(std::move(pk));
  for (const std::string& budget : budgets)
    if (int rc = bench_gpu_budget(options, opts, key, witnesses, publics, budget); rc != 0) return rc;
  fmt::print("all proofs verified\n");
  return 0;
}
#endif

}  // namespace

int run_bench_prove(const BenchProveOptions& options) {
  if (options.gpu) {
#if PROOFPIPE_HAS_CUDA
    return bench_prove_gpu(options);
#else
    throw std::runtime_error("bench prove --gpu: this proofpipe was built without CUDA (PROOFPIPE_CUDA=OFF)");
#endif
  }
  const SyntheticOptions opts = synthetic_options(options.circuit);
  R1cs r1cs;
  ProvingKey pk;
  std::vector<Witness> witnesses;
  std::vector<std::vector<Fr>> publics;
  {
    Stage s(fmt::format("circuit, key and {} witness(es) at 2^{}", options.circuit.partitions, opts.lg_constraints));
    r1cs = make_porep_like_r1cs(opts);
    ProgressBar bar("key points");
    pk = setup(r1cs, opts.seed, bar.fn());
    for (std::size_t p = 0; p < options.circuit.partitions; ++p) {
      const std::vector<Fr> z = make_witness(r1cs, opts, opts.seed + 1000 + p);
      witnesses.push_back(witness_from_assignment(r1cs, z));
      publics.emplace_back(z.begin() + 1, z.begin() + std::ptrdiff_t(r1cs.num_inputs));
    }
  }
  if (options.write_params) {
    Stage s("writing " + options.write_params->string());
    write_params(*options.write_params, pk);
  }
  for (int rep = 0; rep < options.repeat; ++rep) {
    ProveTimings t;
    const auto t0 = Clock::now();
    const std::vector<Proof> proofs = prove(pk, witnesses, opts.seed + uint64_t(rep), &t);
    const double wall = seconds_since(t0);
    fmt::print("run {}: {} partition(s) of 2^{} in {:.3f} s\n", rep, proofs.size(), opts.lg_constraints, wall);
    print_timings(t, proofs.size());
    if (!batch_verify(pk.vk, publics, proofs, opts.seed)) {
      fmt::print(stderr, "bench: the proofs did NOT verify\n");
      return 1;
    }
  }
  fmt::print("all proofs verified\n");
  return 0;
}

}  // namespace pp::cli
