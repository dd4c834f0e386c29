/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* proofpipe's C API: Groth16 proofs over BLS12-381 and BN254 for FFI callers (C, Rust, Go). Design: docs/C-API.md. */
#ifndef PROOFPIPE_PROOFPIPE_H
#define PROOFPIPE_PROOFPIPE_H

#include <stddef.h>
#include <stdint.h>

#define PP_VERSION_MAJOR 0
#define PP_VERSION_MINOR 9
#define PP_VERSION_PATCH 0
/* 0xMMmmpp: compare against pp_version() to detect a header/library mismatch. */
#define PP_VERSION ((PP_VERSION_MAJOR << 16) | (PP_VERSION_MINOR << 8) | PP_VERSION_PATCH)

#if defined(PROOFPIPE_BUILDING_CAPI)
#define PP_API __attribute__((visibility("default")))
#else
#define PP_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ----- constants ------------------------------------------------------------------------- */

#define PP_PROOF_BYTES 192 /* bellperson Proof::write: A (G1 compressed 48) | B (G2, 96) | C (G1, 48) */
/* A BN254 key's proof: A, B, C uncompressed, every coordinate a 32-byte big-endian integer, in the
 * order A.x, A.y, B.x.c1, B.x.c0, B.y.c1, B.y.c0, C.x, C.y: Ethereum's pairing precompile (EIP-197)
 * order, in which snarkjs's Solidity verifier takes a, b, c. */
#define PP_PROOF_BYTES_BN254 256
#define PP_FR_BYTES 32     /* one Fr scalar: 4 little-endian u64 limbs (see "Scalars" below) */
#define PP_MAX_GPUS 16
#define PP_ERROR_MESSAGE_BYTES 1024

/* ----- status and errors ----------------------------------------------------------------- */

typedef enum pp_status {
  PP_OK = 0,
  PP_ERR_NULL_POINTER = 1,     /* a required pointer argument was NULL (the message names it) */
  PP_ERR_INVALID_ARGUMENT = 2, /* a value or size is out of range or inconsistent */
  PP_ERR_BUFFER_TOO_SMALL = 3, /* the output buffer is short; *size was set to the bytes needed */
  PP_ERR_KEY = 4,              /* the proving key file/bytes cannot be read or are malformed */
  PP_ERR_WITNESS = 5,          /* a witness is malformed, does not match the key or is unsatisfied */
  PP_ERR_CANCELLED = 6,        /* pp_cancel() was called on this pending proof */
  PP_ERR_UNSUPPORTED = 7,      /* the configuration asks for something this build cannot do */
  PP_ERR_OUT_OF_MEMORY = 8,
  PP_ERR_INTERNAL = 9,         /* a bug: please report it with the message */
  PP_ERR_DEVICE = 10           /* a GPU failed and cpu_fallback is 0 (the message names the GPU and the call) */
} pp_status;

/* Every fallible function returns a pp_status and takes `pp_error* err` as its last argument.
 * err may be NULL. When it is not, the function sets err->code to the returned status and
 * err->message to a NUL-terminated explanation naming the argument, partition, file, section,
 * index or byte offset at fault ("" on success). The error travels with the call, not with the
 * thread, so it is safe from Go (goroutines move between OS threads) and from thread pools. */
typedef struct pp_error {
  pp_status code;
  char message[PP_ERROR_MESSAGE_BYTES];
} pp_error;

/* A static, never-NULL name such as "PP_ERR_BUFFER_TOO_SMALL" ("PP_ERR_UNKNOWN" otherwise). */
PP_API const char* pp_status_name(pp_status status);
/* PP_VERSION of the library that was loaded. */
PP_API uint32_t pp_version(void);

/* ----- curves and scalars -------------------------------------------------------------------
 * A key is over one curve (pp_key_info.curve): BLS12-381 (bellperson .params, snarkjs bls12381
 * .zkey) or BN254 (snarkjs bn128 .zkey). Every scalar that crosses this API is PP_FR_BYTES bytes
 * of the key's scalar field r: the Montgomery form x*2^256 mod r as 4 little-endian 64-bit limbs,
 * least significant first, fully reduced (< r) — for BLS12-381 the memory layout of
 * blstrs::Scalar / blst_fr, i.e. what bellperson's ProvingAssignment holds. Values >= r are
 * rejected (PP_ERR_INVALID_ARGUMENT naming the array and index). */
typedef enum pp_curve { PP_CURVE_BLS12_381 = 0, PP_CURVE_BN254 = 1 } pp_curve;

/* Converts n canonical little-endian 32-byte BLS12-381 scalars (the .wtns / .ppw encoding) to the
 * Montgomery form above; `in` and `out` may be the same buffer. */
PP_API pp_status pp_fr_from_canonical(uint8_t* out, const uint8_t* in, size_t n, pp_error* err);
PP_API pp_status pp_fr_to_canonical(uint8_t* out, const uint8_t* in, size_t n, pp_error* err);
/* The same for either curve's scalar field (PP_ERR_INVALID_ARGUMENT for an unknown curve). */
PP_API pp_status pp_curve_fr_from_canonical(pp_curve curve, uint8_t* out, const uint8_t* in, size_t n, pp_error* err);
PP_API pp_status pp_curve_fr_to_canonical(pp_curve curve, uint8_t* out, const uint8_t* in, size_t n, pp_error* err);

/* ----- engine ----------------------------------------------------------------------------
 * The engine is the prover of the process: the pipelined engine (docs/ENGINE.md) over every
 * configured GPU — gpu_workers partitions in flight per GPU, uploads overlapping kernels, the
 * SRS of each key uploaded once per GPU and kept there until pp_key_evict or the key's last
 * release — or over the CPU prover when no GPU is configured or visible. GPU proofs equal the
 * CPU prover's byte for byte. A GPU failure moves that GPU's partitions to the CPU prover when
 * cpu_fallback is 1. Create one engine per process and share it: every call on it runs in
 * parallel with the others. */

typedef struct pp_engine pp_engine;

typedef struct pp_engine_config {
  /* GPUs to use: num_gpus = -1 for every visible GPU, 0 for none (CPU only), or 1..PP_MAX_GPUS
   * with the CUDA ordinals in gpus[0 .. num_gpus-1] (distinct, >= 0). */
  int num_gpus;
  int gpus[PP_MAX_GPUS];
  int gpu_workers; /* workers per GPU (gw, 1..16): partitions in flight per device */
  uint64_t device_memory_budget; /* bytes of device memory per GPU; 0: all but the reserve */
  uint64_t host_memory_budget;   /* bytes of host memory for partitions in flight (their witnesses and
                                    working state); 0: unlimited. A partition larger than the whole
                                    budget fails with PP_ERR_OUT_OF_MEMORY. */
  int cpu_fallback; /* 1: prove on the CPU when no GPU can (the default); 0: fail instead */
  int threads;      /* CPU worker threads of this engine; 0: all cores */
  int check_proofs; /* 1 (the default): every proof is verified against the key's verifying key and its
                       public inputs before it is returned; a rejected one is proved again (another GPU,
                       the same one, then the CPU) and counted in proofs_rejected. 0: unchecked */
} pp_engine_config;

/* Fills *config with the defaults: every GPU, gw 2, no budgets, CPU fallback on, all cores,
 * proofs checked. */
PP_API void pp_engine_config_default(pp_engine_config* config);

/* Creates an engine. PP_ERR_UNSUPPORTED when the configuration needs a GPU (cpu_fallback 0) and
 * this build has no GPU prover or no configured GPU is visible. */
PP_API pp_status pp_engine_create(const pp_engine_config* config, pp_engine** out, pp_error* err);
/* Releases the caller's engine handle (NULL is a no-op). Pending proofs started on it keep the
 * engine alive until they are freed, so this never blocks on them. */
PP_API void pp_engine_free(pp_engine* engine);

typedef struct pp_engine_stats {
  uint64_t partitions_proven; /* successful partitions since creation */
  uint64_t calls_succeeded, calls_failed, calls_cancelled;
  uint64_t partitions_on_cpu; /* of partitions_proven, those the CPU prover made */
  /* Cumulative wall time per stage, milliseconds (the CPU prover's ProveTimings; where L's and
   * B_G1's scalars are dense they join H's MSM and their time is in ms_msm_h). */
  double ms_checks, ms_ntt, ms_msm_h, ms_msm_l, ms_msm_a, ms_msm_b_g1, ms_msm_b_g2, ms_assembly;
  double ms_gpu_busy; /* time some GPU ran kernels for this engine (0 on the CPU prover) */
  uint32_t gpus;      /* GPUs the engine proves on (0: CPU only) */
  uint64_t key_loads; /* SRS uploads to a GPU (a key proved many times on one GPU counts once) */
  uint64_t key_evictions;          /* device copies dropped (pp_key_evict, key release, making room) */
  uint64_t host_peak_bytes;        /* peak host memory charged: partitions in flight and GPU provers' holdings */
  uint64_t forbidden_device_calls; /* allocations, frees, memory queries or device-wide syncs on the
                                      proving path since start-up: 0 unless something is wrong */
  double ms_gpu_upload;            /* time the GPUs' copy engines spent uploading witnesses */
  uint64_t proofs_checked;         /* proofs verified before release (check_proofs), retries included */
  uint64_t proofs_rejected;        /* of those, proofs that did not verify and were proved again */
  uint64_t proofs_rejected_cpu;    /* of the rejected, proofs of the CPU fallback (per GPU: pp_gpu_info) */
  double ms_verify;                /* time spent verifying them, summed over the engine's workers */
  /* SRS points copied to the GPUs for partitions of keys streamed from host memory (a budget
   * below the key's size): every H point and the split queries' points whose scalar is not 0, per
   * partition; 0 while keys are resident. Its growth per proof is the PCIe traffic a streamed
   * plan pays beyond key_loads. Since 0.8. */
  uint64_t srs_bytes_streamed;
} pp_engine_stats;

PP_API pp_status pp_engine_stats_get(const pp_engine* engine, pp_engine_stats* out, pp_error* err);

/* One GPU of the engine (index 0 .. pp_engine_stats.gpus - 1, in the engine's order). Device
 * memory counts what the engine allocated: each key resident on the GPU has one arena (its SRS,
 * its tables and the working space of gpu_workers partitions) planned to fit the budget; an
 * evicted key's arena stays allocated until its last partition in flight ends. Since 0.4. */
typedef struct pp_gpu_info {
  int32_t device;          /* CUDA ordinal */
  uint32_t resident_keys;  /* keys with a copy on this GPU */
  uint64_t memory_total;   /* the card's memory, bytes */
  uint64_t memory_budget;  /* what the arenas may take together: device_memory_budget, or the card
                              less the reserve */
  uint64_t memory_used;    /* bytes of arenas allocated now */
  uint64_t memory_peak;    /* the most memory_used has been since pp_engine_create */
  uint64_t proofs_checked;  /* proofs this GPU made that were verified before release */
  uint64_t proofs_rejected; /* of those, proofs that did not verify (proved again elsewhere) */
  /* Since 0.9: */
  uint32_t healthy;               /* 1; 0 once the GPU was lost (a fault that leaves it unusable): the
                                     engine then proves its partitions on the other GPUs */
  uint32_t reserved;              /* 0 */
  uint64_t partitions;            /* partitions proved on this GPU */
  uint64_t partitions_handed_off; /* partitions it held when it was lost, proved again elsewhere */
  double ms_busy;                 /* time its compute stream ran this engine's partitions (the
                                     per-GPU share of pp_engine_stats.ms_gpu_busy) */
} pp_gpu_info;

/* PP_ERR_INVALID_ARGUMENT for an index past the last GPU (a CPU-only engine has none). */
PP_API pp_status pp_engine_gpu_info_get(const pp_engine* engine, uint32_t index, pp_gpu_info* out, pp_error* err);

/* ----- proving key -----------------------------------------------------------------------
 * A bellperson `.params` file (Groth16 Parameters, uncompressed points; or a proofpipe key
 * cache), or a snarkjs `.zkey` (Groth16, curve bls12381 or bn128), told apart by the file's first
 * bytes (a .zkey starts with "zkey"). A .zkey key proves PP_INPUT_WTNS inputs in snarkjs's
 * convention (its proofs verify under snarkjs's verification_key.json); a .params key every other
 * kind. A bn128 .zkey is a BN254 key: its proofs are PP_PROOF_BYTES_BN254 bytes each, its scalars
 * BN254's (pp_curve_fr_from_canonical), and it proves on the same engine and GPUs.
 * The VK points are always subgroup-checked; the query points too with subgroup_check = 1
 * (slower; for keys that do not come from a trusted file). Handles are reference-counted: pp_key_load returns a
 * handle with count 1, pp_key_retain adds one, pp_key_release drops one and frees the key at 0.
 * Pending proofs hold their own reference. */

typedef struct pp_key pp_key;

PP_API pp_status pp_key_load(const char* path, int subgroup_check, pp_key** out, pp_error* err);
/* The same from bytes in memory (copied; the caller may free them on return). */
PP_API pp_status pp_key_load_memory(const uint8_t* bytes, size_t size, int subgroup_check, pp_key** out,
                                    pp_error* err);
PP_API void pp_key_retain(pp_key* key);  /* NULL is a no-op */
PP_API void pp_key_release(pp_key* key); /* NULL is a no-op */

typedef struct pp_key_info {
  uint64_t num_inputs;  /* public inputs including the constant 1 (length of an input assignment) */
  uint64_t num_aux;     /* private variables (length of an aux assignment) */
  uint64_t domain_size; /* evaluation domain n: a, b, c may have at most n rows */
  uint64_t h, l, a, b_g1, b_g2; /* points per query */
  int device_resident;  /* 1 while some GPU holds a copy of the key (0: host only) */
  uint64_t evictions;   /* pp_key_evict calls so far */
  uint32_t device_copies; /* GPUs holding a copy (of every engine that proved with the key) */
  uint32_t curve;         /* pp_curve: the key's curve */
  uint32_t proof_bytes;   /* bytes of one proof of this key: PP_PROOF_BYTES or PP_PROOF_BYTES_BN254 */
} pp_key_info;

PP_API pp_status pp_key_info_get(const pp_key* key, pp_key_info* out, pp_error* err);
/* Drops every GPU's copy of the key in every engine that proved with it; the host copy stays
 * and the next proof uploads it again. Safe while proofs run on the key: a GPU's copy is freed
 * when the last of its partitions in flight ends. The last pp_key_release does the same. */
PP_API pp_status pp_key_evict(pp_key* key, pp_error* err);

/* Uploads the key to every GPU of `engine` now (the arena, the tables, the SRS), so that the
 * first proof does not pay for it; the copies stay until evicted, as after a proof. A GPU's
 * layout of the key follows the circuit's column densities, which travel with the witnesses:
 * `sample` is one partition's input (pp_input below; of a .ppw file only the header and the
 * densities are read, of arrays only the density bitmaps; a PP_INPUT_WTNS sample is not read, as a
 * .zkey key's columns are the key's own). A CPU-only engine checks the sample
 * and does nothing else. PP_ERR_DEVICE (the message says why) when a GPU cannot take the key. */
struct pp_input;
PP_API pp_status pp_key_preload(pp_engine* engine, const pp_key* key, const struct pp_input* sample, pp_error* err);

/* ----- inputs: one partition ---------------------------------------------------------------
 * One partition is given in one of three forms (pp_input.kind):
 *
 * PP_INPUT_ASSIGNMENT — bellperson's ProvingAssignment, all arrays caller-owned:
 *   a, b, c        num_rows scalars each: the per-constraint evaluations A·z, B·z, C·z including
 *                  bellman's input constraints (num_rows = constraints + inputs <= domain size);
 *   input          num_inputs scalars, input[0] = 1;   aux  num_aux scalars;
 *   densities      bit i of word i/64, LSB first, high bits of the last word zero:
 *                  a_aux_density and b_aux_density ceil(num_aux/64) words,
 *                  b_input_density ceil(num_inputs/64) words (bellperson's DensityTracker bitvecs).
 * PP_INPUT_PPW — a proofpipe `.ppw` witness (docs/FORMATS.md) from `ppw`.
 * PP_INPUT_R1CS_WTNS — a circom `.r1cs` from `r1cs` and a `.wtns` from `wtns`; the proof is for
 *   a .params key in bellman's row order (`proofpipe zkey setup --via-params`, bellperson's
 *   setup). The R1CS is parsed once per partition.
 * PP_INPUT_WTNS — a circom `.wtns` from `wtns`, for a key loaded from a .zkey (and only for
 *   one): the witness is computed from the key's coefficients, as `snarkjs groth16 prove` does.
 *   A file is read by start (pp_prove_start) or by the call (pp_prove). A witness that does not
 *   satisfy the circuit gives a proof that fails the check before release (pp_engine_config
 *   check_proofs; on by default): PP_ERR_WITNESS.
 * A pp_source is a file (path != NULL) or bytes in memory (path == NULL: data, size).
 *
 * Randomisers: r and s (PP_FR_BYTES each, Montgomery form) may be given per partition; NULL
 * for both draws them (see pp_prove). Give both or neither. */

typedef enum pp_input_kind {
  PP_INPUT_ASSIGNMENT = 0,
  PP_INPUT_PPW = 1,
  PP_INPUT_R1CS_WTNS = 2,
  PP_INPUT_WTNS = 3
} pp_input_kind;

typedef struct pp_source {
  const char* path;
  const uint8_t* data;
  size_t size;
} pp_source;

typedef struct pp_assignment {
  const uint8_t* a;
  const uint8_t* b;
  const uint8_t* c;
  size_t num_rows;
  const uint8_t* input;
  size_t num_inputs;
  const uint8_t* aux;
  size_t num_aux;
  const uint64_t* a_aux_density;
  size_t a_aux_density_words;
  const uint64_t* b_input_density;
  size_t b_input_density_words;
  const uint64_t* b_aux_density;
  size_t b_aux_density_words;
} pp_assignment;

typedef struct pp_input {
  pp_input_kind kind;
  pp_assignment assignment; /* PP_INPUT_ASSIGNMENT */
  pp_source ppw;            /* PP_INPUT_PPW */
  pp_source r1cs, wtns;     /* PP_INPUT_R1CS_WTNS; wtns alone: PP_INPUT_WTNS */
  const uint8_t* r;         /* optional randomisers, PP_FR_BYTES each */
  const uint8_t* s;
} pp_input;

/* ----- proving -----------------------------------------------------------------------------
 * Proves num_inputs partitions for `key` and writes num_inputs * proof bytes (the key's
 * pp_key_info.proof_bytes: PP_PROOF_BYTES, or PP_PROOF_BYTES_BN254 for a BN254 key) to
 * `proofs`, in input order. *proofs_size: in, the capacity of `proofs`; out, the bytes written,
 * or the bytes needed with PP_ERR_BUFFER_TOO_SMALL (checked before any work is done).
 *
 * seed: NULL draws every r, s from the operating system's random source (what a real prover
 * must do: r, s are what makes the proof zero-knowledge). Non-NULL draws them from a
 * deterministic generator seeded with *seed — the same proofs as `proofpipe prove --seed` —
 * for tests and reproducible runs only. Randomisers given in a pp_input take precedence.
 *
 * The call returns when the proofs are written; every input may be freed on return. Until then,
 * assignment arrays are read where they lie (not copied, when 8-byte aligned; their range is
 * checked in the pass that checks a*b = c while the device proves, and a value >= r fails the
 * call, naming "partition k" (= inputs[k]), the array and the index), so they must not change
 * during the call. */
PP_API pp_status pp_prove(pp_engine* engine, const pp_key* key, const pp_input* inputs, size_t num_inputs,
                          const uint64_t* seed, uint8_t* proofs, size_t* proofs_size, pp_error* err);

/* Asynchronous proving. pp_prove_start validates and copies every in-memory input before it
 * returns, so the caller may free or reuse all of its buffers at once; the proving runs on a
 * thread of its own. A .ppw FILE is checked at start (header, size, counts against the key) and
 * its scalars are read while the partitions before it prove (reading overlaps proving); a bad
 * scalar found then is reported by finalize as PP_ERR_WITNESS naming the file and offset, so do
 * not change the files until finalize returns. Other input errors are reported by start;
 * proving errors by finalize. pp_prove behaves the same in one call. */
typedef struct pp_pending pp_pending;

PP_API pp_status pp_prove_start(pp_engine* engine, const pp_key* key, const pp_input* inputs, size_t num_inputs,
                                const uint64_t* seed, pp_pending** out, pp_error* err);
/* pp_prove_start with options (pp_prove_options_default fills the defaults, which make it
 * pp_prove_start with seed = NULL):
 *   seed    as pp_prove_start's;
 *   gpu     -1: the engine places each partition on whichever GPU is free first; 0 .. gpus - 1:
 *           every partition of the call runs on that GPU of the engine (pp_engine_gpu_info_get's
 *           index). A CPU-only engine has one prover, index 0. Another value: PP_ERR_INVALID_ARGUMENT;
 *   borrow  what start copies of PP_INPUT_ASSIGNMENT arrays, and so how long the caller must
 *           keep them valid and unchanged:
 *           PP_BORROW_NONE (0): everything is copied before start returns (pp_prove_start);
 *           PP_BORROW_ALL (1): nothing is copied; every array is read where it lies, as pp_prove
 *             does, until pp_prove_finalize (or pp_pending_free, which waits) returns;
 *           PP_BORROW_ASSIGNMENT (2): input, aux and the densities are read where they lie until
 *             finalize returns; a, b and c are copied while the first partitions already prove, and
 *             start returns once the last is copied, so a, b, c may be freed when start returns
 *             (the contract of Curio's SupraSeal fork, whose start returns after its kernels).
 *           The pp_input structs themselves may go at once. Shapes are checked by start, values
 *           while the device proves (errors then come from finalize). */
#define PP_BORROW_NONE 0
#define PP_BORROW_ALL 1
#define PP_BORROW_ASSIGNMENT 2
typedef struct pp_prove_options {
  const uint64_t* seed;
  int gpu;
  int borrow;
} pp_prove_options;

PP_API void pp_prove_options_default(pp_prove_options* options);
PP_API pp_status pp_prove_start_with(pp_engine* engine, const pp_key* key, const pp_input* inputs, size_t num_inputs,
                                     const pp_prove_options* options, pp_pending** out, pp_error* err);
/* Non-blocking: *done = 1 when finalize would not wait; *partitions_done counts proven
 * partitions of this request (either pointer may be NULL). */
PP_API pp_status pp_prove_poll(const pp_pending* pending, int* done, size_t* partitions_done, pp_error* err);
/* Waits for the proofs and writes them like pp_prove (the same size contract). May be called
 * again after PP_ERR_BUFFER_TOO_SMALL, or after success to copy the proofs again; a proving
 * error or PP_ERR_CANCELLED is returned by every call. */
PP_API pp_status pp_prove_finalize(pp_pending* pending, uint8_t* proofs, size_t* proofs_size, pp_error* err);
/* Asks the proof to stop at the next partition boundary and returns at once; finalize then
 * reports PP_ERR_CANCELLED unless the proofs were already complete. */
PP_API pp_status pp_cancel(pp_pending* pending, pp_error* err);
/* Cancels if still running, waits for the worker, frees the handle (NULL is a no-op). */
PP_API void pp_pending_free(pp_pending* pending);

/* ----- verifying ---------------------------------------------------------------------------
 * Checks one proof (the key's proof_bytes) against the key's verifying key and the public
 * inputs (num_public scalars, Montgomery form, WITHOUT the leading 1: input[1..] of the
 * assignment). *valid = 1 for a valid proof, 0 for an invalid one (including a proof whose
 * points do not decode); the status is PP_OK in both cases. */
PP_API pp_status pp_verify(const pp_key* key, const uint8_t* public_inputs, size_t num_public, const uint8_t* proof,
                           size_t proof_size, int* valid, pp_error* err);

/* Thread safety: every function may be called from any thread. An engine and a key may be
 * shared by any number of concurrent pp_prove / pp_prove_start / pp_verify calls; a pending
 * handle may be polled, cancelled and finalized from several threads, but pp_pending_free must
 * be the last call on it, as pp_key_release on the last reference and pp_engine_free must be
 * on theirs. There is no global lock: calls on different handles never wait for each other. */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PROOFPIPE_PROOFPIPE_H */
