// SPDX-License-Identifier: Apache-2.0 OR MIT
// The GPU MSM and batch addition for BN254's G2 (msm_impl.cuh has the kernels and why they are split).

#include "msm_impl.cuh"

namespace pp::gpu {
PP_GPU_MSM_INSTANTIATE(bn254::G2Curve)
}  // namespace pp::gpu
