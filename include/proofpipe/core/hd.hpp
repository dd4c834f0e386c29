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
