// SPDX-License-Identifier: Apache-2.0 OR MIT
// Rank-1 constraint systems: sparse A, B, C over the full assignment z = (1, inputs, aux).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "proofpipe/ff/bls12_381.hpp"
#include "proofpipe/ff/bn254.hpp"

namespace pp {

// One sparse matrix in compressed-sparse-row form: row k (constraint k) holds the entries
// [row_start[k], row_start[k+1]) of (column, value). Columns index z. F is the scalar field
// (BLS12-381's Fr, or BN254's for bn254::R1cs).
template <class F>
struct SparseMatrixOf {
  std::vector<uint64_t> row_start;  // rows + 1 entries, row_start[0] == 0
  std::vector<uint32_t> column;
  std::vector<F> value;             // Montgomery form

  std::size_t rows() const { return row_start.empty() ? 0 : row_start.size() - 1; }
  std::size_t non_zeros() const { return column.size(); }
};

// A·z ∘ B·z = C·z. Variable 0 is the constant 1, variables 1 .. num_inputs-1 are the public
// inputs, then num_aux private (aux) variables: z.size() == num_inputs + num_aux.
// (bellman's convention: num_inputs counts the constant one.)
// The matrices hold the circuit's own constraints only. bellman's prover appends one row per
// input i (including the constant one) with A = z_i, B = 0, C = 0 — "input_i · 0 = 0", which
// every assignment satisfies — so a, b, c are num_constraints + num_inputs long and the domain is
// the next power of two at or above that. Those rows are the prover's business, not stored here.
// Rows need not be sorted by column and may repeat a column (bellman's linear combinations
// allow both); every stored entry counts for the densities, even a zero coefficient.
template <class F>
struct R1csOf {
  std::size_t num_inputs = 1;
  std::size_t num_aux = 0;
  SparseMatrixOf<F> a, b, c;

  std::size_t num_constraints() const { return a.rows(); }
  std::size_t num_variables() const { return num_inputs + num_aux; }
  // Throws std::invalid_argument naming the matrix, row and entry of the first inconsistency:
  // num_inputs == 0; rows differ between A, B, C; row_start empty with entries, not starting
  // at 0, not monotone, or not ending at the entry count; column and value of different
  // lengths; column out of range; value not a reduced Montgomery-form Fr (>= r). Entry checks
  // run in parallel but always report the lowest-indexed bad entry.
  void validate() const;
};

// Per-constraint evaluations a = A·z, b = B·z, c = C·z (multithreaded SpMV, oneTBB), each
// num_constraints() long (without the prover's appended input rows). z.size() must equal
// r1cs.num_variables() and the matrices must be consistently sized (std::invalid_argument
// otherwise); columns are not range-checked here, so an R1cs read from outside must have passed
// validate() first.
template <class F>
struct EvaluationsOf {
  std::vector<F> a, b, c;
};
template <class F>
EvaluationsOf<F> evaluate(const R1csOf<F>& r1cs, std::type_identity_t<std::span<const F>> z);

// Index of the first constraint with (A·z)(B·z) != C·z, or nullopt when z satisfies r1cs.
// Parallel, but the answer is always the lowest failing index. Same preconditions as evaluate().
template <class F>
std::optional<std::size_t> first_unsatisfied(const R1csOf<F>& r1cs, std::type_identity_t<std::span<const F>> z);

// Column densities as bellman's prover uses them: which aux variables have a non-zero
// column in A (the "A density") and in B, and which inputs have one in B. Bit i of word i/64;
// a_aux and b_aux hold ceil(num_aux/64) words, b_input ceil(num_inputs/64), unused high bits 0.
// (bellman tracks no input density for A: every input is in the A query.) Same preconditions
// as evaluate().
struct Densities {
  std::vector<uint64_t> a_aux;
  std::vector<uint64_t> b_input;
  std::vector<uint64_t> b_aux;
};
template <class F>
Densities column_densities(const R1csOf<F>& r1cs);

// acc += coeff · v. Most witness values are 0 or 1 and most coefficients are ±1, so the
// shortcuts skip the bulk of the Montgomery multiplications of a sparse dot product.
template <class F>
inline void accumulate_product(F& acc, const F& coeff, const F& v) {
  static const F minus_one = -F::one();
  if (v.is_zero()) return;
  if (coeff.is_one()) {
    acc += v;
  } else if (v.is_one()) {
    acc += coeff;
  } else if (coeff == minus_one) {
    acc -= v;
  } else {
    acc += coeff * v;
  }
}

inline bool test_bit(std::span<const uint64_t> bits, std::size_t i) { return (bits[i / 64] >> (i % 64)) & 1; }
// Number of set bits.
std::size_t count_bits(std::span<const uint64_t> bits);

using SparseMatrix = SparseMatrixOf<Fr>;
using R1cs = R1csOf<Fr>;
using Evaluations = EvaluationsOf<Fr>;
namespace bn254 {
using SparseMatrix = SparseMatrixOf<Fr>;
using R1cs = R1csOf<Fr>;
}  // namespace bn254

}  // namespace pp
