// Entry points of the CLI's subcommands (each returns the process exit code).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace pp::cli {

struct SelfcheckOptions {
  uint64_t seed = 0x9e3779b97f4a7c15ULL;
  int iterations = 64;
};
// End-to-end arithmetic self-check: fields, curves, encodings and the pairing agree with
// each other and with published constants. Prints a table; exit code 0 when all hold.
int run_selfcheck(const SelfcheckOptions& options);

struct SyntheticCliOptions {
  std::string kind = "porep";
  int lg = 10;
  std::size_t partitions = 1;
  std::size_t public_inputs = 8;
  double zero_fraction = 0.45, one_fraction = 0.45;
  uint64_t seed = 1;
};

struct SetupOptions {
  SyntheticCliOptions circuit;
  std::filesystem::path out;
};
// Writes DIR/params, DIR/witness-<i>.ppw and DIR/public-<i>.json.
int run_setup(const SetupOptions& options);

struct ProveOptions {
  std::filesystem::path params;
  std::vector<std::filesystem::path> witnesses;
  std::filesystem::path out;
  std::optional<std::filesystem::path> json_out;  // the proofs also as JSON (snarkjs shape)
  std::optional<uint64_t> seed;                   // for r, s; random when absent
  bool subgroup_check = false;
};
int run_prove(const ProveOptions& options);

struct VerifyOptions {
  std::filesystem::path params;
  std::filesystem::path proofs;
  std::vector<std::filesystem::path> publics;
};
// Exit code 0 if and only if every proof verifies.
int run_verify(const VerifyOptions& options);

int run_info(const std::filesystem::path& file);

struct BenchProveOptions {
  SyntheticCliOptions circuit;
  int repeat = 1;
};
int run_bench_prove(const BenchProveOptions& options);

struct BenchGpuOptions {
  std::string op;            // msm | ntt | batch-add
  std::string curve = "g1";  // g1 | g2
  int lg = 20;
  int window = 0;            // msm window (0: default)
  int runs = 5, warmup = 1, device = 0;
};
// GPU kernel benchmark on device-resident data: median of `runs` after `warmup`.
int run_bench_gpu(const BenchGpuOptions& options);

}  // namespace pp::cli
