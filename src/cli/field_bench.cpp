// SPDX-License-Identifier: Apache-2.0 OR MIT
// `proofpipe bench field`: Fp, Fr and Fp2 multiplication and squaring in dependent chains, one
// key=value line per operation in the anchors' shape (divided by blst's blst_fp_mul lines).
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "commands.hpp"
#include "proofpipe/ff/bls12_381.hpp"

namespace pp::cli {
namespace {

// Each step consumes the previous result (latency, as a chain of field operations in a curve
// formula or an exponentiation sees it), timed over `iters` steps; `runs` timings after
// `warmup` untimed ones, median reported.
// Full-size operands (a product of two random-looking values), not small integers.
template <class F>
F operand(uint64_t x, uint64_t y) {
  if constexpr (std::is_same_v<F, Fp2>) return Fp2{operand<Fp>(x, y), operand<Fp>(y, x ^ 0x5bd1e995)};
  else return F::from_u64(x) * F::from_u64(y);
}
template <class F>
uint64_t fold(const F& a) {
  if constexpr (std::is_same_v<F, Fp2>) return fold(a.c0) ^ fold(a.c1);
  else {
    uint64_t digest = 0;
    for (uint64_t w : a.l) digest ^= w;
    return digest;
  }
}

template <class F, class Step>
void time_chain(const BenchFieldOptions& o, const char* op, const char* form, Step step) {
  F a = operand<F>(0x9e3779b97f4a7c15ULL, 0xbf58476d1ce4e5b9ULL);
  const F b = operand<F>(0x94d049bb133111ebULL, 0x2545f4914f6cdd1dULL);
  std::vector<double> ns;
  for (int r = -o.warmup; r < o.runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < o.iters; ++i) step(a, b);
    const auto t1 = std::chrono::steady_clock::now();
    if (r >= 0) ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / double(o.iters));
  }
  // The result feeds the output, so no step can be dropped.
  const uint64_t digest = fold(a);
  std::sort(ns.begin(), ns.end());
  fmt::print("proofpipe op={} form={} chain=dependent path={} iters={} runs={} ns_median={:.2f} "
             "ns_min={:.2f} ns_max={:.2f} digest={:016x}\n",
             op, form, field_asm_enabled() ? "mulx-adx" : "portable", o.iters, o.runs,
             ns[ns.size() / 2], ns.front(), ns.back(), digest);
}

template <class F>
void bench_field_ops(const BenchFieldOptions& o, const std::string& mul, const std::string& sqr) {
  auto wanted = [&](const std::string& op) { return o.op == "all" || o.op == op; };
  const bool inplace = o.form != "value", by_value = o.form != "inplace";
  // inplace: mul_into(a, a, b) (for Fp and Fr the kernel of a *= b), as blst_fp_mul(&a, &a, &b).
  // value: a = a * b, a new object each step
  // that the caller copies (a store-forwarding round trip on x86-64, see field.hpp).
  if (wanted(mul)) {
    if (inplace) time_chain<F>(o, mul.c_str(), "inplace", [](F& a, const F& b) { mul_into(a, a, b); });
    if (by_value) time_chain<F>(o, mul.c_str(), "value", [](F& a, const F& b) { a = a * b; });
  }
  if (wanted(sqr)) {
    if (inplace) time_chain<F>(o, sqr.c_str(), "inplace", [](F& a, const F&) { sqr_into(a, a); });
    if (by_value) time_chain<F>(o, sqr.c_str(), "value", [](F& a, const F&) { a = a.sqr(); });
  }
}

}  // namespace

int run_bench_field(const BenchFieldOptions& o) {
  if (o.iters < 1 || o.runs < 1 || o.warmup < 0) throw std::invalid_argument("bench field: --iters and --runs must be >= 1");
  if (o.portable) field_allow_asm(false);
  bench_field_ops<Fp>(o, "fp-mul", "fp-sqr");
  bench_field_ops<Fr>(o, "fr-mul", "fr-sqr");
  bench_field_ops<Fp2>(o, "fp2-mul", "fp2-sqr");
  field_allow_asm(true);
  return 0;
}

}  // namespace pp::cli
