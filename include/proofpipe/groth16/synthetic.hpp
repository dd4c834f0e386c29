// SPDX-License-Identifier: Apache-2.0 OR MIT
// Synthetic "PoRep-shaped" R1CS circuits of any size 2^k, with satisfying witnesses, for tests and benchmarks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "proofpipe/engine/plan.hpp"
#include "proofpipe/groth16/r1cs.hpp"

namespace pp {

// The shape of one Filecoin PoRep partition (BRIEF: 130,278,869 constraints; non-zeros A 2.4,
// B 1.0, C 2.2 per row; A-aux density 99.7 %, B-aux density 25.4 %). The generator aims at these.
namespace porep_shape {
inline constexpr double a_per_row = 2.4;
inline constexpr double b_per_row = 1.0;
inline constexpr double c_per_row = 2.2;
inline constexpr double a_aux_density = 0.997;
inline constexpr double b_aux_density = 0.254;
}  // namespace porep_shape

// Defaults 0.45 / 0.45 / 0.10: the BRIEF says most aux values are bits and the "other" values a
// minority (the 0/1 batch additions cost 5–8x the tail MSM per partition, so the tail holds a
// small share of the scalars). Bits from bellman gadgets are roughly balanced between 0 and 1,
// hence 0.45 each; the 10 % "other" is the x^5 rounds and linear mixing of Poseidon-like code.
struct SyntheticOptions {
  int lg_constraints = 10;             // k, 4 .. 28: constraints + inputs == 2^k exactly
  std::size_t num_public_inputs = 8;   // excluding the constant one
  double zero_fraction = 0.45;         // expected share of aux values equal to 0
  double one_fraction = 0.45;          // expected share of aux values equal to 1
  uint64_t seed = 1;                   // structure; also the witness seed of make_porep_like
};

// Sizes, fixed by the options: num_inputs = 1 + num_public_inputs and
// num_constraints = num_aux = 2^k − num_inputs, so that after bellman appends one row per input
// (constant included) the evaluation domain is exactly 2^k. Throws std::invalid_argument for
// options out of range (k outside 4..28, fractions negative or summing above 1, fewer than 4
// constraints left after the inputs).
struct SyntheticSizes {
  std::size_t num_inputs, num_constraints, num_aux;
};
SyntheticSizes synthetic_sizes(const SyntheticOptions& opts);

struct SyntheticCircuit {
  R1cs r1cs;
  std::vector<Fr> z;  // satisfying assignment (1, public inputs, aux)
};

// The circuit and its witness for witness seed opts.seed, i.e.
// make_porep_like(o).z == make_witness(make_porep_like_r1cs(o), o, o.seed).
SyntheticCircuit make_porep_like(const SyntheticOptions& opts);
// The circuit alone (no witness memory), e.g. to share one key among several partitions.
R1cs make_porep_like_r1cs(const SyntheticOptions& opts);
// Another satisfying witness of the circuit made from `opts` (same structure, other public
// inputs and bit values), as partitions of one sector differ. Throws std::invalid_argument if
// r1cs does not have the sizes of `opts` or a row does not define its variable.
std::vector<Fr> make_witness(const R1cs& r1cs, const SyntheticOptions& opts, uint64_t witness_seed);

// Measured shape of a circuit (and of its witness when z is not empty); for tests and bench
// reports. Densities as column_densities(); fractions over the aux values of z.
struct ShapeStats {
  std::size_t num_constraints = 0, num_inputs = 0, num_aux = 0;
  double a_per_row = 0, b_per_row = 0, c_per_row = 0;
  double a_aux_density = 0, b_aux_density = 0;
  double zero_fraction = 0, one_fraction = 0, other_fraction = 0;
};
ShapeStats shape_stats(const R1cs& r1cs, std::span<const Fr> z = {});

}  // namespace pp

namespace pp::engine {
// The planner's view of the synthetic PoRep-shaped circuit at 2^lg (its exact input and aux
// counts, densities A-aux 99.7 %, B-aux 25.4 % rounded up, every input in A and B, bellman's H),
// for planning and simulating without a key. For a real key use shape_from_key_sizes.
CircuitShape porep_like_shape(int lg, uint64_t public_inputs = 8);
}  // namespace pp::engine
