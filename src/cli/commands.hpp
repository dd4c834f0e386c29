// SPDX-License-Identifier: Apache-2.0 OR MIT
// Entry points of the CLI's subcommands (each returns the process exit code).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "proofpipe/engine_options.hpp"
#include "proofpipe/proofpipe.h"
#include "proofpipe/gpu/bench.hpp"

namespace CLI {
class App;
}

namespace pp::cli {

// The C API as the CLI's commands call it (groth16_commands.cpp).
// A failed call as the CLI reports it: std::runtime_error with the C API's message, which names
// the call and the file, input or offset.
void check(pp_status status, const pp_error& err);
using KeyHandle = std::unique_ptr<pp_key, void (*)(pp_key*)>;
using EngineHandle = std::unique_ptr<pp_engine, void (*)(pp_engine*)>;
KeyHandle load_key(const std::filesystem::path& path, bool subgroup_check);  // pp_key_load
EngineHandle create_engine(const pp_engine_config& config);                   // pp_engine_create
// .ppw witness files as PP_INPUT_PPW inputs, in order. The inputs point into `paths`: not copyable.
struct PpwInputs {
  explicit PpwInputs(const std::vector<std::filesystem::path>& files);
  PpwInputs(const PpwInputs&) = delete;
  PpwInputs& operator=(const PpwInputs&) = delete;
  std::vector<std::string> paths;
  std::vector<pp_input> inputs;
};

// The engine's flags, the same on every command that proves through it (prove, serve):
// --cpu, --devices, --gw, --vram-budget, --host-budget (--threads is global).
void add_engine_options(CLI::App* command, EngineOptions& options);

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
  bool gpu = false;                    // key points on GPU 0 (the same key as the CPU's)
  std::size_t distinct_witnesses = 0;  // 0: every partition its own; K: the rest are copies (own files)
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
  EngineOptions engine;  // --cpu, --devices, --gw, --vram-budget, --host-budget (add_engine_options)
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
// `proofpipe key cache in.params out.ppk`: the key as a key cache (io/key_cache.hpp), which
// prove/verify/info/serve then take wherever they take the .params.
int run_key_cache(const std::filesystem::path& params, const std::filesystem::path& out, bool subgroup_check);

// `info --plan`: the GPU memory plan (engine/plan.hpp) for the synthetic PoRep shape at --lg, or
// for the sizes of a .params key given as the info FILE.
struct PlanCliOptions {
  bool enabled = false;  // --plan
  std::optional<int> lg;
  std::size_t public_inputs = 8;
  std::string vram_budget;              // empty: the device memory less the context reserve
  std::string device_memory = "141GB";  // an H200 when no GPU is queried
  int gw = 2;
  std::string srs = "auto";
};
void add_plan_options(CLI::App* info, PlanCliOptions& options);
int run_info_plan(const PlanCliOptions& options, const std::filesystem::path& key_file);
// `info` for the iden3 formats: false when `magic` (the first four bytes) is none of them.
bool run_info_iden3(const std::filesystem::path& file, const std::string& magic);

// snarkjs's argument order: prove circuit.zkey witness.wtns proof.json public.json.
struct SnarkjsProveOptions {
  std::filesystem::path zkey, wtns, proof_json, public_json;
  std::optional<uint64_t> seed;
  bool subgroup_check = false;
  bool no_check = false;  // skip verifying the proof before writing it (the engine's check_proofs)
  EngineOptions engine;   // --cpu, --devices, --gw, --vram-budget, --host-budget, --threads
  int repeat = 1;         // bn128: proofs made with the key loaded, each timed (a benchmark)
};
int run_prove_snarkjs(const SnarkjsProveOptions& options);

// verify verification_key.json public.json proof.json; exit code 0 iff valid.
struct SnarkjsVerifyOptions {
  std::filesystem::path vk_json, public_json, proof_json;
};
int run_verify_snarkjs(const SnarkjsVerifyOptions& options);

// zkey export-vk | export-params | export-ppw | import-params | setup.
struct ZkeyOptions {
  std::string action;
  std::filesystem::path in, out, r1cs, wtns;
  std::optional<std::filesystem::path> public_out;
  std::optional<std::filesystem::path> via_params;  // setup: make a bellman key, write it, convert it
  std::string rows = "bellman";
  std::optional<uint64_t> seed;
};
int run_zkey(const ZkeyOptions& options);

struct BenchProveOptions {
  SyntheticCliOptions circuit;
  int repeat = 1;
  // GPU prover (builds with CUDA): key points made on the GPU, SRS placement by the planner.
  bool gpu = false;
  int device = 0;
  std::vector<std::string> vram_budgets;  // one prover per budget, in order; "card" = the card
  std::string srs = "auto";    // auto | resident | streamed
  bool check_cpu = false;      // also prove on the CPU and compare the proofs byte for byte
  std::optional<std::filesystem::path> write_params;  // write the synthetic key as .params
};
int run_bench_prove(const BenchProveOptions& options);
// `bench calls`: calls in flight through the C API, as a caller with several threads makes them.
// Each round starts `calls` calls at once (pp_prove_start), each proving every --witness with the
// same seed, and waits for them all; after a warm-up round, `rounds` timed rounds. Prints
//   proofpipe op=calls entry=capi gpus=N calls=C partitions=P rounds=R s_per_round=… partitions_per_s=…
//             min_gpu_busy=… gpu_busy=b0,b1,…
// (GPU busy: each GPU's compute-stream time over the timed rounds' wall time, pp_gpu_info.ms_busy).
// With compare_gpus the same runs on the first GPU alone, then on every GPU of the engine options,
// and a last line says what the added GPUs gave (issue 48's line):
//   proofpipe op=multi-gpu entry=capi gpus=N speedup=… min_gpu_busy=…
// Every call's proofs must be the same bytes (same key, witnesses and seed), and verify.
struct BenchCallsOptions {
  std::filesystem::path params;
  std::vector<std::filesystem::path> witnesses;
  int calls = 3, rounds = 3;
  bool compare_gpus = false;
  uint64_t seed = 1;
  EngineOptions engine;
};
int run_bench_calls(const BenchCallsOptions& options);
// Reads each file with read_witness, `repeat` passes; prints per pass bytes, seconds and GB/s.
int run_bench_read(const std::vector<std::filesystem::path>& files, int repeat);

struct BenchGpuOptions {
  // The kernel benchmark's options, bound to the flags as they are: op (msm | ntt | batch-add),
  // curve, lg, window, copies (--precompute), batch, runs, warmup, device. `bench msm --cpu`
  // reads its lg, curve, window, runs and warmup from here too.
  gpu::BenchOptions kernel;
  std::string scalars = "canonical";  // msm (GPU): canonical | montgomery, the scalars' input form (kernel.canonical)
  std::string twist = "full";         // ntt: full (a root per twist, as a resident prover plans it) | split (the small tables) (kernel.full_twist)
  bool cpu = false;  // msm only: time pp::msm on the host instead of the GPU kernel
  int threads = 0;   // --cpu: worker threads (0: the global --threads, else all cores)
};
// GPU kernel benchmark on device-resident data: median of `runs` after `warmup`.
int run_bench_gpu(const BenchGpuOptions& options);
// `bench msm --cpu`: pp::msm on seeded random points and scalars, in a task arena of
// `threads`; one key=value line (median of `runs` after `warmup`, wall ms).
int run_bench_msm_cpu(const BenchGpuOptions& options);

struct BenchFieldOptions {
  std::string op = "all";    // all | fp-mul | fp-sqr | fr-mul | fr-sqr
  std::string form = "both";  // inplace (a *= b) | value (a = a * b) | both
  long iters = 1000000;    // steps of the dependent chain per timed run
  int runs = 11, warmup = 2;
  bool portable = false;   // force the portable C++ path instead of the mulx/adx kernels
};
// Field multiplication and squaring in dependent chains; one key=value line per operation
// and form (in place, by value): median of `runs` after `warmup`, in ns per operation.
int run_bench_field(const BenchFieldOptions& options);

// `engine bench`: the pipelined engine (engine/engine.hpp) on simulated devices.
struct EngineBenchOptions {
  std::string backend = "sim";
  int lg = 10;
  std::size_t partitions = 10;
  int proofs = 4;
  // Several values: one run per combination (same key and witnesses), e.g. a gw sweep.
  std::vector<int> gw = {2};
  int devices = 1;
  std::vector<std::string> interlock = {"two"};
  std::string host_mem;             // empty: unlimited
  std::vector<std::string> vram_budget = {"16GiB"};  // "card": the whole GPU
  bool zip = false;  // the i-th budget with the i-th gw, instead of every combination
  std::size_t witnesses = 0;        // distinct witnesses shared round-robin by the partitions (0: one each)
  std::string witness_dir;          // non-empty: witnesses written there, read by sources on admission
  std::string sim_latency = "stage=2000,h=4000,msm=6000,finish=1000";
  bool spin = false;
  std::string trace, timeline;      // empty: not written
  std::string key_cache;            // non-empty: the key is written there and mapped back (io/key_cache.hpp)
  uint64_t seed = 1;
  std::vector<std::string> check = {"on"};  // the engine's check before release, on and/or off (one run each)
  uint64_t corrupt_every = 0;       // test hook: every Nth device result corrupted (0: none)
  // cuda, batched: who enqueues the passes (ProverConfig::pass_thread): thread, inline; several: one run each.
  std::vector<std::string> batch_passes = {"inline"};
};
void add_engine_bench_options(CLI::App* cmd, EngineBenchOptions& options);
// Exit code 0 iff every job ended ok and every proof verified.
int run_engine_bench(const EngineBenchOptions& options);

// `serve`, `submit`, `await` and `status`: the proving daemon and its clients (builds with
// PROOFPIPE_SERVICE; src/cli/service_commands.cpp, docs/SERVICE.md).
struct ServiceCommands;
std::shared_ptr<ServiceCommands> add_service_commands(CLI::App& app);
// The exit code when one of these commands was parsed; nothing otherwise. `threads`: --threads.
std::optional<int> run_service_commands(const ServiceCommands& commands, int threads);

}  // namespace pp::cli
