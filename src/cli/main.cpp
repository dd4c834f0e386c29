// SPDX-License-Identifier: Apache-2.0 OR MIT
// proofpipe command line: parses arguments (CLI11) and dispatches to the subcommands.
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <tbb/global_control.h>

#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"

namespace {

void add_synthetic_options(CLI::App* cmd, pp::cli::SyntheticCliOptions& o, bool partitions) {
  cmd->add_option("--synthetic", o.kind, "Synthetic circuit family (porep)")->capture_default_str();
  cmd->add_option("--lg", o.lg, "log2 of the domain: constraints + inputs = 2^lg")
      ->check(CLI::Range(4, 28))
      ->capture_default_str();
  if (partitions)
    cmd->add_option("--partitions", o.partitions, "Partitions (witnesses) sharing the key")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
  cmd->add_option("--inputs", o.public_inputs, "Public inputs per partition (without the 1)")->capture_default_str();
  cmd->add_option("--zero-fraction", o.zero_fraction, "Share of aux values equal to 0")->capture_default_str();
  cmd->add_option("--one-fraction", o.one_fraction, "Share of aux values equal to 1")->capture_default_str();
  cmd->add_option("--seed", o.seed, "Seed of the circuit, key and witnesses")->capture_default_str();
}

}  // namespace

namespace pp::cli {

void add_engine_options(CLI::App* cmd, EngineOptions& o) {
  cmd->add_flag("--cpu", o.cpu_only, "Prove on the CPU even when a GPU is visible (CUDA builds use the GPU)");
  cmd->add_option("--devices", o.devices, "CUDA ordinals of the GPUs to prove on, e.g. 0,2 (default: every visible GPU)")
      ->delimiter(',')
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--gw", o.gw, "Engine workers (partitions in flight) per GPU")->check(CLI::Range(1, 16))->capture_default_str();
  cmd->add_option("--vram-budget", o.vram_budget, "Device memory each GPU may use, e.g. 16GiB, or card")
      ->capture_default_str();
  cmd->add_option("--host-budget", o.host_budget, "Host memory for partitions in flight, e.g. 64GiB (default: unlimited)");
}

}  // namespace pp::cli

int main(int argc, char** argv) {
  CLI::App app{"proofpipe: Groth16 proving engine for BLS12-381"};
  app.set_version_flag("--version", "proofpipe " PROOFPIPE_VERSION);  // the project version (CMakeLists.txt)
  app.require_subcommand(1);
  int threads = 0;
  app.add_option("--threads", threads, "Worker threads (0: all cores)")->check(CLI::NonNegativeNumber);

  pp::cli::SelfcheckOptions selfcheck;
  auto* sc = app.add_subcommand("selfcheck", "Check field, curve, encoding and pairing arithmetic end to end");
  sc->add_option("--seed", selfcheck.seed, "Seed of the pseudo-random inputs")->capture_default_str();
  sc->add_option("--iterations", selfcheck.iterations, "Random cases per check")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();

  pp::cli::SetupOptions setup;
  auto* st = app.add_subcommand("setup", "Make a test key and witnesses for a synthetic circuit (not a ceremony)");
  add_synthetic_options(st, setup.circuit, true);
  st->add_option("--out", setup.out, "Output directory (params, witness-<i>.ppw, public-<i>.json)")->required();
  st->add_flag("--gpu", setup.gpu, "Compute the key's points on GPU 0 (CUDA builds; the same key)");
  st->add_option("--distinct-witnesses", setup.distinct_witnesses,
                 "Make K witnesses and copy them to the other partitions' files (0: all distinct)");

  // prove/verify take either snarkjs's positional files or proofpipe's --params form.
  pp::cli::ProveOptions prove;
  std::vector<std::filesystem::path> prove_files;
  bool prove_no_check = false;
  int prove_repeat = 1;
  auto* pr = app.add_subcommand(
      "prove", "Prove: `prove circuit.zkey witness.wtns proof.json public.json` (snarkjs) or --params/--witness/--out");
  pr->add_option("files", prove_files, "circuit.zkey witness.wtns proof.json public.json")->expected(0, 4);
  pr->add_option("--params", prove.params, "Proving key (bellperson .params)")->check(CLI::ExistingFile);
  pr->add_option("--witness", prove.witnesses, "Witness file (.ppw), one per partition, in order")
      ->check(CLI::ExistingFile);
  pr->add_option("--out", prove.out, "Proofs, 192 bytes each, in witness order");
  pr->add_option("--json", prove.json_out, "Also write the proofs as a JSON array (snarkjs proof.json shape)");
  pr->add_option("--seed", prove.seed, "Seed for the randomisers r, s (default: random)");
  pp::cli::add_engine_options(pr, prove.engine);
  pr->add_flag("--subgroup-check", prove.subgroup_check, "Check every key point's subgroup when loading");
  pr->add_flag("--no-check", prove_no_check, "snarkjs form: do not verify the proof before writing it");
  pr->add_option("--repeat", prove_repeat,
                 "snarkjs form, bn128 keys: prove N times with the key loaded, each timed (a benchmark; every proof is "
                 "checked, the last one written)")
      ->check(CLI::Range(1, 1000));

  pp::cli::VerifyOptions verify;
  std::vector<std::filesystem::path> verify_files;
  auto* vf = app.add_subcommand("verify",
                                "Verify: `verify verification_key.json public.json proof.json` (snarkjs) or "
                                "--params/--proofs/--public; exit code 0 if and only if every proof is valid");
  vf->add_option("files", verify_files, "verification_key.json public.json proof.json")->expected(0, 3);
  vf->add_option("--params", verify.params, "Proving key (bellperson .params; only its VK is read)")
      ->check(CLI::ExistingFile);
  vf->add_option("--proofs", verify.proofs, "Proofs file (192 bytes per proof)")->check(CLI::ExistingFile);
  vf->add_option("--public", verify.publics, "Public inputs JSON, one per proof, in order")->check(CLI::ExistingFile);

  pp::cli::ZkeyOptions zkey;
  auto* zk = app.add_subcommand("zkey", "snarkjs .zkey tools: export the VK, convert to/from .params, test setup");
  zk->require_subcommand(1);
  auto* zk_vk = zk->add_subcommand("export-vk", "circuit.zkey verification_key.json (snarkjs's JSON)");
  zk_vk->add_option("zkey", zkey.in)->required()->check(CLI::ExistingFile);
  zk_vk->add_option("vk_json", zkey.out)->required();
  auto* zk_ep = zk->add_subcommand("export-params", "circuit.zkey out.params: bellperson layout, H in bellman's basis");
  zk_ep->add_option("zkey", zkey.in)->required()->check(CLI::ExistingFile);
  zk_ep->add_option("params", zkey.out)->required();
  auto* zk_ew = zk->add_subcommand("export-ppw", "circuit.zkey witness.wtns out.ppw: a witness for export-params' key");
  zk_ew->add_option("zkey", zkey.in)->required()->check(CLI::ExistingFile);
  zk_ew->add_option("wtns", zkey.wtns)->required()->check(CLI::ExistingFile);
  zk_ew->add_option("ppw", zkey.out)->required();
  zk_ew->add_option("--public", zkey.public_out, "Public inputs JSON (default: OUT.public.json)");
  auto* zk_ip = zk->add_subcommand("import-params", "circuit.r1cs in.params out.zkey: a .zkey from a bellperson key");
  zk_ip->add_option("r1cs", zkey.r1cs)->required()->check(CLI::ExistingFile);
  zk_ip->add_option("params", zkey.in)->required()->check(CLI::ExistingFile);
  zk_ip->add_option("zkey", zkey.out)->required();
  zk_ip->add_option("--rows", zkey.rows,
                    "Row order of the .params: bellman (made by bellman/proofpipe setup for this circuit) or "
                    "snarkjs (made by zkey export-params)")
      ->capture_default_str();
  auto* zk_st = zk->add_subcommand("setup", "circuit.r1cs out.zkey: a TEST key (random toxic waste, not a ceremony)");
  zk_st->add_option("r1cs", zkey.r1cs)->required()->check(CLI::ExistingFile);
  zk_st->add_option("zkey", zkey.out)->required();
  zk_st->add_option("--seed", zkey.seed, "Seed of the toxic waste (default: random)");
  zk_st->add_option("--via-params", zkey.via_params,
                    "Make the key in bellman's convention, write it here as .params, and convert it to the .zkey");

  std::filesystem::path key_in, key_out;
  bool key_subgroup = false;
  auto* key = app.add_subcommand("key", "Proving-key tools");
  key->require_subcommand(1);
  auto* key_cache = key->add_subcommand(
      "cache", "in.params out.ppk: write the key as a key cache, mapped instead of decoded wherever a .params is taken "
               "(a GPU holding the key resident then keeps no host copy)");
  key_cache->add_option("params", key_in)->required()->check(CLI::ExistingFile);
  key_cache->add_option("cache", key_out)->required();
  key_cache->add_flag("--subgroup-check", key_subgroup, "Check every key point's subgroup while reading the .params");

  std::filesystem::path info_file;
  pp::cli::PlanCliOptions plan;
  auto* in = app.add_subcommand("info", "Describe a .zkey, .wtns, .r1cs, .params or .ppw file, or the GPU memory plan");
  in->add_option("file", info_file, "File to describe (with --plan: the .params key to plan for)")
      ->check(CLI::ExistingFile);
  pp::cli::add_plan_options(in, plan);

  auto* bench = app.add_subcommand("bench", "Benchmarks");
  bench->require_subcommand(1);
  pp::cli::BenchProveOptions bench_prove;
  auto* bp = bench->add_subcommand("prove", "Time the CPU (or --gpu) prover on a synthetic circuit (proofs are verified)");
  add_synthetic_options(bp, bench_prove.circuit, true);
  bp->add_option("--repeat", bench_prove.repeat, "Timed runs")->check(CLI::Range(1, 100))->capture_default_str();
  bp->add_flag("--gpu", bench_prove.gpu, "Prove on the GPU (the key's points are made on the GPU too)");
  bp->add_option("--device", bench_prove.device, "CUDA device ordinal (--gpu)")->check(CLI::NonNegativeNumber);
  bp->add_option("--vram-budget", bench_prove.vram_budgets,
                 "Device memory the prover may use, e.g. 16GiB, or 'card' (--gpu; several: one run each, same key)");
  bp->add_option("--srs", bench_prove.srs, "SRS placement (--gpu): auto, resident or streamed")
      ->check(CLI::IsMember({"auto", "resident", "streamed"}))
      ->capture_default_str();
  bp->add_flag("--check-cpu", bench_prove.check_cpu, "Also prove on the CPU and require identical proofs (--gpu)");
  bp->add_option("--write-params", bench_prove.write_params, "Write the synthetic proving key to this .params file");

  pp::cli::BenchCallsOptions bench_calls;
  auto* bc = bench->add_subcommand("calls", "Time calls in flight through the C API (--compare-gpus: one GPU, then all)");
  bc->add_option("--params", bench_calls.params, "Proving key (.params or key cache)")->required()->check(CLI::ExistingFile);
  bc->add_option("--witness", bench_calls.witnesses, "Witness file (.ppw), one per partition of each call")
      ->required()
      ->check(CLI::ExistingFile);
  bc->add_option("--calls", bench_calls.calls, "Calls in flight at once")->check(CLI::Range(1, 64))->capture_default_str();
  bc->add_option("--rounds", bench_calls.rounds, "Timed rounds of --calls calls, after one warm-up round")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  bc->add_option("--seed", bench_calls.seed, "Seed of every call's r, s (the calls' proofs must agree)")->capture_default_str();
  bc->add_flag("--compare-gpus", bench_calls.compare_gpus,
               "Run on the first selected GPU alone, then on all of them, and print the speedup");
  pp::cli::add_engine_options(bc, bench_calls.engine);

  std::vector<std::filesystem::path> bench_read_files;
  int bench_read_repeat = 3;
  auto* br = bench->add_subcommand("read", "Time the parallel .ppw reader (what prove uses) on witness files, in GB/s");
  br->add_option("files", bench_read_files, "Witness files (.ppw)")->required()->check(CLI::ExistingFile);
  br->add_option("--repeat", bench_read_repeat, "Passes over the files (the first reads cold if the cache was dropped)")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();

  pp::cli::BenchFieldOptions bench_field;
  auto* bf = bench->add_subcommand("field", "Time Fp/Fr/Fp2 multiplication and squaring (CPU, dependent chains, ns per op)");
  bf->add_option("--op", bench_field.op, "Operation")
      ->check(CLI::IsMember({"all", "fp-mul", "fp-sqr", "fr-mul", "fr-sqr", "fp2-mul", "fp2-sqr"}))
      ->capture_default_str();
  bf->add_option("--form", bench_field.form, "inplace (a *= b), value (a = a * b) or both")
      ->check(CLI::IsMember({"inplace", "value", "both"}))
      ->capture_default_str();
  bf->add_option("--iters", bench_field.iters, "Chain length per timed run")->check(CLI::Range(1L, 1000000000L))->capture_default_str();
  bf->add_option("--runs", bench_field.runs, "Timed runs (median reported)")->check(CLI::Range(1, 1000))->capture_default_str();
  bf->add_option("--warmup", bench_field.warmup, "Untimed runs first")->check(CLI::Range(0, 100))->capture_default_str();
  bf->add_flag("--portable", bench_field.portable, "Use the portable C++ arithmetic instead of the mulx/adx kernels");

  pp::cli::BenchGpuOptions bench_gpu;
  std::vector<CLI::App*> gpu_benches;
  for (const char* op : {"msm", "ntt", "batch-add"}) {
    auto* b = bench->add_subcommand(op, std::string("Time the GPU ") + op + " kernel on device-resident data" +
                                            (std::string(op) == "msm" ? " (--cpu: the CPU msm)" : ""));
    b->add_option("--lg", bench_gpu.kernel.lg, "log2 of the size")->check(CLI::Range(0, 30))->capture_default_str();
    if (std::string(op) != "ntt")
      b->add_option("--curve", bench_gpu.kernel.curve, "g1, g2 or bn254-g1 (msm, GPU only)")
          ->check(CLI::IsMember({"g1", "g2", "bn254-g1"}))
          ->capture_default_str();
    else
      b->add_option("--curve", bench_gpu.kernel.curve, "g1 (BLS12-381's Fr) or bn254 (BN254's Fr)")
          ->check(CLI::IsMember({"g1", "bn254"}))
          ->capture_default_str();
    if (std::string(op) == "ntt")
      b->add_option("--twist-table", bench_gpu.twist,
                    "The passes' twist roots: full (one entry per root: 2^lg roots, 4 GiB at 2^27; what the prover builds when "
                    "the card has room) or split (the small tables, a few MiB; the top pass multiplies two entries)")
          ->check(CLI::IsMember({"split", "full"}))
          ->capture_default_str();
    if (std::string(op) == "msm") {
      b->add_option("--window", bench_gpu.kernel.window, "Window bits (0: default)")->check(CLI::Range(0, 24));
      b->add_option("--precompute", bench_gpu.kernel.copies,
                    "Copies of the bases in a fixed-base table, copy k = 2^(k*c)*P (1: none; 0: as many as the "
                    "planner chooses for the card's free memory, and its window unless --window is given)")
          ->check(CLI::Range(0, 64))
          ->capture_default_str();
      b->add_option("--batch", bench_gpu.kernel.batch,
                    "Windows (sets of the table) sorted and summed in one pass (0: as many as the card's free memory holds)")
          ->check(CLI::Range(0, 128))
          ->capture_default_str();
      b->add_option("--scalars", bench_gpu.scalars,
                    "The GPU MSM's scalars as canonical integers (as the anchors take them) or in Montgomery form "
                    "(each pass takes them out of it)")
          ->check(CLI::IsMember({"canonical", "montgomery"}))
          ->capture_default_str();
      b->add_flag("--cpu", bench_gpu.cpu, "Time the CPU MSM (pp::msm) instead of the GPU kernel");
      b->add_option("--threads", bench_gpu.threads, "Worker threads of the CPU MSM (--cpu; 0: --threads or all cores)")
          ->check(CLI::NonNegativeNumber);
    }
    b->add_option("--runs", bench_gpu.kernel.runs, "Timed runs (median reported)")->check(CLI::Range(1, 1000))->capture_default_str();
    b->add_option("--warmup", bench_gpu.kernel.warmup, "Untimed runs first")->check(CLI::Range(0, 100))->capture_default_str();
    b->add_option("--device", bench_gpu.kernel.device, "CUDA device ordinal")->check(CLI::NonNegativeNumber);
    gpu_benches.push_back(b);
  }

  pp::cli::EngineBenchOptions engine_bench;
  auto* eng = app.add_subcommand("engine", "The pipelined proving engine");
  eng->require_subcommand(1);
  auto* eb = eng->add_subcommand("bench", "Run proofs through the engine (simulated device): s/proof, GPU busy %, trace");
  pp::cli::add_engine_bench_options(eb, engine_bench);

#if PROOFPIPE_HAS_SERVICE
  const std::shared_ptr<pp::cli::ServiceCommands> service = pp::cli::add_service_commands(app);
#endif

  CLI11_PARSE(app, argc, argv);
  std::unique_ptr<tbb::global_control> limit;
  if (threads > 0)
    limit = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, std::size_t(threads));
  try {
    if (sc->parsed()) return pp::cli::run_selfcheck(selfcheck);
    if (st->parsed()) return pp::cli::run_setup(setup);
    if (pr->parsed()) {
      if (!prove_files.empty()) {
        if (prove_files.size() != 4 || !prove.params.empty() || !prove.witnesses.empty() || !prove.out.empty())
          throw std::invalid_argument(
              "prove: give either circuit.zkey witness.wtns proof.json public.json or --params/--witness/--out");
        return pp::cli::run_prove_snarkjs({prove_files[0], prove_files[1], prove_files[2], prove_files[3], prove.seed,
                                           prove.subgroup_check, prove_no_check, prove.engine, prove_repeat});
      }
      if (prove.params.empty() || prove.witnesses.empty() || prove.out.empty())
        throw std::invalid_argument("prove: --params, --witness and --out are required (or the snarkjs form)");
      return pp::cli::run_prove(prove);
    }
    if (vf->parsed()) {
      if (!verify_files.empty()) {
        if (verify_files.size() != 3 || !verify.params.empty() || !verify.proofs.empty() || !verify.publics.empty())
          throw std::invalid_argument(
              "verify: give either verification_key.json public.json proof.json or --params/--proofs/--public");
        return pp::cli::run_verify_snarkjs({verify_files[0], verify_files[1], verify_files[2]});
      }
      if (verify.params.empty() || verify.proofs.empty() || verify.publics.empty())
        throw std::invalid_argument("verify: --params, --proofs and --public are required (or the snarkjs form)");
      return pp::cli::run_verify(verify);
    }
    if (zk->parsed()) {
      for (auto* sub : zk->get_subcommands()) zkey.action = sub->get_name();
      return pp::cli::run_zkey(zkey);
    }
    if (key_cache->parsed()) return pp::cli::run_key_cache(key_in, key_out, key_subgroup);
    if (in->parsed()) {
      if (plan.enabled) return pp::cli::run_info_plan(plan, info_file);
      if (info_file.empty()) throw std::invalid_argument("info: give a FILE to describe, or --plan");
      return pp::cli::run_info(info_file);
    }
    if (bp->parsed()) return pp::cli::run_bench_prove(bench_prove);
    if (br->parsed()) return pp::cli::run_bench_read(bench_read_files, bench_read_repeat);
    if (bc->parsed()) return pp::cli::run_bench_calls(bench_calls);
    if (bf->parsed()) return pp::cli::run_bench_field(bench_field);
    if (eb->parsed()) return pp::cli::run_engine_bench(engine_bench);
#if PROOFPIPE_HAS_SERVICE
    if (const std::optional<int> rc = pp::cli::run_service_commands(*service, threads)) return *rc;
#endif
    for (CLI::App* b : gpu_benches) {
      if (!b->parsed()) continue;
      bench_gpu.kernel.op = b->get_name();
      if (bench_gpu.cpu) {
        if (bench_gpu.threads == 0) bench_gpu.threads = threads;
        return pp::cli::run_bench_msm_cpu(bench_gpu);
      }
      return pp::cli::run_bench_gpu(bench_gpu);
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "proofpipe: error: {}\n", e.what());
    return 1;
  }
  return 0;
}
