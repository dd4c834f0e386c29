/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* What SupraSeal C2's C ABI and Curio's fork of it (cuzk) share, as the Rust crates declare it:
 * the types and the SRS functions; supraseal_c2.h and cuzk_c2.h declare the prove functions of
 * each (the fork's generate_groth16_proofs_c takes two more arguments). Private to the libraries and
 * their fuzz target (the test callers declare everything themselves, on purpose). */
#ifndef PROOFPIPE_SUPRASEAL_ABI_TYPES_H
#define PROOFPIPE_SUPRASEAL_ABI_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(PROOFPIPE_BUILDING_SUPRASEAL)
#define PP_SUPRASEAL_API __attribute__((visibility("default")))
#else
#define PP_SUPRASEAL_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Returned by value. code 0 is success; otherwise an errno value (EINVAL, ENOMEM, ENOENT, ...)
 * and `message`, allocated with malloc, which the caller frees with free (the Rust crate's
 * error type does so when it is dropped). message is NULL on success. */
typedef struct RustError {
  int code;
  char* message;
} RustError;

/* A proving key. ptr is the library's handle (reference-counted), NULL for "no key". */
typedef struct SRS {
  const void* ptr;
} SRS;

/* blst's scalar: Montgomery form x * 2^256 mod r, 4 little-endian u64 limbs. */
typedef struct blst_fr {
  uint64_t l[4];
} blst_fr;
/* blst's base field element: Montgomery form x * 2^384 mod p, 6 little-endian u64 limbs. */
typedef struct blst_fp {
  uint64_t l[6];
} blst_fp;
/* c0 + c1 * u, stored c0 first. */
typedef struct blst_fp2 {
  blst_fp fp[2];
} blst_fp2;
/* Affine points; the point at infinity is all zero. */
typedef struct blst_p1_affine {
  blst_fp x, y;
} blst_p1_affine;
typedef struct blst_p2_affine {
  blst_fp2 x, y;
} blst_p2_affine;

typedef struct groth16_proof {
  blst_p1_affine a;
  blst_p2_affine b;
  blst_p1_affine c;
} groth16_proof;

/* One circuit (partition), as bellperson's ProvingAssignment holds it. Density bit i is bit
 * i % 64 of word i / 64; a bit vector of bit_len bits spans ceil(bit_len / 64) words and
 * popcount is the number of its set bits. */
typedef struct Assignment {
  const uint64_t* a_aux_density;
  size_t a_aux_bit_len;
  size_t a_aux_popcount;

  const uint64_t* b_inp_density;
  size_t b_inp_bit_len;
  size_t b_inp_popcount;

  const uint64_t* b_aux_density;
  size_t b_aux_bit_len;
  size_t b_aux_popcount;

  const blst_fr* a; /* abc_size evaluations each */
  const blst_fr* b;
  const blst_fr* c;
  size_t abc_size;

  const blst_fr* inp_assignment_data;
  size_t inp_assignment_size;

  const blst_fr* aux_assignment_data;
  size_t aux_assignment_size;
} Assignment;

/* Loads a bellperson .params file into *ret. cache: keep the key in a small process-wide cache
 * keyed by path, so that another create_SRS of the same path shares it. */
PP_SUPRASEAL_API RustError create_SRS(SRS* ret, const char* srs_path, bool cache);
/* Drops the cache's reference (if any) and the key's device copies; the handle stays valid. */
PP_SUPRASEAL_API void evict_SRS(const SRS* by_ref);
/* Releases one reference. */
PP_SUPRASEAL_API void drop_SRS(const SRS* by_ref);
/* Adds one reference and returns the same handle. */
PP_SUPRASEAL_API SRS clone_SRS(const SRS* by_ref);

/* proofpipe's own addition, in both libraries (SupraSeal and the fork have no such call): the
 * process-wide engine's counters since it was made — partitions proved, milliseconds some GPU ran
 * kernels, and the GPUs it proves on (0: the CPU) — for a caller that wants GPU busy over an
 * interval (two readings and a clock). Any pointer may be NULL. 0 on success, -1 when the engine
 * cannot be made (PROOFPIPE_GPUS and friends are wrong). */
PP_SUPRASEAL_API int proofpipe_engine_counters(uint64_t* partitions, double* ms_gpu_busy, uint32_t* gpus);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PROOFPIPE_SUPRASEAL_ABI_TYPES_H */
