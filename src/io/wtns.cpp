// SPDX-License-Identifier: Apache-2.0 OR MIT
// circom/snarkjs `.wtns` witness files: reader with located errors, writer.
#include "proofpipe/io/wtns.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "proofpipe/core/big_vector.hpp"
#include "proofpipe/core/lowest_failing.hpp"

namespace pp {

namespace {

// The first min(limit, nWitness) values of a .wtns over F, and nWitness in *total.
template <class F>
std::vector<F> parse_values(std::span<const uint8_t> bytes, std::string_view name, std::size_t limit,
                            std::size_t* total) {
  const BinFile file(bytes, name, "wtns", 2);
  uint32_t count = 0;
  {
    SectionReader in = file.section(1, "header");
    const uint32_t n8 = in.u32("n8");
    const uint64_t at = in.offset();
    const std::span<const uint8_t> prime = in.bytes(n8, "prime");
    if (n8 != 32 || !is_prime_of<F>(prime)) {
      const bool other = std::is_same_v<F, Fr> ? is_prime_of<bn254::Fr>(prime) : is_prime_of<Fr>(prime);
      in.fail_at(at, std::string("wrong prime: the witness is not over ") + (std::is_same_v<F, Fr> ? "BLS12-381" : "BN254") +
                         "'s scalar field (n8 = " + std::to_string(n8) +
                         (other ? "; it is over the other curve's: the key and the witness disagree" : "") + ")");
    }
    count = in.u32("nWitness");
    in.expect_end();
  }
  SectionReader in = file.section(2, "witness values");
  if (in.remaining() != uint64_t(count) * 32)
    in.fail("the header says " + std::to_string(count) + " values (" + std::to_string(uint64_t(count) * 32) +
            " bytes), the section has " + std::to_string(in.remaining()) + " bytes");
  if (count == 0) in.fail("no values (z[0] must be the constant 1)");
  // The values are converted on every core (a 2^20-constraint circuit has a million of them);
  // a value >= r is reported at the lowest index, as a serial reader would.
  const uint64_t base = in.offset();
  const std::span<const uint8_t> raw = in.bytes(uint64_t(count) * 32, "values");
  *total = count;
  count = uint32_t(std::min<std::size_t>(count, limit));
  std::vector<F> z = big_vector<F>(count);
  const uint64_t bad =
      lowest_failing(count, 1 << 14, [&](uint64_t i) { return scalar_from_le(z[i], raw.subspan(32 * i).first<32>()); });
  if (bad != kNoneFailed)
    in.fail_at(base + 32 * bad, "value " + std::to_string(bad) + " is not below r");
  if (!z[0].is_one()) in.fail_at(base, "value 0 must be the constant 1");
  return z;
}

}  // namespace

template <class F>
std::vector<F> parse_wtns(std::span<const uint8_t> bytes, std::string_view name) {
  std::size_t total = 0;
  return parse_values<F>(bytes, name, std::numeric_limits<std::size_t>::max(), &total);
}

template <class F>
std::vector<F> read_wtns_prefix(const std::filesystem::path& path, std::size_t count, std::size_t* total) {
  const MappedFile file(path);
  std::size_t all = 0;
  std::vector<F> z = parse_values<F>(file.bytes(), path.string(), std::max<std::size_t>(count, 1), &all);
  z.resize(std::min(z.size(), count));
  if (total) *total = all;
  return z;
}

template <class F>
std::vector<F> read_wtns(const std::filesystem::path& path) {
  const MappedFile file(path);
  return parse_wtns<F>(file.bytes(), path.string());
}

namespace {
template <class F>
std::vector<uint8_t> encode(std::span<const F> z) {
  if (z.size() > std::numeric_limits<uint32_t>::max()) throw std::invalid_argument("encode_wtns: too many values");
  BinFileWriter w("wtns", 2, 2);
  w.begin_section(1);
  w.u32(32);
  for (int i = 0; i < 4; ++i) w.u64(F::Params::modulus.v[i]);
  w.u32(uint32_t(z.size()));
  w.end_section();
  w.begin_section(2);
  uint8_t b[32];
  for (const F& x : z) {
    x.to_bytes_le(b);
    w.bytes(b);
  }
  w.end_section();
  return w.finish();
}

}  // namespace

std::vector<uint8_t> encode_wtns(std::span<const Fr> z) { return encode(z); }
std::vector<uint8_t> encode_wtns(std::span<const bn254::Fr> z) { return encode(z); }
void write_wtns(const std::filesystem::path& path, std::span<const Fr> z) { write_file_bytes(path, encode_wtns(z)); }
void write_wtns(const std::filesystem::path& path, std::span<const bn254::Fr> z) {
  write_file_bytes(path, encode_wtns(z));
}

bool wtns_file_is_bn254(const std::filesystem::path& path) { return section1_field_is_bn254(path, "wtns", 2); }

#define PP_WTNS_DEFINE(F)                                                                            \
  template std::vector<F> parse_wtns<F>(std::span<const uint8_t>, std::string_view);                 \
  template std::vector<F> read_wtns<F>(const std::filesystem::path&);                                \
  template std::vector<F> read_wtns_prefix<F>(const std::filesystem::path&, std::size_t, std::size_t*);
PP_WTNS_DEFINE(Fr)
PP_WTNS_DEFINE(bn254::Fr)
#undef PP_WTNS_DEFINE

}  // namespace pp
