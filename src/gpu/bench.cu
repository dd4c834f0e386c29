// SPDX-License-Identifier: Apache-2.0 OR MIT
// GPU kernel benchmarks: device-generated inputs, cudaEvent timing of each run, medians.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda_status.cuh"
#include "proofpipe/engine/plan.hpp"
#include "proofpipe/gpu/bench.hpp"
#include "proofpipe/gpu/msm.hpp"
#include "proofpipe/gpu/ntt.hpp"

namespace pp::gpu {

namespace {

PP_HD inline uint64_t mix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Uniform-ish scalars below r (BLS12-381: below 2^254; BN254: below 2^253), used as Montgomery
// representations or as canonical integers.
template <class S>
__global__ void random_scalars_kernel(S* out, std::size_t n, uint64_t seed) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  S f;
  for (int j = 0; j < 4; ++j) f.l[j] = mix64(seed ^ (uint64_t(i) * 4 + j) * 0x2545f4914f6cdd1dULL);
  f.l[3] &= (uint64_t(1) << (S::BITS - 193)) - 1;
  out[i] = f;
}

// Distinct points without a scalar multiplication each: A[i mod 2^12] + B[i >> 12] for two
// sets of random multiples of the generator, normalised by one inversion each.
template <class C>
__global__ void points_kernel(Affine<C>* out, std::size_t n, const Affine<C>* a, const Affine<C>* b) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = XYZZ<C>::from_affine(a[i & 4095]).add_mixed(b[i >> 12]).to_affine();
}

__global__ void bitmap_kernel(uint64_t* out, std::size_t words, uint64_t seed) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < words) out[i] = mix64(seed + i) & mix64(seed ^ (i << 1));  // ~25 % of bits set
}

template <class C>
Affine<C> gen();
template <>
G1Affine gen<G1Curve>() { return g1_generator(); }
template <>
G2Affine gen<G2Curve>() { return g2_generator(); }
template <>
bn254::G1Affine gen<bn254::G1Curve>() { return bn254::g1_generator(); }

template <class C>
std::vector<Affine<C>> host_multiples(std::size_t m, uint64_t seed) {
  std::vector<Jacobian<C>> j(m);
  Jacobian<C> step = scalar_mul(gen<C>(), C::Scalar::from_u64(seed | 1));
  Jacobian<C> acc = step;
  for (std::size_t i = 0; i < m; ++i) {
    acc = acc + step;
    if (i % 7 == 3) acc = acc.dbl();
    j[i] = acc;
  }
  std::vector<Affine<C>> out(m);
  std::vector<typename C::Field> scratch(m);
  batch_to_affine(j.data(), out.data(), m, scratch.data());
  return out;
}

template <class T>
struct DeviceBuffer {
  T* p = nullptr;
  explicit DeviceBuffer(std::size_t count) { PP_CUDA_CHECK(cudaMalloc(&p, std::max<std::size_t>(1, count) * sizeof(T))); }
  ~DeviceBuffer() { PP_CUDA_WARN(cudaFree(p)); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

unsigned grid(std::size_t n, unsigned t = 256) { return unsigned((n + t - 1) / t); }

template <class C>
void fill_points(Affine<C>* d, std::size_t n, uint64_t seed) {
  const std::size_t nb = (n + 4095) / 4096;
  const auto a = host_multiples<C>(4096, seed), b = host_multiples<C>(std::max<std::size_t>(nb, 1), seed * 31 + 7);
  DeviceBuffer<Affine<C>> da(a.size()), db(b.size());
  PP_CUDA_CHECK(cudaMemcpy(da.p, a.data(), a.size() * sizeof(Affine<C>), cudaMemcpyHostToDevice));
  PP_CUDA_CHECK(cudaMemcpy(db.p, b.data(), b.size() * sizeof(Affine<C>), cudaMemcpyHostToDevice));
  points_kernel<C><<<grid(n), 256>>>(d, n, da.p, db.p);
  PP_CUDA_CHECK(cudaGetLastError());
  PP_CUDA_CHECK(cudaDeviceSynchronize());
}

// Times fn() (queued on `stream`) warmup + runs times; one event pair per run.
template <class Fn>
std::vector<double> time_runs(const BenchOptions& o, cudaStream_t stream, Fn&& fn) {
  cudaEvent_t start, stop;
  PP_CUDA_CHECK(cudaEventCreate(&start));
  PP_CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> ms;
  for (int r = 0; r < o.warmup + o.runs; ++r) {
    PP_CUDA_CHECK(cudaEventRecord(start, stream));
    fn();
    PP_CUDA_CHECK(cudaEventRecord(stop, stream));
    PP_CUDA_CHECK(cudaEventSynchronize(stop));
    float t = 0;
    PP_CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
    if (r >= o.warmup) ms.push_back(t);
  }
  PP_CUDA_WARN(cudaEventDestroy(start));
  PP_CUDA_WARN(cudaEventDestroy(stop));
  return ms;
}

void throw_if(const Status& s) {
  if (!s) throw std::runtime_error(s.message);
}

void summarise(BenchResult& r, std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  r.runs = int(ms.size());
  r.median_ms = ms[ms.size() / 2];
  r.min_ms = ms.front();
  r.max_ms = ms.back();
}

// Modelled 32-bit IMAD count of one Fp multiplication (docs/PERF.md): 4W^2 + W, W = 12.
constexpr double kFpMulImad = 588;

// What `bench msm` may use of the card beside `held` bytes of its own, with a margin left free,
// when it sizes a table or a pass from the free memory.
uint64_t card_budget(uint64_t held) {
  std::size_t free_bytes = 0, total_bytes = 0;
  PP_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const uint64_t fixed = (uint64_t(1) << 30) + held;
  return free_bytes > fixed ? free_bytes - fixed : 0;
}

// Sets per pass when none is given: as many as the card's free memory holds beside the table or
// points, the scalars and a margin. A pass of several sets reads each scalar once for all of
// them and gives the accumulation kernel fewer, fuller launches, so G1 takes all its windows in
// one pass where memory allows. G2 passes stop at 2^26 entries: beyond that a G2 pass is slower
// than several smaller ones (docs/perf-history/gpu-kernels-v10-v15.md). The prover keeps the
// planner's kPassEntries, sized for its budgets.
template <class C>
int msm_batch_for_card(std::size_t n, int c, int copies) {
  constexpr bool kG2 = std::is_same_v<C, G2Curve>;
  const uint64_t budget = card_budget(n * sizeof(typename C::Scalar) + n * uint64_t(copies) * sizeof(Affine<C>));
  MsmShape one;
  throw_if(make_msm_shape(n, c, &one, copies, 1));
  for (int b = one.sets(); b > 1; --b) {
    MsmShape s;  // make_msm_shape refuses passes of 2^31 entries or more
    if (make_msm_shape(n, c, &s, copies, b).ok() && !(kG2 && s.entries() > (std::size_t(1) << 26)) &&
        msm_workspace_bytes<C>(s) <= budget)
      return b;
  }
  return 0;  // msm_batch's choice
}

template <class C>
BenchResult bench_msm(const BenchOptions& o, cudaStream_t stream) {
  const std::size_t n = std::size_t(1) << o.lg;
  using S = typename C::Scalar;
  const bool g1 = !std::is_same_v<C, G2Curve>;
  int c = o.window, copies = o.copies;
  if (copies < 0) throw std::invalid_argument("bench msm: copies must be >= 0");
  if (copies == 0) {
    // The planner's table for what the card has free beside the scalars.
    const engine::PointSizes points = std::is_same_v<S, Fr> ? engine::kBls12_381Points : engine::kBn254Points;
    const engine::FixedBaseChoice ch =
        engine::choose_fixed_base(points, g1 ? engine::Curve::g1 : engine::Curve::g2, n, card_budget(n * sizeof(S)));
    copies = ch.copies;
    if (c == 0) c = ch.c;
  }
  const int batch = o.batch != 0 ? o.batch : msm_batch_for_card<C>(n, c, copies);
  MsmShape shape;
  throw_if(make_msm_shape(n, c, &shape, copies, batch));
  shape.canonical = o.canonical;
  DeviceBuffer<Affine<C>> pts(n * std::size_t(shape.copies));
  DeviceBuffer<S> ks(n);
  fill_points<C>(pts.p, n, o.seed);
  random_scalars_kernel<S><<<grid(n), 256>>>(ks.p, n, o.seed);
  BenchResult r;
  r.op = "msm";
  r.curve = o.curve;
  r.lg = o.lg;
  r.window = shape.c;
  r.copies = shape.copies;
  r.batch = shape.batch;
  r.canonical = shape.canonical;
  if (shape.copies > 1) {
    cudaEvent_t a, b;
    PP_CUDA_CHECK(cudaEventCreate(&a));
    PP_CUDA_CHECK(cudaEventCreate(&b));
    PP_CUDA_CHECK(cudaEventRecord(a, stream));
    throw_if(precompute_bases<C>(pts.p, n, shape.c, shape.copies, stream));
    PP_CUDA_CHECK(cudaEventRecord(b, stream));
    PP_CUDA_CHECK(cudaEventSynchronize(b));
    float t = 0;
    PP_CUDA_CHECK(cudaEventElapsedTime(&t, a, b));
    r.precompute_ms = t;
    PP_CUDA_WARN(cudaEventDestroy(a));
    PP_CUDA_WARN(cudaEventDestroy(b));
  }
  // The plain MSM's workspace too: with a table, its result is checked against the plain one.
  MsmShape plain;
  throw_if(make_msm_shape(n, o.window, &plain));
  plain.canonical = o.canonical;
  const std::size_t ws_bytes = std::max(msm_workspace_bytes<C>(shape), msm_workspace_bytes<C>(plain));
  DeviceBuffer<char> ws(ws_bytes);
  DeviceBuffer<XYZZ<C>> res(std::size_t(std::max(shape.sets(), plain.sets())));
  std::vector<XYZZ<C>> host_sums(std::size_t(std::max(shape.sets(), plain.sets())));
  PP_CUDA_CHECK(cudaDeviceSynchronize());
  // Timed: the kernels and the copy of the sums (the host's Horner step takes microseconds).
  summarise(r, time_runs(o, stream, [&] {
    throw_if(msm<C>(pts.p, ks.p, shape, ws.p, ws_bytes, res.p, stream));
    PP_CUDA_CHECK(cudaMemcpyAsync(host_sums.data(), res.p, sizeof(XYZZ<C>) * shape.sets(), cudaMemcpyDeviceToHost,
                                  stream));
  }));
  // Additions: n mixed per window, two full per bucket per set in the reduction.
  const double fp_muls_per_madd = g1 ? 10 : 30, fp_muls_per_add = fp_muls_per_madd * 1.4;
  const double imad = (double(shape.windows()) * double(n) * fp_muls_per_madd +
                       double(shape.sets()) * 2.0 * shape.buckets() * fp_muls_per_add) * kFpMulImad;
  r.imad_fraction = imad / (r.median_ms * 1e-3) / o.imad_peak;
  // One more run with stage events: where the time goes (summed over sets).
  std::vector<cudaEvent_t> ev(msm_trace_events(shape));
  for (auto& e : ev) PP_CUDA_CHECK(cudaEventCreate(&e));
  const MsmTrace trace{ev.data(), ev.size()};
  throw_if(msm<C>(pts.p, ks.p, shape, ws.p, ws_bytes, res.p, stream, &trace));
  PP_CUDA_CHECK(cudaStreamSynchronize(stream));
  double stage[4] = {0, 0, 0, 0};
  auto between = [&](std::size_t a, std::size_t b) {
    float t = 0;
    PP_CUDA_CHECK(cudaEventElapsedTime(&t, ev[a], ev[b]));
    return double(t);
  };
  for (int p = 0; p < shape.passes(); ++p)
    for (int k = 0; k < 4; ++k) stage[k] += between(std::size_t(4 * p + k), std::size_t(4 * p + k + 1));
  const double reduce = between(ev.size() - 2, ev.size() - 1);
  for (auto& e : ev) PP_CUDA_WARN(cudaEventDestroy(e));
  char buf[384];
  int len = std::snprintf(buf, sizeof buf,
                          "stages ms: digits %.1f sort %.1f segments %.1f chains %.1f reduce %.1f; %d passes of %d "
                          "sets; workspace %zu MiB",
                          stage[0], stage[1], stage[2], stage[3], reduce, shape.passes(), shape.batch, ws_bytes >> 20);
  if (shape.copies > 1) {
    // The table's MSM against the plain MSM of the same bases and scalars.
    Jacobian<C> with_table, without;
    throw_if(msm_wait<C>(pts.p, ks.p, shape, ws.p, ws_bytes, res.p, host_sums.data(), stream, &with_table));
    throw_if(msm_wait<C>(pts.p, ks.p, plain, ws.p, ws_bytes, res.p, host_sums.data(), stream, &without));
    if (!(with_table == without))
      throw std::runtime_error("bench msm: the fixed-base table's MSM differs from the plain MSM");
    std::snprintf(buf + len, sizeof buf - std::size_t(len),
                  "; table %d copies (%zu MiB) built in %.1f ms, %d sets; equals the plain MSM", shape.copies,
                  (n * std::size_t(shape.copies) * sizeof(Affine<C>)) >> 20, r.precompute_ms, shape.sets());
  }
  r.note = buf;
  return r;
}

template <class C>
BenchResult bench_batch_add(const BenchOptions& o, cudaStream_t stream) {
  const std::size_t n = std::size_t(1) << o.lg;
  DeviceBuffer<Affine<C>> pts(n);
  fill_points<C>(pts.p, n, o.seed);
  const std::size_t words = (n + 63) / 64;
  DeviceBuffer<uint64_t> bits(words);
  bitmap_kernel<<<grid(words), 256>>>(bits.p, words, o.seed);
  const std::size_t ws_bytes = batch_add_workspace_bytes<C>(n);
  DeviceBuffer<char> ws(ws_bytes);
  DeviceBuffer<XYZZ<C>> res(1);
  PP_CUDA_CHECK(cudaDeviceSynchronize());
  BenchResult r;
  r.op = "batch-add";
  r.curve = o.curve;
  r.lg = o.lg;
  summarise(r, time_runs(o, stream, [&] { throw_if(batch_add<C>(pts.p, bits.p, n, ws.p, ws_bytes, res.p, stream)); }));
  const double gbs = double(n) * sizeof(Affine<C>) / (r.median_ms * 1e-3) / 1e9;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f GB/s of points read, 25%% bits set", gbs);
  r.note = buf;
  return r;
}

// The forward NTT over F: BLS12-381's Fr in bellman's domain (generator 7) or BN254's in snarkjs's
// (generator 5); the kernels are the same, the field's product is not.
template <class F>
BenchResult bench_ntt(const BenchOptions& o, cudaStream_t stream, const char* curve, uint64_t generator) {
  const DomainOf<F> d(o.lg, generator);
  DeviceBuffer<F> a(d.size());
  const int twist_lg = twist_table_lg(o.lg, o.full_twist);
  DeviceBuffer<char> tb(ntt_tables_bytes(o.lg, twist_lg));
  NttTablesOf<F> t;
  throw_if(ntt_tables_init(tb.p, ntt_tables_bytes(o.lg, twist_lg), o.lg, roots_of(d), stream, &t, twist_lg));
  random_scalars_kernel<F><<<grid(d.size()), 256, 0, stream>>>(a.p, d.size(), o.seed);
  PP_CUDA_CHECK(cudaStreamSynchronize(stream));
  BenchResult r;
  r.op = "ntt";
  r.curve = curve;
  r.lg = o.lg;
  r.twist_lg = t.mid_lg;
  const NttOp op{Direction::forward, Order::natural, Order::bit_reversed, false};
  summarise(r, time_runs(o, stream, [&] { throw_if(ntt(a.p, t, op, stream)); }));
  r.note = "forward, natural in, bit-reversed out";
  return r;
}

}  // namespace

BenchResult run_bench(const BenchOptions& o) {
  PP_CUDA_CHECK(cudaSetDevice(o.device));
  cudaStream_t stream;
  PP_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  struct StreamGuard {
    cudaStream_t s;
    ~StreamGuard() { PP_CUDA_WARN(cudaStreamDestroy(s)); }
  } guard{stream};
  if (o.runs < 1 || o.warmup < 0) throw std::invalid_argument("bench: runs must be >= 1 and warmup >= 0");
  if (o.op == "ntt") {
    if (o.lg < 1 || o.lg > kMaxNttLg) throw std::invalid_argument("bench ntt: --lg must be in [1, 28]");
    if (o.curve == "bn254") return bench_ntt<bn254::Fr>(o, stream, "bn254", bn254::Domain::kSnarkjsGenerator);
    if (o.curve != "g1" && o.curve != "g2")
      throw std::invalid_argument("bench ntt: --curve must be g1 or g2 (BLS12-381's Fr) or bn254 (BN254's Fr)");
    return bench_ntt<Fr>(o, stream, "fr", Domain::kBellmanGenerator);
  }
  if (o.lg < 0 || o.lg > 30) throw std::invalid_argument("bench: --lg must be in [0, 30]");
  if (o.curve != "g1" && o.curve != "g2" && o.curve != "bn254-g1")
    throw std::invalid_argument("bench: --curve must be g1, g2 or bn254-g1");
  if (o.curve == "bn254-g1") {
    if (o.op != "msm") throw std::invalid_argument("bench: --curve bn254-g1 is for msm only");
    return bench_msm<bn254::G1Curve>(o, stream);
  }
  const bool g1 = o.curve == "g1";
  if (o.op == "msm") return g1 ? bench_msm<G1Curve>(o, stream) : bench_msm<G2Curve>(o, stream);
  if (o.op == "batch-add") return g1 ? bench_batch_add<G1Curve>(o, stream) : bench_batch_add<G2Curve>(o, stream);
  throw std::invalid_argument("bench: unknown op '" + o.op + "' (msm, ntt or batch-add)");
}

std::string bench_header() {
  return "op         curve  lg  c   median_ms     min_ms     max_ms  runs  IMAD%  note";
}

std::string bench_row(const BenchResult& r) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%-10s %-5s %3d %2d %11.3f %10.3f %10.3f %5d %6.1f  %s", r.op.c_str(), r.curve.c_str(),
                r.lg, r.window, r.median_ms, r.min_ms, r.max_ms, r.runs, 100 * r.imad_fraction, r.note.c_str());
  return buf;
}

}  // namespace pp::gpu
