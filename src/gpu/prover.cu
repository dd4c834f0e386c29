// SPDX-License-Identifier: Apache-2.0 OR MIT
// The GPU Groth16 prover (prover.hpp): one arena cut by the memory planner, two streams (copy:
// staging; compute: NTTs and MSMs) and a third for SRS chunks when the SRS is streamed, events
// between them, no allocation, free, memory query or device-wide synchronisation while proving.

#include "prover_impl.cuh"

namespace pp::gpu {

namespace {

// Host callback in stream order: stamps the host clock when the device gets there.
void CUDART_CB stamp_now(void* arg) {
  static_cast<std::atomic<int64_t>*>(arg)->store(std::chrono::steady_clock::now().time_since_epoch().count());
}

}  // namespace

// The split query `pass` (0 L, 1 A, 2 B_G1 over G1; 3 B_G2 over G2) of partition p as both paths
// start it: its points' count and host copy, its inputs, and where its window sums go in p's msm
// slot — G1: H, L, A, B_G1 at 0, W, 2W, 3W, their batch sums at 4W + 0..2; G2: B_G2 at 0, its batch
// sum at W. The resident path adds the device points, variable maps and bitmaps.
template <class E>
template <class C>
Query<C> ProverOf<E>::Impl::query_of(Partition& p, int pass) {
  const int W = max_windows;
  SplitInputs<F>& sp = *p.split;
  if constexpr (std::is_same_v<C, G2>) {
    XYZZ<G2>* g2 = g2_sums(p.msm_slot);
    return {.h_points = host_b_g2, .n = b_vars.size(), .in = &sp.b, .inputs = p.split, .d_windows = g2,
            .d_ones_sum = g2 + W, .shape = &p.b2_shape};
  } else {
    XYZZ<G1>* g1 = g1_sums(p.msm_slot);
    if (pass == 0)
      return {.h_points = host_l, .n = num_aux, .offset = num_inputs, .in = &sp.l, .inputs = p.split,
              .d_windows = g1 + W, .d_ones_sum = g1 + 4 * W, .shape = &p.l_shape};
    if (pass == 1)
      return {.h_points = host_a, .n = a_vars.size(), .in = &sp.a, .inputs = p.split, .d_windows = g1 + 2 * W,
              .d_ones_sum = g1 + 4 * W + 1, .shape = &p.a_shape};
    return {.h_points = host_b_g1, .n = b_vars.size(), .in = &sp.b, .inputs = p.split, .d_windows = g1 + 3 * W,
            .d_ones_sum = g1 + 4 * W + 2, .shape = &p.b1_shape};
  }
}

template <class E>
void ProverOf<E>::PartitionDeleter::operator()(Partition* p) const {
  if (p->owner && p->owner->batched()) {
    // A batched partition that never reached finish(): out of the count of staged ones and of the
    // pending list, or its batch's passes enqueued now (they read its slot), then waited for.
    Impl& m = *p->owner;
    try {
      const engine::CallScope scope(m.calls);
      m.use_device();
      std::unique_lock lock(m.batch_mu);
      if (p->staged_counted) --m.staged_waiting;
      const auto at = std::find(m.pending.begin(), m.pending.end(), p);
      if (at != m.pending.end()) {
        m.pending.erase(at);
        device::EventRecord(m.marks[std::size_t(p->msm_slot)][kB2], m.compute);
      } else if (p->batch && !p->passes_done) {
        m.flush_for(*p);
        lock.unlock();
        device::EventSynchronize(m.marks[std::size_t(p->msm_slot)][kB2]);  // its done stamp is written
      }
      m.batch_cv.notify_all();
    } catch (...) {
      // A device that fails here fails the partitions that wait for it; this one is gone.
    }
  }
  delete p;
}

template <class E>
typename ProverOf<E>::PartitionPtr ProverOf<E>::prepare(const WitnessType& w, const RandomizersType& rs,
                                                        std::size_t index) const {
  const Impl& m = *impl_;
  PartitionPtr p(new Partition);
  p->domain = check_witness_shape(m.pk, w, index);
  const std::string where = "partition " + std::to_string(index) + ": ";
  if (p->domain.lg() != m.plan.shape.lg)
    throw std::invalid_argument(where + "the witness needs a 2^" + std::to_string(p->domain.lg()) +
                                " domain, the prover was planned for 2^" + std::to_string(m.plan.shape.lg));
  if (w.densities.a_aux != m.densities.a_aux || w.densities.b_aux != m.densities.b_aux ||
      w.densities.b_input != m.densities.b_input)
    throw std::invalid_argument(where + "the witness's densities differ from the circuit's the prover was made for");
  p->w = &w;
  p->index = index;
  p->rs = rs;
  p->h_terms = m.pk.h.size();
  p->split = std::make_shared<SplitInputs<typename E::Fr>>();
  p->owner = impl_.get();
  // A resident SRS with pinned staging: the classes come with stage()'s copy of the assignment
  // into pinned memory (one read of z instead of two, and the queries' selection beside its DMA).
  if (m.resident && !m.staging.empty()) return p;
  m.select_queries(*p->split, classify_z(w.input, w.aux), w);  // one pass over z for the three queries
  return p;
}

template <class E>
void ProverOf<E>::stage(Partition& p, int ss, int ms) {
  Impl& m = *impl_;
  if (ss < 0 || ss >= m.plan.stage_slots || ms < 0 || ms >= m.plan.msm_slots)
    throw GpuError(Status::invalid("GPU prover: stage slot " + std::to_string(ss) + " / msm slot " +
                                   std::to_string(ms) + " outside the plan's " + std::to_string(m.plan.stage_slots) +
                                   " / " + std::to_string(m.plan.msm_slots)));
  if (p.staged) throw GpuError(Status::invalid("GPU prover: partition staged twice"));
  const engine::CallScope scope(m.calls);  // this phase's runtime calls count for the device
  m.use_device();
  if (m.batched()) {
    // From here a finish() waiting for its batch to fill knows a next partition is coming.
    const std::lock_guard lock(m.batch_mu);
    ++m.staged_waiting;
    p.staged_counted = true;
  }
  try {
    stage_partition(p, ss, ms);
  } catch (...) {
    if (p.staged_counted) {
      const std::lock_guard lock(m.batch_mu);
      --m.staged_waiting;
      p.staged_counted = false;
      m.batch_cv.notify_all();
    }
    throw;
  }
}

template <class E>
void ProverOf<E>::stage_partition(Partition& p, int ss, int ms) {
  using F = typename E::Fr;
  Impl& m = *impl_;
  const WitnessOf<E>& w = *p.w;
  const std::size_t n = p.domain.size();
  auto& ev = m.marks[std::size_t(ms)];
  check(device::StreamWaitEvent(m.copy, m.stage_released[std::size_t(ss)], 0),
       "GPU prover: stage wait");
  // The msm slot's previous user is done with it (finish() waited for this event, unless it
  // failed early: then the device orders the reuse).
  check(device::StreamWaitEvent(m.copy, ev[kB2], 0), "GPU prover: stage wait");
  check(device::EventRecord(ev[kUploadStart], m.copy), "GPU prover: event");
  // With pinned staging the vectors are first copied (in parallel) into the slot's pinned buffer,
  // once its previous upload has finished reading it (a wait on that one event); the link carries
  // one vector while the cores copy the next. (Whole vectors: pieces of 64 or 256 MiB, each
  // piece's DMA enqueued once it is copied, are slower.)
  F* pinned = m.staging.empty() ? nullptr : m.staging[std::size_t(ss)];
  if (pinned)
    check(device::EventSynchronize(m.staging_free[std::size_t(ss)]),
         "GPU prover: staging buffer wait");
  auto source = [&](const F* data, std::size_t count) -> const F* {
    if (!pinned) return data;
    F* dst = pinned;
    pinned += count;
    constexpr std::size_t kBlock = std::size_t(1) << 18;
    tbb::parallel_for(std::size_t(0), (count + kBlock - 1) / kBlock, [&](std::size_t b) {
      const std::size_t begin = b * kBlock, end = std::min(count, begin + kBlock);
      std::copy(data + begin, data + end, dst + begin);
    });
    return dst;
  };
  auto put = [&](std::span<const F> v, const char* part) {
    F* d = m.template region<F>(m.slot("stage", ss, part));
    check(device::MemcpyAsync(d, source(v.data(), v.size()), v.size() * sizeof(F), cudaMemcpyHostToDevice, m.copy),
         "GPU prover: a, b upload");
    if (v.size() < n)
      check(device::MemsetAsync(d + v.size(), 0, (n - v.size()) * sizeof(F), m.copy), "GPU prover: a, b padding");
  };
  put(w.a, "a");
  put(w.b, "b");  // c = a∘b is made on the device (c_step)
  if (m.resident) {
    F* z = m.template region<F>(m.slot("msm", ms, "scalars"));
    if (pinned) {
      // z = input ‖ aux copied and classified in one pass; the queries' bits are selected while
      // its DMA runs (prepare() left them to here).
      const std::size_t vars = w.input.size() + w.aux.size();
      const ZClasses classes = classify_z(w.input, w.aux, pinned);
      check(device::MemcpyAsync(z, pinned, vars * sizeof(F), cudaMemcpyHostToDevice, m.copy),
            "GPU prover: assignment upload");
      pinned += vars;
      m.select_queries(*p.split, classes, w);
    } else {
      check(device::MemcpyAsync(z, w.input.data(), w.input.size() * sizeof(F), cudaMemcpyHostToDevice, m.copy),
            "GPU prover: assignment upload");
      check(device::MemcpyAsync(z + w.input.size(), w.aux.data(), w.aux.size() * sizeof(F), cudaMemcpyHostToDevice,
                                m.copy),
            "GPU prover: assignment upload");
    }
    uint64_t* bits = m.template region<uint64_t>(m.slot("msm", ms, "bitmaps"));
    const SplitInputs<F>& sp = *p.split;
    for (const std::vector<uint64_t>* v :
         {&sp.l.bits.ones, &sp.l.bits.other, &sp.a.bits.ones, &sp.a.bits.other, &sp.b.bits.ones, &sp.b.bits.other}) {
      check(device::MemcpyAsync(bits, v->data(), v->size() * 8, cudaMemcpyHostToDevice, m.copy), "GPU prover: bitmap upload");
      bits += v->size();
    }
  }
  check(device::EventRecord(ev[kUploadEnd], m.copy), "GPU prover: event");
  if (!m.staging.empty())
    check(device::EventRecord(m.staging_free[std::size_t(ss)], m.copy), "GPU prover: event");
  // The values and rows beside the kernels, from here: not beside the classes or the staging copy,
  // which read host memory on every core too and would take twice as long beside it; the check
  // fits under the kernels.
  p.values_checked = std::async(std::launch::async, [&w, index = p.index] { check_witness_values(w, index); });
  p.stage_slot = ss;
  p.msm_slot = ms;
  p.staged = true;
}

template <class E>
void ProverOf<E>::compute(Partition& p) {
  Impl& m = *impl_;
  if (!p.staged || p.computed) throw GpuError(Status::invalid("GPU prover: compute() needs a staged partition"));
  const engine::CallScope scope(m.calls);  // this phase's runtime calls count for the device
  m.use_device();
  std::unique_lock lock(m.batch_mu, std::defer_lock);  // batched: finish() may enqueue passes
  if (m.batched()) {
    lock.lock();
    if (p.staged_counted) --m.staged_waiting;
    p.staged_counted = false;
  }
  try {
    enqueue_compute(p);
  } catch (...) {
    // Whatever was enqueued still runs: the slots are released after it, in stream order, so the
    // next users of the slots wait for it rather than race with it.
    device::EventRecord(m.stage_released[std::size_t(p.stage_slot)], m.compute);
    device::EventRecord(m.marks[std::size_t(p.msm_slot)][kB2], m.compute);
    throw;
  }
  p.computed = true;
}

template <class E>
void ProverOf<E>::enqueue_compute(Partition& p) {
  using F = typename E::Fr;
  using G1 = typename E::G1;
  using G2 = typename E::G2;
  Impl& m = *impl_;
  const int ss = p.stage_slot, ms = p.msm_slot;
  auto& ev = m.marks[std::size_t(ms)];
  cudaStream_t s = m.compute;
  check(device::StreamWaitEvent(s, ev[kUploadEnd], 0), "GPU prover: wait for staging");
  check(device::EventRecord(ev[kStart], s), "GPU prover: event");
  check(device::MemsetAsync(m.g1_sums(ms), 0, m.sums_bytes(), s), "GPU prover: clear sums");

  // H: c = a∘b, then a, b, c to the coset (bellman) or the odd points (snarkjs), (a·b - c)·factor, back to
  // coefficients for bellman; the result is in a, in natural order, as canonical integers (h_factor).
  F* a = m.template region<F>(m.slot("stage", ss, "a"));
  F* b = m.template region<F>(m.slot("stage", ss, "b"));
  F* c = m.template region<F>(m.slot("stage", ss, "c"));
  const std::size_t n = p.domain.size();
  check(c_step(c, a, b, n, s));
  // The inverse's 1/n goes with the coset's shift into one table product of the forward's first pass.
  NttOp to_coefficients{Direction::inverse, Order::natural, Order::bit_reversed, false};
  to_coefficients.defer_size_inv = true;
  NttOp to_coset{Direction::forward, Order::bit_reversed, Order::natural, true};
  to_coset.take_size_inv = true;
  for (F* v : {a, b, c}) {
    check(ntt(v, m.tables, to_coefficients, s));
    check(ntt(v, m.tables, to_coset, s));
  }
  check(h_step(a, b, c, n, m.h_factor, s));
  if (m.pk.convention.h_basis == HBasis::bellman)
    check(ntt(a, m.tables, NttOp{Direction::inverse, Order::natural, Order::natural, true, true}, s));
  check(device::EventRecord(ev[kNtt], s), "GPU prover: event");

  XYZZ<G1>* g1 = m.g1_sums(ms);
  const Affine<G1>* h_resident = m.template srs_region<Affine<G1>>("srs.h");
  m.dense_msm_g1(h_resident, m.host_h, a, p.h_terms, g1, &p.h_shape, ss, ev[kNtt]);
  if (!h_resident) p.split->srs_bytes += p.h_terms * sizeof(Affine<G1>);  // every H point crossed
  check(device::EventRecord(ev[kH], s), "GPU prover: event");
  // a, b, c are dead: the next partition may stage into this slot.
  check(device::EventRecord(m.stage_released[std::size_t(ss)], s), "GPU prover: event");
  if (m.batched()) {  // the split MSMs in their batch's passes
    m.after_h(p);
    return;
  }

  // The split MSMs. Resident, the msm slot's bitmaps hold each query's 1s and tail bitmaps in the
  // order stage() copied them (L, A, B; B_G2 reads B's); streamed, the chunks bring them.
  SplitInputs<F>& sp = *p.split;
  const uint64_t* bits = m.template srs_region<uint64_t>(m.slot("msm", ms, "bitmaps"));
  auto next_bits = [&](const std::vector<uint64_t>& v) {
    const uint64_t* here = bits;
    if (bits) bits += v.size();
    return here;
  };
  const uint64_t *l_ones = next_bits(sp.l.bits.ones), *l_other = next_bits(sp.l.bits.other);
  const uint64_t *a_ones = next_bits(sp.a.bits.ones), *a_other = next_bits(sp.a.bits.other);
  const uint64_t *b_ones = next_bits(sp.b.bits.ones), *b_other = next_bits(sp.b.bits.other);
  const uint32_t* a_vars = m.template srs_region<uint32_t>("srs.a_vars");
  const uint32_t* b_vars = m.template srs_region<uint32_t>("srs.b_vars");
  Query<G1> ql = m.template query_of<G1>(p, 0);
  ql.d_points = m.template srs_region<Affine<G1>>("srs.l");
  ql.d_ones = l_ones;
  ql.d_other = l_other;
  check(device::EventRecord(ev[kLs], s), "GPU prover: event");
  m.split_msm(ql, ms);
  check(device::EventRecord(ev[kL], s), "GPU prover: event");
  check(device::EventRecord(ev[kAs], s), "GPU prover: event");
  Query<G1> qa = m.template query_of<G1>(p, 1);
  qa.d_points = m.template srs_region<Affine<G1>>("srs.a");
  qa.d_vars = a_vars;
  qa.d_ones = a_ones;
  qa.d_other = a_other;
  m.split_msm(qa, ms);
  check(device::EventRecord(ev[kA], s), "GPU prover: event");
  check(device::EventRecord(ev[kB1s], s), "GPU prover: event");
  Query<G1> qb = m.template query_of<G1>(p, 2);
  qb.d_points = m.template srs_region<Affine<G1>>("srs.b_g1");
  qb.d_vars = b_vars;
  qb.d_ones = b_ones;
  qb.d_other = b_other;
  m.split_msm(qb, ms);
  check(device::EventRecord(ev[kB1], s), "GPU prover: event");
  check(device::EventRecord(ev[kB2s], s), "GPU prover: event");
  Query<G2> q2 = m.template query_of<G2>(p, 3);
  q2.d_points = m.template srs_region<Affine<G2>>("srs.b_g2");
  q2.d_vars = b_vars;
  q2.d_ones = b_ones;
  q2.d_other = b_other;
  m.split_msm(q2, ms);
  check(device::LaunchHostFunc(s, stamp_now, &p.done_ns), "GPU prover: host callback");
  check(device::EventRecord(ev[kB2], s), "GPU prover: event");
}

template <class E>
typename ProverOf<E>::ProofType ProverOf<E>::finish(Partition& p, GpuTimes* times, bool corrupt_result) {
  using G1 = typename E::G1;
  using G2 = typename E::G2;
  Impl& m = *impl_;
  if (!p.computed) throw GpuError(Status::invalid("GPU prover: finish() needs a computed partition"));
  const engine::CallScope scope(m.calls);  // this phase's runtime calls count for the device
  m.use_device();
  const int ms = p.msm_slot;
  auto& ev = m.marks[std::size_t(ms)];
  if (p.batched) {
    // The batch's passes come after the H MSMs of the partitions that follow. Wait for them while
    // the device has work queued or a partition is being staged (then the wait costs nothing);
    // once the device has run dry and none is coming, or after kBatchWait, run them here.
    std::unique_lock lock(m.batch_mu);
    const auto start = std::chrono::steady_clock::now();
    while (!p.passes_done) {
      const auto waited = std::chrono::steady_clock::now() - start;
      const cudaError_t q = device::EventQuery(m.compute_tail);
      if (q != cudaSuccess && q != cudaErrorNotReady) check(q, "GPU prover: device state");
      if ((q == cudaSuccess && m.staged_waiting == 0 && waited >= kBatchGrace) || waited >= kBatchWait) {
        m.flush_for(p);
        break;
      }
      m.batch_cv.wait_for(lock, std::chrono::milliseconds(2));
    }
  }
  check(device::EventSynchronize(ev[kB2]), "GPU prover: waiting for the partition");
  p.values_checked.get();  // WitnessError when a value is out of range or a row unsatisfied: no proof
  if (const std::string failed = p.split->failed(); !failed.empty()) throw GpuError(Status::invalid(failed));
  if (p.batch) {
    if (const std::string failed = p.batch->failed(); !failed.empty()) throw GpuError(Status::invalid(failed));
    if (!p.batch->error.ok()) throw GpuError(p.batch->error);
  }
  const int W = m.max_windows;
  std::vector<XYZZ<G1>> g1(std::size_t(4 * W + 3));
  std::vector<XYZZ<G2>> g2(std::size_t(W + 1));
  check(device::Memcpy(g1.data(), m.g1_sums(ms), g1.size() * sizeof(g1[0]), cudaMemcpyDeviceToHost), "GPU prover: sums");
  check(device::Memcpy(g2.data(), m.g2_sums(ms), g2.size() * sizeof(g2[0]), cudaMemcpyDeviceToHost), "GPU prover: sums");
  if (corrupt_result) {
    // One flipped bit in the first L window sum, as the device returned it.
    unsigned char byte;
    std::memcpy(&byte, reinterpret_cast<const unsigned char*>(&g1[std::size_t(W)]) + 3, 1);
    byte ^= 0x10;
    std::memcpy(reinterpret_cast<unsigned char*>(&g1[std::size_t(W)]) + 3, &byte, 1);
  }
  MsmSumsOf<E> sums;
  sums.h = msm_combine<G1>(g1.data(), p.h_shape);
  sums.l = msm_combine<G1>(g1.data() + W, p.l_shape) + g1[std::size_t(4 * W)].to_jacobian();
  sums.a = msm_combine<G1>(g1.data() + 2 * W, p.a_shape) + g1[std::size_t(4 * W + 1)].to_jacobian();
  sums.b_g1 = msm_combine<G1>(g1.data() + 3 * W, p.b1_shape) + g1[std::size_t(4 * W + 2)].to_jacobian();
  sums.b_g2 = msm_combine<G2>(g2.data(), p.b2_shape) + g2[std::size_t(W)].to_jacobian();
  if (times) {
    auto ms_between = [&](Mark a, Mark b) {
      float t = 0;
      check(device::EventElapsedTime(&t, ev[a], ev[b]), "GPU prover: event timing");
      return double(t);
    };
    // A batch's passes are shared: each partition is given its share of their time and packing.
    const double share = p.batch ? 1.0 / double(p.batch->parts.size()) : 1.0;
    times->upload = ms_between(kUploadStart, kUploadEnd);
    times->ntt = ms_between(kStart, kNtt);
    times->msm_h = ms_between(kNtt, kH);
    times->msm_l = share * ms_between(kLs, kL);
    times->msm_a = share * ms_between(kAs, kA);
    times->msm_b_g1 = share * ms_between(kB1s, kB1);
    times->msm_b_g2 = share * ms_between(kB2s, kB2);
    times->compute = times->ntt + times->msm_h + times->msm_l + times->msm_a + times->msm_b_g1 + times->msm_b_g2;
    times->pack = double(p.split->pack_ns.load()) / 1e6;
    times->packed_bytes = p.split->pack_bytes.load();
    if (p.batch) {
      times->pack += share * double(p.batch->pack_ns.load()) / 1e6;
      times->packed_bytes += uint64_t(share * double(p.batch->pack_bytes.load()));
    }
    times->srs_bytes = p.split->srs_bytes.load();
    times->done_at = std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(p.done_ns.load()));
    auto before = [&](Mark a) { return ms_between(a, kB2); };
    times->spans = {{"copy", "upload", before(kUploadStart), before(kUploadEnd)},
                    {"compute", "ntt", before(kStart), before(kNtt)},
                    {"compute", "msm_h", before(kNtt), before(kH)},
                    {"compute", "msm_l", before(kLs), before(kL)},
                    {"compute", "msm_a", before(kAs), before(kA)},
                    {"compute", "msm_b_g1", before(kB1s), before(kB1)},
                    {"compute", "msm_b_g2", before(kB2s), 0.0}};
  }
  return assemble_proof<E>(m.pk.vk, sums, p.rs);
}

// ---- batched split MSMs ----

template <class E>
void ProverOf<E>::Impl::form_batch() {
  auto b = std::make_shared<SplitBatch<Partition>>();
  b->parts = pending;
  pending.clear();
  for (Partition* q : b->parts) q->batch = b;
  batches.push_back(std::move(b));
}

template <class E>
void ProverOf<E>::Impl::after_h(Partition& p) {
  p.batched = true;
  p.passes_done = false;
  pending.push_back(&p);
  if (int(pending.size()) >= plan.split_batch) form_batch();
  if (!config.pass_thread) {
    // 4 passes a batch, over the split_batch H MSMs that follow it.
    const int per_h = (4 + plan.split_batch - 1) / plan.split_batch;
    for (int i = 0; i < per_h && !batches.empty(); ++i) run_pass();
  }
  check(device::EventRecord(compute_tail, compute), "GPU prover: event");
  batch_cv.notify_all();
}

template <class E>
void ProverOf<E>::Impl::flush_for(Partition& p) {
  if (!p.batch && std::find(pending.begin(), pending.end(), &p) != pending.end()) form_batch();
  while (!p.passes_done && step_pass()) {
  }
  p.passes_done = true;  // no batch holds it (never expected): nothing of it is left to enqueue
  check(device::EventRecord(compute_tail, compute), "GPU prover: event");
  batch_cv.notify_all();
}

template <class E>
void ProverOf<E>::Impl::drop_cursor() {
  cursor_g1.reset();
  cursor_g2.reset();
  cursor_pass = -1;
}

template <class E>
void ProverOf<E>::Impl::run_pass() {
  if (batches.empty()) return;
  const std::shared_ptr<SplitBatch<Partition>> b = batches.front();
  const int pass = b->next_pass;
  while (!batches.empty() && batches.front() == b && b->next_pass == pass) step_pass();
}

template <class E>
bool ProverOf<E>::Impl::step_pass() {
  if (batches.empty()) return false;
  const std::shared_ptr<SplitBatch<Partition>> b = batches.front();
  if (b->error.ok()) {
    try {
      if (cursor_pass < 0) begin_pass(b, b->next_pass);
      bool done = false;
      if (cursor_pass < 3) {
        pass_chunk(*cursor_g1);
        done = cursor_g1->done();
      } else {
        pass_chunk(*cursor_g2);
        done = cursor_g2->done();
      }
      if (done) end_pass(b, cursor_pass);
    } catch (const GpuError& e) {
      b->error = e.status();
    } catch (const std::exception& e) {
      b->error = Status{Code::cuda_error, std::string("GPU prover: a batch pass: ") + e.what()};
    }
  }
  if (!b->error.ok()) {
    // What was enqueued still runs; every partition's end comes after it, so finish() waits for
    // it and then reports the error. That includes the packing of its chunks, which reads the
    // witnesses (a chunk whose copy was not enqueued is not otherwise behind the end).
    for (cudaEvent_t e : packed) device::StreamWaitEvent(compute, e, 0);
    for (Partition* q : b->parts) device::EventRecord(marks[std::size_t(q->msm_slot)][kB2], compute);
    drop_cursor();
    b->next_pass = 4;
  }
  if (b->next_pass >= 4) {
    for (Partition* q : b->parts) q->passes_done = true;
    batches.pop_front();
  }
  return true;
}

template <class E>
void ProverOf<E>::Impl::begin_pass(const std::shared_ptr<SplitBatch<Partition>>& b, int pass) {
  static constexpr Mark kBegin[4] = {kLs, kAs, kB1s, kB2s};
  cursor_pass = pass;
  for (Partition* q : b->parts)
    check(device::EventRecord(marks[std::size_t(q->msm_slot)][kBegin[pass]], compute), "GPU prover: event");
  if (pass < 3) {
    cursor_g1 = std::make_unique<PassCursor<G1>>();
    cursor_g1->keep = b;
    for (Partition* q : b->parts) cursor_g1->qs.push_back(query_of<G1>(*q, pass));
    pass_begin<G1>(*cursor_g1);
  } else {
    cursor_g2 = std::make_unique<PassCursor<G2>>();
    cursor_g2->keep = b;
    for (Partition* q : b->parts) cursor_g2->qs.push_back(query_of<G2>(*q, 3));
    pass_begin<G2>(*cursor_g2);
  }
}

template <class E>
void ProverOf<E>::Impl::end_pass(const std::shared_ptr<SplitBatch<Partition>>& b, int pass) {
  static constexpr Mark kEnd[4] = {kL, kA, kB1, kB2};
  if (pass < 3) pass_end<G1>(*cursor_g1);
  else pass_end<G2>(*cursor_g2);
  drop_cursor();
  for (Partition* q : b->parts) {
    auto& ev = marks[std::size_t(q->msm_slot)];
    if (pass == 3) check(device::LaunchHostFunc(compute, stamp_now, &q->done_ns), "GPU prover: host callback");
    check(device::EventRecord(ev[kEnd[pass]], compute), "GPU prover: event");
  }
  ++b->next_pass;
}

template <class E>
void ProverOf<E>::Impl::pass_loop() {
  try {
    const engine::CallScope scope(calls);
    use_device();
    std::unique_lock lock(batch_mu);
    for (uint64_t step = 0; !stop_passes;) {
      if (batches.empty()) {
        batch_cv.wait(lock);
        continue;
      }
      // At most kPassesAhead steps queued: wait, unlocked, for the device to finish the one
      // kPassesAhead back (the event that step recorded, which this step records again).
      cudaEvent_t ahead = pass_ahead[step % kPassesAhead];
      if (step >= uint64_t(kPassesAhead)) {
        lock.unlock();
        const cudaError_t e = device::EventSynchronize(ahead);
        lock.lock();
        check(e, "GPU prover: pass thread wait");
        if (stop_passes || batches.empty()) continue;
      }
      step_pass();
      check(device::EventRecord(ahead, compute), "GPU prover: event");
      check(device::EventRecord(compute_tail, compute), "GPU prover: event");
      ++step;
      batch_cv.notify_all();
    }
  } catch (...) {
    // A device that fails here fails its partitions through their own calls; finish() then runs
    // what is left of their batches itself (kBatchWait).
  }
}

// This file's members of both curves' provers.
#define PP_GPU_PROVER_PHASES(E)                                                                               \
  template void ProverOf<E>::PartitionDeleter::operator()(Partition*) const;                                  \
  template ProverOf<E>::PartitionPtr ProverOf<E>::prepare(const WitnessOf<E>&, const RandomizersOf<E::Fr>&,   \
                                                          std::size_t) const;                                 \
  template void ProverOf<E>::stage(Partition&, int, int);                                                     \
  template void ProverOf<E>::stage_partition(Partition&, int, int);                                           \
  template void ProverOf<E>::compute(Partition&);                                                             \
  template void ProverOf<E>::enqueue_compute(Partition&);                                                     \
  template ProofOf<E> ProverOf<E>::finish(Partition&, GpuTimes*, bool);                                      \
  template void ProverOf<E>::Impl::form_batch();                                                              \
  template void ProverOf<E>::Impl::after_h(Partition&);                                                       \
  template void ProverOf<E>::Impl::flush_for(Partition&);                                                     \
  template void ProverOf<E>::Impl::run_pass();                                                                \
  template void ProverOf<E>::Impl::drop_cursor();                                                             \
  template bool ProverOf<E>::Impl::step_pass();                                                               \
  template void ProverOf<E>::Impl::begin_pass(const std::shared_ptr<SplitBatch<Partition>>&, int);           \
  template void ProverOf<E>::Impl::end_pass(const std::shared_ptr<SplitBatch<Partition>>&, int);             \
  template void ProverOf<E>::Impl::pass_loop();
PP_GPU_PROVER_PHASES(Bls12_381)
PP_GPU_PROVER_PHASES(bn254::Bn254)
#undef PP_GPU_PROVER_PHASES

}  // namespace pp::gpu
