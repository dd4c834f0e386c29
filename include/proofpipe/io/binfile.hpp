// SPDX-License-Identifier: Apache-2.0 OR MIT
// The iden3 binary container shared by .zkey, .wtns and .r1cs (@iden3/binfileutils): reader and writer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "proofpipe/ec/bls12_381.hpp"
#include "proofpipe/ec/bn254.hpp"

namespace pp {

// Layout, all little-endian: 4-byte magic ("zkey", "wtns", "r1cs"), u32 version, u32 number of
// sections, then the sections one after another, each u32 id, u64 byte length, data. Writers
// do not store sections in id order (circom writes an .r1cs as 2, 1, 3; `snarkjs groth16
// setup` a .zkey as 1, 2, 4, 3, 9, 8, 5, 6, 7, 10), so readers always go through the table.

// Every parse failure of the snarkjs/circom formats. The message starts with the file name and
// says where: the section (id and meaning), the element index where there is one, and the
// absolute byte offset in the file.
class FormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct BinSection {
  uint32_t id = 0;
  uint64_t offset = 0;  // of the data, in the file
  uint64_t size = 0;
};

// A cursor over one section's data; errors name the file, the section and the byte offset.
// The little-endian unsigned integer of `bytes` (1..8) bytes at p; every reader's one decoder.
inline uint64_t load_le(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
inline uint32_t le_u32(const uint8_t* p) { return uint32_t(load_le(p, 4)); }

class SectionReader {
 public:
  SectionReader(std::span<const uint8_t> file, const BinSection& section, std::string what, std::string_view name);

  [[noreturn]] void fail(const std::string& what) const;
  [[noreturn]] void fail_at(uint64_t offset, const std::string& what) const;
  uint64_t offset() const { return pos_; }  // absolute, in the file
  uint64_t remaining() const { return end_ - pos_; }
  // Throws unless `count` items of `item_bytes` fit in what is left (division, no overflow).
  void need_items(uint64_t count, uint64_t item_bytes, std::string_view what) const;
  uint32_t u32(std::string_view what);
  uint64_t u64(std::string_view what);
  std::span<const uint8_t> bytes(uint64_t n, std::string_view what);
  // The section must end here.
  void expect_end() const;

 private:
  std::span<const uint8_t> file_;
  std::string section_, name_;
  uint64_t pos_, end_;
};

class BinFile {
 public:
  // Checks the magic, the version (1..max_version) and that every section lies inside the file
  // and the sections tile it exactly.
  BinFile(std::span<const uint8_t> bytes, std::string_view name, std::string_view magic, uint32_t max_version);

  uint32_t version() const { return version_; }
  const std::vector<BinSection>& sections() const { return sections_; }
  bool has(uint32_t id) const;
  // The one section with this id. `what` names it in errors ("section 4 (coefficients) is missing").
  SectionReader section(uint32_t id, std::string_view what) const;
  [[noreturn]] void fail(const std::string& what) const;
  const std::string& name() const { return name_; }

 private:
  std::span<const uint8_t> bytes_;
  std::string name_;
  uint32_t version_ = 0;
  std::vector<BinSection> sections_;
};

// Builds a container in memory.
class BinFileWriter {
 public:
  BinFileWriter(std::string_view magic, uint32_t version, uint32_t num_sections);
  void begin_section(uint32_t id);
  void end_section();
  void u32(uint32_t v);
  void u64(uint64_t v);
  void bytes(std::span<const uint8_t> b);
  std::vector<uint8_t> finish();

 private:
  std::vector<uint8_t> out_;
  std::size_t section_start_ = 0;
  bool open_ = false;
};

// The whole file in memory; FormatError naming the file when it cannot be read.
std::vector<uint8_t> read_file_bytes(const std::filesystem::path& path);

// A read-only private mapping of a whole file (no copy, no zero-filled buffer: large keys are
// read straight from the page cache). FormatError naming the file when it cannot be mapped.
class MappedFile {
 public:
  explicit MappedFile(const std::filesystem::path& path);
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();
  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  // Advice for a reader that walks the file front to back: aggressive read-ahead.
  void advise_sequential() const;

 private:
  const uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};
// Writes (truncates) the file; FormatError naming it on failure.
void write_file_bytes(const std::filesystem::path& path, std::span<const uint8_t> bytes);

// ---- field elements and points as snarkjs stores them (BLS12-381 and BN254 alike) ----
// A prime given as n8 little-endian bytes equals F's modulus (Fr or Fp of either curve).
template <class F>
bool is_prime_of(std::span<const uint8_t> bytes);
// BLS12-381's r and p.
inline bool is_scalar_prime(std::span<const uint8_t> bytes) { return is_prime_of<Fr>(bytes); }
inline bool is_base_prime(std::span<const uint8_t> bytes) { return is_prime_of<Fp>(bytes); }
// Whether an iden3 file whose section 1 starts with u32 n8 and the scalar prime (.wtns, .r1cs)
// is over BN254's field (true) or BLS12-381's (false); FormatError naming the file, section and
// offset for any other prime.
bool section1_field_is_bn254(const std::filesystem::path& path, std::string_view magic, uint32_t max_version);
// Canonical little-endian scalar (the .wtns and .r1cs encoding); false when >= r.
template <class F>
bool scalar_from_le(F& out, std::span<const uint8_t, 32> in) {
  return out.from_bytes_le(in.data());
}
// snarkjs's "LEM" encoding: the raw Montgomery-form limbs (R = 2^(64·N): 2^384 for BLS12-381's Fp,
// 2^256 for its Fr and for BN254's fields), little-endian, which is exactly proofpipe's in-memory
// Montgomery form. False when >= modulus. F is a prime field; sizeof(F) bytes.
template <class F>
bool field_from_lem(F& out, const uint8_t* in);
template <class F>
void field_to_lem(uint8_t* out, const F& x);
// A .zkey coefficient: snarkjs stores coef·R² mod r with R = 2^256 (the Montgomery form of
// coef·R). Returns coef; false when the stored value is >= r.
template <class F>
bool zkey_coefficient_from_bytes(F& out, std::span<const uint8_t, 32> in);
template <class F>
void zkey_coefficient_to_bytes(uint8_t out[32], const F& coef);
// Affine points x‖y in LEM, G2 as x.c0‖x.c1‖y.c0‖y.c1; all zero bytes is the point at infinity.
template <class C>
inline constexpr std::size_t kLemPointBytes = 2 * sizeof(typename C::Field);
inline constexpr std::size_t kZkeyG1Bytes = kLemPointBytes<G1Curve>;  // BLS12-381: 96
inline constexpr std::size_t kZkeyG2Bytes = kLemPointBytes<G2Curve>;  // BLS12-381: 192
enum class PointError { ok, coordinate_not_canonical, not_on_curve, not_in_subgroup };
const char* to_string(PointError e);
// What a point's check covers: its coordinates below p only (a reader that checks the curve
// later), on the curve too, or in the prime-order subgroup as well. in.size() must be
// kLemPointBytes<C>; `out` is written only when the point passes.
enum class PointCheck { coordinates, curve, subgroup };
template <class C>
PointError point_from_lem(Affine<C>& out, std::span<const uint8_t> in, PointCheck check);
template <class C>
void point_to_lem(uint8_t* out, const Affine<C>& p);

}  // namespace pp
