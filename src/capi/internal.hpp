// SPDX-License-Identifier: Apache-2.0 OR MIT
// Internals of the C API shared by its files (not installed): the objects behind the handles,
// the API's own error, and the checks every file makes. proofpipe.cpp: the handles, the one
// mapping of errors to pp_status and the exported functions; inputs.cpp: what callers hand in
// (arrays, .ppw files and bytes, circom files) checked and turned into witnesses;
// request.cpp: a request proved on the engine (read-ahead, prefetching, cancellation).
#pragma once

#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "proofpipe/groth16/prover.hpp"
#include "proofpipe/io/zkey.hpp"
#include "proofpipe/proofpipe.h"
#include "proofpipe/runtime/runtime.hpp"

namespace pp::capi {

struct EngineImpl {
  std::unique_ptr<runtime::Runtime> runtime;
  // Witness files are read here: every core, but at low priority, so that reading partition k+1
  // takes what the engine's phases of partition k (checks, classification, staging copies)
  // leave and never delays them (the GPU would wait).
  tbb::task_arena readers{tbb::task_arena::automatic, 1, tbb::task_arena::priority::low};
  std::atomic<uint64_t> calls_succeeded{0}, calls_failed{0}, calls_cancelled{0};
};

struct KeyImpl {
  // A BLS12-381 key (pk, pvk set) or a BN254 key (pk_bn254, pvk_bn254, zkey_bn254 set: snarkjs
  // bn128 .zkey keys only): curve says which.
  pp_curve curve = PP_CURVE_BLS12_381;
  std::shared_ptr<const ProvingKey> pk;
  PreparedVerifyingKey pvk;
  std::shared_ptr<const bn254::ProvingKey> pk_bn254;
  bn254::PreparedVerifyingKey pvk_bn254;
  std::shared_ptr<const bn254::Zkey> zkey_bn254;
  // A key loaded from a snarkjs .zkey: its header and A/B coefficients, which turn a .wtns into
  // the prover's witness (witness_from_zkey; the points are in pk), and its column densities.
  // Null for a bellperson .params key.
  std::shared_ptr<const Zkey> zkey;
  Densities zkey_densities;  // either curve's .zkey
  mutable std::atomic<uint64_t> evictions{0};  // bookkeeping, not part of the key's value
  // The engines that proved with this key (and may hold device copies of it).
  mutable std::mutex users_mu;
  mutable std::vector<std::weak_ptr<EngineImpl>> users;

  void add_user(const std::shared_ptr<EngineImpl>& e) const {
    std::lock_guard lock(users_mu);
    users.erase(std::remove_if(users.begin(), users.end(), [](const auto& w) { return w.expired(); }), users.end());
    for (const auto& w : users)
      if (w.lock() == e) return;
    users.push_back(e);
  }
  std::vector<std::shared_ptr<EngineImpl>> live_users() const {
    std::lock_guard lock(users_mu);
    std::vector<std::shared_ptr<EngineImpl>> out;
    for (const auto& w : users)
      if (auto e = w.lock()) out.push_back(std::move(e));
    return out;
  }
  std::size_t proof_bytes() const { return curve == PP_CURVE_BN254 ? PP_PROOF_BYTES_BN254 : PP_PROOF_BYTES; }
  int evict_from(runtime::Runtime& rt) const { return pk_bn254 ? rt.evict(pk_bn254.get()) : rt.evict(pk.get()); }
  std::size_t residency_in(const runtime::Runtime& rt) const {
    return pk_bn254 ? rt.residency(pk_bn254.get()).size() : rt.residency(pk.get()).size();
  }
  // The last reference is gone: no engine keeps a device copy (or a pinned host copy) of it.
  ~KeyImpl() {
    try {
      for (auto& e : live_users()) evict_from(*e->runtime);
    } catch (...) {
    }
  }
};

// Thrown by the API's own checks: the status to return and the message.
struct ApiError : std::runtime_error {
  ApiError(pp_status s, const std::string& m) : std::runtime_error(m), status(s) {}
  pp_status status;
};

struct Cancelled : std::runtime_error {
  Cancelled() : std::runtime_error("cancelled by pp_cancel") {}
};

template <class T>
void require(const T* p, const char* name) {
  if (p == nullptr) throw ApiError(PP_ERR_NULL_POINTER, std::string(name) + " is NULL");
}

// "inputs[k]", as errors name an input.
std::string input_name(std::size_t k);

}  // namespace pp::capi
