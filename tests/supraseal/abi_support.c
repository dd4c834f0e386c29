/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* Support for the ABI test callers (abi_support.h). */
#define _GNU_SOURCE /* clock_gettime */
#include "abi_support.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char* g_prog = "abi";
int failures = 0;
int error_checks = 0;

void fail(const char* what) {
  fprintf(stderr, "%s: FAILED: %s\n", g_prog, what);
  ++failures;
}

void* xmalloc(size_t n) {
  void* p = malloc(n ? n : 1);
  if (!p) {
    fprintf(stderr, "%s: out of memory (%zu bytes)\n", g_prog, n);
    exit(2);
  }
  return p;
}

double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int k = 7; k >= 0; --k) v = (v << 8) | p[k];
  return v;
}

/* ----- multi-limb arithmetic (little-endian u64 limbs) -------------------------------------- */

/* BLS12-381's scalar modulus r and base field modulus p. */
static const uint64_t kR[4] = {0xffffffff00000001ULL, 0x53bda402fffe5bfeULL, 0x3339d80809a1d805ULL,
                               0x73eda753299d7d48ULL};
static const uint64_t kP[6] = {0xb9feffffffffaaabULL, 0x1eabfffeb153ffffULL, 0x6730d2a0f6b0f624ULL,
                               0x64774b84f38512bfULL, 0x4b1ba7b6434bacd7ULL, 0x1a0111ea397fe69aULL};

static bool geq(const uint64_t* a, const uint64_t* b, int n) {
  for (int i = n - 1; i >= 0; --i)
    if (a[i] != b[i]) return a[i] > b[i];
  return true;
}

static void sub_in_place(uint64_t* a, const uint64_t* b, int n) {
  uint64_t borrow = 0;
  for (int i = 0; i < n; ++i) {
    const uint64_t d = a[i] - b[i];
    const uint64_t out = d - borrow;
    borrow = (a[i] < b[i]) | (d < borrow);
    a[i] = out;
  }
}

/* x = 2x mod m, for x < m. */
static void double_mod(uint64_t* x, const uint64_t* m, int n) {
  const uint64_t top = x[n - 1] >> 63;
  for (int i = n - 1; i > 0; --i) x[i] = (x[i] << 1) | (x[i - 1] >> 63);
  x[0] <<= 1;
  if (top || geq(x, m, n)) sub_in_place(x, m, n); /* wraps correctly past 2^(64n) */
}

/* x = x / 2 mod m (m odd), for x < m. */
static void halve_mod(uint64_t* x, const uint64_t* m, int n) {
  uint64_t carry = 0;
  if (x[0] & 1) {
    for (int i = 0; i < n; ++i) {
      const uint64_t s = x[i] + m[i];
      const uint64_t out = s + carry;
      carry = (s < x[i]) | (out < carry);
      x[i] = out;
    }
  }
  for (int i = 0; i < n - 1; ++i) x[i] = (x[i] >> 1) | (x[i + 1] << 63);
  x[n - 1] = (x[n - 1] >> 1) | (carry << 63);
}

/* Canonical scalar -> Montgomery form x * 2^256 mod r (256 modular doublings). */
static void fr_to_montgomery(blst_fr* x) {
  for (int k = 0; k < 256; ++k) double_mod(x->l, kR, 4);
}

/* Montgomery form -> canonical x * 2^-384 mod p (384 modular halvings). */
static void fp_from_montgomery(uint64_t out[6], const blst_fp* x) {
  memcpy(out, x->l, 48);
  for (int k = 0; k < 384; ++k) halve_mod(out, kP, 6);
}

static bool fp_is_zero(const blst_fp* x) {
  for (int i = 0; i < 6; ++i)
    if (x->l[i]) return false;
  return true;
}

/* zcash's sign: the canonical value is above (p - 1) / 2. */
static bool fp_lexicographically_largest(const blst_fp* x) {
  uint64_t c[6], half[6];
  fp_from_montgomery(c, x);
  memcpy(half, kP, sizeof half);
  half[0] -= 1; /* p is odd */
  for (int i = 0; i < 5; ++i) half[i] = (half[i] >> 1) | (half[i + 1] << 63);
  half[5] >>= 1;
  return !geq(half, c, 6); /* c > half */
}

static void put_fp_be(uint8_t out[48], const blst_fp* x) {
  uint64_t c[6];
  fp_from_montgomery(c, x);
  for (int i = 0; i < 48; ++i) out[i] = (uint8_t)(c[5 - i / 8] >> (8 * (7 - i % 8)));
}

/* zcash compressed encodings (bellperson's Proof::write): flags 0x80 compressed, 0x40 infinity,
 * 0x20 sign of y; G2 writes x.c1 then x.c0 and takes the sign of y.c1, or of y.c0 when y.c1 = 0. */
static void compress_g1(uint8_t out[48], const blst_p1_affine* p) {
  memset(out, 0, 48);
  if (fp_is_zero(&p->x) && fp_is_zero(&p->y)) {
    out[0] = 0xc0;
    return;
  }
  put_fp_be(out, &p->x);
  out[0] |= 0x80 | (fp_lexicographically_largest(&p->y) ? 0x20 : 0);
}

static void compress_g2(uint8_t out[96], const blst_p2_affine* p) {
  memset(out, 0, 96);
  if (fp_is_zero(&p->x.fp[0]) && fp_is_zero(&p->x.fp[1]) && fp_is_zero(&p->y.fp[0]) && fp_is_zero(&p->y.fp[1])) {
    out[0] = 0xc0;
    return;
  }
  put_fp_be(out, &p->x.fp[1]);
  put_fp_be(out + 48, &p->x.fp[0]);
  const bool sign = fp_is_zero(&p->y.fp[1]) ? fp_lexicographically_largest(&p->y.fp[0])
                                            : fp_lexicographically_largest(&p->y.fp[1]);
  out[0] |= 0x80 | (sign ? 0x20 : 0);
}

void compress_proof(uint8_t out[192], const groth16_proof* p) {
  compress_g1(out, &p->a);
  compress_g2(out + 48, &p->b);
  compress_g1(out + 144, &p->c);
}

/* ----- witnesses ---------------------------------------------------------------------------- */

static uint8_t* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "%s: cannot open %s: %s\n", g_prog, path, strerror(errno));
    exit(2);
  }
  if (fseek(f, 0, SEEK_END) != 0) exit(2);
  const long n = ftell(f);
  if (n < 0 || fseek(f, 0, SEEK_SET) != 0) exit(2);
  uint8_t* bytes = xmalloc((size_t)n);
  if (fread(bytes, 1, (size_t)n, f) != (size_t)n) {
    fprintf(stderr, "%s: cannot read %s\n", g_prog, path);
    exit(2);
  }
  fclose(f);
  *size = (size_t)n;
  return bytes;
}

/* Montgomery multiplication mod r (CIOS, 4 limbs): x * y / 2^256 mod r. With y = 2^512 mod r it
 * turns a canonical scalar into Montgomery form in ~20 ns, where 256 doublings take microseconds
 * (a 2^24 partition has 67 million scalars). Checked against fr_to_montgomery at start-up. */
__extension__ typedef unsigned __int128 u128;
static uint64_t g_r_inv; /* -r^-1 mod 2^64 */
static uint64_t g_r2[4]; /* 2^512 mod r */
static void mont_mul(uint64_t out[4], const uint64_t x[4], const uint64_t y[4]) {
  uint64_t t[6] = {0, 0, 0, 0, 0, 0};
  for (int i = 0; i < 4; ++i) {
    uint64_t carry = 0;
    for (int j = 0; j < 4; ++j) {
      const u128 v = (u128)x[j] * y[i] + t[j] + carry;
      t[j] = (uint64_t)v;
      carry = (uint64_t)(v >> 64);
    }
    u128 v = (u128)t[4] + carry;
    t[4] = (uint64_t)v;
    t[5] = (uint64_t)(v >> 64);
    const uint64_t m = t[0] * g_r_inv;
    v = (u128)m * kR[0] + t[0];
    carry = (uint64_t)(v >> 64);
    for (int j = 1; j < 4; ++j) {
      v = (u128)m * kR[j] + t[j] + carry;
      t[j - 1] = (uint64_t)v;
      carry = (uint64_t)(v >> 64);
    }
    v = (u128)t[4] + carry;
    t[3] = (uint64_t)v;
    t[4] = t[5] + (uint64_t)(v >> 64);
  }
  if (t[4] || geq(t, kR, 4)) sub_in_place(t, kR, 4);
  memcpy(out, t, 32);
}
void init_montgomery(void) {
  uint64_t inv = 1; /* Newton: inv = r0^-1 mod 2^64 */
  for (int k = 0; k < 6; ++k) inv *= 2 - kR[0] * inv;
  g_r_inv = (uint64_t)0 - inv;
  memset(g_r2, 0, sizeof g_r2);
  g_r2[0] = 1;
  for (int k = 0; k < 512; ++k) double_mod(g_r2, kR, 4);
  /* Cross-check the fast path against the slow one on a few values. */
  for (uint64_t seed = 1; seed < 9; ++seed) {
    blst_fr a = {{seed * 0x9e3779b97f4a7c15ULL, seed, ~seed, seed << 20}};
    while (geq(a.l, kR, 4)) a.l[3] >>= 1;
    blst_fr slow = a, fast;
    fr_to_montgomery(&slow);
    mont_mul(fast.l, a.l, g_r2);
    if (memcmp(slow.l, fast.l, 32) != 0) {
      fprintf(stderr, "%s: Montgomery multiplication disagrees with the doublings\n", g_prog);
      exit(2);
    }
  }
}

struct convert_job {
  const uint8_t* in;
  blst_fr* out;
  uint64_t begin, end;
  uint64_t bad; /* first scalar >= r, or UINT64_MAX */
};
static void* convert_range(void* arg) {
  struct convert_job* j = arg;
  j->bad = UINT64_MAX;
  for (uint64_t i = j->begin; i < j->end; ++i) {
    uint64_t x[4];
    for (int k = 0; k < 4; ++k) x[k] = le64(j->in + 32 * i + 8 * k);
    if (geq(x, kR, 4)) {
      j->bad = i;
      return NULL;
    }
    mont_mul(j->out[i].l, x, g_r2);
  }
  return NULL;
}

/* n canonical 32-byte scalars at *at -> Montgomery-form blst_fr, on up to 16 threads. */
static blst_fr* take_scalars(const uint8_t** at, uint64_t n) {
  blst_fr* out = xmalloc(n ? (size_t)n * sizeof(blst_fr) : 1);
  enum { kThreads = 16 };
  const int threads = n < (1u << 16) ? 1 : kThreads;
  pthread_t tid[kThreads];
  struct convert_job jobs[kThreads];
  for (int t = 0; t < threads; ++t) {
    jobs[t] = (struct convert_job){*at, out, n * (uint64_t)t / (uint64_t)threads, n * (uint64_t)(t + 1) / (uint64_t)threads, 0};
    if (threads == 1) convert_range(&jobs[t]);
    else if (pthread_create(&tid[t], NULL, convert_range, &jobs[t]) != 0) {
      fprintf(stderr, "%s: pthread_create failed\n", g_prog);
      exit(2);
    }
  }
  for (int t = 0; t < threads; ++t) {
    if (threads > 1) pthread_join(tid[t], NULL);
    if (jobs[t].bad != UINT64_MAX) {
      fprintf(stderr, "%s: scalar %llu is not below r\n", g_prog, (unsigned long long)jobs[t].bad);
      exit(2);
    }
  }
  *at += 32 * n;
  return out;
}

static uint64_t* take_words(const uint8_t** at, uint64_t bits) {
  const uint64_t n = (bits + 63) / 64;
  uint64_t* out = xmalloc((size_t)n * 8);
  for (uint64_t i = 0; i < n; ++i) out[i] = le64(*at + 8 * i);
  *at += 8 * n;
  return out;
}

witness read_ppw(const char* path) {
  size_t size = 0;
  uint8_t* bytes = read_file(path, &size);
  witness w;
  memset(&w, 0, sizeof w);
  if (size < 32 || memcmp(bytes, "PPWITNS1", 8) != 0) {
    fprintf(stderr, "%s: %s is not a .ppw file\n", g_prog, path);
    exit(2);
  }
  w.rows = le64(bytes + 8);
  w.inputs = le64(bytes + 16);
  w.aux = le64(bytes + 24);
  const uint64_t limit = (uint64_t)1 << 40;
  if (w.rows > limit || w.inputs > limit || w.aux > limit ||
      size != 32 + 32 * (3 * w.rows + w.inputs + w.aux) + 8 * (2 * ((w.aux + 63) / 64) + (w.inputs + 63) / 64)) {
    fprintf(stderr, "%s: %s: sizes do not match the file length\n", g_prog, path);
    exit(2);
  }
  const uint8_t* at = bytes + 32;
  w.a = take_scalars(&at, w.rows);
  w.b = take_scalars(&at, w.rows);
  w.c = take_scalars(&at, w.rows);
  w.input = take_scalars(&at, w.inputs);
  w.auxv = take_scalars(&at, w.aux);
  w.a_aux_density = take_words(&at, w.aux);
  w.b_inp_density = take_words(&at, w.inputs);
  w.b_aux_density = take_words(&at, w.aux);
  free(bytes);
  return w;
}

static size_t popcount_words(const uint64_t* words, uint64_t bits) {
  size_t n = 0;
  for (uint64_t i = 0; i < bits; ++i) n += (size_t)((words[i / 64] >> (i % 64)) & 1);
  return n;
}

Assignment assignment_of(const witness* w) {
  Assignment a;
  a.a_aux_density = w->a_aux_density;
  a.a_aux_bit_len = (size_t)w->aux;
  a.a_aux_popcount = popcount_words(w->a_aux_density, w->aux);
  a.b_inp_density = w->b_inp_density;
  a.b_inp_bit_len = (size_t)w->inputs;
  a.b_inp_popcount = popcount_words(w->b_inp_density, w->inputs);
  a.b_aux_density = w->b_aux_density;
  a.b_aux_bit_len = (size_t)w->aux;
  a.b_aux_popcount = popcount_words(w->b_aux_density, w->aux);
  a.a = w->a;
  a.b = w->b;
  a.c = w->c;
  a.abc_size = (size_t)w->rows;
  a.inp_assignment_data = w->input;
  a.inp_assignment_size = (size_t)w->inputs;
  a.aux_assignment_data = w->auxv;
  a.aux_assignment_size = (size_t)w->aux;
  return a;
}

/* ----- randomisers -------------------------------------------------------------------------- */

uint64_t splitmix64(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* A uniform scalar below r, in Montgomery form (what blstrs::Scalar::random holds). */
blst_fr random_scalar(uint64_t* state) {
  blst_fr x;
  do {
    for (int i = 0; i < 4; ++i) x.l[i] = splitmix64(state);
    x.l[3] &= 0x7fffffffffffffffULL;
  } while (geq(x.l, kR, 4));
  fr_to_montgomery(&x);
  return x;
}


RustError prove_batch(prove_fn prove, const batch* job, groth16_proof* out, uint8_t fill) {
  memset(out, fill, job->n * sizeof(groth16_proof));
  return prove(job->provers, job->n, job->r_s, job->s_s, out, job->srs);
}

bool require_ok(RustError e, const char* what) {
  if (e.code == 0) {
    free(e.message);
    return true;
  }
  fprintf(stderr, "%s: %s failed: code=%d message=%s\n", g_prog, what, e.code, e.message ? e.message : "(null)");
  free(e.message);
  ++failures;
  return false;
}

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

double median_of(double* values, int n) {
  qsort(values, (size_t)n, sizeof(double), compare_doubles);
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

void free_witness(witness* w) {
  free(w->a), free(w->b), free(w->c), free(w->input), free(w->auxv);
  free(w->a_aux_density), free(w->b_inp_density), free(w->b_aux_density);
  memset(w, 0, sizeof *w);
}

bool write_compressed(const char* path, const groth16_proof* proofs, size_t n) {
  FILE* f = fopen(path, "wb");
  if (!f) {
    fprintf(stderr, "%s: cannot write %s: %s\n", g_prog, path, strerror(errno));
    return false;
  }
  bool ok = true;
  for (size_t i = 0; i < n; ++i) {
    uint8_t compressed[192];
    compress_proof(compressed, &proofs[i]);
    if (fwrite(compressed, 1, sizeof compressed, f) != sizeof compressed) ok = false;
  }
  if (fclose(f) != 0) ok = false;
  return ok;
}

void check_randomisers(prove_fn prove_call, const batch* good, uint64_t* state) {
  const size_t n = good->n;
  blst_fr* zero = xmalloc(n * sizeof(blst_fr));
  blst_fr* x = xmalloc(n * sizeof(blst_fr));
  blst_fr* y = xmalloc(n * sizeof(blst_fr));
  memset(zero, 0, n * sizeof(blst_fr));
  for (size_t i = 0; i < n; ++i) x[i] = random_scalar(state), y[i] = random_scalar(state);
  groth16_proof* p[4];
  const blst_fr* rs[4][2] = {{zero, x}, {zero, y}, {x, zero}, {y, zero}};
  int ok = 1;
  for (int k = 0; k < 4; ++k) {
    p[k] = xmalloc(n * sizeof(groth16_proof));
    batch job = *good;
    job.r_s = rs[k][0];
    job.s_s = rs[k][1];
    if (!require_ok(prove_batch(prove_call, &job, p[k], (uint8_t)k), "prove (randomisers)")) ok = 0;
  }
  for (size_t i = 0; ok && i < n; ++i) {
    const int a_same_r0 = !memcmp(&p[0][i].a, &p[1][i].a, sizeof p[0][i].a);
    const int b_same_r0 = !memcmp(&p[0][i].b, &p[1][i].b, sizeof p[0][i].b);
    const int a_same_s0 = !memcmp(&p[2][i].a, &p[3][i].a, sizeof p[2][i].a);
    const int b_same_s0 = !memcmp(&p[2][i].b, &p[3][i].b, sizeof p[2][i].b);
    if (!a_same_r0 || b_same_r0 || a_same_s0 || !b_same_s0) ok = 0;
  }
  if (!ok) fail("A must depend on r_s only and B on s_s only");
  printf("%s check=randomisers ok=%d\n", g_prog, ok);
  for (int k = 0; k < 4; ++k) free(p[k]);
  free(zero), free(x), free(y);
}

/* e must be a failure whose message contains `needle`; prints it and frees the message. */
void expect_failure(const char* name, RustError e, int want_code, const char* needle) {
  ++error_checks;
  const char* m = e.message ? e.message : "";
  printf("%s error_path=%s code=%d message=\"%s\"\n", g_prog, name, e.code, m);
  if (e.code == 0 || !e.message || (want_code && e.code != want_code) || (needle && !strstr(m, needle))) {
    fprintf(stderr, "%s: error path %s: expected code %d with a message containing \"%s\"\n", g_prog, name,
            want_code, needle ? needle : "");
    ++failures;
  }
  free(e.message);
}

void run_error_paths(prove_fn prove, const char* params, const char* witness_path, const batch* good,
                     groth16_proof* out) {
  const size_t n = good->n;
  Assignment* bad = xmalloc(n * sizeof(Assignment));
  /* The last circuit is the one corrupted, so that the message must name its index. */
  const size_t k = n - 1;
  char where[64];
  snprintf(where, sizeof where, "provers[%zu]", k);
  char field[192];

#define CORRUPT(name, statement, needle)                                                   \
  do {                                                                                     \
    memcpy(bad, good->provers, n * sizeof(Assignment));                                    \
    statement;                                                                             \
    snprintf(field, sizeof field, "%s.%s", where, needle);                                 \
    expect_failure(name, prove(bad, n, good->r_s, good->s_s, out, good->srs), EINVAL, field); \
  } while (0)

  expect_failure("null_provers", prove(NULL, n, good->r_s, good->s_s, out, good->srs), EINVAL,
                 "provers");
  expect_failure("zero_circuits", prove(good->provers, 0, good->r_s, good->s_s, out, good->srs),
                 EINVAL, "num_circuits");
  expect_failure("null_r_s", prove(good->provers, n, NULL, good->s_s, out, good->srs), EINVAL,
                 "r_s");
  expect_failure("null_s_s", prove(good->provers, n, good->r_s, NULL, out, good->srs), EINVAL,
                 "s_s");
  expect_failure("null_proofs", prove(good->provers, n, good->r_s, good->s_s, NULL, good->srs),
                 EINVAL, "proofs");
  expect_failure("null_srs", prove(good->provers, n, good->r_s, good->s_s, out, NULL), EINVAL,
                 "srs");
  const SRS empty = {NULL};
  expect_failure("empty_srs", prove(good->provers, n, good->r_s, good->s_s, out, &empty), EINVAL,
                 "srs");

  CORRUPT("aux_size", bad[k].aux_assignment_size += 1, "aux_assignment_size");
  CORRUPT("input_size", bad[k].inp_assignment_size -= 1, "inp_assignment_size");
  CORRUPT("a_aux_bit_len", bad[k].a_aux_bit_len += 64, "a_aux_bit_len");
  CORRUPT("b_inp_bit_len", bad[k].b_inp_bit_len += 1, "b_inp_bit_len");
  CORRUPT("b_aux_bit_len", bad[k].b_aux_bit_len = 0, "b_aux_bit_len");
  CORRUPT("a_aux_popcount", bad[k].a_aux_popcount += 1, "a_aux_popcount");
  CORRUPT("b_inp_popcount", bad[k].b_inp_popcount -= 1, "b_inp_popcount");
  CORRUPT("b_aux_popcount", bad[k].b_aux_popcount = 0, "b_aux_popcount");
  CORRUPT("abc_size_zero", bad[k].abc_size = 0, "abc_size");
  CORRUPT("abc_size_huge", bad[k].abc_size = (size_t)1 << 40, "abc_size");
  CORRUPT("abc_size_small_domain", bad[k].abc_size = 1, "abc_size");
  CORRUPT("null_a", bad[k].a = NULL, "a is NULL");
  CORRUPT("null_aux", bad[k].aux_assignment_data = NULL, "aux_assignment_data");
  CORRUPT("null_input", bad[k].inp_assignment_data = NULL, "inp_assignment_data");
  CORRUPT("null_density", bad[k].b_aux_density = NULL, "b_aux_density");

  /* Values that are not reduced scalars, and a row that is not satisfied: the prover finds them
     while it proves the caller's arrays in place, and the message names the field and index. */
  const Assignment* g = &good->provers[k];
  const size_t last_row = g->abc_size - 1, last_aux = g->aux_assignment_size - 1;
  blst_fr* a_bad = xmalloc(g->abc_size * sizeof(blst_fr));
  memcpy(a_bad, g->a, g->abc_size * sizeof(blst_fr));
  memset(&a_bad[last_row], 0xff, sizeof(blst_fr));
  char needle[96];
  snprintf(needle, sizeof needle, "a[%zu] is not a reduced scalar", last_row);
  CORRUPT("a_not_reduced", bad[k].a = a_bad, needle);
  blst_fr* aux_bad = xmalloc(g->aux_assignment_size * sizeof(blst_fr));
  memcpy(aux_bad, g->aux_assignment_data, g->aux_assignment_size * sizeof(blst_fr));
  memset(&aux_bad[last_aux], 0xff, sizeof(blst_fr));
  snprintf(needle, sizeof needle, "aux_assignment_data[%zu] is not a reduced scalar", last_aux);
  CORRUPT("aux_not_reduced", bad[k].aux_assignment_data = aux_bad, needle);
  blst_fr* c_bad = xmalloc(g->abc_size * sizeof(blst_fr));
  memcpy(c_bad, g->c, g->abc_size * sizeof(blst_fr));
  static const blst_fr zero_fr;
  /* c[0] becomes 0, or 1 (input[0] holds one) where it was 0: a·b != c at row 0. */
  c_bad[0] = memcmp(&c_bad[0], &zero_fr, sizeof zero_fr) == 0 ? g->inp_assignment_data[0] : zero_fr;
  memcpy(bad, good->provers, n * sizeof(Assignment));
  bad[k].c = c_bad;
  snprintf(field, sizeof field, "%s: a·b != c at constraint 0", where);
  expect_failure("row_not_satisfied", prove(bad, n, good->r_s, good->s_s, out, good->srs), EINVAL,
                 field);
  free(a_bad), free(aux_bad), free(c_bad);
#undef CORRUPT

  /* A randomiser that is not a reduced scalar. */
  blst_fr* r_bad = xmalloc(n * sizeof(blst_fr));
  memcpy(r_bad, good->r_s, n * sizeof(blst_fr));
  memset(&r_bad[k], 0xff, sizeof(blst_fr));
  snprintf(field, sizeof field, "r_s[%zu]", k);
  expect_failure("r_not_reduced", prove(good->provers, n, r_bad, good->s_s, out, good->srs),
                 EINVAL, field);
  free(r_bad);

  /* Keys: a missing file (errno), a file that is not a .params, NULL arguments. */
  SRS srs = {NULL};
  expect_failure("missing_params", create_SRS(&srs, "/nonexistent/abi_caller.params", false), ENOENT,
                 "/nonexistent/abi_caller.params");
  expect_failure("missing_params_cached", create_SRS(&srs, "/nonexistent/abi_caller.params", true), ENOENT,
                 "/nonexistent/abi_caller.params");
  expect_failure("not_params", create_SRS(&srs, witness_path, false), EINVAL, witness_path);
  expect_failure("null_path", create_SRS(&srs, NULL, false), EINVAL, "srs_path");
  expect_failure("null_ret", create_SRS(NULL, params, false), EINVAL, "ret");
  if (srs.ptr != NULL) fail("a failed create_SRS set ret->ptr");

  /* NULL and empty handles are no-ops. */
  drop_SRS(NULL);
  evict_SRS(NULL);
  drop_SRS(&empty);
  evict_SRS(&empty);
  const SRS none = clone_SRS(NULL);
  const SRS none2 = clone_SRS(&empty);
  if (none.ptr || none2.ptr) fail("clone_SRS of no key returned a key");
  ++error_checks;
  printf("%s error_path=null_handles ok=1\n", g_prog);
  free(bad);
}
