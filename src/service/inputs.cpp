// SPDX-License-Identifier: Apache-2.0 OR MIT
#include "inputs.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <random>
#include <stdexcept>
#include <system_error>

#include "errors.hpp"
#include "paths.hpp"
#include "proofpipe/engine/plan.hpp"
#include "proofpipe/groth16/prover.hpp"
#include "proofpipe/groth16/query_layout.hpp"
#include "proofpipe/io/params.hpp"
#include "proofpipe/io/snarkjs.hpp"
#include "proofpipe/io/witness.hpp"
#include "proofpipe/io/wtns.hpp"
#include "proofpipe/io/zkey.hpp"
#include "proofpipe/v1/prover.pb.h"

namespace pp::service {

namespace fs = std::filesystem;
namespace v1 = ::proofpipe::v1;

namespace {

constexpr std::size_t kMaxPartitions = 100000;
constexpr char kPpwMagic[] = "PPWITNS1";  // docs/FORMATS.md
constexpr char kZkeyMagic[] = "zkey";
constexpr char kWtnsMagic[] = "wtns";
// A snarkjs job's stored result starts with this marker, then a serialized Job carrying
// proof_json and public_json. A bellperson job's result is its raw proofs, whose first byte is a
// compressed G1 point's and has the compression flag (0x80) set, so the two never collide.
constexpr char kSnarkjsResult[] = "PPSNARKJS1\n";
constexpr std::size_t kSnarkjsResultBytes = sizeof kSnarkjsResult - 1;

// The first bytes of a file (fewer when it is shorter).
std::string file_head(const fs::path& p, std::size_t n) {
  std::ifstream f(p, std::ios::binary);
  std::string head(n, '\0');
  f.read(head.data(), std::streamsize(n));
  head.resize(std::size_t(std::max<std::streamsize>(f.gcount(), 0)));
  return head;
}

bool starts_with(std::span<const uint8_t> bytes, const char* magic) {
  const std::size_t n = std::strlen(magic);
  return bytes.size() >= n && std::memcmp(bytes.data(), magic, n) == 0;
}

// "'name.ppw' is" or "12 bytes are": the subject of a message about a witness.
std::string what_is(const fs::path* file, std::span<const uint8_t> bytes) {
  return file ? fmt::format("'{}' is", file->filename().string()) : fmt::format("{} bytes are", bytes.size());
}

std::string indexed(const char* field, std::size_t i) { return fmt::format("{}[{}]", field, i); }

[[noreturn]] void invalid(const std::string& message) { throw RequestError(ErrorCode::invalid_argument, message); }

std::span<const uint8_t> bytes_of(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

}  // namespace

ResolvedKey resolve_key(const fs::path& root, const std::string& key_path) {
  ResolvedKey key;
  key.path = confine(root, key_path, "key_path");
  const bool named_zkey = key.path.extension() == ".zkey";
  const bool is_zkey = file_head(key.path, 4) == kZkeyMagic;
  if (named_zkey && !is_zkey)
    invalid(fmt::format("key_path: '{}' is named .zkey but is not a snarkjs zkey (no \"zkey\" magic)", key_path));
  if (is_zkey && !named_zkey)
    invalid(fmt::format("key_path: '{}' is a snarkjs zkey; name it *.zkey (the daemon tells key kinds by name)",
                        key_path));
  key.kind = is_zkey ? KeyKind::snarkjs : KeyKind::bellperson;
  return key;
}

// ----- Submit's checks -----------------------------------------------------------------------------

struct SubmitChecker::Header {
  KeyKind kind = KeyKind::bellperson;
  uintmax_t size = 0;
  fs::file_time_type mtime{};
  QueryLayout layout;     // bellperson
  uint64_t num_vars = 0;  // snarkjs: wires, the constant one included
  CurveId curve = CurveId::bls12_381;  // snarkjs: the .zkey's curve (its .wtns are over its field)
};

SubmitChecker::SubmitChecker(fs::path root, uint64_t host_budget) : root_(std::move(root)), host_budget_(host_budget) {}
SubmitChecker::~SubmitChecker() = default;

std::shared_ptr<const SubmitChecker::Header> SubmitChecker::header(const ResolvedKey& key, const std::string& key_path) {
  std::error_code ec;
  const uintmax_t size = fs::file_size(key.path, ec);
  const fs::file_time_type mtime = fs::last_write_time(key.path, ec);
  {
    std::lock_guard lock(mu_);
    if (auto it = headers_.find(key.path);
        it != headers_.end() && it->second->size == size && it->second->mtime == mtime && it->second->kind == key.kind)
      return it->second;
  }
  auto h = std::make_shared<Header>();
  h->kind = key.kind;
  h->size = size;
  h->mtime = mtime;
  try {
    if (key.kind == KeyKind::bellperson) {
      h->layout = params_layout(read_params_header(key.path), key_path);
    } else {
      ZkeyReadOptions o;
      o.header_only = true;
      h->curve = zkey_curve(key.path);
      h->num_vars = h->curve == CurveId::bn254 ? read_zkey<bn254::Bn254>(key.path, o).num_vars
                                               : read_zkey(key.path, o).num_vars;
    }
  } catch (const std::exception& e) {
    invalid(fmt::format("key_path: {}", e.what()));
  }
  std::lock_guard lock(mu_);
  if (headers_.size() >= 1024) headers_.clear();  // a bound, not a policy: headers are cheap to read again
  headers_[key.path] = h;
  return h;
}

std::size_t SubmitChecker::check(const v1::SubmitRequest& req) {
  const ResolvedKey key = resolve_key(root_, req.key_path());
  const std::size_t paths = std::size_t(req.witness_paths_size()), inline_ = std::size_t(req.witnesses_size());
  if (paths == 0 && inline_ == 0)
    invalid(key.kind == KeyKind::bellperson
                ? "witness_paths, witnesses: give one .ppw witness per partition (paths or inline bytes)"
                : "witness_paths, witnesses: give the .wtns witness (a path or its bytes)");
  if (paths != 0 && inline_ != 0) invalid("witness_paths, witnesses: give one or the other, not both");
  if (paths + inline_ > kMaxPartitions)
    invalid(fmt::format("witness_paths, witnesses: {} partitions, at most {}", paths + inline_, kMaxPartitions));
  if (key.kind == KeyKind::snarkjs && paths + inline_ != 1)
    invalid(fmt::format("witness_paths, witnesses: {} witnesses; a snarkjs job proves one .wtns (one proof per "
                        "witness, as snarkjs does): submit one job per witness",
                        paths + inline_));
  const std::shared_ptr<const Header> h = header(key, req.key_path());

  // One witness: its magic first (a clear word for a wrong file), then its counts against the key.
  auto check_one = [&](const std::string& field, const fs::path* file, std::span<const uint8_t> bytes) {
    const std::string head = file ? file_head(*file, 8) : std::string(reinterpret_cast<const char*>(bytes.data()),
                                                                      std::min<std::size_t>(bytes.size(), 8));
    const std::span<const uint8_t> head_bytes = bytes_of(head);
    if (key.kind == KeyKind::bellperson) {
      if (starts_with(head_bytes, kWtnsMagic))
        invalid(fmt::format("{}: a circom .wtns witness; key_path is a bellperson .params key, which proves .ppw "
                            "witnesses (a .wtns goes with its circuit's .zkey)",
                            field));
      if (!starts_with(head_bytes, kPpwMagic))
        invalid(fmt::format("{}: {} not a .ppw witness (no PPWITNS1 magic)", field, what_is(file, bytes)));
      WitnessHeader w;
      try {
        w = file ? read_witness_header(*file) : parse_witness_header(bytes, field);
      } catch (const std::exception& e) {
        invalid(file ? fmt::format("{}: {}", field, e.what()) : std::string(e.what()));
      }
      try {
        h->layout.check_counts(w.rows, w.inputs, w.aux, field + ": ");
      } catch (const WitnessError& e) {
        invalid(e.what());
      }
      if (const uint64_t need = engine::witness_bytes(w.rows, w.inputs, w.aux); host_budget_ && need > host_budget_)
        throw RequestError(ErrorCode::resource_exhausted,
                           fmt::format("{}: one partition needs {} of host memory, more than the whole --host-budget "
                                       "of {}: it could never run",
                                       field, engine::format_bytes(need), engine::format_bytes(host_budget_)));
      return;
    }
    if (starts_with(head_bytes, kPpwMagic))
      invalid(fmt::format("{}: a .ppw witness; key_path is a snarkjs .zkey, which proves circom .wtns witnesses",
                          field));
    if (!starts_with(head_bytes, kWtnsMagic))
      invalid(fmt::format("{}: {} not a circom .wtns witness (no \"wtns\" magic)", field, what_is(file, bytes)));
    // The values are read (and range-checked) in the .zkey's field: a .wtns of the other curve is
    // named by its prime.
    std::size_t values = 0;
    try {
      if (h->curve == CurveId::bn254)
        values = (file ? read_wtns<bn254::Fr>(*file) : parse_wtns<bn254::Fr>(bytes, field)).size();
      else
        values = (file ? read_wtns(*file) : parse_wtns(bytes, field)).size();
    } catch (const std::exception& e) {
      invalid(file ? fmt::format("{}: {}", field, e.what()) : std::string(e.what()));
    }
    if (values != h->num_vars)
      invalid(fmt::format("{}: {} values, the zkey's circuit has nVars = {} (the witness belongs to another circuit "
                          "or another compilation)",
                          field, values, h->num_vars));
  };
  for (std::size_t i = 0; i < paths; ++i) {
    const fs::path file = confine(root_, req.witness_paths(int(i)), "witness_paths", i);
    check_one(indexed("witness_paths", i), &file, {});
  }
  for (std::size_t i = 0; i < inline_; ++i) check_one(indexed("witnesses", i), nullptr, bytes_of(req.witnesses(int(i))));
  return paths + inline_;
}

// ----- snarkjs keys and proofs -----------------------------------------------------------------------

namespace {

// snarkjs_result on a key over curve E.
template <class E>
v1::Job snarkjs_result_of(std::span<const uint8_t> proof_bytes, const fs::path& path, std::span<const uint8_t> bytes,
                          std::size_t num_public, const std::string& field) {
  using F = typename E::Fr;
  using P = ProofOf<E>;
  if (proof_bytes.size() != P::kBytes)
    throw std::logic_error(fmt::format("snarkjs_result: {} proof bytes, a proof of this curve has {}", proof_bytes.size(),
                                       P::kBytes));
  std::vector<F> z;
  try {
    z = path.empty() ? parse_wtns<F>(bytes, field) : read_wtns_prefix<F>(path, num_public + 1);
  } catch (const std::exception& e) {
    throw std::invalid_argument(fmt::format("{}: {}", field, e.what()));
  }
  if (z.size() < num_public + 1)
    throw std::invalid_argument(fmt::format("{}: {} values, fewer than the key's {} public signals", field, z.size(),
                                            num_public));
  const P proof = P::from_bytes(std::span<const uint8_t, P::kBytes>(proof_bytes.data(), P::kBytes));
  v1::Job result;
  result.set_proof_json(proof_to_snarkjs_json(proof));
  result.set_public_json(public_to_snarkjs_json(std::span<const F>(z.data() + 1, num_public)));
  return result;
}

}  // namespace

std::vector<uint8_t> snarkjs_result(pp_curve curve, std::span<const uint8_t> proof_bytes, const fs::path& path,
                                    std::span<const uint8_t> bytes, std::size_t num_public, const std::string& field) {
  const v1::Job result = curve == PP_CURVE_BN254
                             ? snarkjs_result_of<bn254::Bn254>(proof_bytes, path, bytes, num_public, field)
                             : snarkjs_result_of<Bls12_381>(proof_bytes, path, bytes, num_public, field);
  std::string body;
  if (!result.SerializeToString(&body)) throw std::runtime_error("cannot serialize a snarkjs result");
  const std::string stored = std::string(kSnarkjsResult, kSnarkjsResultBytes) + body;
  return std::vector<uint8_t>(stored.begin(), stored.end());
}

bool decode_snarkjs_result(std::span<const uint8_t> stored, v1::Job* out) {
  if (stored.size() < kSnarkjsResultBytes || std::memcmp(stored.data(), kSnarkjsResult, kSnarkjsResultBytes) != 0)
    return false;
  v1::Job result;
  if (!result.ParseFromArray(stored.data() + kSnarkjsResultBytes, int(stored.size() - kSnarkjsResultBytes)))
    throw std::runtime_error("a stored snarkjs result cannot be parsed");
  out->set_proof_json(result.proof_json());
  out->set_public_json(result.public_json());
  return true;
}

}  // namespace pp::service
