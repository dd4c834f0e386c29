// SPDX-License-Identifier: Apache-2.0 OR MIT
// The C API's inputs (internal): what callers hand in — assignment arrays, .ppw files and bytes,
// circom .r1cs + .wtns — checked and turned into witnesses, and the randomisers of a request.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "internal.hpp"

namespace pp::capi {

// Little-endian u64 loads and stores (scalars cross the API as 4 LE limbs).
uint64_t load_u64_le(const uint8_t* p);
void store_u64_le(uint8_t* p, uint64_t v);
// A Montgomery-form scalar of either curve's field as it crosses the API (4 LE limbs, < r):
// false when the limbs are >= r. Instantiated for Fr and bn254::Fr.
template <class F>
bool load_montgomery(F& out, const uint8_t* bytes);
template <class F>
void store_montgomery(uint8_t* bytes, const F& x);
// Copies and range-checks n caller scalars on every core; ApiError names the first bad index.
template <class F>
std::vector<F> load_scalars_of(const uint8_t* bytes, std::size_t n, const std::string& what);
std::vector<Fr> load_scalars(const uint8_t* bytes, std::size_t n, const std::string& what);
// The ApiError (PP_ERR_INVALID_ARGUMENT) of a caller scalar what[bad] that is not below r.
[[noreturn]] void throw_unreduced(const std::string& what, std::size_t bad);

// One in-memory input as a witness (arrays copied, bytes parsed, circom files evaluated); a .ppw
// *file* is read while proving instead (PendingInput). ApiError / PP_ERR_WITNESS name input k.
// `borrow`: the caller's assignment arrays are proved where they lie (views, HostArray::borrow),
// not copied, and range-checked by the prover (ScalarRangeError, which run_request names as
// throw_unreduced does); the caller keeps them valid and unchanged while the witness is used.
Witness witness_from_input(const pp_input& in, std::size_t k, const KeyImpl& key, bool borrow = false);
// A borrowed assignment (PP_INPUT_ASSIGNMENT) whose a, b and c are copied (on every core, not
// range-checked: the prover checks every value) and whose other arrays are read where they lie.
Witness witness_copying_abc(const pp_input& in, std::size_t k);
// The column densities of one partition's input, without its scalars where the form allows.
Densities densities_of_input(const pp_input& in, const KeyImpl& key);

// Every reader failure of a witness becomes PP_ERR_WITNESS with the input named.
template <class F>
auto as_witness_error(const std::string& where, F&& read) {
  try {
    return read();
  } catch (const ApiError&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    throw ApiError(PP_ERR_WITNESS, where + ": " + e.what());
  }
}

// One partition of a request: a witness already in memory (copied from the caller's arrays or
// bytes), or a .ppw file whose header was checked at start and whose scalars are read while the
// partitions before it prove.
struct PendingInput {
  std::shared_ptr<const Witness> witness;
  std::string file;
  // pp_prove, or pp_prove_start_with borrowing: the caller's assignment arrays, valid until the
  // request ends, checked while the partitions before it prove (instead of all before the first)
  // and proved where they lie. The pp_input is a copy (the caller's may be gone); its arrays are not.
  std::optional<pp_input> borrowed;
  // PP_BORROW_ASSIGNMENT: of the borrowed arrays, a, b and c are copied (witness_copying_abc)
  // ahead of the submissions, and the caller may free them once every input's copy is made.
  bool copy_abc = false;
};

// Everything a proof request needs, owned: what pp_prove_start keeps and pp_prove uses.
struct Request {
  std::vector<PendingInput> inputs;
  std::vector<Randomizers> randomizers;
  // A BN254 key's request (PP_INPUT_WTNS inputs of a bn128 .zkey): each input's witness, computed
  // at start from its .wtns and the key's coefficients, and its r, s; `inputs` is then empty.
  std::vector<std::shared_ptr<const bn254::Witness>> bn254_witnesses;
  std::vector<bn254::Randomizers> bn254_randomizers;
  int backend = -1;  // the engine backend every partition runs on (pp_prove_options.gpu); -1: any
};

// Checks every input of a request and draws or loads r, s. In-memory inputs are copied now under
// PP_BORROW_NONE; under PP_BORROW_ALL (pp_prove) assignment arrays are borrowed, checked partition
// by partition; under PP_BORROW_ASSIGNMENT they are borrowed with their a, b, c marked copy_abc.
Request copy_request(const KeyImpl& key, const pp_input* inputs, std::size_t n, const uint64_t* seed, int borrow);

}  // namespace pp::capi
