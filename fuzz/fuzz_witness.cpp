// SPDX-License-Identifier: Apache-2.0 OR MIT
// libFuzzer target for the witness (.ppw) readers: any input must parse or throw
// std::runtime_error, and the parallel file reader (read_witness, what the CLI and the C API
// use) must agree with the byte parser on every input: both reject it, or both return the same
// witness.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>

#include "proofpipe/io/witness.hpp"

namespace {
std::optional<pp::Witness> from_file(const uint8_t* data, std::size_t size) {
  const int fd = memfd_create("fuzz.ppw", 0);
  if (fd < 0) std::abort();
  for (std::size_t off = 0; off < size;) {
    const ssize_t n = write(fd, data + off, size - off);
    if (n <= 0) std::abort();
    off += std::size_t(n);
  }
  std::optional<pp::Witness> w;
  try {
    w = pp::read_witness("/proc/self/fd/" + std::to_string(fd));
  } catch (const std::runtime_error&) {
  }
  close(fd);
  return w;
}
bool same(const pp::Witness& x, const pp::Witness& y) {
  return x.a == y.a && x.b == y.b && x.c == y.c && x.input == y.input && x.aux == y.aux &&
         x.densities.a_aux == y.densities.a_aux && x.densities.b_input == y.densities.b_input &&
         x.densities.b_aux == y.densities.b_aux;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  std::optional<pp::Witness> parsed;
  try {
    parsed = pp::parse_witness(std::span<const uint8_t>(data, size), "fuzz");
    const pp::Witness& w = *parsed;
    // Accepted files are internally consistent.
    if (w.b.size() != w.a.size() || w.c.size() != w.a.size() || w.input.empty() || !w.input[0].is_one() ||
        w.densities.a_aux.size() != (w.aux.size() + 63) / 64)
      std::abort();
  } catch (const std::runtime_error&) {
  }
  const std::optional<pp::Witness> read = from_file(data, size);
  if (parsed.has_value() != read.has_value()) std::abort();
  if (parsed && !same(*parsed, *read)) std::abort();
  return 0;
}
