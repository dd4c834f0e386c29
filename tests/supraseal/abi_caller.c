/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* abi_caller: calls SupraSeal C2's C ABI the way the Rust crate supraseal-c2 does, from C11,
 * against whichever library it is linked with (libproofpipe_supraseal.so, or SupraSeal's own).
 *
 * It declares the ABI itself (no proofpipe header; the shared types in abi_support.h), reads
 * .ppw witnesses (docs/FORMATS.md), converts their canonical scalars to Montgomery form (what
 * bellperson's blstrs::Scalar holds), proves them in one generate_groth16_proofs_c call, times
 * it, checks that every proof byte is written and that repeated and concurrent calls agree, and
 * writes the proofs in bellperson's 192-byte compressed form for `proofpipe verify`.
 *
 *   abi_caller --params P --witness W [--witness W ...] [--out proofs.bin] [--raw-out F] [--seed N]
 *              [--repeat K] [--threads T] [--cache] [--check-rs] [--error-paths]
 *
 * --raw-out writes the proofs as the library returned them (384-byte groth16_proof structs).
 * --check-rs checks that A depends on r_s alone and B on s_s alone (four more calls).
 * --error-paths also makes bad calls (NULL pointers, wrong sizes and popcounts, a bad path, ...)
 * that must each return a non-zero code with a message: proofpipe's library only (SupraSeal
 * asserts or dereferences on such input). Output: key=value lines; exit 0 iff every check held. */
#define _GNU_SOURCE /* dladdr, pthread_barrier_t */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "abi_support.h"

/* ----- the prove call, as supraseal-c2's src/lib.rs declares it ----------------------------- */

RustError generate_groth16_proofs_c(const void* provers, size_t num_circuits, const void* r_s, const void* s_s,
                                    void* proofs, const SRS* srs);

static RustError upstream_prove(const Assignment* provers, size_t n, const blst_fr* r_s, const blst_fr* s_s,
                                groth16_proof* proofs, const SRS* srs) {
  return generate_groth16_proofs_c(provers, n, r_s, s_s, proofs, srs);
}

static RustError prove(const batch* job, groth16_proof* out, uint8_t fill) {
  return prove_batch(upstream_prove, job, out, fill);
}

/* ----- concurrent calls --------------------------------------------------------------------- */

typedef struct {
  const batch* job;
  pthread_barrier_t* start;
  groth16_proof* out;
  uint8_t fill;
  RustError result;
  double seconds;
} thread_arg;

static void* thread_main(void* p) {
  thread_arg* t = p;
  pthread_barrier_wait(t->start);
  const double t0 = now_s();
  t->result = prove(t->job, t->out, t->fill);
  t->seconds = now_s() - t0;
  return NULL;
}

/* ----- main --------------------------------------------------------------------------------- */

static void usage(void) {
  fprintf(stderr,
          "usage: abi_caller --params P --witness W [--witness W ...] [--out proofs.bin] [--raw-out F] [--seed N]\n"
          "                  [--repeat K] [--threads T] [--cache] [--check-rs] [--error-paths]\n");
  exit(2);
}

int main(int argc, char** argv) {
  g_prog = "abi_caller";
  init_montgomery();
  const char* params = NULL;
  const char* out_path = NULL;
  const char* raw_path = NULL;
  const char** witness_paths = xmalloc((size_t)argc * sizeof(char*));
  size_t n = 0;
  uint64_t seed = 0;
  bool seeded = false, cache = false, error_paths = false, check_rs = false;
  int repeat = 1, threads = 0;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const bool has_value = i + 1 < argc;
    if (!strcmp(a, "--params") && has_value) params = argv[++i];
    else if (!strcmp(a, "--witness") && has_value) witness_paths[n++] = argv[++i];
    else if (!strcmp(a, "--out") && has_value) out_path = argv[++i];
    else if (!strcmp(a, "--raw-out") && has_value) raw_path = argv[++i];
    else if (!strcmp(a, "--seed") && has_value) seed = strtoull(argv[++i], NULL, 0), seeded = true;
    else if (!strcmp(a, "--repeat") && has_value) repeat = atoi(argv[++i]);
    else if (!strcmp(a, "--threads") && has_value) threads = atoi(argv[++i]);
    else if (!strcmp(a, "--cache")) cache = true;
    else if (!strcmp(a, "--error-paths")) error_paths = true;
    else if (!strcmp(a, "--check-rs")) check_rs = true;
    else usage();
  }
  if (!params || n == 0 || repeat < 1 || threads < 0 || threads > 64) usage();

  /* Which library answers (the name of the object that defines the entry point). */
  const char* lib = "unknown";
  Dl_info info;
  union {
    RustError (*f)(const void*, size_t, const void*, const void*, void*, const SRS*);
    void* p;
  } entry = {generate_groth16_proofs_c};
  if (dladdr(entry.p, &info) && info.dli_fname) {
    const char* slash = strrchr(info.dli_fname, '/');
    lib = slash ? slash + 1 : info.dli_fname;
  }

  /* Inputs: witnesses, assignments, randomisers. */
  witness* ws = xmalloc(n * sizeof(witness));
  Assignment* provers = xmalloc(n * sizeof(Assignment));
  blst_fr* r_s = xmalloc(n * sizeof(blst_fr));
  blst_fr* s_s = xmalloc(n * sizeof(blst_fr));
  if (!seeded) seed = (uint64_t)time(NULL) ^ ((uint64_t)(now_s() * 1e9) << 20);
  uint64_t state = seed;
  for (size_t i = 0; i < n; ++i) {
    ws[i] = read_ppw(witness_paths[i]);
    provers[i] = assignment_of(&ws[i]);
    r_s[i] = random_scalar(&state);
    s_s[i] = random_scalar(&state);
  }

  double t0 = now_s();
  SRS srs = {NULL};
  if (!require_ok(create_SRS(&srs, params, cache), "create_SRS")) return 1;
  printf("abi_caller lib=%s op=create_SRS cache=%d load_s=%.3f\n", lib, cache ? 1 : 0, now_s() - t0);
  /* Prove through a clone, as bellperson's parameters do; drop both at the end. */
  SRS clone = clone_SRS(&srs);

  const batch job = {provers, n, r_s, s_s, &clone};
  const size_t bytes = n * sizeof(groth16_proof);
  groth16_proof* reference = xmalloc(bytes);
  groth16_proof* run = xmalloc(bytes);

  t0 = now_s();
  if (!require_ok(prove(&job, reference, 0xa5), "generate_groth16_proofs_c (warm-up)")) return 1;
  const double warmup_s = now_s() - t0;

  double* times = xmalloc((size_t)repeat * sizeof(double));
  int identical = 1;
  for (int k = 0; k < repeat; ++k) {
    t0 = now_s();
    const RustError e = prove(&job, run, (uint8_t)(0x5a + k));
    times[k] = now_s() - t0;
    if (!require_ok(e, "generate_groth16_proofs_c")) return 1;
    if (memcmp(run, reference, bytes) != 0) identical = 0;
  }
  if (!identical) fail("repeated calls with the same r, s gave different bytes (some proof bytes not written?)");
  const double median = median_of(times, repeat);
  printf("abi_caller lib=%s partitions=%zu rows=%llu runs=%d warmup_s=%.3f median_s=%.3f min_s=%.3f max_s=%.3f "
         "identical=%d\n",
         lib, n, (unsigned long long)ws[0].rows, repeat, warmup_s, median, times[0], times[repeat - 1], identical);

  /* Concurrent calls on the shared key: each must succeed with the same proofs. */
  if (threads > 0) {
    pthread_t* tid = xmalloc((size_t)threads * sizeof(pthread_t));
    thread_arg* args = xmalloc((size_t)threads * sizeof(thread_arg));
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)threads);
    t0 = now_s();
    for (int t = 0; t < threads; ++t) {
      args[t].job = &job;
      args[t].start = &start;
      args[t].out = xmalloc(bytes);
      args[t].fill = (uint8_t)(0x11 * (t + 1));
      if (pthread_create(&tid[t], NULL, thread_main, &args[t]) != 0) {
        fail("pthread_create");
        return 1;
      }
    }
    int all_ok = 1, same = 1;
    double slowest = 0;
    for (int t = 0; t < threads; ++t) {
      pthread_join(tid[t], NULL);
      if (!require_ok(args[t].result, "generate_groth16_proofs_c (thread)")) all_ok = 0;
      else if (memcmp(args[t].out, reference, bytes) != 0) same = 0;
      if (args[t].seconds > slowest) slowest = args[t].seconds;
      free(args[t].out);
    }
    const double wall = now_s() - t0;
    pthread_barrier_destroy(&start);
    if (!same) fail("concurrent calls gave proofs different from the sequential call's");
    printf("abi_caller lib=%s threads=%d partitions=%zu wall_s=%.3f slowest_call_s=%.3f all_ok=%d identical=%d\n", lib,
           threads, n, wall, slowest, all_ok, same);
    free(tid);
    free(args);
  }

  if (check_rs) check_randomisers(upstream_prove, &job, &state);

  if (error_paths) {
    run_error_paths(upstream_prove, params, witness_paths[0], &job, run);
    /* The library still proves after the bad calls. */
    if (require_ok(prove(&job, run, 0x33), "generate_groth16_proofs_c (after the error paths)") &&
        memcmp(run, reference, bytes) != 0)
      fail("proofs after the error paths differ");
    printf("abi_caller lib=%s error_paths=%d\n", lib, error_checks);
  }

  if (out_path) {
    if (!write_compressed(out_path, reference, n)) fail("writing --out");
    printf("abi_caller out=%s proofs=%zu seed=%llu\n", out_path, n, (unsigned long long)seed);
  }

  if (raw_path) {
    FILE* f = fopen(raw_path, "wb");
    if (!f || fwrite(reference, 1, bytes, f) != bytes || fclose(f) != 0) fail("writing --raw-out");
  }

  evict_SRS(&srs);
  drop_SRS(&clone);
  drop_SRS(&srs);
  for (size_t i = 0; i < n; ++i) free_witness(&ws[i]);
  free(ws), free(provers), free(r_s), free(s_s), free(reference), free(run), free(times), free(witness_paths);
  printf("abi_caller %s failures=%d\n", failures ? "FAILED" : "ok", failures);
  return failures ? 1 : 0;
}
