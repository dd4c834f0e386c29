// SPDX-License-Identifier: Apache-2.0 OR MIT
// One host/device annotation for code that CUDA and the C++ compiler both build.
#pragma once

#if defined(__CUDACC__)
#define PP_HD __host__ __device__
#define PP_INLINE __forceinline__
#else
#define PP_HD
#define PP_INLINE inline __attribute__((always_inline))
#endif

// True while compiling device code (the PTX paths); the portable paths serve the host.
#if defined(__CUDA_ARCH__)
#define PP_DEVICE_CODE 1
#else
#define PP_DEVICE_CODE 0
#endif

// Full unrolling of short fixed-count loops (limb loops). nvcc's host pass knows neither
// spelling without a warning, so it gets none (it only builds host code of the GPU programs).
#if defined(__CUDA_ARCH__)
#define PP_UNROLL _Pragma("unroll")
#elif defined(__CUDACC__)
#define PP_UNROLL
#else
#define PP_UNROLL _Pragma("GCC unroll 16")
#endif
