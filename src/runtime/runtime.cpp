// SPDX-License-Identifier: Apache-2.0 OR MIT
// Runtime: the process's engine over its GPUs or the CPU (runtime.hpp).
#include "proofpipe/runtime/runtime.hpp"

#include <fmt/core.h>

#include <cstdio>
#include <cstdlib>

#include <algorithm>
#include <stdexcept>

#include "proofpipe/engine/cpu_backend.hpp"
#if PROOFPIPE_HAS_CUDA
#include "proofpipe/gpu/cuda_backend.hpp"
#include "proofpipe/gpu/prover.hpp"
#endif

namespace pp::runtime {

struct Runtime::Impl {
  Config config;
  // The CPU backend proves when there is no GPU, and is the engine's CPU fallback either way.
  std::unique_ptr<engine::CpuBackend> cpu;
#if PROOFPIPE_HAS_CUDA
  std::vector<std::unique_ptr<gpu::CudaBackend>> gpus;
#endif
  std::unique_ptr<engine::Engine> engine;
};

Runtime::Runtime(const Config& config) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.config = config;
  if (config.gw < 1 || config.gw > 64) throw std::invalid_argument(fmt::format("gw is {} (1 .. 64)", config.gw));
  if (config.threads < 0) throw std::invalid_argument(fmt::format("threads is {} (0: every core)", config.threads));
  m.cpu = std::make_unique<engine::CpuBackend>("cpu", config.threads);
  std::vector<int> devices;
#if PROOFPIPE_HAS_CUDA
  const int visible = gpu::device_count();
  if (config.all_gpus) {
    for (int d = 0; d < visible; ++d) devices.push_back(d);
  } else {
    for (int d : config.gpus) {
      if (d < 0 || d >= visible)
        throw std::invalid_argument(fmt::format("GPU {} is not visible ({} device(s))", d, visible));
      if (std::count(config.gpus.begin(), config.gpus.end(), d) > 1)
        throw std::invalid_argument(fmt::format("GPU {} is listed twice", d));
      devices.push_back(d);
    }
  }
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
    m.gpus.push_back(std::make_unique<gpu::CudaBackend>(c));
  }
#else
  if (!config.all_gpus && !config.gpus.empty())
    throw std::invalid_argument("GPUs were asked for but this build has no GPU prover (built without CUDA)");
#endif
  if (devices.empty() && !config.cpu_fallback && (config.all_gpus || !config.gpus.empty()))
    throw std::invalid_argument("cpu_fallback is off but no GPU is visible to prove on: enable the CPU fallback");

  engine::EngineConfig ec;
  ec.interlock = config.interlock;
  ec.host_mem_bytes = config.host_budget;
  ec.trace = config.trace;
  ec.check_proofs = config.check_proofs;
  ec.on_rejected = [](const std::string& where, uint64_t job, std::size_t partition) {
    // A GPU's proof is proved again; the CPU prover's means the witness does not satisfy.
    fmt::print(stderr, "proofpipe: warning: the proof of job {} partition {} made on {} did not verify{}\n", job, partition,
               where, where == "cpu" ? "" : "; it is proved again");
  };
  ec.fallback = config.cpu_fallback ? engine::Fallback::cpu : engine::Fallback::fail_job;
  engine::CpuBackend* cpu = m.cpu.get();
  ec.cpu_prover = [cpu](const engine::PartitionTask& t) { return cpu->prove(t); };
  std::vector<engine::Backend*> backends;
#if PROOFPIPE_HAS_CUDA
  for (auto& g : m.gpus) backends.push_back(g.get());
#endif
  if (backends.empty()) {
    backends.push_back(m.cpu.get());
    ec.gw = 1;  // the CPU prover uses every core for one partition; more workers would only queue
    ec.max_retries = 0;
    ec.fallback = engine::Fallback::fail_job;  // proving again on the same CPU cannot help
  } else {
    ec.gw = config.gw;
  }
  m.engine = std::make_unique<engine::Engine>(std::move(backends), ec);
}

Runtime::~Runtime() {
  try {
    impl_->engine->shutdown(engine::Shutdown::cancel);
  } catch (...) {
  }
}

engine::JobHandle Runtime::submit(engine::JobSpec spec) { return impl_->engine->submit(std::move(spec)); }
bool Runtime::cancel(uint64_t job) { return impl_->engine->cancel(job); }
void Runtime::shutdown(engine::Shutdown how) { impl_->engine->shutdown(how); }
engine::Engine& Runtime::engine() { return *impl_->engine; }
const Config& Runtime::config() const { return impl_->config; }

int Runtime::gpu_count() const {
#if PROOFPIPE_HAS_CUDA
  return int(impl_->gpus.size());
#else
  return 0;
#endif
}

bool Runtime::preload(const std::shared_ptr<const ProvingKey>& key, const Densities& densities, std::string* why) {
  bool all = true;
#if PROOFPIPE_HAS_CUDA
  for (auto& g : impl_->gpus) {
    std::string w;
    if (!g->preload(key, densities, &w)) {
      all = false;
      if (why) *why += (why->empty() ? "" : "; ") + w;
    }
  }
#else
  (void)key;
  (void)densities;
  (void)why;
#endif
  return all;
}

int Runtime::evict(const ProvingKey* key) {
  int n = 0;
#if PROOFPIPE_HAS_CUDA
  for (auto& g : impl_->gpus) n += g->evict(key) ? 1 : 0;
#else
  (void)key;
#endif
  return n;
}

std::vector<KeyResidency> Runtime::residency(const ProvingKey* key) const {
  std::vector<KeyResidency> out;
#if PROOFPIPE_HAS_CUDA
  for (std::size_t i = 0; i < impl_->gpus.size(); ++i)
    for (const gpu::ResidentKey& r : impl_->gpus[i]->resident())
      if (r.key == key) out.push_back({int(i), r.srs, r.arena_bytes});
#else
  (void)key;
#endif
  return out;
}

Stats Runtime::stats() const {
  const Impl& m = *impl_;
  Stats s;
  s.engine = m.engine->stats();
  s.gpus = gpu_count();
  s.partitions_on_cpu = m.cpu->partitions();
  s.times += m.cpu->totals();
#if PROOFPIPE_HAS_CUDA
  for (const auto& g : m.gpus) {
    s.key_loads += g->key_loads();
    s.key_evictions += g->evictions();
    s.devices.push_back({g->device(), g->memory(), uint32_t(g->resident().size()), 0, 0});
    for (const engine::BackendStats& b : s.engine.backends)
      if (b.name == g->name()) {
        s.devices.back().proofs_checked = b.checked;
        s.devices.back().proofs_rejected = b.rejected;
      }
    const gpu::GpuTimes t = g->totals();
    static_cast<ProverStageTimes&>(s.times) += t;  // the stages both provers have
    s.times.gpu_upload += t.upload;
    s.times.gpu_compute += t.compute;
  }
#endif
  return s;
}

}  // namespace pp::runtime
