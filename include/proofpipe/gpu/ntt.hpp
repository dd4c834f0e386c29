// SPDX-License-Identifier: Apache-2.0 OR MIT
// GPU number-theoretic transforms over a scalar field (BLS12-381's or BN254's Fr) and the prover's
// fused element-wise H steps, plus the CPU twin that runs the same kernel bodies
// (src/gpu/ntt_kernels.hpp) on the host.
//
// Device entry points never allocate and never synchronise: tables and data live in memory
// the caller provides, work is queued on the caller's stream, and errors come back as Status.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "proofpipe/gpu/ntt_sizing.hpp"
#include "proofpipe/gpu/status.hpp"
#include "proofpipe/ntt/ntt.hpp"

namespace pp::gpu {

enum class Direction { forward, inverse };

// What one transform call does, in the orders of pp::ntt (ntt.hpp): forward maps coefficients
// to evaluations (on the coset shift·<omega> when coset), inverse the reverse.
struct NttOp {
  Direction dir = Direction::forward;
  Order in = Order::natural;
  Order out = Order::bit_reversed;
  bool coset = false;
  // Inverse transforms only: the output as canonical integers in the limbs rather than in
  // Montgomery form (the input form of MsmShape::canonical), at no extra cost.
  bool canonical_out = false;
  // The 1/n of an inverse moved into the next transform's first pass, where a coset forward
  // multiplies every element anyway: an inverse with defer_size_inv returns n times its result
  // (no scaling pass-work at all; not with coset or canonical_out), and a forward with
  // take_size_inv multiplies its input by 1/n (with the shift's powers, one table product, when
  // coset). Together they are the prover's "coefficients to the coset" with one product an
  // element fewer.
  bool defer_size_inv = false;
  bool take_size_inv = false;
};

// The steps an NttOp expands to. Natural input runs DIF (output bit-reversed), bit-reversed
// input runs DIT (output natural); a permutation is added only when out == in. Scalings are
// applied in the order the data is in at that point.
struct NttSchedule {
  Scale pre = Scale::none;    // before the transform (input order)
  bool dif = true;            // DIF (natural in) or DIT (bit-reversed in)
  bool inverse = false;       // roots omega^-1
  Scale post = Scale::none;   // after the transform (the transform's output order)
  bool permute_after = false;
};
NttSchedule schedule(const NttOp& op);
// Empty, or why `op` cannot run (canonical_out or defer_size_inv on a forward transform,
// take_size_inv on an inverse, defer_size_inv with coset or canonical_out).
std::string check_op(const NttOp& op);

// Step i of running a schedule over a plan: the pass (top bits first for DIF, low bits first for
// DIT) and its job — the first step takes the schedule's `pre` scaling, the last its `post`.
struct PassStep {
  NttPass pass;
  PassJob job;
};
PassStep pass_step(const NttSchedule& s, const NttPlan& plan, int i);

// Roots of a domain with the coset shift of the prover's convention: the domain's generator
// g (bellman: 7, snarkjs: 5) by default; snarkjs's odd points use shift = omega_2n instead.
NttRoots roots_of(const Domain& d);
NttRoots roots_of(const Domain& d, const Fr& shift);
NttRootsOf<bn254::Fr> roots_of(const bn254::Domain& d);
NttRootsOf<bn254::Fr> roots_of(const bn254::Domain& d, const bn254::Fr& shift);

// ---- CPU twin (always built; CI checks it against pp::ntt) ----
// Runs schedule(op) with the kernels' bodies in loops over host memory. max_pass < kMaxPassLg
// splits the transform into more passes than the GPU uses (to test multi-pass plans cheaply),
// min_blocks_lg < kMinPassBlocksLg packs more columns into a block, thread_lg (0: the size's own)
// picks the thread shape (make_ntt_plan's). Throws invalid_argument where ntt() returns it.
// twist_lg: the direct twist table's limit (ntt_tables_init's).
void ntt_twin(std::span<Fr> a, const Domain& d, const NttRoots& roots, const NttOp& op, int max_pass = kMaxPassLg,
              int twist_lg = kTwistTableLg, int min_blocks_lg = kMinPassBlocksLg, int thread_lg = 0);
void ntt_twin(std::span<bn254::Fr> a, const bn254::Domain& d, const NttRootsOf<bn254::Fr>& roots, const NttOp& op,
              int max_pass = kMaxPassLg, int twist_lg = kTwistTableLg, int min_blocks_lg = kMinPassBlocksLg,
              int thread_lg = 0);

// ---- Device API (library proofpipe_gpu, built with CUDA) ----
// Bytes of device memory the tables of a 2^lg domain need: a few MiB at 2^28 with the default
// direct twist table (twist_lg = kTwistTableLg); with twist_lg >= lg every twist root has its own
// entry (2^lg roots, 4 GiB at 2^27) and no pass multiplies two table entries. The same for both
// scalar fields (four words an element); every entry point below has one overload per field.
std::size_t ntt_tables_bytes(int lg, int twist_lg = kTwistTableLg);
// Fills caller-provided device memory `d_tables` (ntt_tables_bytes(lg, twist_lg) bytes) on
// `stream` and returns the table view in *out (valid once the stream reaches this point).
Status ntt_tables_init(void* d_tables, std::size_t bytes, int lg, const NttRoots& roots, Stream stream,
                       NttTables* out, int twist_lg = kTwistTableLg);
Status ntt_tables_init(void* d_tables, std::size_t bytes, int lg, const NttRootsOf<bn254::Fr>& roots, Stream stream,
                       NttTablesOf<bn254::Fr>* out, int twist_lg = kTwistTableLg);
// In-place transform of 2^tables.lg elements at d_a (invalid_argument for canonical_out on a
// forward transform).
Status ntt(Fr* d_a, const NttTables& tables, const NttOp& op, Stream stream);
Status ntt(bn254::Fr* d_a, const NttTablesOf<bn254::Fr>& tables, const NttOp& op, Stream stream);
// d_c[i] = d_a[i]·d_b[i] for i < n (c_step_element).
Status c_step(Fr* d_c, const Fr* d_a, const Fr* d_b, std::size_t n, Stream stream);
Status c_step(bn254::Fr* d_c, const bn254::Fr* d_a, const bn254::Fr* d_b, std::size_t n, Stream stream);
// d_a[i] = (d_a[i]·d_b[i] - d_c[i])·factor for i < n.
Status h_step(Fr* d_a, const Fr* d_b, const Fr* d_c, std::size_t n, const Fr& factor, Stream stream);
Status h_step(bn254::Fr* d_a, const bn254::Fr* d_b, const bn254::Fr* d_c, std::size_t n, const bn254::Fr& factor,
              Stream stream);
// Permutes 2^lg elements into bit-reversed index order, in place.
Status bit_reverse_permute(Fr* d_a, int lg, Stream stream);
Status bit_reverse_permute(bn254::Fr* d_a, int lg, Stream stream);

}  // namespace pp::gpu
