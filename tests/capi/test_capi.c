/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* The C API from C (compiled as C11): prove, verify, every error path, start/finalize, cancel, threads. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proofpipe/proofpipe.h"

static int failures = 0;

#define CHECK(cond)                                                       \
  do {                                                                    \
    if (!(cond)) {                                                        \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                         \
    }                                                                     \
  } while (0)

/* A call that must succeed; prints the message otherwise. */
#define OK(call)                                                                            \
  do {                                                                                      \
    pp_error e_;                                                                            \
    pp_error* err = &e_;                                                                    \
    pp_status s_ = (call);                                                                  \
    if (s_ != PP_OK) {                                                                      \
      fprintf(stderr, "%s:%d: %s -> %s: %s\n", __FILE__, __LINE__, #call, pp_status_name(s_), \
              e_.message);                                                                  \
      exit(1);                                                                              \
    }                                                                                       \
  } while (0)

/* A call that must fail with `want`, its message containing `needle`. */
static void expect_error(int line, pp_status got, const pp_error* e, pp_status want, const char* needle) {
  if (got != want || e->code != want || strstr(e->message, needle) == NULL) {
    fprintf(stderr, "line %d: expected %s mentioning \"%s\", got %s: \"%s\"\n", line, pp_status_name(want), needle,
            pp_status_name(got), e->message);
    ++failures;
  } else {
    printf("  ok: %s: %s\n", pp_status_name(got), e->message);
  }
}
#define EXPECT_ERROR(call, want, needle) \
  do {                                   \
    pp_error e_;                         \
    pp_error* err = &e_;                 \
    pp_status s_ = (call);               \
    expect_error(__LINE__, s_, &e_, want, needle); \
  } while (0)

static uint8_t* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t* bytes = malloc((size_t)n + 1);
  if (!bytes || fread(bytes, 1, (size_t)n, f) != (size_t)n) {
    fprintf(stderr, "cannot read %s\n", path);
    exit(1);
  }
  fclose(f);
  *size = (size_t)n;
  return bytes;
}

static void write_file(const char* path, const uint8_t* bytes, size_t size) {
  FILE* f = fopen(path, "wb");
  if (!f || fwrite(bytes, 1, size, f) != size || fclose(f) != 0) {
    fprintf(stderr, "cannot write %s\n", path);
    exit(1);
  }
}

static uint64_t le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int k = 7; k >= 0; --k) v = (v << 8) | p[k];
  return v;
}

/* One partition in bellperson's layout, read from a .ppw file (canonical scalars converted to
 * Montgomery form with pp_fr_from_canonical). */
typedef struct witness {
  uint8_t *a, *b, *c, *input, *aux;
  uint64_t *a_aux, *b_input, *b_aux;
  size_t rows, inputs, aux_n;
} witness;

static uint8_t* scalars(const uint8_t** p, size_t n) {
  uint8_t* out = malloc(n * PP_FR_BYTES + 1);
  OK(pp_fr_from_canonical(out, *p, n, err));
  *p += n * PP_FR_BYTES;
  return out;
}
static uint64_t* words(const uint8_t** p, size_t n) {
  uint64_t* out = malloc(n * 8 + 8);
  for (size_t i = 0; i < n; ++i) out[i] = le64(*p + 8 * i);
  *p += 8 * n;
  return out;
}

static witness read_ppw(const char* path) {
  size_t size;
  uint8_t* bytes = read_file(path, &size);
  if (size < 32 || memcmp(bytes, "PPWITNS1", 8) != 0) {
    fprintf(stderr, "%s: not a .ppw file\n", path);
    exit(1);
  }
  witness w;
  w.rows = (size_t)le64(bytes + 8);
  w.inputs = (size_t)le64(bytes + 16);
  w.aux_n = (size_t)le64(bytes + 24);
  const uint8_t* p = bytes + 32;
  w.a = scalars(&p, w.rows);
  w.b = scalars(&p, w.rows);
  w.c = scalars(&p, w.rows);
  w.input = scalars(&p, w.inputs);
  w.aux = scalars(&p, w.aux_n);
  w.a_aux = words(&p, (w.aux_n + 63) / 64);
  w.b_input = words(&p, (w.inputs + 63) / 64);
  w.b_aux = words(&p, (w.aux_n + 63) / 64);
  if ((size_t)(p - bytes) != size) {
    fprintf(stderr, "%s: size mismatch\n", path);
    exit(1);
  }
  free(bytes);
  return w;
}

static void free_witness(witness* w) {
  free(w->a);
  free(w->b);
  free(w->c);
  free(w->input);
  free(w->aux);
  free(w->a_aux);
  free(w->b_input);
  free(w->b_aux);
}

static pp_input assignment_input(const witness* w) {
  pp_input in;
  memset(&in, 0, sizeof in);
  in.kind = PP_INPUT_ASSIGNMENT;
  in.assignment.a = w->a;
  in.assignment.b = w->b;
  in.assignment.c = w->c;
  in.assignment.num_rows = w->rows;
  in.assignment.input = w->input;
  in.assignment.num_inputs = w->inputs;
  in.assignment.aux = w->aux;
  in.assignment.num_aux = w->aux_n;
  in.assignment.a_aux_density = w->a_aux;
  in.assignment.a_aux_density_words = (w->aux_n + 63) / 64;
  in.assignment.b_input_density = w->b_input;
  in.assignment.b_input_density_words = (w->inputs + 63) / 64;
  in.assignment.b_aux_density = w->b_aux;
  in.assignment.b_aux_density_words = (w->aux_n + 63) / 64;
  return in;
}

static int verify(const pp_key* key, const witness* w, const uint8_t* proof) {
  int valid = -1;
  OK(pp_verify(key, w->input + PP_FR_BYTES, w->inputs - 1, proof, PP_PROOF_BYTES, &valid, err));
  return valid;
}

static char path_buf[4096];
static const char* in_dir(const char* dir, const char* name) {
  snprintf(path_buf, sizeof path_buf, "%s/%s", dir, name);
  return path_buf;
}

/* ----- concurrency ------------------------------------------------------------------------ */

typedef struct job {
  pp_engine* engine;
  const pp_key* key;
  const witness* w;
  uint64_t seed;
  int valid;
} job;

static void* prove_job(void* arg) {
  job* j = arg;
  pp_input in = assignment_input(j->w);
  uint8_t proof[PP_PROOF_BYTES];
  size_t size = sizeof proof;
  pp_error e;
  if (pp_prove(j->engine, j->key, &in, 1, &j->seed, proof, &size, &e) != PP_OK) {
    fprintf(stderr, "thread: %s\n", e.message);
    j->valid = -1;
    return NULL;
  }
  j->valid = verify(j->key, j->w, proof);
  return NULL;
}

/* ----- several GPUs (simulated) ----------------------------------------------------------- */

/* With PROOFPIPE_TEST_SIM_GPUS=gpus and PROOFPIPE_TEST_LOSE_GPU=1@2 set (the ctest capi_c_sim_gpus):
 * six two-partition calls in flight at once, pinned to GPU 1 (the one that is lost), to GPU 0 and
 * to any GPU, all give the `proofpipe prove --seed 7` proofs; none is made by the CPU; GPU 1 is
 * reported lost with the partitions it handed over, the others healthy, and the partitions per GPU
 * add up. */
static int sim_gpus(const char* dir, uint32_t gpus) {
  pp_key* key = NULL;
  OK(pp_key_load(in_dir(dir, "params"), 0, &key, err));
  witness w0 = read_ppw(in_dir(dir, "witness-0.ppw"));
  witness w1 = read_ppw(in_dir(dir, "witness-1.ppw"));
  size_t n = 0;
  uint8_t* want = read_file(in_dir(dir, "cli-proofs.bin"), &n);
  CHECK(n == 2 * PP_PROOF_BYTES);
  pp_engine_config config;
  pp_engine_config_default(&config);
  config.threads = 1;
  pp_engine* engine = NULL;
  OK(pp_engine_create(&config, &engine, err));
  pp_input inputs[2] = {assignment_input(&w0), assignment_input(&w1)};
  const uint64_t seed = 7;
  enum { kCalls = 6 };
  const int pin[kCalls] = {1, 0, -1, 1, 1, -1};
  pp_pending* pending[kCalls] = {0};
  for (int k = 0; k < kCalls; ++k) {
    pp_prove_options options;
    pp_prove_options_default(&options);
    options.seed = &seed;
    options.gpu = pin[k];
    OK(pp_prove_start_with(engine, key, inputs, 2, &options, &pending[k], err));
  }
  for (int k = 0; k < kCalls; ++k) {
    uint8_t proofs[2 * PP_PROOF_BYTES];
    size_t size = sizeof proofs;
    OK(pp_prove_finalize(pending[k], proofs, &size, err));
    CHECK(size == sizeof proofs && memcmp(proofs, want, sizeof proofs) == 0);
    pp_pending_free(pending[k]);
  }
  pp_engine_stats st;
  OK(pp_engine_stats_get(engine, &st, err));
  CHECK(st.gpus == gpus && st.partitions_proven == 2 * kCalls && st.partitions_on_cpu == 0);
  uint64_t partitions = 0;
  for (uint32_t i = 0; i < gpus; ++i) {
    pp_gpu_info gi;
    memset(&gi, 0xab, sizeof gi);
    OK(pp_engine_gpu_info_get(engine, i, &gi, err));
    printf("sim GPU %d: healthy %u, %llu partitions, %llu handed off\n", gi.device, gi.healthy,
           (unsigned long long)gi.partitions, (unsigned long long)gi.partitions_handed_off);
    CHECK(gi.device == (int32_t)i && gi.reserved == 0 && gi.ms_busy == 0);
    CHECK(gi.healthy == (i == 1 ? 0u : 1u));
    CHECK(i == 1 ? gi.partitions_handed_off >= 1 : gi.partitions_handed_off == 0);
    CHECK(i != 1 || gi.partitions <= 1); /* only its first partition ran before the loss */
    partitions += gi.partitions;
  }
  CHECK(partitions == 2 * kCalls);
  pp_gpu_info gi;
  EXPECT_ERROR(pp_engine_gpu_info_get(engine, gpus, &gi, err), PP_ERR_INVALID_ARGUMENT, "GPU(s)");
  pp_engine_free(engine);
  pp_key_release(key);
  free(want);
  free_witness(&w0);
  free_witness(&w1);
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  puts("all simulated-GPU C API checks passed");
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 5 && strcmp(argv[3], "--sim-gpus") == 0) return sim_gpus(argv[1], (uint32_t)atoi(argv[4]));
  if (argc != 3) {
    fprintf(stderr, "usage: test_capi DATA_DIR SNARKJS_DIR [--sim-gpus N] (DATA_DIR made by tests/capi/generate.cmake, "
                    "SNARKJS_DIR: tests/data/snarkjs; --sim-gpus: only the several-GPU checks, with "
                    "PROOFPIPE_TEST_SIM_GPUS=N and PROOFPIPE_TEST_LOSE_GPU=1@2 set)\n");
    return 2;
  }
  const char* dir = argv[1];
  const char* snarkjs_dir = argv[2];
  CHECK(pp_version() == PP_VERSION);

  pp_key* key = NULL;
  OK(pp_key_load(in_dir(dir, "params"), 0, &key, err));
  witness w0 = read_ppw(in_dir(dir, "witness-0.ppw"));
  witness w1 = read_ppw(in_dir(dir, "witness-1.ppw"));
  pp_key_info info;
  OK(pp_key_info_get(key, &info, err));
  CHECK(info.num_inputs == w0.inputs && info.num_aux == w0.aux_n && info.domain_size >= w0.rows);
  CHECK(info.device_resident == 0 && info.evictions == 0);

  pp_engine_config config;
  pp_engine_config_default(&config);
  CHECK(config.num_gpus == -1 && config.cpu_fallback == 1 && config.gpu_workers == 2);
  config.threads = 2;
  pp_engine* engine = NULL;
  OK(pp_engine_create(&config, &engine, err));

  /* ----- prove two partitions from arrays, verify, tamper ----- */
  puts("prove: arrays");
  pp_input inputs[2] = {assignment_input(&w0), assignment_input(&w1)};
  uint8_t proofs[2 * PP_PROOF_BYTES];
  size_t size = sizeof proofs;
  const uint64_t seed = 7;
  OK(pp_prove(engine, key, inputs, 2, &seed, proofs, &size, err));
  CHECK(size == 2 * PP_PROOF_BYTES);
  CHECK(verify(key, &w0, proofs) == 1);
  CHECK(verify(key, &w1, proofs + PP_PROOF_BYTES) == 1);
  CHECK(verify(key, &w1, proofs) == 0); /* the other partition's public inputs */
  {
    size_t n;
    uint8_t* cli = read_file(in_dir(dir, "cli-proofs.bin"), &n);
    CHECK(n == sizeof proofs && memcmp(cli, proofs, n) == 0); /* `proofpipe prove --seed 7` agrees */
    free(cli);
  }
  /* pp_prove proves the caller's arrays where they lie when they are aligned as pp's scalars are
   * (8 bytes), and copies them otherwise: arrays at an odd address give the same proofs. */
  puts("prove: arrays at odd addresses");
  {
    witness odd[2] = {w0, w1};
    uint8_t* blocks[2][5];
    for (int k = 0; k < 2; ++k) {
      uint8_t** fields[5] = {&odd[k].a, &odd[k].b, &odd[k].c, &odd[k].input, &odd[k].aux};
      const size_t counts[5] = {odd[k].rows, odd[k].rows, odd[k].rows, odd[k].inputs, odd[k].aux_n};
      for (int f = 0; f < 5; ++f) {
        blocks[k][f] = malloc(counts[f] * PP_FR_BYTES + 8);
        memcpy(blocks[k][f] + 4, *fields[f], counts[f] * PP_FR_BYTES);
        *fields[f] = blocks[k][f] + 4;
      }
    }
    pp_input odd_inputs[2] = {assignment_input(&odd[0]), assignment_input(&odd[1])};
    uint8_t again[2 * PP_PROOF_BYTES];
    size_t again_size = sizeof again;
    OK(pp_prove(engine, key, odd_inputs, 2, &seed, again, &again_size, err));
    CHECK(again_size == sizeof again && memcmp(again, proofs, sizeof again) == 0);
    /* A scalar out of range is named on the copying path too. */
    memset(odd[1].aux + 2 * PP_FR_BYTES, 0xff, PP_FR_BYTES);
    odd_inputs[1] = assignment_input(&odd[1]);
    again_size = sizeof again;
    EXPECT_ERROR(pp_prove(engine, key, odd_inputs, 2, &seed, again, &again_size, err), PP_ERR_INVALID_ARGUMENT,
                 "inputs[1].assignment.aux[2]");
    for (int k = 0; k < 2; ++k)
      for (int f = 0; f < 5; ++f) free(blocks[k][f]);
  }
  uint8_t tampered[PP_PROOF_BYTES];
  memcpy(tampered, proofs, PP_PROOF_BYTES);
  tampered[100] ^= 1; /* inside B: decodes to another point or fails to decode: invalid either way */
  CHECK(verify(key, &w0, tampered) == 0);

  /* ----- the same proofs from .ppw files and from .ppw bytes (same seed) ----- */
  puts("prove: .ppw file and memory");
  {
    size_t n;
    uint8_t* ppw1 = read_file(in_dir(dir, "witness-1.ppw"), &n);
    pp_input from_files[2];
    memset(from_files, 0, sizeof from_files);
    from_files[0].kind = PP_INPUT_PPW;
    from_files[0].ppw.path = in_dir(dir, "witness-0.ppw");
    from_files[1].kind = PP_INPUT_PPW;
    from_files[1].ppw.data = ppw1;
    from_files[1].ppw.size = n;
    uint8_t again[2 * PP_PROOF_BYTES];
    size_t again_size = sizeof again;
    OK(pp_prove(engine, key, from_files, 2, &seed, again, &again_size, err));
    CHECK(again_size == sizeof again && memcmp(again, proofs, sizeof again) == 0);
    /* A truncated witness file is a witness error that names the input. */
    from_files[1].ppw.size = n - 5;
    size_t sz = sizeof again;
    EXPECT_ERROR(pp_prove(engine, key, from_files, 2, &seed, again, &sz, err), PP_ERR_WITNESS, "inputs[1]");
    free(ppw1);
  }

  /* ----- caller-supplied r, s; OS randomness ----- */
  puts("prove: r, s from the caller and from the OS");
  {
    uint8_t rs[2 * PP_FR_BYTES];
    memcpy(rs, w0.aux, 2 * PP_FR_BYTES); /* any two reduced scalars will do */
    pp_input in = assignment_input(&w0);
    in.r = rs;
    in.s = rs + PP_FR_BYTES;
    uint8_t p1[PP_PROOF_BYTES], p2[PP_PROOF_BYTES];
    size_t s1 = sizeof p1, s2 = sizeof p2;
    const uint64_t other_seed = 99;
    OK(pp_prove(engine, key, &in, 1, &seed, p1, &s1, err));
    OK(pp_prove(engine, key, &in, 1, &other_seed, p2, &s2, err));
    CHECK(memcmp(p1, p2, PP_PROOF_BYTES) == 0); /* r, s given: the seed does not matter */
    CHECK(verify(key, &w0, p1) == 1);
    in.s = NULL;
    EXPECT_ERROR(pp_prove(engine, key, &in, 1, &seed, p1, &s1, err), PP_ERR_INVALID_ARGUMENT, "both r and s");
    in = assignment_input(&w0);
    OK(pp_prove(engine, key, &in, 1, NULL, p1, &s1, err));
    OK(pp_prove(engine, key, &in, 1, NULL, p2, &s2, err));
    CHECK(memcmp(p1, p2, PP_PROOF_BYTES) != 0); /* fresh r, s each time */
    CHECK(verify(key, &w0, p1) == 1 && verify(key, &w0, p2) == 1);
  }

  /* ----- R1CS + witness (circom multiplier, key in bellman's row order) ----- */
  puts("prove: .r1cs + .wtns");
  {
    pp_key* mkey = NULL;
    OK(pp_key_load(in_dir(dir, "multiplier.params"), 1, &mkey, err));
    pp_key_info mi;
    OK(pp_key_info_get(mkey, &mi, err));
    char r1cs[4096], wtns[4096];
    snprintf(r1cs, sizeof r1cs, "%s/multiplier.r1cs", snarkjs_dir);
    snprintf(wtns, sizeof wtns, "%s/multiplier.wtns", snarkjs_dir);
    size_t wn;
    uint8_t* wbytes = read_file(wtns, &wn);
    pp_input in;
    memset(&in, 0, sizeof in);
    in.kind = PP_INPUT_R1CS_WTNS;
    in.r1cs.path = r1cs;
    in.wtns.data = wbytes;
    in.wtns.size = wn;
    uint8_t proof[PP_PROOF_BYTES];
    size_t ps = sizeof proof;
    OK(pp_prove(engine, mkey, &in, 1, &seed, proof, &ps, err));
    /* Public inputs: z[1 .. num_inputs) of the .wtns (header 12 bytes, section 1 of 12 + 40,
     * section 2's 12-byte header, then the scalars). */
    const size_t first = 12 + (12 + 40) + 12;
    CHECK(wn >= first + mi.num_inputs * PP_FR_BYTES);
    uint8_t* pub = malloc(mi.num_inputs * PP_FR_BYTES);
    OK(pp_fr_from_canonical(pub, wbytes + first + PP_FR_BYTES, mi.num_inputs - 1, err));
    int valid = -1;
    OK(pp_verify(mkey, pub, mi.num_inputs - 1, proof, PP_PROOF_BYTES, &valid, err));
    CHECK(valid == 1);
    /* A .wtns that does not satisfy the circuit. */
    wbytes[first + 2 * PP_FR_BYTES] ^= 1;
    EXPECT_ERROR(pp_prove(engine, mkey, &in, 1, &seed, proof, &ps, err), PP_ERR_WITNESS, "inputs[0]");
    /* A witness for another key. */
    EXPECT_ERROR(pp_prove(engine, mkey, inputs, 1, &seed, proof, &ps, err), PP_ERR_WITNESS, "do not match");
    free(pub);
    free(wbytes);
    pp_key_release(mkey);
  }

  /* ----- a snarkjs .zkey and .wtns (snarkjs's convention) ----- */
  puts("prove: .zkey + .wtns");
  {
    char zkey_path[4096], wtns[4096];
    snprintf(zkey_path, sizeof zkey_path, "%s/multiplier.zkey", snarkjs_dir);
    snprintf(wtns, sizeof wtns, "%s/multiplier.wtns", snarkjs_dir);
    pp_key* zkey = NULL;
    OK(pp_key_load(zkey_path, 1, &zkey, err));
    size_t zn;
    uint8_t* zbytes = read_file(zkey_path, &zn);
    pp_key* zkey_mem = NULL;
    OK(pp_key_load_memory(zbytes, zn, 0, &zkey_mem, err));
    pp_key_info zi;
    OK(pp_key_info_get(zkey, &zi, err));
    CHECK(zi.num_inputs == 2 && zi.domain_size == zi.h); /* one public signal; H in snarkjs's basis */
    size_t wn;
    uint8_t* wbytes = read_file(wtns, &wn);
    pp_input in;
    memset(&in, 0, sizeof in);
    in.kind = PP_INPUT_WTNS;
    in.wtns.path = wtns;
    OK(pp_key_preload(engine, zkey, &in, err));
    uint8_t from_file[PP_PROOF_BYTES], from_memory[PP_PROOF_BYTES];
    size_t ps = sizeof from_file;
    OK(pp_prove(engine, zkey, &in, 1, &seed, from_file, &ps, err));
    in.wtns.path = NULL;
    in.wtns.data = wbytes;
    in.wtns.size = wn;
    ps = sizeof from_memory;
    OK(pp_prove(engine, zkey_mem, &in, 1, &seed, from_memory, &ps, err));
    CHECK(memcmp(from_file, from_memory, PP_PROOF_BYTES) == 0); /* same key, witness and r, s */
    const size_t first = 12 + (12 + 40) + 12; /* the first scalar of the .wtns */
    uint8_t pub[PP_FR_BYTES];
    OK(pp_fr_from_canonical(pub, wbytes + first + PP_FR_BYTES, 1, err));
    int valid = -1;
    OK(pp_verify(zkey, pub, 1, from_file, PP_PROOF_BYTES, &valid, err));
    CHECK(valid == 1);
    pub[0] ^= 1; /* another statement */
    valid = -1;
    OK(pp_verify(zkey, pub, 1, from_file, PP_PROOF_BYTES, &valid, err));
    CHECK(valid == 0);
    /* Kinds that do not fit the key, either way round. */
    EXPECT_ERROR(pp_prove(engine, key, &in, 1, &seed, from_file, &ps, err), PP_ERR_INVALID_ARGUMENT,
                 "needs a key loaded from a snarkjs .zkey");
    EXPECT_ERROR(pp_prove(engine, zkey, inputs, 1, &seed, from_file, &ps, err), PP_ERR_INVALID_ARGUMENT,
                 "proves PP_INPUT_WTNS inputs");
    EXPECT_ERROR(pp_key_preload(engine, zkey, inputs, err), PP_ERR_INVALID_ARGUMENT, "sample.kind");
    /* A .wtns that does not satisfy the circuit: its proof fails the check, on the CPU too. */
    wbytes[first + 2 * PP_FR_BYTES] ^= 1;
    EXPECT_ERROR(pp_prove(engine, zkey, &in, 1, &seed, from_file, &ps, err), PP_ERR_WITNESS,
                 "does not satisfy");
    /* ... and one of another length (another circuit). */
    in.wtns.size = wn - PP_FR_BYTES;
    EXPECT_ERROR(pp_prove(engine, zkey, &in, 1, &seed, from_file, &ps, err), PP_ERR_WITNESS, "inputs[0]");
    free(wbytes);
    free(zbytes);
    pp_key_release(zkey_mem);
    pp_key_release(zkey);
  }

  /* ----- error paths ----- */
  puts("errors");
  {
    pp_key* bad = NULL;
    EXPECT_ERROR(pp_key_load(NULL, 0, &bad, err), PP_ERR_NULL_POINTER, "path");
    EXPECT_ERROR(pp_key_load(in_dir(dir, "params"), 0, NULL, err), PP_ERR_NULL_POINTER, "out");
    EXPECT_ERROR(pp_key_load(in_dir(dir, "no-such.params"), 0, &bad, err), PP_ERR_KEY, "no-such.params");
    CHECK(bad == NULL);
    /* A truncated key file: the message names the file and the expected size. */
    size_t n;
    uint8_t* params = read_file(in_dir(dir, "params"), &n);
    write_file(in_dir(dir, "truncated.params"), params, n - 100);
    EXPECT_ERROR(pp_key_load(in_dir(dir, "truncated.params"), 0, &bad, err), PP_ERR_KEY, "truncated.params");
    /* A point off the curve inside the H query: the message names the vector and byte offset. */
    params[n - 1000] ^= 0x5a;
    EXPECT_ERROR(pp_key_load_memory(params, n, 1, &bad, err), PP_ERR_KEY, "offset");
    EXPECT_ERROR(pp_key_load_memory(NULL, 10, 0, &bad, err), PP_ERR_NULL_POINTER, "bytes");
    free(params);

    pp_engine_config c;
    pp_engine_config_default(&c);
    pp_engine* e2 = NULL;
    c.gpu_workers = 0;
    EXPECT_ERROR(pp_engine_create(&c, &e2, err), PP_ERR_INVALID_ARGUMENT, "gpu_workers");
    pp_engine_config_default(&c);
    c.num_gpus = 2;
    c.gpus[0] = c.gpus[1] = 1;
    EXPECT_ERROR(pp_engine_create(&c, &e2, err), PP_ERR_INVALID_ARGUMENT, "listed twice");
    pp_engine_config_default(&c);
    c.cpu_fallback = 0;
    EXPECT_ERROR(pp_engine_create(&c, &e2, err), PP_ERR_UNSUPPORTED, "cpu_fallback");
    EXPECT_ERROR(pp_engine_create(NULL, &e2, err), PP_ERR_NULL_POINTER, "config");
    CHECK(e2 == NULL);

    uint8_t out[2 * PP_PROOF_BYTES];
    size_t sz = sizeof out;
    EXPECT_ERROR(pp_prove(NULL, key, inputs, 2, &seed, out, &sz, err), PP_ERR_NULL_POINTER, "engine");
    EXPECT_ERROR(pp_prove(engine, NULL, inputs, 2, &seed, out, &sz, err), PP_ERR_NULL_POINTER, "key");
    EXPECT_ERROR(pp_prove(engine, key, NULL, 2, &seed, out, &sz, err), PP_ERR_NULL_POINTER, "inputs");
    EXPECT_ERROR(pp_prove(engine, key, inputs, 2, &seed, out, NULL, err), PP_ERR_NULL_POINTER, "proofs_size");
    EXPECT_ERROR(pp_prove(engine, key, inputs, 2, &seed, NULL, &sz, err), PP_ERR_NULL_POINTER, "proofs");
    EXPECT_ERROR(pp_prove(engine, key, inputs, 0, &seed, out, &sz, err), PP_ERR_INVALID_ARGUMENT, "num_inputs is 0");
    /* Size query: a short buffer reports the size needed. */
    sz = 100;
    EXPECT_ERROR(pp_prove(engine, key, inputs, 2, &seed, out, &sz, err), PP_ERR_BUFFER_TOO_SMALL, "need 384");
    CHECK(sz == 2 * PP_PROOF_BYTES);
    sz = 0;
    EXPECT_ERROR(pp_prove(engine, key, inputs, 2, &seed, NULL, &sz, err), PP_ERR_BUFFER_TOO_SMALL, "need 384");
    CHECK(sz == 2 * PP_PROOF_BYTES);
    /* Without a pp_error the status still comes back. */
    sz = 1;
    CHECK(pp_prove(engine, key, inputs, 2, &seed, out, &sz, NULL) == PP_ERR_BUFFER_TOO_SMALL);

    pp_input in = assignment_input(&w0);
    sz = sizeof out;
    in.assignment.a_aux_density_words += 1;
    EXPECT_ERROR(pp_prove(engine, key, &in, 1, &seed, out, &sz, err), PP_ERR_INVALID_ARGUMENT,
                 "inputs[0].assignment.a_aux_density has");
    in = assignment_input(&w0);
    in.assignment.b = NULL;
    EXPECT_ERROR(pp_prove(engine, key, &in, 1, &seed, out, &sz, err), PP_ERR_NULL_POINTER, "inputs[0].assignment.b");
    in = assignment_input(&w0);
    in.kind = (pp_input_kind)99;
    EXPECT_ERROR(pp_prove(engine, key, &in, 1, &seed, out, &sz, err), PP_ERR_INVALID_ARGUMENT, "kind");
    /* A scalar that is not reduced. */
    uint8_t* bad_a = malloc(w0.rows * PP_FR_BYTES);
    memcpy(bad_a, w0.a, w0.rows * PP_FR_BYTES);
    memset(bad_a + 3 * PP_FR_BYTES, 0xff, PP_FR_BYTES);
    in = assignment_input(&w0);
    in.assignment.a = bad_a;
    EXPECT_ERROR(pp_prove(engine, key, &in, 1, &seed, out, &sz, err), PP_ERR_INVALID_ARGUMENT, "a[3]");
    /* A bad witness: c[0] changed, so a[0]·b[0] != c[0]. */
    uint8_t* bad_c = malloc(w0.rows * PP_FR_BYTES);
    memcpy(bad_c, w0.c, w0.rows * PP_FR_BYTES);
    static const uint8_t zero[PP_FR_BYTES];
    if (memcmp(bad_c, zero, PP_FR_BYTES) == 0)
      memcpy(bad_c, w0.input, PP_FR_BYTES); /* input[0] is the Montgomery form of 1 */
    else
      memset(bad_c, 0, PP_FR_BYTES);
    in = assignment_input(&w0);
    in.assignment.c = bad_c;
    EXPECT_ERROR(pp_prove(engine, key, &in, 1, &seed, out, &sz, err), PP_ERR_WITNESS, "a·b != c at constraint 0");
    free(bad_c);
    free(bad_a);

    int valid = 7;
    EXPECT_ERROR(pp_verify(key, w0.input + PP_FR_BYTES, w0.inputs - 1, proofs, 191, &valid, err),
                 PP_ERR_INVALID_ARGUMENT, "proof_size is 191");
    EXPECT_ERROR(pp_verify(key, w0.input + PP_FR_BYTES, w0.inputs - 2, proofs, PP_PROOF_BYTES, &valid, err),
                 PP_ERR_INVALID_ARGUMENT, "public inputs");
    EXPECT_ERROR(pp_verify(key, w0.input + PP_FR_BYTES, w0.inputs - 1, proofs, PP_PROOF_BYTES, NULL, err),
                 PP_ERR_NULL_POINTER, "valid");
    uint8_t big[PP_FR_BYTES];
    memset(big, 0xff, sizeof big);
    EXPECT_ERROR(pp_fr_from_canonical(big, big, 1, err), PP_ERR_INVALID_ARGUMENT, "in[0]");
    /* Either curve's field: big is above both moduli; a curve that is not one is refused. */
    EXPECT_ERROR(pp_curve_fr_from_canonical(PP_CURVE_BN254, big, big, 1, err), PP_ERR_INVALID_ARGUMENT, "in[0]");
    EXPECT_ERROR(pp_curve_fr_to_canonical((pp_curve)7, big, big, 1, err), PP_ERR_INVALID_ARGUMENT, "curve is 7");
    CHECK(strcmp(pp_status_name(PP_ERR_BUFFER_TOO_SMALL), "PP_ERR_BUFFER_TOO_SMALL") == 0);
    CHECK(strcmp(pp_status_name((pp_status)1234), "PP_ERR_UNKNOWN") == 0);
  }

  /* ----- start / finalize: inputs copied at start, buffers reused at once ----- */
  puts("start/finalize");
  {
    witness copy0 = read_ppw(in_dir(dir, "witness-0.ppw"));
    witness copy1 = read_ppw(in_dir(dir, "witness-1.ppw"));
    pp_input in2[2] = {assignment_input(&copy0), assignment_input(&copy1)};
    pp_pending* pending = NULL;
    OK(pp_prove_start(engine, key, in2, 2, &seed, &pending, err));
    /* The caller's buffers are gone before the proof runs (ASan catches any later read). */
    free_witness(&copy0);
    free_witness(&copy1);
    memset(in2, 0xab, sizeof in2);
    int done = 0;
    size_t parts = 0;
    OK(pp_prove_poll(pending, &done, &parts, err));
    CHECK(parts <= 2);
    uint8_t out[2 * PP_PROOF_BYTES];
    size_t sz = 10;
    EXPECT_ERROR(pp_prove_finalize(pending, out, &sz, err), PP_ERR_BUFFER_TOO_SMALL, "need 384");
    CHECK(sz == sizeof out);
    OK(pp_prove_finalize(pending, out, &sz, err));
    CHECK(sz == sizeof out && memcmp(out, proofs, sizeof out) == 0);
    OK(pp_prove_poll(pending, &done, &parts, err));
    CHECK(done == 1 && parts == 2);
    pp_pending_free(pending);

    /* Start errors come back from start. */
    pending = NULL;
    EXPECT_ERROR(pp_prove_start(engine, key, inputs, 0, &seed, &pending, err), PP_ERR_INVALID_ARGUMENT, "num_inputs");
    CHECK(pending == NULL);
    EXPECT_ERROR(pp_prove_finalize(NULL, out, &sz, err), PP_ERR_NULL_POINTER, "pending");
    EXPECT_ERROR(pp_cancel(NULL, err), PP_ERR_NULL_POINTER, "pending");

    /* The pending proof keeps its key and engine: release both before finalizing. */
    pp_key* k2 = NULL;
    pp_engine* eng2 = NULL;
    OK(pp_key_load(in_dir(dir, "params"), 0, &k2, err));
    pp_key_retain(k2);
    pp_key_release(k2); /* back to one reference */
    OK(pp_engine_create(&config, &eng2, err));
    OK(pp_prove_start(eng2, k2, inputs, 1, &seed, &pending, err));
    pp_key_release(k2);
    pp_engine_free(eng2);
    sz = sizeof out;
    OK(pp_prove_finalize(pending, out, &sz, err));
    CHECK(sz == PP_PROOF_BYTES && memcmp(out, proofs, PP_PROOF_BYTES) == 0);
    pp_pending_free(pending);

    /* Freed without finalize: the worker is cancelled and joined. */
    OK(pp_prove_start(engine, key, inputs, 2, &seed, &pending, err));
    pp_pending_free(pending);
  }

  /* ----- cancel ----- */
  puts("cancel");
  {
    enum { N = 16 };
    pp_input many[N];
    for (int i = 0; i < N; ++i) many[i] = inputs[i % 2];
    pp_pending* pending = NULL;
    OK(pp_prove_start(engine, key, many, N, &seed, &pending, err));
    OK(pp_cancel(pending, err));
    uint8_t* out = malloc(N * PP_PROOF_BYTES);
    size_t sz = N * PP_PROOF_BYTES;
    EXPECT_ERROR(pp_prove_finalize(pending, out, &sz, err), PP_ERR_CANCELLED, "cancel");
    EXPECT_ERROR(pp_prove_finalize(pending, out, &sz, err), PP_ERR_CANCELLED, "cancel"); /* stays cancelled */
    pp_pending_free(pending);
    free(out);
  }

  /* ----- concurrency: two threads share an engine and a key, two have their own engine ----- */
  puts("threads");
  {
    pp_engine* own[2] = {NULL, NULL};
    OK(pp_engine_create(&config, &own[0], err));
    OK(pp_engine_create(&config, &own[1], err));
    job jobs[4] = {{engine, key, &w0, 1, 0}, {engine, key, &w1, 2, 0}, {own[0], key, &w0, 3, 0}, {own[1], key, &w1, 4, 0}};
    pthread_t threads[4];
    for (int i = 0; i < 4; ++i) CHECK(pthread_create(&threads[i], NULL, prove_job, &jobs[i]) == 0);
    for (int i = 0; i < 4; ++i) pthread_join(threads[i], NULL);
    for (int i = 0; i < 4; ++i) CHECK(jobs[i].valid == 1);
    pp_engine_stats st;
    OK(pp_engine_stats_get(own[0], &st, err));
    CHECK(st.partitions_proven == 1 && st.calls_succeeded == 1 && st.partitions_on_cpu == 1);
    pp_engine_free(own[0]);
    pp_engine_free(own[1]);
  }

  /* ----- a host budget smaller than one partition: PP_ERR_OUT_OF_MEMORY, not a hang ----- */
  {
    pp_engine_config small = config;
    small.host_memory_budget = 4096;
    pp_engine* tight = NULL;
    OK(pp_engine_create(&small, &tight, err));
    uint8_t one[PP_PROOF_BYTES];
    size_t one_size = sizeof one;
    EXPECT_ERROR(pp_prove(tight, key, inputs, 1, &seed, one, &one_size, err), PP_ERR_OUT_OF_MEMORY, "host memory");
    pp_engine_free(tight);
  }

  /* ----- preload: the sample is checked (file, arrays), a CPU-only engine uploads nothing ----- */
  {
    pp_input sample;
    memset(&sample, 0, sizeof sample);
    sample.kind = PP_INPUT_PPW;
    sample.ppw.path = in_dir(dir, "witness-0.ppw");
    OK(pp_key_preload(engine, key, &sample, err));
    EXPECT_ERROR(pp_key_preload(engine, key, NULL, err), PP_ERR_NULL_POINTER, "sample");
    sample.ppw.path = in_dir(dir, "no-such-witness.ppw");
    EXPECT_ERROR(pp_key_preload(engine, key, &sample, err), PP_ERR_WITNESS, "no-such-witness.ppw");
    pp_input arrays = assignment_input(&w0);
    OK(pp_key_preload(engine, key, &arrays, err));
    arrays.assignment.b_aux_density_words -= 1; /* a density that disagrees with the key */
    EXPECT_ERROR(pp_key_preload(engine, key, &arrays, err), PP_ERR_INVALID_ARGUMENT, "b_aux_density");
    arrays.assignment.b_aux_density_words += 1;
    uint64_t* flipped = (uint64_t*)arrays.assignment.a_aux_density;
    const uint64_t saved = flipped[0];
    flipped[0] ^= 1; /* one more or one fewer A point than the key has */
    EXPECT_ERROR(pp_key_preload(engine, key, &arrays, err), PP_ERR_WITNESS, "A query");
    flipped[0] = saved;
    OK(pp_key_info_get(key, &info, err));
    CHECK(info.device_resident == 0);
  }

  /* ----- stats and eviction ----- */
  {
    pp_engine_stats st;
    OK(pp_engine_stats_get(engine, &st, err));
    printf("engine: %llu partitions, %llu ok, %llu failed, %llu cancelled; ms: checks %.1f ntt %.1f H %.1f L %.1f "
           "A %.1f B1 %.1f B2 %.1f asm %.1f gpu %.1f\n",
           (unsigned long long)st.partitions_proven, (unsigned long long)st.calls_succeeded,
           (unsigned long long)st.calls_failed, (unsigned long long)st.calls_cancelled, st.ms_checks, st.ms_ntt,
           st.ms_msm_h, st.ms_msm_l, st.ms_msm_a, st.ms_msm_b_g1, st.ms_msm_b_g2, st.ms_assembly, st.ms_gpu_busy);
    CHECK(st.partitions_proven >= 10 && st.calls_cancelled >= 1 && st.calls_failed >= 2);
    CHECK(st.ms_msm_h > 0 && st.ms_ntt > 0 && st.ms_gpu_busy == 0);
    OK(pp_key_evict(key, err));
    OK(pp_key_info_get(key, &info, err));
    CHECK(info.evictions == 1 && info.device_resident == 0 && info.device_copies == 0);
    /* forbidden_device_calls is not checked here: a CPU-only engine has no device to count (it is
     * 0 by construction). The GPU harness checks it on a CudaBackend, and shows a deliberate
     * forbidden call is caught ("no forbidden call" rows of proofpipe_gpu_kernels_test). */
    CHECK(st.gpus == 0 && st.key_loads == 0 && st.host_peak_bytes > 0);
    CHECK(st.srs_bytes_streamed == 0); /* the CPU prover streams no SRS */
    pp_gpu_info gi;
    memset(&gi, 0xab, sizeof gi);
    EXPECT_ERROR(pp_engine_gpu_info_get(engine, 0, &gi, err), PP_ERR_INVALID_ARGUMENT, "has 0 GPU(s)");
    EXPECT_ERROR(pp_engine_gpu_info_get(engine, 0, NULL, err), PP_ERR_NULL_POINTER, "out");
    EXPECT_ERROR(pp_engine_gpu_info_get(NULL, 0, &gi, err), PP_ERR_NULL_POINTER, "engine");
    OK(pp_prove(engine, key, inputs, 1, &seed, proofs, &size, err)); /* still proves after eviction */
    CHECK(verify(key, &w0, proofs) == 1);
  }

  pp_engine_free(engine);
  pp_key_release(key);
  free_witness(&w0);
  free_witness(&w1);
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  puts("all C API checks passed");
  return 0;
}
