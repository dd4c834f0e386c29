// SPDX-License-Identifier: Apache-2.0 OR MIT
// circom `.r1cs` constraint files read into proofpipe's R1cs (A·B = C over z = (1, public, private)).
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>

#include "proofpipe/groth16/r1cs.hpp"
#include "proofpipe/io/binfile.hpp"

namespace pp {

// Magic "r1cs", version 1 (r1csfile/src/r1csfile.js):
//   1 header: u32 n8, prime, u32 nWires, u32 nPubOut, u32 nPubIn, u32 nPrvIn, u64 nLabels,
//     u32 nConstraints
//   2 constraints: per constraint three linear combinations A, B, C, each u32 nTerms then
//     nTerms × {u32 wire, n8-byte little-endian canonical coefficient}; A·B − C = 0
//   3 wire → label map: nWires × u64 (checked for size, not kept)
//   4, 5 custom gates (PLONK only): rejected
// Wires: 0 is the constant one, then outputs, public inputs, then the private ones — bellman's
// (1, inputs, aux) split with num_inputs = 1 + nPubOut + nPubIn.
// F: BLS12-381's Fr (CircomR1cs, circom --prime bls12381) or BN254's (bn254::CircomR1cs, circom's
// default bn128).
template <class F>
struct CircomR1csOf {
  R1csOf<F> r1cs;
  uint32_t num_outputs = 0, num_public_inputs = 0, num_private_inputs = 0;
  uint64_t num_labels = 0;
};

// Throws FormatError naming the file, section, constraint, matrix, term and byte offset.
// A file over the other curve's field is a FormatError that says so.
template <class F = Fr>
CircomR1csOf<F> parse_r1cs_file(std::span<const uint8_t> bytes, std::string_view name);
template <class F = Fr>
CircomR1csOf<F> read_r1cs_file(const std::filesystem::path& path);
using CircomR1cs = CircomR1csOf<Fr>;
namespace bn254 {
using CircomR1cs = CircomR1csOf<Fr>;
}

// The field of a .r1cs (from its header's prime): true for BN254's, false for BLS12-381's;
// FormatError naming the file for any other prime.
bool r1cs_file_is_bn254(const std::filesystem::path& path);

}  // namespace pp
