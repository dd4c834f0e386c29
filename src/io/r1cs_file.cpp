// SPDX-License-Identifier: Apache-2.0 OR MIT
// circom `.r1cs` files: header and constraint sections into proofpipe's CSR R1cs.
#include "proofpipe/io/r1cs_file.hpp"

#include <string>

namespace pp {
namespace {

const char* const kMatrixNames[3] = {"A", "B", "C"};

}  // namespace

CircomR1cs parse_r1cs_file(std::span<const uint8_t> bytes, std::string_view name) {
  const BinFile file(bytes, name, "r1cs", 1);
  CircomR1cs out;
  uint32_t num_wires = 0, num_constraints = 0;
  {
    SectionReader in = file.section(1, "header");
    const uint32_t n8 = in.u32("n8");
    const uint64_t at = in.offset();
    if (n8 != 32 || !is_scalar_prime(in.bytes(n8, "prime")))
      in.fail_at(at, "wrong prime: the circuit is not over BLS12-381's scalar field (n8 = " + std::to_string(n8) +
                         "; compile with circom --prime bls12381)");
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
  SparseMatrix* mats[3] = {&out.r1cs.a, &out.r1cs.b, &out.r1cs.c};
  for (SparseMatrix* m : mats) m->row_start.assign(1, 0);
  // Each constraint needs at least three u32 term counts: reject a forged count before reserving.
  in.need_items(num_constraints, 12, "constraints");
  for (SparseMatrix* m : mats) m->row_start.reserve(std::size_t(num_constraints) + 1);
  for (uint32_t k = 0; k < num_constraints; ++k) {
    for (int mi = 0; mi < 3; ++mi) {
      SparseMatrix& m = *mats[mi];
      const std::string where = "constraint " + std::to_string(k) + ", " + kMatrixNames[mi];
      const uint32_t terms = in.u32("term count");
      in.need_items(terms, 4 + 32, where.c_str());
      for (uint32_t t = 0; t < terms; ++t) {
        const uint64_t at = in.offset();
        const uint32_t wire = in.u32("wire");
        if (wire >= num_wires)
          in.fail_at(at, where + ", term " + std::to_string(t) + ": wire " + std::to_string(wire) + " >= nWires " +
                             std::to_string(num_wires));
        Fr value;
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

CircomR1cs read_r1cs_file(const std::filesystem::path& path) {
  const MappedFile file(path);
  return parse_r1cs_file(file.bytes(), path.string());
}

}  // namespace pp
