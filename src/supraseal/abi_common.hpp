// SPDX-License-Identifier: Apache-2.0 OR MIT
// What the two SupraSeal-ABI drop-ins share (internal; abi_common.cpp also defines the SRS
// functions of abi_types.h, the same in both ABIs): libproofpipe_supraseal.so (upstream
// SupraSeal C2's ABI, supraseal_c2.cpp) and libproofpipe_cuzk.so (Curio's fork of it, cuzk_c2.cpp)
// differ only in their prove entry points. Both stand on proofpipe's public C API: one
// process-wide engine, the SRS handles and their path cache, every argument checked before any
// work (a bad one is a RustError naming the circuit and the field), and the proofs decoded into
// blst's affine layout. docs/SUPRASEAL.md and docs/CUZK.md describe the libraries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "proofpipe/proofpipe.h"
#include "abi_types.h"

namespace pp::supraseal {

// A failure on its way to a RustError: an errno value and the message.
struct Failure {
  int code;
  std::string message;
};

RustError ok();
// The message is copied with malloc (the caller frees it); code 0 becomes ENOTRECOVERABLE.
RustError to_rust(const Failure& f);
RustError to_rust(int code, const std::string& message);
// pp_status -> the errno value SupraSeal would have used for the same kind of failure.
int errno_of(pp_status status);
// pp's messages name pp_prove's arguments; the caller knows them as this ABI's fields.
std::string in_abi_terms(std::string m);
// A pp_error from a prove call as this ABI's failure: `fn` (the function, with ": ") and the
// message in the ABI's terms.
Failure failure_of(const std::string& fn, const pp_error& err);

// Runs body (which returns a RustError) with every C++ exception turned into a RustError, so
// that nothing unwinds into Rust or C. A thrown Failure is returned as it is.
template <class F>
RustError guarded(const char* function, F&& body) {
  try {
    return body();
  } catch (const Failure& f) {
    return to_rust(f);
  } catch (const std::bad_alloc&) {
    return to_rust(ENOMEM, std::string(function) + ": out of memory");
  } catch (const std::exception& e) {
    return to_rust(ENOTRECOVERABLE, std::string(function) + ": " + e.what());
  } catch (...) {
    return to_rust(ENOTRECOVERABLE, std::string(function) + ": unknown exception");
  }
}

// The process-wide engine, made on first use from the environment (PROOFPIPE_GPUS,
// PROOFPIPE_GPU_WORKERS, PROOFPIPE_HOST_MEMORY); lives until the process ends. Throws the
// Failure that kept it from being made (remembered: every later call gets it too).
pp_engine* shared_engine();

// One checked call: pp_prove's inputs over the caller's arrays (borrowed, not copied), and the
// copies of density words whose bits past the end the caller left set (pp wants them clear).
// The inputs point into density_copies: keep the Call while they are in use.
struct Call {
  pp_engine* engine = nullptr;
  pp_key* key = nullptr;
  std::vector<pp_input> inputs;
  std::vector<std::vector<uint64_t>> density_copies;
};

// Checks every argument of a prove call against the key (fn: the function's name with ": ",
// for the messages) and builds its inputs; throws Failure. `proofs` is not an argument here:
// the split calls take it later.
Call prepare_call(const std::string& fn, const Assignment* provers, std::size_t num_circuits, const blst_fr* r_s,
                  const blst_fr* s_s, const SRS* srs);

// pp's compressed proofs (PP_PROOF_BYTES each) into blst's affine coordinates; throws Failure.
void decode_proofs(const std::string& fn, const uint8_t* compressed, std::size_t n, groth16_proof* out);

}  // namespace pp::supraseal
