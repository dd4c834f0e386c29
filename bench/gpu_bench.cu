// SPDX-License-Identifier: Apache-2.0 OR MIT
// proofpipe_gpu_bench: device micro-benchmark of Fp / Fr / Fp2 multiplication and G1 XYZZ mixed-addition throughput.
//
// Usage: proofpipe_gpu_bench [--runs N (>= 5, default 7)] [--warmup N (default 2)] [--device D]
//                            [--imad-peak OPS (default 16.7e12)] [--seed S] [--json FILE]
//
// Each kernel is launched `warmup` times untimed, then `runs` times, each launch timed alone with
// a cudaEvent pair; the table reports the median. The grid is sized from the occupancy API to
// kWaves full waves of resident blocks on every SM, and every thread does the same work.
// Before timing, a few threads' outputs are recomputed on the CPU from the same headers and
// must match bit for bit (a benchmark of wrong code is worthless).
//
// IMAD counting (the "IMAD/op" column is a model of the algorithm, not a SASS count):
// the device Montgomery multiplication (detail::mont_mul_ptx, CIOS over W = 2N 32-bit words)
// issues per row i = 0..W-1
//   a·b[i]: W mad.lo + W mad.hi              = 2W
//   q = t[0]·inv32: 1 mul.lo                 = 1   (0 when inv32 = 2^32-1: q = -t[0], a negation)
//   q·m:    W mad.lo + W mad.hi              = 2W
// i.e. 4W² (+ W) 32-bit multiply-class PTX instructions per field multiplication:
//   Fp (W = 12, inv32 = 0xfffcfffd): 4·144 + 12 = 588
//   Fr (W = 8,  inv32 = 0xffffffff): 4·64       = 256
// Fp2 mul is Karatsuba (3 Fp muls) = 1764. A G1 XYZZ mixed addition (madd-2008-s, generic
// path; the doubling branch is never taken with these inputs) is 10 Fp muls (6 mul + 4 sqr,
// sqr = mul in the header) = 5880. Checked against the PTX of this file (nvcc 13.0, sm_90):
// the Fp loop body has 4·588 mad/mul, Fr 4·256 (+1), Fp2 2·3·588. The additions, subtractions
// and selects (IADD3/SEL/LOP3 in SASS) are not counted. "implied IMAD/s" = ops/s · IMAD/op,
// compared with the H200's measured peak of 16.7e12 32-bit IMAD/s (132 SMs · 64 lanes ·
// ~1.98 GHz). If ptxas fuses lo/hi pairs into IMAD.WIDE the SASS count is lower than the
// model while each IMAD.WIDE occupies the pipe longer; the model stays the fair "useful 32x32
// half-products" measure.

#include <cuda_runtime.h>

#include <algorithm>
#include <cinttypes>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda_status.cuh"
#include "proofpipe/ec/bls12_381.hpp"
#include "proofpipe/ff/bls12_381.hpp"

namespace {

using namespace pp;

constexpr int kBlock = 256;     // threads per block
constexpr int kWaves = 4;       // full waves of resident blocks per launch
constexpr int kMinBlocks = 2;   // __launch_bounds__ min blocks/SM: >= 16 resident warps per SM
constexpr uint32_t kInputs = 1u << 16;  // random field elements (power of two)
constexpr uint32_t kPoints = 1u << 14;  // affine G1 points (power of two, 1.5 MiB: L2-resident)

// 4W² half-products plus W q = t[0]·inv32 multiplications unless inv32 = -1 (then a negation).
template <class F>
constexpr double imad_per_mul() {
  constexpr uint32_t inv32 = uint32_t(F::Consts::inv64);
  return 4.0 * F::W * F::W + (inv32 == 0xffffffffu ? 0 : F::W);
}
constexpr double kImadFp = imad_per_mul<Fp>();    // 588
constexpr double kImadFr = imad_per_mul<Fr>();    // 256
constexpr double kImadFp2 = 3 * kImadFp;          // 1764
constexpr double kImadG1Madd = 10 * kImadFp;      // 5880
static_assert(kImadFp == 588 && kImadFr == 256);

// ------------------------------------------------------------------------------------------
// Kernels
// ------------------------------------------------------------------------------------------

// kAcc independent dependent chains acc[k] <- acc[k]·m, `iters` times, all in registers; the
// folded result is written out so nothing is dead. Fp and Fr use 4 accumulators; Fp2 uses 2
// (each Fp2 mul already holds 3 independent Fp muls, and 4 Fp2 accumulators need > 128 regs).
template <class F>
inline constexpr int kAccOf = std::is_same_v<F, Fp2> ? 2 : 4;

template <class F>
__global__ void __launch_bounds__(kBlock, kMinBlocks) mul_chain_kernel(const F* __restrict__ in, int iters,
                                                                       F* __restrict__ out) {
  constexpr int kAcc = kAccOf<F>;
  const uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x;
  F acc[kAcc];
#pragma unroll
  for (int k = 0; k < kAcc; ++k) acc[k] = in[(tid * (kAcc + 1) + k) & (kInputs - 1)];
  const F m = in[(tid * (kAcc + 1) + kAcc) & (kInputs - 1)];
#pragma unroll 1
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int k = 0; k < kAcc; ++k) acc[k] = acc[k] * m;
  }
  F r = acc[0];
#pragma unroll
  for (int k = 1; k < kAcc; ++k) r = r + acc[k];
  out[tid] = r;
}

// Bucket-style accumulation: one XYZZ accumulator per thread, `iters` mixed additions of
// affine points read (coalesced: neighbouring threads read neighbouring points) from global.
__global__ void __launch_bounds__(kBlock, kMinBlocks) xyzz_madd_kernel(const G1Affine* __restrict__ pts, int iters,
                                                           G1XYZZ* __restrict__ out) {
  const uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x;
  G1XYZZ acc = G1XYZZ::from_affine(pts[tid & (kPoints - 1)]);
#pragma unroll 1
  for (int j = 1; j <= iters; ++j) acc = acc.add_mixed(pts[(tid + uint32_t(j) * 7919u) & (kPoints - 1)]);
  out[tid] = acc;
}

// Host mirrors of the kernels for the spot check (same source, host paths).
template <class F>
F mul_chain_host(const std::vector<F>& in, int iters, uint32_t tid) {
  constexpr int kAcc = kAccOf<F>;
  F acc[kAcc];
  for (int k = 0; k < kAcc; ++k) acc[k] = in[(tid * (kAcc + 1) + k) & (kInputs - 1)];
  const F m = in[(tid * (kAcc + 1) + kAcc) & (kInputs - 1)];
  for (int it = 0; it < iters; ++it)
    for (int k = 0; k < kAcc; ++k) acc[k] = acc[k] * m;
  F r = acc[0];
  for (int k = 1; k < kAcc; ++k) r = r + acc[k];
  return r;
}

G1XYZZ xyzz_madd_host(const std::vector<G1Affine>& pts, int iters, uint32_t tid) {
  G1XYZZ acc = G1XYZZ::from_affine(pts[tid & (kPoints - 1)]);
  for (int j = 1; j <= iters; ++j) acc = acc.add_mixed(pts[(tid + uint32_t(j) * 7919u) & (kPoints - 1)]);
  return acc;
}

// ------------------------------------------------------------------------------------------
// Host side
// ------------------------------------------------------------------------------------------

struct Rng {  // splitmix64
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
};

// Uniform value < modulus, used directly as a (fully reduced) Montgomery representation.
template <class P>
Field<P> random_field(Rng& rng) {
  constexpr int N = P::N;
  constexpr int top = Field<P>::BITS - 64 * (N - 1);
  constexpr uint64_t mask = top >= 64 ? ~uint64_t(0) : (uint64_t(1) << top) - 1;
  for (;;) {
    Limbs<N> x{};
    for (int i = 0; i < N; ++i) x.v[i] = rng.next();
    x.v[N - 1] &= mask;
    if (limbs::less(x, FieldConsts<P>::modulus)) {
      Field<P> a{};
      for (int i = 0; i < N; ++i) a.l[i] = x.v[i];
      return a;
    }
  }
}

template <class F>
struct ParamsOf;
template <class P>
struct ParamsOf<Field<P>> {
  using type = P;
};

struct Result {
  std::string name;
  std::string unit;
  double ops_per_launch = 0;
  double median_ms = 0, min_ms = 0, max_ms = 0;
  double ops_per_s = 0;
  double imad_per_op = 0;
  double imad_per_s = 0;
  double pct_peak = 0;
  int regs = 0;
  int blocks_per_sm = 0;
  unsigned grid = 0;
};

class Timer {
 public:
  Timer() {
    PP_CUDA_CHECK(cudaEventCreate(&a_));
    PP_CUDA_CHECK(cudaEventCreate(&b_));
  }
  ~Timer() {
    PP_CUDA_WARN(cudaEventDestroy(a_));
    PP_CUDA_WARN(cudaEventDestroy(b_));
  }
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;
  // Untimed warm-up launches, then `runs` individually timed launches; returns the times (ms).
  template <class Launch>
  std::vector<double> time(const Launch& launch, int warmup, int runs) {
    for (int i = 0; i < warmup; ++i) {
      launch();
      PP_CUDA_CHECK_LAUNCH();
    }
    PP_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<double> ms;
    for (int i = 0; i < runs; ++i) {
      PP_CUDA_CHECK(cudaEventRecord(a_));
      launch();
      PP_CUDA_CHECK_LAUNCH();
      PP_CUDA_CHECK(cudaEventRecord(b_));
      PP_CUDA_CHECK(cudaEventSynchronize(b_));
      float t = 0;
      PP_CUDA_CHECK(cudaEventElapsedTime(&t, a_, b_));
      ms.push_back(t);
    }
    return ms;
  }

 private:
  cudaEvent_t a_{}, b_{};
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string json_escape(const std::string& s) {
  std::string r;
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      r += '\\';
      r += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      r += buf;
    } else {
      r += c;
    }
  }
  return r;
}

void usage() {
  std::fprintf(stderr,
               "usage: proofpipe_gpu_bench [--runs N (>=5, default 7)] [--warmup N (default 2)] [--device D]\n"
               "                           [--imad-peak OPS (default 16.7e12)] [--seed S] [--json FILE]\n");
}

template <class Kernel>
void launch_shape(Kernel kernel, int sms, Result& r) {
  cudaFuncAttributes attr{};
  PP_CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
  r.regs = attr.numRegs;
  PP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r.blocks_per_sm, kernel, kBlock, 0));
  if (r.blocks_per_sm < 1) throw std::runtime_error("kernel cannot be resident with the chosen block size");
  r.grid = unsigned(sms) * unsigned(r.blocks_per_sm) * kWaves;
}

void finish(Result& r, const std::vector<double>& ms, double imad_peak) {
  r.median_ms = median(ms);
  r.min_ms = *std::min_element(ms.begin(), ms.end());
  r.max_ms = *std::max_element(ms.begin(), ms.end());
  r.ops_per_s = r.ops_per_launch / (r.median_ms * 1e-3);
  r.imad_per_s = r.ops_per_s * r.imad_per_op;
  r.pct_peak = 100.0 * r.imad_per_s / imad_peak;
}

// Field multiplication chain benchmark for F; checks threads 0..3 and the last one against the CPU.
template <class F>
Result bench_mul(const char* name, double imad_per_op, int iters, int sms, int warmup, int runs,
                 double imad_peak, Rng& rng, Timer& timer) {
  std::vector<F> in(kInputs);
  for (auto& x : in) {
    if constexpr (std::is_same_v<F, Fp2>) {
      x = Fp2{random_field<FpParams>(rng), random_field<FpParams>(rng)};
    } else {
      x = random_field<typename ParamsOf<F>::type>(rng);
    }
  }
  Result r;
  r.name = name;
  r.unit = "mul";
  r.imad_per_op = imad_per_op;
  launch_shape(mul_chain_kernel<F>, sms, r);
  const size_t threads = size_t(r.grid) * kBlock;
  r.ops_per_launch = double(threads) * kAccOf<F> * iters;

  F* d_in = nullptr;
  F* d_out = nullptr;
  PP_CUDA_CHECK(cudaMalloc(&d_in, in.size() * sizeof(F)));
  PP_CUDA_CHECK(cudaMalloc(&d_out, threads * sizeof(F)));
  PP_CUDA_CHECK(cudaMemcpy(d_in, in.data(), in.size() * sizeof(F), cudaMemcpyHostToDevice));
  const unsigned grid = r.grid;
  auto launch = [&] { mul_chain_kernel<F><<<grid, kBlock>>>(d_in, iters, d_out); };
  const std::vector<double> ms = timer.time(launch, warmup, runs);

  std::vector<F> out(threads);
  PP_CUDA_CHECK(cudaMemcpy(out.data(), d_out, threads * sizeof(F), cudaMemcpyDeviceToHost));
  for (const uint32_t t : {0u, 1u, 2u, 3u, uint32_t(threads - 1)}) {
    const F ref = mul_chain_host(in, iters, t);
    if (std::memcmp(&ref, &out[t], sizeof(F)) != 0)
      throw std::runtime_error(std::string(name) + ": GPU result of thread " + std::to_string(t) +
                               " differs from the CPU");
  }
  PP_CUDA_CHECK(cudaFree(d_in));
  PP_CUDA_CHECK(cudaFree(d_out));
  finish(r, ms, imad_peak);
  return r;
}

Result bench_xyzz(int iters, int sms, int warmup, int runs, double imad_peak, Rng& rng, Timer& timer) {
  // P_i = P_0 + i·Q for random P_0, Q: cheap distinct points, then one batch inversion.
  const auto rand_scalar = [&rng] { return random_field<FrParams>(rng); };
  const G1Jacobian q = scalar_mul(g1_generator(), rand_scalar());
  std::vector<G1Jacobian> jac(kPoints);
  jac[0] = scalar_mul(g1_generator(), rand_scalar());
  for (uint32_t i = 1; i < kPoints; ++i) jac[i] = jac[i - 1] + q;
  std::vector<G1Affine> pts(kPoints);
  std::vector<Fp> scratch(kPoints);
  batch_to_affine(jac.data(), pts.data(), kPoints, scratch.data());
  for (const auto& p : pts)
    if (!p.is_on_curve() || p.is_infinity()) throw std::runtime_error("bad benchmark point");

  Result r;
  r.name = "G1 XYZZ mixed add";
  r.unit = "add";
  r.imad_per_op = kImadG1Madd;
  launch_shape(xyzz_madd_kernel, sms, r);
  const size_t threads = size_t(r.grid) * kBlock;
  r.ops_per_launch = double(threads) * iters;

  G1Affine* d_pts = nullptr;
  G1XYZZ* d_out = nullptr;
  PP_CUDA_CHECK(cudaMalloc(&d_pts, pts.size() * sizeof(G1Affine)));
  PP_CUDA_CHECK(cudaMalloc(&d_out, threads * sizeof(G1XYZZ)));
  PP_CUDA_CHECK(cudaMemcpy(d_pts, pts.data(), pts.size() * sizeof(G1Affine), cudaMemcpyHostToDevice));
  const unsigned grid = r.grid;
  auto launch = [&] { xyzz_madd_kernel<<<grid, kBlock>>>(d_pts, iters, d_out); };
  const std::vector<double> ms = timer.time(launch, warmup, runs);

  std::vector<G1XYZZ> out(threads);
  PP_CUDA_CHECK(cudaMemcpy(out.data(), d_out, threads * sizeof(G1XYZZ), cudaMemcpyDeviceToHost));
  for (const uint32_t t : {0u, 1u, uint32_t(threads - 1)}) {
    const G1XYZZ ref = xyzz_madd_host(pts, iters, t);
    if (std::memcmp(&ref, &out[t], sizeof(G1XYZZ)) != 0)
      throw std::runtime_error("G1 XYZZ mixed add: GPU result of thread " + std::to_string(t) +
                               " differs from the CPU");
  }
  PP_CUDA_CHECK(cudaFree(d_pts));
  PP_CUDA_CHECK(cudaFree(d_out));
  finish(r, ms, imad_peak);
  return r;
}

int run_main(int argc, char** argv) {
  int runs = 7, warmup = 2, device = 0;
  double imad_peak = 16.7e12;
  uint64_t seed = 0x62656e6368707070ULL;  // "benchppp"
  std::string json_path;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) {
        usage();
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--runs") runs = std::atoi(value());
    else if (a == "--warmup") warmup = std::atoi(value());
    else if (a == "--device") device = std::atoi(value());
    else if (a == "--imad-peak") imad_peak = std::strtod(value(), nullptr);
    else if (a == "--seed") seed = std::strtoull(value(), nullptr, 0);
    else if (a == "--json") json_path = value();
    else if (a == "--help" || a == "-h") {
      usage();
      return 0;
    } else {
      usage();
      return 2;
    }
  }
  if (runs < 5 || warmup < 0 || !(imad_peak > 0)) {
    usage();
    return 2;
  }

  int count = 0;
  PP_CUDA_CHECK(cudaGetDeviceCount(&count));
  if (device < 0 || device >= count) {
    std::fprintf(stderr, "device %d not present (%d CUDA devices)\n", device, count);
    return 2;
  }
  PP_CUDA_CHECK(cudaSetDevice(device));
  cudaDeviceProp prop{};
  PP_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  const int sms = prop.multiProcessorCount;
  std::printf("proofpipe_gpu_bench: device %d: %s, sm_%d%d, %d SMs; %d warm-up + %d timed runs per kernel "
              "(median); seed 0x%016" PRIx64 "\n\n",
              device, prop.name, prop.major, prop.minor, sms, warmup, runs, seed);
  std::fflush(stdout);

  Rng rng{seed};
  Timer timer;
  std::vector<Result> results;
  results.push_back(bench_mul<Fp>("Fp mul", kImadFp, 1024, sms, warmup, runs, imad_peak, rng, timer));
  results.push_back(bench_mul<Fr>("Fr mul", kImadFr, 1024, sms, warmup, runs, imad_peak, rng, timer));
  results.push_back(bench_mul<Fp2>("Fp2 mul", kImadFp2, 1024, sms, warmup, runs, imad_peak, rng, timer));
  results.push_back(bench_xyzz(1024, sms, warmup, runs, imad_peak, rng, timer));

  std::printf("| op | ops/s | median ms | min ms | max ms | ops/launch | IMAD/op (model) | implied IMAD/s | "
              "%% of %.3g IMAD/s | regs | blocks/SM | grid |\n",
              imad_peak);
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Result& r : results) {
    std::printf("| %s | %.4g | %.3f | %.3f | %.3f | %.4g | %.0f | %.4g | %.1f%% | %d | %d | %u |\n", r.name.c_str(),
                r.ops_per_s, r.median_ms, r.min_ms, r.max_ms, r.ops_per_launch, r.imad_per_op, r.imad_per_s,
                r.pct_peak, r.regs, r.blocks_per_sm, r.grid);
  }
  std::printf("\nIMAD/op model: 4W^2 (+ W) 32-bit mad.lo/mad.hi/mul.lo per Montgomery multiplication "
              "(Fp W=12: 588; Fr W=8: 256, its q = -t0 needs no multiply); Fp2 mul = 3 Fp; G1 XYZZ madd = 10 Fp.\n");

  if (!json_path.empty()) {
    FILE* f = std::fopen(json_path.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "cannot write %s\n", json_path.c_str());
      return 2;
    }
    std::fprintf(f, "{\n  \"tool\": \"proofpipe_gpu_bench\",\n  \"device\": \"%s\",\n  \"sm\": \"%d.%d\",\n"
                    "  \"sm_count\": %d,\n  \"warmup\": %d,\n  \"runs\": %d,\n  \"seed\": %" PRIu64 ",\n"
                    "  \"imad_peak_per_s\": %.6g,\n  \"results\": [\n",
                 json_escape(prop.name).c_str(), prop.major, prop.minor, sms, warmup, runs, seed, imad_peak);
    for (size_t i = 0; i < results.size(); ++i) {
      const Result& r = results[i];
      std::fprintf(f,
                   "    {\"name\": \"%s\", \"unit\": \"%s\", \"ops_per_s\": %.6g, \"median_ms\": %.6g, "
                   "\"min_ms\": %.6g, \"max_ms\": %.6g, \"ops_per_launch\": %.6g, \"imad_per_op\": %.0f, "
                   "\"imad_per_s\": %.6g, \"pct_of_imad_peak\": %.4g, \"registers\": %d, "
                   "\"blocks_per_sm\": %d, \"grid\": %u, \"block\": %d}%s\n",
                   json_escape(r.name).c_str(), r.unit.c_str(), r.ops_per_s, r.median_ms, r.min_ms, r.max_ms,
                   r.ops_per_launch, r.imad_per_op, r.imad_per_s, r.pct_peak, r.regs, r.blocks_per_sm, r.grid,
                   kBlock, i + 1 < results.size() ? "," : "");
    }
    std::fprintf(f, "  ]\n}\n");
    if (std::fclose(f) != 0) {
      std::fprintf(stderr, "error writing %s\n", json_path.c_str());
      return 2;
    }
    std::printf("wrote %s\n", json_path.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run_main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "proofpipe_gpu_bench: %s\n", e.what());
    return 2;
  }
}
