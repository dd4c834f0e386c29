// SPDX-License-Identifier: Apache-2.0 OR MIT
// GPU kernel benchmarks (NTT, MSM, batch addition) on data already in device memory, and the
// GPU == CPU harness; shared by `proofpipe bench` and proofpipe_gpu_kernels_test.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pp::gpu {

struct BenchOptions {
  std::string op = "msm";    // msm | ntt | batch-add
  std::string curve = "g1";  // g1 | g2 (msm, batch-add) | bn254-g1 (msm) | bn254 (ntt: BN254's Fr; else BLS12-381's)
  int lg = 20;
  int window = 0;            // msm window c (0 = default)
  // msm: copies of the bases in a fixed-base table (1: none; 0: as engine::choose_fixed_base
  // picks for the device's free memory, which then also picks the window).
  int copies = 1;
  int batch = 0;  // msm: sets per pass (0: as many as the card's free memory holds)
  // msm: the scalars as canonical integers (as the anchors are given them) or in Montgomery form
  // (every pass takes them out of it). The random scalars are below 2^254, valid either way.
  bool canonical = true;
  // ntt: a root per twist (2^lg roots in one table) instead of the default tables.
  bool full_twist = false;
  int warmup = 1;
  int runs = 5;
  int device = 0;
  uint64_t seed = 0x70726f6f66706970ULL;
  double imad_peak = 16.7e12;  // the H200's 32-bit IMAD/s, measured (docs/PERF.md, "GPU kernels")
};

struct BenchResult {
  std::string op, curve;
  int lg = 0, window = 0;
  int copies = 1;            // msm: fixed-base table copies (1: none)
  int batch = 1;             // msm: sets per pass
  bool canonical = true;     // msm: the scalars' form (BenchOptions::canonical)
  int twist_lg = 0;          // ntt: the direct twist table's size, log2 (NttTables::mid_lg)
  double precompute_ms = 0;  // msm: building the table (once, not in the median)
  double median_ms = 0, min_ms = 0, max_ms = 0;
  int runs = 0;
  double imad_fraction = 0;  // MSM: modelled multiply work / time / peak (0 when not modelled)
  std::string note;
};

// Runs one benchmark (throws std::runtime_error with the CUDA text on failure).
BenchResult run_bench(const BenchOptions& options);
// One-line table header and row.
std::string bench_header();
std::string bench_row(const BenchResult& r);

}  // namespace pp::gpu
