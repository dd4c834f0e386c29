// SPDX-License-Identifier: Apache-2.0 OR MIT
// How a proving key's queries lie over the witness: the point counts of H, L, A and B (B_G1 and
// B_G2), the evaluation domain, and which variable feeds each A and B point. One description,
// shared by the CPU prover, the GPU prover, the memory planner and the daemon's Submit check, so
// that none of them re-derives it.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "proofpipe/groth16/keys.hpp"
#include "proofpipe/groth16/r1cs.hpp"
#include "proofpipe/ntt/ntt.hpp"

namespace pp {

// A witness that does not fit its key or does not satisfy its circuit (sizes, densities, input[0],
// a·b != c). Derives from std::invalid_argument; the C boundary maps it to PP_ERR_WITNESS, where
// other invalid arguments (a key, a plan, a configuration) get their own codes.
class WitnessError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};
// A witness value that is not a field element (its limbs are >= the modulus): bytes a caller
// handed over unchecked. It says which vector ("input", "aux", "a", "b", "c") and index, so that
// the C API names the caller's array as it does one checked while it is copied.
class ScalarRangeError : public WitnessError {
 public:
  ScalarRangeError(const std::string& what, std::string vector, std::size_t index)
      : WitnessError(what), vector_(std::move(vector)), index_(index) {}
  const std::string& vector() const { return vector_; }
  std::size_t index() const { return index_; }

 private:
  std::string vector_;
  std::size_t index_;
};

struct QueryLayout {
  HBasis h_basis = HBasis::bellman;
  uint64_t num_inputs = 0;  // the IC points: the public inputs with the constant one
  uint64_t num_aux = 0;     // the L query: one point per aux variable
  uint64_t h_points = 0;    // bellman: n - 1 (tau^i Z(tau)/delta); snarkjs: n
  uint64_t a_points = 0;    // every input, then the aux variables with an A column
  uint64_t b_points = 0;    // B_G1 and B_G2 alike: the inputs and aux variables with a B column

  // From a key's vectors, or from their lengths (a .params header). std::invalid_argument naming
  // the query when they cannot belong to one key: B_G1 and B_G2 of different lengths, no inputs,
  // 2^32 or more variables (the provers index variables with 32 bits), an A or B query larger
  // than the variables, no H points or a snarkjs H query that is not a power of two.
  template <class E>
  static QueryLayout of(const ProvingKeyOf<E>& pk) {
    return of_sizes(pk.convention.h_basis, pk.vk.ic.size(), pk.h.size(), pk.l.size(), pk.a.size(), pk.b_g1.size(),
                    pk.b_g2.size());
  }
  static QueryLayout of_sizes(HBasis basis, uint64_t num_inputs, uint64_t h, uint64_t l, uint64_t a, uint64_t b_g1,
                              uint64_t b_g2);

  // The evaluation domain is 2^lg: the smallest power of two at or above h_points (+ 1 for
  // bellman's n - 1 points).
  int lg() const;
  uint64_t domain_size() const { return uint64_t(1) << lg(); }
  uint64_t num_variables() const { return num_inputs + num_aux; }

  // Whether a witness of these counts fits the key, before any of its values is read: its
  // input and aux counts, and rows (constraints + input constraints) that the key's domain holds
  // (bellman: whose smallest power-of-two domain is the key's). WitnessError prefixed with `where`.
  void check_counts(uint64_t rows, uint64_t inputs, uint64_t aux, const std::string& where) const;
  // The density bitmaps: their word counts, and the A and B query sizes they select.
  // WitnessError prefixed with `where`.
  void check_densities(const Densities& densities, const std::string& where) const;
  // The domain the H step runs on for `rows` rows placed on `generator`'s roots (check_rows
  // first). The H MSM takes h_points scalars of it: n - 1 for bellman, n for snarkjs.
  // F is the scalar field (BLS12-381's Fr unless named).
  template <class F = Fr>
  DomainOf<F> domain(uint64_t rows, uint64_t generator, const std::string& where) const {
    check_rows(rows, where);
    return DomainOf<F>(lg(), generator);
  }
  // The rows alone (check_counts' last check).
  void check_rows(uint64_t rows, const std::string& where) const;

  // The variable (an index into input ‖ aux) of every point of the A and B queries, in point
  // order: bellman's A takes every input, B those with a bit in b_input; then the aux variables
  // with a bit in a_aux / b_aux. check_densities first.
  std::vector<uint32_t> a_variables(const Densities& densities) const;
  std::vector<uint32_t> b_variables(const Densities& densities) const;
};

// The scalars of a query: z[vars[p]] for every point p, where z = input ‖ aux. Multithreaded.
// One overload per scalar field.
std::vector<Fr> gather_scalars(std::span<const Fr> input, std::span<const Fr> aux, std::span<const uint32_t> vars);
std::vector<bn254::Fr> gather_scalars(std::span<const bn254::Fr> input, std::span<const bn254::Fr> aux,
                                      std::span<const uint32_t> vars);

}  // namespace pp
