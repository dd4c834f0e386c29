// What a job proves: its key (a bellperson .params or a snarkjs .zkey) and its witnesses, checked
// at Submit against each other before anything is journaled, and the snarkjs side of proving
// (bellperson jobs go through the C API's engine; snarkjs jobs through the CPU prover in
// snarkjs's convention, as `proofpipe prove circuit.zkey witness.wtns` does).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

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

// A loaded snarkjs key: the proving key in snarkjs's convention and what building a witness
// from a .wtns needs (the zkey's coefficients and column densities).
struct SnarkjsKey;
std::shared_ptr<const SnarkjsKey> load_snarkjs_key(const std::filesystem::path& path);
struct SnarkjsKeyInfo {
  uint64_t num_inputs = 0, num_aux = 0, domain_size = 0;
};
SnarkjsKeyInfo info_of(const SnarkjsKey& key);

// Proves one .wtns (a file, or its bytes when path is empty) for the key on the CPU and checks
// the proof against the key's verifying key before returning it. The result is what the job
// keeps: proof_json and public_json as snarkjs writes them, encoded by encode_snarkjs_result.
// std::invalid_argument naming `field` when the witness does not fit or does not satisfy.
std::vector<uint8_t> prove_snarkjs(const SnarkjsKey& key, const std::filesystem::path& path,
                                   std::span<const uint8_t> bytes, const std::string& field);
// A stored job result: a snarkjs job's goes back into Job.proof_json / public_json (true); false
// for anything else (a bellperson job's raw proofs), leaving *out alone.
bool decode_snarkjs_result(std::span<const uint8_t> stored, proofpipe::v1::Job* out);

}  // namespace pp::service
