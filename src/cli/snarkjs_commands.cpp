// `proofpipe prove|verify` in snarkjs's argument order, `zkey ...` conversions, `info` for iden3 files.
#include <fmt/core.h>
#include <tbb/parallel_invoke.h>

#include <bit>
#include <chrono>
#include <exception>
#include <random>
#include <stdexcept>
#include <string>

#include "commands.hpp"
#include "heap_policy.hpp"
#include "proofpipe/groth16/convention.hpp"
#include "proofpipe/groth16/prover.hpp"
#include "proofpipe/io/params.hpp"
#include "proofpipe/io/r1cs_file.hpp"
#include "proofpipe/io/snarkjs.hpp"
#include "proofpipe/io/witness.hpp"
#include "proofpipe/io/wtns.hpp"
#include "proofpipe/io/zkey.hpp"
#include "proofpipe/ntt/ntt.hpp"

namespace pp::cli {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

uint64_t random_seed() { return (uint64_t(std::random_device{}()) << 32) ^ std::random_device{}(); }

}  // namespace

int run_prove_snarkjs(const SnarkjsProveOptions& o) {
  use_one_shot_heap_policy();
  const auto t0 = Clock::now();
  ZkeyReadOptions ro;
  ro.subgroup_check = o.subgroup_check;
  // The serial parts of the read run beside each other: the .wtns (a serial parse) beside the
  // .zkey's, then the witness's a, b, c (a serial pass over the coefficients) beside the key's
  // copies (which take only the zkey's A, B1, B2, H and C; the witness reads its coefficients
  // and A, B1, B2). A file that is wrong reports as before: the zkey's error first.
  Zkey zkey;
  std::vector<Fr> z;
  std::exception_ptr zkey_error, wtns_error;
  tbb::parallel_invoke(
      [&] {
        try {
          zkey = read_zkey(o.zkey, ro);
        } catch (...) {
          zkey_error = std::current_exception();
        }
      },
      [&] {
        try {
          z = read_wtns(o.wtns);
        } catch (...) {
          wtns_error = std::current_exception();
        }
      });
  if (zkey_error) std::rethrow_exception(zkey_error);
  if (wtns_error) std::rethrow_exception(wtns_error);
  if (z.size() != zkey.num_vars)
    throw std::invalid_argument(fmt::format("{} has {} values but {} expects nVars = {} (wrong circuit or build?)",
                                            o.wtns.string(), z.size(), o.zkey.string(), zkey.num_vars));
  const std::size_t num_public = zkey.num_public, domain_size = zkey.domain_size, num_vars = zkey.num_vars;
  Witness w;
  ProvingKey pk;
  std::exception_ptr witness_error;
  const Densities densities = zkey_densities(zkey);
  tbb::parallel_invoke(
      [&] {
        try {
          w = witness_from_zkey(zkey, z, densities);
        } catch (...) {
          witness_error = std::current_exception();
        }
      },
      // Takes the zkey's point sections, which the witness does not read; A and B are compacted
      // where they lie instead of copied (~24 MB fewer new pages at 2^16; docs/PERF.md, issue
      // 18, seventh round).
      [&] { pk = take_proving_key(zkey, densities); });
  if (witness_error) std::rethrow_exception(witness_error);
  // The coefficients are no longer needed; freed now, they serve the prover's vectors instead
  // of fresh pages.
  zkey = Zkey{};
  const double t_read = ms_since(t0);
  const auto t1 = Clock::now();
  ProveTimings timings;
  const Proof proof = prove(pk, std::span<const Witness>(&w, 1), o.seed ? *o.seed : random_seed(), &timings).at(0);
  const double t_prove = ms_since(t1);
  const std::span<const Fr> publics(z.data() + 1, num_public);
  if (!o.no_check) {
    const auto t2 = Clock::now();
    if (!verify(pk.vk, publics, proof))
      throw std::runtime_error("the proof does not verify: the witness does not satisfy the circuit of " +
                               o.zkey.string());
    fmt::print(stderr, "proofpipe: proof checked against the key ({:.0f} ms)\n", ms_since(t2));
  }
  write_text_file(o.proof_json, proof_to_snarkjs_json(proof));
  write_text_file(o.public_json, public_to_snarkjs_json(publics));
  // L and B_G1 with dense scalars may join H's MSM (no time of their own then; see ProveTimings).
  std::string msms = fmt::format("MSM H{}{} {:.0f}", timings.msm_l == 0 ? "+L" : "", timings.msm_b_g1 == 0 ? "+B_G1" : "",
                                 timings.msm_h);
  if (timings.msm_l != 0) msms += fmt::format(", L {:.0f}", timings.msm_l);
  msms += fmt::format(", A {:.0f}", timings.msm_a);
  if (timings.msm_b_g1 != 0) msms += fmt::format(", B_G1 {:.0f}", timings.msm_b_g1);
  fmt::print(stderr,
             "proofpipe: read {:.0f} ms, proved in {:.0f} ms (witness {:.0f}, H {:.0f}, {}, B_G2 {:.0f}); domain 2^{}, {} "
             "variables\n",
             t_read, t_prove, timings.evaluate, timings.ntt, msms, timings.msm_b_g2, std::countr_zero(domain_size),
             num_vars);
  return 0;
}

int run_verify_snarkjs(const SnarkjsVerifyOptions& o) {
  const VerifyingKey vk = read_snarkjs_vk(o.vk_json);
  const std::vector<Fr> publics = read_public_json(o.public_json);
  const Proof proof = read_snarkjs_proof(o.proof_json);
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

int run_zkey(const ZkeyOptions& o) {
  if (o.action == "export-vk") {
    ZkeyReadOptions ro;
    ro.header_only = true;
    const Zkey zkey = read_zkey(o.in, ro);
    write_text_file(o.out, vk_to_snarkjs_json(zkey.vk));
    fmt::print("wrote {} ({} public signals)\n", o.out.string(), zkey.num_public);
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

bool run_info_iden3(const std::filesystem::path& file, const std::string& magic) {
  if (magic == "zkey") {
    ZkeyReadOptions ro;
    ro.header_only = true;
    const Zkey z = read_zkey(file, ro);
    fmt::print("{}: snarkjs Groth16 proving key (.zkey), curve bls12381\n"
               "  variables (nVars, with the 1): {}\n  public signals (nPublic): {}\n  domain: {} = 2^{}\n"
               "  coefficients (A and B): {}\n  H basis: snarkjs (odd points of the 2n domain, roots from 5)\n",
               file.string(), z.num_vars, z.num_public, z.domain_size, std::countr_zero(z.domain_size),
               z.coefficients.size());
    return true;
  }
  if (magic == "wtns") {
    const std::vector<Fr> z = read_wtns(file);
    fmt::print("{}: circom witness (.wtns), BLS12-381 scalars\n  values (with the 1): {}\n", file.string(), z.size());
    return true;
  }
  if (magic == "r1cs") {
    const CircomR1cs c = read_r1cs_file(file);
    const R1cs& r = c.r1cs;
    fmt::print("{}: circom constraint system (.r1cs), BLS12-381\n  constraints: {}\n  wires: {}\n  outputs: {}\n"
               "  public inputs: {}\n  private inputs: {}\n  labels: {}\n  non-zeros A/B/C: {}/{}/{}\n",
               file.string(), r.num_constraints(), r.num_variables(), c.num_outputs, c.num_public_inputs,
               c.num_private_inputs, c.num_labels, r.a.non_zeros(), r.b.non_zeros(), r.c.non_zeros());
    return true;
  }
  return false;
}

}  // namespace pp::cli
