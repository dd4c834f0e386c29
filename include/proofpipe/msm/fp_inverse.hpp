// SPDX-License-Identifier: Apache-2.0 OR MIT
// A variable-time Fp inversion for the CPU MSM's batches (Bernstein–Yang divsteps, 62 at a time).
#pragma once

#include "proofpipe/ff/bls12_381.hpp"

namespace pp::msm_inverse {

// 1/a in Fp (Montgomery form in and out, like Fp::inverse()); zero gives zero. Its running time
// depends on a: for values that are not secret, or whose timing the caller already exposes (the
// MSM's bucket sums, whose memory access already depends on the scalars). About 6x faster than
// Fermat's exponentiation here.
Fp inverse_vartime(const Fp& a);

}  // namespace pp::msm_inverse
