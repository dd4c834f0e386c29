/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* The C ABI of Curio's fork of SupraSeal C2 (filecoin-project/curio extern/supraseal-c2, the GPU
 * engine of the cuzk proving daemon), as its Rust crate declares it (its src/lib.rs), which
 * libproofpipe_cuzk.so implements on top of proofpipe's C API (docs/CUZK.md). The types and the
 * SRS functions are upstream's (abi_types.h); the prove call takes two more arguments and has a
 * split form.
 *
 * Private to the library: a caller uses the crate (contrib/supraseal-c2-cuzk) or declares the
 * functions itself, as tests/cuzk/cuzk_caller.c does on purpose. */
#ifndef PROOFPIPE_CUZK_C2_H
#define PROOFPIPE_CUZK_C2_H

#include "abi_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A handle the caller may pass as gpu_mtx. The fork locks it around its kernels; proofpipe's
 * engine interleaves callers with its own tokens, so the handle is accepted and never locked.
 * destroy_gpu_mutex(NULL) and of a handle already destroyed are no-ops. */
PP_SUPRASEAL_API void* create_gpu_mutex(void);
PP_SUPRASEAL_API void destroy_gpu_mutex(void* mtx);

/* generate_groth16_proofs_start_c then finalize_groth16_proof_c. gpu_index: a CUDA ordinal that
 * every circuit of the call is proved on, or -1 for wherever the engine finds room. */
PP_SUPRASEAL_API RustError generate_groth16_proofs_c(const Assignment* provers, size_t num_circuits,
                                                     const blst_fr* r_s, const blst_fr* s_s, groth16_proof* proofs,
                                                     const SRS* srs, void* gpu_mtx, int gpu_index);

/* Checks every argument, queues the circuits and returns a pending proof in *pending_out, as
 * the fork does once its GPU work no longer needs a, b and c: r_s, s_s, the Assignment structs
 * and a, b, c are copied (a, b, c while the first circuits already prove; start returns when the
 * last is copied), so they may be freed when start returns; inp_assignment_data,
 * aux_assignment_data and the densities are read in place and must stay valid and unchanged until
 * finalize (or destroy_pending_proof) returns. */
PP_SUPRASEAL_API RustError generate_groth16_proofs_start_c(const Assignment* provers, size_t num_circuits,
                                                           const blst_fr* r_s, const blst_fr* s_s, const SRS* srs,
                                                           void* gpu_mtx, int gpu_index, void** pending_out);

/* Waits for the pending proof, writes its num_circuits proofs and frees the handle, also when
 * it fails. An unknown handle (never returned by start, or finalized or destroyed already) is
 * an EINVAL error and nothing else happens. */
PP_SUPRASEAL_API RustError finalize_groth16_proof_c(void* pending, groth16_proof* proofs);

/* Cancels a pending proof that will not be finalized, waits until its arrays are no longer read
 * and frees the handle. NULL and unknown handles are no-ops. */
PP_SUPRASEAL_API void destroy_pending_proof(void* pending);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PROOFPIPE_CUZK_C2_H */
