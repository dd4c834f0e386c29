/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* What the two ABI test callers share (tests/supraseal/abi_caller.c for SupraSeal C2's ABI,
 * tests/cuzk/cuzk_caller.c for Curio's fork of it): the ABI's types and SRS functions, declared
 * here independently of the libraries' own headers (so that their layout is checked by a second
 * declaration), .ppw witnesses read into bellperson's form (Montgomery-form scalars), randomisers,
 * proofs compressed for `proofpipe verify`, and the error paths both ABIs must reject, run
 * through whichever prove function a caller passes. */
#ifndef PROOFPIPE_TESTS_ABI_SUPPORT_H
#define PROOFPIPE_TESTS_ABI_SUPPORT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ----- the types, as supraseal-c2's src/lib.rs declares them (the fork keeps them) ---------- */

/* sppark::Error: { code: i32, str: Option<NonNull<i8>> }; the caller frees str with free(). */
typedef struct {
  int code;
  char* message;
} RustError;

typedef struct {
  const void* ptr;
} SRS;

/* blst's types, as bellperson passes them (blstrs wraps them). */
typedef struct {
  uint64_t l[4];
} blst_fr;
typedef struct {
  uint64_t l[6];
} blst_fp;
typedef struct {
  blst_fp fp[2];
} blst_fp2;
typedef struct {
  blst_fp x, y;
} blst_p1_affine;
typedef struct {
  blst_fp2 x, y;
} blst_p2_affine;
typedef struct {
  blst_p1_affine a;
  blst_p2_affine b;
  blst_p1_affine c;
} groth16_proof;

/* Assignment<Scalar> (#[repr(C)]): usize fields are size_t, *const usize densities. */
typedef struct {
  const uint64_t* a_aux_density;
  size_t a_aux_bit_len;
  size_t a_aux_popcount;
  const uint64_t* b_inp_density;
  size_t b_inp_bit_len;
  size_t b_inp_popcount;
  const uint64_t* b_aux_density;
  size_t b_aux_bit_len;
  size_t b_aux_popcount;
  const blst_fr* a;
  const blst_fr* b;
  const blst_fr* c;
  size_t abc_size;
  const blst_fr* inp_assignment_data;
  size_t inp_assignment_size;
  const blst_fr* aux_assignment_data;
  size_t aux_assignment_size;
} Assignment;

/* The SRS functions: the same in both ABIs. */
RustError create_SRS(SRS* ret, const char* srs_path, bool cache);
void evict_SRS(const SRS* by_ref);
void drop_SRS(const SRS* by_ref);
SRS clone_SRS(const SRS* by_ref);

_Static_assert(sizeof(Assignment) == 17 * 8, "Assignment is 17 eight-byte fields");
_Static_assert(sizeof(groth16_proof) == 384, "groth16_proof is 384 bytes");

/* ----- support ------------------------------------------------------------------------------ */

extern const char* g_prog; /* the program's name, for messages */
extern int failures;       /* checks that failed */
extern int error_checks;   /* error paths checked */

void fail(const char* what);
void* xmalloc(size_t n);
double now_s(void);
double median_of(double* values, int n); /* sorts values */

/* Must run before read_ppw / random_scalar. */
void init_montgomery(void);

typedef struct {
  uint64_t rows, inputs, aux;
  blst_fr *a, *b, *c, *input, *auxv;
  uint64_t *a_aux_density, *b_inp_density, *b_aux_density;
} witness;
witness read_ppw(const char* path); /* exits with 2 on a bad file */
void free_witness(witness* w);
Assignment assignment_of(const witness* w);

uint64_t splitmix64(uint64_t* state);
blst_fr random_scalar(uint64_t* state); /* uniform below r, Montgomery form */

/* bellperson's 192-byte compressed proof. */
void compress_proof(uint8_t out[192], const groth16_proof* p);
/* Writes n proofs compressed to path; false on an I/O error. */
bool write_compressed(const char* path, const groth16_proof* proofs, size_t n);

/* e.code == 0 (frees the message); otherwise prints it, counts a failure and returns false. */
bool require_ok(RustError e, const char* what);
/* e must be a failure with want_code (0: any) whose message contains needle (NULL: any). */
void expect_failure(const char* name, RustError e, int want_code, const char* needle);

/* One prove call of either ABI over a batch. */
typedef struct {
  const Assignment* provers;
  size_t n;
  const blst_fr* r_s;
  const blst_fr* s_s;
  const SRS* srs;
} batch;
typedef RustError (*prove_fn)(const Assignment* provers, size_t n, const blst_fr* r_s, const blst_fr* s_s,
                              groth16_proof* proofs, const SRS* srs);
/* One call into a buffer pre-filled with `fill`, so that bytes the library leaves alone show
 * up as differences between calls. */
RustError prove_batch(prove_fn prove, const batch* job, groth16_proof* out, uint8_t fill);

/* A = alpha + sum(a_i A_i) + r delta and B = beta + sum(b_i B_i) + s delta: with r fixed, A must
 * not depend on s while B does, and the other way round (four calls). */
void check_randomisers(prove_fn prove, const batch* good, uint64_t* state);
/* The bad calls both ABIs must answer with EINVAL (or errno) and a message naming the field:
 * NULL pointers, sizes and popcounts that disagree with the key, unreduced scalars, an
 * unsatisfied row, bad key paths, NULL handles. proofpipe's libraries only (SupraSeal and the
 * fork assert or dereference on such input). */
void run_error_paths(prove_fn prove, const char* params, const char* witness_path, const batch* good,
                     groth16_proof* out);

#endif /* PROOFPIPE_TESTS_ABI_SUPPORT_H */
