// SPDX-License-Identifier: Apache-2.0 OR MIT
// Host side shared by the GPU MSM and its CPU twins: shapes, and the twins themselves.

#include <tbb/parallel_for.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "msm_kernels.hpp"
#include "proofpipe/gpu/msm.hpp"

namespace pp::gpu {

Status make_msm_shape(std::size_t n, int c, MsmShape* out, int copies, int batch) {
  if (n >= (std::size_t(1) << 31))
    return Status::invalid("pp::gpu::msm: " + std::to_string(n) + " points exceed the limit 2^31 - 1");
  if (c == 0) c = default_gpu_window(n);
  if (c < kMinWindow || c > kMaxWindow)
    return Status::invalid("pp::gpu::msm: window " + std::to_string(c) + " outside [" + std::to_string(kMinWindow) +
                           ", " + std::to_string(kMaxWindow) + "]");
  if (copies < 1) return Status::invalid("pp::gpu::msm: " + std::to_string(copies) + " copies of the bases");
  copies = std::min(copies, msm_digits::num_windows(c));
  if (n * std::size_t(copies) >= (std::size_t(1) << 31))
    return Status::invalid("pp::gpu::msm: " + std::to_string(copies) + " copies of " + std::to_string(n) +
                           " points exceed the table limit of 2^31 - 1 points");
  if (batch < 0) return Status::invalid("pp::gpu::msm: a batch of " + std::to_string(batch) + " sets");
  MsmShape shape{n, c, copies, 1};
  shape.batch = batch == 0 ? msm_batch(n, c, copies) : std::min(batch, shape.sets());
  if (shape.batch > 1 && shape.entries() >= (std::size_t(1) << 31))
    return Status::invalid("pp::gpu::msm: a batch of " + std::to_string(shape.batch) + " sets of " +
                           std::to_string(n * std::size_t(copies)) + " entries exceeds 2^31 - 1 entries");
  *out = shape;
  return {};
}

int msm_batch(std::size_t n, int c, int copies) {
  const MsmShape one{n, c, copies, 1};
  const std::size_t per_set = n * std::size_t(copies);
  if (per_set >= kPassEntries) return 1;
  const std::size_t fit = per_set == 0 ? std::size_t(one.sets()) : kPassEntries / per_set;
  return int(std::min<std::size_t>(std::size_t(one.sets()), std::max<std::size_t>(1, fit)));
}

namespace {

// Sums m points the way the device's tree does (any order gives the same point).
template <class C>
XYZZ<C> sum_points(const std::vector<XYZZ<C>>& v) {
  XYZZ<C> acc = XYZZ<C>::infinity();
  for (const XYZZ<C>& p : v) acc += p;
  return acc;
}

}  // namespace

template <class C>
Jacobian<C> msm_combine(const XYZZ<C>* window_sums, const MsmShape& shape) {
  return combine_windows(window_sums, shape.sets(), shape.shift());
}

template <class C>
Jacobian<C> msm_twin(std::span<const Affine<C>> points, std::span<const typename C::Scalar> scalars, int c, int copies, int batch,
                     bool canonical) {
  MsmShape shape;
  if (Status s = make_msm_shape(scalars.size(), c, &shape, copies, batch); !s) throw std::invalid_argument(s.message);
  shape.canonical = canonical;
  if (points.size() != scalars.size() * std::size_t(copies))
    throw std::invalid_argument("pp::gpu::msm_twin: " + std::to_string(points.size()) + " points for " +
                                std::to_string(copies) + " copies of " + std::to_string(scalars.size()) + " bases");
  const std::size_t n = shape.n;
  if (n == 0) return Jacobian<C>::infinity();
  const std::size_t entries = shape.entries();
  std::vector<uint32_t> keys(entries), values(entries), order(entries), sk(entries), sv(entries);
  const std::size_t nb = shape.buckets();
  // Buckets of every set (all zero bytes: infinity, as the device's memset).
  std::vector<XYZZ<C>> buckets(std::size_t(shape.sets()) * nb), head(shape.segments()), tail(shape.segments());
  const uint32_t null_key = shape.null_key();
  for (int p = 0; p < shape.passes(); ++p) {
    const int j = p * shape.batch, windows = shape.pass_windows(p);
    const std::size_t m = n * std::size_t(windows);
    tbb::parallel_for(std::size_t(0), n, [&](std::size_t i) {
      digit_entries(scalars[i], shape.canonical, uint32_t(i), n, shape.c, j * shape.copies, windows, shape.copies,
                    null_key, keys.data(), values.data());
    });
    // A stable sort by key, as the device's radix sort.
    order.resize(m);
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) { return keys[x] < keys[y]; });
    for (std::size_t i = 0; i < m; ++i) {
      sk[i] = keys[order[i]];
      sv[i] = values[order[i]];
    }
    XYZZ<C>* bw = buckets.data() + std::size_t(j) * nb;
    const uint64_t segs = (m + shape.segment() - 1) / shape.segment();
    tbb::parallel_for(uint64_t(0), segs, [&](uint64_t s) {
      RegisterSides<typename C::Field> sides{};
      segment_sums(s, shape.segment(), sk.data(), sv.data(), m, points.data(), null_key, bw, head.data(), tail.data(),
                   sides);
    });
    tbb::parallel_for(uint64_t(0), segs, [&](uint64_t s) {
      uint64_t last = 0;
      if (chain_sums(s, shape.segment(), sk.data(), m, null_key, bw, head.data(), tail.data(), &last) == kChainLong) {
        // The device sums a long chain with a block-wide tree; any order gives the same point.
        XYZZ<C> acc = tail[s];
        for (uint64_t t = s + 1; t <= last; ++t) acc += head[t];
        bw[sk[(s + 1) * shape.segment() - 1]] = acc;
      }
    });
  }
  // Step 5 as the device runs it: level 1 over every set's chunks, level 2 over their totals.
  const std::size_t sets = std::size_t(shape.sets());
  const uint32_t chunk = shape.reduce_chunk(), chunks = shape.reduce_chunks();
  const uint32_t chunk2 = shape.reduce_chunk2(), chunks2 = shape.reduce_chunks2();
  std::vector<XYZZ<C>> local(sets * chunks), totals(sets * chunks), level2(sets * chunks2);
  tbb::parallel_for(std::size_t(0), local.size(), [&](std::size_t i) {
    bucket_chunk_scan(buckets.data() + i / chunks * nb, shape.buckets(), chunk, uint32_t(i % chunks));
  });
  tbb::parallel_for(std::size_t(0), local.size(), [&](std::size_t i) {
    const XYZZ<C>* set = buckets.data() + i / chunks * nb;
    local[i] = bucket_chunk_local(set, shape.buckets(), chunk, uint32_t(i % chunks));
    totals[i] = set[std::size_t(i % chunks) * chunk];
  });
  tbb::parallel_for(std::size_t(0), level2.size(), [&](std::size_t i) {
    bucket_chunk_scan(totals.data() + i / chunks2 * chunks + 1, chunks - 1, chunk2, uint32_t(i % chunks2));
  });
  tbb::parallel_for(std::size_t(0), level2.size(), [&](std::size_t i) {
    level2[i] = bucket_chunk_total(totals.data() + i / chunks2 * chunks + 1, chunks - 1, chunk2, uint32_t(i % chunks2));
  });
  std::vector<XYZZ<C>> set_sums(sets);
  for (std::size_t w = 0; w < sets; ++w)
    set_sums[w] = bucket_set_sum(
        sum_points(std::vector<XYZZ<C>>(local.begin() + w * chunks, local.begin() + (w + 1) * chunks)),
        sum_points(std::vector<XYZZ<C>>(level2.begin() + w * chunks2, level2.begin() + (w + 1) * chunks2)), chunk);
  return msm_combine(set_sums.data(), shape);
}

template <class C>
std::vector<Affine<C>> precompute_twin(std::span<const Affine<C>> points, int c, int copies) {
  if (c < kMinWindow || c > kMaxWindow || copies < 1)
    throw std::invalid_argument("pp::gpu::precompute_twin: window " + std::to_string(c) + ", " +
                                std::to_string(copies) + " copies");
  const std::size_t n = points.size();
  std::vector<Affine<C>> table(n * std::size_t(copies));
  std::copy(points.begin(), points.end(), table.begin());
  const uint64_t batches = (n + kShiftBatch - 1) / kShiftBatch;
  for (int k = 1; k < copies; ++k)
    tbb::parallel_for(uint64_t(0), batches, [&](uint64_t t) {
      shift_batch(table.data() + std::size_t(k - 1) * n, table.data() + std::size_t(k) * n, n, t * kShiftBatch, c);
    });
  return table;
}

template <class C>
Jacobian<C> batch_add_twin(std::span<const Affine<C>> points, std::span<const uint64_t> bitmap) {
  const std::size_t n = points.size();
  if (bitmap.size() < (n + 63) / 64)
    throw std::invalid_argument("pp::gpu::batch_add_twin: bitmap has " + std::to_string(bitmap.size()) +
                                " words, " + std::to_string(n) + " points need " + std::to_string((n + 63) / 64));
  std::vector<XYZZ<C>> chunks((n + 63) / 64);
  tbb::parallel_for(std::size_t(0), chunks.size(), [&](std::size_t t) {
    chunks[t] = batch_word_sum(points.data(), bitmap.data(), n, t);
  });
  return sum_points(chunks).to_jacobian();
}

template Jacobian<G1Curve> msm_combine(const G1XYZZ*, const MsmShape&);
template Jacobian<G2Curve> msm_combine(const G2XYZZ*, const MsmShape&);
template Jacobian<G1Curve> msm_twin(std::span<const G1Affine>, std::span<const Fr>, int, int, int, bool);
template Jacobian<G2Curve> msm_twin(std::span<const G2Affine>, std::span<const Fr>, int, int, int, bool);
template std::vector<G1Affine> precompute_twin(std::span<const G1Affine>, int, int);
template std::vector<G2Affine> precompute_twin(std::span<const G2Affine>, int, int);
template Jacobian<G1Curve> batch_add_twin(std::span<const G1Affine>, std::span<const uint64_t>);
template Jacobian<G2Curve> batch_add_twin(std::span<const G2Affine>, std::span<const uint64_t>);
template Jacobian<bn254::G1Curve> msm_combine(const bn254::G1XYZZ*, const MsmShape&);
template Jacobian<bn254::G1Curve> msm_twin(std::span<const bn254::G1Affine>, std::span<const bn254::Fr>, int, int, int,
                                           bool);
template std::vector<bn254::G1Affine> precompute_twin(std::span<const bn254::G1Affine>, int, int);
template Jacobian<bn254::G1Curve> batch_add_twin(std::span<const bn254::G1Affine>, std::span<const uint64_t>);
template Jacobian<bn254::G2Curve> msm_combine(const bn254::G2XYZZ*, const MsmShape&);
template Jacobian<bn254::G2Curve> msm_twin(std::span<const bn254::G2Affine>, std::span<const bn254::Fr>, int, int, int,
                                           bool);
template std::vector<bn254::G2Affine> precompute_twin(std::span<const bn254::G2Affine>, int, int);
template Jacobian<bn254::G2Curve> batch_add_twin(std::span<const bn254::G2Affine>, std::span<const uint64_t>);

}  // namespace pp::gpu
