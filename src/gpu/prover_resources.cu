// SPDX-License-Identifier: Apache-2.0 OR MIT
// The GPU prover's resources (prover_impl.cuh): at start-up the plan, the arena it cuts, the
// streams, events and pinned buffers, the NTT tables and the SRS (uploaded, with the H table, or
// pinned for streaming); at shutdown their release. Start-up and shutdown may wait; proving never does.

#include "prover_impl.cuh"

namespace pp::gpu {

// ---------------------------------------------------------------------------------------------

bool start_device(int device) noexcept {
  if (cudaSetDevice(device) != cudaSuccess || cudaFree(nullptr) != cudaSuccess) {
    cudaGetLastError();  // the prover that follows reports the error itself
    return false;
  }
  return true;
}

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the error state
    return 0;
  }
  return n;
}

uint64_t device_memory(int device) {
  check(cudaSetDevice(device), "device_memory: cudaSetDevice");
  std::size_t free_bytes = 0, total_bytes = 0;
  check(cudaMemGetInfo(&free_bytes, &total_bytes), "device_memory: cudaMemGetInfo");  // start-up only
  return total_bytes;
}

// ---------------------------------------------------------------------------------------------

template <class E>
ProverOf<E>::Impl::~Impl() {
  // Start-up and shutdown may wait; proving never does. The last owner may be any thread.
  if (pass_worker.joinable()) {
    {
      const std::lock_guard lock(batch_mu);
      stop_passes = true;
    }
    batch_cv.notify_all();
    pass_worker.join();
  }
  cudaSetDevice(config.device);
  if (compute) cudaStreamSynchronize(compute);
  if (copy) cudaStreamSynchronize(copy);
  if (srs) cudaStreamSynchronize(srs);
  if (pack) cudaStreamSynchronize(pack);
  for (char* b : pack_buffers)
    if (b) cudaFreeHost(b);
  for (std::size_t b = 0; b < packed.size(); ++b) {
    if (packed[b]) cudaEventDestroy(packed[b]);
    if (pack_free[b]) cudaEventDestroy(pack_free[b]);
  }
  for (auto& [p, bytes] : pinned) cudaHostUnregister(p);
  for (void* p : pinned_copies) cudaFreeHost(p);
  if (compute_tail) cudaEventDestroy(compute_tail);
  for (cudaEvent_t e : pass_ahead)
    if (e) cudaEventDestroy(e);
  for (auto e : stage_released) cudaEventDestroy(e);
  for (auto e : staging_free) cudaEventDestroy(e);
  for (F* b : staging) cudaFreeHost(b);
  for (auto& set : marks)
    for (auto e : set) cudaEventDestroy(e);
  for (int b = 0; b < 2; ++b) {
    if (upload_done[b]) cudaEventDestroy(upload_done[b]);
    if (chunk_ready[b]) cudaEventDestroy(chunk_ready[b]);
    if (chunk_free[b]) cudaEventDestroy(chunk_free[b]);
    if (h_ready[b]) cudaEventDestroy(h_ready[b]);
    if (h_free[b]) cudaEventDestroy(h_free[b]);
  }
  for (cudaStream_t s : {copy, compute, srs, pack})
    if (s) cudaStreamDestroy(s);
  if (arena) cudaFree(arena);
  if (config.host_budget && held_host) config.host_budget->unhold(held_host);
}

// The host copy a streamed plan reads its chunks from, in page-locked memory. A vector is
// registered in place; a mapped key cache (file pages) is copied, in parallel, into pinned
// memory this prover owns, and the mapping's pages are handed back: pinning file pages
// would tie the pinned set to the page cache's choices (and a private mapping's to copy-on-write).
template <class E>
template <class T>
const T* ProverOf<E>::Impl::pin(const HostArray<T>& v) {
  if (v.empty()) return v.data();
  const std::size_t bytes = v.size() * sizeof(T);
  if (v.is_view()) {
    void* copy = nullptr;
    check(cudaHostAlloc(&copy, bytes, cudaHostAllocPortable), "GPU prover: pinned copy of the mapped SRS");
    pinned_copies.push_back(copy);
    constexpr std::size_t kGrain = (std::size_t(64) << 20) / sizeof(T);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, v.size(), kGrain), [&](const tbb::blocked_range<std::size_t>& r) {
      std::memcpy(static_cast<T*>(copy) + r.begin(), v.data() + r.begin(), (r.end() - r.begin()) * sizeof(T));
      v.release_pages(r.begin(), r.end() - r.begin());
    });
    return static_cast<const T*>(copy);
  }
  void* q = const_cast<T*>(v.data());
  // Portable: the provers of the same key on other GPUs use the same pinned pages. A copy that
  // another prover pinned first is pinned already; that prover unregisters it.
  const cudaError_t e = device::HostRegister(q, bytes, cudaHostRegisterPortable);
  if (e == cudaErrorHostMemoryAlreadyRegistered) {
    cudaGetLastError();
    return v.data();
  }
  check(e, "GPU prover: pinning the SRS host copy");
  pinned.emplace_back(q, bytes);
  return v.data();
}

// Copies a query to its region in pieces through `staging`, a pinned buffer of two halves of
// kUploadHalfBytes: every core copies the next piece into one half while the link carries the other
// half's, so the key crosses at the link's speed (a pageable copy is staged by the driver on one
// thread, at a fraction of it). Each piece's host pages go back to the kernel once copied when the
// key is a mapped cache (HostArray::release_pages; a no-op for vectors), so uploading a mapped key
// never holds more than a piece of it in host memory. The copies are on the compute stream and
// waited for before this returns: the H table's kernels (compute stream, right after this) read
// the points, and the caller frees the buffer.
template <class E>
template <class C>
void ProverOf<E>::Impl::upload(const std::string& name, const HostArray<Affine<C>>& v, void* staging_buffer) {
  using P = Affine<C>;
  P* d = region<P>(name);
  constexpr std::size_t kPiece = kUploadHalfBytes / sizeof(P);
  static_assert(kPiece > 0 && kUploadHalfBytes % alignof(P) == 0);
  P* const halves[2] = {static_cast<P*>(staging_buffer),
                        reinterpret_cast<P*>(static_cast<char*>(staging_buffer) + kUploadHalfBytes)};
  constexpr std::size_t kGrain = (std::size_t(1) << 20) / sizeof(P) + 1;
  std::size_t k = 0;
  for (std::size_t at = 0; at < v.size(); at += kPiece, ++k) {
    const std::size_t n = std::min(kPiece, v.size() - at), b = k & 1;
    if (k >= 2) check(device::EventSynchronize(upload_done[b]), "GPU prover: SRS upload");  // the half is free
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, kGrain), [&](const tbb::blocked_range<std::size_t>& r) {
      std::memcpy(halves[b] + r.begin(), v.data() + at + r.begin(), (r.end() - r.begin()) * sizeof(P));
    });
    v.release_pages(at, n);
    check(device::MemcpyAsync(d + at, halves[b], n * sizeof(P), cudaMemcpyHostToDevice, compute), "GPU prover: SRS upload");
    check(device::EventRecord(upload_done[b], compute), "GPU prover: SRS upload");
  }
  check(device::StreamSynchronize(compute), "GPU prover: SRS upload");
}

template <class E>
ProverOf<E>::ProverOf(const Key& pk, const Densities& densities, const ProverConfig& config)
    : impl_(std::make_unique<Impl>(pk, densities, config)) {
  using F = typename E::Fr;
  using G1 = typename E::G1;
  Impl& m = *impl_;
  const auto t0 = std::chrono::steady_clock::now();
  auto t_last = t0;
  auto lap = [&t_last] {  // ms since the previous lap
    const auto t = std::chrono::steady_clock::now();
    const double ms = std::chrono::duration<double, std::milli>(t - t_last).count();
    t_last = t;
    return ms;
  };
  if (config.calls) m.calls = config.calls;
  m.num_inputs = pk.vk.ic.size();
  m.num_aux = pk.l.size();
  // The key's query layout (its counts checked against each other), the densities against it.
  const QueryLayout layout = QueryLayout::of(pk);
  layout.check_densities(densities, "GPU prover: ");
  m.a_vars = layout.a_variables(densities);
  m.b_vars = layout.b_variables(densities);
  const engine::CircuitShape shape = engine::shape_of(layout, Impl::kPoints);
  const bool bellman = layout.h_basis == HBasis::bellman;
  if (shape.lg > kMaxNttLg)
    throw std::invalid_argument("GPU prover: a 2^" + std::to_string(shape.lg) + " domain exceeds the GPU NTT's 2^" +
                                std::to_string(kMaxNttLg));
  check(cudaSetDevice(config.device), "GPU prover: cudaSetDevice");
  std::size_t free_bytes = 0, total_bytes = 0;
  check(cudaMemGetInfo(&free_bytes, &total_bytes), "GPU prover: cudaMemGetInfo");  // once, at start
  engine::PlanRequest req;
  req.shape = shape;
  req.device_memory = total_bytes;
  req.budget = config.budget;
  req.gw = config.gw;
  req.srs = config.srs;
  req.h_table = config.h_table;
  req.split_batch = config.split_batch;
  m.plan = engine::plan_memory(req);
  m.resident = m.plan.srs == SrsPlacement::resident;
  m.max_windows = engine::msm_windows(kMinWindow);
  if (m.sums_bytes() > m.region_bytes("msm[0].sums"))
    throw GpuError(Status::invalid("GPU prover: the plan's sums region is too small"));
  m.startup.plan = lap();
  if (config.host_budget) {
    // Before anything is pinned: a key whose holdings would pass the budget is not loaded.
    const uint64_t held = m.plan.held_host_bytes(config.pinned_staging);
    config.host_budget->hold(held, "a 2^" + std::to_string(shape.lg) + " key's GPU prover (" +
                                       engine::to_string(m.plan.srs) + " SRS: pinned staging, pack buffers" +
                                       (m.resident ? "" : ", the SRS host copy") + ")");
    m.held_host = held;
  }

  check(cudaMalloc(&m.arena, m.plan.arena_bytes), "GPU prover: allocating the arena");
  check(cudaStreamCreateWithFlags(&m.copy, cudaStreamNonBlocking), "GPU prover: stream");
  check(cudaStreamCreateWithFlags(&m.compute, cudaStreamNonBlocking), "GPU prover: stream");
  check(cudaStreamCreateWithFlags(&m.srs, cudaStreamNonBlocking), "GPU prover: stream");
  m.stage_released.resize(std::size_t(m.plan.stage_slots));
  for (auto& e : m.stage_released) check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "GPU prover: event");
  m.startup.arena = lap();
  if (config.pinned_staging) {
    // One pinned buffer per stage slot, allocated once: uploads from pinned memory run at the
    // link's speed and leave the host free, where pageable ones are staged by the driver.
    const std::size_t scalars = std::size_t(m.plan.staging_scalars());
    m.staging.assign(std::size_t(m.plan.stage_slots), nullptr);
    m.staging_free.assign(std::size_t(m.plan.stage_slots), nullptr);
    for (std::size_t i = 0; i < m.staging.size(); ++i) {
      check(cudaHostAlloc(reinterpret_cast<void**>(&m.staging[i]), scalars * sizeof(F), cudaHostAllocDefault),
            "GPU prover: pinned staging buffer");
      check(cudaEventCreateWithFlags(&m.staging_free[i], cudaEventDisableTiming), "GPU prover: event");
    }
  }
  m.startup.staging = lap();
  m.marks.resize(std::size_t(m.plan.msm_slots));
  for (auto& set : m.marks)
    for (auto& e : set) check(cudaEventCreate(&e), "GPU prover: event");
  for (int b = 0; b < 2; ++b) {
    check(cudaEventCreateWithFlags(&m.upload_done[b], cudaEventDisableTiming), "GPU prover: event");
    check(cudaEventCreateWithFlags(&m.chunk_ready[b], cudaEventDisableTiming), "GPU prover: event");
    check(cudaEventCreateWithFlags(&m.chunk_free[b], cudaEventDisableTiming), "GPU prover: event");
    check(cudaEventCreateWithFlags(&m.h_ready[b], cudaEventDisableTiming), "GPU prover: event");
    check(cudaEventCreateWithFlags(&m.h_free[b], cudaEventDisableTiming), "GPU prover: event");
  }
  check(cudaEventCreateWithFlags(&m.compute_tail, cudaEventDisableTiming), "GPU prover: event");
  if (!m.resident) {
    m.pack_arena = std::make_unique<tbb::task_arena>(tbb::task_arena::automatic, 1, tbb::task_arena::priority::high);
    check(cudaStreamCreateWithFlags(&m.pack, cudaStreamNonBlocking), "GPU prover: stream");
    for (std::size_t b = 0; b < m.pack_buffers.size(); ++b) {
      check(cudaHostAlloc(reinterpret_cast<void**>(&m.pack_buffers[b]), m.plan.pinned_pack_bytes() / m.pack_buffers.size(),
                          cudaHostAllocDefault),
            "GPU prover: pinned pack buffer");
      check(cudaEventCreateWithFlags(&m.packed[b], cudaEventDisableTiming), "GPU prover: event");
      check(cudaEventCreateWithFlags(&m.pack_free[b], cudaEventDisableTiming), "GPU prover: event");
    }
  }

  const DomainOf<F> domain(shape.lg, pk.convention.domain_generator);
  const NttRootsOf<F> roots =
      bellman ? roots_of(domain) : roots_of(domain, DomainOf<F>(shape.lg + 1, pk.convention.domain_generator).omega());
  m.h_factor = bellman ? domain.vanishing_on_coset().inverse() : F::one().canonical_limbs();
  check(ntt_tables_init(m.template region<void>("ntt.tables"), m.region_bytes("ntt.tables"), shape.lg, roots, m.compute,
                        &m.tables, twist_table_lg(shape.lg, m.plan.ntt_full_twist)));
  m.startup.tables = lap();
  if (m.resident) {
    void* staging_buffer = nullptr;
    check(cudaHostAlloc(&staging_buffer, 2 * Impl::kUploadHalfBytes, cudaHostAllocDefault), "GPU prover: SRS upload buffer");
    const std::unique_ptr<void, cudaError_t (*)(void*)> free_staging(staging_buffer, cudaFreeHost);
    m.upload("srs.h", pk.h, staging_buffer);
    // The H fixed-base table: copies 1 .. h_copies-1 after the H points (start-up work).
    if (m.plan.h_copies > 1)
      check(precompute_bases<G1>(m.template region<Affine<G1>>("srs.h"), pk.h.size(), m.plan.window_h, m.plan.h_copies,
                                 m.compute));
    m.upload("srs.l", pk.l, staging_buffer);
    m.upload("srs.a", pk.a, staging_buffer);
    m.upload("srs.b_g1", pk.b_g1, staging_buffer);
    m.upload("srs.b_g2", pk.b_g2, staging_buffer);
    // Stream-ordered as the SRS (upload): the synchronisation below waits for them.
    check(cudaMemcpyAsync(m.template region<uint32_t>("srs.a_vars"), m.a_vars.data(), m.a_vars.size() * 4,
                          cudaMemcpyHostToDevice, m.compute),
          "GPU prover: variable map upload");
    check(cudaMemcpyAsync(m.template region<uint32_t>("srs.b_vars"), m.b_vars.data(), m.b_vars.size() * 4,
                          cudaMemcpyHostToDevice, m.compute),
          "GPU prover: variable map upload");
  } else {
    m.host_h = m.pin(pk.h);
    m.host_l = m.pin(pk.l);
    m.host_a = m.pin(pk.a);
    m.host_b_g1 = m.pin(pk.b_g1);
    m.host_b_g2 = m.pin(pk.b_g2);
  }
  check(cudaStreamSynchronize(m.compute), "GPU prover: start-up");
  if (m.batched() && config.pass_thread) {
    // Blocking-sync events: the pass thread sleeps while it waits for the device.
    for (cudaEvent_t& e : m.pass_ahead)
      check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming | cudaEventBlockingSync), "GPU prover: event");
    m.pass_worker = std::thread([&m] { m.pass_loop(); });
  }
  m.startup.srs = lap();
  m.startup.total = std::chrono::duration<double, std::milli>(t_last - t0).count();
}

// Impl's destructor releases everything (a defaulted definition here cannot be explicitly
// instantiated below with GCC 12).
template <class E>
ProverOf<E>::~ProverOf() {}

template <class E>
const engine::MemoryPlan& ProverOf<E>::plan() const {
  return impl_->plan;
}
template <class E>
const StartupTimes& ProverOf<E>::startup_times() const {
  return impl_->startup;
}
template <class E>
engine::DeviceCalls& ProverOf<E>::device_calls() {
  return *impl_->calls;
}
template <class E>
int ProverOf<E>::device() const {
  return impl_->config.device;
}

// This file's members of both curves' provers (prover.cu and prover_msm.cu instantiate theirs).
#define PP_GPU_PROVER_RESOURCES(E)                                                         \
  template ProverOf<E>::ProverOf(const ProvingKeyOf<E>&, const Densities&, const ProverConfig&); \
  template ProverOf<E>::~ProverOf();                                                       \
  template const engine::MemoryPlan& ProverOf<E>::plan() const;                            \
  template const StartupTimes& ProverOf<E>::startup_times() const;                         \
  template engine::DeviceCalls& ProverOf<E>::device_calls();                               \
  template int ProverOf<E>::device() const;
PP_GPU_PROVER_RESOURCES(Bls12_381)
PP_GPU_PROVER_RESOURCES(bn254::Bn254)
#undef PP_GPU_PROVER_RESOURCES

}  // namespace pp::gpu
