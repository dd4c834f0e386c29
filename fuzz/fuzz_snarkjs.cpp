// SPDX-License-Identifier: Apache-2.0 OR MIT
// libFuzzer target for the snarkjs/circom readers (.zkey, .wtns, .r1cs): any input must parse or
// throw FormatError, and what parses is internally consistent.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>

#include "proofpipe/io/r1cs_file.hpp"
#include "proofpipe/io/wtns.hpp"
#include "proofpipe/io/zkey.hpp"

namespace {

void check_zkey(std::span<const uint8_t> in) {
  const pp::Zkey z = pp::parse_zkey(in, "fuzz.zkey");
  if (z.vk.ic.size() != z.num_public + 1 || z.a.size() != z.num_vars || z.b1.size() != z.num_vars ||
      z.b2.size() != z.num_vars || z.c.size() != z.num_vars - z.num_public - 1 || z.h.size() != z.domain_size)
    std::abort();
  for (const pp::ZkeyCoefficient& c : z.coefficients)
    if (c.matrix > 1 || c.constraint >= z.domain_size || c.signal >= z.num_vars) std::abort();
  // What parses re-encodes to something that parses the same.
  const std::vector<uint8_t> again = pp::encode_zkey(z);
  if (pp::parse_zkey(again, "re-encoded").coefficients.size() != z.coefficients.size()) std::abort();
}

void check_wtns(std::span<const uint8_t> in) {
  const std::vector<pp::Fr> w = pp::parse_wtns(in, "fuzz.wtns");
  if (w.empty() || !w[0].is_one()) std::abort();
}

void check_r1cs(std::span<const uint8_t> in) {
  const pp::CircomR1cs c = pp::parse_r1cs_file(in, "fuzz.r1cs");
  c.r1cs.validate();  // throws std::invalid_argument, which would be a reader bug
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::span<const uint8_t> in(data, size);
  // The magic picks the reader; anything else goes to all three, each of which must refuse it.
  const bool zkey = size >= 4 && std::memcmp(data, "zkey", 4) == 0;
  const bool wtns = size >= 4 && std::memcmp(data, "wtns", 4) == 0;
  const bool r1cs = size >= 4 && std::memcmp(data, "r1cs", 4) == 0;
  const bool other = !zkey && !wtns && !r1cs;
  try {
    if (zkey || other) check_zkey(in);
  } catch (const pp::FormatError&) {
  }
  try {
    if (wtns || other) check_wtns(in);
  } catch (const pp::FormatError&) {
  }
  try {
    if (r1cs || other) check_r1cs(in);
  } catch (const pp::FormatError&) {
  }
  return 0;
}
