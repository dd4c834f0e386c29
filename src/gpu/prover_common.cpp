// SPDX-License-Identifier: Apache-2.0 OR MIT
// Host side of the GPU prover: query variable maps, scalar classification, and the CPU twins of
// the prover's kernels (prover_kernels.hpp, ec/fixed_base.hpp).

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "prover_kernels.hpp"
#include "proofpipe/ec/fixed_base.hpp"
#include "proofpipe/gpu/prover_host.hpp"

namespace pp::gpu {

namespace {

// Copies of whole 16-byte words into a pack buffer. The packed chunk is written once and next read
// by the DMA engine, so where the target allows (SSE2, a 16-byte aligned buffer) the stores are
// non-temporal: they go to memory without first reading each destination line into the cache,
// which is a third of the packing's memory traffic. `fence` makes them visible before the copy
// that follows the packing starts.
struct PackWriter {
  bool streaming;
  explicit PackWriter(const char* out) : streaming(kCanStream && reinterpret_cast<uintptr_t>(out) % 16 == 0) {}
#if defined(__SSE2__)
  static constexpr bool kCanStream = true;
#else
  static constexpr bool kCanStream = false;
#endif
  template <std::size_t kBytes>
  void put(void* dst, const void* src) const {
    static_assert(kBytes % 16 == 0, "whole 16-byte words");
#if defined(__SSE2__)
    if (streaming) {
      auto* d = static_cast<__m128i*>(dst);
      const auto* s = static_cast<const __m128i*>(src);
      for (std::size_t i = 0; i < kBytes / 16; ++i) _mm_stream_si128(d + i, _mm_loadu_si128(s + i));
      return;
    }
#endif
    std::memcpy(dst, src, kBytes);
  }
  void put_bytes(char* dst, const char* src, std::size_t n) const {
    if (reinterpret_cast<uintptr_t>(dst) % 16 != 0) {
      std::memcpy(dst, src, n);
      return;
    }
    std::size_t i = 0;
    for (; i + 64 <= n; i += 64) put<64>(dst + i, src + i);
    if (i < n) std::memcpy(dst + i, src + i, n - i);
  }
  void fence() const {
#if defined(__SSE2__)
    if (streaming) _mm_sfence();
#endif
  }
};

// count (<= 64) bits of b from bit `start` on, the rest zero: a funnel shift of two words.
uint64_t bits_from(const std::vector<uint64_t>& b, std::size_t start, std::size_t count) {
  const std::size_t word = start / 64, shift = start % 64;
  uint64_t v = word < b.size() ? b[word] >> shift : 0;
  if (shift != 0 && word + 1 < b.size()) v |= b[word + 1] << (64 - shift);
  return count >= 64 ? v : v & ((uint64_t(1) << count) - 1);
}

}  // namespace

namespace {

template <class F>
ZClasses classify_z_of(std::span<const F> input, std::span<const F> aux, F* copy_to) {
  ZClasses out;
  out.size = input.size() + aux.size();
  const std::size_t words = (out.size + 63) / 64;
  out.ones.assign(words, 0);
  out.other.assign(words, 0);
  const F one = F::one();
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, words, 256), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t w = r.begin(); w != r.end(); ++w) {
      uint64_t ones = 0, other = 0;
      for (std::size_t v = w * 64; v < std::min(out.size, w * 64 + 64); ++v) {
        const F& x = v < input.size() ? input[v] : aux[v - input.size()];
        if (copy_to) copy_to[v] = x;
        if (x.is_zero()) continue;
        (x == one ? ones : other) |= uint64_t(1) << (v % 64);
      }
      out.ones[w] = ones;
      out.other[w] = other;
    }
  });
  return out;
}

}  // namespace

SplitBits select_split(const ZClasses& z, std::span<const uint32_t> vars, std::size_t offset, std::size_t points) {
  SplitBits out;
  const std::size_t words = (points + 63) / 64;
  out.ones.assign(words, 0);
  out.other.assign(words, 0);
  auto bit = [](const std::vector<uint64_t>& b, std::size_t v) { return (b[v / 64] >> (v % 64)) & 1; };
  if (vars.empty()) {
    // The identity map (point p is variable offset + p): each word is the classes' bits from
    // offset + 64w, a funnel shift of two words, not 64 lookups.
    if (points > 0 && (offset > z.size || points > z.size - offset))
      throw std::invalid_argument("select_split: point " + std::to_string(offset > z.size ? 0 : z.size - offset) +
                                  " is variable " + std::to_string(std::max(offset, z.size)) +
                                  ", the assignment has " + std::to_string(z.size));
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, words, 4096), [&](const tbb::blocked_range<std::size_t>& r) {
      for (std::size_t w = r.begin(); w != r.end(); ++w) {
        const std::size_t count = std::min<std::size_t>(64, points - w * 64);
        out.ones[w] = bits_from(z.ones, offset + w * 64, count);
        out.other[w] = bits_from(z.other, offset + w * 64, count);
      }
    });
    for (std::size_t w = 0; w < words; ++w) {
      out.ones_count += std::size_t(popcount64(out.ones[w]));
      out.other_count += std::size_t(popcount64(out.other[w]));
    }
    return out;
  }
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, words, 256), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t w = r.begin(); w != r.end(); ++w) {
      uint64_t ones = 0, other = 0;
      for (std::size_t p = w * 64; p < std::min(points, w * 64 + 64); ++p) {
        const std::size_t v = vars.empty() ? offset + p : vars[p];
        if (v >= z.size)
          throw std::invalid_argument("select_split: point " + std::to_string(p) + " is variable " + std::to_string(v) +
                                      ", the assignment has " + std::to_string(z.size));
        ones |= bit(z.ones, v) << (p % 64);
        other |= bit(z.other, v) << (p % 64);
      }
      out.ones[w] = ones;
      out.other[w] = other;
    }
  });
  for (std::size_t w = 0; w < words; ++w) {
    out.ones_count += std::size_t(popcount64(out.ones[w]));
    out.other_count += std::size_t(popcount64(out.other[w]));
  }
  return out;
}

namespace {

template <class F>
std::vector<F> tail_scalars_of(const SplitBits& bits, std::span<const F> input, std::span<const F> aux,
                               std::span<const uint32_t> vars, std::size_t offset) {
  // Blocks of words: each block's first rank from a prefix sum of the blocks' counts.
  constexpr std::size_t kWords = 1024;
  const std::size_t words = bits.other.size(), blocks = (words + kWords - 1) / kWords;
  std::vector<std::size_t> first(blocks + 1, 0);
  tbb::parallel_for(std::size_t(0), blocks, [&](std::size_t k) {
    std::size_t n = 0;
    for (std::size_t w = k * kWords; w < std::min(words, k * kWords + kWords); ++w)
      n += std::size_t(popcount64(bits.other[w]));
    first[k + 1] = n;
  });
  for (std::size_t k = 0; k < blocks; ++k) first[k + 1] += first[k];
  if (first[blocks] != bits.other_count)
    throw std::invalid_argument("tail_scalars: the bitmap holds " + std::to_string(first[blocks]) +
                                " tail points, its count says " + std::to_string(bits.other_count));
  const QueryScalars<F> z{input, aux, vars, offset};
  std::vector<F> out(bits.other_count);
  tbb::parallel_for(std::size_t(0), blocks, [&](std::size_t k) {
    std::size_t at = first[k];
    for (std::size_t w = k * kWords; w < std::min(words, k * kWords + kWords); ++w)
      for (uint64_t word = bits.other[w]; word != 0; word &= word - 1)
        out[at++] = z.at(w * 64 + std::size_t(popcount64((word & (~word + 1)) - 1)));
  });
  return out;
}

}  // namespace

#define PP_GPU_CLASSIFY(F)                                                                                        \
  ZClasses classify_z(std::span<const F> input, std::span<const F> aux, F* copy_to) {                             \
    return classify_z_of(input, aux, copy_to);                                                                    \
  }                                                                                                               \
  SplitBits classify(std::span<const F> input, std::span<const F> aux, std::span<const uint32_t> vars,            \
                     std::size_t offset, std::size_t points) {                                                    \
    return select_split(classify_z_of<F>(input, aux, nullptr), vars, offset, points);                             \
  }                                                                                                               \
  std::vector<F> tail_scalars(const SplitBits& bits, std::span<const F> input, std::span<const F> aux,            \
                              std::span<const uint32_t> vars, std::size_t offset) {                               \
    return tail_scalars_of(bits, input, aux, vars, offset);                                                       \
  }
PP_GPU_CLASSIFY(Fr)
PP_GPU_CLASSIFY(bn254::Fr)
#undef PP_GPU_CLASSIFY

std::vector<std::size_t> set_bits_per_chunk(std::span<const uint64_t> bitmap, std::size_t points, std::size_t chunk) {
  if (chunk == 0 || (chunk % 64 != 0 && chunk < points))
    throw std::invalid_argument("set_bits_per_chunk: chunk of " + std::to_string(chunk) + " points for " +
                                std::to_string(points) + " is neither a positive multiple of 64 nor all of them");
  if (bitmap.size() != (points + 63) / 64)
    throw std::invalid_argument("set_bits_per_chunk: a bitmap of " + std::to_string(bitmap.size()) + " words for " +
                                std::to_string(points) + " points");
  // Whole words per chunk: a chunk that is not a multiple of 64 is the only one and ends in the
  // bitmap's last, partial word.
  const std::size_t words = (chunk + 63) / 64;
  std::vector<std::size_t> counts((points + chunk - 1) / chunk, 0);
  tbb::parallel_for(std::size_t(0), counts.size(), [&](std::size_t k) {
    const std::size_t w0 = k * words, w1 = std::min(bitmap.size(), w0 + words);
    for (std::size_t w = w0; w < w1; ++w) counts[k] += std::size_t(popcount64(bitmap[w]));
  });
  return counts;
}

std::vector<TailPiece> tail_pieces(std::span<const std::size_t> counts, std::size_t capacity) {
  if (capacity == 0) throw std::invalid_argument("tail_pieces: a gather buffer of no entries");
  std::vector<TailPiece> out;
  std::size_t fill = 0;
  for (std::size_t k = 0; k < counts.size(); ++k)
    for (std::size_t lo = 0; lo < counts[k];) {
      const std::size_t take = std::min(counts[k] - lo, capacity - fill);
      out.push_back({k, lo, lo + take, fill, false});
      fill += take;
      lo += take;
      if (fill == capacity) {
        out.back().flush = true;
        fill = 0;
      }
    }
  if (fill > 0) out.back().flush = true;
  return out;
}

namespace {

// Word w of the chunk of points [off, off + m) of bitmap b (off a multiple of 64), without the
// bits past its m points: what crosses for the chunk.
uint64_t chunk_word(const std::vector<uint64_t>& b, std::size_t off, std::size_t m, std::size_t w) {
  const std::size_t valid = m - w * 64;
  return b[off / 64 + w] & (valid >= 64 ? ~uint64_t(0) : (uint64_t(1) << valid) - 1);
}

}  // namespace

template <class C>
PackedCounts pack_chunk(const Affine<C>* points, const SplitBits& bits, std::size_t off, std::size_t m,
                        std::span<const typename C::Scalar> tail, char* out, const ChunkLayout& lay) {
  using P = Affine<C>;
  using S = typename C::Scalar;
  const std::size_t w0 = off / 64, words = (m + 63) / 64;
  if (off % 64 != 0 || bits.other.size() != bits.ones.size() || w0 + words > bits.ones.size())
    throw std::invalid_argument("pack_chunk: points [" + std::to_string(off) + ", " + std::to_string(off + m) +
                                ") are not a chunk of bitmaps of " + std::to_string(bits.ones.size()) + " words");
  const auto word = [&](const std::vector<uint64_t>& b, std::size_t w) { return chunk_word(b, off, m, w); };
  // Blocks of words: each block's first output position from prefix sums of the blocks' counts.
  constexpr std::size_t kWords = 256;
  const std::size_t blocks = (words + kWords - 1) / kWords;
  std::vector<std::size_t> ones_at(blocks + 1, 0), tail_at(blocks + 1, 0);
  tbb::parallel_for(std::size_t(0), blocks, [&](std::size_t k) {
    for (std::size_t w = k * kWords; w < std::min(words, k * kWords + kWords); ++w) {
      ones_at[k + 1] += std::size_t(popcount64(word(bits.ones, w)));
      tail_at[k + 1] += std::size_t(popcount64(word(bits.other, w)));
    }
  });
  for (std::size_t k = 0; k < blocks; ++k) {
    ones_at[k + 1] += ones_at[k];
    tail_at[k + 1] += tail_at[k];
  }
  const PackedCounts counts{ones_at[blocks], tail_at[blocks]};
  if (counts.tail != tail.size())
    throw std::invalid_argument("pack_chunk: points [" + std::to_string(off) + ", " + std::to_string(off + m) + ") hold " +
                                std::to_string(counts.tail) + " tail points, " + std::to_string(tail.size()) +
                                " tail scalars were given");
  P* dst = reinterpret_cast<P*>(out);
  const PackWriter writer(out);
  static_assert(sizeof(P) % 16 == 0, "a point is whole 16-byte words (a packed point stays 16-byte aligned)");
  tbb::parallel_for(std::size_t(0), blocks, [&](std::size_t k) {
    std::size_t one = ones_at[k], rest = counts.ones + tail_at[k];
    for (std::size_t w = k * kWords; w < std::min(words, k * kWords + kWords); ++w) {
      const P* src = points + off + w * 64;
      for (uint64_t x = word(bits.ones, w); x != 0; x &= x - 1)
        writer.put<sizeof(P)>(dst + one++, src + popcount64((x & (~x + 1)) - 1));
      for (uint64_t x = word(bits.other, w); x != 0; x &= x - 1)
        writer.put<sizeof(P)>(dst + rest++, src + popcount64((x & (~x + 1)) - 1));
    }
    writer.fence();
  });
  uint64_t* ones = reinterpret_cast<uint64_t*>(out + lay.ones);
  std::fill(ones, ones + counts.ones / 64, ~uint64_t(0));
  if (counts.ones % 64 != 0) ones[counts.ones / 64] = (uint64_t(1) << (counts.ones % 64)) - 1;
  constexpr std::size_t kScalars = std::size_t(1) << 16;
  tbb::parallel_for(std::size_t(0), (tail.size() + kScalars - 1) / kScalars, [&](std::size_t k) {
    const std::size_t lo = k * kScalars, n = std::min(kScalars, tail.size() - lo);
    writer.put_bytes(out + lay.scalars + lo * sizeof(S), reinterpret_cast<const char*>(tail.data() + lo), n * sizeof(S));
    writer.fence();
  });
  return counts;
}

namespace {

template <class F>
std::size_t pack_batch_side_of(const SplitBits& bits, std::size_t off, std::size_t m, const QueryScalars<F>& z,
                               char* side, const BatchChunkLayout& lay) {
  const std::size_t w0 = off / 64, words = (m + 63) / 64;
  if (off % 64 != 0 || m == 0 || bits.other.size() != bits.ones.size() || w0 + words > bits.ones.size())
    throw std::invalid_argument("pack_batch_side: points [" + std::to_string(off) + ", " + std::to_string(off + m) +
                                ") are not a chunk of bitmaps of " + std::to_string(bits.ones.size()) + " words");
  if (lay.scalars < lay.other + words * 8 || lay.other < words * 8 || lay.side_bytes < lay.scalars + m * sizeof(F))
    throw std::invalid_argument("pack_batch_side: a side layout too small for " + std::to_string(m) + " points");
  if (!z.covers(off, m))
    throw std::invalid_argument("pack_batch_side: points [" + std::to_string(off) + ", " + std::to_string(off + m) +
                                ") are not all variables of an assignment of " +
                                std::to_string(z.input.size() + z.aux.size()) + " values");
  uint64_t* ones = reinterpret_cast<uint64_t*>(side);
  uint64_t* other = reinterpret_cast<uint64_t*>(side + lay.other);
  // Blocks of words, on the pack arena's threads: each block's first tail rank from a prefix sum.
  constexpr std::size_t kWords = 1024;
  const std::size_t blocks = (words + kWords - 1) / kWords;
  std::vector<std::size_t> first(blocks + 1, 0);
  tbb::parallel_for(std::size_t(0), blocks, [&](std::size_t k) {
    for (std::size_t w = k * kWords; w < std::min(words, k * kWords + kWords); ++w) {
      ones[w] = chunk_word(bits.ones, off, m, w);
      other[w] = chunk_word(bits.other, off, m, w);
      first[k + 1] += std::size_t(popcount64(other[w]));
    }
  });
  for (std::size_t k = 0; k < blocks; ++k) first[k + 1] += first[k];
  F* scalars = reinterpret_cast<F*>(side + lay.scalars);
  tbb::parallel_for(std::size_t(0), blocks, [&](std::size_t k) {
    std::size_t at = first[k];
    for (std::size_t w = k * kWords; w < std::min(words, k * kWords + kWords); ++w)
      for (uint64_t word = other[w]; word != 0; word &= word - 1)
        std::memcpy(scalars + at++, &z.at(off + w * 64 + std::size_t(popcount64((word & (~word + 1)) - 1))), sizeof(F));
  });
  return first[blocks];
}

}  // namespace

std::size_t pack_batch_side(const SplitBits& bits, std::size_t off, std::size_t m, const QueryScalars<Fr>& z, char* side,
                            const BatchChunkLayout& lay) {
  return pack_batch_side_of(bits, off, m, z, side, lay);
}
std::size_t pack_batch_side(const SplitBits& bits, std::size_t off, std::size_t m, const QueryScalars<bn254::Fr>& z,
                            char* side, const BatchChunkLayout& lay) {
  return pack_batch_side_of(bits, off, m, z, side, lay);
}

template <class C>
void tail_gather_twin(std::span<const uint64_t> bitmap, std::size_t lo, std::size_t hi, std::span<const Affine<C>> points,
                      std::span<const typename C::Scalar> z, std::span<const uint32_t> vars,
                      std::vector<Affine<C>>& out_points, std::vector<typename C::Scalar>& out_scalars) {
  std::vector<uint32_t> rank(bitmap.size());
  uint64_t total = 0;
  for (std::size_t t = 0; t < bitmap.size(); ++t) {
    rank[t] = uint32_t(total);
    total += uint64_t(popcount64(bitmap[t]));
  }
  const std::size_t end = std::min<std::size_t>(hi, total);
  out_points.assign(end > lo ? end - lo : 0, Affine<C>::infinity());
  out_scalars.assign(z.empty() ? 0 : out_points.size(), C::Scalar::zero());
  if (out_points.empty()) return;
  tbb::parallel_for(std::size_t(0), bitmap.size(), [&](std::size_t t) {
    tail_gather_word<C>(t, bitmap.data(), rank.data(), lo, end, points.data(), z.empty() ? nullptr : z.data(),
                        vars.empty() ? nullptr : vars.data(), out_points.data(), out_scalars.data());
  });
}

template <class C>
std::vector<Affine<C>> fixed_base_twin(const Affine<C>& base, std::span<const typename C::Scalar> scalars) {
  const std::vector<Affine<C>> table = fixed_base_table(base);
  std::vector<Affine<C>> out(scalars.size());
  tbb::parallel_for(std::size_t(0), scalars.size(),
                    [&](std::size_t i) { out[i] = fixed_base_mul(table.data(), scalars[i]).to_affine(); });
  return out;
}

#define PP_GPU_PROVER_TWINS(C)                                                                                    \
  template void tail_gather_twin<C>(std::span<const uint64_t>, std::size_t, std::size_t, std::span<const Affine<C>>, \
                                    std::span<const C::Scalar>, std::span<const uint32_t>, std::vector<Affine<C>>&,  \
                                    std::vector<C::Scalar>&);                                                     \
  template std::vector<Affine<C>> fixed_base_twin<C>(const Affine<C>&, std::span<const C::Scalar>);               \
  template PackedCounts pack_chunk<C>(const Affine<C>*, const SplitBits&, std::size_t, std::size_t,                \
                                      std::span<const C::Scalar>, char*, const ChunkLayout&);
PP_GPU_PROVER_TWINS(G1Curve)
PP_GPU_PROVER_TWINS(G2Curve)
PP_GPU_PROVER_TWINS(bn254::G1Curve)
PP_GPU_PROVER_TWINS(bn254::G2Curve)

}  // namespace pp::gpu
