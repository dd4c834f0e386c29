// SPDX-License-Identifier: Apache-2.0 OR MIT
// What a job proves: its key (a bellperson .params or a snarkjs .zkey) and its witnesses, checked
// at Submit against each other before anything is journaled, and a snarkjs job's result (both
// kinds prove through the C API's engine; a .zkey key in snarkjs's convention, as `proofpipe
// prove circuit.zkey witness.wtns` does).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "proofpipe/proofpipe.h"

namespace proofpipe::v1 {
class SubmitRequest;
class Job;
}  // namespace proofpipe::v1

namespace pp::service {

enum class KeyKind { bellperson, snarkjs };

struct ResolvedKey {
  std::filesystem::path path;  // canonical, inside the data root
  KeyKind kind = KeyKind::bellperson;
};

// Confines key_path under root (paths.hpp) and tells its kind: a file named *.zkey must be a
// snarkjs zkey ("zkey" magic) and a zkey must be named *.zkey; anything else is a .params.
// RequestError(invalid_argument) naming key_path otherwise.
ResolvedKey resolve_key(const std::filesystem::path& root, const std::string& key_path);

// Submit's checks of a request against its key, without reading a proving-key point or a
// witness value of a .ppw: every witness path confined under the root, each witness of the
// key's format (.ppw for .params keys, .wtns for .zkey keys) and counts (inputs, aux, rows for
// .params; nVars for .zkey), inline bytes whole (not truncated). RequestError(invalid_argument)
// naming the field and index (witness_paths[3], witnesses[0]) and what does not fit. A key's
// header is read once per file version (path, size, modification time) and kept. With a host
// budget (the engine's --host-budget, bytes; 0: none), a .ppw partition that needs more host
// memory than the whole budget, so that it could never run, is RESOURCE_EXHAUSTED.
class SubmitChecker {
 public:
  SubmitChecker(std::filesystem::path root, uint64_t host_budget);
  ~SubmitChecker();
  // The number of partitions (one per witness).
  std::size_t check(const proofpipe::v1::SubmitRequest& req);

 private:
  struct Header;
  std::shared_ptr<const Header> header(const ResolvedKey& key, const std::string& key_path);
  std::filesystem::path root_;
  uint64_t host_budget_ = 0;
  std::mutex mu_;
  std::map<std::filesystem::path, std::shared_ptr<const Header>> headers_;
};

// A snarkjs job's result as the job keeps it: proof_json and public_json as snarkjs writes them,
// from the proof (as the C API returns it for a key over `curve`: PP_PROOF_BYTES or
// PP_PROOF_BYTES_BN254) and the public signals of the job's .wtns (a file, or its bytes when path
// is empty; z[1 .. num_public]). std::invalid_argument naming `field` when the witness cannot be read.
std::vector<uint8_t> snarkjs_result(pp_curve curve, std::span<const uint8_t> proof, const std::filesystem::path& path,
                                    std::span<const uint8_t> bytes, std::size_t num_public, const std::string& field);
// A stored job result: a snarkjs job's goes back into Job.proof_json / public_json (true); false
// for anything else (a bellperson job's raw proofs), leaving *out alone.
bool decode_snarkjs_result(std::span<const uint8_t> stored, proofpipe::v1::Job* out);

}  // namespace pp::service
