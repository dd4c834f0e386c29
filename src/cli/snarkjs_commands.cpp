// SPDX-License-Identifier: Apache-2.0 OR MIT
// `proofpipe prove|verify` in snarkjs's argument order, `zkey ...` conversions, `info` for iden3 files.
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <exception>
#include <future>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>

#include "commands.hpp"
#include "heap_policy.hpp"
#include "proofpipe/groth16/convention.hpp"
#include "proofpipe/engine_options.hpp"
#include "proofpipe/groth16/prover.hpp"
#include "proofpipe/io/params.hpp"
#include "proofpipe/io/r1cs_file.hpp"
#include "proofpipe/io/snarkjs.hpp"
#include "proofpipe/io/witness.hpp"
#include "proofpipe/io/wtns.hpp"
#include "proofpipe/io/zkey.hpp"
#include "proofpipe/ntt/ntt.hpp"
#include "proofpipe/proofpipe.h"
#if PROOFPIPE_HAS_CUDA
#include "proofpipe/engine/plan.hpp"
#include "proofpipe/gpu/prover.hpp"
#endif

namespace pp::cli {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

uint64_t random_seed() { return (uint64_t(std::random_device{}()) << 32) ^ std::random_device{}(); }

// The GPU prover over BN254 for bn128 proofs on GPU `device` (the first of --devices, else 0): the
// key planned and uploaded (or streamed within --vram-budget) once.
#if PROOFPIPE_HAS_CUDA
using Bn254GpuProver = gpu::ProverOf<bn254::Bn254>;
std::unique_ptr<Bn254GpuProver> start_bn254_prover(const SnarkjsProveOptions& o, const bn254::ProvingKey& pk,
                                                   const Densities& densities) {
  gpu::ProverConfig cfg;
  cfg.device = o.engine.devices.empty() ? 0 : o.engine.devices.front();
  cfg.budget = device_budget_bytes(o.engine.vram_budget);
  cfg.gw = 1;
  // Pinned staging pays for itself over many proofs; for one, pinning its (2·2^lg + nVars)·32
  // bytes (0.24–0.36 s for a 2^22 circuit on an H100 host) costs more than the pageable upload
  // of the same bytes loses (~65 ms).
  cfg.pinned_staging = o.repeat > 1;
  // Likewise the H query's fixed-base table: building it at start-up took ~370 ms at 2^23 on an
  // H100, and it saves ~7 ms per proof (H MSM 23.7 against 30.3 ms).
  cfg.h_table = o.repeat > 1;
  return std::make_unique<Bn254GpuProver>(pk, densities, cfg);
}

// o.repeat proofs of the witness as one partition each, each timed (`run_ms`).
bn254::Proof prove_bn254_on_gpu(const SnarkjsProveOptions& o, Bn254GpuProver& prover, const bn254::Witness& witness,
                                uint64_t seed, gpu::GpuTimes* times, std::vector<double>* run_ms) {
  const bn254::Randomizers rs = randomizers_from_seed<bn254::Fr>(seed, 1).at(0);
  bn254::Proof proof;
  for (int r = 0; r < o.repeat; ++r) {
    const auto t1 = Clock::now();
    auto part = prover.prepare(witness, rs, 0);
    prover.stage(*part, 0, 0);
    prover.compute(*part);
    proof = prover.finish(*part, times);
    run_ms->push_back(ms_since(t1));
  }
  return proof;
}
#endif

// A bn128 key (circom's default prime): proved by the GPU prover over BN254 when a GPU is visible
// (and not --cpu), else by the CPU prover. One proof of one witness, so the prover is driven
// directly (its start-up beside the read) rather than through the runtime's BN254 engine, which the
// C API and the daemon use. The proof is checked against the key's verifying key before anything is written (unless
// --no-check). With --repeat N the key stays loaded for N proofs of the witness (the same r, s:
// the same proof), each timed.
int prove_snarkjs_bn254(const SnarkjsProveOptions& o) {
  const auto t0 = Clock::now();
#if PROOFPIPE_HAS_CUDA
  // The driver and the GPU's context start beside the read (together 0.2–0.5 s, as long as a
  // small key's whole read): the thread counts the devices and starts the one the proof will use.
  const int device = o.engine.devices.empty() ? 0 : o.engine.devices.front();
  std::future<int> devices;
  if (!o.engine.cpu_only)
    devices = std::async(std::launch::async, [device] {
      const int n = gpu::device_count();
      if (device < n) (void)gpu::start_device(device);
      return n;
    });
#endif
  // The key's points are read with their coordinates checked; whether they lie on the curve (a
  // pass over every point, ~40% of the read's CPU time) is checked beside the GPU's proof, which
  // leaves the cores idle, and joined before anything made from the points is used or written.
  ZkeyReadOptions ro;
  ro.subgroup_check = o.subgroup_check;
  ZkeyPointChecks point_checks;
  bn254::Zkey zkey = read_zkey<bn254::Bn254>(o.zkey, ro, &point_checks);
  const double t_zkey = ms_since(t0);
  const Densities densities = zkey_densities(zkey);
  // The proving key is taken from the .zkey's point sections (on the GPU start-up's thread, or
  // here for the CPU) while this thread reads the .wtns and evaluates the witness from the
  // coefficients: take_proving_key and witness_from_zkey share no data (io/snarkjs.hpp).
  bn254::ProvingKey pk;
  double t_key = 0;
  bool on_gpu = false;
  double t_device = t_zkey;
#if PROOFPIPE_HAS_CUDA
  on_gpu = devices.valid() && devices.get() > 0;
  t_device = ms_since(t0);
  // The prover starts (plan, arena, NTT tables, the SRS upload) beside the witness's read and
  // evaluation. Its errors surface at get() below.
  double setup_ms = 0, setup_done = 0;
  std::future<std::unique_ptr<Bn254GpuProver>> started;
  if (on_gpu)
    started = std::async(std::launch::async, [&] {
      pk = take_proving_key(zkey, densities);
      t_key = ms_since(t0);
      const auto ts = Clock::now();
      auto prover = start_bn254_prover(o, pk, densities);
      setup_ms = ms_since(ts);
      setup_done = ms_since(t0);
      return prover;
    });
#else
  if (!o.engine.devices.empty()) fmt::print(stderr, "proofpipe: built without CUDA: the bn128 proof runs on the CPU\n");
#endif
  if (!on_gpu) {
    point_checks.run();  // the CPU's proof uses every core: nothing to overlap
    pk = take_proving_key(zkey, densities);
    t_key = ms_since(t0);
  }
  const std::vector<bn254::Fr> z = read_wtns<bn254::Fr>(o.wtns);
  const double t_wtns = ms_since(t0);
  if (z.size() != zkey.num_vars)
    throw std::invalid_argument(fmt::format("{} has {} values but {} expects nVars = {} (wrong circuit or build?)",
                                            o.wtns.string(), z.size(), o.zkey.string(), zkey.num_vars));
  const std::vector<bn254::Fr> publics(z.begin() + 1, z.begin() + std::ptrdiff_t(zkey.num_public + 1));
  const int lg = std::countr_zero(zkey.domain_size);
  std::vector<bn254::Witness> witnesses;  // one, built in place (a list initialiser would copy its GBs)
  witnesses.push_back(witness_from_zkey(zkey, z, densities));
  const double t_read = ms_since(t0);
  const uint64_t seed = o.seed.value_or(random_seed());
  const auto t1 = Clock::now();
  bn254::Proof proof;
  std::string where;
  std::vector<double> run_ms;
  if (on_gpu) {
#if PROOFPIPE_HAS_CUDA
    // A GPU that fails (a CUDA error, a budget too small for the key) leaves the proof to the CPU,
    // as the engine's fallback does for BLS12-381 keys; a witness the key rejects fails either way.
    std::future<void> points_checked = std::async(std::launch::async, [&] { point_checks.run(); });
    try {
      std::unique_ptr<Bn254GpuProver> prover = started.get();
      gpu::GpuTimes gt;
      proof = prove_bn254_on_gpu(o, *prover, witnesses.at(0), seed, &gt, &run_ms);
      const double t_proved = ms_since(t1);
      const gpu::StartupTimes st = prover->startup_times();
      prover.reset();
      where = fmt::format("on the GPU (start-up {:.0f} ms: plan {:.0f}, arena {:.0f}, staging {:.0f}, tables {:.0f}, SRS {:.0f}; "
                          "done at {:.0f} ms; GPU: upload {:.1f}, NTT + H {:.1f}, MSM H {:.1f}, L {:.1f}, A {:.1f}, B_G1 "
                          "{:.1f}, B_G2 {:.1f} ms; proved at +{:.0f} ms, prover released at +{:.0f} ms)",
                          setup_ms, st.plan, st.arena, st.staging, st.tables, st.srs, setup_done, gt.upload, gt.ntt,
                          gt.msm_h, gt.msm_l, gt.msm_a, gt.msm_b_g1, gt.msm_b_g2, t_proved, ms_since(t1));
    } catch (const gpu::GpuError& e) {
      fmt::print(stderr, "proofpipe: the GPU prover failed ({}): proving on the CPU\n", e.what());
      on_gpu = false;
    } catch (const engine::PlanError& e) {
      fmt::print(stderr, "proofpipe: the key does not fit the GPU ({}): proving on the CPU\n", e.what());
      on_gpu = false;
    }
    if (!on_gpu) run_ms.clear();  // a failed GPU run's timings are not the CPU's
    points_checked.get();          // a point off the curve fails the command here, as the read would have
#endif
  }
  if (!on_gpu) {
    ProveTimings tm;
    for (int r = 0; r < o.repeat; ++r) {
      const auto t2 = Clock::now();
      tm = {};
      proof = prove(pk, witnesses, seed, &tm).at(0);
      run_ms.push_back(ms_since(t2));
    }
    where = fmt::format("on the CPU (witness {:.0f}, H {:.0f}, MSM H {:.0f}, L {:.0f}, A {:.0f}, B_G1 {:.0f}, B_G2 {:.0f} ms)",
                        tm.evaluate, tm.ntt, tm.msm_h, tm.msm_l, tm.msm_a, tm.msm_b_g1, tm.msm_b_g2);
  }
  const double t_prove = ms_since(t1);
  if (!o.no_check) {
    const auto t2 = Clock::now();
    if (!verify(pk.vk, publics, proof))
      throw std::runtime_error("the proof does not verify against " + o.zkey.string() + " (nothing written)");
    fmt::print(stderr, "proofpipe: proof checked against the key ({:.0f} ms)\n", ms_since(t2));
  }
  write_text_file(o.proof_json, proof_to_snarkjs_json(proof));
  write_text_file(o.public_json, public_to_snarkjs_json(publics));
  // The read's steps as times since the start: the .zkey decoded, the proving key taken from it,
  // the GPU's context up, the .wtns read, the witness (a, b, c) evaluated.
  fmt::print(stderr,
             "proofpipe: read {:.0f} ms (.zkey at {:.0f}, key at {:.0f}, GPU context at {:.0f}, .wtns at {:.0f}, witness at "
             "{:.0f} ms), proved in {:.0f} ms {}, bn128; domain 2^{}; written {:.0f} ms after the start\n",
             t_read, t_zkey, t_key, t_device, t_wtns, t_read, t_prove, where, lg, ms_since(t0));
  if (o.repeat > 1) {
    std::vector<double> sorted = run_ms;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t r = 0; r < run_ms.size(); ++r)
      fmt::print("proofpipe op=prove-loaded curve=bn128 domain_lg={} device={} run={} s={:.3f}\n", lg, on_gpu ? "gpu" : "cpu", r,
                 run_ms[r] / 1e3);
    fmt::print("proofpipe op=prove-loaded curve=bn128 domain_lg={} device={} runs={} s_median={:.3f} s_min={:.3f}\n", lg,
               on_gpu ? "gpu" : "cpu", run_ms.size(), sorted[sorted.size() / 2] / 1e3, sorted.front() / 1e3);
  }
  return 0;
}

template <class E>
int verify_snarkjs(const SnarkjsVerifyOptions& o) {
  const VerifyingKeyOf<E> vk = read_snarkjs_vk<E>(o.vk_json);
  const std::vector<typename E::Fr> publics = read_public_json<typename E::Fr>(o.public_json);
  const ProofOf<E> proof = read_snarkjs_proof<E>(o.proof_json);
  if (publics.size() + 1 != vk.ic.size())
    throw std::invalid_argument(fmt::format("{} has {} public signals, {} expects {}", o.public_json.string(),
                                            publics.size(), o.vk_json.string(), vk.ic.size() - 1));
  if (verify(vk, publics, proof)) {
    fmt::print("OK: the proof is valid\n");
    return 0;
  }
  fmt::print("INVALID proof\n");
  return 1;
}

}  // namespace

// `prove circuit.zkey witness.wtns proof.json public.json` goes through the C API and its engine,
// as every proof does: on the GPUs when there are any (snarkjs's convention), else on the CPU
// prover; the proof is checked against the key before it is written (unless --no-check).
int run_prove_snarkjs(const SnarkjsProveOptions& o) {
  use_one_shot_heap_policy();
  if (zkey_curve(o.zkey) == CurveId::bn254) return prove_snarkjs_bn254(o);
  if (o.repeat != 1)
    throw std::invalid_argument("--repeat is for bn128 keys so far (BLS12-381: `bench prove` or the daemon keep a key loaded)");
  const auto t0 = Clock::now();
  pp_error err;
  std::unique_ptr<pp_key, void (*)(pp_key*)> key(nullptr, pp_key_release);
  const std::string zkey_path = o.zkey.string(), wtns_path = o.wtns.string();
  // The .zkey's header first (a FormatError naming the file when it is no .zkey), then the key is
  // loaded (its points decoded on every core) while this thread reads the .wtns's public signals.
  ZkeyReadOptions header_only;
  header_only.header_only = true;
  const Zkey head = read_zkey(o.zkey, header_only);
  std::vector<Fr> publics;
  {
    std::exception_ptr key_error, wtns_error;
    pp_key* k = nullptr;
    pp_error load_err;
    std::thread loader([&] {
      try {
        check(pp_key_load(zkey_path.c_str(), o.subgroup_check ? 1 : 0, &k, &load_err), load_err);
      } catch (...) {
        key_error = std::current_exception();
      }
    });
    try {
      std::size_t values = 0;
      publics = read_wtns_prefix(o.wtns, head.num_public + 1, &values);
      if (values != head.num_vars)
        throw std::invalid_argument(fmt::format("{} has {} values but {} expects nVars = {} (wrong circuit or build?)",
                                                wtns_path, values, zkey_path, head.num_vars));
      publics.erase(publics.begin());  // z[0] = 1 is no public signal
    } catch (...) {
      wtns_error = std::current_exception();
    }
    loader.join();
    key.reset(k);
    if (key_error) std::rethrow_exception(key_error);
    if (wtns_error) std::rethrow_exception(wtns_error);
  }
  pp_engine_config config = engine_config(o.engine);
  config.check_proofs = o.no_check ? 0 : 1;
  const EngineHandle engine = create_engine(config);
  pp_input input{};
  input.kind = PP_INPUT_WTNS;
  input.wtns.path = wtns_path.c_str();
  if (!o.engine.cpu_only) check(pp_key_preload(engine.get(), key.get(), &input, &err), err);  // the key's upload
  const double t_read = ms_since(t0);
  const auto t1 = Clock::now();
  std::array<uint8_t, PP_PROOF_BYTES> bytes{};
  std::size_t size = bytes.size();
  const uint64_t seed = o.seed.value_or(0);
  check(pp_prove(engine.get(), key.get(), &input, 1, o.seed ? &seed : nullptr, bytes.data(), &size, &err), err);
  const double t_prove = ms_since(t1);
  const Proof proof = Proof::from_bytes(std::span<const uint8_t, Proof::kBytes>(bytes.data(), Proof::kBytes));
  write_text_file(o.proof_json, proof_to_snarkjs_json(proof));
  write_text_file(o.public_json, public_to_snarkjs_json(publics));
  pp_engine_stats stats;
  check(pp_engine_stats_get(engine.get(), &stats, &err), err);
  if (stats.proofs_checked > 0)
    fmt::print(stderr, "proofpipe: proof checked against the key ({:.0f} ms)\n", stats.ms_verify);
  // The MSM figures are the engine's stage sums (GPU kernels or the CPU prover's phases).
  fmt::print(stderr,
             "proofpipe: read {:.0f} ms, proved in {:.0f} ms on {} (witness {:.0f}, H {:.0f}, MSM H {:.0f}, L {:.0f}, "
             "A {:.0f}, B_G1 {:.0f}, B_G2 {:.0f}); domain 2^{}\n",
             t_read, t_prove, stats.gpus > 0 && stats.partitions_on_cpu == 0 ? fmt::format("{} GPU(s)", stats.gpus) : "the CPU",
             stats.ms_checks, stats.ms_ntt, stats.ms_msm_h, stats.ms_msm_l, stats.ms_msm_a, stats.ms_msm_b_g1,
             stats.ms_msm_b_g2, std::countr_zero(head.domain_size));
  return 0;
}

int run_verify_snarkjs(const SnarkjsVerifyOptions& o) {
  return snarkjs_vk_curve(o.vk_json) == CurveId::bn254 ? verify_snarkjs<bn254::Bn254>(o) : verify_snarkjs<Bls12_381>(o);
}

int run_zkey(const ZkeyOptions& o) {
  if (o.action == "export-vk") {
    ZkeyReadOptions ro;
    ro.header_only = true;
    auto export_vk = [&](const auto& zkey) {
      write_text_file(o.out, vk_to_snarkjs_json(zkey.vk));
      fmt::print("wrote {} ({} public signals, {})\n", o.out.string(), zkey.num_public,
                 to_string(zkey_curve(o.in)));
    };
    if (zkey_curve(o.in) == CurveId::bn254)
      export_vk(read_zkey<bn254::Bn254>(o.in, ro));
    else
      export_vk(read_zkey(o.in, ro));
    return 0;
  }
  if (o.action == "export-params") {
    const Zkey zkey = read_zkey(o.in);
    ProvingKey pk = change_h_basis(proving_key_from_zkey(zkey), HBasis::bellman);
    write_params(o.out, pk);
    fmt::print("wrote {}: bellperson layout, H changed to tau^i Z(tau)/delta (exact).\n"
               "NOTE its rows are snarkjs's (constraint k at omega^k for the generator-5 root), not bellman's: prove\n"
               "with witnesses from `proofpipe zkey export-ppw`, which renumbers the rows to match. bellperson\n"
               "itself cannot use this key for the circom circuit (its synthesis places rows differently).\n",
               o.out.string());
    return 0;
  }
  if (o.action == "export-ppw") {
    const Zkey zkey = read_zkey(o.in);
    const std::vector<Fr> z = read_wtns(o.wtns);
    const Witness w = witness_from_zkey(zkey, z);
    write_witness(o.out, move_rows(w, std::countr_zero(zkey.domain_size), Domain::kSnarkjsGenerator,
                                   Domain::kBellmanGenerator));
    write_public_json(o.public_out ? *o.public_out : std::filesystem::path(o.out.string() + ".public.json"),
                      std::span<const Fr>(z.data() + 1, zkey.num_public));
    fmt::print("wrote {} (rows renumbered for the key of `zkey export-params`)\n", o.out.string());
    return 0;
  }
  if (o.action == "setup" && r1cs_file_is_bn254(o.r1cs)) {
    if (o.via_params) throw std::invalid_argument("--via-params: .params files are BLS12-381's (bellperson); this is a bn128 circuit");
    const bn254::CircomR1cs circuit = read_r1cs_file<bn254::Fr>(o.r1cs);
    fmt::print(stderr,
               "proofpipe zkey setup: NOTE this key comes from fresh random toxic waste on this machine; it is for\n"
               "tests and benchmarks only, not a trusted-setup ceremony.\n");
    const bn254::Zkey zkey = zkey_test_setup(circuit.r1cs, o.seed ? *o.seed : random_seed());
    write_zkey(o.out, zkey);
    fmt::print("wrote {}: bn128, {} constraints, {} variables, {} public, domain 2^{}; H in snarkjs's basis\n",
               o.out.string(), circuit.r1cs.num_constraints(), zkey.num_vars, zkey.num_public,
               std::countr_zero(zkey.domain_size));
    return 0;
  }
  if (o.action == "import-params" || o.action == "setup") {
    const CircomR1cs circuit = read_r1cs_file(o.r1cs);
    Zkey zkey;
    if (o.action == "setup") {
      fmt::print(stderr,
                 "proofpipe zkey setup: NOTE this key comes from fresh random toxic waste on this machine; it is for\n"
                 "tests and benchmarks only, not a trusted-setup ceremony.\n");
      const uint64_t seed = o.seed ? *o.seed : random_seed();
      if (o.via_params) {
        // bellman's convention first (rows on generator 7, H = tau^i Z(tau)/delta), written as a
        // .params, then converted exactly as `zkey import-params --rows bellman` would.
        const ProvingKey pk = setup(circuit.r1cs, seed);
        write_params(*o.via_params, pk);
        zkey = zkey_from_proving_key(pk, circuit.r1cs);
      } else {
        zkey = zkey_test_setup(circuit.r1cs, seed);
      }
    } else {
      ProvingKey pk = read_params(o.in);
      if (o.rows == "snarkjs") {
        pk.convention.domain_generator = Domain::kSnarkjsGenerator;
      } else if (o.rows != "bellman") {
        throw std::invalid_argument("--rows must be bellman or snarkjs");
      }
      zkey = zkey_from_proving_key(pk, circuit.r1cs);
    }
    write_zkey(o.out, zkey);
    fmt::print("wrote {}: {} constraints, {} variables, {} public, domain 2^{}; H in snarkjs's basis{}\n",
               o.out.string(), circuit.r1cs.num_constraints(), zkey.num_vars, zkey.num_public,
               std::countr_zero(zkey.domain_size),
               o.action == "setup" && !o.via_params ? ""
                                                    : " (converted from bellman's; see docs/FORMATS.md)");
    return 0;
  }
  throw std::invalid_argument("unknown zkey action '" + o.action + "'");
}

namespace {
template <class E>
void info_zkey(const std::filesystem::path& file) {
  ZkeyReadOptions ro;
  ro.header_only = true;
  const ZkeyOf<E> z = read_zkey<E>(file, ro);
  fmt::print("{}: snarkjs Groth16 proving key (.zkey), curve {}\n"
             "  variables (nVars, with the 1): {}\n  public signals (nPublic): {}\n  domain: {} = 2^{}\n"
             "  coefficients (A and B): {}\n  H basis: snarkjs (odd points of the 2n domain, roots from 5)\n",
             file.string(), std::is_same_v<E, Bls12_381> ? "bls12381" : "bn128", z.num_vars, z.num_public,
             z.domain_size, std::countr_zero(z.domain_size), z.coefficients.size());
}
template <class F>
void info_r1cs(const std::filesystem::path& file) {
  const CircomR1csOf<F> c = read_r1cs_file<F>(file);
  const R1csOf<F>& r = c.r1cs;
  fmt::print("{}: circom constraint system (.r1cs), {}\n  constraints: {}\n  wires: {}\n  outputs: {}\n"
             "  public inputs: {}\n  private inputs: {}\n  labels: {}\n  non-zeros A/B/C: {}/{}/{}\n",
             file.string(), std::is_same_v<F, Fr> ? "BLS12-381" : "BN254 (bn128)", r.num_constraints(),
             r.num_variables(), c.num_outputs, c.num_public_inputs, c.num_private_inputs, c.num_labels,
             r.a.non_zeros(), r.b.non_zeros(), r.c.non_zeros());
}
}  // namespace

bool run_info_iden3(const std::filesystem::path& file, const std::string& magic) {
  if (magic == "zkey") {
    if (zkey_curve(file) == CurveId::bn254)
      info_zkey<bn254::Bn254>(file);
    else
      info_zkey<Bls12_381>(file);
    return true;
  }
  if (magic == "wtns") {
    const bool bn = wtns_file_is_bn254(file);
    const std::size_t n = bn ? read_wtns<bn254::Fr>(file).size() : read_wtns(file).size();
    fmt::print("{}: circom witness (.wtns), {} scalars\n  values (with the 1): {}\n", file.string(),
               bn ? "BN254 (bn128)" : "BLS12-381", n);
    return true;
  }
  if (magic == "r1cs") {
    if (r1cs_file_is_bn254(file))
      info_r1cs<bn254::Fr>(file);
    else
      info_r1cs<Fr>(file);
    return true;
  }
  return false;
}

}  // namespace pp::cli
