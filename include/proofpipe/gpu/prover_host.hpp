// SPDX-License-Identifier: Apache-2.0 OR MIT
// The GPU prover's CPU side (always built, in proofpipe_core; CI tests it): the split MSM's
// classes of a partition's scalars, a streamed SRS chunk's layout and host-side packing, and the
// CPU twins of the prover's own kernels. The device side is gpu/prover.hpp.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "proofpipe/ec/bls12_381.hpp"
#include "proofpipe/ec/bn254.hpp"

namespace pp::gpu {

// The split MSM's classes of a query's scalars: bitmaps over the points (LSB first) of the
// scalars equal to 1 and of those neither 0 nor 1 (the tail). Point p has scalar z[vars[p]],
// or z[offset + p] when vars is empty, where z = input ‖ aux. Multithreaded. Every function of
// this header over scalars has one overload per scalar field (BLS12-381's Fr, BN254's).
struct SplitBits {
  std::vector<uint64_t> ones, other;
  std::size_t ones_count = 0, other_count = 0;
};
SplitBits classify(std::span<const Fr> input, std::span<const Fr> aux, std::span<const uint32_t> vars,
                   std::size_t offset, std::size_t points);
SplitBits classify(std::span<const bn254::Fr> input, std::span<const bn254::Fr> aux, std::span<const uint32_t> vars,
                   std::size_t offset, std::size_t points);
// The same in two steps, so that a partition's three queries read the assignment once (at 2^26
// each classify pass read 2 GiB of scalars): the classes of every variable of z = input ‖ aux as
// bitmaps over z, then each query's bits selected from them. classify(...) ==
// select_split(classify_z(input, aux), vars, offset, points).
struct ZClasses {
  std::vector<uint64_t> ones, other;  // bit v: z[v] == 1, z[v] not in {0, 1}
  std::size_t size = 0;               // variables
};
// copy_to (input.size() + aux.size() scalars, or null): also copies z = input ‖ aux there in the
// same pass, as a resident SRS's staging copy of the assignment needs (one read of z, not two).
ZClasses classify_z(std::span<const Fr> input, std::span<const Fr> aux, Fr* copy_to = nullptr);
ZClasses classify_z(std::span<const bn254::Fr> input, std::span<const bn254::Fr> aux, bn254::Fr* copy_to = nullptr);
SplitBits select_split(const ZClasses& z, std::span<const uint32_t> vars, std::size_t offset, std::size_t points);

// The scalars of a split query's points, read in place from the assignment z = input ‖ aux:
// point p's is z[vars[p]] (A and B: vars maps the query's points to variables) or z[offset + p]
// (L: vars empty).
template <class F>
struct QueryScalars {
  std::span<const F> input, aux;
  std::span<const uint32_t> vars;
  std::size_t offset = 0;
  std::size_t variable(std::size_t p) const { return vars.empty() ? offset + p : vars[p]; }
  const F& at(std::size_t p) const {
    const std::size_t v = variable(p);
    return v < input.size() ? input[v] : aux[v - input.size()];
  }
  // Whether each of points [off, off + m) has a variable of z.
  bool covers(std::size_t off, std::size_t m) const {
    const std::size_t z = input.size() + aux.size();
    if (vars.empty()) return offset + off + m <= z;
    if (off + m > vars.size()) return false;
    for (std::size_t p = off; p < off + m; ++p)
      if (vars[p] >= z) return false;
    return true;
  }
};

// The tail's scalars in point order (z of each point whose bit is set in bits.other), as they
// cross to the device with a streamed SRS. Multithreaded.
std::vector<Fr> tail_scalars(const SplitBits& bits, std::span<const Fr> input, std::span<const Fr> aux,
                             std::span<const uint32_t> vars, std::size_t offset);
std::vector<bn254::Fr> tail_scalars(const SplitBits& bits, std::span<const bn254::Fr> input,
                                    std::span<const bn254::Fr> aux, std::span<const uint32_t> vars, std::size_t offset);

// Streamed SRS: how one split MSM's tail moves. The query's points cross in chunks of `chunk`
// points (a multiple of 64, or all of them in one chunk); set_bits_per_chunk gives the number of
// tail points (or of 1s, from the other bitmap) in each chunk. On the device each chunk's tail is
// gathered into a buffer of `capacity` entries, and the buffer goes
// to the MSM whenever it is full and after the last chunk, so the MSMs run on full buffers
// rather than one small MSM per chunk. tail_pieces lists the gathers in order: ranks [lo, hi)
// of chunk `chunk`'s tail go to buffer positions [at, at + hi - lo); `flush`: the MSM takes
// buffer entries [0, at + hi - lo) after this piece. Throws std::invalid_argument for a chunk
// that is neither a positive multiple of 64 nor all the points, or a zero capacity.
std::vector<std::size_t> set_bits_per_chunk(std::span<const uint64_t> bitmap, std::size_t points, std::size_t chunk);
struct TailPiece {
  std::size_t chunk = 0, lo = 0, hi = 0, at = 0;
  bool flush = false;
};
std::vector<TailPiece> tail_pieces(std::span<const std::size_t> counts, std::size_t capacity);

// Streamed SRS: one chunk's buffer (host pack buffer and device chunk buffer alike) for m points
// of point_bytes each: the points from 0, a bitmap of m bits at `ones`, m scalars at `scalars`,
// each section 256-byte aligned; `bytes` in all. The packer writes it, the prover reads it and the
// planner sizes the chunk buffers with it.
struct ChunkLayout {
  static constexpr uint64_t kAlign = 256;
  static constexpr uint64_t kScalarBytes = 32;  // either curve's Fr
  static_assert(sizeof(Fr) == kScalarBytes && sizeof(bn254::Fr) == kScalarBytes);
  uint64_t ones = 0, scalars = 0, bytes = 0;
  static constexpr ChunkLayout of(uint64_t m, uint64_t point_bytes) {
    const auto align = [](uint64_t x) { return (x + kAlign - 1) / kAlign * kAlign; };
    ChunkLayout c;
    c.ones = align(m * point_bytes);
    c.scalars = c.ones + align((m + 63) / 64 * 8);
    c.bytes = c.scalars + m * kScalarBytes;
    return c;
  }
};

// The gather buffer (compute.gather) as a tail MSM piece of m points uses it: first the word ranks
// of the query's tail bitmap (rank_words u32; resident SRS only, 0 when streamed), then the
// gathered points, then their scalars, each section 256-byte aligned. The prover cuts the buffer
// so and the planner sizes it with it (a tiny query's alignment is most of its bytes).
struct GatherLayout {
  uint64_t points = 0, scalars = 0, bytes = 0;
  static constexpr GatherLayout of(uint64_t rank_words, uint64_t m, uint64_t point_bytes) {
    const auto align = [](uint64_t x) { return (x + ChunkLayout::kAlign - 1) / ChunkLayout::kAlign * ChunkLayout::kAlign; };
    GatherLayout g;
    g.points = align(rank_words * 4);
    g.scalars = g.points + align(m * point_bytes);
    g.bytes = g.scalars + m * ChunkLayout::kScalarBytes;
    return g;
  }
  // The most points, at most `limit`, a buffer of `bytes` holds in this layout (0 if none).
  static constexpr uint64_t capacity(uint64_t bytes, uint64_t rank_words, uint64_t point_bytes, uint64_t limit) {
    uint64_t m = std::min(limit, bytes / (point_bytes + ChunkLayout::kScalarBytes));
    while (m > 0 && of(rank_words, m, point_bytes).bytes > bytes) --m;
    return m;
  }
};

// Streamed SRS shared by a batch of partitions (MemoryPlan::split_batch): a chunk of m points of
// a split query crosses once for the whole batch, as it is in the pinned host SRS (no packing: the
// union of the batch's non-zero points is most of the chunk), and beside it each partition's side:
// its 1s and tail bitmap words over the chunk (bits past m cleared) and the chunk's tail scalars in
// tail order. In the chunk buffer the points start at 0 and side i at sides + i·side_bytes; in the
// pinned pack buffer the sides alone, side i at i·side_bytes. Within a side: the 1s' words at 0,
// the tail's words at `other`, the scalars at `scalars` (room for m). Every section 256-byte aligned.
struct BatchChunkLayout {
  uint64_t sides = 0, side_bytes = 0, other = 0, scalars = 0, bytes = 0;
  static constexpr BatchChunkLayout of(uint64_t m, uint64_t k, uint64_t point_bytes) {
    const auto align = [](uint64_t x) { return (x + ChunkLayout::kAlign - 1) / ChunkLayout::kAlign * ChunkLayout::kAlign; };
    BatchChunkLayout b;
    const uint64_t words = align((m + 63) / 64 * 8);
    b.other = words;
    b.scalars = 2 * words;
    b.side_bytes = align(b.scalars + m * ChunkLayout::kScalarBytes);
    b.sides = align(m * point_bytes);
    b.bytes = b.sides + k * b.side_bytes;
    return b;
  }
  uint64_t sides_bytes(uint64_t k) const { return k * side_bytes; }
};
// Writes one partition's side of chunk [off, off + m) (off a multiple of 64) at `side`: its bitmap
// words and the chunk's tail scalars, each read in place from z (no tail copy is kept between a
// partition's prepare and its passes). Returns the tail count. std::invalid_argument for a chunk
// outside the bitmaps, points without a variable of z, or a layout too small. Multithreaded.
std::size_t pack_batch_side(const SplitBits& bits, std::size_t off, std::size_t m, const QueryScalars<Fr>& z, char* side,
                            const BatchChunkLayout& lay);
std::size_t pack_batch_side(const SplitBits& bits, std::size_t off, std::size_t m, const QueryScalars<bn254::Fr>& z,
                            char* side, const BatchChunkLayout& lay);

// Streamed SRS, host-side compaction: what of chunk [off, off + m) of a split query crosses PCIe,
// packed into `out` at the offsets of ChunkLayout::of(m, sizeof(Affine<C>)): from `out`, the
// points whose scalar is 1 (point order), then the tail's points (point order); at lay.ones a
// bitmap with the first `ones` bits set (the batch addition's input); at lay.scalars the chunk's
// tail scalars `tail` (its slice of tail_scalars). Points whose scalar is 0 stay on the host, so
// on the 0/1-heavy witnesses of PoRep about half the bytes do not travel. `off` is a multiple of
// 64. Throws std::invalid_argument for a chunk outside the bitmaps or a tail of another length
// than the bitmap's count. Multithreaded; the CPU side is all there is (no kernel to twin).
struct PackedCounts {
  std::size_t ones = 0, tail = 0;
  std::size_t points() const { return ones + tail; }
  std::size_t ones_words() const { return (ones + 63) / 64; }
};
template <class C>
PackedCounts pack_chunk(const Affine<C>* points, const SplitBits& bits, std::size_t off, std::size_t m,
                        std::span<const typename C::Scalar> tail, char* out, const ChunkLayout& lay);

// CPU twins of the prover's kernels: the tail gather (ranks [lo, hi) of the "other" bitmap
// over `points`; with z empty the points alone, as a batch's shared chunk gathers them, its
// scalars already in tail order), and fixed-base multiplication of `base` by every scalar.
template <class C>
void tail_gather_twin(std::span<const uint64_t> bitmap, std::size_t lo, std::size_t hi, std::span<const Affine<C>> points,
                      std::span<const typename C::Scalar> z, std::span<const uint32_t> vars,
                      std::vector<Affine<C>>& out_points, std::vector<typename C::Scalar>& out_scalars);
template <class C>
std::vector<Affine<C>> fixed_base_twin(const Affine<C>& base, std::span<const typename C::Scalar> scalars);

}  // namespace pp::gpu
