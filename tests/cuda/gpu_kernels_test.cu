// SPDX-License-Identifier: Apache-2.0 OR MIT
// proofpipe_gpu_kernels_test: the GPU NTT, MSM and batch addition against the CPU library, with
// fresh seeded data, printing a pass/fail table. One run on the H200 covers the acceptance
// matrix: NTT at every log size 1..24 (all orders, coset, round trip, snarkjs odd points), MSM
// and batch addition for G1 and G2 at sizes 1..2^20 plus the edge cases.
//
// Usage: proofpipe_gpu_kernels_test [--seed S] [--max-ntt-lg N (24)] [--max-msm-lg N (20)]
//                                  [--max-g2-lg N (18)] [--max-prover-lg N (18)] [--device D]
// Exit status: 0 every row passed, 1 a mismatch, 2 usage or CUDA error.

#include <cuda_runtime.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "device.cuh"
#include "cuda_status.cuh"
#include "proofpipe/engine/engine.hpp"
#include "proofpipe/engine/plan.hpp"
#include "proofpipe/gpu/cuda_backend.hpp"
#include "proofpipe/gpu/msm.hpp"
#include "proofpipe/gpu/ntt.hpp"
#include "proofpipe/gpu/prover.hpp"
#include "proofpipe/groth16/synthetic.hpp"
#include "proofpipe/msm/msm.hpp"
#include "proofpipe/testkit/random_data.hpp"

namespace {

using namespace pp;
using gpu::Direction;

int g_failures = 0, g_rows = 0;

void row(const std::string& what, const std::string& size, bool ok, double ms) {
  ++g_rows;
  if (!ok) ++g_failures;
  std::printf("%-58s %-12s %-4s %9.1f ms\n", what.c_str(), size.c_str(), ok ? "PASS" : "FAIL", ms);
  std::fflush(stdout);
}

template <class T>
struct Dev {
  T* p = nullptr;
  std::size_t n = 0;
  explicit Dev(std::size_t count) : n(count) { PP_CUDA_CHECK(cudaMalloc(&p, std::max<std::size_t>(count, 1) * sizeof(T))); }
  explicit Dev(const std::vector<T>& v) : Dev(v.size()) { up(v); }
  ~Dev() { PP_CUDA_WARN(cudaFree(p)); }
  void up(const std::vector<T>& v) { PP_CUDA_CHECK(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice)); }
  std::vector<T> down() const {
    std::vector<T> v(n);
    PP_CUDA_CHECK(cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
    return v;
  }
};

void ok_or_throw(const gpu::Status& s) {
  if (!s) throw std::runtime_error(s.message);
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Random scalars in parallel chunks (each chunk its own seeded generator).
template <class S = Fr>
std::vector<S> scalars(std::size_t n, uint64_t seed) {
  std::vector<S> v(n);
  const std::size_t chunk = 1 << 14;
  tbb::parallel_for(std::size_t(0), (n + chunk - 1) / chunk, [&](std::size_t c) {
    std::mt19937_64 rng(seed + 977 * c);
    for (std::size_t i = c * chunk; i < std::min(n, (c + 1) * chunk); ++i) v[i] = testdata::random_fr<S>(rng);
  });
  return v;
}

template <class C>
std::vector<Affine<C>> points(std::size_t n, uint64_t seed) {
  std::vector<Affine<C>> v(n);
  const std::size_t chunk = 1 << 12;
  tbb::parallel_for(std::size_t(0), (n + chunk - 1) / chunk, [&](std::size_t c) {
    const std::size_t b = c * chunk, e = std::min(n, b + chunk);
    const auto part = testdata::random_points<C>(e - b, seed + 131 * c);
    std::copy(part.begin(), part.end(), v.begin() + b);
  });
  return v;
}

const char* order_name(Order o) { return o == Order::natural ? "N" : "R"; }

// Each value's canonical integer in its limbs (the form of NttOp::canonical_out and
// MsmShape::canonical).
template <class S>
std::vector<S> canonical_limbs(const std::vector<S>& v) {
  std::vector<S> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = v[i].canonical_limbs();
  return out;
}

// Every size of the GPU NTT over F (BLS12-381's Fr in bellman's domain, or BN254's in snarkjs's)
// against pp's CPU transforms; `name` prefixes the rows.
template <class F>
void ntt_rows_of(const std::string& name, int max_lg, uint64_t seed, uint64_t generator) {
  cudaStream_t stream = nullptr;
  // Every size with the default tables, then sizes whose top (and middle) passes take the
  // two-level roots by default with a root per twist instead (twist_lg = lg).
  std::vector<std::pair<int, bool>> cases;
  for (int lg = 1; lg <= max_lg; ++lg) cases.emplace_back(lg, false);
  for (int lg : {12, 20, 22})
    if (lg <= max_lg) cases.emplace_back(lg, true);
  for (const auto& [lg, full] : cases) {
    const auto t0 = std::chrono::steady_clock::now();
    const DomainOf<F> d(lg, generator);
    const auto x = scalars<F>(d.size(), seed + lg);
    Dev<F> a(x);
    const int twist_lg = gpu::twist_table_lg(lg, full);
    Dev<char> tb(gpu::ntt_tables_bytes(lg, twist_lg));
    gpu::NttTablesOf<F> t;
    ok_or_throw(gpu::ntt_tables_init(tb.p, tb.n, lg, gpu::roots_of(d), stream, &t, twist_lg));
    bool all = true;
    int ops = 0;
    for (Direction dir : {Direction::forward, Direction::inverse})
      for (Order in : {Order::natural, Order::bit_reversed})
        for (Order out : {Order::natural, Order::bit_reversed})
          for (bool coset : {false, true}) {
            a.up(x);
            const gpu::NttOp op{dir, in, out, coset};
            ok_or_throw(gpu::ntt(a.p, t, op, stream));
            auto want = x;
            if (dir == Direction::forward) coset ? coset_ntt(want, d, in, out) : ntt(want, d, in, out);
            else coset ? coset_intt(want, d, in, out) : intt(want, d, in, out);
            const bool ok = a.down() == want;
            if (!ok)
              std::printf("  mismatch: lg %d %s %s->%s%s\n", lg, dir == Direction::forward ? "fwd" : "inv",
                          order_name(in), order_name(out), coset ? " coset" : "");
            all = all && ok;
            ++ops;
            if (dir == Direction::inverse) {  // the same with the output left canonical
              a.up(x);
              gpu::NttOp plain = op;
              plain.canonical_out = true;
              ok_or_throw(gpu::ntt(a.p, t, plain, stream));
              const bool ok2 = a.down() == canonical_limbs(want);
              if (!ok2)
                std::printf("  mismatch: lg %d inv %s->%s%s, canonical output\n", lg, order_name(in), order_name(out),
                            coset ? " coset" : "");
              all = all && ok2;
              ++ops;
            }
          }
    // Round trips on the device: forward N->R then inverse R->N, plain and coset.
    for (bool coset : {false, true}) {
      a.up(x);
      ok_or_throw(gpu::ntt(a.p, t, {Direction::forward, Order::natural, Order::bit_reversed, coset}, stream));
      ok_or_throw(gpu::ntt(a.p, t, {Direction::inverse, Order::bit_reversed, Order::natural, coset}, stream));
      all = all && a.down() == x;
      ops += 2;
    }
    {  // The prover's pair, evaluations to the coset, with the inverse's 1/n moved into the forward.
      gpu::NttOp deferred{Direction::inverse, Order::natural, Order::bit_reversed, false};
      deferred.defer_size_inv = true;
      gpu::NttOp taken{Direction::forward, Order::bit_reversed, Order::natural, true};
      taken.take_size_inv = true;
      a.up(x);
      ok_or_throw(gpu::ntt(a.p, t, deferred, stream));
      ok_or_throw(gpu::ntt(a.p, t, taken, stream));
      auto want = x;
      intt(want, d, Order::natural, Order::bit_reversed);
      coset_ntt(want, d, Order::bit_reversed, Order::natural);
      const bool ok = a.down() == want;
      if (!ok) std::printf("  mismatch: lg %d, inverse with 1/n deferred then coset forward taking it\n", lg);
      all = all && ok;
      ops += 2;
    }
    row(name + (full ? "ntt, a root per twist: 16 order/coset/direction combos, 8 canonical out, 2 round trips, 1/n moved"
                     : "ntt: 16 order/coset/direction combos, 8 canonical out, 2 round trips, 1/n moved"),
        "2^" + std::to_string(lg), all, ms_since(t0));
  }
}

void ntt_rows(int max_lg, uint64_t seed) {
  cudaStream_t stream = nullptr;
  ntt_rows_of<Fr>("", max_lg, seed, Domain::kBellmanGenerator);
  // snarkjs's odd points (shift omega_2n over the generator-5 domain) and the H step.
  for (int lg : {4, 13, 20}) {
    const auto t0 = std::chrono::steady_clock::now();
    const Domain d(lg, Domain::kSnarkjsGenerator), d2(lg + 1, Domain::kSnarkjsGenerator);
    const auto roots = gpu::roots_of(d, d2.omega());
    const auto x = scalars(d.size(), seed + 1000 + lg);
    Dev<Fr> a(x);
    Dev<char> tb(gpu::ntt_tables_bytes(lg));
    gpu::NttTables t;
    ok_or_throw(gpu::ntt_tables_init(tb.p, tb.n, lg, roots, stream, &t));
    const gpu::NttOp op{Direction::forward, Order::natural, Order::natural, true};
    ok_or_throw(gpu::ntt(a.p, t, op, stream));
    auto want = x;
    gpu::ntt_twin(want, d, roots, op);
    row("ntt: snarkjs odd points (shift omega_2n, generator 5)", "2^" + std::to_string(lg), a.down() == want,
        ms_since(t0));
  }
  {
    const auto t0 = std::chrono::steady_clock::now();
    const std::size_t n = std::size_t(1) << 20;
    const auto x = scalars(n, seed + 7), y = scalars(n, seed + 8), z = scalars(n, seed + 9);
    const Fr f = scalars(1, seed + 10)[0];
    Dev<Fr> a(x), b(y), c(z);
    ok_or_throw(gpu::h_step(a.p, b.p, c.p, n, f, stream));
    auto got = a.down();
    bool ok = true;
    for (std::size_t i = 0; i < n; ++i) ok = ok && got[i] == (x[i] * y[i] - z[i]) * f;
    // The factor's canonical integer leaves the result canonical (the prover's snarkjs H step).
    a.up(x);
    ok_or_throw(gpu::h_step(a.p, b.p, c.p, n, canonical_limbs(std::vector<Fr>{f})[0], stream));
    ok = ok && a.down() == canonical_limbs(got);
    row("h step: (a*b - c) * factor, Montgomery and canonical out", "2^20", ok, ms_since(t0));
  }
  {
    const auto t0 = std::chrono::steady_clock::now();
    const std::size_t n = (std::size_t(1) << 20) + 3;
    const auto x = scalars(n, seed + 11), y = scalars(n, seed + 12);
    Dev<Fr> a(x), b(y), c(y);
    ok_or_throw(gpu::c_step(c.p, a.p, b.p, n, stream));
    const auto got = c.down();
    bool ok = true;
    for (std::size_t i = 0; i < n; ++i) ok = ok && got[i] == x[i] * y[i];
    row("c step: c = a*b", "2^20+3", ok, ms_since(t0));
  }
}

template <class C>
bool gpu_msm_equals(const std::vector<Affine<C>>& pts, const std::vector<typename C::Scalar>& ks, int c, int batch = 0,
                    bool canonical = false) {
  gpu::MsmShape shape;
  ok_or_throw(gpu::make_msm_shape(pts.size(), c, &shape, 1, batch));
  shape.canonical = canonical;
  Dev<Affine<C>> dp(pts);
  Dev<typename C::Scalar> dk(canonical ? canonical_limbs(ks) : ks);
  Dev<char> ws(gpu::msm_workspace_bytes<C>(shape));
  Dev<XYZZ<C>> sums(std::size_t(shape.windows()));
  std::vector<XYZZ<C>> host(std::size_t(shape.windows()));
  Jacobian<C> got;
  ok_or_throw(gpu::msm_wait<C>(dp.p, dk.p, shape, ws.p, ws.n, sums.p, host.data(), nullptr, &got));
  const Jacobian<C> want = msm<C>(pts, ks);
  return got.is_on_curve() && got == want;
}

// A fixed-base table built on the GPU (precompute_bases) equals its CPU twin (when `twin`), and
// the MSM over it equals the CPU MSM over the bases.
template <class C>
bool gpu_table_msm_equals(const std::vector<Affine<C>>& pts, const std::vector<typename C::Scalar>& ks, int c, int copies, bool twin,
                          int batch = 0, bool canonical = false) {
  gpu::MsmShape shape;
  ok_or_throw(gpu::make_msm_shape(pts.size(), c, &shape, copies, batch));
  shape.canonical = canonical;
  const std::size_t n = pts.size();
  std::vector<Affine<C>> table(n * std::size_t(copies));
  std::copy(pts.begin(), pts.end(), table.begin());
  Dev<Affine<C>> dp(table);
  ok_or_throw(gpu::precompute_bases<C>(dp.p, n, shape.c, copies, nullptr));
  bool ok = true;
  if (twin) ok = dp.down() == gpu::precompute_twin<C>(pts, shape.c, copies);
  Dev<typename C::Scalar> dk(canonical ? canonical_limbs(ks) : ks);
  Dev<char> ws(gpu::msm_workspace_bytes<C>(shape));
  Dev<XYZZ<C>> sums(std::size_t(shape.sets()));
  std::vector<XYZZ<C>> host(std::size_t(shape.sets()));
  Jacobian<C> got;
  ok_or_throw(gpu::msm_wait<C>(dp.p, dk.p, shape, ws.p, ws.n, sums.p, host.data(), nullptr, &got));
  return ok && got.is_on_curve() && got == msm<C>(pts, ks);
}

template <class C>
bool gpu_batch_equals(const std::vector<Affine<C>>& pts, const std::vector<uint64_t>& bits) {
  Dev<Affine<C>> dp(pts);
  Dev<uint64_t> db(bits);
  Dev<char> ws(gpu::batch_add_workspace_bytes<C>(pts.size()));
  Dev<XYZZ<C>> res(1);
  ok_or_throw(gpu::batch_add<C>(dp.p, db.p, pts.size(), ws.p, ws.n, res.p, nullptr));
  return res.down()[0].to_jacobian() == batch_add<C>(pts, bits);
}

template <class C>
void msm_rows(const char* name, int max_lg, uint64_t seed) {
  using S = typename C::Scalar;
  const std::string g = name;
  std::vector<std::size_t> sizes = {1, 2, 3, 7, 31, 32, 33, 100, 1000};
  for (int lg = 10; lg <= max_lg; lg += 2) sizes.push_back(std::size_t(1) << lg);
  if (max_lg >= 10) sizes.push_back((std::size_t(1) << max_lg) - 1);
  // Enough points for the largest size and for the 4096-point edge cases below, whatever the limit
  // (a limit under 2^12 used to leave these reading past the end of the vectors).
  const auto all_pts = points<C>(std::max({sizes.back(), sizes[sizes.size() - 2], std::size_t(4096)}), seed);
  const auto all_ks = scalars<S>(all_pts.size(), seed + 1);
  for (std::size_t n : sizes) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<Affine<C>> p(all_pts.begin(), all_pts.begin() + n);
    std::vector<S> k(all_ks.begin(), all_ks.begin() + n);
    row(g + " msm: random scalars, default window", std::to_string(n), gpu_msm_equals<C>(p, k, 0), ms_since(t0));
    std::mt19937_64 rng(seed + n);
    std::vector<uint64_t> bits((n + 63) / 64);
    for (auto& w : bits) w = rng() & rng();
    const auto t1 = std::chrono::steady_clock::now();
    row(g + " batch add: ~25% of bits set", std::to_string(n), gpu_batch_equals<C>(p, bits), ms_since(t1));
  }
  // Long segments (more than kMinSegment entries per thread) start at 2^23 points.
  if (g.find("G2") == std::string::npos && max_lg >= 20) {
    const std::size_t big = (std::size_t(1) << 23) + 5;
    const auto t0 = std::chrono::steady_clock::now();
    const auto bp = points<C>(big, seed + 7);
    const auto bk = scalars<S>(big, seed + 8);
    row(g + " msm: random, " + std::to_string(gpu::segment_length(big)) + "-entry segments", std::to_string(big),
        gpu_msm_equals<C>(bp, bk, 0), ms_since(t0));
    const auto t1 = std::chrono::steady_clock::now();
    row(g + " msm: one repeated scalar, long segments", std::to_string(big),
        gpu_msm_equals<C>(bp, std::vector<S>(big, bk[1]), 0), ms_since(t1));
    const auto t2 = std::chrono::steady_clock::now();
    row(g + " msm: canonical scalars, long segments", std::to_string(big), gpu_msm_equals<C>(bp, bk, 0, 0, true),
        ms_since(t2));
  }
  // Edge cases at 4096 points.
  const std::size_t n = 4096;
  std::vector<Affine<C>> p(all_pts.begin(), all_pts.begin() + n);
  std::vector<S> k(all_ks.begin(), all_ks.begin() + n);
  auto run = [&](const std::string& what, const std::vector<Affine<C>>& pp_, const std::vector<S>& kk, int c) {
    const auto t0 = std::chrono::steady_clock::now();
    row(g + " msm: " + what + " (c=" + std::to_string(c) + ")", std::to_string(pp_.size()),
        gpu_msm_equals<C>(pp_, kk, c), ms_since(t0));
  };
  for (int c : {2, 3, 7, 13, 16, 21, 24}) run("random, explicit window", p, k, c);
  // Windows per pass (MsmShape::batch): the default puts all of a 4096-point MSM's in one; one a
  // pass, and passes of 5 with a short last one, must give the same point.
  for (auto [c, batch] : {std::pair{7, 1}, std::pair{7, 5}, std::pair{13, 1}, std::pair{16, 7}}) {
    const auto t0 = std::chrono::steady_clock::now();
    row(g + " msm: random, " + std::to_string(batch) + " window(s) a pass (c=" + std::to_string(c) + ")",
        std::to_string(n), gpu_msm_equals<C>(p, k, c, batch), ms_since(t0));
  }
  {
    const auto t0 = std::chrono::steady_clock::now();
    row(g + " msm: one repeated scalar, 3 windows a pass (c=10)", std::to_string(n),
        gpu_msm_equals<C>(p, std::vector<S>(n, k[0]), 10, 3), ms_since(t0));
  }
  // Scalars given as canonical integers (MsmShape::canonical): random, 0, 1, r - 1; 2 windows a pass.
  {
    const auto t0 = std::chrono::steady_clock::now();
    bool ok = gpu_msm_equals<C>(p, k, 0, 0, true) && gpu_msm_equals<C>(p, k, 13, 2, true);
    for (const S& v : {S::zero(), S::one(), -S::one()})
      ok = ok && gpu_msm_equals<C>(p, std::vector<S>(n, v), 0, 0, true);
    row(g + " msm: canonical scalars (random, 0, 1, r-1)", std::to_string(n), ok, ms_since(t0));
  }
  run("all scalars zero", p, std::vector<S>(n, S::zero()), 0);
  run("all scalars one", p, std::vector<S>(n, S::one()), 0);
  run("all scalars r-1", p, std::vector<S>(n, -S::one()), 0);
  run("one repeated scalar (a single bucket)", p, std::vector<S>(n, k[0]), 0);
  run("one repeated point", std::vector<Affine<C>>(n, p[0]), k, 0);
  auto inf = p;
  for (std::size_t i = 0; i < n; i += 3) inf[i] = Affine<C>::infinity();
  run("every third point at infinity", inf, k, 0);
  run("all points at infinity", std::vector<Affine<C>>(n, Affine<C>::infinity()), k, 0);
  auto opp = p;
  auto same = k;
  for (std::size_t i = 1; i < n; i += 2) {
    opp[i] = -opp[i - 1];
    same[i] = same[i - 1];
  }
  run("cancelling pairs P, -P with equal scalars", opp, same, 0);
  // Fixed-base tables: table == CPU twin, MSM over it == CPU MSM; full tables (one set), partial
  // last sets, tiny and odd sizes, the edge-case inputs.
  auto table_row = [&](const std::string& what, const std::vector<Affine<C>>& pp_, const std::vector<S>& kk, int c,
                       int copies, bool twin) {
    const auto t0 = std::chrono::steady_clock::now();
    const bool ok = gpu_table_msm_equals<C>(pp_, kk, c, copies, twin);
    row(g + " msm, fixed-base table: " + what + " (c=" + std::to_string(c) + ", " + std::to_string(copies) +
            " copies)",
        std::to_string(pp_.size()), ok, ms_since(t0));
  };
  for (std::size_t m : {std::size_t(1), std::size_t(33), std::size_t(1000)}) {
    std::vector<Affine<C>> pm(all_pts.begin(), all_pts.begin() + m);
    std::vector<S> km(all_ks.begin(), all_ks.begin() + m);
    for (auto [c, copies] : {std::pair{5, 2}, std::pair{8, 32}, std::pair{13, 5}, std::pair{16, 16}})
      table_row("random", pm, km, c, copies, true);
  }
  for (auto [c, copies] : {std::pair{7, 3}, std::pair{12, 22}, std::pair{16, 4}, std::pair{21, 13}, std::pair{24, 6}})
    table_row("random", p, k, c, copies, true);
  table_row("one repeated scalar", p, std::vector<S>(n, k[0]), 10, 26, true);
  for (auto [c, copies, batch] : {std::tuple{7, 3, 1}, std::tuple{7, 3, 5}, std::tuple{12, 5, 2}}) {
    const auto t0 = std::chrono::steady_clock::now();
    row(g + " msm, fixed-base table: random, " + std::to_string(batch) + " set(s) a pass (c=" + std::to_string(c) +
            ", " + std::to_string(copies) + " copies)",
        std::to_string(n), gpu_table_msm_equals<C>(p, k, c, copies, false, batch), ms_since(t0));
  }
  table_row("every third point at infinity", inf, k, 11, 4, true);
  {
    const auto t0 = std::chrono::steady_clock::now();
    row(g + " msm, fixed-base table: canonical scalars (c=12, 5 copies, 2 sets a pass)", std::to_string(n),
        gpu_table_msm_equals<C>(p, k, 12, 5, false, 2, true), ms_since(t0));
  }
  table_row("cancelling pairs", opp, same, 9, 29, true);
  if (max_lg >= 16) {
    const std::size_t big = std::size_t(1) << max_lg;
    std::vector<Affine<C>> pb(all_pts.begin(), all_pts.begin() + big);
    std::vector<S> kb(all_ks.begin(), all_ks.begin() + big);
    table_row("random", pb, kb, 0, 3, false);
    table_row("random", pb, kb, 20, 13, false);
  }
  {
    const auto t0 = std::chrono::steady_clock::now();
    row(g + " batch add: no bits / all bits", "4096",
        gpu_batch_equals<C>(p, std::vector<uint64_t>(64, 0)) && gpu_batch_equals<C>(p, std::vector<uint64_t>(64, ~0ULL)) &&
            gpu_batch_equals<C>(inf, std::vector<uint64_t>(64, ~0ULL)),
        ms_since(t0));
  }
}

// The planner's MSM bounds of one curve's G1 and G2 against what the kernels carve.
template <class C1, class C2>
bool planner_msm_bounds(const engine::PointSizes& points, const char* curve) {
  bool ok = true;
  for (std::size_t m : {std::size_t(1), std::size_t(1000), std::size_t(1) << 16, std::size_t(1) << 20,
                        std::size_t(1) << 24, (std::size_t(1) << 27) + 3, (std::size_t(1) << 30) - 1}) {
    for (int c : {0, 4, 12, 16, 20, 21, 24})
      for (int copies : {1, 2, 5, 13}) {
        gpu::MsmShape shape;
        if (!gpu::make_msm_shape(m, c, &shape, copies).ok()) continue;  // a table past 2^31 points
        const bool g1 = engine::msm_workspace_bound(points, engine::Curve::g1, m, shape.c, copies) >=
                        gpu::msm_workspace_bytes<C1>(shape);
        const bool g2 = engine::msm_workspace_bound(points, engine::Curve::g2, m, shape.c, copies) >=
                        gpu::msm_workspace_bytes<C2>(shape);
        if (!g1 || !g2)
          std::printf("  planner bound too small (%s): m %zu c %d copies %d (g1 %d g2 %d)\n", curve, m, shape.c, copies,
                      g1, g2);
        ok = ok && g1 && g2;
      }
    ok = ok && engine::batch_add_workspace_bound(points, engine::Curve::g1, m) >= gpu::batch_add_workspace_bytes<C1>(m) &&
         engine::batch_add_workspace_bound(points, engine::Curve::g2, m) >= gpu::batch_add_workspace_bytes<C2>(m);
  }
  return ok;
}

// The memory planner sizes device regions with its own formulas (it runs without a GPU); they
// must bound what the kernels really carve (CUB's sort temporary is only known here), for
// either curve's points.
void planner_rows() {
  const auto t0 = std::chrono::steady_clock::now();
  bool ok = planner_msm_bounds<G1Curve, G2Curve>(engine::kBls12_381Points, "BLS12-381");
  ok = planner_msm_bounds<bn254::G1Curve, bn254::G2Curve>(engine::kBn254Points, "BN254") && ok;
  for (int lg = 1; lg <= gpu::kMaxNttLg; ++lg)
    ok = ok && engine::ntt_tables_bound(lg) >= gpu::ntt_tables_bytes(lg) &&
         engine::ntt_tables_bound(lg, true) >= gpu::ntt_tables_bytes(lg, gpu::twist_table_lg(lg, true));
  row("planner bounds >= kernels' workspace (MSM, batch add, NTT tables)", "1..2^30", ok, ms_since(t0));
}

bool same_key(const ProvingKey& x, const ProvingKey& y) {
  const VerifyingKey &a = x.vk, &b = y.vk;
  return a.alpha_g1 == b.alpha_g1 && a.beta_g1 == b.beta_g1 && a.beta_g2 == b.beta_g2 && a.gamma_g2 == b.gamma_g2 &&
         a.delta_g1 == b.delta_g1 && a.delta_g2 == b.delta_g2 && a.ic == b.ic && x.h == y.h && x.l == y.l &&
         x.a == y.a && x.b_g1 == y.b_g1 && x.b_g2 == y.b_g2 && x.convention == y.convention;
}

// The GPU prover end to end: the key's points made on the GPU equal setup()'s, and its proofs
// equal the CPU prover's byte for byte (same r, s) and verify, for both conventions, the SRS
// resident and streamed (at the smallest streamed budget: many chunks), and witnesses with no
// tail, no ones, or mixed.
void prover_rows(int max_lg, uint64_t seed) {
  struct Case {
    int lg;
    KeyConvention conv;
    engine::SrsPlacement srs;
    bool tight;  // budget = the planner's minimum for the placement
    double zero, one;
    int gw = 2;  // streamed at gw >= 4: the split MSMs batched (MemoryPlan::split_batch)
    uint64_t partitions = 3;  // a job's
    bool pass_thread = false;  // batched: the prover's pass thread enqueues the passes (ProverConfig::pass_thread)
  };
  const std::vector<Case> cases = {
      {8, kBellmanConvention, engine::SrsPlacement::resident, false, 0.45, 0.45},
      {8, kSnarkjsConvention, engine::SrsPlacement::resident, false, 0.45, 0.45},
      {10, kBellmanConvention, engine::SrsPlacement::resident, false, 0.0, 0.0},
      {10, kBellmanConvention, engine::SrsPlacement::resident, false, 0.5, 0.5},
      {10, kBellmanConvention, engine::SrsPlacement::streamed, false, 0.45, 0.45},
      {14, kSnarkjsConvention, engine::SrsPlacement::streamed, false, 0.3, 0.3},
      {16, kBellmanConvention, engine::SrsPlacement::resident, false, 0.45, 0.45},
      {18, kBellmanConvention, engine::SrsPlacement::streamed, true, 0.45, 0.45},
      {18, kSnarkjsConvention, engine::SrsPlacement::resident, true, 0.45, 0.45},
      // Batched split passes: 4 partitions a pass at gw 8 (a job's 3 run as a batch of 3 once the
      // device has run dry), 2 at gw 4; a witness with no tail or no ones within a batch.
      {10, kBellmanConvention, engine::SrsPlacement::streamed, false, 0.45, 0.45, 8},
      {14, kSnarkjsConvention, engine::SrsPlacement::streamed, false, 0.3, 0.3, 4},
      {16, kBellmanConvention, engine::SrsPlacement::streamed, false, 0.0, 0.0, 8},
      {18, kBellmanConvention, engine::SrsPlacement::streamed, false, 0.45, 0.45, 8},
      // Jobs of 9: two full batches of 4 enqueued by compute() (or by the pass thread), the last
      // partition's flushed by its finish().
      {14, kBellmanConvention, engine::SrsPlacement::streamed, false, 0.45, 0.45, 8, 9},
      {14, kBellmanConvention, engine::SrsPlacement::streamed, false, 0.45, 0.45, 8, 9, true},
  };
  for (const Case& c : cases) {
    if (c.lg > max_lg) continue;
    const auto t0 = std::chrono::steady_clock::now();
    SyntheticOptions o;
    o.lg_constraints = c.lg;
    o.zero_fraction = c.zero;
    o.one_fraction = c.one;
    o.seed = seed + uint64_t(c.lg);
    const R1cs r1cs = make_porep_like_r1cs(o);
    const KeyScalars ks = key_scalars(r1cs, seed, c.conv);
    const ProvingKey pk = gpu::key_points(ks, 0);
    const bool bellman = c.conv.h_basis == HBasis::bellman;
    const std::string conv = bellman ? "bellman" : "snarkjs";
    const std::string size = "2^" + std::to_string(c.lg);
    if (c.lg <= 14) row("key points on the GPU == setup() (" + conv + ")", size, same_key(pk, setup(r1cs, seed, {}, c.conv)), ms_since(t0));
    std::vector<Witness> ws;
    std::vector<std::vector<Fr>> publics;
    for (uint64_t k = 0; k < c.partitions; ++k) {
      const std::vector<Fr> z = make_witness(r1cs, o, seed + 77 + k);
      ws.push_back(witness_from_assignment(r1cs, z));
      publics.emplace_back(z.begin() + 1, z.begin() + std::ptrdiff_t(r1cs.num_inputs));
    }
    // The GPU prover as users reach it: the engine over a CudaBackend, no CPU fallback (a GPU
    // failure fails the row). Two proofs of the same key: the SRS must be loaded once.
    gpu::CudaBackendConfig cfg;
    cfg.srs = c.srs;
    cfg.gw = c.gw;
    cfg.pass_thread = c.pass_thread;
    if (c.tight) {
      const engine::CircuitShape shape = engine::shape_of(QueryLayout::of(pk), engine::kBls12_381Points);
      cfg.budget = engine::minimum_budget(shape, c.srs);
    }
    const auto t1 = std::chrono::steady_clock::now();
    gpu::CudaBackend backend(cfg);
    engine::EngineConfig ec;
    ec.fallback = engine::Fallback::fail_job;
    ec.max_retries = 0;
    ec.gw = c.gw;
    engine::Engine eng({&backend}, ec);
    auto key = std::make_shared<const ProvingKey>(pk);
    engine::JobSpec spec;
    spec.key = key;
    for (const Witness& w : ws) spec.witnesses.push_back(std::make_shared<const Witness>(w));
    spec.seed = seed + 5;
    bool ok = true, equal = true, valid = true;
    std::string placement = "?";
    int batch = 0;
    for (int round = 0; round < 2; ++round) {
      const engine::JobResult r = eng.submit(spec).wait();
      if (r.status != engine::JobStatus::ok) {
        std::printf("  engine: %s\n", r.error.c_str());
        ok = false;
        break;
      }
      const std::vector<Proof> want = prove(pk, ws, seed + 5);
      if (r.proofs.size() != want.size()) {
        std::printf("  round %d: %zu proofs, %zu expected\n", round, r.proofs.size(), want.size());
        equal = false;
        break;
      }
      // A failure names the round, the proof and the elements that differ (A: the A query's MSM;
      // B: B_G2, and B_G1 through C; C: H, L and the rest), to tell one stage from another.
      for (std::size_t i = 0; i < want.size(); ++i)
        if (r.proofs[i].to_bytes() != want[i].to_bytes()) {
          std::printf("  round %d, proof %zu differs from the CPU's:%s%s%s\n", round, i,
                      r.proofs[i].a == want[i].a ? "" : " A", r.proofs[i].b == want[i].b ? "" : " B",
                      r.proofs[i].c == want[i].c ? "" : " C");
          equal = false;
        }
      const bool verified = batch_verify(pk.vk, publics, r.proofs, seed);
      if (!verified) std::printf("  round %d: the proofs do not verify\n", round);
      valid = valid && verified;
      for (const gpu::ResidentKey& k : backend.resident()) {
        placement = engine::to_string(k.srs);
        batch = k.split_batch;
      }
    }
    const double gpu_ms = ms_since(t1);
    const bool loaded_once = backend.key_loads() == 1;
    const bool evicted = backend.evict(key.get()) && backend.resident().empty();
    const bool no_forbidden = eng.stats().backends.at(0).forbidden_calls == 0;
    {
      // The check can fail: a device-wide synchronisation made inside a phase is counted.
      const engine::CallScope scope(&backend.device_calls());
      PP_CUDA_CHECK(gpu::device::DeviceSynchronize());
    }
    const bool caught = eng.stats().backends.at(0).forbidden_calls == 1;
    eng.shutdown(engine::Shutdown::drain);
    char what[160];
    const std::string batched = batch > 1 ? ", gw " + std::to_string(c.gw) + " batch " + std::to_string(batch) +
                                                (c.pass_thread ? " pass thread" : "")
                                          : "";
    std::snprintf(what, sizeof what, "engine: 2x%d proofs == CPU, verify (%s, %s%s%s, 0/1 %.2f/%.2f)",
                  int(c.partitions), conv.c_str(), placement.c_str(), c.tight ? " min budget" : "", batched.c_str(),
                  c.zero, c.one);
    const bool batched_as_planned = c.gw < 4 || c.srs != engine::SrsPlacement::streamed || batch == (c.gw >= 8 ? 4 : 2);
    row(what, size, ok && equal && valid && batched_as_planned, gpu_ms);
    row("  key uploaded once, evict frees it, no forbidden call", size, ok && loaded_once && evicted && no_forbidden, 0);
    row("  a deliberate cudaDeviceSynchronize in a phase is counted", size, caught, 0);
  }
}

// A BN254 circuit of 2^lg - 1 rows over z = (1, in, aux...): rows alternate a bit check
// b·(b - 1) = 0 of a random bit (the 0/1 scalars of the split MSMs) and a product x·y = p of two
// earlier values plus the input (dense scalars), with rows using the input in all three matrices.
struct Bn254Circuit {
  bn254::R1cs r1cs;
  std::vector<bn254::Fr> z;
};
Bn254Circuit bn254_circuit(int lg, uint64_t seed) {
  using F = bn254::Fr;
  std::mt19937_64 rng(seed);
  Bn254Circuit c;
  c.z = {F::one(), testdata::random_fr<F>(rng)};
  c.r1cs.num_inputs = 2;
  auto row = [](bn254::SparseMatrix& m, std::initializer_list<std::pair<uint32_t, F>> lc) {
    if (m.row_start.empty()) m.row_start.push_back(0);
    for (const auto& [col, coeff] : lc) {
      m.column.push_back(col);
      m.value.push_back(coeff);
    }
    m.row_start.push_back(m.column.size());
  };
  auto aux = [&](const F& v) {
    c.z.push_back(v);
    return uint32_t(c.z.size() - 1);
  };
  const std::size_t rows = (std::size_t(1) << lg) - 1;
  uint32_t prev = 1;
  for (std::size_t r = 0; r < rows; ++r) {
    if (r % 2 == 0) {
      const uint32_t b = aux(F::from_u64(rng() & 1));
      row(c.r1cs.a, {{b, F::one()}});
      row(c.r1cs.b, {{b, F::one()}, {0, -F::one()}});
      row(c.r1cs.c, {});
    } else {
      const uint32_t x = uint32_t(2 + rng() % (c.z.size() - 2));
      const uint32_t p = aux((c.z[x] + c.z[1]) * c.z[prev]);
      row(c.r1cs.a, {{x, F::one()}, {1, F::one()}});
      row(c.r1cs.b, {{prev, F::one()}});
      row(c.r1cs.c, {{p, F::one()}});
      prev = p;
    }
  }
  c.r1cs.num_aux = c.z.size() - 2;
  return c;
}

// The GPU prover over BN254 (the same phases, instantiated for its curve) against the CPU prover:
// equal proofs for the same randomizers, valid under the verifier, resident and streamed, both
// conventions, a tampered public input rejected; `tight`: within the planner's smallest budget
// for the placement, planned with BN254's point sizes.
void bn254_prover_rows(int max_lg, uint64_t seed) {
  struct Case {
    int lg;
    KeyConvention conv;
    engine::SrsPlacement srs;
    bool tight;
  };
  const std::vector<Case> cases = {{8, kSnarkjsConvention, engine::SrsPlacement::resident, false},
                                   {8, kBellmanConvention, engine::SrsPlacement::resident, false},
                                   {12, kSnarkjsConvention, engine::SrsPlacement::streamed, false},
                                   {12, kSnarkjsConvention, engine::SrsPlacement::streamed, true},
                                   {14, kBellmanConvention, engine::SrsPlacement::streamed, false},
                                   {14, kSnarkjsConvention, engine::SrsPlacement::resident, true},
                                   {16, kSnarkjsConvention, engine::SrsPlacement::resident, false},
                                   {16, kBellmanConvention, engine::SrsPlacement::streamed, true},
                                   {18, kSnarkjsConvention, engine::SrsPlacement::streamed, false}};
  for (const Case& c : cases) {
    if (c.lg > max_lg) continue;
    const Bn254Circuit circuit = bn254_circuit(c.lg, seed + uint64_t(c.lg));
    const bn254::ProvingKey pk = setup<bn254::Fr>(circuit.r1cs, seed, {}, c.conv);
    std::vector<bn254::Witness> ws;
    for (int k = 0; k < 2; ++k) ws.push_back(witness_from_assignment(circuit.r1cs, std::span<const bn254::Fr>(circuit.z)));
    const std::vector<bn254::Fr> publics(circuit.z.begin() + 1, circuit.z.begin() + 2);
    const std::vector<bn254::Proof> want = prove(pk, ws, seed + 9);
    const auto rs = randomizers_from_seed<bn254::Fr>(seed + 9, ws.size());
    gpu::ProverConfig cfg;
    cfg.srs = c.srs;
    if (c.tight)
      cfg.budget = engine::minimum_budget(engine::shape_of(QueryLayout::of(pk), engine::kBn254Points), c.srs);
    const auto t1 = std::chrono::steady_clock::now();
    gpu::ProverOf<bn254::Bn254> prover(pk, ws[0].densities, cfg);
    bool equal = true, valid = true;
    for (std::size_t i = 0; i < ws.size(); ++i) {
      auto part = prover.prepare(ws[i], rs[i], i);
      prover.stage(*part, 0, 0);
      prover.compute(*part);
      const bn254::Proof got = prover.finish(*part);
      if (!(got.a == want[i].a && got.b == want[i].b && got.c == want[i].c)) {
        std::printf("  proof %zu differs from the CPU's:%s%s%s\n", i, got.a == want[i].a ? "" : " A",
                    got.b == want[i].b ? "" : " B", got.c == want[i].c ? "" : " C");
        equal = false;
      }
      valid = valid && verify(pk.vk, publics, got);
    }
    std::vector<bn254::Fr> tampered = publics;
    tampered[0] += bn254::Fr::one();
    const bool rejected = !verify(pk.vk, tampered, want[0]);
    char what[160];
    std::snprintf(what, sizeof what, "BN254 prover: 2 proofs == CPU, verify, tamper rejected (%s, %s%s)",
                  c.conv.h_basis == HBasis::bellman ? "bellman" : "snarkjs", engine::to_string(prover.plan().srs),
                  c.tight ? ", min budget" : "");
    row(what, "2^" + std::to_string(c.lg), equal && valid && rejected, ms_since(t1));
  }
}

// Both curves' engines on one GPU, as the runtime runs them: a CudaBackend per curve sharing the
// card's ledger, jobs of both in flight together; the proofs equal the CPU prover's and verify,
// the ledger counts both keys' arenas (either backend reports the card's total) and is empty
// once both keys are evicted.
void two_curve_rows(uint64_t seed) {
  const int lg = 12;
  const Bn254Circuit bc = bn254_circuit(lg, seed);
  auto bn_key = std::make_shared<const bn254::ProvingKey>(setup<bn254::Fr>(bc.r1cs, seed, {}, kSnarkjsConvention));
  engine::JobSpecOf<bn254::Bn254> bn_spec;
  bn_spec.key = bn_key;
  for (int k = 0; k < 3; ++k)
    bn_spec.witnesses.push_back(
        std::make_shared<const bn254::Witness>(witness_from_assignment(bc.r1cs, std::span<const bn254::Fr>(bc.z))));
  bn_spec.seed = seed + 1;
  const std::vector<bn254::Fr> bn_publics(bc.z.begin() + 1, bc.z.begin() + 2);
  SyntheticOptions o;
  o.lg_constraints = lg;
  o.seed = seed;
  const R1cs r1cs = make_porep_like_r1cs(o);
  auto bls_key = std::make_shared<const ProvingKey>(setup(r1cs, seed));
  engine::JobSpec bls_spec;
  bls_spec.key = bls_key;
  std::vector<std::vector<Fr>> bls_publics;
  for (uint64_t k = 0; k < 3; ++k) {
    const std::vector<Fr> z = make_witness(r1cs, o, seed + 10 + k);
    bls_spec.witnesses.push_back(std::make_shared<const Witness>(witness_from_assignment(r1cs, z)));
    bls_publics.emplace_back(z.begin() + 1, z.begin() + std::ptrdiff_t(r1cs.num_inputs));
  }
  bls_spec.seed = seed + 2;
  const auto t0 = std::chrono::steady_clock::now();
  gpu::CudaBackendConfig cfg;
  cfg.ledger = std::make_shared<gpu::CardLedger>();
  gpu::CudaBackend bls_dev(cfg);
  cfg.name = "gpu-bn254";
  gpu::CudaBackendOf<bn254::Bn254> bn_dev(cfg);
  engine::EngineConfig ec;
  ec.fallback = engine::Fallback::fail_job;
  ec.max_retries = 0;
  engine::EngineConfigOf<bn254::Bn254> bec;
  bec.fallback = engine::Fallback::fail_job;
  bec.max_retries = 0;
  engine::Engine bls_engine({&bls_dev}, ec);
  engine::EngineOf<bn254::Bn254> bn_engine({&bn_dev}, bec);
  const auto h_bls = bls_engine.submit(bls_spec);
  const auto h_bn = bn_engine.submit(bn_spec);
  const auto r_bls = h_bls.wait();
  const auto r_bn = h_bn.wait();
  bool ok = r_bls.status == engine::JobStatus::ok && r_bn.status == engine::JobStatus::ok;
  if (!ok) std::printf("  BLS12-381: %s; BN254: %s\n", r_bls.error.c_str(), r_bn.error.c_str());
  if (ok) {
    std::vector<Witness> bw;
    for (const auto& w : bls_spec.witnesses) bw.push_back(*w);
    const std::vector<Proof> want_bls = prove(*bls_key, bw, bls_spec.seed);
    std::vector<bn254::Witness> nw;
    for (const auto& w : bn_spec.witnesses) nw.push_back(*w);
    const std::vector<bn254::Proof> want_bn = prove(*bn_key, nw, bn_spec.seed);
    for (std::size_t i = 0; i < 3; ++i) {
      const bool same_bls = r_bls.proofs[i].to_bytes() == want_bls[i].to_bytes();
      const bool same_bn = r_bn.proofs[i].a == want_bn[i].a && r_bn.proofs[i].b == want_bn[i].b && r_bn.proofs[i].c == want_bn[i].c;
      if (!same_bls || !same_bn) std::printf("  proof %zu differs from the CPU's:%s%s\n", i, same_bls ? "" : " BLS12-381", same_bn ? "" : " BN254");
      ok = ok && same_bls && same_bn && verify(bls_key->vk, bls_publics[i], r_bls.proofs[i]) &&
           verify(bn_key->vk, bn_publics, r_bn.proofs[i]);
    }
  }
  const uint64_t both = bls_dev.resident().empty() || bn_dev.resident().empty()
                            ? 0
                            : bls_dev.resident()[0].arena_bytes + bn_dev.resident()[0].arena_bytes;
  const bool one_ledger = both > 0 && cfg.ledger->used.load() == both && bls_dev.memory().used == both &&
                          bn_dev.memory().used == both;
  if (!one_ledger)
    std::printf("  ledger %llu bytes, arenas %llu, backends report %llu and %llu\n",
                static_cast<unsigned long long>(cfg.ledger->used.load()), static_cast<unsigned long long>(both),
                static_cast<unsigned long long>(bls_dev.memory().used), static_cast<unsigned long long>(bn_dev.memory().used));
  const bool freed = bls_dev.evict(bls_key.get()) && bn_dev.evict(bn_key.get()) && cfg.ledger->used.load() == 0;
  bls_engine.shutdown(engine::Shutdown::drain);
  bn_engine.shutdown(engine::Shutdown::drain);
  row("engines of both curves on one GPU: 2x3 proofs == CPU, verify", "2^12", ok, ms_since(t0));
  row("  one ledger counts both keys' arenas; evicting both empties it", "2^12", one_ledger && freed, 0);
}

int run(int argc, char** argv) {
  uint64_t seed = 0x6b65726e656c7321ULL;  // "kernels!"
  int max_ntt = 24, max_msm = 20, max_g2 = 18, max_prover = 18, device = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--seed") seed = std::strtoull(next(), nullptr, 0);
    else if (a == "--max-ntt-lg") max_ntt = std::atoi(next());
    else if (a == "--max-msm-lg") max_msm = std::atoi(next());
    else if (a == "--max-g2-lg") max_g2 = std::atoi(next());
    else if (a == "--max-prover-lg") max_prover = std::atoi(next());
    else if (a == "--device") device = std::atoi(next());
    else throw std::invalid_argument("unknown argument " + a);
  }
  PP_CUDA_CHECK(cudaSetDevice(device));
  cudaDeviceProp prop{};
  PP_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  std::printf("proofpipe_gpu_kernels_test: %s, seed 0x%016" PRIx64 "\n", prop.name, seed);
  std::printf("%-58s %-12s %-4s %12s\n", "check (GPU == CPU library)", "size", "", "time");
  planner_rows();
  prover_rows(max_prover, seed + 300);
  bn254_prover_rows(max_prover, seed + 700);
  two_curve_rows(seed + 800);
  ntt_rows(max_ntt, seed);
  ntt_rows_of<bn254::Fr>("BN254 ", max_ntt, seed + 500, bn254::Domain::kSnarkjsGenerator);
  msm_rows<G1Curve>("G1", max_msm, seed + 100);
  msm_rows<G2Curve>("G2", max_g2, seed + 200);
  msm_rows<bn254::G1Curve>("BN254 G1", max_msm, seed + 400);
  msm_rows<bn254::G2Curve>("BN254 G2", max_g2, seed + 600);
  std::printf("%d of %d rows passed\n", g_rows - g_failures, g_rows);
  return g_failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "proofpipe_gpu_kernels_test: %s\n", e.what());
    return 2;
  }
}
