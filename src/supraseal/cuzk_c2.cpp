// SPDX-License-Identifier: Apache-2.0 OR MIT
// libproofpipe_cuzk.so: the C ABI of Curio's fork of SupraSeal C2 (the GPU engine behind cuzk),
// implemented on proofpipe's public C API. What it shares with the upstream drop-in (the engine,
// the SRS handles, the checks, the proof layout) is in abi_common.cpp; docs/CUZK.md describes it.
//
// - start checks every argument, queues the circuits on the process-wide engine and returns a
//   handle once a, b and c are copied (PP_BORROW_ASSIGNMENT: the copies are made while the first
//   circuits prove); the assignments and densities are read in place until finalize, which
//   waits and writes the proofs. The fork's contract exactly: cuzk frees a, b, c after start.
// - gpu_index >= 0 pins the call's circuits to that GPU (a CUDA ordinal), -1 lets the engine
//   place them. gpu_mtx is accepted and never locked: the engine's workers and its memory and
//   compute tokens interleave callers on a GPU without one.
// - A pending handle is an opaque number, not a pointer: an unknown or already finalized
//   handle is found out and reported, never dereferenced.
#include "cuzk_c2.h"

#include <cerrno>
#include <cinttypes>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "abi_common.hpp"
#include "proofpipe/proofpipe.h"

namespace {

using namespace pp::supraseal;

// A proof started and not yet finalized: the engine's pending request and the call it borrows
// from (its inputs point into the call's density copies).
struct Pending {
  Call call;
  pp_pending* pending = nullptr;
  ~Pending() { pp_pending_free(pending); }  // cancels if still running and waits: nothing reads the arrays after
};

// The live pending proofs by handle. Handles are numbers that are never reused, so a handle
// finalized twice, or one this library never gave out, is recognised as unknown.
class PendingTable {
 public:
  void* add(std::unique_ptr<Pending> p) {
    std::lock_guard lock(mu_);
    const uint64_t id = next_++;
    live_.emplace(id, std::move(p));
    return handle_of(id);
  }
  // The pending proof of `handle`, removed from the table; null for an unknown handle.
  std::unique_ptr<Pending> take(void* handle) {
    std::lock_guard lock(mu_);
    const auto it = live_.find(id_of(handle));
    if (it == live_.end()) return nullptr;
    std::unique_ptr<Pending> p = std::move(it->second);
    live_.erase(it);
    return p;
  }

 private:
  // id -> handle: shifted and tagged so that a handle is never NULL and never a small integer.
  static void* handle_of(uint64_t id) { return reinterpret_cast<void*>(uintptr_t((id << 4) | 0x9)); }
  static uint64_t id_of(void* handle) {
    const auto v = uint64_t(reinterpret_cast<uintptr_t>(handle));
    return (v & 0xf) == 0x9 ? v >> 4 : 0;  // 0 is never an id
  }
  std::mutex mu_;
  uint64_t next_ = 1;
  std::unordered_map<uint64_t, std::unique_ptr<Pending>> live_;
};

PendingTable& pending_table() {
  static PendingTable* table = new PendingTable;  // never destroyed: proofs may be pending at exit
  return *table;
}

// create_gpu_mutex's handles: tokens, never locked; kept so that destroy can tell its own.
class MutexTokens {
 public:
  void* create() {
    std::lock_guard lock(mu_);
    auto token = std::make_unique<char>(0);
    void* h = token.get();
    live_.emplace(h);
    tokens_.push_back(std::move(token));
    return h;
  }
  void destroy(void* h) {
    std::lock_guard lock(mu_);
    if (!live_.erase(h)) return;
    for (auto it = tokens_.begin(); it != tokens_.end(); ++it)
      if (it->get() == h) {
        tokens_.erase(it);
        return;
      }
  }

 private:
  std::mutex mu_;
  std::unordered_set<void*> live_;
  std::vector<std::unique_ptr<char>> tokens_;
};

MutexTokens& mutex_tokens() {
  static MutexTokens* tokens = new MutexTokens;
  return *tokens;
}

// gpu_index (a CUDA ordinal, or -1) -> the engine's GPU index that pp_prove_options.gpu takes.
int engine_gpu_of(const std::string& fn, pp_engine* engine, int gpu_index) {
  if (gpu_index == -1) return -1;
  pp_engine_stats stats;
  pp_error err;
  if (pp_engine_stats_get(engine, &stats, &err) != PP_OK) throw failure_of(fn, err);
  std::string ordinals;
  for (uint32_t i = 0; i < stats.gpus; ++i) {
    pp_gpu_info info;
    if (pp_engine_gpu_info_get(engine, i, &info, &err) != PP_OK) throw failure_of(fn, err);
    if (gpu_index >= 0 && info.device == gpu_index) return int(i);
    ordinals += (i ? ", " : "") + std::to_string(info.device);
  }
  if (stats.gpus == 0 && gpu_index == 0) return 0;  // the CPU prover stands in for GPU 0
  throw Failure{EINVAL, fn + "gpu_index is " + std::to_string(gpu_index) + "; this library proves on " +
                            (stats.gpus == 0 ? std::string("the CPU (no GPU is in use): give 0 or -1")
                                             : "GPU(s) " + ordinals + " (CUDA ordinals; PROOFPIPE_GPUS selects them)"
                                               ", or -1 for any")};
}

// Checks a prove call and queues it: the pending proof, not yet in the table.
// borrow: PP_BORROW_ASSIGNMENT for start (a, b, c are the caller's again when it returns), or
// PP_BORROW_ALL for the one call, which returns only when every array has been read.
std::unique_ptr<Pending> begin(const std::string& fn, const Assignment* provers, std::size_t num_circuits,
                               const blst_fr* r_s, const blst_fr* s_s, const SRS* srs, int gpu_index, int borrow) {
  auto p = std::make_unique<Pending>();
  p->call = prepare_call(fn, provers, num_circuits, r_s, s_s, srs);
  pp_prove_options options;
  pp_prove_options_default(&options);
  options.gpu = engine_gpu_of(fn, p->call.engine, gpu_index);
  options.borrow = borrow;
  pp_error err;
  if (pp_prove_start_with(p->call.engine, p->call.key, p->call.inputs.data(), num_circuits, &options, &p->pending,
                          &err) != PP_OK)
    throw failure_of(fn, err);
  return p;
}

// Waits for a pending proof and writes its proofs.
RustError end(const std::string& fn, Pending& p, groth16_proof* proofs) {
  const std::size_t n = p.call.inputs.size();
  std::vector<uint8_t> compressed(n * PP_PROOF_BYTES);
  std::size_t size = compressed.size();
  pp_error err;
  if (pp_prove_finalize(p.pending, compressed.data(), &size, &err) != PP_OK) throw failure_of(fn, err);
  if (size != compressed.size())
    return to_rust(ENOTRECOVERABLE, fn + "the prover wrote " + std::to_string(size) + " bytes, expected " +
                                        std::to_string(compressed.size()));
  decode_proofs(fn, compressed.data(), n, proofs);
  return ok();
}

std::string handle_name(const void* h) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", h);
  return buf;
}

}  // namespace

extern "C" {

PP_SUPRASEAL_API void* create_gpu_mutex(void) {
  try {
    return mutex_tokens().create();
  } catch (...) {
    return nullptr;  // out of memory: NULL is a valid gpu_mtx (the fork's "use the internal one")
  }
}

PP_SUPRASEAL_API void destroy_gpu_mutex(void* mtx) {
  if (!mtx) return;
  try {
    mutex_tokens().destroy(mtx);
  } catch (...) {
  }
}

PP_SUPRASEAL_API RustError generate_groth16_proofs_c(const Assignment* provers, size_t num_circuits,
                                                     const blst_fr* r_s, const blst_fr* s_s, groth16_proof* proofs,
                                                     const SRS* srs, void* gpu_mtx, int gpu_index) {
  (void)gpu_mtx;
  return guarded("generate_groth16_proofs_c", [&]() -> RustError {
    const std::string fn = "generate_groth16_proofs_c: ";
    if (!proofs) {
      (void)prepare_call(fn, provers, num_circuits, r_s, s_s, srs);  // an earlier argument's error first
      return to_rust(EINVAL, fn + "proofs is NULL");
    }
    const std::unique_ptr<Pending> p = begin(fn, provers, num_circuits, r_s, s_s, srs, gpu_index, PP_BORROW_ALL);
    return end(fn, *p, proofs);
  });
}

PP_SUPRASEAL_API RustError generate_groth16_proofs_start_c(const Assignment* provers, size_t num_circuits,
                                                           const blst_fr* r_s, const blst_fr* s_s, const SRS* srs,
                                                           void* gpu_mtx, int gpu_index, void** pending_out) {
  (void)gpu_mtx;
  return guarded("generate_groth16_proofs_start_c", [&]() -> RustError {
    const std::string fn = "generate_groth16_proofs_start_c: ";
    if (!pending_out) return to_rust(EINVAL, fn + "pending_out is NULL");
    *pending_out = nullptr;
    // The fork's contract: a, b, c may be freed when start returns (cuzk does), the rest not.
    *pending_out =
        pending_table().add(begin(fn, provers, num_circuits, r_s, s_s, srs, gpu_index, PP_BORROW_ASSIGNMENT));
    return ok();
  });
}

PP_SUPRASEAL_API RustError finalize_groth16_proof_c(void* pending, groth16_proof* proofs) {
  return guarded("finalize_groth16_proof_c", [&]() -> RustError {
    const std::string fn = "finalize_groth16_proof_c: ";
    const std::unique_ptr<Pending> p = pending_table().take(pending);
    if (!p)
      return to_rust(EINVAL, fn + "pending " + handle_name(pending) +
                                 " is not a pending proof of this library (finalized or destroyed already, or never "
                                 "returned by generate_groth16_proofs_start_c)");
    if (!proofs) return to_rust(EINVAL, fn + "proofs is NULL (the pending proof is cancelled and freed)");
    return end(fn, *p, proofs);
  });
}

PP_SUPRASEAL_API void destroy_pending_proof(void* pending) {
  try {
    pending_table().take(pending).reset();  // cancels, waits, frees; nothing for an unknown handle
  } catch (...) {
  }
}

}  // extern "C"
