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

int main(int argc, char** argv) {
  CLI::App app{"proofpipe: Groth16 proving engine for BLS12-381"};
  app.set_version_flag("--version", "proofpipe 0.1.0");
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

  pp::cli::ProveOptions prove;
  auto* pr = app.add_subcommand("prove", "Prove partitions from witness files");
  pr->add_option("--params", prove.params, "Proving key (bellperson .params)")->required()->check(CLI::ExistingFile);
  pr->add_option("--witness", prove.witnesses, "Witness file (.ppw), one per partition, in order")
      ->required()
      ->check(CLI::ExistingFile);
  pr->add_option("--out", prove.out, "Proofs, 192 bytes each, in witness order")->required();
  pr->add_option("--json", prove.json_out, "Also write the proofs as a JSON array (snarkjs proof.json shape)");
  pr->add_option("--seed", prove.seed, "Seed for the randomisers r, s (default: random)");
  pr->add_flag("--subgroup-check", prove.subgroup_check, "Check every key point's subgroup when loading");

  pp::cli::VerifyOptions verify;
  auto* vf = app.add_subcommand("verify", "Verify proofs; exit code 0 if and only if every proof is valid");
  vf->add_option("--params", verify.params, "Proving key (bellperson .params; only its VK is read)")
      ->required()
      ->check(CLI::ExistingFile);
  vf->add_option("--proofs", verify.proofs, "Proofs file (192 bytes per proof)")->required()->check(CLI::ExistingFile);
  vf->add_option("--public", verify.publics, "Public inputs JSON, one per proof, in order")
      ->required()
      ->check(CLI::ExistingFile);

  std::filesystem::path info_file;
  auto* in = app.add_subcommand("info", "Describe a proofpipe or bellperson file");
  in->add_option("file", info_file, "File to describe")->required()->check(CLI::ExistingFile);

  auto* bench = app.add_subcommand("bench", "Benchmarks");
  bench->require_subcommand(1);
  pp::cli::BenchProveOptions bench_prove;
  auto* bp = bench->add_subcommand("prove", "Time the CPU prover on a synthetic circuit (proofs are verified)");
  add_synthetic_options(bp, bench_prove.circuit, true);
  bp->add_option("--repeat", bench_prove.repeat, "Timed runs")->check(CLI::Range(1, 100))->capture_default_str();

  pp::cli::BenchGpuOptions bench_gpu;
  std::vector<CLI::App*> gpu_benches;
  for (const char* op : {"msm", "ntt", "batch-add"}) {
    auto* b = bench->add_subcommand(op, std::string("Time the GPU ") + op + " kernel on device-resident data");
    b->add_option("--lg", bench_gpu.lg, "log2 of the size")->check(CLI::Range(0, 30))->capture_default_str();
    if (std::string(op) != "ntt")
      b->add_option("--curve", bench_gpu.curve, "g1 or g2")->check(CLI::IsMember({"g1", "g2"}))->capture_default_str();
    if (std::string(op) == "msm")
      b->add_option("--window", bench_gpu.window, "Window bits (0: default)")->check(CLI::Range(0, 24));
    b->add_option("--runs", bench_gpu.runs, "Timed runs (median reported)")->check(CLI::Range(1, 1000))->capture_default_str();
    b->add_option("--warmup", bench_gpu.warmup, "Untimed runs first")->check(CLI::Range(0, 100))->capture_default_str();
    b->add_option("--device", bench_gpu.device, "CUDA device ordinal")->check(CLI::NonNegativeNumber);
    gpu_benches.push_back(b);
  }

  CLI11_PARSE(app, argc, argv);
  std::unique_ptr<tbb::global_control> limit;
  if (threads > 0)
    limit = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, std::size_t(threads));
  try {
    if (sc->parsed()) return pp::cli::run_selfcheck(selfcheck);
    if (st->parsed()) return pp::cli::run_setup(setup);
    if (pr->parsed()) return pp::cli::run_prove(prove);
    if (vf->parsed()) return pp::cli::run_verify(verify);
    if (in->parsed()) return pp::cli::run_info(info_file);
    if (bp->parsed()) return pp::cli::run_bench_prove(bench_prove);
    for (CLI::App* b : gpu_benches) {
      if (!b->parsed()) continue;
      bench_gpu.op = b->get_name();
      return pp::cli::run_bench_gpu(bench_gpu);
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "proofpipe: error: {}\n", e.what());
    return 1;
  }
  return 0;
}
