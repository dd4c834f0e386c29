// SPDX-License-Identifier: Apache-2.0 OR MIT
// libproofpipe_supraseal.so: SupraSeal C2's C ABI (what the Rust crate `supraseal-c2` links
// against) implemented on proofpipe's public C API (include/proofpipe/proofpipe.h). Design and the
// differences from SupraSeal: docs/SUPRASEAL.md. What it shares with the cuzk drop-in (the
// engine, the SRS handles, the checks, the proof layout) is in abi_common.cpp.
//
// - One process-wide pp_engine, made on first use; calls are not serialised (the engine is
//   thread-safe), and without a GPU it proves on the CPU.
// - Every argument is validated before any work; a bad one is a RustError naming the circuit
//   and the field, never an assert.
// - The caller's arrays are handed to pp_prove as they are (blst_fr is pp's layout).
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "abi_common.hpp"
#include "proofpipe/proofpipe.h"
#include "supraseal_c2.h"

namespace {

using namespace pp::supraseal;

RustError generate(const Assignment* provers, std::size_t num_circuits, const blst_fr* r_s, const blst_fr* s_s,
                   groth16_proof* proofs, const SRS* srs) {
  const std::string fn = "generate_groth16_proofs_c: ";
  const Call call = prepare_call(fn, provers, num_circuits, r_s, s_s, srs);
  if (!proofs) return to_rust(EINVAL, fn + "proofs is NULL");
  std::vector<uint8_t> compressed(num_circuits * PP_PROOF_BYTES);
  std::size_t size = compressed.size();
  pp_error err;
  if (pp_prove(call.engine, call.key, call.inputs.data(), num_circuits, nullptr, compressed.data(), &size, &err) !=
      PP_OK)
    throw failure_of(fn, err);
  if (size != compressed.size())
    return to_rust(ENOTRECOVERABLE, fn + "the prover wrote " + std::to_string(size) + " bytes, expected " +
                                        std::to_string(compressed.size()));
  decode_proofs(fn, compressed.data(), num_circuits, proofs);
  return ok();
}

}  // namespace

extern "C" {

PP_SUPRASEAL_API RustError generate_groth16_proofs_c(const Assignment* provers, size_t num_circuits,
                                                     const blst_fr* r_s, const blst_fr* s_s, groth16_proof* proofs,
                                                     const SRS* srs) {
  return guarded("generate_groth16_proofs_c", [&] { return generate(provers, num_circuits, r_s, s_s, proofs, srs); });
}

}  // extern "C"
