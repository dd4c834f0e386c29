// SPDX-License-Identifier: Apache-2.0 OR MIT
// Runtime: the process's engine over its GPUs or the CPU (runtime.hpp).
#include "proofpipe/runtime/runtime.hpp"

#include <fmt/core.h>

#include <cstdio>
#include <cstdlib>

#include <algorithm>
#include <atomic>
#include <initializer_list>
#include <optional>
#include <string>
#include <stdexcept>

#include "proofpipe/engine/cpu_backend.hpp"
#include "proofpipe/engine/losing_backend.hpp"
#if PROOFPIPE_HAS_CUDA
#include "proofpipe/gpu/cuda_backend.hpp"
#include "proofpipe/gpu/prover.hpp"
#endif

namespace pp::runtime {

std::optional<LoseGpu> parse_lose_gpu(const std::string& value) {
  const std::string what = fmt::format("PROOFPIPE_TEST_LOSE_GPU=\"{}\": expected DEVICE@N (the CUDA ordinal, and the "
                                       "partition, from 1, at whose start that GPU is lost)", value);
  if (value.empty()) return std::nullopt;
  const std::size_t at = value.find('@');
  if (at == std::string::npos || at == 0 || at + 1 == value.size()) throw std::invalid_argument(what);
  auto number = [&](const std::string& digits) {
    if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) throw std::invalid_argument(what);
    return std::stoull(digits);
  };
  LoseGpu out;
  out.device = int(number(value.substr(0, at)));
  out.at_prepare = number(value.substr(at + 1));
  if (out.at_prepare == 0) throw std::invalid_argument(what);
  return out;
}

std::optional<int> parse_sim_gpus(const std::string& value) {
  if (value.empty()) return std::nullopt;
  const int n = value.size() <= 2 && value.find_first_not_of("0123456789") == std::string::npos ? std::stoi(value) : 0;
  if (n < 1 || n > kMaxSimGpus)
    throw std::invalid_argument(fmt::format("PROOFPIPE_TEST_SIM_GPUS=\"{}\": expected a number of simulated GPUs, "
                                            "1 .. {}", value, kMaxSimGpus));
  return n;
}

std::optional<int> sim_gpus_from_env() {
  const char* v = std::getenv("PROOFPIPE_TEST_SIM_GPUS");
  return v ? parse_sim_gpus(v) : std::nullopt;
}

std::optional<LoseGpu> lose_gpu_from_env() {
  const char* v = std::getenv("PROOFPIPE_TEST_LOSE_GPU");
  return v ? parse_lose_gpu(v) : std::nullopt;
}

struct Runtime::Impl {
  using Bn = bn254::Bn254;
  Config config;
  // The CPU backends prove when there is no GPU, and are the engines' CPU fallback either way.
  std::unique_ptr<engine::CpuBackend> cpu;
  std::unique_ptr<engine::CpuBackendOf<Bn>> cpu_bn;
#if PROOFPIPE_HAS_CUDA
  std::vector<std::unique_ptr<gpu::CudaBackend>> gpus;          // one per GPU
  std::vector<std::unique_ptr<gpu::CudaBackendOf<Bn>>> gpus_bn;  // the same GPUs, BN254 keys
#endif
  // PROOFPIPE_TEST_SIM_GPUS's simulated GPUs (a test hook): CPU provers named sim<d>, one per curve.
  std::vector<std::unique_ptr<engine::CpuBackend>> sims;
  std::vector<std::unique_ptr<engine::CpuBackendOf<Bn>>> sims_bn;
  std::vector<int> sim_devices;  // their ordinals
  // PROOFPIPE_TEST_LOSE_GPU's wrappers (a test hook): the engines drive these instead of that GPU's backends.
  std::unique_ptr<engine::LosingBackend> losing;
  std::unique_ptr<engine::LosingBackendOf<Bn>> losing_bn;
  std::shared_ptr<engine::HostBudget> host_budget;
  std::shared_ptr<std::atomic<uint64_t>> job_ids = std::make_shared<std::atomic<uint64_t>>(1);
  std::unique_ptr<engine::Engine> engine;
  std::unique_ptr<engine::EngineOf<Bn>> engine_bn;

  // The engine over curve E's backends: its GPUs', or its CPU backend when there is none.
  template <class E>
  std::unique_ptr<engine::EngineOf<E>> make_engine(engine::CpuBackendOf<E>* cpu_backend,
                                                   std::vector<engine::BackendOf<E>*> backends) {
    engine::EngineConfigOf<E> ec;
    ec.interlock = config.interlock;
    ec.shared_host_budget = host_budget;
    ec.job_ids = job_ids;
    ec.trace = config.trace;
    ec.check_proofs = config.check_proofs;
    ec.on_rejected = [](const std::string& where, uint64_t job, std::size_t partition) {
      // A GPU's proof is proved again; the CPU prover's means the witness does not satisfy.
      fmt::print(stderr, "proofpipe: warning: the proof of job {} partition {} made on {} did not verify{}\n", job,
                 partition, where, where == "cpu" ? "" : "; it is proved again");
    };
    ec.fallback = config.cpu_fallback ? engine::Fallback::cpu : engine::Fallback::fail_job;
    ec.cpu_prover = [cpu_backend](const engine::PartitionTaskOf<E>& t) { return cpu_backend->prove(t); };
    if (backends.empty()) {
      backends.push_back(cpu_backend);
      ec.gw = 1;  // the CPU prover uses every core for one partition; more workers would only queue
      ec.max_retries = 0;
      ec.fallback = engine::Fallback::fail_job;  // proving again on the same CPU cannot help
    } else {
      ec.gw = config.gw;
    }
    return std::make_unique<engine::EngineOf<E>>(std::move(backends), std::move(ec));
  }
};

Runtime::Runtime(const Config& config) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.config = config;
  if (config.gw < 1 || config.gw > 64) throw std::invalid_argument(fmt::format("gw is {} (1 .. 64)", config.gw));
  if (config.threads < 0) throw std::invalid_argument(fmt::format("threads is {} (0: every core)", config.threads));
  m.cpu = std::make_unique<engine::CpuBackend>("cpu", config.threads);
  m.cpu_bn = std::make_unique<engine::CpuBackendOf<Impl::Bn>>("cpu", config.threads);
  // The devices to prove on, from `visible` of them: every one, or the ordinals asked for.
  std::vector<int> devices;
  auto choose = [&](int visible) {
    if (config.all_gpus) {
      for (int d = 0; d < visible; ++d) devices.push_back(d);
      return;
    }
    for (int d : config.gpus) {
      if (d < 0 || d >= visible) throw std::invalid_argument(fmt::format("GPU {} is not visible ({} device(s))", d, visible));
      if (std::count(config.gpus.begin(), config.gpus.end(), d) > 1)
        throw std::invalid_argument(fmt::format("GPU {} is listed twice", d));
      devices.push_back(d);
    }
  };
  std::vector<engine::Backend*> backends;
  std::vector<engine::BackendOf<Impl::Bn>*> backends_bn;
  // One host budget for both engines and the GPU provers' holdings.
  m.host_budget = std::make_shared<engine::HostBudget>(config.host_budget);
  if (const std::optional<int> sim = sim_gpus_from_env()) {
    // Test hook (docs/ENGINE.md): simulated GPUs, each a CPU prover standing in for a device, so
    // that several devices can be driven through every entry point on a machine without one.
    choose(*sim);
    fmt::print(stderr, "proofpipe: warning: PROOFPIPE_TEST_SIM_GPUS={}: proving on {} simulated GPU(s), CPU provers "
                       "standing in for devices (a test hook)\n", *sim, devices.size());
    for (int d : devices) {
      m.sims.push_back(std::make_unique<engine::CpuBackend>(fmt::format("sim{}", d), config.threads));
      m.sims_bn.push_back(std::make_unique<engine::CpuBackendOf<Impl::Bn>>(fmt::format("sim{}-bn254", d), config.threads));
      backends.push_back(m.sims.back().get());
      backends_bn.push_back(m.sims_bn.back().get());
    }
    m.sim_devices = devices;
  } else {
#if PROOFPIPE_HAS_CUDA
    choose(gpu::device_count());
    // Test hook (docs/ENGINE.md): corrupt every Nth device result of each GPU, to show the check.
    uint64_t corrupt_every = 0;
    if (const char* v = std::getenv("PROOFPIPE_DEBUG_CORRUPT_EVERY"); v && *v) {
      char* end = nullptr;
      corrupt_every = std::strtoull(v, &end, 10);
      if (*end != '\0' || corrupt_every == 0)
        throw std::invalid_argument(fmt::format("PROOFPIPE_DEBUG_CORRUPT_EVERY=\"{}\": expected a positive integer", v));
      fmt::print(stderr, "proofpipe: warning: PROOFPIPE_DEBUG_CORRUPT_EVERY={}: every {}th GPU result is corrupted on "
                         "purpose (a test hook)\n", corrupt_every, corrupt_every);
    }
    for (int d : devices) {
      gpu::CudaBackendConfig c;
      c.device = d;
      c.debug_corrupt_every = corrupt_every;
      c.budget = config.device_budget;
      c.gw = config.gw;
      c.srs = config.srs;
      c.ledger = std::make_shared<gpu::CardLedger>();  // the GPU's memory, shared by both curves' backends
      c.host_budget = m.host_budget;
      m.gpus.push_back(std::make_unique<gpu::CudaBackend>(c));
      c.name = fmt::format("gpu{}-bn254", d);
      m.gpus_bn.push_back(std::make_unique<gpu::CudaBackendOf<Impl::Bn>>(c));
      backends.push_back(m.gpus.back().get());
      backends_bn.push_back(m.gpus_bn.back().get());
    }
#else
    if (!config.all_gpus && !config.gpus.empty())
      throw std::invalid_argument("GPUs were asked for but this build has no GPU prover (built without CUDA)");
#endif
  }
  if (devices.empty() && !config.cpu_fallback && (config.all_gpus || !config.gpus.empty()))
    throw std::invalid_argument("cpu_fallback is off but no GPU is visible to prove on: enable the CPU fallback");

  // Test hook (docs/ENGINE.md): lose one GPU partway through the run, as if it had been made
  // unavailable to the process; its partitions are proved again on the other GPUs.
  if (const std::optional<LoseGpu> lose = lose_gpu_from_env()) {
    const auto at = std::find(devices.begin(), devices.end(), lose->device);
    if (at == devices.end())
      throw std::invalid_argument(fmt::format("PROOFPIPE_TEST_LOSE_GPU: GPU {} is not one this process proves on ({} GPU(s))",
                                              lose->device, devices.size()));
    const std::size_t i = std::size_t(at - devices.begin());
    auto loss = std::make_shared<engine::DeviceLoss>(lose->at_prepare);  // both curves' backends are one device
    m.losing = std::make_unique<engine::LosingBackend>(*backends[i], loss);
    m.losing_bn = std::make_unique<engine::LosingBackendOf<Impl::Bn>>(*backends_bn[i], loss);
    backends[i] = m.losing.get();
    backends_bn[i] = m.losing_bn.get();
    fmt::print(stderr, "proofpipe: warning: PROOFPIPE_TEST_LOSE_GPU={}@{}: GPU {} is lost at its partition {} on purpose "
                       "(a test hook)\n", lose->device, lose->at_prepare, lose->device, lose->at_prepare);
  }
  m.engine = m.make_engine(m.cpu.get(), std::move(backends));
  m.engine_bn = m.make_engine(m.cpu_bn.get(), std::move(backends_bn));
}

Runtime::~Runtime() {
  for (auto stop : {+[](Impl& m) { m.engine->shutdown(engine::Shutdown::cancel); },
                    +[](Impl& m) { m.engine_bn->shutdown(engine::Shutdown::cancel); }}) {
    try {
      stop(*impl_);
    } catch (...) {
    }
  }
}

engine::JobHandle Runtime::submit(engine::JobSpec spec) { return impl_->engine->submit(std::move(spec)); }
engine::JobHandleOf<bn254::Bn254> Runtime::submit(engine::JobSpecOf<bn254::Bn254> spec) {
  return impl_->engine_bn->submit(std::move(spec));
}
bool Runtime::cancel(uint64_t job) { return impl_->engine->cancel(job) || impl_->engine_bn->cancel(job); }
void Runtime::shutdown(engine::Shutdown how) {
  impl_->engine->shutdown(how);
  impl_->engine_bn->shutdown(how);
}
engine::Engine& Runtime::engine() { return *impl_->engine; }
engine::EngineOf<bn254::Bn254>& Runtime::engine_bn254() { return *impl_->engine_bn; }
const Config& Runtime::config() const { return impl_->config; }

int Runtime::gpu_count() const {
  if (!impl_->sims.empty()) return int(impl_->sims.size());
#if PROOFPIPE_HAS_CUDA
  return int(impl_->gpus.size());
#else
  return 0;
#endif
}

namespace {

// Key residency over one curve's GPU backends (empty without CUDA).
template <class Gpus, class Key>
bool preload_on(Gpus& gpus, const std::shared_ptr<const Key>& key, const Densities& densities, std::string* why) {
  bool all = true;
  for (auto& g : gpus) {
    std::string w;
    if (!g->preload(key, densities, &w)) {
      all = false;
      if (why) *why += (why->empty() ? "" : "; ") + w;
    }
  }
  return all;
}

template <class Gpus, class Key>
int evict_on(Gpus& gpus, const Key* key) {
  int n = 0;
  for (auto& g : gpus) n += g->evict(key) ? 1 : 0;
  return n;
}

template <class Gpus>
std::vector<KeyResidency> residency_on(const Gpus& gpus, const void* key) {
  std::vector<KeyResidency> out;
  for (std::size_t i = 0; i < gpus.size(); ++i)
    for (const auto& r : gpus[i]->resident())
      if (r.key == key) out.push_back({int(i), r.srs, r.arena_bytes});
  return out;
}

// The second engine's stats folded into the first's: counts summed, its backends listed after
// the first's once it has had a job (a process that proves one curve sees one engine).
void fold(engine::EngineStats& into, const engine::EngineStats& more) {
  if (more.jobs_submitted == 0) return;
  into.wall_s = std::max(into.wall_s, more.wall_s);
  into.jobs_submitted += more.jobs_submitted;
  into.jobs_done += more.jobs_done;
  into.partitions_ok += more.partitions_ok;
  into.partitions_failed += more.partitions_failed;
  into.partitions_cancelled += more.partitions_cancelled;
  into.cpu_fallbacks += more.cpu_fallbacks;
  into.proofs_checked += more.proofs_checked;
  into.proofs_rejected += more.proofs_rejected;
  into.cpu_proofs_rejected += more.cpu_proofs_rejected;
  into.check_ms += more.check_ms;
  into.host_peak_bytes = std::max(into.host_peak_bytes, more.host_peak_bytes);  // one shared budget
  into.host_held_bytes = std::max(into.host_held_bytes, more.host_held_bytes);
  into.backends.insert(into.backends.end(), more.backends.begin(), more.backends.end());
}

// A GPU's engine counts, from its backends' (one per curve; the BN254 one listed once it had a job).
GpuInfo add_backends(GpuInfo info, const engine::EngineStats& engine, std::initializer_list<std::string> names) {
  for (const engine::BackendStats& b : engine.backends)
    if (std::find(names.begin(), names.end(), b.name) != names.end()) {
      info.proofs_checked += b.checked;
      info.proofs_rejected += b.rejected;
      info.partitions += b.partitions;
      info.handed_off += b.handed_off;
      info.healthy = info.healthy && b.healthy;
    }
  return info;
}

}  // namespace

bool Runtime::preload(const std::shared_ptr<const ProvingKey>& key, const Densities& densities, std::string* why) {
#if PROOFPIPE_HAS_CUDA
  return preload_on(impl_->gpus, key, densities, why);
#else
  (void)key, (void)densities, (void)why;
  return true;
#endif
}

bool Runtime::preload(const std::shared_ptr<const bn254::ProvingKey>& key, const Densities& densities, std::string* why) {
#if PROOFPIPE_HAS_CUDA
  return preload_on(impl_->gpus_bn, key, densities, why);
#else
  (void)key, (void)densities, (void)why;
  return true;
#endif
}

int Runtime::evict(const ProvingKey* key) {
#if PROOFPIPE_HAS_CUDA
  return evict_on(impl_->gpus, key);
#else
  (void)key;
  return 0;
#endif
}

int Runtime::evict(const bn254::ProvingKey* key) {
#if PROOFPIPE_HAS_CUDA
  return evict_on(impl_->gpus_bn, key);
#else
  (void)key;
  return 0;
#endif
}

std::vector<KeyResidency> Runtime::residency(const ProvingKey* key) const {
#if PROOFPIPE_HAS_CUDA
  return residency_on(impl_->gpus, key);
#else
  (void)key;
  return {};
#endif
}

std::vector<KeyResidency> Runtime::residency(const bn254::ProvingKey* key) const {
#if PROOFPIPE_HAS_CUDA
  return residency_on(impl_->gpus_bn, key);
#else
  (void)key;
  return {};
#endif
}

Stats Runtime::stats() const {
  const Impl& m = *impl_;
  Stats s;
  s.engine = m.engine->stats();
  fold(s.engine, m.engine_bn->stats());
  s.gpus = gpu_count();
  s.partitions_on_cpu = m.cpu->partitions() + m.cpu_bn->partitions();
  s.times += m.cpu->totals();
  s.times += m.cpu_bn->totals();
  for (std::size_t i = 0; i < m.sims.size(); ++i) {  // simulated GPUs: no device memory, CPU stage times
    s.times += m.sims[i]->totals();
    s.times += m.sims_bn[i]->totals();
    GpuInfo info;
    info.device = m.sim_devices[i];
    s.devices.push_back(add_backends(info, s.engine, {m.sims[i]->name(), m.sims_bn[i]->name()}));
  }
#if PROOFPIPE_HAS_CUDA
  for (std::size_t i = 0; i < m.gpus.size(); ++i) {
    const auto& g = *m.gpus[i];
    const auto& gb = *m.gpus_bn[i];
    s.key_loads += g.key_loads() + gb.key_loads();
    s.key_evictions += g.evictions() + gb.evictions();
    // One ledger per GPU: either backend's memory() is the card's.
    GpuInfo info;
    info.device = g.device();
    info.memory = g.memory();
    info.resident_keys = uint32_t(g.resident().size() + gb.resident().size());
    s.devices.push_back(add_backends(info, s.engine, {g.name(), gb.name()}));
    for (const gpu::GpuTimes& t : {g.totals(), gb.totals()}) {
      s.devices.back().busy_ms += t.compute;
      static_cast<ProverStageTimes&>(s.times) += t;  // the stages both provers have
      s.times.gpu_upload += t.upload;
      s.times.gpu_compute += t.compute;
      s.srs_bytes_streamed += t.srs_bytes;
    }
  }
#endif
  return s;
}

}  // namespace pp::runtime
