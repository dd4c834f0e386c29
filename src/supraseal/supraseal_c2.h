/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* The C ABI of SupraSeal C2 as the Rust crate `supraseal-c2` declares it (its src/lib.rs), which
 * libproofpipe_supraseal.so implements on top of proofpipe's C API (docs/SUPRASEAL.md).
 *
 * This header is private to the library and its fuzz target: a caller of the drop-in uses the
 * crate (or declares the functions itself, as tests/supraseal/abi_caller.c does on purpose, so
 * that the layout below is checked by an independent declaration). */
#ifndef PROOFPIPE_SUPRASEAL_C2_H
#define PROOFPIPE_SUPRASEAL_C2_H

#include "abi_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Proves num_circuits circuits with randomisers r_s[i], s_s[i] (Montgomery form) and writes
 * proofs[0 .. num_circuits-1] in full. */
PP_SUPRASEAL_API RustError generate_groth16_proofs_c(const Assignment* provers, size_t num_circuits,
                                                     const blst_fr* r_s, const blst_fr* s_s, groth16_proof* proofs,
                                                     const SRS* srs);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PROOFPIPE_SUPRASEAL_C2_H */
