// SPDX-License-Identifier: Apache-2.0 OR MIT
// Kernel bodies of the GPU prover, written once for both sides: the CUDA kernels of
// src/gpu/prover.cu run them per thread, the CPU twins (src/gpu/prover_common.cpp) in loops,
// and CI checks the twins against plain host code.
//
//  * fixed_base_mul (ec/fixed_base.hpp): the synthetic key's points.
//  * tail_gather_word: the "other" half of the split MSM. Each bitmap word's set bits are the
//    points whose scalar is neither 0 nor 1; word_rank[t] (an exclusive prefix sum of the words'
//    popcounts) gives each its rank in the tail, and ranks in [lo, hi) are copied — point and
//    scalar — to a dense piece that the MSM then takes. The scalar is z[vars[p]] (A and B
//    queries: the variable of point p) or z[p] (L: point p is aux variable p). Resident SRS,
//    or a batch's shared chunk (z null: the points alone; the side brings the tail's scalars
//    dense). A lone streamed partition's chunk arrives packed (pack_chunk), its tail already dense.
#pragma once

#include <cstdint>

#include "proofpipe/core/hd.hpp"
#include "proofpipe/ec/curve.hpp"
#include "proofpipe/ec/fixed_base.hpp"

namespace pp::gpu {

PP_HD inline int popcount64(uint64_t x) {
#if PP_DEVICE_CODE
  return __popcll(x);
#else
  return __builtin_popcountll(x);
#endif
}

// Word t of the tail bitmap over points [0, n): copies the entries of tail rank in [lo, hi).
template <class C>
PP_HD void tail_gather_word(uint64_t t, const uint64_t* bitmap, const uint32_t* word_rank, uint64_t lo, uint64_t hi,
                            const Affine<C>* points, const typename C::Scalar* z, const uint32_t* vars,
                            Affine<C>* out_points, typename C::Scalar* out_scalars) {
  uint64_t word = bitmap[t];
  uint64_t rank = word_rank[t];
  if (word == 0 || rank >= hi || rank + uint64_t(popcount64(word)) <= lo) return;
  while (word != 0) {
    const int bit = popcount64((word & (~word + 1)) - 1);  // index of the lowest set bit
    word &= word - 1;
    if (rank >= lo && rank < hi) {
      const uint64_t p = t * 64 + uint64_t(bit);
      out_points[rank - lo] = points[p];
      if (z) out_scalars[rank - lo] = z[vars ? vars[p] : p];
    }
    ++rank;
  }
}

}  // namespace pp::gpu
