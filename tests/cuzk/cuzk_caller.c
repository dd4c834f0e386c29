/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* cuzk_caller: drives the C ABI of Curio's fork of SupraSeal C2 the way cuzk does, from C11,
 * against whichever library it is linked with (libproofpipe_cuzk.so, or the fork built from
 * Curio's sources). It declares the fork's prove functions itself (the shared types and SRS
 * functions in ../supraseal/abi_support.h), reads .ppw witnesses, and:
 *
 *   - proves each key's witnesses in one generate_groth16_proofs_c call (a warm-up, then
 *     --repeat timed calls: the median), and checks repeated calls give the same bytes;
 *   - --split T: T threads at once, each generate_groth16_proofs_start_c then
 *     finalize_groth16_proof_c (cuzk's split calls), --repeat times; with --mixed thread t takes
 *     key t % keys and its first 1 + t % n witnesses (mixed sizes), else every witness of key 0.
 *     Every thread's proofs must equal the one-call proofs for the same r, s;
 *   - --gpu-index LIST: the gpu_index of call k is LIST[k % len] (default -1);
 *   - --cancel: a started proof destroyed with destroy_pending_proof, then a proof that must still
 *     equal the reference;
 *   - --clobber-abc: start on private copies of a, b, c, overwrite them once start returns (cuzk
 *     frees them there), and the proofs must still be the reference's;
 *   - --expect-gpus N: proofpipe_engine_counters must report N GPUs (with PROOFPIPE_TEST_SIM_GPUS, the
 *     simulated ones) after the calls: the calls' gpu_index values reached that many devices;
 *   - --error-paths: the bad calls both ABIs must reject (through the one call and through
 *     start/finalize), and the fork's own: bad gpu_index, NULL pending_out, a handle finalized
 *     twice or never issued, NULL proofs at finalize, NULL and unknown handles destroyed
 *     (proofpipe's library only: the fork asserts or dereferences on such input).
 *
 *   cuzk_caller --params P --witness W [--witness W ...] [--out proofs.bin] [--raw-out F]
 *               [--params P2 --witness W ... [--out F2]] [--seed N] [--repeat K] [--split T]
 *               [--mixed] [--gpu-index L] [--cache] [--cancel] [--clobber-abc] [--error-paths]
 *               [--label S] [--expect-gpus N]
 *
 * Each --params starts a key; the --witness and --out after it are that key's. Output: key=value
 * lines (with proofpipe's library also gpu_busy, from proofpipe_engine_counters when the library
 * has it); exit 0 iff every check held. */
#define _GNU_SOURCE /* dlsym, RTLD_DEFAULT, dladdr, pthread_barrier_t */
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

#include "../supraseal/abi_support.h"

/* ----- the fork's prove functions, as its src/lib.rs declares them -------------------------- */

void* create_gpu_mutex(void);
void destroy_gpu_mutex(void* mtx);
RustError generate_groth16_proofs_c(const void* provers, size_t num_circuits, const void* r_s, const void* s_s,
                                    void* proofs, const SRS* srs, void* gpu_mtx, int gpu_index);
RustError generate_groth16_proofs_start_c(const void* provers, size_t num_circuits, const void* r_s, const void* s_s,
                                          const SRS* srs, void* gpu_mtx, int gpu_index, void** pending_out);
RustError finalize_groth16_proof_c(void* pending, void* proofs);
void destroy_pending_proof(void* pending);

/* ----- calls -------------------------------------------------------------------------------- */

static void* g_mutex;        /* one gpu_mtx for every call, as cuzk keeps one per GPU */
static int g_gpu_list[16];   /* --gpu-index */
static int g_gpu_count = 1;  /* g_gpu_list[0] = -1 unless given */

static int gpu_of(int k) { return g_gpu_list[k % g_gpu_count]; }

static RustError one_call(const Assignment* provers, size_t n, const blst_fr* r_s, const blst_fr* s_s,
                          groth16_proof* proofs, const SRS* srs) {
  return generate_groth16_proofs_c(provers, n, r_s, s_s, proofs, srs, g_mutex, -1);
}

/* start then finalize: a start error is returned as it is, else finalize's. */
static RustError split_call_on(int gpu, const Assignment* provers, size_t n, const blst_fr* r_s, const blst_fr* s_s,
                               groth16_proof* proofs, const SRS* srs) {
  void* pending = (void*)0x1; /* must be overwritten */
  RustError e = generate_groth16_proofs_start_c(provers, n, r_s, s_s, srs, g_mutex, gpu, &pending);
  if (e.code != 0) {
    if (pending != NULL) fail("a failed start left *pending_out set");
    return e;
  }
  return finalize_groth16_proof_c(pending, proofs);
}

static RustError split_call(const Assignment* provers, size_t n, const blst_fr* r_s, const blst_fr* s_s,
                            groth16_proof* proofs, const SRS* srs) {
  return split_call_on(-1, provers, n, r_s, s_s, proofs, srs);
}

/* ----- keys --------------------------------------------------------------------------------- */

typedef struct {
  const char* params;
  const char* out;
  const char* witness_paths[64];
  size_t n;
  witness ws[64];
  Assignment provers[64];
  blst_fr r_s[64], s_s[64];
  SRS srs;
  groth16_proof* reference; /* n proofs from one call */
} proving_key;

/* ----- the split threads -------------------------------------------------------------------- */

typedef struct {
  const proving_key* key;
  size_t n;
  int gpu;
  pthread_barrier_t* start;
  groth16_proof* out;
  RustError result;
} thread_arg;

static void* thread_main(void* p) {
  thread_arg* t = p;
  memset(t->out, 0x3c, t->n * sizeof(groth16_proof));
  pthread_barrier_wait(t->start);
  t->result = split_call_on(t->gpu, t->key->provers, t->n, t->key->r_s, t->key->s_s, t->out, &t->key->srs);
  return NULL;
}

/* A marker on stderr before each timed phase, so that a library's own timing lines there (the
 * fork's CUZK_TIMING ... gpu_total_ms=...) can be summed per phase. */
static void phase(const char* what, size_t key, int run) {
  fflush(stdout);
  fprintf(stderr, "CUZK_CALLER: phase=%s key=%zu run=%d\n", what, key, run);
  fflush(stderr);
}

/* ----- proofpipe's counters (when the library has them) ------------------------------------- */

typedef int (*counters_fn)(uint64_t*, double*, uint32_t*);
static counters_fn g_counters;

static double busy_ms(void) {
  double ms = 0;
  if (g_counters && g_counters(NULL, &ms, NULL) != 0) ms = 0;
  return ms;
}

/* ----- the fork-specific error paths -------------------------------------------------------- */

static void fork_error_paths(const proving_key* k) {
  const size_t n = k->n;
  groth16_proof* out = xmalloc(n * sizeof(groth16_proof));
  void* pending = NULL;
  expect_failure("gpu_index_too_large",
                 generate_groth16_proofs_c(k->provers, n, k->r_s, k->s_s, out, &k->srs, g_mutex, 1000), EINVAL,
                 "gpu_index is 1000");
  expect_failure("gpu_index_negative",
                 generate_groth16_proofs_start_c(k->provers, n, k->r_s, k->s_s, &k->srs, g_mutex, -2, &pending),
                 EINVAL, "gpu_index is -2");
  if (pending) fail("a failed start set *pending_out");
  expect_failure("null_pending_out",
                 generate_groth16_proofs_start_c(k->provers, n, k->r_s, k->s_s, &k->srs, g_mutex, -1, NULL), EINVAL,
                 "pending_out");
  expect_failure("finalize_null", finalize_groth16_proof_c(NULL, out), EINVAL, "not a pending proof");
  expect_failure("finalize_never_issued", finalize_groth16_proof_c((void*)0x7777, out), EINVAL, "not a pending proof");
  /* Finalized twice: the second is an unknown handle. */
  if (require_ok(generate_groth16_proofs_start_c(k->provers, n, k->r_s, k->s_s, &k->srs, g_mutex, -1, &pending),
                 "start (finalize twice)")) {
    if (require_ok(finalize_groth16_proof_c(pending, out), "finalize (first)") &&
        memcmp(out, k->reference, n * sizeof(groth16_proof)) != 0)
      fail("start/finalize proofs differ from the one call's");
    expect_failure("finalize_twice", finalize_groth16_proof_c(pending, out), EINVAL, "not a pending proof");
    destroy_pending_proof(pending); /* unknown now: a no-op */
  }
  /* NULL proofs: an error, and the handle is gone. */
  if (require_ok(generate_groth16_proofs_start_c(k->provers, n, k->r_s, k->s_s, &k->srs, g_mutex, -1, &pending),
                 "start (null proofs)")) {
    expect_failure("finalize_null_proofs", finalize_groth16_proof_c(pending, NULL), EINVAL, "proofs is NULL");
    expect_failure("finalize_after_null_proofs", finalize_groth16_proof_c(pending, out), EINVAL,
                   "not a pending proof");
  }
  destroy_pending_proof(NULL);
  destroy_pending_proof((void*)0x7777);
  void* m = create_gpu_mutex();
  if (!m) fail("create_gpu_mutex returned NULL");
  destroy_gpu_mutex(m);
  destroy_gpu_mutex(m); /* a second destroy of the same handle is a no-op */
  destroy_gpu_mutex(NULL);
  ++error_checks;
  printf("%s error_path=handles ok=1\n", g_prog);
  free(out);
}

/* ----- main --------------------------------------------------------------------------------- */

static void usage(void) {
  fprintf(stderr,
          "usage: cuzk_caller --params P --witness W [--witness W ...] [--out F] [--raw-out F] [--params P2 ...]\n"
          "                   [--seed N] [--repeat K] [--split T] [--mixed] [--gpu-index L] [--cache] [--cancel]\n"
          "                   [--clobber-abc] [--error-paths] [--label S] [--expect-gpus N]\n");
  exit(2);
}

static int parse_gpu_list(const char* s) {
  g_gpu_count = 0;
  for (const char* at = s; *at;) {
    char* end = NULL;
    const long v = strtol(at, &end, 10);
    if (end == at || g_gpu_count == 16) return 0;
    g_gpu_list[g_gpu_count++] = (int)v;
    at = *end == ',' ? end + 1 : end;
    if (*end && *end != ',') return 0;
  }
  return g_gpu_count > 0;
}

int main(int argc, char** argv) {
  g_prog = "cuzk_caller";
  init_montgomery();
  g_gpu_list[0] = -1;
  static proving_key keys[4];
  size_t nkeys = 0;
  const char* raw_path = NULL;
  const char* label = "";
  uint64_t seed = 0;
  bool seeded = false, cache = false, error_paths = false, cancel = false, mixed = false, clobber = false;
  int repeat = 1, split = 0, expect_gpus = -1;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const bool has_value = i + 1 < argc;
    if (!strcmp(a, "--params") && has_value) {
      if (nkeys == 4) usage();
      keys[nkeys++].params = argv[++i];
    } else if (!strcmp(a, "--witness") && has_value) {
      if (nkeys == 0 || keys[nkeys - 1].n == 64) usage();
      keys[nkeys - 1].witness_paths[keys[nkeys - 1].n++] = argv[++i];
    } else if (!strcmp(a, "--out") && has_value) {
      if (nkeys == 0) usage();
      keys[nkeys - 1].out = argv[++i];
    } else if (!strcmp(a, "--raw-out") && has_value) raw_path = argv[++i];
    else if (!strcmp(a, "--seed") && has_value) seed = strtoull(argv[++i], NULL, 0), seeded = true;
    else if (!strcmp(a, "--repeat") && has_value) repeat = atoi(argv[++i]);
    else if (!strcmp(a, "--split") && has_value) split = atoi(argv[++i]);
    else if (!strcmp(a, "--gpu-index") && has_value) {
      if (!parse_gpu_list(argv[++i])) usage();
    } else if (!strcmp(a, "--label") && has_value) label = argv[++i];
    else if (!strcmp(a, "--expect-gpus") && has_value) expect_gpus = atoi(argv[++i]);
    else if (!strcmp(a, "--mixed")) mixed = true;
    else if (!strcmp(a, "--cache")) cache = true;
    else if (!strcmp(a, "--cancel")) cancel = true;
    else if (!strcmp(a, "--clobber-abc")) clobber = true;
    else if (!strcmp(a, "--error-paths")) error_paths = true;
    else usage();
  }
  if (nkeys == 0 || repeat < 1 || split < 0 || split > 64) usage();
  for (size_t k = 0; k < nkeys; ++k)
    if (keys[k].n == 0) usage();

  /* Which library answers (the object that defines the entry point). */
  const char* lib = "unknown";
  Dl_info info;
  union {
    RustError (*f)(const void*, size_t, const void*, const void*, void*, const SRS*, void*, int);
    void* p;
  } entry = {generate_groth16_proofs_c};
  if (dladdr(entry.p, &info) && info.dli_fname) {
    const char* slash = strrchr(info.dli_fname, '/');
    lib = slash ? slash + 1 : info.dli_fname;
  }
  union {
    counters_fn f;
    void* p;
  } counters;
  counters.p = dlsym(RTLD_DEFAULT, "proofpipe_engine_counters");
  g_counters = counters.f;

  /* Inputs: witnesses, assignments, randomisers (r then s per witness, key by key). */
  if (!seeded) seed = (uint64_t)time(NULL) ^ ((uint64_t)(now_s() * 1e9) << 20);
  uint64_t state = seed;
  for (size_t k = 0; k < nkeys; ++k) {
    proving_key* key = &keys[k];
    for (size_t i = 0; i < key->n; ++i) {
      key->ws[i] = read_ppw(key->witness_paths[i]);
      key->provers[i] = assignment_of(&key->ws[i]);
      key->r_s[i] = random_scalar(&state);
      key->s_s[i] = random_scalar(&state);
    }
    const double t0 = now_s();
    if (!require_ok(create_SRS(&key->srs, key->params, cache), "create_SRS")) return 1;
    printf("cuzk_caller lib=%s op=create_SRS key=%zu cache=%d load_s=%.3f\n", lib, k, cache ? 1 : 0, now_s() - t0);
  }
  g_mutex = create_gpu_mutex();

  /* One call per key: a warm-up (the fork's first call waits for its background SRS read), then
   * the timed calls. */
  for (size_t k = 0; k < nkeys; ++k) {
    proving_key* key = &keys[k];
    const size_t bytes = key->n * sizeof(groth16_proof);
    key->reference = xmalloc(bytes);
    groth16_proof* run = xmalloc(bytes);
    const batch job = {key->provers, key->n, key->r_s, key->s_s, &key->srs};
    phase("warmup", k, 0);
    double t0 = now_s();
    if (!require_ok(prove_batch(one_call, &job, key->reference, 0xa5), "generate_groth16_proofs_c (warm-up)"))
      return 1;
    const double warmup_s = now_s() - t0;
    double* times = xmalloc((size_t)repeat * sizeof(double));
    int identical = 1;
    const double busy0 = busy_ms(), wall0 = now_s();
    for (int r = 0; r < repeat; ++r) {
      phase("call", k, r);
      t0 = now_s();
      const RustError e = prove_batch(one_call, &job, run, (uint8_t)(0x5a + r));
      times[r] = now_s() - t0;
      if (!require_ok(e, "generate_groth16_proofs_c")) return 1;
      if (memcmp(run, key->reference, bytes) != 0) identical = 0;
    }
    const double busy = g_counters ? (busy_ms() - busy0) / (1e3 * (now_s() - wall0)) : -1;
    if (!identical) fail("repeated calls with the same r, s gave different bytes (some proof bytes not written?)");
    const double median = median_of(times, repeat);
    printf("cuzk_caller lib=%s %smode=call key=%zu partitions=%zu rows=%llu runs=%d warmup_s=%.3f median_s=%.3f "
           "min_s=%.3f max_s=%.3f gpu_busy=%.3f identical=%d\n",
           lib, label, k, key->n, (unsigned long long)key->ws[0].rows, repeat, warmup_s, median, times[0],
           times[repeat - 1], busy, identical);
    if (key->out) {
      if (!write_compressed(key->out, key->reference, key->n)) fail("writing --out");
      printf("cuzk_caller out=%s proofs=%zu seed=%llu\n", key->out, key->n, (unsigned long long)seed);
    }
    free(times);
    free(run);
  }

  /* cuzk's split calls from several threads at once. */
  if (split > 0) {
    pthread_t* tid = xmalloc((size_t)split * sizeof(pthread_t));
    thread_arg* args = xmalloc((size_t)split * sizeof(thread_arg));
    double* walls = xmalloc((size_t)repeat * sizeof(double));
    size_t partitions = 0;
    int all_ok = 1, same = 1;
    const double busy0 = busy_ms(), wall0 = now_s();
    for (int r = 0; r < repeat; ++r) {
      pthread_barrier_t start;
      pthread_barrier_init(&start, NULL, (unsigned)split + 1);
      partitions = 0;
      for (int t = 0; t < split; ++t) {
        const proving_key* key = &keys[mixed ? (size_t)t % nkeys : 0];
        args[t].key = key;
        args[t].n = mixed ? 1 + (size_t)t % key->n : key->n;
        args[t].gpu = gpu_of(t);
        args[t].start = &start;
        args[t].out = xmalloc(args[t].n * sizeof(groth16_proof));
        partitions += args[t].n;
        if (pthread_create(&tid[t], NULL, thread_main, &args[t]) != 0) {
          fail("pthread_create");
          return 1;
        }
      }
      phase("split", 0, r);
      pthread_barrier_wait(&start);
      const double t0 = now_s();
      for (int t = 0; t < split; ++t) {
        pthread_join(tid[t], NULL);
        if (!require_ok(args[t].result, "start/finalize (thread)")) all_ok = 0;
        else if (memcmp(args[t].out, args[t].key->reference, args[t].n * sizeof(groth16_proof)) != 0) same = 0;
        free(args[t].out);
      }
      walls[r] = now_s() - t0;
      pthread_barrier_destroy(&start);
    }
    const double busy = g_counters ? (busy_ms() - busy0) / (1e3 * (now_s() - wall0)) : -1;
    if (!same) fail("split calls gave proofs different from the one call's for the same r, s");
    const double median = median_of(walls, repeat);
    printf("cuzk_caller lib=%s %smode=split threads=%d mixed=%d partitions=%zu runs=%d median_s=%.3f min_s=%.3f "
           "max_s=%.3f gpu_busy=%.3f all_ok=%d identical=%d\n",
           lib, label, split, mixed ? 1 : 0, partitions, repeat, median, walls[0], walls[repeat - 1], busy, all_ok,
           same);
    free(tid), free(args), free(walls);
  }

  const proving_key* k0 = &keys[0];
  const batch job0 = {k0->provers, k0->n, k0->r_s, k0->s_s, &k0->srs};
  groth16_proof* after = xmalloc(k0->n * sizeof(groth16_proof));
  if (cancel) {
    void* pending = NULL;
    if (require_ok(generate_groth16_proofs_start_c(k0->provers, k0->n, k0->r_s, k0->s_s, &k0->srs, g_mutex, gpu_of(0),
                                                   &pending),
                   "start (to cancel)"))
      destroy_pending_proof(pending);
    if (require_ok(prove_batch(split_call, &job0, after, 0x44), "start/finalize (after a cancel)") &&
        memcmp(after, k0->reference, k0->n * sizeof(groth16_proof)) != 0)
      fail("proofs after a cancelled proof differ");
    printf("cuzk_caller lib=%s check=cancel ok=%d\n", lib, failures == 0);
  }

  /* The fork's contract: a, b, c are free once start returns (cuzk releases them there). Start
   * on private copies, overwrite the copies as soon as start returns, and the proofs must still be
   * the reference's. */
  if (clobber) {
    Assignment* own = xmalloc(k0->n * sizeof(Assignment));
    blst_fr** arrays = xmalloc(3 * k0->n * sizeof(blst_fr*));
    const size_t rows = (size_t)k0->ws[0].rows, bytes = rows * sizeof(blst_fr);
    for (size_t i = 0; i < k0->n; ++i) {
      own[i] = k0->provers[i];
      const blst_fr* from[3] = {own[i].a, own[i].b, own[i].c};
      for (int v = 0; v < 3; ++v) {
        arrays[3 * i + (size_t)v] = xmalloc(bytes);
        memcpy(arrays[3 * i + (size_t)v], from[v], bytes);
      }
      own[i].a = arrays[3 * i], own[i].b = arrays[3 * i + 1], own[i].c = arrays[3 * i + 2];
    }
    void* pending = NULL;
    if (require_ok(generate_groth16_proofs_start_c(own, k0->n, k0->r_s, k0->s_s, &k0->srs, g_mutex, gpu_of(0), &pending),
                   "start (a, b, c overwritten after it)")) {
      for (size_t j = 0; j < 3 * k0->n; ++j) memset(arrays[j], 0xff, bytes);
      memset(own, 0xee, k0->n * sizeof(Assignment));
      if (require_ok(finalize_groth16_proof_c(pending, after), "finalize (a, b, c overwritten)") &&
          memcmp(after, k0->reference, k0->n * sizeof(groth16_proof)) != 0)
        fail("a, b or c was read after start returned (the proofs changed when they were overwritten)");
    }
    for (size_t j = 0; j < 3 * k0->n; ++j) free(arrays[j]);
    free(arrays), free(own);
    printf("cuzk_caller lib=%s check=abc_free_after_start ok=%d\n", lib, failures == 0);
  }

  if (error_paths) {
    run_error_paths(one_call, k0->params, k0->witness_paths[0], &job0, after);
    run_error_paths(split_call, k0->params, k0->witness_paths[0], &job0, after);
    fork_error_paths(k0);
    if (require_ok(prove_batch(split_call, &job0, after, 0x33), "start/finalize (after the error paths)") &&
        memcmp(after, k0->reference, k0->n * sizeof(groth16_proof)) != 0)
      fail("proofs after the error paths differ");
    printf("cuzk_caller lib=%s error_paths=%d\n", lib, error_checks);
  }

  if (expect_gpus >= 0) {
    uint32_t gpus = 0;
    uint64_t partitions = 0;
    if (!g_counters || g_counters(&partitions, NULL, &gpus) != 0) fail("--expect-gpus: proofpipe_engine_counters failed");
    else if (gpus != (uint32_t)expect_gpus) fail("--expect-gpus: the engine reports another number of GPUs");
    printf("cuzk_caller lib=%s gpus=%u partitions=%llu\n", lib, gpus, (unsigned long long)partitions);
  }

  if (raw_path) {
    FILE* f = fopen(raw_path, "wb");
    if (!f || fwrite(k0->reference, 1, k0->n * sizeof(groth16_proof), f) != k0->n * sizeof(groth16_proof) ||
        fclose(f) != 0)
      fail("writing --raw-out");
  }

  destroy_gpu_mutex(g_mutex);
  for (size_t k = 0; k < nkeys; ++k) {
    evict_SRS(&keys[k].srs);
    drop_SRS(&keys[k].srs);
    for (size_t i = 0; i < keys[k].n; ++i) free_witness(&keys[k].ws[i]);
    free(keys[k].reference);
  }
  free(after);
  printf("cuzk_caller %s failures=%d\n", failures ? "FAILED" : "ok", failures);
  return failures ? 1 : 0;
}
