// SPDX-License-Identifier: Apache-2.0 OR MIT
// The C API (include/proofpipe/proofpipe.h): the handles, the one mapping of internal errors to
// pp_status, and the exported functions. Inputs are checked and turned into witnesses in
// inputs.cpp; a request is proved on the process's engine (runtime/runtime.hpp) in request.cpp.
#include "proofpipe/proofpipe.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <new>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "inputs.hpp"
#include "internal.hpp"
#include "proofpipe/engine/engine.hpp"
#include "proofpipe/engine/plan.hpp"
#include "proofpipe/io/params.hpp"
#include "proofpipe/io/snarkjs.hpp"
#include "proofpipe/io/zkey.hpp"
#include "request.hpp"

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
  // Written by the worker before `done` is set, read-only afterwards: the proofs' bytes (the
  // key's proof_bytes each).
  std::vector<uint8_t> proofs;
  pp_status status = PP_OK;
  std::string message;
};

namespace pp::capi {
namespace {

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

// Bytes of n proofs of a key whose proofs have `each` bytes.
std::size_t proof_bytes(std::size_t n, std::size_t each) {
  if (n > std::numeric_limits<std::size_t>::max() / each)
    throw ApiError(PP_ERR_INVALID_ARGUMENT, "num_inputs " + std::to_string(n) + " is too large");
  return n * each;
}

// The size contract of pp_prove / pp_prove_finalize.
void check_capacity(const uint8_t* proofs, std::size_t* proofs_size, std::size_t n, std::size_t each) {
  require(proofs_size, "proofs_size");
  const std::size_t need = proof_bytes(n, each);
  if (*proofs_size < need) {
    const std::size_t have = *proofs_size;
    *proofs_size = need;
    throw ApiError(PP_ERR_BUFFER_TOO_SMALL, "proofs buffer holds " + std::to_string(have) + " bytes, " +
                                                std::to_string(n) + " proof(s) need " + std::to_string(need));
  }
  require(proofs, "proofs");
}

void write_proofs(const std::vector<uint8_t>& proofs, uint8_t* out, std::size_t* out_size) {
  if (!proofs.empty()) std::memcpy(out, proofs.data(), proofs.size());
  *out_size = proofs.size();
}

// n canonical little-endian scalars of field F to the API's Montgomery form, and back; the
// first value that is not below r is named.
template <class F>
void scalars_from_canonical(uint8_t* out, const uint8_t* in, std::size_t n) {
  if (n == 0) return;
  require(out, "out");
  require(in, "in");
  for (std::size_t i = 0; i < n; ++i) {
    uint64_t limbs[4];
    for (int j = 0; j < 4; ++j) limbs[j] = load_u64_le(in + i * PP_FR_BYTES + 8 * j);
    F x;
    if (!F::from_canonical(x, limbs))
      throw ApiError(PP_ERR_INVALID_ARGUMENT, "in[" + std::to_string(i) + "] is not below the scalar field modulus r");
    store_montgomery(out + i * PP_FR_BYTES, x);
  }
}

template <class F>
void scalars_to_canonical(uint8_t* out, const uint8_t* in, std::size_t n) {
  if (n == 0) return;
  require(out, "out");
  require(in, "in");
  for (std::size_t i = 0; i < n; ++i) {
    F x;
    if (!load_montgomery(x, in + i * PP_FR_BYTES))
      throw ApiError(PP_ERR_INVALID_ARGUMENT, "in[" + std::to_string(i) + "] is not a reduced Montgomery-form scalar");
    uint64_t limbs[4];
    x.to_canonical(limbs);
    for (int j = 0; j < 4; ++j) store_u64_le(out + i * PP_FR_BYTES + 8 * j, limbs[j]);
  }
}

// A pp_curve from C, read as the int it is (any value may arrive from C, and loading one that is not
// an enumerator as the C++ enum is undefined behaviour: UBSan flags it), so its bytes are copied;
// PP_ERR_INVALID_ARGUMENT unless it is a known curve.
pp_curve curve_of(const pp_curve* curve) {
  static_assert(sizeof(pp_curve) == sizeof(int));
  int c;
  std::memcpy(&c, curve, sizeof c);
  if (c != PP_CURVE_BLS12_381 && c != PP_CURVE_BN254)
    throw ApiError(PP_ERR_INVALID_ARGUMENT, "curve is " + std::to_string(c) + " (PP_CURVE_BLS12_381 0 or PP_CURVE_BN254 1)");
  return pp_curve(c);
}

// pp_verify's steps on a key over curve E: the public inputs' count, the scalars, the proof's
// bytes (a proof that does not decode is an invalid proof, not an error), the pairing check.
template <class E>
void verify_as(const PreparedVerifyingKeyOf<E>& pvk, const uint8_t* public_inputs, std::size_t num_public,
               const uint8_t* proof, int* valid) {
  using P = ProofOf<E>;
  if (num_public + 1 != pvk.vk.ic.size())
    throw ApiError(PP_ERR_INVALID_ARGUMENT, "num_public is " + std::to_string(num_public) + ", the key has " +
                                                std::to_string(pvk.vk.ic.size() - 1) + " public inputs");
  if (num_public > 0) require(public_inputs, "public_inputs");
  const std::vector<typename E::Fr> inputs = load_scalars_of<typename E::Fr>(public_inputs, num_public, "public_inputs");
  P p;
  try {
    p = P::from_bytes(std::span<const uint8_t, P::kBytes>(proof, P::kBytes));
  } catch (const std::invalid_argument&) {
    return;
  }
  *valid = verify(pvk, inputs, p) ? 1 : 0;
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
  if (c.check_proofs != 0 && c.check_proofs != 1)
    throw ApiError(PP_ERR_INVALID_ARGUMENT, "config.check_proofs is " + std::to_string(c.check_proofs) + " (0 or 1)");
  out.check_proofs = c.check_proofs == 1;
  out.gw = c.gpu_workers;
  out.device_budget = c.device_memory_budget;
  out.host_budget = c.host_memory_budget;
  out.cpu_fallback = c.cpu_fallback == 1;
  out.threads = c.threads;
  return out;
}

pp_key* make_key(std::shared_ptr<KeyImpl> impl) {
  if (impl->pk_bn254)
    impl->pvk_bn254 = prepare(impl->pk_bn254->vk);
  else
    impl->pvk = prepare(impl->pk->vk);
  auto* key = new pp_key;
  key->impl = std::move(impl);
  return key;
}

pp_key* make_key(ProvingKey pk) {
  auto impl = std::make_shared<KeyImpl>();
  impl->pk = std::make_shared<const ProvingKey>(std::move(pk));
  return make_key(std::move(impl));
}

// A snarkjs key of either curve: the points become the proving key (taken over, not copied); the
// header and the coefficients stay for turning .wtns files into witnesses, sorted row by row (once
// per key) so that each witness is computed on every core. The key's fields are set by the caller.
template <class E>
std::pair<ProvingKeyOf<E>, ZkeyOf<E>> split_zkey(ZkeyOf<E> zkey, Densities& densities) {
  densities = zkey_densities(zkey);
  ProvingKeyOf<E> pk = take_proving_key(zkey, densities);
  const auto row_order = [](const auto& x, const auto& y) {
    return x.matrix != y.matrix ? x.matrix < y.matrix : x.constraint < y.constraint;
  };
  // snarkjs writes them row by row: one pass tells, and such a key skips the sort.
  if (!std::is_sorted(zkey.coefficients.begin(), zkey.coefficients.end(), row_order))
    std::stable_sort(zkey.coefficients.begin(), zkey.coefficients.end(), row_order);
  return {std::move(pk), std::move(zkey)};
}

pp_key* make_key(Zkey zkey) {
  auto impl = std::make_shared<KeyImpl>();
  auto [pk, rest] = split_zkey<Bls12_381>(std::move(zkey), impl->zkey_densities);
  impl->pk = std::make_shared<const ProvingKey>(std::move(pk));
  impl->zkey = std::make_shared<const Zkey>(std::move(rest));
  return make_key(std::move(impl));
}

pp_key* make_key(bn254::Zkey zkey) {
  auto impl = std::make_shared<KeyImpl>();
  impl->curve = PP_CURVE_BN254;
  auto [pk, rest] = split_zkey<bn254::Bn254>(std::move(zkey), impl->zkey_densities);
  impl->pk_bn254 = std::make_shared<const bn254::ProvingKey>(std::move(pk));
  impl->zkey_bn254 = std::make_shared<const bn254::Zkey>(std::move(rest));
  return make_key(std::move(impl));
}

// A .zkey starts with the magic "zkey"; anything else is read as a .params (or a key cache).
bool is_zkey(std::span<const uint8_t> head) { return head.size() >= 4 && std::memcmp(head.data(), "zkey", 4) == 0; }

bool is_zkey_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  return in.gcount() == 4 && std::memcmp(magic, "zkey", 4) == 0;
}

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
  return guarded("pp_fr_from_canonical", err, PP_ERR_INTERNAL, [&] { scalars_from_canonical<pp::Fr>(out, in, n); });
}

PP_API pp_status pp_fr_to_canonical(uint8_t* out, const uint8_t* in, size_t n, pp_error* err) {
  return guarded("pp_fr_to_canonical", err, PP_ERR_INTERNAL, [&] { scalars_to_canonical<pp::Fr>(out, in, n); });
}

PP_API pp_status pp_curve_fr_from_canonical(pp_curve curve, uint8_t* out, const uint8_t* in, size_t n, pp_error* err) {
  return guarded("pp_curve_fr_from_canonical", err, PP_ERR_INTERNAL, [&] {
    if (curve_of(&curve) == PP_CURVE_BN254)
      scalars_from_canonical<pp::bn254::Fr>(out, in, n);
    else
      scalars_from_canonical<pp::Fr>(out, in, n);
  });
}

PP_API pp_status pp_curve_fr_to_canonical(pp_curve curve, uint8_t* out, const uint8_t* in, size_t n, pp_error* err) {
  return guarded("pp_curve_fr_to_canonical", err, PP_ERR_INTERNAL, [&] {
    if (curve_of(&curve) == PP_CURVE_BN254)
      scalars_to_canonical<pp::bn254::Fr>(out, in, n);
    else
      scalars_to_canonical<pp::Fr>(out, in, n);
  });
}

PP_API void pp_engine_config_default(pp_engine_config* config) {
  if (!config) return;
  std::memset(config, 0, sizeof *config);
  config->num_gpus = -1;
  config->gpu_workers = 2;
  config->cpu_fallback = 1;
  config->threads = 0;
  config->check_proofs = 1;
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
    out->srs_bytes_streamed = st.srs_bytes_streamed;
    out->key_evictions = st.key_evictions;
    out->host_peak_bytes = st.engine.host_peak_bytes;
    out->ms_gpu_upload = st.times.gpu_upload;
    for (const auto& b : st.engine.backends) out->forbidden_device_calls += b.forbidden_calls;
    out->proofs_checked = st.engine.proofs_checked;
    out->proofs_rejected = st.engine.proofs_rejected;
    out->proofs_rejected_cpu = st.engine.cpu_proofs_rejected;
    out->ms_verify = st.engine.check_ms;
  });
}

PP_API pp_status pp_engine_gpu_info_get(const pp_engine* engine, uint32_t index, pp_gpu_info* out, pp_error* err) {
  return guarded("pp_engine_gpu_info_get", err, PP_ERR_INTERNAL, [&] {
    require(engine, "engine");
    require(out, "out");
    const pp::runtime::Stats st = engine->impl->runtime->stats();
    if (index >= st.devices.size())
      throw ApiError(PP_ERR_INVALID_ARGUMENT, "index is " + std::to_string(index) + " but the engine has " +
                                                  std::to_string(st.devices.size()) + " GPU(s)");
    const pp::runtime::GpuInfo& g = st.devices[index];
    *out = pp_gpu_info{};
    out->device = g.device;
    out->resident_keys = g.resident_keys;
    out->memory_total = g.memory.total;
    out->memory_budget = g.memory.budget;
    out->memory_used = g.memory.used;
    out->memory_peak = g.memory.peak;
    out->proofs_checked = g.proofs_checked;
    out->proofs_rejected = g.proofs_rejected;
    out->healthy = g.healthy ? 1 : 0;
    out->partitions = g.partitions;
    out->partitions_handed_off = g.handed_off;
    out->ms_busy = g.busy_ms;
  });
}

PP_API pp_status pp_key_load(const char* path, int subgroup_check, pp_key** out, pp_error* err) {
  return guarded("pp_key_load", err, PP_ERR_KEY, [&] {
    require(out, "out");
    *out = nullptr;
    require(path, "path");
    if (is_zkey_file(path)) {
      pp::ZkeyReadOptions options;
      options.subgroup_check = subgroup_check != 0;
      if (pp::zkey_curve(path) == pp::CurveId::bn254)
        *out = make_key(pp::read_zkey<pp::bn254::Bn254>(path, options));
      else
        *out = make_key(pp::read_zkey(path, options));
      return;
    }
    pp::ParamsReadOptions options;
    options.subgroup = subgroup_check ? pp::SubgroupCheck::yes : pp::SubgroupCheck::no;
    *out = make_key(pp::read_params(path, options));
  });
}

PP_API pp_status pp_key_load_memory(const uint8_t* bytes, size_t size, int subgroup_check, pp_key** out,
                                    pp_error* err) {
  return guarded("pp_key_load_memory", err, PP_ERR_KEY, [&] {
    require(out, "out");
    *out = nullptr;
    require(bytes, "bytes");
    const std::span<const uint8_t> data(bytes, size);
    if (is_zkey(data)) {
      pp::ZkeyReadOptions options;
      options.subgroup_check = subgroup_check != 0;
      if (pp::zkey_curve(data, "zkey (memory)") == pp::CurveId::bn254)
        *out = make_key(pp::parse_zkey<pp::bn254::Bn254>(data, "zkey (memory)", options));
      else
        *out = make_key(pp::parse_zkey(data, "zkey (memory)", options));
      return;
    }
    pp::ParamsReadOptions options;
    options.subgroup = subgroup_check ? pp::SubgroupCheck::yes : pp::SubgroupCheck::no;
    *out = make_key(pp::parse_params(data, options, "params (memory)"));
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
    const KeyImpl& k = *key->impl;
    *out = pp_key_info{};
    auto counts = [&](const auto& pk) {
      out->num_inputs = pk.vk.ic.size();
      out->num_aux = pk.l.size();
      out->domain_size = pk.convention.h_basis == pp::HBasis::bellman ? pk.h.size() + 1 : pk.h.size();
      out->h = pk.h.size();
      out->l = pk.l.size();
      out->a = pk.a.size();
      out->b_g1 = pk.b_g1.size();
      out->b_g2 = pk.b_g2.size();
    };
    if (k.pk_bn254)
      counts(*k.pk_bn254);
    else
      counts(*k.pk);
    out->curve = uint32_t(k.curve);
    out->proof_bytes = uint32_t(k.proof_bytes());
    int copies = 0;
    for (const auto& e : k.live_users()) copies += int(k.residency_in(*e->runtime));
    out->device_resident = copies > 0 ? 1 : 0;
    out->device_copies = uint32_t(copies);
    out->evictions = key->impl->evictions.load(std::memory_order_relaxed);
  });
}

PP_API pp_status pp_key_evict(pp_key* key, pp_error* err) {
  return guarded("pp_key_evict", err, PP_ERR_INTERNAL, [&] {
    require(key, "key");
    for (const auto& e : key->impl->live_users()) key->impl->evict_from(*e->runtime);
    key->impl->evictions.fetch_add(1, std::memory_order_relaxed);
  });
}

PP_API pp_status pp_key_preload(pp_engine* engine, const pp_key* key, const pp_input* sample, pp_error* err) {
  return guarded("pp_key_preload", err, PP_ERR_INTERNAL, [&] {
    check_handles(engine, key);
    require(sample, "sample");
    const KeyImpl& k = *key->impl;
    const pp::Densities densities = pp::capi::densities_of_input(*sample, k);
    const pp::QueryLayout layout = k.pk_bn254 ? pp::QueryLayout::of(*k.pk_bn254) : pp::QueryLayout::of(*k.pk);
    layout.check_densities(densities, "sample: ");  // WitnessError: PP_ERR_WITNESS
    k.add_user(engine->impl);
    std::string why;
    const bool loaded = k.pk_bn254 ? engine->impl->runtime->preload(k.pk_bn254, densities, &why)
                                   : engine->impl->runtime->preload(k.pk, densities, &why);
    if (!loaded) throw pp::capi::ApiError(PP_ERR_DEVICE, why);
  });
}

PP_API pp_status pp_prove(pp_engine* engine, const pp_key* key, const pp_input* inputs, size_t num_inputs,
                          const uint64_t* seed, uint8_t* proofs, size_t* proofs_size, pp_error* err) {
  return guarded("pp_prove", err, PP_ERR_INTERNAL, [&] {
    check_handles(engine, key);
    check_capacity(proofs, proofs_size, num_inputs, key->impl->proof_bytes());
    Request req = copy_request(*key->impl, inputs, num_inputs, seed, PP_BORROW_ALL);
    const std::vector<uint8_t> out = run_batch(engine->impl, *key->impl, req, Progress{});
    write_proofs(out, proofs, proofs_size);
  });
}

}  // extern "C"

namespace {

// Fires once: the caller's a, b, c are no longer read (PP_BORROW_ASSIGNMENT's start waits for it).
struct AbcRelease {
  std::promise<void> promise;
  std::once_flag once;
  void fire() {
    std::call_once(once, [&] { promise.set_value(); });
  }
};

// Hands a checked request to a worker thread of its own and returns its pending handle.
pp_pending* start_request(pp_engine* engine, const pp_key* key, std::shared_ptr<pp::capi::Request> req,
                          std::size_t num_inputs, std::shared_ptr<AbcRelease> release) {
  auto pending = std::make_unique<pp_pending>();
  pending->engine = engine->impl;
  pending->key = key->impl;
  pending->partitions = num_inputs;
  pp_pending* p = pending.get();
  // The worker owns the request and reaches the pending handle through `p`, which lives until
  // pp_pending_free has joined it.
  p->worker = std::thread([p, req, release]() mutable {
    pp_error e;
    const pp_status status = guarded("pp_prove_finalize", &e, PP_ERR_INTERNAL, [&] {
      Progress progress{&p->cancel, &p->partitions_done, &p->jobs_mu, &p->jobs, {}};
      if (release) progress.abc_released = [release] { release->fire(); };
      p->proofs = run_batch(p->engine, *p->key, *req, progress);
    });
    if (release) release->fire();  // a request that ended before its copies were made
    req.reset();  // the witnesses are large: free them before anyone finalizes
    p->status = status;
    p->message = e.message;
    p->done.store(true, std::memory_order_release);
  });
  return pending.release();
}

}  // namespace

extern "C" {

PP_API pp_status pp_prove_start(pp_engine* engine, const pp_key* key, const pp_input* inputs, size_t num_inputs,
                                const uint64_t* seed, pp_pending** out, pp_error* err) {
  pp_prove_options options;
  pp_prove_options_default(&options);
  options.seed = seed;
  return pp_prove_start_with(engine, key, inputs, num_inputs, &options, out, err);
}

PP_API void pp_prove_options_default(pp_prove_options* options) {
  if (!options) return;
  options->seed = nullptr;
  options->gpu = -1;
  options->borrow = 0;
}

PP_API pp_status pp_prove_start_with(pp_engine* engine, const pp_key* key, const pp_input* inputs, size_t num_inputs,
                                     const pp_prove_options* options, pp_pending** out, pp_error* err) {
  return guarded("pp_prove_start", err, PP_ERR_INTERNAL, [&] {
    require(out, "out");
    *out = nullptr;
    require(options, "options");
    check_handles(engine, key);
    (void)proof_bytes(num_inputs, key->impl->proof_bytes());
    // The engine's provers: one per GPU, or the CPU prover alone (index 0).
    const int provers = std::max(1, engine->impl->runtime->gpu_count());
    if (options->gpu < -1 || options->gpu >= provers)
      throw ApiError(PP_ERR_INVALID_ARGUMENT,
                     "options.gpu is " + std::to_string(options->gpu) + "; this engine proves on " +
                         (engine->impl->runtime->gpu_count() > 0
                              ? std::to_string(provers) + " GPU(s), 0 .. " + std::to_string(provers - 1)
                              : std::string("the CPU alone (0)")) +
                         ", or -1 for any");
    if (options->borrow < PP_BORROW_NONE || options->borrow > PP_BORROW_ASSIGNMENT)
      throw ApiError(PP_ERR_INVALID_ARGUMENT, "options.borrow is " + std::to_string(options->borrow) +
                                                  " (PP_BORROW_NONE 0, PP_BORROW_ALL 1 or PP_BORROW_ASSIGNMENT 2)");
    auto req = std::make_shared<Request>(copy_request(*key->impl, inputs, num_inputs, options->seed, options->borrow));
    req->backend = options->gpu;
    std::shared_ptr<AbcRelease> release;
    if (options->borrow == PP_BORROW_ASSIGNMENT) release = std::make_shared<AbcRelease>();
    std::future<void> released = release ? release->promise.get_future() : std::future<void>();
    *out = start_request(engine, key, std::move(req), num_inputs, release);
    if (released.valid()) released.wait();  // a, b, c copied: the caller may free them
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
                                        [&] {
                                          check_capacity(proofs, proofs_size, pending->partitions,
                                                         pending->key->proof_bytes());
                                        });
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
    const KeyImpl& k = *key->impl;
    if (proof_size != k.proof_bytes())
      throw ApiError(PP_ERR_INVALID_ARGUMENT, "proof_size is " + std::to_string(proof_size) +
                                                  ", a proof of this key has " + std::to_string(k.proof_bytes()) + " bytes");
    if (k.pk_bn254)
      verify_as<pp::bn254::Bn254>(k.pvk_bn254, public_inputs, num_public, proof, valid);
    else
      verify_as<pp::Bls12_381>(k.pvk, public_inputs, num_public, proof, valid);
  });
}

}  // extern "C"
