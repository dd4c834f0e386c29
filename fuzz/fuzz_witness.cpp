// libFuzzer target for the witness (.ppw) parser: any input must parse or throw std::runtime_error.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <stdexcept>

#include "proofpipe/io/witness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  try {
    const pp::Witness w = pp::parse_witness(std::span<const uint8_t>(data, size), "fuzz");
    // Accepted files are internally consistent.
    if (w.b.size() != w.a.size() || w.c.size() != w.a.size() || w.input.empty() || !w.input[0].is_one() ||
        w.densities.a_aux.size() != (w.aux.size() + 63) / 64)
      std::abort();
  } catch (const std::runtime_error&) {
  }
  return 0;
}
