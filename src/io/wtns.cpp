// circom/snarkjs `.wtns` witness files: reader with located errors, writer.
#include "proofpipe/io/wtns.hpp"

#include <limits>
#include <stdexcept>
#include <string>

namespace pp {

std::vector<Fr> parse_wtns(std::span<const uint8_t> bytes, std::string_view name) {
  const BinFile file(bytes, name, "wtns", 2);
  uint32_t count = 0;
  {
    SectionReader in = file.section(1, "header");
    const uint32_t n8 = in.u32("n8");
    const uint64_t at = in.offset();
    if (n8 != 32 || !is_scalar_prime(in.bytes(n8, "prime")))
      in.fail_at(at, "wrong prime: the witness is not over BLS12-381's scalar field (n8 = " + std::to_string(n8) +
                         "; compile the circuit with circom --prime bls12381)");
    count = in.u32("nWitness");
    in.expect_end();
  }
  SectionReader in = file.section(2, "witness values");
  if (in.remaining() != uint64_t(count) * 32)
    in.fail("the header says " + std::to_string(count) + " values (" + std::to_string(uint64_t(count) * 32) +
            " bytes), the section has " + std::to_string(in.remaining()) + " bytes");
  if (count == 0) in.fail("no values (z[0] must be the constant 1)");
  std::vector<Fr> z(count);
  for (uint32_t i = 0; i < count; ++i) {
    const uint64_t at = in.offset();
    if (!scalar_from_le(z[i], in.bytes(32, "value").first<32>()))
      in.fail_at(at, "value " + std::to_string(i) + " is not below r");
  }
  if (!z[0].is_one()) in.fail_at(in.offset() - uint64_t(count) * 32, "value 0 must be the constant 1");
  return z;
}

std::vector<Fr> read_wtns(const std::filesystem::path& path) {
  const MappedFile file(path);
  return parse_wtns(file.bytes(), path.string());
}

std::vector<uint8_t> encode_wtns(std::span<const Fr> z) {
  if (z.size() > std::numeric_limits<uint32_t>::max()) throw std::invalid_argument("encode_wtns: too many values");
  BinFileWriter w("wtns", 2, 2);
  w.begin_section(1);
  w.u32(32);
  for (int i = 0; i < 4; ++i) w.u64(FrParams::modulus.v[i]);
  w.u32(uint32_t(z.size()));
  w.end_section();
  w.begin_section(2);
  uint8_t b[32];
  for (const Fr& x : z) {
    x.to_bytes_le(b);
    w.bytes(b);
  }
  w.end_section();
  return w.finish();
}

void write_wtns(const std::filesystem::path& path, std::span<const Fr> z) { write_file_bytes(path, encode_wtns(z)); }

}  // namespace pp
