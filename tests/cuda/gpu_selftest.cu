// SPDX-License-Identifier: Apache-2.0 OR MIT
// proofpipe_gpu_selftest: runs the shared Fp/Fr/Fp2/G1/G2 code on the GPU and checks it bit for bit against the CPU.
//
// Usage: proofpipe_gpu_selftest [--log2 N] [--seed S] [--threads T] [--device D] [--cpu-only]
//   --log2 N    2^N inputs per operation (default 20; inverse and Fp2 sqrt use min(2^N, 2^14)).
//   --seed S    seed of the input generator (default 0x70726f6f66706970, always printed).
//   --threads T CPU threads for input generation and the reference (default: all cores).
//   --device D  CUDA device ordinal (default 0).
//   --cpu-only  run the "device" side on the CPU as well: a harness check for machines without
//               a GPU (results agree trivially; the generators' sanity checks still run).
// Exit status: 0 all operations match, 1 a mismatch, 2 usage or CUDA error.
//
// Both sides run the very same PP_HD source; on the device the field operations go through the
// 32-bit PTX carry chains, on the host through the portable 64-bit code. Every field result is
// in Montgomery form and fully reduced, so GPU and CPU outputs must agree as raw bytes. Points
// are compared as raw bytes (the same formulas run, so the representations must be identical)
// and, independently, by projective equality plus on-curve and fully-reduced checks.

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "cuda_status.cuh"
#include "proofpipe/ec/bls12_381.hpp"
#include "proofpipe/ff/bls12_381.hpp"

namespace {

using namespace pp;

constexpr uint64_t kDefaultSeed = 0x70726f6f66706970ULL;  // "proofpip"
constexpr int kBlock = 128;                                // threads per block of every kernel
constexpr int kPoolRandom = 256;                           // random multiples of each generator
constexpr size_t kSlowOpsMax = size_t(1) << 14;            // inverse / sqrt subset size

// ------------------------------------------------------------------------------------------
// Host utilities
// ------------------------------------------------------------------------------------------

// splitmix64: a simple, fully specified 64-bit generator so every run with a seed is reproducible.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  uint32_t below(uint32_t n) { return uint32_t(next() % n); }
};

unsigned g_threads = 1;

// Splits [0, n) into contiguous chunks, one std::thread each; fn(chunk, begin, end).
// Returns the number of chunks used (<= g_threads).
template <class Fn>
size_t parallel_chunks(size_t n, size_t grain, const Fn& fn) {
  const size_t want = std::max<size_t>(1, n / std::max<size_t>(1, grain));
  const size_t T = std::min<size_t>(g_threads, want);
  const size_t chunk = (n + T - 1) / T;
  if (T <= 1) {
    fn(size_t(0), size_t(0), n);
    return 1;
  }
  std::vector<std::thread> ts;
  ts.reserve(T);
  for (size_t t = 0; t < T; ++t) {
    const size_t b = std::min(n, t * chunk), e = std::min(n, b + chunk);
    ts.emplace_back([&fn, t, b, e] { fn(t, b, e); });
  }
  for (auto& th : ts) th.join();
  return T;
}

template <class Fn>
void parallel_for(size_t n, const Fn& fn, size_t grain = 64) {
  parallel_chunks(n, grain, [&fn](size_t, size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) fn(i);
  });
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

template <class P>
Limbs<P::N> limbs_of(const Field<P>& a) {
  Limbs<P::N> x{};
  for (int i = 0; i < P::N; ++i) x.v[i] = a.l[i];
  return x;
}

template <class P>
Field<P> field_of(const Limbs<P::N>& x) {
  Field<P> a{};
  for (int i = 0; i < P::N; ++i) a.l[i] = x.v[i];
  return a;
}

// A uniformly random value < modulus (rejection sampling on the top limb masked to BITS).
// Used directly as a Montgomery representation: every value < p is a valid, fully reduced one.
template <class P>
Field<P> random_field(Rng& rng) {
  constexpr int N = P::N;
  constexpr int top = Field<P>::BITS - 64 * (N - 1);
  constexpr uint64_t mask = top >= 64 ? ~uint64_t(0) : (uint64_t(1) << top) - 1;
  for (;;) {
    Limbs<N> x{};
    for (int i = 0; i < N; ++i) x.v[i] = rng.next();
    x.v[N - 1] &= mask;
    if (limbs::less(x, FieldConsts<P>::modulus)) return field_of<P>(x);
  }
}

template <class F>
struct ParamsOf;
template <class P>
struct ParamsOf<Field<P>> {
  using type = P;
};

template <class F>
F random_value(Rng& rng) {
  if constexpr (std::is_same_v<F, Fp2>) {
    return Fp2{random_field<FpParams>(rng), random_field<FpParams>(rng)};
  } else {
    return random_field<typename ParamsOf<F>::type>(rng);
  }
}

template <class F>
F random_nonzero(Rng& rng) {
  for (;;) {
    const F x = random_value<F>(rng);
    if (!x.is_zero()) return x;
  }
}

// Raw (non-Montgomery-converted) field element with the given low limb, others zero.
template <class F>
F raw_small(uint64_t v) {
  F a{};
  a.l[0] = v;
  return a;
}

// Raw modulus - 1: the largest fully reduced representation.
template <class F>
F raw_max() {
  return field_of<typename ParamsOf<F>::type>(limbs::sub_small(F::Consts::modulus, 1));
}

// Edge values in Montgomery form: 0, 1, p-1 (= -1), and raw representations 1 (= R^-1),
// p-1 (raw) and 2.
template <class F>
std::vector<F> edge_values() {
  return {F::zero(), F::one(), -F::one(), raw_small<F>(1), raw_max<F>(), F::from_u64(2)};
}

template <class P>
bool reduced(const Field<P>& a) {
  return limbs::less(limbs_of(a), FieldConsts<P>::modulus);
}
bool reduced(const Fp2& a) { return reduced(a.c0) && reduced(a.c1); }
template <class C>
bool reduced(const Jacobian<C>& p) {
  return reduced(p.X) && reduced(p.Y) && reduced(p.Z);
}
template <class C>
bool reduced(const XYZZ<C>& p) {
  return reduced(p.X) && reduced(p.Y) && reduced(p.ZZ) && reduced(p.ZZZ);
}

template <class C>
bool xyzz_on_curve(const XYZZ<C>& p) {
  if (p.is_infinity()) return true;
  if (p.ZZ.sqr() * p.ZZ != p.ZZZ.sqr()) return false;  // ZZ^3 == ZZZ^2
  return p.to_jacobian().is_on_curve();
}

template <class C>
XYZZ<C> xyzz_of(const Jacobian<C>& p) {
  if (p.is_infinity()) return XYZZ<C>::infinity();
  const auto z2 = p.Z.sqr();
  return XYZZ<C>{p.X, p.Y, z2, z2 * p.Z};
}

// ------------------------------------------------------------------------------------------
// Operations: one PP_HD functor each, run by the kernel on device pointers and by the CPU
// reference on host pointers.
// ------------------------------------------------------------------------------------------

struct Pair {
  uint32_t a, b;
};

struct SqrtOut {
  Fp2 root;     // zero when no root
  uint64_t ok;  // 1 when a root was found
};
static_assert(sizeof(SqrtOut) == 104, "no padding: compared as raw bytes");

struct AddFn {
  template <class T>
  PP_HD T operator()(const T& x, const T& y) const { return x + y; }
};
struct SubFn {
  template <class T>
  PP_HD T operator()(const T& x, const T& y) const { return x - y; }
};
struct MulFn {
  template <class T>
  PP_HD T operator()(const T& x, const T& y) const { return x * y; }
};
struct NegFn {
  template <class T>
  PP_HD T operator()(const T& x) const { return -x; }
};
struct SqrFn {
  template <class T>
  PP_HD T operator()(const T& x) const { return x.sqr(); }
};
struct InvFn {
  template <class T>
  PP_HD T operator()(const T& x) const { return x.inverse(); }
};
struct DblFn {
  template <class T>
  PP_HD T operator()(const T& x) const { return x.dbl(); }
};
struct MixedAddFn {
  template <class P, class Q>
  PP_HD P operator()(const P& p, const Q& q) const { return p.add_mixed(q); }
};
// Canonical limbs -> Montgomery; all-ones output when the input is >= p.
struct FromCanonicalFn {
  PP_HD Fp operator()(const Fp& x) const {
    Fp r;
    if (!Fp::from_canonical(r, x.l)) {
      for (int i = 0; i < Fp::N; ++i) r.l[i] = ~uint64_t(0);
    }
    return r;
  }
};
// Montgomery -> canonical limbs (stored in an Fp as plain limbs).
struct ToCanonicalFn {
  PP_HD Fp operator()(const Fp& x) const {
    Fp r;
    x.to_canonical(r.l);
    return r;
  }
};
struct SqrtFn {
  PP_HD SqrtOut operator()(const Fp2& x) const {
    SqrtOut o{};
    Fp2 r;
    if (pp::sqrt(r, x)) {
      o.root = r;
      o.ok = 1;
    }
    return o;
  }
};

template <class T, class Fn>
struct BinaryOp {
  const T* a;
  const T* b;
  T* out;
  PP_HD void operator()(size_t i) const { out[i] = Fn{}(a[i], b[i]); }
};

template <class In, class Out, class Fn>
struct UnaryOp {
  const In* a;
  Out* out;
  PP_HD void operator()(size_t i) const { out[i] = Fn{}(a[i]); }
};

// Points taken from small pools by index pairs.
template <class A, class B, class Out, class Fn>
struct PairOp {
  const A* pa;
  const B* pb;
  const Pair* idx;
  Out* out;
  PP_HD void operator()(size_t i) const {
    const Pair p = idx[i];
    out[i] = Fn{}(pa[p.a], pb[p.b]);
  }
};

template <class A, class Out, class Fn>
struct PoolUnaryOp {
  const A* pa;
  const Pair* idx;
  Out* out;
  PP_HD void operator()(size_t i) const { out[i] = Fn{}(pa[idx[i].a]); }
};

template <class Op>
__global__ void __launch_bounds__(kBlock) apply_kernel(Op op, size_t n) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) op(i);
}

// ------------------------------------------------------------------------------------------
// Point pools
// ------------------------------------------------------------------------------------------
// Jacobian / XYZZ pool layout (K = kPoolRandom):
//   [0, K)     P_k = s_k·G, straight from scalar_mul (Z != 1)
//   [K, 2K)    the same points rescaled by a random lambda_k (other Z, same point)
//   [2K, 3K)   -P_k
//   [3K, 4K)   from_affine(A_k) (Z = 1)
//   4K         the canonical infinity
//   4K + 1     an infinity with garbage X, Y (Z = 0)
// Affine pool: [0, K) A_k = to_affine(P_k), [K, 2K) -A_k, 2K infinity (0, 0).
constexpr uint32_t K = kPoolRandom;
constexpr uint32_t kJacInf = 4 * K, kJacInf2 = 4 * K + 1, kJacPool = 4 * K + 2;
constexpr uint32_t kAffInf = 2 * K, kAffPool = 2 * K + 1;

template <class C>
struct Pool {
  std::vector<Jacobian<C>> jac;
  std::vector<Affine<C>> aff;
  std::vector<XYZZ<C>> xyzz;
};

template <class C>
Pool<C> make_pool(const Affine<C>& gen, Rng& rng, const char* name) {
  using F = typename C::Field;
  std::vector<Fr> s(K);
  std::vector<F> lam(K);
  for (uint32_t k = 0; k < K; ++k) {
    s[k] = random_nonzero<Fr>(rng);
    lam[k] = random_nonzero<F>(rng);
  }
  std::vector<Jacobian<C>> P(K);
  std::vector<Affine<C>> A(K);
  parallel_for(
      K,
      [&](size_t k) {
        P[k] = scalar_mul(gen, s[k]);
        A[k] = P[k].to_affine();
      },
      1);

  Pool<C> pool;
  pool.jac.resize(kJacPool);
  pool.aff.resize(kAffPool);
  pool.xyzz.resize(kJacPool);
  for (uint32_t k = 0; k < K; ++k) {
    const F l2 = lam[k].sqr();
    pool.jac[k] = P[k];
    pool.jac[K + k] = Jacobian<C>{P[k].X * l2, P[k].Y * l2 * lam[k], P[k].Z * lam[k]};
    pool.jac[2 * K + k] = -P[k];
    pool.jac[3 * K + k] = Jacobian<C>::from_affine(A[k]);
    pool.aff[k] = A[k];
    pool.aff[K + k] = -A[k];
  }
  pool.jac[kJacInf] = Jacobian<C>::infinity();
  pool.jac[kJacInf2] = Jacobian<C>{P[0].X, P[0].Y, F::zero()};
  pool.aff[kAffInf] = Affine<C>::infinity();
  for (uint32_t i = 0; i < kJacPool; ++i) pool.xyzz[i] = xyzz_of(pool.jac[i]);
  pool.xyzz[kJacInf2] = XYZZ<C>{P[0].X, P[0].Y, F::zero(), F::zero()};

  // Sanity: the generators, scalar_mul and the pool layout must be what the cases assume.
  size_t bad = 0;
  for (uint32_t k = 0; k < K; ++k) {
    const Jacobian<C>& p = P[k];
    bad += !p.is_on_curve() || p.is_infinity() || !A[k].is_on_curve();
    bad += !(pool.jac[K + k] == p) || pool.jac[K + k].Z == p.Z;
    bad += !(pool.jac[3 * K + k] == p) || !(pool.jac[2 * K + k] == Jacobian<C>::from_affine(-A[k]));
    bad += !(pool.xyzz[k] == xyzz_of(pool.jac[3 * K + k])) || !xyzz_on_curve(pool.xyzz[K + k]);
    bad += !reduced(pool.jac[K + k]) || !reduced(pool.xyzz[K + k]);
  }
  bad += !pool.jac[kJacInf2].is_infinity() || !pool.xyzz[kJacInf2].is_infinity();
  if (bad) {
    std::fprintf(stderr, "%s point pool failed its sanity checks (%zu)\n", name, bad);
    std::exit(1);
  }
  return pool;
}

// Index pairs for same-type binary ops (Jacobian + Jacobian, XYZZ + XYZZ); i % 16 picks a case.
std::vector<Pair> make_same_pairs(size_t n, Rng& rng) {
  std::vector<Pair> v(n);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t k = rng.below(K), any = rng.below(kJacPool), r = rng.below(4 * K);
    switch (i % 16) {
      case 0: v[i] = {kJacInf, any}; break;                          // O + Q
      case 1: v[i] = {any, (i & 16) ? kJacInf : kJacInf2}; break;    // P + O
      case 2: v[i] = {kJacInf2, kJacInf}; break;                     // O + O
      case 3: v[i] = {k, k}; break;                                  // P + P, identical inputs
      case 4: v[i] = {k, K + k}; break;                              // P + P, other Z
      case 5: v[i] = {3 * K + k, k}; break;                          // P + P, Z = 1 vs Z
      case 6: v[i] = {k, 2 * K + k}; break;                          // P + (-P)
      case 7: v[i] = {K + k, 2 * K + k}; break;                      // P + (-P), other Z
      default: v[i] = {r, rng.below(4 * K)}; break;                  // random pairs
    }
  }
  return v;
}

// Index pairs for mixed additions (Jacobian / XYZZ + affine).
std::vector<Pair> make_mixed_pairs(size_t n, Rng& rng) {
  std::vector<Pair> v(n);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t k = rng.below(K);
    switch (i % 16) {
      case 0: v[i] = {(i & 16) ? kJacInf : kJacInf2, rng.below(2 * K)}; break;  // O + Q
      case 1: v[i] = {rng.below(kJacPool), kAffInf}; break;                      // P + O
      case 2: v[i] = {kJacInf, kAffInf}; break;                                  // O + O
      case 3: v[i] = {k, k}; break;                  // P + P (doubling through add)
      case 4: v[i] = {K + k, k}; break;              // P + P, other Z
      case 5: v[i] = {3 * K + k, k}; break;          // P + P, Z = 1
      case 6: v[i] = {k, K + k}; break;              // P + (-P)
      case 7: v[i] = {3 * K + k, K + k}; break;      // P + (-P), Z = 1
      default: v[i] = {rng.below(4 * K), rng.below(2 * K)}; break;
    }
  }
  return v;
}

// Indices for doubling (only .a is used).
std::vector<Pair> make_unary(size_t n, Rng& rng) {
  std::vector<Pair> v(n);
  for (size_t i = 0; i < n; ++i) {
    switch (i % 16) {
      case 0: v[i] = {kJacInf, 0}; break;
      case 1: v[i] = {kJacInf2, 0}; break;
      default: v[i] = {rng.below(4 * K), 0}; break;
    }
  }
  return v;
}

// ------------------------------------------------------------------------------------------
// Buffers and the harness
// ------------------------------------------------------------------------------------------

// Every input and the output, once on the device (d) and once on the host (h; h.out is the CPU
// reference). Each device buffer is allocated once and reused by all operations.
struct Buffers {
  Fp* fa;        // 2n random Fp (edge pairs first); also read as n Fp2
  Fp* fb;        // 2n random Fp
  Fr* ra;        // n random Fr
  Fr* rb;        // n random Fr
  Fp* canon;     // n canonical integers for from_canonical (some >= p)
  Fp2* sq;       // n_sqrt Fp2 inputs of sqrt (even indices are squares)
  Pair* same;    // n index pairs
  Pair* mixed;   // n index pairs
  Pair* unary;   // n indices
  G1Jacobian* g1j;
  G1Affine* g1a;
  G1XYZZ* g1x;
  G2Jacobian* g2j;
  G2Affine* g2a;
  G2XYZZ* g2x;
  void* out;     // n * kMaxOut bytes
};
constexpr size_t kMaxOut = sizeof(G2XYZZ);

struct Row {
  std::string op;
  size_t count = 0;
  size_t raw_bad = 0;
  size_t value_bad = 0;
  double gpu_ms = 0;
  double cpu_ms = 0;
  bool vacuous = false;  // the reference output was all zero bytes
};

class Harness {
 public:
  Harness(bool cpu_only, int sms) : cpu_only_(cpu_only), sms_(sms) {
    if (!cpu_only_) {
      PP_CUDA_CHECK(cudaEventCreate(&ev0_));
      PP_CUDA_CHECK(cudaEventCreate(&ev1_));
    }
  }
  ~Harness() {
    for (void* p : allocs_) {
      if (cpu_only_) std::free(p);
      else PP_CUDA_WARN(cudaFree(p));
    }
    if (!cpu_only_) {
      PP_CUDA_WARN(cudaEventDestroy(ev0_));
      PP_CUDA_WARN(cudaEventDestroy(ev1_));
    }
  }
  Harness(const Harness&) = delete;
  Harness& operator=(const Harness&) = delete;

  template <class T>
  T* alloc(size_t count) {
    void* p = nullptr;
    const size_t bytes = std::max<size_t>(1, count * sizeof(T));
    if (cpu_only_) {
      p = std::malloc(bytes);
      if (!p) throw std::bad_alloc();
    } else {
      PP_CUDA_CHECK(cudaMalloc(&p, bytes));
    }
    allocs_.push_back(p);
    return static_cast<T*>(p);
  }
  template <class T>
  T* upload(const std::vector<T>& v) {
    T* d = alloc<T>(v.size());
    if (cpu_only_) std::memcpy(d, v.data(), v.size() * sizeof(T));
    else PP_CUDA_CHECK(cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
  }
  void download(void* h, const void* d, size_t bytes) {
    if (cpu_only_) std::memcpy(h, d, bytes);
    else PP_CUDA_CHECK(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost));
  }

  // Warm-up launch on a prefix (loads the kernel, lazy module loading), poison the output,
  // then the timed launch over all n. Returns milliseconds of the timed launch.
  template <class Op>
  double launch(const Op& op, size_t n, void* out, size_t out_bytes) {
    if (cpu_only_) {
      std::memset(out, 0xA5, out_bytes);
      const auto t0 = std::chrono::steady_clock::now();
      parallel_for(n, op);
      return ms_since(t0);
    }
    apply_kernel<Op><<<1, kBlock>>>(op, std::min<size_t>(n, kBlock));
    PP_CUDA_CHECK_LAUNCH();
    PP_CUDA_CHECK(cudaDeviceSynchronize());
    PP_CUDA_CHECK(cudaMemset(out, 0xA5, out_bytes));
    const size_t blocks = std::min<size_t>((n + kBlock - 1) / kBlock, size_t(sms_) * 64);
    PP_CUDA_CHECK(cudaEventRecord(ev0_));
    apply_kernel<Op><<<unsigned(blocks), kBlock>>>(op, n);
    PP_CUDA_CHECK_LAUNCH();
    PP_CUDA_CHECK(cudaEventRecord(ev1_));
    PP_CUDA_CHECK(cudaEventSynchronize(ev1_));
    float ms = 0;
    PP_CUDA_CHECK(cudaEventElapsedTime(&ms, ev0_, ev1_));
    return ms;
  }

  // Runs one operation: make(b) builds the functor from a Buffers (device d, then host h).
  template <class Out, class Make, class Check>
  void run(const char* name, size_t n, const Buffers& d, const Buffers& h, const Make& make,
           const Check& value_ok) {
    Row row;
    row.op = name;
    row.count = n;
    const size_t bytes = n * sizeof(Out);
    row.gpu_ms = launch(make(d), n, d.out, bytes);
    Out* gpu = reinterpret_cast<Out*>(gpu_.data());
    Out* ref = static_cast<Out*>(h.out);
    download(gpu, d.out, bytes);

    const auto t0 = std::chrono::steady_clock::now();
    parallel_for(n, make(h));
    row.cpu_ms = ms_since(t0);

    std::vector<size_t> raw(g_threads, 0), val(g_threads, 0), nz(g_threads, 0);
    std::vector<size_t> first(g_threads, SIZE_MAX);
    parallel_chunks(n, 1024, [&](size_t t, size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) {
        const bool raw_same = std::memcmp(&gpu[i], &ref[i], sizeof(Out)) == 0;
        const bool ok = value_ok(i, gpu[i], ref[i]);
        raw[t] += !raw_same;
        val[t] += !ok;
        if ((!raw_same || !ok) && first[t] == SIZE_MAX) first[t] = i;
        if (!nz[t]) {
          const auto* p = reinterpret_cast<const unsigned char*>(&ref[i]);
          for (size_t k = 0; k < sizeof(Out); ++k) nz[t] |= p[k];
        }
      }
    });
    size_t any_nz = 0;
    for (size_t t = 0; t < g_threads; ++t) {
      row.raw_bad += raw[t];
      row.value_bad += val[t];
      any_nz |= nz[t];
    }
    row.vacuous = any_nz == 0;
    const size_t f = *std::min_element(first.begin(), first.end());
    if (f != SIZE_MAX) dump_mismatch(name, f, &gpu[f], &ref[f], sizeof(Out));
    std::printf("  %-24s n=%-8zu raw mismatches %-8zu value mismatches %-8zu GPU %9.3f ms  CPU %9.1f ms\n",
                name, n, row.raw_bad, row.value_bad, row.gpu_ms, row.cpu_ms);
    std::fflush(stdout);
    rows_.push_back(row);
  }

  void reserve_output(size_t bytes) { gpu_.assign((bytes + 7) / 8, 0); }
  const std::vector<Row>& rows() const { return rows_; }

 private:
  static void dump_mismatch(const char* name, size_t i, const void* g, const void* r, size_t bytes) {
    const auto* gl = static_cast<const uint64_t*>(g);
    const auto* rl = static_cast<const uint64_t*>(r);
    const size_t limbs = std::min<size_t>(bytes / 8, 24);
    std::printf("  first mismatch of %s at index %zu (first %zu of %zu limbs, little-endian):\n", name, i,
                limbs, bytes / 8);
    for (int side = 0; side < 2; ++side) {
      const uint64_t* l = side ? rl : gl;
      std::printf("    %s:", side ? "cpu" : "gpu");
      for (size_t k = 0; k < limbs; ++k) std::printf(" %016" PRIx64, l[k]);
      std::printf("\n");
    }
  }

  bool cpu_only_;
  int sms_;
  cudaEvent_t ev0_{}, ev1_{};
  std::vector<void*> allocs_;
  std::vector<uint64_t> gpu_;  // the downloaded device output
  std::vector<Row> rows_;
};

template <class T>
bool field_ok(const T& g, const T& r) {
  return reduced(g) && g == r;
}
template <class C>
bool point_ok(const Jacobian<C>& g, const Jacobian<C>& r) {
  return reduced(g) && g == r && g.is_on_curve();
}
template <class C>
bool point_ok(const XYZZ<C>& g, const XYZZ<C>& r) {
  return reduced(g) && g == r && xyzz_on_curve(g);
}

void usage() {
  std::fprintf(stderr,
               "usage: proofpipe_gpu_selftest [--log2 N (10..24, default 20)] [--seed S] [--threads T]\n"
               "                              [--device D] [--cpu-only]\n");
}

int run_main(int argc, char** argv) {
  int log2n = 20;
  uint64_t seed = kDefaultSeed;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  int device = 0;
  bool cpu_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) {
        usage();
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--log2") log2n = std::atoi(value());
    else if (a == "--seed") seed = std::strtoull(value(), nullptr, 0);
    else if (a == "--threads") threads = unsigned(std::max(1, std::atoi(value())));
    else if (a == "--device") device = std::atoi(value());
    else if (a == "--cpu-only") cpu_only = true;
    else if (a == "--help" || a == "-h") {
      usage();
      return 0;
    } else {
      usage();
      return 2;
    }
  }
  if (log2n < 10 || log2n > 24) {
    usage();
    return 2;
  }
  g_threads = threads;
  const size_t n = size_t(1) << log2n;
  const size_t n_slow = std::min(n, kSlowOpsMax);
  const auto t_start = std::chrono::steady_clock::now();

  std::printf("proofpipe_gpu_selftest: n = 2^%d = %zu, inverse/sqrt n = %zu, seed = 0x%016" PRIx64
              ", CPU threads = %u\n",
              log2n, n, n_slow, seed, g_threads);
  int sms = 1;
  if (cpu_only) {
    std::printf("device: none (--cpu-only: the device side runs on the CPU)\n");
  } else {
    int count = 0;
    PP_CUDA_CHECK(cudaGetDeviceCount(&count));
    if (device < 0 || device >= count) {
      std::fprintf(stderr, "device %d not present (%d CUDA devices)\n", device, count);
      return 2;
    }
    PP_CUDA_CHECK(cudaSetDevice(device));
    cudaDeviceProp prop{};
    PP_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    sms = prop.multiProcessorCount;
    std::printf("device %d: %s, sm_%d%d, %d SMs, %.1f GiB\n", device, prop.name, prop.major, prop.minor,
                sms, double(prop.totalGlobalMem) / double(1ull << 30));
  }
  std::fflush(stdout);

  // ---------------- inputs ----------------
  auto t0 = std::chrono::steady_clock::now();
  Rng rng{seed};
  std::vector<Fp> fa(2 * n), fb(2 * n), canon(n);
  std::vector<Fr> ra(n), rb(n);
  for (size_t i = 0; i < 2 * n; ++i) {
    fa[i] = random_field<FpParams>(rng);
    fb[i] = random_field<FpParams>(rng);
  }
  for (size_t i = 0; i < n; ++i) {
    ra[i] = random_field<FrParams>(rng);
    rb[i] = random_field<FrParams>(rng);
  }
  // Edge pairs (every combination of 0, 1, p-1, raw 1, raw p-1, 2) at the front; the first
  // Fp2 elements (fa[2k], fa[2k+1]) thereby get edge coordinates too.
  {
    const auto ep = edge_values<Fp>();
    const auto er = edge_values<Fr>();
    for (size_t i = 0; i < ep.size() * ep.size(); ++i) {
      fa[i] = ep[i / ep.size()];
      fb[i] = ep[i % ep.size()];
    }
    for (size_t i = 0; i < er.size() * er.size(); ++i) {
      ra[i] = er[i / er.size()];
      rb[i] = er[i % er.size()];
    }
    // Fp2 edges: 0, 1, u, -1, -u, -1-u, (raw 1, raw p-1), as Fp2 pairs from Fp2 index 64.
    const Fp z = Fp::zero(), o = Fp::one(), m = -Fp::one();
    const Fp2 e2[] = {{z, z}, {o, z}, {z, o}, {m, z}, {z, m}, {m, m}, {raw_small<Fp>(1), raw_max<Fp>()}};
    constexpr size_t E2 = sizeof(e2) / sizeof(e2[0]);
    Fp2* a2 = reinterpret_cast<Fp2*>(fa.data());
    Fp2* b2 = reinterpret_cast<Fp2*>(fb.data());
    for (size_t i = 0; i < E2 * E2; ++i) {
      a2[64 + i] = e2[i / E2];
      b2[64 + i] = e2[i % E2];
    }
  }
  // Canonical integers for from_canonical: the random values, with edges (valid and invalid).
  for (size_t i = 0; i < n; ++i) canon[i] = fa[i];
  {
    const Limbs<6> p = FpParams::modulus;
    Limbs<6> ones{};
    for (auto& v : ones.v) v = ~uint64_t(0);
    Limbs<6> two381{};
    two381.v[5] = uint64_t(1) << (381 - 320);
    const Limbs<6> e[] = {Limbs<6>{}, limbs::add_small(Limbs<6>{}, 1), limbs::sub_small(p, 1), p,
                          limbs::add_small(p, 1), ones, two381, FieldConsts<FpParams>::r1};
    for (size_t i = 0; i < sizeof(e) / sizeof(e[0]); ++i) canon[i] = field_of<FpParams>(e[i]);
  }
  // sqrt inputs: even indices are squares x^2, odd indices random (about half squares), with
  // a few edges at odd indices.
  std::vector<Fp2> sq(n_slow);
  for (size_t i = 0; i < n_slow; ++i) {
    const Fp2 x = random_value<Fp2>(rng);
    sq[i] = (i % 2 == 0) ? x.sqr() : x;
  }
  {
    const Fp z = Fp::zero(), o = Fp::one(), m = -Fp::one();
    const Fp2 e[] = {{z, z}, {o, z}, {m, z}, {z, o}, {z, m}, {Fp::from_u64(2), z}, {Fp::from_u64(3), z},
                     {o, o}};
    for (size_t i = 0; i < sizeof(e) / sizeof(e[0]); ++i) sq[2 * i + 1] = e[i];
  }
  // Not all zero (guards against a broken generator making the comparison vacuous).
  {
    size_t nonzero = 0;
    for (size_t i = 0; i < n; ++i) nonzero += !fa[i].is_zero() && !fb[i].is_zero() && !ra[i].is_zero();
    if (nonzero < n / 2) {
      std::fprintf(stderr, "input generator produced mostly zeros (%zu of %zu non-zero)\n", nonzero, n);
      return 2;
    }
  }
  const Pool<G1Curve> g1 = make_pool(g1_generator(), rng, "G1");
  const Pool<G2Curve> g2 = make_pool(g2_generator(), rng, "G2");
  const std::vector<Pair> same = make_same_pairs(n, rng);
  const std::vector<Pair> mixed = make_mixed_pairs(n, rng);
  const std::vector<Pair> unary = make_unary(n, rng);
  std::printf("inputs generated in %.1f ms (%u random points per group, pools of %u/%u)\n", ms_since(t0),
              K, kJacPool, kAffPool);

  // ---------------- buffers ----------------
  Harness H(cpu_only, sms);
  std::vector<uint64_t> ref_out(n * kMaxOut / 8);
  H.reserve_output(n * kMaxOut);
  Buffers h{fa.data(), fb.data(), ra.data(), rb.data(), canon.data(), sq.data(),
            const_cast<Pair*>(same.data()), const_cast<Pair*>(mixed.data()), const_cast<Pair*>(unary.data()),
            const_cast<G1Jacobian*>(g1.jac.data()), const_cast<G1Affine*>(g1.aff.data()),
            const_cast<G1XYZZ*>(g1.xyzz.data()), const_cast<G2Jacobian*>(g2.jac.data()),
            const_cast<G2Affine*>(g2.aff.data()), const_cast<G2XYZZ*>(g2.xyzz.data()), ref_out.data()};
  Buffers d{H.upload(fa), H.upload(fb), H.upload(ra), H.upload(rb), H.upload(canon), H.upload(sq),
            H.upload(same), H.upload(mixed), H.upload(unary), H.upload(g1.jac), H.upload(g1.aff),
            H.upload(g1.xyzz), H.upload(g2.jac), H.upload(g2.aff), H.upload(g2.xyzz),
            H.alloc<unsigned char>(n * kMaxOut)};
  if (!cpu_only) PP_CUDA_CHECK(cudaDeviceSynchronize());

  // ---------------- operations ----------------
  // value_ok(index, gpu, cpu): checks beyond raw equality.
  auto f_ok = [](size_t, const auto& g, const auto& r) { return field_ok(g, r); };
  auto raw_ok = [](size_t, const auto& g, const auto& r) { return std::memcmp(&g, &r, sizeof(g)) == 0; };
  auto canon_ok = [](size_t, const Fp& g, const Fp& r) {  // canonical limbs < p
    return std::memcmp(&g, &r, sizeof(g)) == 0 && reduced(g);
  };
  auto p_ok = [](size_t, const auto& g, const auto& r) { return point_ok(g, r); };
  const Fp2* sq_in = sq.data();
  auto sqrt_ok = [sq_in](size_t i, const SqrtOut& g, const SqrtOut& r) {
    if (std::memcmp(&g, &r, sizeof(g)) != 0) return false;
    if (g.ok > 1 || (i % 2 == 0 && g.ok != 1)) return false;  // squares must have roots
    if (g.ok) return reduced(g.root) && g.root.sqr() == sq_in[i];
    return g.root.is_zero() && !sq_in[i].is_square();
  };

  std::printf("running:\n");
  // Fp
  H.run<Fp>("Fp add", n, d, h, [&](const Buffers& b) { return BinaryOp<Fp, AddFn>{b.fa, b.fb, (Fp*)b.out}; }, f_ok);
  H.run<Fp>("Fp sub", n, d, h, [&](const Buffers& b) { return BinaryOp<Fp, SubFn>{b.fa, b.fb, (Fp*)b.out}; }, f_ok);
  H.run<Fp>("Fp neg", n, d, h, [&](const Buffers& b) { return UnaryOp<Fp, Fp, NegFn>{b.fa, (Fp*)b.out}; }, f_ok);
  H.run<Fp>("Fp mul", n, d, h, [&](const Buffers& b) { return BinaryOp<Fp, MulFn>{b.fa, b.fb, (Fp*)b.out}; }, f_ok);
  H.run<Fp>("Fp sqr", n, d, h, [&](const Buffers& b) { return UnaryOp<Fp, Fp, SqrFn>{b.fa, (Fp*)b.out}; }, f_ok);
  H.run<Fp>("Fp from_canonical", n, d, h,
            [&](const Buffers& b) { return UnaryOp<Fp, Fp, FromCanonicalFn>{b.canon, (Fp*)b.out}; }, raw_ok);
  H.run<Fp>("Fp to_canonical", n, d, h,
            [&](const Buffers& b) { return UnaryOp<Fp, Fp, ToCanonicalFn>{b.fa, (Fp*)b.out}; }, canon_ok);
  H.run<Fp>("Fp inverse", n_slow, d, h, [&](const Buffers& b) { return UnaryOp<Fp, Fp, InvFn>{b.fa, (Fp*)b.out}; },
            f_ok);
  // Fr
  H.run<Fr>("Fr add", n, d, h, [&](const Buffers& b) { return BinaryOp<Fr, AddFn>{b.ra, b.rb, (Fr*)b.out}; }, f_ok);
  H.run<Fr>("Fr sub", n, d, h, [&](const Buffers& b) { return BinaryOp<Fr, SubFn>{b.ra, b.rb, (Fr*)b.out}; }, f_ok);
  H.run<Fr>("Fr mul", n, d, h, [&](const Buffers& b) { return BinaryOp<Fr, MulFn>{b.ra, b.rb, (Fr*)b.out}; }, f_ok);
  H.run<Fr>("Fr sqr", n, d, h, [&](const Buffers& b) { return UnaryOp<Fr, Fr, SqrFn>{b.ra, (Fr*)b.out}; }, f_ok);
  // Fp2 (the Fp arrays read as n Fp2 each)
  H.run<Fp2>("Fp2 mul", n, d, h,
             [&](const Buffers& b) { return BinaryOp<Fp2, MulFn>{(const Fp2*)b.fa, (const Fp2*)b.fb, (Fp2*)b.out}; },
             f_ok);
  H.run<Fp2>("Fp2 sqr", n, d, h,
             [&](const Buffers& b) { return UnaryOp<Fp2, Fp2, SqrFn>{(const Fp2*)b.fa, (Fp2*)b.out}; }, f_ok);
  H.run<SqrtOut>("Fp2 sqrt", n_slow, d, h,
                 [&](const Buffers& b) { return UnaryOp<Fp2, SqrtOut, SqrtFn>{b.sq, (SqrtOut*)b.out}; }, sqrt_ok);
  // G1
  H.run<G1Jacobian>("G1 Jacobian add", n, d, h, [&](const Buffers& b) {
    return PairOp<G1Jacobian, G1Jacobian, G1Jacobian, AddFn>{b.g1j, b.g1j, b.same, (G1Jacobian*)b.out};
  }, p_ok);
  H.run<G1Jacobian>("G1 Jacobian dbl", n, d, h, [&](const Buffers& b) {
    return PoolUnaryOp<G1Jacobian, G1Jacobian, DblFn>{b.g1j, b.unary, (G1Jacobian*)b.out};
  }, p_ok);
  H.run<G1Jacobian>("G1 Jacobian mixed add", n, d, h, [&](const Buffers& b) {
    return PairOp<G1Jacobian, G1Affine, G1Jacobian, MixedAddFn>{b.g1j, b.g1a, b.mixed, (G1Jacobian*)b.out};
  }, p_ok);
  H.run<G1XYZZ>("G1 XYZZ mixed add", n, d, h, [&](const Buffers& b) {
    return PairOp<G1XYZZ, G1Affine, G1XYZZ, MixedAddFn>{b.g1x, b.g1a, b.mixed, (G1XYZZ*)b.out};
  }, p_ok);
  H.run<G1XYZZ>("G1 XYZZ add", n, d, h, [&](const Buffers& b) {
    return PairOp<G1XYZZ, G1XYZZ, G1XYZZ, AddFn>{b.g1x, b.g1x, b.same, (G1XYZZ*)b.out};
  }, p_ok);
  H.run<G1XYZZ>("G1 XYZZ dbl", n, d, h, [&](const Buffers& b) {
    return PoolUnaryOp<G1XYZZ, G1XYZZ, DblFn>{b.g1x, b.unary, (G1XYZZ*)b.out};
  }, p_ok);
  // G2
  H.run<G2Jacobian>("G2 Jacobian add", n, d, h, [&](const Buffers& b) {
    return PairOp<G2Jacobian, G2Jacobian, G2Jacobian, AddFn>{b.g2j, b.g2j, b.same, (G2Jacobian*)b.out};
  }, p_ok);
  H.run<G2Jacobian>("G2 Jacobian dbl", n, d, h, [&](const Buffers& b) {
    return PoolUnaryOp<G2Jacobian, G2Jacobian, DblFn>{b.g2j, b.unary, (G2Jacobian*)b.out};
  }, p_ok);
  H.run<G2XYZZ>("G2 XYZZ mixed add", n, d, h, [&](const Buffers& b) {
    return PairOp<G2XYZZ, G2Affine, G2XYZZ, MixedAddFn>{b.g2x, b.g2a, b.mixed, (G2XYZZ*)b.out};
  }, p_ok);

  // ---------------- report ----------------
  bool pass = true;
  std::printf("\n| op | count | raw mismatches | value mismatches | GPU ms | CPU ms | result |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---|\n");
  for (const Row& r : H.rows()) {
    const bool ok = r.raw_bad == 0 && r.value_bad == 0 && !r.vacuous;
    pass = pass && ok;
    std::printf("| %s | %zu | %zu | %zu | %.3f | %.1f | %s |\n", r.op.c_str(), r.count, r.raw_bad, r.value_bad,
                r.gpu_ms, r.cpu_ms, ok ? "pass" : (r.vacuous ? "FAIL (all-zero reference)" : "FAIL"));
  }
  std::printf("\n%s: %zu operations, seed 0x%016" PRIx64 ", total %.1f s%s\n", pass ? "PASS" : "FAIL",
              H.rows().size(), seed, ms_since(t_start) / 1000.0,
              cpu_only ? " (--cpu-only: no GPU was used)" : "");
  return pass ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run_main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "proofpipe_gpu_selftest: %s\n", e.what());
    return 2;
  }
}
