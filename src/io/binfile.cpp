// SPDX-License-Identifier: Apache-2.0 OR MIT
// The iden3 binary container: section table walk, bounded cursors, LEM field and point encodings.
#include "proofpipe/io/binfile.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace pp {
namespace {

template <int N>
void limbs_from_le(uint64_t (&out)[N], const uint8_t* in) {
  for (int i = 0; i < N; ++i) out[i] = load_le(in + 8 * i, 8);
}

template <int N>
void limbs_to_le(uint8_t* out, const uint64_t* in) {
  for (int i = 0; i < N; ++i)
    for (int k = 0; k < 8; ++k) out[8 * i + k] = uint8_t(in[i] >> (8 * k));
}

template <int N>
bool limbs_less(const uint64_t* a, const Limbs<N>& m) {
  for (int i = N - 1; i >= 0; --i) {
    if (a[i] != m.v[i]) return a[i] < m.v[i];
  }
  return false;
}

template <int N>
bool prime_equals(std::span<const uint8_t> bytes, const Limbs<N>& m) {
  if (bytes.size() != 8 * N) return false;
  uint64_t v[N];
  limbs_from_le<N>(v, bytes.data());
  for (int i = 0; i < N; ++i)
    if (v[i] != m.v[i]) return false;
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
SectionReader::SectionReader(std::span<const uint8_t> file, const BinSection& section, std::string what,
                             std::string_view name)
    : file_(file),
      section_("section " + std::to_string(section.id) + " (" + what + ")"),
      name_(name),
      pos_(section.offset),
      end_(section.offset + section.size) {}

void SectionReader::fail(const std::string& what) const { fail_at(pos_, what); }

void SectionReader::fail_at(uint64_t offset, const std::string& what) const {
  throw FormatError(name_ + ": " + section_ + ": " + what + " (byte offset " + std::to_string(offset) + ")");
}

void SectionReader::need_items(uint64_t count, uint64_t item_bytes, std::string_view what) const {
  if (item_bytes != 0 && count > remaining() / item_bytes)
    fail("truncated: " + std::string(what) + " needs " + std::to_string(count) + " × " + std::to_string(item_bytes) +
         " bytes, the section has " + std::to_string(remaining()) + " left");
}

uint32_t SectionReader::u32(std::string_view what) {
  need_items(1, 4, what);
  const uint32_t v = uint32_t(load_le(file_.data() + pos_, 4));
  pos_ += 4;
  return v;
}

uint64_t SectionReader::u64(std::string_view what) {
  need_items(1, 8, what);
  const uint64_t v = load_le(file_.data() + pos_, 8);
  pos_ += 8;
  return v;
}

std::span<const uint8_t> SectionReader::bytes(uint64_t n, std::string_view what) {
  need_items(1, n, what);
  const auto s = file_.subspan(pos_, n);
  pos_ += n;
  return s;
}

void SectionReader::expect_end() const {
  if (pos_ != end_) fail(std::to_string(end_ - pos_) + " unexpected bytes at the end of the section");
}

// ---------------------------------------------------------------------------------------------
BinFile::BinFile(std::span<const uint8_t> bytes, std::string_view name, std::string_view magic, uint32_t max_version)
    : bytes_(bytes), name_(name) {
  if (bytes.size() < 12) {
    if (bytes.size() >= 4 && std::memcmp(bytes.data(), magic.data(), 4) != 0)
      fail("not a ." + std::string(magic) + " file (bad magic)");
    fail("truncated: " + std::to_string(bytes.size()) + " bytes, the header alone is 12");
  }
  if (std::memcmp(bytes.data(), magic.data(), 4) != 0) {
    std::string got;
    for (int i = 0; i < 4; ++i) got += (bytes[std::size_t(i)] >= 32 && bytes[std::size_t(i)] < 127) ? char(bytes[std::size_t(i)]) : '?';
    fail("not a ." + std::string(magic) + " file (bad magic \"" + got + "\", expected \"" + std::string(magic) + "\")");
  }
  version_ = uint32_t(load_le(bytes.data() + 4, 4));
  if (version_ == 0 || version_ > max_version)
    fail("unsupported version " + std::to_string(version_) + " (this reader knows 1.." + std::to_string(max_version) + ")");
  const uint32_t count = uint32_t(load_le(bytes.data() + 8, 4));
  uint64_t pos = 12;
  for (uint32_t s = 0; s < count; ++s) {
    if (bytes.size() - pos < 12)
      fail("truncated: the header of section " + std::to_string(s) + " of " + std::to_string(count) +
           " would start at byte offset " + std::to_string(pos) + ", the file has " + std::to_string(bytes.size()) +
           " bytes");
    BinSection sec;
    sec.id = uint32_t(load_le(bytes.data() + pos, 4));
    sec.size = load_le(bytes.data() + pos + 4, 8);
    sec.offset = pos + 12;
    if (sec.size > bytes.size() - sec.offset)
      fail("truncated: section " + std::to_string(sec.id) + " at byte offset " + std::to_string(sec.offset) +
           " declares " + std::to_string(sec.size) + " bytes, the file has " +
           std::to_string(bytes.size() - sec.offset) + " left");
    sections_.push_back(sec);
    pos = sec.offset + sec.size;
  }
  if (pos != bytes.size())
    fail(std::to_string(bytes.size() - pos) + " bytes after the last of the " + std::to_string(count) +
         " sections (byte offset " + std::to_string(pos) + ")");
}

void BinFile::fail(const std::string& what) const { throw FormatError(name_ + ": " + what); }

bool BinFile::has(uint32_t id) const {
  return std::any_of(sections_.begin(), sections_.end(), [&](const BinSection& s) { return s.id == id; });
}

SectionReader BinFile::section(uint32_t id, std::string_view what) const {
  const BinSection* found = nullptr;
  for (const BinSection& s : sections_) {
    if (s.id != id) continue;
    if (found)
      fail("section " + std::to_string(id) + " (" + std::string(what) + ") appears twice (byte offsets " +
           std::to_string(found->offset) + " and " + std::to_string(s.offset) + ")");
    found = &s;
  }
  if (!found) fail("section " + std::to_string(id) + " (" + std::string(what) + ") is missing");
  return SectionReader(bytes_, *found, std::string(what), name_);
}

// ---------------------------------------------------------------------------------------------
BinFileWriter::BinFileWriter(std::string_view magic, uint32_t version, uint32_t num_sections) {
  if (magic.size() != 4) throw std::invalid_argument("BinFileWriter: the magic must be 4 bytes");
  out_.reserve(1 << 16);
  for (char c : magic) out_.push_back(uint8_t(c));
  u32(version);
  u32(num_sections);
}

void BinFileWriter::begin_section(uint32_t id) {
  u32(id);
  section_start_ = out_.size();
  u64(0);  // patched by end_section
  open_ = true;
}

void BinFileWriter::end_section() {
  const uint64_t size = out_.size() - section_start_ - 8;
  for (int k = 0; k < 8; ++k) out_[section_start_ + std::size_t(k)] = uint8_t(size >> (8 * k));
  open_ = false;
}

void BinFileWriter::u32(uint32_t v) {
  for (int k = 0; k < 4; ++k) out_.push_back(uint8_t(v >> (8 * k)));
}
void BinFileWriter::u64(uint64_t v) {
  for (int k = 0; k < 8; ++k) out_.push_back(uint8_t(v >> (8 * k)));
}
void BinFileWriter::bytes(std::span<const uint8_t> b) { out_.insert(out_.end(), b.begin(), b.end()); }

std::vector<uint8_t> BinFileWriter::finish() {
  if (open_) end_section();
  return std::move(out_);
}

std::vector<uint8_t> read_file_bytes(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) throw FormatError(path.string() + ": cannot open");
  const std::streamoff size = f.tellg();
  if (size < 0) throw FormatError(path.string() + ": cannot determine the size");
  std::vector<uint8_t> bytes(static_cast<std::size_t>(size));
  f.seekg(0);
  f.read(reinterpret_cast<char*>(bytes.data()), size);
  if (!f) throw FormatError(path.string() + ": read failed");
  return bytes;
}

MappedFile::MappedFile(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw FormatError(path.string() + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw FormatError(path.string() + ": not a regular file");
  }
  size_ = std::size_t(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      throw FormatError(path.string() + ": cannot map: " + std::strerror(err));
    }
    data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

void MappedFile::advise_sequential() const {
  if (data_) ::madvise(const_cast<uint8_t*>(data_), size_, MADV_SEQUENTIAL);  // advice: failure changes nothing
}

void write_file_bytes(const std::filesystem::path& path, std::span<const uint8_t> bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw FormatError(path.string() + ": cannot open for writing");
  f.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  f.close();
  if (!f) throw FormatError(path.string() + ": write failed");
}

// ---------------------------------------------------------------------------------------------
template <class F>
bool is_prime_of(std::span<const uint8_t> bytes) {
  return prime_equals<F::Params::N>(bytes, F::Params::modulus);
}

bool section1_field_is_bn254(const std::filesystem::path& path, std::string_view magic, uint32_t max_version) {
  const MappedFile mapped(path);
  const BinFile file(mapped.bytes(), path.string(), magic, max_version);
  SectionReader in = file.section(1, "header");
  const uint32_t n8 = in.u32("n8");
  const uint64_t at = in.offset();
  const std::span<const uint8_t> prime = in.bytes(n8, "prime");
  if (is_prime_of<bn254::Fr>(prime)) return true;
  if (is_prime_of<Fr>(prime)) return false;
  in.fail_at(at, "wrong prime: neither BLS12-381's nor BN254's scalar field (n8 = " + std::to_string(n8) + ")");
}

template <class F>
bool field_from_lem(F& out, const uint8_t* in) {
  constexpr int N = F::Params::N;
  uint64_t v[N];
  limbs_from_le<N>(v, in);
  if (!limbs_less<N>(v, F::Params::modulus)) return false;
  for (int i = 0; i < N; ++i) out.l[i] = v[i];
  return true;
}

template <class F>
void field_to_lem(uint8_t* out, const F& x) {
  limbs_to_le<F::Params::N>(out, x.l);
}

template <class F>
bool zkey_coefficient_from_bytes(F& out, std::span<const uint8_t, 32> in) {
  uint64_t v[4];
  limbs_from_le<4>(v, in.data());
  if (!limbs_less<4>(v, F::Params::modulus)) return false;
  // v = coef·R² read as a Montgomery form stands for coef·R; one reduction (a Montgomery
  // multiplication by the plain integer 1) leaves coef·R, the Montgomery form of coef.
  F raw;
  for (int i = 0; i < 4; ++i) raw.l[i] = v[i];
  uint64_t c[4];
  raw.to_canonical(c);
  for (int i = 0; i < 4; ++i) out.l[i] = c[i];
  return true;
}

template <class F>
void zkey_coefficient_to_bytes(uint8_t out[32], const F& coef) {
  // Montgomery form coef·R, times R² and reduced once: coef·R².
  F r2_raw;  // the integer R² mod r as raw limbs: a Montgomery multiplication by it multiplies by R
  for (int i = 0; i < 4; ++i) r2_raw.l[i] = F::Consts::r2.v[i];
  const F stored = coef * r2_raw;
  limbs_to_le<4>(out, stored.l);
}

const char* to_string(PointError e) {
  switch (e) {
    case PointError::ok: return "ok";
    case PointError::coordinate_not_canonical: return "coordinate not below the base-field prime";
    case PointError::not_on_curve: return "not on the curve";
    case PointError::not_in_subgroup: return "not in the prime-order subgroup";
  }
  return "unknown";
}

namespace {
// The coordinates of a point: a prime field element, or both halves of an Fp2 one.
template <class F>
bool coordinate_from_lem(F& out, const uint8_t* in) {
  if constexpr (requires { typename F::Base; })
    return field_from_lem(out.c0, in) && field_from_lem(out.c1, in + sizeof(out.c0));
  else
    return field_from_lem(out, in);
}
template <class F>
void coordinate_to_lem(uint8_t* out, const F& x) {
  if constexpr (requires { typename F::Base; }) {
    field_to_lem(out, x.c0);
    field_to_lem(out + sizeof(x.c0), x.c1);
  } else {
    field_to_lem(out, x);
  }
}
}  // namespace

template <class C>
PointError point_from_lem(Affine<C>& out, std::span<const uint8_t> in, PointCheck check) {
  constexpr std::size_t kCoord = sizeof(typename C::Field);
  if (in.size() != 2 * kCoord) throw std::logic_error("point_from_lem: wrong byte count");
  Affine<C> p;
  if (!coordinate_from_lem(p.x, in.data()) || !coordinate_from_lem(p.y, in.data() + kCoord))
    return PointError::coordinate_not_canonical;
  if (check != PointCheck::coordinates && !p.is_on_curve()) return PointError::not_on_curve;
  if (check == PointCheck::subgroup && !p.is_infinity() && !is_in_subgroup(p)) return PointError::not_in_subgroup;
  out = p;
  return PointError::ok;
}


template <class C>
void point_to_lem(uint8_t* out, const Affine<C>& p) {
  coordinate_to_lem(out, p.x);
  coordinate_to_lem(out + sizeof(typename C::Field), p.y);
}

#define PP_LEM_FIELD(F)                                                        \
  template bool is_prime_of<F>(std::span<const uint8_t>);                     \
  template bool field_from_lem(F&, const uint8_t*);                           \
  template void field_to_lem(uint8_t*, const F&);
PP_LEM_FIELD(Fp)
PP_LEM_FIELD(Fr)
PP_LEM_FIELD(bn254::Fp)
PP_LEM_FIELD(bn254::Fr)
#undef PP_LEM_FIELD
template bool zkey_coefficient_from_bytes(Fr&, std::span<const uint8_t, 32>);
template bool zkey_coefficient_from_bytes(bn254::Fr&, std::span<const uint8_t, 32>);
template void zkey_coefficient_to_bytes(uint8_t*, const Fr&);
template void zkey_coefficient_to_bytes(uint8_t*, const bn254::Fr&);
#define PP_LEM_POINT(C)                                                        \
  template PointError point_from_lem(Affine<C>&, std::span<const uint8_t>, PointCheck); \
  template void point_to_lem(uint8_t*, const Affine<C>&);
PP_LEM_POINT(G1Curve)
PP_LEM_POINT(G2Curve)
PP_LEM_POINT(bn254::G1Curve)
PP_LEM_POINT(bn254::G2Curve)
#undef PP_LEM_POINT

}  // namespace pp
