// Host side of the GPU prover: query variable maps, scalar classification, and the CPU twins of
// the prover's kernels (prover_kernels.hpp, ec/fixed_base.hpp).

#include <tbb/parallel_for.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "proofpipe/ec/fixed_base.hpp"
#include "proofpipe/gpu/prover.hpp"
#include "proofpipe/gpu/prover_kernels.hpp"

namespace pp::gpu {

SplitBits classify(std::span<const Fr> input, std::span<const Fr> aux, std::span<const uint32_t> vars,
                   std::size_t offset, std::size_t points) {
  SplitBits out;
  const std::size_t words = (points + 63) / 64;
  out.ones.assign(words, 0);
  out.other.assign(words, 0);
  const Fr one = Fr::one();
  tbb::parallel_for(std::size_t(0), words, [&](std::size_t w) {
    uint64_t ones = 0, other = 0;
    for (std::size_t p = w * 64; p < std::min(points, w * 64 + 64); ++p) {
      const std::size_t v = vars.empty() ? offset + p : vars[p];
      const Fr& x = v < input.size() ? input[v] : aux[v - input.size()];
      if (x.is_zero()) continue;
      (x == one ? ones : other) |= uint64_t(1) << (p % 64);
    }
    out.ones[w] = ones;
    out.other[w] = other;
  });
  for (std::size_t w = 0; w < words; ++w) {
    out.ones_count += std::size_t(__builtin_popcountll(out.ones[w]));
    out.other_count += std::size_t(__builtin_popcountll(out.other[w]));
  }
  return out;
}

template <class C>
void tail_gather_twin(std::span<const uint64_t> bitmap, std::size_t lo, std::size_t hi, std::span<const Affine<C>> points,
                      std::span<const Fr> z, std::span<const uint32_t> vars, std::vector<Affine<C>>& out_points,
                      std::vector<Fr>& out_scalars) {
  std::vector<uint32_t> rank(bitmap.size());
  uint64_t total = 0;
  for (std::size_t t = 0; t < bitmap.size(); ++t) {
    rank[t] = uint32_t(total);
    total += uint64_t(popcount64(bitmap[t]));
  }
  const std::size_t end = std::min<std::size_t>(hi, total);
  out_points.assign(end > lo ? end - lo : 0, Affine<C>::infinity());
  out_scalars.assign(out_points.size(), Fr::zero());
  if (out_points.empty()) return;
  tbb::parallel_for(std::size_t(0), bitmap.size(), [&](std::size_t t) {
    tail_gather_word<C>(t, bitmap.data(), rank.data(), lo, end, points.data(), z.data(),
                        vars.empty() ? nullptr : vars.data(), out_points.data(), out_scalars.data());
  });
}

template <class C>
std::vector<Affine<C>> fixed_base_twin(const Affine<C>& base, std::span<const Fr> scalars) {
  const std::vector<Affine<C>> table = fixed_base_table(base);
  std::vector<Affine<C>> out(scalars.size());
  tbb::parallel_for(std::size_t(0), scalars.size(),
                    [&](std::size_t i) { out[i] = fixed_base_mul(table.data(), scalars[i]).to_affine(); });
  return out;
}

#define PP_GPU_PROVER_TWINS(C)                                                                                    \
  template void tail_gather_twin<C>(std::span<const uint64_t>, std::size_t, std::size_t, std::span<const Affine<C>>, \
                                    std::span<const Fr>, std::span<const uint32_t>, std::vector<Affine<C>>&,         \
                                    std::vector<Fr>&);                                                            \
  template std::vector<Affine<C>> fixed_base_twin<C>(const Affine<C>&, std::span<const Fr>);
PP_GPU_PROVER_TWINS(G1Curve)
PP_GPU_PROVER_TWINS(G2Curve)

}  // namespace pp::gpu
