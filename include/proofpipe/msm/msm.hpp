// SPDX-License-Identifier: Apache-2.0 OR MIT
// Multi-scalar multiplication (Pippenger, signed digits) and bitmap batch addition on the CPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "proofpipe/ec/bls12_381.hpp"
#include "proofpipe/ec/bn254.hpp"

namespace pp {

// The scalar field of curve C's group (BLS12-381's Fr or BN254's).
template <class C>
using ScalarOf = typename C::Scalar;

struct MsmOptions {
  // Window width c in bits, 1..20 (signed digits: 2^(c-1) buckets per window); 0 chooses
  // msm_default_window(n). Anything else is std::invalid_argument.
  int window_bits = 0;
};

// The window width that msm() uses for n G1 points (either curve) when MsmOptions::window_bits is 0: a table
// tuned on G1, from 2 (n < 4) through 13 (2^16..2^18) to 16 (n >= 786432).
int msm_default_window(std::size_t n);
// The same for G2 (msm() on G2 points): G1's table, except 11 from 2048 up to 12288 points.
int msm_default_window_g2(std::size_t n);

// sum_i scalars[i] · points[i], on BLS12-381's or BN254's G1 or G2. Scalars are the curve's Fr in Montgomery form (as everywhere in the
// library); points may include infinity. Internally a GLV split (msm/glv.hpp) turns it into an
// MSM over 2n points with 128-bit scalars; the window applies to those. points.size() must equal scalars.size()
// (std::invalid_argument otherwise). Multithreaded with oneTBB: it uses the calling thread's
// task arena, so a caller limits the threads with a tbb::task_arena.
template <class C>
Jacobian<C> msm(std::span<const Affine<C>> points, std::span<const ScalarOf<C>> scalars, const MsmOptions& options = {});

// One term of msm_sum: points.size() must equal scalars.size().
template <class C>
struct MsmPart {
  std::span<const Affine<C>> points;
  std::span<const ScalarOf<C>> scalars;
};

// sum over the parts of msm(part.points, part.scalars), as ONE MSM over their concatenation
// (the window chosen for the total count, one bucket reduction per window): cheaper than
// separate MSMs when only the sum is wanted (a proof's C takes H, L and r·B_G1 together).
template <class C>
Jacobian<C> msm_sum(std::span<const MsmPart<C>> parts, const MsmOptions& options = {});

// sum of points[i] for every i whose bit is set in `bitmap` (64-bit words, LSB first: bit i is
// word i/64, bit i%64). bitmap must hold at least ceil(points.size()/64) words
// (std::invalid_argument otherwise); bits past the last point and extra words are ignored.
// The "scalar is 1" half of the split MSM. Multithreaded.
template <class C>
Jacobian<C> batch_add(std::span<const Affine<C>> points, std::span<const uint64_t> bitmap);

// The naive reference: sum of scalar_mul(points[i], scalars[i]). For tests only.
template <class C>
Jacobian<C> msm_naive(std::span<const Affine<C>> points, std::span<const ScalarOf<C>> scalars);

#define PP_MSM_DECLARE(C)                                                                                     \
  extern template Jacobian<C> msm(std::span<const Affine<C>>, std::span<const ScalarOf<C>>, const MsmOptions&); \
  extern template Jacobian<C> msm_sum(std::span<const MsmPart<C>>, const MsmOptions&);                        \
  extern template Jacobian<C> batch_add(std::span<const Affine<C>>, std::span<const uint64_t>);               \
  extern template Jacobian<C> msm_naive(std::span<const Affine<C>>, std::span<const ScalarOf<C>>);
PP_MSM_DECLARE(G1Curve)
PP_MSM_DECLARE(G2Curve)
PP_MSM_DECLARE(bn254::G1Curve)
PP_MSM_DECLARE(bn254::G2Curve)
#undef PP_MSM_DECLARE

}  // namespace pp
