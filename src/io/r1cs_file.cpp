// SPDX-License-Identifier: Apache-2.0 OR MIT
// circom `.r1cs` files: header and constraint sections into proofpipe's CSR R1cs.
#include "proofpipe/io/r1cs_file.hpp"

#include <string>
#include <type_traits>

namespace pp {
namespace {

const char* const kMatrixNames[3] = {"A", "B", "C"};

}  // namespace

template <class F>
CircomR1csOf<F> parse_r1cs_file(std::span<const uint8_t> bytes, std::string_view name) {
  constexpr bool kBls = std::is_same_v<F, Fr>;
  const BinFile file(bytes, name, "r1cs", 1);
  CircomR1csOf<F> out;
  uint32_t num_wires = 0, num_constraints = 0;
  {
    SectionReader in = file.section(1, "header");
    const uint32_t n8 = in.u32("n8");
    const uint64_t at = in.offset();
    const std::span<const uint8_t> prime = in.bytes(n8, "prime");
    if (n8 != 32 || !is_prime_of<F>(prime)) {
      const bool other = kBls ? is_prime_of<bn254::Fr>(prime) : is_prime_of<Fr>(prime);
      in.fail_at(at, std::string("wrong prime: the circuit is not over ") + (kBls ? "BLS12-381" : "BN254") +
                         "'s scalar field (n8 = " + std::to_string(n8) +
                         (other ? std::string("; it is over ") + (kBls ? "BN254's (bn128)" : "BLS12-381's") : "") +
                         (kBls ? "; compile with circom --prime bls12381 for BLS12-381)" : ")"));
    }
    num_wires = in.u32("nWires");
    out.num_outputs = in.u32("nPubOut");
    out.num_public_inputs = in.u32("nPubIn");
    out.num_private_inputs = in.u32("nPrvIn");
    out.num_labels = in.u64("nLabels");
    num_constraints = in.u32("nConstraints");
    in.expect_end();
    const uint64_t num_inputs = 1 + uint64_t(out.num_outputs) + out.num_public_inputs;
    if (num_inputs + out.num_private_inputs > num_wires)
      in.fail("1 + nPubOut + nPubIn + nPrvIn = " + std::to_string(num_inputs + out.num_private_inputs) +
              " exceeds nWires = " + std::to_string(num_wires));
    out.r1cs.num_inputs = num_inputs;
    out.r1cs.num_aux = num_wires - num_inputs;
  }
  for (uint32_t id : {4u, 5u})
    if (file.has(id))
      file.fail("section " + std::to_string(id) + " (custom gates) is present: PLONK custom gates have no Groth16 proof");

  SectionReader in = file.section(2, "constraints");
  SparseMatrixOf<F>* mats[3] = {&out.r1cs.a, &out.r1cs.b, &out.r1cs.c};
  for (SparseMatrixOf<F>* m : mats) m->row_start.assign(1, 0);
  // Each constraint needs at least three u32 term counts: reject a forged count before reserving.
  in.need_items(num_constraints, 12, "constraints");
  for (SparseMatrixOf<F>* m : mats) m->row_start.reserve(std::size_t(num_constraints) + 1);
  for (uint32_t k = 0; k < num_constraints; ++k) {
    for (int mi = 0; mi < 3; ++mi) {
      SparseMatrixOf<F>& m = *mats[mi];
      const std::string where = "constraint " + std::to_string(k) + ", " + kMatrixNames[mi];
      const uint32_t terms = in.u32("term count");
      in.need_items(terms, 4 + 32, where.c_str());
      for (uint32_t t = 0; t < terms; ++t) {
        const uint64_t at = in.offset();
        const uint32_t wire = in.u32("wire");
        if (wire >= num_wires)
          in.fail_at(at, where + ", term " + std::to_string(t) + ": wire " + std::to_string(wire) + " >= nWires " +
                             std::to_string(num_wires));
        F value;
        if (!scalar_from_le(value, in.bytes(32, "coefficient").first<32>()))
          in.fail_at(at + 4, where + ", term " + std::to_string(t) + ": coefficient is not below r");
        m.column.push_back(wire);
        m.value.push_back(value);
      }
      m.row_start.push_back(m.column.size());
    }
  }
  in.expect_end();
  if (file.has(3)) {
    SectionReader map = file.section(3, "wire-to-label map");
    if (map.remaining() != uint64_t(num_wires) * 8)
      map.fail("expected nWires × 8 = " + std::to_string(uint64_t(num_wires) * 8) + " bytes, found " +
               std::to_string(map.remaining()));
  }
  return out;
}

template <class F>
CircomR1csOf<F> read_r1cs_file(const std::filesystem::path& path) {
  const MappedFile file(path);
  return parse_r1cs_file<F>(file.bytes(), path.string());
}

bool r1cs_file_is_bn254(const std::filesystem::path& path) { return section1_field_is_bn254(path, "r1cs", 1); }

template CircomR1csOf<Fr> parse_r1cs_file<Fr>(std::span<const uint8_t>, std::string_view);
template CircomR1csOf<bn254::Fr> parse_r1cs_file<bn254::Fr>(std::span<const uint8_t>, std::string_view);
template CircomR1csOf<Fr> read_r1cs_file<Fr>(const std::filesystem::path&);
template CircomR1csOf<bn254::Fr> read_r1cs_file<bn254::Fr>(const std::filesystem::path&);

}  // namespace pp
