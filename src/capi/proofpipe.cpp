// The C API (include/proofpipe/proofpipe.h): handles, input validation, the one mapping of
// internal errors to pp_status; proving goes to the process's engine (runtime/runtime.hpp).
#include "proofpipe/proofpipe.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "proofpipe/core/big_vector.hpp"
#include "proofpipe/engine/backend.hpp"
#include "proofpipe/engine/engine.hpp"
#include "proofpipe/engine/plan.hpp"
#include "proofpipe/io/params.hpp"
#include "proofpipe/io/r1cs_file.hpp"
#include "proofpipe/io/witness.hpp"
#include "proofpipe/io/wtns.hpp"
#include "proofpipe/runtime/runtime.hpp"

// ----- handles ------------------------------------------------------------------------------
// The C handles are thin owners of shared implementation objects, so that a pending proof can
// keep its engine and key alive after the caller has released its own handles.

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
  std::shared_ptr<const ProvingKey> pk;
  PreparedVerifyingKey pvk;
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
  // The last reference is gone: no engine keeps a device copy (or a pinned host copy) of it.
  ~KeyImpl() {
    try {
      for (auto& e : live_users()) e->runtime->evict(pk.get());
    } catch (...) {
    }
  }
};

}  // namespace pp::capi

struct pp_engine {
  std::shared_ptr<pp::capi::EngineImpl> impl;
};

struct pp_key {
  std::atomic<long> refs{1};
  std::shared_ptr<const pp::capi::KeyImpl> impl;
};

struct pp_pending {
  std::shared_ptr<pp::capi::EngineImpl> engine;
  std::shared_ptr<const pp::capi::KeyImpl> key;
  std::size_t partitions = 0;
  std::atomic<bool> cancel{false};
  std::atomic<std::size_t> partitions_done{0};
  std::atomic<bool> done{false};
  std::mutex jobs_mu;  // the engine jobs submitted so far, for pp_cancel
  std::vector<uint64_t> jobs;
  std::thread worker;
  std::once_flag joined;
  // Written by the worker before `done` is set, read-only afterwards.
  std::vector<pp::Proof> proofs;
  pp_status status = PP_OK;
  std::string message;
};

namespace pp::capi {
namespace {

// Thrown by the API's own checks: the status to return and the message.
struct ApiError : std::runtime_error {
  ApiError(pp_status s, const std::string& m) : std::runtime_error(m), status(s) {}
  pp_status status;
};

void clear_error(pp_error* err) {
  if (!err) return;
  err->code = PP_OK;
  err->message[0] = '\0';
}

pp_status report(pp_error* err, pp_status status, const std::string& message) {
  if (err) {
    err->code = status;
    const std::size_t n = std::min(message.size(), std::size_t(PP_ERROR_MESSAGE_BYTES - 1));
    std::memcpy(err->message, message.data(), n);
    err->message[n] = '\0';
    if (n < message.size() && n >= 3) std::memcpy(err->message + n - 3, "...", 3);
  }
  return status;
}

struct Cancelled : std::runtime_error {
  Cancelled() : std::runtime_error("cancelled by pp_cancel") {}
};

// THE mapping of internal errors to statuses (every entry point goes through it). `fallback` is
// the status of failures that are not classified (e.g. PP_ERR_KEY while loading a key).
pp_status status_of(const std::exception_ptr& error, pp_status fallback, std::string* message) {
  try {
    std::rethrow_exception(error);
  } catch (const ApiError& e) {
    *message = e.what();
    return e.status;
  } catch (const Cancelled& e) {
    *message = e.what();
    return PP_ERR_CANCELLED;
  } catch (const std::bad_alloc&) {
    *message = "out of memory";
    return PP_ERR_OUT_OF_MEMORY;
  } catch (const WitnessError& e) {  // a witness that does not fit the key or its circuit
    *message = e.what();
    return PP_ERR_WITNESS;
  } catch (const engine::HostBudgetError& e) {  // a partition larger than the whole host budget
    *message = e.what();
    return PP_ERR_OUT_OF_MEMORY;
  } catch (const engine::PlanError& e) {  // the key does not fit the device budget (no CPU fallback)
    *message = e.what();
    return PP_ERR_UNSUPPORTED;
  } catch (const engine::BackendError& e) {  // a device failed (no CPU fallback)
    *message = e.what();
    return PP_ERR_DEVICE;
  } catch (const std::exception& e) {
    *message = e.what();
    return fallback;
  } catch (...) {
    *message = "unknown exception";
    return PP_ERR_INTERNAL;
  }
}

// Runs one entry point: every exception becomes a status and a message, nothing escapes.
template <class F>
pp_status guarded(const char* function, pp_error* err, pp_status fallback, F&& body) {
  clear_error(err);
  try {
    body();
    return PP_OK;
  } catch (...) {
    std::string message;
    const pp_status status = status_of(std::current_exception(), fallback, &message);
    return report(err, status, std::string(function) + ": " + message);
  }
}

template <class T>
void require(const T* p, const char* name) {
  if (p == nullptr) throw ApiError(PP_ERR_NULL_POINTER, std::string(name) + " is NULL");
}

uint64_t load_u64_le(const uint8_t* p) {
  uint64_t v = 0;
  for (int k = 7; k >= 0; --k) v = (v << 8) | p[k];
  return v;
}
void store_u64_le(uint8_t* p, uint64_t v) {
  for (int k = 0; k < 8; ++k) p[k] = uint8_t(v >> (8 * k));
}

// A Montgomery-form scalar as it crosses the API (4 LE limbs, < r).
bool load_montgomery(Fr& out, const uint8_t* bytes) {
  Fr x;
  for (int i = 0; i < 4; ++i) x.l[i] = load_u64_le(bytes + 8 * i);
  Fr ignored;
  if (!Fr::from_canonical(ignored, x.l)) return false;  // the range check only: the limbs must be < r
  out = x;
  return true;
}
void store_montgomery(uint8_t* bytes, const Fr& x) {
  for (int i = 0; i < 4; ++i) store_u64_le(bytes + 8 * i, x.l[i]);
}

// Copies and range-checks n caller scalars on every core (a 2^27 partition's a, b, c are 12 GiB);
// the first bad index is reported.
std::vector<Fr> load_scalars(const uint8_t* bytes, std::size_t n, const std::string& what) {
  std::vector<Fr> out = big_vector<Fr>(n);
  std::atomic<std::size_t> first_bad{n};
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 1 << 14), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t i = r.begin(); i != r.end(); ++i) {
      if (load_montgomery(out[i], bytes + i * PP_FR_BYTES)) continue;
      std::size_t seen = first_bad.load();
      while (i < seen && !first_bad.compare_exchange_weak(seen, i)) {
      }
      return;
    }
  });
  if (const std::size_t bad = first_bad.load(); bad < n)
    throw ApiError(PP_ERR_INVALID_ARGUMENT,
                   what + "[" + std::to_string(bad) + "] is not a reduced Montgomery-form scalar (limbs >= r)");
  return out;
}

// A density bitmap whose word count and pointer check_assignment_shape has checked.
std::vector<uint64_t> load_bits(const uint64_t* words, std::size_t n_words, std::size_t n_bits, const std::string& what) {
  std::vector<uint64_t> out(words, words + n_words);
  if (n_bits % 64 != 0 && (out.back() >> (n_bits % 64)) != 0)
    throw ApiError(PP_ERR_INVALID_ARGUMENT, what + ": bits past variable " + std::to_string(n_bits - 1) +
                                                " are set in the last word (must be zero)");
  return out;
}

std::string input_name(std::size_t k) { return "inputs[" + std::to_string(k) + "]"; }

// The checks of an assignment that do not read its arrays: counts, pointers, density lengths.
void check_assignment_shape(const pp_assignment& as, const std::string& where) {
  if (as.num_rows == 0) throw ApiError(PP_ERR_INVALID_ARGUMENT, where + ".assignment.num_rows is 0");
  if (as.num_inputs == 0)
    throw ApiError(PP_ERR_INVALID_ARGUMENT, where + ".assignment.num_inputs is 0 (the constant 1 is input 0)");
  const std::size_t max_scalars = std::numeric_limits<std::size_t>::max() / PP_FR_BYTES;
  if (as.num_rows > max_scalars || as.num_inputs > max_scalars || as.num_aux > max_scalars)
    throw ApiError(PP_ERR_INVALID_ARGUMENT, where + ".assignment: a length overflows the address space");
  const std::string p = where + ".assignment.";
  require(as.a, (p + "a").c_str());
  require(as.b, (p + "b").c_str());
  require(as.c, (p + "c").c_str());
  require(as.input, (p + "input").c_str());
  if (as.num_aux > 0) require(as.aux, (p + "aux").c_str());
  auto words = [&](const uint64_t* w, std::size_t n_words, std::size_t n_bits, const char* name) {
    const std::size_t want = (n_bits + 63) / 64;
    if (n_words != want)
      throw ApiError(PP_ERR_INVALID_ARGUMENT, p + name + " has " + std::to_string(n_words) + " words, " +
                                                  std::to_string(n_bits) + " variables need " + std::to_string(want));
    if (want > 0) require(w, (p + name).c_str());
  };
  words(as.a_aux_density, as.a_aux_density_words, as.num_aux, "a_aux_density");
  words(as.b_input_density, as.b_input_density_words, as.num_inputs, "b_input_density");
  words(as.b_aux_density, as.b_aux_density_words, as.num_aux, "b_aux_density");
}

Witness witness_from_arrays(const pp_assignment& as, const std::string& where) {
  check_assignment_shape(as, where);
  const std::string p = where + ".assignment.";
  Witness w;
  w.a = load_scalars(as.a, as.num_rows, p + "a");
  w.b = load_scalars(as.b, as.num_rows, p + "b");
  w.c = load_scalars(as.c, as.num_rows, p + "c");
  w.input = load_scalars(as.input, as.num_inputs, p + "input");
  w.aux = load_scalars(as.aux, as.num_aux, p + "aux");
  w.densities.a_aux = load_bits(as.a_aux_density, as.a_aux_density_words, as.num_aux, p + "a_aux_density");
  w.densities.b_input = load_bits(as.b_input_density, as.b_input_density_words, as.num_inputs, p + "b_input_density");
  w.densities.b_aux = load_bits(as.b_aux_density, as.b_aux_density_words, as.num_aux, p + "b_aux_density");
  return w;
}

// A file or a byte range, for the readers that take either.
struct Source {
  bool is_file;
  std::string path;
  std::span<const uint8_t> bytes;
};
Source source(const pp_source& s, const std::string& what) {
  if (s.path) return {true, s.path, {}};
  if (s.data == nullptr)
    throw ApiError(s.size ? PP_ERR_NULL_POINTER : PP_ERR_INVALID_ARGUMENT,
                   what + ": neither path nor data is set");
  const std::string field = what.substr(what.rfind('.') + 1);  // "ppw", "r1cs", "wtns"
  return {false, field + ".data", std::span<const uint8_t>(s.data, s.size)};
}

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

Witness witness_from_input(const pp_input& in, std::size_t k) {
  const std::string where = input_name(k);
  // A C caller may store any int in the enum field; loading such a value as the C++ enum is
  // undefined behaviour (UBSan flags it), so the field is read as the int it is.
  static_assert(sizeof(pp_input_kind) == sizeof(int));
  int kind;
  std::memcpy(&kind, &in.kind, sizeof kind);
  switch (kind) {
    case PP_INPUT_ASSIGNMENT:
      return witness_from_arrays(in.assignment, where);
    case PP_INPUT_PPW: {
      const Source src = source(in.ppw, where + ".ppw");
      if (src.is_file) throw std::logic_error("witness_from_input: .ppw files are read while proving (PendingInput)");
      return as_witness_error(where, [&] { return parse_witness(src.bytes, src.path); });
    }
    case PP_INPUT_R1CS_WTNS: {
      const Source r1cs_src = source(in.r1cs, where + ".r1cs");
      const Source wtns_src = source(in.wtns, where + ".wtns");
      return as_witness_error(where, [&] {
        const CircomR1cs circuit =
            r1cs_src.is_file ? read_r1cs_file(r1cs_src.path) : parse_r1cs_file(r1cs_src.bytes, r1cs_src.path);
        circuit.r1cs.validate();
        const std::vector<Fr> z = wtns_src.is_file ? read_wtns(wtns_src.path) : parse_wtns(wtns_src.bytes, wtns_src.path);
        return witness_from_assignment(circuit.r1cs, z);
      });
    }
  }
  throw ApiError(PP_ERR_INVALID_ARGUMENT, where + ".kind is " + std::to_string(kind) +
                                              " (PP_INPUT_ASSIGNMENT, PP_INPUT_PPW or PP_INPUT_R1CS_WTNS)");
}

// The column densities of one partition's input, without its scalars where the form allows.
Densities densities_of_input(const pp_input& in) {
  const std::string where = "sample";
  int kind;
  std::memcpy(&kind, &in.kind, sizeof kind);
  if (kind == PP_INPUT_PPW && in.ppw.path)
    return as_witness_error(where, [&] { return read_witness_densities(in.ppw.path); });
  if (kind == PP_INPUT_ASSIGNMENT) {
    const pp_assignment& as = in.assignment;
    check_assignment_shape(as, where);
    const std::string p = where + ".assignment.";
    Densities d;
    d.a_aux = load_bits(as.a_aux_density, as.a_aux_density_words, as.num_aux, p + "a_aux_density");
    d.b_input = load_bits(as.b_input_density, as.b_input_density_words, as.num_inputs, p + "b_input_density");
    d.b_aux = load_bits(as.b_aux_density, as.b_aux_density_words, as.num_aux, p + "b_aux_density");
    return d;
  }
  return witness_from_input(in, 0).densities;
}

// A uniformly random scalar from the operating system (std::random_device reads getrandom /
// /dev/urandom on Linux): 255 random bits, rejected when >= r (about 1 draw in 10).
Fr os_random_scalar(std::random_device& rd) {
  for (;;) {
    uint64_t limbs[4];
    for (uint64_t& w : limbs) w = (uint64_t(rd()) << 32) | uint64_t(rd());
    limbs[3] >>= 1;
    Fr x;
    if (Fr::from_canonical(x, limbs)) return x;
  }
}

// One partition of a request: a witness already in memory (copied from the caller's arrays or
// bytes), or a .ppw file whose header was checked at start and whose scalars are read while the
// partitions before it prove.
struct PendingInput {
  std::shared_ptr<const Witness> witness;
  std::string file;
  // pp_prove only: the caller's assignment arrays, valid for the whole call, copied (and
  // checked) while the partitions before it prove instead of all before the first.
  const pp_input* borrowed = nullptr;
};

// Everything a proof request needs, owned: what pp_prove_start keeps and pp_prove uses.
struct Request {
  std::vector<PendingInput> inputs;
  std::vector<Randomizers> randomizers;
};

// The cheap checks of a .ppw file against the key, so that start reports them: the header, the
// file's size, and the counts the key fixes. The scalars are checked as they are read.
void check_ppw_file(const std::string& path, const ProvingKey& pk, const std::string& where) {
  const WitnessHeader h = as_witness_error(where, [&] { return read_witness_header(path); });
  auto mismatch = [&](const char* what, uint64_t got, uint64_t want) {
    if (got != want)
      throw ApiError(PP_ERR_WITNESS, where + ": " + path + ": " + what + " " + std::to_string(got) + ", the key has " +
                                         std::to_string(want) + " (witness and proving key do not match)");
  };
  mismatch("input count", h.inputs, pk.vk.ic.size());
  mismatch("aux count", h.aux, pk.l.size());
}

// borrow: the call returns only when the proofs are done (pp_prove), so the caller's arrays may
// be read while proving; otherwise (pp_prove_start) every in-memory input is copied now.
Request copy_request(const ProvingKey& pk, const pp_input* inputs, std::size_t n, const uint64_t* seed, bool borrow) {
  if (n == 0) throw ApiError(PP_ERR_INVALID_ARGUMENT, "num_inputs is 0");
  require(inputs, "inputs");
  Request req;
  req.inputs.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    const pp_input& in = inputs[k];
    int kind;
    std::memcpy(&kind, &in.kind, sizeof kind);
    if (kind == PP_INPUT_PPW && in.ppw.path) {
      req.inputs[k].file = in.ppw.path;
      check_ppw_file(req.inputs[k].file, pk, input_name(k));
    } else if (borrow && kind == PP_INPUT_ASSIGNMENT) {
      check_assignment_shape(in.assignment, input_name(k));
      req.inputs[k].borrowed = &in;
    } else {
      req.inputs[k].witness = std::make_shared<const Witness>(witness_from_input(in, k));
    }
  }
  if (seed) {
    req.randomizers = randomizers_from_seed(*seed, n);
  } else {
    std::random_device rd;
    req.randomizers.resize(n);
    for (Randomizers& rs : req.randomizers) {
      rs.r = os_random_scalar(rd);
      rs.s = os_random_scalar(rd);
    }
  }
  for (std::size_t k = 0; k < n; ++k) {
    const pp_input& in = inputs[k];
    if ((in.r == nullptr) != (in.s == nullptr))
      throw ApiError(PP_ERR_INVALID_ARGUMENT, input_name(k) + ": give both r and s or neither");
    if (!in.r) continue;
    if (!load_montgomery(req.randomizers[k].r, in.r) || !load_montgomery(req.randomizers[k].s, in.s))
      throw ApiError(PP_ERR_INVALID_ARGUMENT, input_name(k) + ": r or s is not a reduced Montgomery-form scalar");
  }
  return req;
}

std::size_t proof_bytes(std::size_t n) {
  if (n > std::numeric_limits<std::size_t>::max() / PP_PROOF_BYTES)
    throw ApiError(PP_ERR_INVALID_ARGUMENT, "num_inputs " + std::to_string(n) + " is too large");
  return n * PP_PROOF_BYTES;
}

// The size contract of pp_prove / pp_prove_finalize.
void check_capacity(const uint8_t* proofs, std::size_t* proofs_size, std::size_t n) {
  require(proofs_size, "proofs_size");
  const std::size_t need = proof_bytes(n);
  if (*proofs_size < need) {
    const std::size_t have = *proofs_size;
    *proofs_size = need;
    throw ApiError(PP_ERR_BUFFER_TOO_SMALL, "proofs buffer holds " + std::to_string(have) + " bytes, " +
                                                std::to_string(n) + " proof(s) need " + std::to_string(need));
  }
  require(proofs, "proofs");
}

void write_proofs(const std::vector<Proof>& proofs, uint8_t* out, std::size_t* out_size) {
  for (std::size_t k = 0; k < proofs.size(); ++k) {
    const auto bytes = proofs[k].to_bytes();
    std::memcpy(out + k * PP_PROOF_BYTES, bytes.data(), PP_PROOF_BYTES);
  }
  *out_size = proofs.size() * PP_PROOF_BYTES;
}

// Where a running request reports progress and registers its engine jobs (for pp_cancel).
struct Progress {
  const std::atomic<bool>* cancel = nullptr;
  std::atomic<std::size_t>* partitions_done = nullptr;
  std::mutex* jobs_mu = nullptr;
  std::vector<uint64_t>* jobs = nullptr;
};

// Keeps the storage busy when the page cache is cold: the files after the one being read are
// read into the page cache (prefetch_witness: one sequential stream per file, as `cat` reads) by
// threads of their own, so the storage never waits for the CPU work of reading, checking and
// staging a partition, and the reader then finds the pages in the cache. Several streams at
// once: a virtual or networked disk delivers more to a few sequential streams than to one
// (measured on the H200 host's virtio disk). At most `depth` files past the one being read
// are requested, which bounds the page cache this takes.
class Prefetcher {
 public:
  Prefetcher(const Request& req, std::size_t streams, std::size_t depth) : depth_(depth) {
    for (const PendingInput& in : req.inputs) files_.push_back(in.witness || in.borrowed ? std::string() : in.file);
    const auto n = std::size_t(std::count_if(files_.begin(), files_.end(), [](const std::string& f) { return !f.empty(); }));
    for (std::size_t t = 0; t < std::min(streams, n); ++t) threads_.emplace_back([this] { run(); });
  }
  ~Prefetcher() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;
  // Input k is being read now.
  void reading(std::size_t k) {
    {
      std::lock_guard lock(mu_);
      reading_ = k;
    }
    cv_.notify_all();
  }

 private:
  void run() {
    for (;;) {
      std::size_t k;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stop_ || next_ >= files_.size() || next_ <= reading_ + depth_; });
        if (stop_ || next_ >= files_.size()) return;
        k = next_++;
      }
      if (!files_[k].empty()) prefetch_witness(files_[k]);
    }
  }
  std::vector<std::string> files_;
  std::size_t depth_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::size_t reading_ = 0, next_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

// Proves a request on the engine: each partition is its own engine job, submitted as soon as its
// witness is in memory, so that reading partition k+1 overlaps proving partition k; at most a few
// partitions are read ahead of the engine (host memory). The first failure, in input order,
// cancels the rest and is rethrown as it was thrown (status_of maps it).
std::vector<Proof> run_request(EngineImpl& engine, const KeyImpl& key, Request& req, const Progress& progress) {
  runtime::Runtime& rt = *engine.runtime;
  const std::size_t n = req.inputs.size();
  const std::size_t ahead = std::size_t(std::max(1, rt.gpu_count()) * rt.config().gw + 1);
  std::vector<engine::JobHandle> jobs;
  jobs.reserve(n);
  auto cancelled = [&] { return progress.cancel && progress.cancel->load(std::memory_order_relaxed); };
  auto cancel_all = [&] {
    for (const auto& j : jobs) rt.cancel(j.id());
  };
  // 4 streams, 4 files ahead: on the H200 host's disk (cold cache, 10 x 2^24) 13.2 s against 16.4 s
  // without prefetching and 15.5 s with one stream; cat took 13.9 s (docs/PERF.md).
  Prefetcher prefetcher(req, /*streams=*/4, /*depth=*/4);
  try {
    std::size_t oldest = 0;  // jobs before this one are done
    for (std::size_t k = 0; k < n; ++k) {
      for (;;) {  // bounded read-ahead
        while (oldest < jobs.size() && jobs[oldest].done()) ++oldest;
        if (cancelled() || jobs.size() - oldest < ahead) break;
        jobs[oldest].wait_for(std::chrono::milliseconds(20));
      }
      if (cancelled()) throw Cancelled();
      PendingInput& in = req.inputs[k];
      prefetcher.reading(k);
      if (!in.witness && in.borrowed) {
        in.witness = engine.readers.execute([&] { return std::make_shared<const Witness>(witness_from_input(*in.borrowed, k)); });
      } else if (!in.witness) {
        in.witness = as_witness_error(input_name(k), [&] {
          return engine.readers.execute([&] { return std::make_shared<const Witness>(read_witness(in.file)); });
        });
      }
      engine::JobSpec spec;
      spec.key = key.pk;
      spec.witnesses = {in.witness};
      spec.randomizers = {req.randomizers[k]};
      spec.partition_base = k;
      if (progress.partitions_done) {
        std::atomic<std::size_t>* done = progress.partitions_done;
        spec.on_partition = [done](uint64_t, std::size_t, const engine::PartitionResult& r) {
          if (r.status == engine::JobStatus::ok) done->fetch_add(1, std::memory_order_relaxed);
        };
      }
      jobs.push_back(rt.submit(std::move(spec)));
      in.witness.reset();  // the engine holds it while it is needed
      if (progress.jobs) {
        std::lock_guard lock(*progress.jobs_mu);
        progress.jobs->push_back(jobs.back().id());
      }
    }
    std::vector<Proof> proofs;
    proofs.reserve(n);
    for (std::size_t k = 0; k < n; ++k) {
      const engine::JobResult r = jobs[k].wait();
      if (r.status == engine::JobStatus::ok) {
        proofs.push_back(r.proofs.at(0));
        continue;
      }
      if (r.status == engine::JobStatus::cancelled || cancelled()) throw Cancelled();
      const engine::PartitionResult& part = r.partitions.at(0);
      if (part.exception) std::rethrow_exception(part.exception);
      throw std::runtime_error(input_name(k) + ": " + r.error);
    }
    return proofs;
  } catch (...) {
    cancel_all();
    for (const auto& j : jobs) j.wait();  // nothing of this request outlives the call
    throw;
  }
}

// Proves a request and books the outcome in the engine's call counters.
std::vector<Proof> run_batch(const std::shared_ptr<EngineImpl>& engine, const KeyImpl& key, Request& req,
                             const Progress& progress) {
  key.add_user(engine);
  try {
    std::vector<Proof> proofs = run_request(*engine, key, req, progress);
    engine->calls_succeeded.fetch_add(1);
    return proofs;
  } catch (const Cancelled&) {
    engine->calls_cancelled.fetch_add(1);
    throw;
  } catch (...) {
    engine->calls_failed.fetch_add(1);
    throw;
  }
}

runtime::Config engine_config(const pp_engine_config& c) {
  runtime::Config out;
  if (c.num_gpus < -1 || c.num_gpus > PP_MAX_GPUS)
    throw ApiError(PP_ERR_INVALID_ARGUMENT, "config.num_gpus is " + std::to_string(c.num_gpus) +
                                                " (-1: all, 0: none, up to " + std::to_string(PP_MAX_GPUS) + ")");
  out.all_gpus = c.num_gpus == -1;
  for (int i = 0; i < std::max(c.num_gpus, 0); ++i) {
    if (c.gpus[i] < 0)
      throw ApiError(PP_ERR_INVALID_ARGUMENT, "config.gpus[" + std::to_string(i) + "] is " + std::to_string(c.gpus[i]));
    if (std::find(out.gpus.begin(), out.gpus.end(), c.gpus[i]) != out.gpus.end())
      throw ApiError(PP_ERR_INVALID_ARGUMENT, "config.gpus[" + std::to_string(i) + "]: GPU " +
                                                  std::to_string(c.gpus[i]) + " is listed twice");
    out.gpus.push_back(c.gpus[i]);
  }
  if (c.gpu_workers < 1 || c.gpu_workers > 16)
    throw ApiError(PP_ERR_INVALID_ARGUMENT, "config.gpu_workers is " + std::to_string(c.gpu_workers) + " (1..16)");
  if (c.threads < 0)
    throw ApiError(PP_ERR_INVALID_ARGUMENT, "config.threads is " + std::to_string(c.threads) + " (0: all cores)");
  if (c.cpu_fallback != 0 && c.cpu_fallback != 1)
    throw ApiError(PP_ERR_INVALID_ARGUMENT, "config.cpu_fallback is " + std::to_string(c.cpu_fallback) + " (0 or 1)");
  out.gw = c.gpu_workers;
  out.device_budget = c.device_memory_budget;
  out.host_budget = c.host_memory_budget;
  out.cpu_fallback = c.cpu_fallback == 1;
  out.threads = c.threads;
  return out;
}

pp_key* make_key(ProvingKey pk) {
  auto impl = std::make_shared<KeyImpl>();
  impl->pk = std::make_shared<const ProvingKey>(std::move(pk));
  impl->pvk = prepare(impl->pk->vk);
  auto* key = new pp_key;
  key->impl = std::move(impl);
  return key;
}

const ProvingKey* pk_ptr(const pp_key& key) { return key.impl->pk.get(); }

// Stops a pending request: no further partition is read or submitted, and the engine drops or
// discards the ones already submitted.
void cancel_pending(pp_pending& p) {
  p.cancel.store(true, std::memory_order_relaxed);
  std::lock_guard lock(p.jobs_mu);
  for (uint64_t id : p.jobs) p.engine->runtime->cancel(id);
}

// The handles every proving call needs.
void check_handles(const pp_engine* engine, const pp_key* key) {
  require(engine, "engine");
  require(key, "key");
}

}  // namespace
}  // namespace pp::capi

using namespace pp::capi;

extern "C" {

PP_API const char* pp_status_name(pp_status status) {
  int code;  // any int may arrive from C: compare it as one (see witness_from_input)
  std::memcpy(&code, &status, sizeof code);
  switch (code) {
    case PP_OK: return "PP_OK";
    case PP_ERR_NULL_POINTER: return "PP_ERR_NULL_POINTER";
    case PP_ERR_INVALID_ARGUMENT: return "PP_ERR_INVALID_ARGUMENT";
    case PP_ERR_BUFFER_TOO_SMALL: return "PP_ERR_BUFFER_TOO_SMALL";
    case PP_ERR_KEY: return "PP_ERR_KEY";
    case PP_ERR_WITNESS: return "PP_ERR_WITNESS";
    case PP_ERR_CANCELLED: return "PP_ERR_CANCELLED";
    case PP_ERR_UNSUPPORTED: return "PP_ERR_UNSUPPORTED";
    case PP_ERR_OUT_OF_MEMORY: return "PP_ERR_OUT_OF_MEMORY";
    case PP_ERR_INTERNAL: return "PP_ERR_INTERNAL";
    case PP_ERR_DEVICE: return "PP_ERR_DEVICE";
  }
  return "PP_ERR_UNKNOWN";
}

PP_API uint32_t pp_version(void) { return PP_VERSION; }

PP_API pp_status pp_fr_from_canonical(uint8_t* out, const uint8_t* in, size_t n, pp_error* err) {
  return guarded("pp_fr_from_canonical", err, PP_ERR_INTERNAL, [&] {
    if (n == 0) return;
    require(out, "out");
    require(in, "in");
    for (std::size_t i = 0; i < n; ++i) {
      uint64_t limbs[4];
      for (int j = 0; j < 4; ++j) limbs[j] = load_u64_le(in + i * PP_FR_BYTES + 8 * j);
      pp::Fr x;
      if (!pp::Fr::from_canonical(x, limbs))
        throw ApiError(PP_ERR_INVALID_ARGUMENT, "in[" + std::to_string(i) + "] is not below the scalar field modulus r");
      store_montgomery(out + i * PP_FR_BYTES, x);
    }
  });
}

PP_API pp_status pp_fr_to_canonical(uint8_t* out, const uint8_t* in, size_t n, pp_error* err) {
  return guarded("pp_fr_to_canonical", err, PP_ERR_INTERNAL, [&] {
    if (n == 0) return;
    require(out, "out");
    require(in, "in");
    for (std::size_t i = 0; i < n; ++i) {
      pp::Fr x;
      if (!load_montgomery(x, in + i * PP_FR_BYTES))
        throw ApiError(PP_ERR_INVALID_ARGUMENT, "in[" + std::to_string(i) + "] is not a reduced Montgomery-form scalar");
      uint64_t limbs[4];
      x.to_canonical(limbs);
      for (int j = 0; j < 4; ++j) store_u64_le(out + i * PP_FR_BYTES + 8 * j, limbs[j]);
    }
  });
}

PP_API void pp_engine_config_default(pp_engine_config* config) {
  if (!config) return;
  std::memset(config, 0, sizeof *config);
  config->num_gpus = -1;
  config->gpu_workers = 2;
  config->cpu_fallback = 1;
  config->threads = 0;
}

PP_API pp_status pp_engine_create(const pp_engine_config* config, pp_engine** out, pp_error* err) {
  return guarded("pp_engine_create", err, PP_ERR_INTERNAL, [&] {
    require(out, "out");
    *out = nullptr;
    require(config, "config");
    auto impl = std::make_shared<EngineImpl>();
    const pp::runtime::Config rc = engine_config(*config);
    try {
      impl->runtime = std::make_unique<pp::runtime::Runtime>(rc);
    } catch (const std::invalid_argument& e) {
      throw ApiError(PP_ERR_UNSUPPORTED, e.what());
    }
    auto* engine = new pp_engine;
    engine->impl = std::move(impl);
    *out = engine;
  });
}

PP_API void pp_engine_free(pp_engine* engine) { delete engine; }

PP_API pp_status pp_engine_stats_get(const pp_engine* engine, pp_engine_stats* out, pp_error* err) {
  return guarded("pp_engine_stats_get", err, PP_ERR_INTERNAL, [&] {
    require(engine, "engine");
    require(out, "out");
    const EngineImpl& e = *engine->impl;
    const pp::runtime::Stats st = e.runtime->stats();
    *out = pp_engine_stats{};
    out->partitions_proven = st.engine.partitions_ok;
    out->calls_succeeded = e.calls_succeeded.load();
    out->calls_failed = e.calls_failed.load();
    out->calls_cancelled = e.calls_cancelled.load();
    out->partitions_on_cpu = st.partitions_on_cpu;
    out->ms_checks = st.times.evaluate;
    out->ms_ntt = st.times.ntt;
    out->ms_msm_h = st.times.msm_h;
    out->ms_msm_l = st.times.msm_l;
    out->ms_msm_a = st.times.msm_a;
    out->ms_msm_b_g1 = st.times.msm_b_g1;
    out->ms_msm_b_g2 = st.times.msm_b_g2;
    out->ms_assembly = st.times.assembly;
    out->ms_gpu_busy = st.times.gpu_compute;
    out->gpus = uint32_t(st.gpus);
    out->key_loads = st.key_loads;
    out->key_evictions = st.key_evictions;
    out->host_peak_bytes = st.engine.host_peak_bytes;
    out->ms_gpu_upload = st.times.gpu_upload;
    for (const auto& b : st.engine.backends) out->forbidden_device_calls += b.forbidden_calls;
  });
}

PP_API pp_status pp_key_load(const char* params_path, int subgroup_check, pp_key** out, pp_error* err) {
  return guarded("pp_key_load", err, PP_ERR_KEY, [&] {
    require(out, "out");
    *out = nullptr;
    require(params_path, "params_path");
    pp::ParamsReadOptions options;
    options.subgroup = subgroup_check ? pp::SubgroupCheck::yes : pp::SubgroupCheck::no;
    *out = make_key(pp::read_params(params_path, options));
  });
}

PP_API pp_status pp_key_load_memory(const uint8_t* bytes, size_t size, int subgroup_check, pp_key** out,
                                    pp_error* err) {
  return guarded("pp_key_load_memory", err, PP_ERR_KEY, [&] {
    require(out, "out");
    *out = nullptr;
    require(bytes, "bytes");
    pp::ParamsReadOptions options;
    options.subgroup = subgroup_check ? pp::SubgroupCheck::yes : pp::SubgroupCheck::no;
    *out = make_key(pp::parse_params(std::span<const uint8_t>(bytes, size), options, "params (memory)"));
  });
}

PP_API void pp_key_retain(pp_key* key) {
  if (key) key->refs.fetch_add(1, std::memory_order_relaxed);
}

PP_API void pp_key_release(pp_key* key) {
  if (key && key->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete key;
}

PP_API pp_status pp_key_info_get(const pp_key* key, pp_key_info* out, pp_error* err) {
  return guarded("pp_key_info_get", err, PP_ERR_INTERNAL, [&] {
    require(key, "key");
    require(out, "out");
    const pp::ProvingKey& pk = *key->impl->pk;
    *out = pp_key_info{};
    out->num_inputs = pk.vk.ic.size();
    out->num_aux = pk.l.size();
    out->domain_size = pk.convention.h_basis == pp::HBasis::bellman ? pk.h.size() + 1 : pk.h.size();
    out->h = pk.h.size();
    out->l = pk.l.size();
    out->a = pk.a.size();
    out->b_g1 = pk.b_g1.size();
    out->b_g2 = pk.b_g2.size();
    int copies = 0;
    for (const auto& e : key->impl->live_users()) copies += int(e->runtime->residency(pk_ptr(*key)).size());
    out->device_resident = copies > 0 ? 1 : 0;
    out->device_copies = uint32_t(copies);
    out->evictions = key->impl->evictions.load(std::memory_order_relaxed);
  });
}

PP_API pp_status pp_key_evict(pp_key* key, pp_error* err) {
  return guarded("pp_key_evict", err, PP_ERR_INTERNAL, [&] {
    require(key, "key");
    for (const auto& e : key->impl->live_users()) e->runtime->evict(pk_ptr(*key));
    key->impl->evictions.fetch_add(1, std::memory_order_relaxed);
  });
}

PP_API pp_status pp_key_preload(pp_engine* engine, const pp_key* key, const pp_input* sample, pp_error* err) {
  return guarded("pp_key_preload", err, PP_ERR_INTERNAL, [&] {
    check_handles(engine, key);
    require(sample, "sample");
    const pp::Densities densities = pp::capi::densities_of_input(*sample);
    pp::check_densities(*key->impl->pk, densities, "sample: ");  // WitnessError: PP_ERR_WITNESS
    key->impl->add_user(engine->impl);
    std::string why;
    if (!engine->impl->runtime->preload(key->impl->pk, densities, &why)) throw pp::capi::ApiError(PP_ERR_DEVICE, why);
  });
}

PP_API pp_status pp_prove(pp_engine* engine, const pp_key* key, const pp_input* inputs, size_t num_inputs,
                          const uint64_t* seed, uint8_t* proofs, size_t* proofs_size, pp_error* err) {
  return guarded("pp_prove", err, PP_ERR_INTERNAL, [&] {
    check_handles(engine, key);
    check_capacity(proofs, proofs_size, num_inputs);
    Request req = copy_request(*key->impl->pk, inputs, num_inputs, seed, /*borrow=*/true);
    const std::vector<pp::Proof> out = run_batch(engine->impl, *key->impl, req, Progress{});
    write_proofs(out, proofs, proofs_size);
  });
}

PP_API pp_status pp_prove_start(pp_engine* engine, const pp_key* key, const pp_input* inputs, size_t num_inputs,
                                const uint64_t* seed, pp_pending** out, pp_error* err) {
  return guarded("pp_prove_start", err, PP_ERR_INTERNAL, [&] {
    require(out, "out");
    *out = nullptr;
    check_handles(engine, key);
    (void)proof_bytes(num_inputs);
    auto req = std::make_shared<Request>(copy_request(*key->impl->pk, inputs, num_inputs, seed, /*borrow=*/false));
    auto pending = std::make_unique<pp_pending>();
    pending->engine = engine->impl;
    pending->key = key->impl;
    pending->partitions = num_inputs;
    pp_pending* p = pending.get();
    // The worker owns the request and reaches the pending handle through `p`, which lives until
    // pp_pending_free has joined it.
    p->worker = std::thread([p, req]() mutable {
      pp_error e;
      const pp_status status = guarded("pp_prove_finalize", &e, PP_ERR_INTERNAL, [&] {
        p->proofs = run_batch(p->engine, *p->key, *req, Progress{&p->cancel, &p->partitions_done, &p->jobs_mu, &p->jobs});
      });
      req.reset();  // the witnesses are large: free them before anyone finalizes
      p->status = status;
      p->message = e.message;
      p->done.store(true, std::memory_order_release);
    });
    *out = pending.release();
  });
}

PP_API pp_status pp_prove_poll(const pp_pending* pending, int* done, size_t* partitions_done, pp_error* err) {
  return guarded("pp_prove_poll", err, PP_ERR_INTERNAL, [&] {
    require(pending, "pending");
    if (done) *done = pending->done.load(std::memory_order_acquire) ? 1 : 0;
    if (partitions_done) *partitions_done = pending->partitions_done.load(std::memory_order_relaxed);
  });
}

PP_API pp_status pp_prove_finalize(pp_pending* pending, uint8_t* proofs, size_t* proofs_size, pp_error* err) {
  clear_error(err);
  if (!pending) return report(err, PP_ERR_NULL_POINTER, "pp_prove_finalize: pending is NULL");
  // Check the buffer first so that a caller learns the size without waiting.
  const pp_status size_status = guarded("pp_prove_finalize", err, PP_ERR_INTERNAL,
                                        [&] { check_capacity(proofs, proofs_size, pending->partitions); });
  if (size_status != PP_OK) return size_status;
  const pp_status join_status = guarded("pp_prove_finalize", err, PP_ERR_INTERNAL, [&] {
    std::call_once(pending->joined, [&] { pending->worker.join(); });
  });
  if (join_status != PP_OK) return join_status;
  if (pending->status != PP_OK) return report(err, pending->status, pending->message);
  write_proofs(pending->proofs, proofs, proofs_size);
  return PP_OK;
}

PP_API pp_status pp_cancel(pp_pending* pending, pp_error* err) {
  return guarded("pp_cancel", err, PP_ERR_INTERNAL, [&] {
    require(pending, "pending");
    cancel_pending(*pending);
  });
}

PP_API void pp_pending_free(pp_pending* pending) {
  if (!pending) return;
  try {
    cancel_pending(*pending);
    std::call_once(pending->joined, [&] { pending->worker.join(); });
  } catch (...) {
    // join() only throws for a thread that is not joinable, which the once_flag rules out;
    // nothing may escape a C function either way.
  }
  delete pending;
}

PP_API pp_status pp_verify(const pp_key* key, const uint8_t* public_inputs, size_t num_public, const uint8_t* proof,
                           size_t proof_size, int* valid, pp_error* err) {
  return guarded("pp_verify", err, PP_ERR_INTERNAL, [&] {
    require(key, "key");
    require(proof, "proof");
    require(valid, "valid");
    *valid = 0;
    if (proof_size != PP_PROOF_BYTES)
      throw ApiError(PP_ERR_INVALID_ARGUMENT, "proof_size is " + std::to_string(proof_size) + ", a proof has " +
                                                  std::to_string(PP_PROOF_BYTES) + " bytes");
    const pp::PreparedVerifyingKey& pvk = key->impl->pvk;  // prepared once per key
    if (num_public + 1 != pvk.vk.ic.size())
      throw ApiError(PP_ERR_INVALID_ARGUMENT, "num_public is " + std::to_string(num_public) + ", the key has " +
                                                  std::to_string(pvk.vk.ic.size() - 1) + " public inputs");
    if (num_public > 0) require(public_inputs, "public_inputs");
    const std::vector<pp::Fr> inputs = load_scalars(public_inputs, num_public, "public_inputs");
    pp::Proof p;
    try {
      p = pp::Proof::from_bytes(std::span<const uint8_t, pp::Proof::kBytes>(proof, pp::Proof::kBytes));
    } catch (const std::invalid_argument&) {
      return;  // a proof that does not decode is an invalid proof, not an error
    }
    *valid = pp::verify(pvk, inputs, p) ? 1 : 0;
  });
}

}  // extern "C"
