// SPDX-License-Identifier: Apache-2.0 OR MIT
// The GPU prover's MSMs (prover_impl.cuh): the H MSM over a resident SRS (or its fixed-base table)
// or over chunks streamed from the pinned host copy, and the split MSMs of L, A, B_G1 and B_G2:
// batch addition of the points whose scalar is 1 and Pippenger over the gathered tail, resident or
// from chunks packed on the host so that only the points whose scalar is not 0 cross.

#include "prover_impl.cuh"

namespace pp::gpu {

namespace {

__global__ void popcount_kernel(const uint64_t* __restrict__ bitmap, uint64_t words, uint32_t* out) {
  const uint64_t t = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t < words) out[t] = uint32_t(popcount64(bitmap[t]));
}

template <class C>
__global__ void tail_gather_kernel(const uint64_t* __restrict__ bitmap, const uint32_t* __restrict__ rank,
                                   uint64_t words, uint64_t lo, uint64_t hi, const Affine<C>* __restrict__ points,
                                   const typename C::Scalar* __restrict__ z, const uint32_t* __restrict__ vars,
                                   Affine<C>* out_points, typename C::Scalar* out_scalars) {
  const uint64_t t = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t < words) tail_gather_word<C>(t, bitmap, rank, lo, hi, points, z, vars, out_points, out_scalars);
}

}  // namespace

namespace prover_detail {

void CUDART_CB run_pack(void* arg) {
  const std::unique_ptr<PackJob> job(static_cast<PackJob*>(arg));
  try {
    const auto start = std::chrono::steady_clock::now();
    PackedCounts got;
    job->arena->execute([&] { got = job->pack(job->out); });
    job->keep->pack_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
    job->keep->pack_bytes += job->bytes;
    if (got.ones != job->want.ones || got.tail != job->want.tail)
      job->keep->fail("GPU prover: " + job->what + " packed " + std::to_string(got.ones) + " ones and " +
                      std::to_string(got.tail) + " tail points, " + std::to_string(job->want.ones) + " and " +
                      std::to_string(job->want.tail) + " were copied");
  } catch (const std::exception& e) {
    job->keep->fail("GPU prover: " + job->what + ": " + e.what());
  } catch (...) {
    job->keep->fail("GPU prover: " + job->what + ": packing failed");
  }
}

}  // namespace prover_detail

// Dense MSM over points [0, n) (resident: d_points; streamed: chunks of h_points) with device
// scalars as canonical integers (the H step leaves them so), accumulated into `windows`.
// Streamed, stage slot ss's b and c (dead once the event `stage_dead` has passed) may hold its
// workspace and, after the first piece (which comes through chunk buffer 0, copied while the
// NTTs run), its point buffers (MemoryPlan::h_chunk).
template <class E>
void ProverOf<E>::Impl::dense_msm_g1(const Affine<G1>* d_points, const Affine<G1>* h_points, const F* d_scalars,
                                     std::size_t n, XYZZ<G1>* windows, MsmShape* shape_out, int ss,
                                     cudaEvent_t stage_dead) {
  using G1Affine = Affine<G1>;
  void* ws = region<void>("compute.workspace");
  std::size_t ws_bytes = plan.workspace_bytes;
  char* stage = nullptr;
  engine::HStageLayout hl;
  const bool in_stage = !resident && plan.h_workspace_in_stage, points_in_stage = in_stage && plan.h_points_in_stage;
  if (in_stage) {
    stage = region<char>(slot("stage", ss, "b"));
    ws = stage;
    ws_bytes = region_bytes(slot("stage", ss, "b")) + region_bytes(slot("stage", ss, "c"));
    if (points_in_stage) {
      hl = engine::HStageLayout::of(plan.shape.points, plan.h_chunk, plan.window_h);
      if (hl.bytes > ws_bytes) throw GpuError(Status::invalid("GPU prover: the H MSM's stage layout exceeds stage b + c"));
      ws_bytes = hl.points0;
    }
  }
  const std::size_t in_buffer = plan.chunk_buffer_bytes / sizeof(G1Affine);
  const std::size_t piece = resident || points_in_stage ? plan.h_chunk : std::min<std::size_t>(plan.h_chunk, in_buffer);
  const std::size_t first = points_in_stage ? std::min(piece, in_buffer) : piece;
  if (d_points && plan.h_copies > 1) {
    // The resident fixed-base table in srs.h (built at load for plan.window_h): one piece.
    MsmShape sh;
    check(make_msm_shape(n, plan.window_h, &sh, plan.h_copies));
    sh.canonical = true;
    if (n != pk.h.size()) throw GpuError(Status::invalid("GPU prover: the H table holds another count of points"));
    *shape_out = sh;
    check(msm<G1>(d_points, d_scalars, sh, ws, ws_bytes, windows, compute, nullptr, true));
    return;
  }
  const int c = window_for(std::min(piece, n), plan.window_h);
  *shape_out = MsmShape{n, c};
  for (std::size_t off = 0, k = 0, m = 0; off < n; off += m, ++k) {
    m = std::min(k == 0 ? first : piece, n - off);
    MsmShape sh;
    check(make_msm_shape(m, c, &sh));
    sh.canonical = true;
    const bool via_stage = points_in_stage && k > 0;
    const int j = int((k + 1) % 2);  // stage point buffer of piece k >= 1
    const G1Affine* pts = d_points ? d_points + off : nullptr;
    if (!pts && !via_stage) {
      pts = reinterpret_cast<const G1Affine*>(stream_chunk(k, [&](char* buf, cudaStream_t s) {
        check(device::MemcpyAsync(buf, h_points + off, m * sizeof(G1Affine), cudaMemcpyHostToDevice, s),
              "GPU prover: SRS chunk copy");
      }));
    } else if (!pts) {
      char* buf = stage + (j == 0 ? hl.points0 : hl.points1);
      if (k == 1) check(device::StreamWaitEvent(srs, stage_dead, 0), "GPU prover: H stage wait");
      check(device::StreamWaitEvent(srs, h_free[j], 0), "GPU prover: H chunk wait");
      check(device::MemcpyAsync(buf, h_points + off, m * sizeof(G1Affine), cudaMemcpyHostToDevice, srs),
            "GPU prover: SRS chunk copy");
      check(device::EventRecord(h_ready[j], srs), "GPU prover: H chunk event");
      check(device::StreamWaitEvent(compute, h_ready[j], 0), "GPU prover: H chunk wait");
      pts = reinterpret_cast<const G1Affine*>(buf);
    }
    check(msm<G1>(pts, d_scalars + off, sh, ws, ws_bytes, windows, compute, nullptr, true));
    if (d_points) continue;
    if (via_stage) {
      check(device::EventRecord(h_free[j], compute), "GPU prover: H chunk event");
    } else {
      chunk_done(k);
    }
  }
}

// Streamed SRS: fills chunk buffer k % 2 on the srs stream once the compute stream is done with
// its previous contents, and makes the compute stream wait for the copy.
template <class E>
template <class Fill>
char* ProverOf<E>::Impl::stream_chunk(std::size_t k, Fill&& fill) {
  const int b = int(k % 2);
  char* buf = region<char>("compute.srs_chunk[" + std::to_string(b) + "]");
  check(device::StreamWaitEvent(srs, chunk_free[b], 0), "GPU prover: chunk wait");
  fill(buf, srs);
  check(device::EventRecord(chunk_ready[b], srs), "GPU prover: chunk event");
  check(device::StreamWaitEvent(compute, chunk_ready[b], 0), "GPU prover: chunk wait");
  return buf;
}
template <class E>
void ProverOf<E>::Impl::chunk_done(std::size_t k) {
  check(device::EventRecord(chunk_free[k % 2], compute), "GPU prover: chunk event");
}

// Streamed: queues `job` (a host function on the pack stream) to pack into pack buffer k % 2 once
// that buffer's previous copy has left it, records the buffer's `packed` event after it and
// returns the buffer. The host never waits.
template <class E>
char* ProverOf<E>::Impl::launch_pack(std::size_t k, std::unique_ptr<PackJob> job) {
  const std::size_t b = k % MemoryPlan::kPackBuffers;
  char* host = pack_buffers[b];
  job->out = host;
  job->arena = pack_arena.get();
  check(device::StreamWaitEvent(pack, pack_free[b], 0), "GPU prover: pack buffer wait");
  check(device::LaunchHostFunc(pack, run_pack, job.get()), "GPU prover: chunk packing");
  job.release();  // run_pack owns it now
  check(device::EventRecord(packed[b], pack), "GPU prover: pack event");
  return host;
}

// Streamed split MSM: chunk k packed on the host (launch_pack), then copied into chunk buffer
// k % 2 as stream_chunk does: the points that travel, the 1s' bitmap words, the tail's scalars.
// The host never waits; the compute stream waits for the copy.
template <class E>
char* ProverOf<E>::Impl::stream_packed(std::size_t k, std::unique_ptr<PackJob> job, const ChunkLayout& lay,
                                       std::size_t point_bytes) {
  const std::size_t b = k % MemoryPlan::kPackBuffers;
  const PackedCounts want = job->want;
  job->bytes = want.points() * point_bytes + want.ones_words() * 8 + want.tail * sizeof(F);
  job->keep->srs_bytes += want.points() * point_bytes;
  char* host = launch_pack(k, std::move(job));
  return stream_chunk(k, [&](char* buf, cudaStream_t st) {
    check(device::StreamWaitEvent(st, packed[b], 0), "GPU prover: packed chunk wait");
    if (want.points() > 0)
      check(device::MemcpyAsync(buf, host, want.points() * point_bytes, cudaMemcpyHostToDevice, st),
            "GPU prover: SRS chunk copy");
    if (want.ones > 0)
      check(device::MemcpyAsync(buf + lay.ones, host + lay.ones, want.ones_words() * 8, cudaMemcpyHostToDevice, st),
            "GPU prover: bitmap copy");
    if (want.tail > 0)
      check(device::MemcpyAsync(buf + lay.scalars, host + lay.scalars, want.tail * sizeof(F), cudaMemcpyHostToDevice,
                                st),
            "GPU prover: tail scalars copy");
    check(device::EventRecord(pack_free[b], st), "GPU prover: pack event");
  });
}

// rank[t] = the tail points in bitmap words [0, t) (popcounts, then an exclusive scan whose
// temporary storage is the workspace), on the compute stream.
template <class E>
void ProverOf<E>::Impl::tail_ranks(const uint64_t* bitmap, std::size_t words, uint32_t* rank, void* ws, std::size_t ws_bytes) {
  device::launch(popcount_kernel, grid_for(words), kBlock, 0, compute, bitmap, words, rank);
  std::size_t temp = 0;
  check(cub::DeviceScan::ExclusiveSum(nullptr, temp, rank, rank, int(words), compute), "GPU prover: scan size");
  if (temp > ws_bytes) throw GpuError(Status::invalid("GPU prover: scan temp exceeds the workspace"));
  check(device::algorithm(cub::DeviceScan::ExclusiveSum(ws, temp, rank, rank, int(words), compute)),
        "GPU prover: tail ranks");
}

// The split MSMs' inputs of the L, A, B queries from the assignment's classes: each query's
// bits and, streamed, its tail scalars (only they cross PCIe with the chunks) and the set bits
// per SRS chunk (tail points, and 1s).
template <class E>
void ProverOf<E>::Impl::select_queries(SplitInputs<F>& sp, const ZClasses& z, const WitnessOf<E>& w) const {
  const auto split = [&](SplitQuery<F>& q, std::span<const uint32_t> vars, std::size_t offset, std::size_t n) {
    q.bits = select_split(z, vars, offset, n);
    q.z = QueryScalars<F>{w.input, w.aux, vars, offset};
    if (resident || n == 0) return;
    if (!batched()) q.tail = tail_scalars(q.bits, w.input, w.aux, vars, offset);  // batched: packed from z
    const std::size_t chunk = chunk_points(n);
    q.tail_counts = set_bits_per_chunk(q.bits.other, n, chunk);
    q.ones_counts = set_bits_per_chunk(q.bits.ones, n, chunk);
  };
  split(sp.l, {}, num_inputs, num_aux);
  split(sp.a, a_vars, 0, a_vars.size());
  split(sp.b, b_vars, 0, b_vars.size());
}

// Streamed SRS: the points of a query of n points that one chunk carries: the plan's chunk
// (batched: its batch chunk), which must be whole bitmap words, or the whole query as one chunk. prepare() counts each
// chunk's set bits and split_msm cuts the chunks, both with this.
template <class E>
std::size_t ProverOf<E>::Impl::chunk_points(std::size_t n) const {
  const std::size_t cap = std::min<std::size_t>(batched() ? plan.batch_chunk : plan.msm_chunk, n);
  if (cap < n && cap % 64 != 0)
    throw GpuError(Status::invalid("GPU prover: SRS chunks of " + std::to_string(cap) + " points are not whole bitmap words"));
  return cap;
}

// Split MSM of one query: batch addition of the 1s, Pippenger over the tail.
template <class E>
template <class C>
void ProverOf<E>::Impl::split_msm(Query<C>& q, int ms) {
  void* ws = region<void>("compute.workspace");
  const std::size_t ws_bytes = plan.workspace_bytes;
  const SplitBits& bits = q.in->bits;
  if (q.n == 0) {
    *q.shape = MsmShape{0, window_for(1, plan_window<C>())};
    return;
  }
  if (resident) {
    // Ones: pieces of at most msm_chunk points (multiples of 64).
    const std::size_t piece = std::max<std::size_t>(64, plan.msm_chunk / 64 * 64);
    if (bits.ones_count > 0)
      for (std::size_t off = 0; off < q.n; off += piece)
        check(batch_add<C>(q.d_points + off, q.d_ones + off / 64, std::min(piece, q.n - off), ws, ws_bytes,
                           q.d_ones_sum, compute, true));
    // Tail: word ranks at the front of the gather buffer, then pieces of gathered points + scalars.
    const std::size_t words = (q.n + 63) / 64;
    char* gather = region<char>("compute.gather");
    const std::size_t cap =
        GatherLayout::capacity(region_bytes("compute.gather"), words, sizeof(Affine<C>), plan.msm_chunk);
    const GatherLayout lay = GatherLayout::of(words, cap, sizeof(Affine<C>));
    const std::size_t tail = bits.other_count;
    const int c = window_for(std::min(cap, tail), plan_window<C>());
    *q.shape = MsmShape{tail, c};
    if (tail == 0) return;
    if (cap == 0) throw GpuError(Status::invalid("GPU prover: the gather buffer holds no point"));
    uint32_t* rank = reinterpret_cast<uint32_t*>(gather);
    Affine<C>* g_points = reinterpret_cast<Affine<C>*>(gather + lay.points);
    F* g_scalars = reinterpret_cast<F*>(gather + lay.scalars);
    tail_ranks(q.d_other, words, rank, ws, ws_bytes);
    const F* z = region<F>(slot("msm", ms, "scalars")) + q.offset;
    for (std::size_t lo = 0; lo < tail; lo += cap) {
      const std::size_t m = std::min(cap, tail - lo);
      device::launch(tail_gather_kernel<C>, grid_for(words), kBlock, 0, compute, q.d_other, rank, words, lo, lo + m, q.d_points,
                                                                     z, q.d_vars, g_points, g_scalars);
      MsmShape sh;
      check(make_msm_shape(m, c, &sh));
      check(msm<C>(g_points, g_scalars, sh, ws, ws_bytes, q.d_windows, compute, nullptr, true));
    }
    return;
  }
  // Streamed: each chunk crosses packed (pack_chunk): its points whose scalar is 1, then its
  // tail's points, a bitmap over the first and the tail's scalars (in tail order); the points
  // whose scalar is 0 stay on the host. The 1s are batch-added from the chunk; the tail's points
  // and scalars are copied into the gather buffer, which the MSM takes whenever it is full and
  // after the last chunk (tail_pieces), so only tail points are sorted and the MSMs run on full
  // buffers. Chunks of msm_chunk points (then a power of two >= 2^16) or one chunk of the whole
  // query.
  const std::size_t cap = chunk_points(q.n);
  const ChunkLayout lay = ChunkLayout::of(cap, sizeof(Affine<C>));
  if (lay.bytes > plan.chunk_buffer_bytes)
    throw GpuError(Status::invalid("GPU prover: the SRS chunk buffer is smaller than the plan's chunk"));
  const std::size_t tail = bits.other_count;
  const std::size_t gather_bytes = region_bytes("compute.gather");
  const std::size_t gcap = GatherLayout::capacity(gather_bytes, 0, sizeof(Affine<C>), cap);
  const GatherLayout glay = GatherLayout::of(0, gcap, sizeof(Affine<C>));
  if (gcap == 0) throw GpuError(Status::invalid("GPU prover: the gather buffer holds no point"));
  const int c = window_for(std::min(gcap, std::max<std::size_t>(tail, 1)), plan_window<C>());
  *q.shape = MsmShape{tail, c};
  if (q.in->tail.size() != tail)
    throw GpuError(Status::invalid("GPU prover: the partition's tail scalars do not match its bitmap"));
  const std::vector<std::size_t>& counts = q.in->tail_counts;  // made by prepare()
  const std::vector<std::size_t>& ones = q.in->ones_counts;
  const std::size_t chunks = (q.n + cap - 1) / cap;
  if (counts.size() != chunks || ones.size() != chunks)
    throw GpuError(Status::invalid("GPU prover: the partition's tail and 1 counts do not match the SRS chunks"));
  const std::vector<TailPiece> pieces = tail == 0 ? std::vector<TailPiece>{} : tail_pieces(counts, gcap);
  char* gather = region<char>("compute.gather");
  Affine<C>* g_points = reinterpret_cast<Affine<C>*>(gather + glay.points);
  F* g_scalars = reinterpret_cast<F*>(gather + glay.scalars);
  std::size_t next = 0, first = 0;  // next piece; the chunk's first tail rank
  for (std::size_t off = 0, k = 0; off < q.n; off += cap, ++k) {
    const std::size_t m = std::min(cap, q.n - off), count = counts[k];
    auto job = std::make_unique<PackJob>();
    job->keep = q.inputs;
    job->want = PackedCounts{ones[k], count};
    job->what = "SRS chunk " + std::to_string(k) + " (points " + std::to_string(off) + " + " + std::to_string(m) + ")";
    const Affine<C>* host = q.h_points;
    const SplitBits* split = &bits;
    const std::span<const F> chunk_tail(q.in->tail.data() + first, count);
    job->pack = [host, split, off, m, chunk_tail, lay](char* out) {
      return pack_chunk(host, *split, off, m, chunk_tail, out, lay);
    };
    const PackedCounts want = job->want;
    char* buf = stream_packed(k, std::move(job), lay, sizeof(Affine<C>));
    const Affine<C>* pts = reinterpret_cast<const Affine<C>*>(buf);
    if (want.ones > 0)
      check(batch_add<C>(pts, reinterpret_cast<const uint64_t*>(buf + lay.ones), want.ones, ws, ws_bytes,
                         q.d_ones_sum, compute, true));
    const Affine<C>* tail_pts = pts + want.ones;
    const F* sc = reinterpret_cast<const F*>(buf + lay.scalars);
    for (; next < pieces.size() && pieces[next].chunk == k; ++next) {
      const TailPiece& pc = pieces[next];
      const std::size_t take = pc.hi - pc.lo;
      check(device::MemcpyAsync(g_points + pc.at, tail_pts + pc.lo, take * sizeof(Affine<C>), cudaMemcpyDeviceToDevice,
                                compute),
            "GPU prover: tail points gather");
      check(device::MemcpyAsync(g_scalars + pc.at, sc + pc.lo, take * sizeof(F), cudaMemcpyDeviceToDevice, compute),
            "GPU prover: tail scalars gather");
      if (pc.flush) {
        MsmShape sh;
        check(make_msm_shape(pc.at + take, c, &sh));
        check(msm<C>(g_points, g_scalars, sh, ws, ws_bytes, q.d_windows, compute, nullptr, true));
      }
    }
    chunk_done(k);
    first += count;
  }
}

// Batched split MSMs: chunk k's shared points copied into chunk buffer k % 2 straight from the
// pinned host SRS, and the batch's sides (bitmaps, tail scalars) packed by the job into pack
// buffer k % 2 and copied after them, side i's first side_used[i] bytes to sides_at + i·side_bytes.
template <class E>
char* ProverOf<E>::Impl::stream_batch_chunk(std::size_t k, std::unique_ptr<PackJob> job, const char* points,
                                            std::size_t points_bytes, std::size_t sides_at, std::size_t side_bytes,
                                            const std::vector<std::size_t>& side_used) {
  const std::size_t b = k % MemoryPlan::kPackBuffers;
  char* host = launch_pack(k, std::move(job));
  return stream_chunk(k, [&](char* buf, cudaStream_t st) {
    check(device::MemcpyAsync(buf, points, points_bytes, cudaMemcpyHostToDevice, st), "GPU prover: SRS chunk copy");
    check(device::StreamWaitEvent(st, packed[b], 0), "GPU prover: packed sides wait");
    for (std::size_t i = 0; i < side_used.size(); ++i)
      check(device::MemcpyAsync(buf + sides_at + i * side_bytes, host + i * side_bytes, side_used[i],
                                cudaMemcpyHostToDevice, st),
            "GPU prover: batch side copy");
    check(device::EventRecord(pack_free[b], st), "GPU prover: pack event");
  });
}

// One split query for every partition of a batch (c.qs: one Query each, the same points): each
// chunk of plan.batch_chunk points crosses once, whole, with each partition's side
// (BatchChunkLayout); on the device each partition batch-adds its 1s from the shared points and
// gathers its tail's points, by the ranks of its tail bitmap, and its side's scalars into its own
// area of the gather buffer (the word ranks at the buffer's front, shared), which the MSM takes
// whenever the area is full and after the last chunk (tail_pieces, as a lone partition's gather).
// A chunk's work is whole in itself (the workspace and the ranks are free again after it; only
// the gather areas carry over, and nothing else uses them), so other work may be enqueued on the
// compute stream between two chunks of a pass.
template <class E>
template <class C>
void ProverOf<E>::Impl::pass_begin(PassCursor<C>& c) {
  using P = Affine<C>;
  std::vector<Query<C>>& qs = c.qs;
  c.n = qs.front().n;
  const std::size_t parts = qs.size();
  if (c.n == 0) {
    for (Query<C>& q : qs) *q.shape = MsmShape{0, window_for(1, plan_window<C>())};
    return;  // no chunk
  }
  c.cap = chunk_points(c.n);
  c.chunks = (c.n + c.cap - 1) / c.cap;
  c.lay = BatchChunkLayout::of(c.cap, parts, sizeof(P));
  if (c.lay.bytes > plan.chunk_buffer_bytes ||
      c.lay.sides_bytes(parts) > plan.pinned_pack_bytes() / MemoryPlan::kPackBuffers)
    throw GpuError(Status::invalid("GPU prover: a batch of " + std::to_string(parts) + " partitions' chunks of " +
                                   std::to_string(c.cap) + " points exceed the chunk buffer"));
  // The gather buffer: the chunk's word ranks, then one area per partition.
  const std::size_t gather_bytes = region_bytes("compute.gather");
  c.rank_bytes = align_up((c.cap + 63) / 64 * 4);
  c.area_bytes = gather_bytes > c.rank_bytes ? (gather_bytes - c.rank_bytes) / parts / 256 * 256 : 0;
  const std::size_t gcap = GatherLayout::capacity(c.area_bytes, 0, sizeof(P), c.cap);
  if (gcap == 0) throw GpuError(Status::invalid("GPU prover: the gather buffer holds no point for a batch"));
  c.glay = GatherLayout::of(0, gcap, sizeof(P));
  c.window.assign(parts, 0);
  c.pieces.assign(parts, {});
  c.next.assign(parts, 0);
  for (std::size_t i = 0; i < parts; ++i) {
    const Query<C>& q = qs[i];
    if (q.n != c.n || q.h_points != qs.front().h_points)
      throw GpuError(Status::invalid("GPU prover: a batch's partitions read different points"));
    const std::size_t tail = q.in->bits.other_count;
    if (q.in->tail_counts.size() != c.chunks || q.in->ones_counts.size() != c.chunks)
      throw GpuError(Status::invalid("GPU prover: a partition's tail and 1 counts do not match the batch chunks"));
    c.window[i] = window_for(std::min(gcap, std::max<std::size_t>(tail, 1)), plan_window<C>());
    *q.shape = MsmShape{tail, c.window[i]};
    if (tail > 0) c.pieces[i] = tail_pieces(q.in->tail_counts, gcap);
  }
}

template <class E>
template <class C>
void ProverOf<E>::Impl::pass_chunk(PassCursor<C>& c) {
  using P = Affine<C>;
  if (c.done()) return;
  void* ws = region<void>("compute.workspace");
  const std::size_t ws_bytes = plan.workspace_bytes;
  std::vector<Query<C>>& qs = c.qs;
  const std::size_t parts = qs.size(), k = c.k, off = k * c.cap;
  const std::size_t m = std::min(c.cap, c.n - off), words = (m + 63) / 64;
  const BatchChunkLayout lay = c.lay;
  char* gather = region<char>("compute.gather");
  uint32_t* rank = reinterpret_cast<uint32_t*>(gather);
  auto job = std::make_unique<PackJob>();
  job->keep = c.keep;
  job->what = "batch chunk " + std::to_string(k) + " (points " + std::to_string(off) + " + " + std::to_string(m) + ")";
  // Each side from its partition's split inputs (held by the job) and, in place, its witness's z.
  std::vector<std::size_t> used(parts);
  std::vector<std::pair<std::shared_ptr<SplitInputs<F>>, const SplitQuery<F>*>> sides(parts);
  std::size_t tails = 0;
  for (std::size_t i = 0; i < parts; ++i) {
    const std::size_t count = qs[i].in->tail_counts[k];
    used[i] = lay.scalars + count * sizeof(F);
    sides[i] = {qs[i].inputs, qs[i].in};
    tails += count;
    job->bytes += used[i];
    // Each partition's share of the points' bytes (the first takes the remainder).
    qs[i].inputs->srs_bytes += m * sizeof(P) / parts + (i == 0 ? m * sizeof(P) % parts : 0);
  }
  job->want = PackedCounts{0, tails};
  job->pack = [sides, off, m, lay](char* out) {
    std::size_t got = 0;
    for (std::size_t i = 0; i < sides.size(); ++i)
      got += pack_batch_side(sides[i].second->bits, off, m, sides[i].second->z, out + i * lay.side_bytes, lay);
    return PackedCounts{0, got};
  };
  const char* points = reinterpret_cast<const char*>(qs.front().h_points + off);
  char* buf = stream_batch_chunk(k, std::move(job), points, m * sizeof(P), lay.sides, lay.side_bytes, used);
  const P* pts = reinterpret_cast<const P*>(buf);
  for (std::size_t i = 0; i < parts; ++i) {
    Query<C>& q = qs[i];
    char* side = buf + lay.sides + i * lay.side_bytes;
    const uint64_t* ones = reinterpret_cast<const uint64_t*>(side);
    const uint64_t* other = reinterpret_cast<const uint64_t*>(side + lay.other);
    const F* sc = reinterpret_cast<const F*>(side + lay.scalars);
    char* area = gather + c.rank_bytes + i * c.area_bytes;
    P* g_points = reinterpret_cast<P*>(area + c.glay.points);
    F* g_scalars = reinterpret_cast<F*>(area + c.glay.scalars);
    if (q.in->ones_counts[k] > 0) check(batch_add<C>(pts, ones, m, ws, ws_bytes, q.d_ones_sum, compute, true));
    std::vector<TailPiece>& pieces = c.pieces[i];
    std::size_t& next = c.next[i];
    if (next < pieces.size() && pieces[next].chunk == k) tail_ranks(other, words, rank, ws, ws_bytes);
    for (; next < pieces.size() && pieces[next].chunk == k; ++next) {
      const TailPiece& pc = pieces[next];
      const std::size_t take = pc.hi - pc.lo;
      device::launch(tail_gather_kernel<C>, grid_for(words), kBlock, 0, compute, other, rank, words, pc.lo, pc.hi, pts,
                     static_cast<const F*>(nullptr), static_cast<const uint32_t*>(nullptr), g_points + pc.at,
                     static_cast<F*>(nullptr));
      check(device::MemcpyAsync(g_scalars + pc.at, sc + pc.lo, take * sizeof(F), cudaMemcpyDeviceToDevice, compute),
            "GPU prover: tail scalars gather");
      if (pc.flush) {
        MsmShape sh;
        check(make_msm_shape(pc.at + take, c.window[i], &sh));
        check(msm<C>(g_points, g_scalars, sh, ws, ws_bytes, q.d_windows, compute, nullptr, true));
      }
    }
  }
  chunk_done(k);
  ++c.k;
}

template <class E>
template <class C>
void ProverOf<E>::Impl::pass_end(const PassCursor<C>& c) const {
  for (std::size_t i = 0; i < c.pieces.size(); ++i)
    if (c.next[i] != c.pieces[i].size()) throw GpuError(Status::invalid("GPU prover: a batch's tail pieces were left over"));
}

// This file's members of both curves' provers' Impl, as prover.cu calls them.
#define PP_GPU_PROVER_MSMS(E)                                                                                  \
  template void ProverOf<E>::Impl::dense_msm_g1(const Affine<E::G1>*, const Affine<E::G1>*, const E::Fr*,      \
                                                std::size_t, XYZZ<E::G1>*, MsmShape*, int, cudaEvent_t);       \
  template void ProverOf<E>::Impl::select_queries(SplitInputs<E::Fr>&, const ZClasses&, const WitnessOf<E>&)   \
      const;                                                                                                   \
  template void ProverOf<E>::Impl::split_msm<E::G1>(Query<E::G1>&, int);                                       \
  template void ProverOf<E>::Impl::split_msm<E::G2>(Query<E::G2>&, int);                                       \
  template void ProverOf<E>::Impl::pass_begin<E::G1>(PassCursor<E::G1>&);                                     \
  template void ProverOf<E>::Impl::pass_begin<E::G2>(PassCursor<E::G2>&);                                     \
  template void ProverOf<E>::Impl::pass_chunk<E::G1>(PassCursor<E::G1>&);                                     \
  template void ProverOf<E>::Impl::pass_chunk<E::G2>(PassCursor<E::G2>&);                                     \
  template void ProverOf<E>::Impl::pass_end<E::G1>(const PassCursor<E::G1>&) const;                           \
  template void ProverOf<E>::Impl::pass_end<E::G2>(const PassCursor<E::G2>&) const;
PP_GPU_PROVER_MSMS(Bls12_381)
PP_GPU_PROVER_MSMS(bn254::Bn254)
#undef PP_GPU_PROVER_MSMS

}  // namespace pp::gpu
