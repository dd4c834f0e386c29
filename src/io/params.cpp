// SPDX-License-Identifier: Apache-2.0 OR MIT
// bellperson `.params` / VerifyingKey files: layout walk, parallel point decoding, mmap and buffered writers.
#include "proofpipe/io/params.hpp"
#include "proofpipe/io/binfile.hpp"
#include "proofpipe/io/key_cache.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

namespace pp {

namespace {

constexpr std::size_t kCountBytes = 4;
constexpr std::size_t kNumVectors = 5;
constexpr std::array<const char*, kNumVectors> kVectorNames = {"h", "l", "a", "b_g1", "b_g2"};
constexpr std::array<std::size_t, kNumVectors> kVectorPointBytes = {
    kG1UncompressedBytes, kG1UncompressedBytes, kG1UncompressedBytes, kG1UncompressedBytes,
    kG2UncompressedBytes};
constexpr std::array<const char*, 6> kVkPointNames = {"vk.alpha_g1", "vk.beta_g1",  "vk.beta_g2",
                                                      "vk.gamma_g2", "vk.delta_g1", "vk.delta_g2"};
constexpr std::array<bool, 6> kVkPointIsG2 = {false, false, true, true, false, true};
constexpr const char* kIcName = "vk.ic";
constexpr uint64_t kNoIndex = std::numeric_limits<uint64_t>::max();

[[noreturn]] void fail(std::string_view name, const std::string& what) {
  std::string msg(name);
  msg += ": ";
  msg += what;
  throw ParamsError(msg);
}

std::string errno_text(int err) { return std::strerror(err); }

// ------------------------------------------------------------------------------------------------
// The byte source of the layout walk: a mapped or in-memory file; the walk only needs the size and
// small reads of the counts.

struct SpanSource {
  std::span<const uint8_t> bytes;
  uint64_t size() const { return bytes.size(); }
  void read(uint64_t offset, uint8_t* dst, std::size_t n) const { std::memcpy(dst, bytes.data() + offset, n); }
};

class FileDescriptor {
 public:
  FileDescriptor(const std::filesystem::path& path, int flags, mode_t mode = 0) : name_(path.string()) {
    do {
      fd_ = ::open(path.c_str(), flags | O_CLOEXEC, mode);
    } while (fd_ < 0 && errno == EINTR);
    if (fd_ < 0) fail(name_, "cannot open: " + errno_text(errno));
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  const std::string& name() const { return name_; }
  // Close errors are write errors on some file systems (NFS), so writers must see them.
  void close() {
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0 && errno != EINTR) fail(name_, "close failed: " + errno_text(errno));
  }

 private:
  int fd_ = -1;
  std::string name_;
};



// ------------------------------------------------------------------------------------------------
// Layout: where every field lives, derived from the counts alone and checked against the size
// before anything is decoded or allocated (so a forged count cannot make us allocate more than
// the file holds).

struct Section {
  const char* name = "";
  uint64_t data_offset = 0;
  uint64_t count = 0;
  std::size_t point_bytes = 0;
};

struct Layout {
  std::array<uint64_t, 6> vk_point_offset{};
  Section ic;
  std::array<Section, kNumVectors> vec;
  uint64_t end = 0;  // one past the last byte the layout accounts for
};

template <class Src>
void need(const Src& src, std::string_view name, uint64_t offset, uint64_t n, const std::string& where,
          const std::string& what) {
  const uint64_t size = src.size();
  if (offset <= size && size - offset >= n) return;
  const uint64_t remain = offset <= size ? size - offset : 0;
  fail(name, "truncated in " + where + ": " + what + " needs " + std::to_string(n) + " bytes at byte offset " +
                 std::to_string(offset) + ", only " + std::to_string(remain) +
                 " remain (expected file size at least " + std::to_string(offset + n) + ", actual " +
                 std::to_string(size) + ")");
}

template <class Src>
Section read_section(const Src& src, std::string_view name, uint64_t& offset, const char* vec_name,
                     std::size_t point_bytes) {
  const std::string where = std::string("vector ") + vec_name;
  need(src, name, offset, kCountBytes, where, "its u32 count");
  uint8_t raw[kCountBytes];
  src.read(offset, raw, kCountBytes);
  const uint64_t count = (uint64_t(raw[0]) << 24) | (uint64_t(raw[1]) << 16) | (uint64_t(raw[2]) << 8) | raw[3];
  offset += kCountBytes;
  need(src, name, offset, count * point_bytes, where,
       std::to_string(count) + " points of " + std::to_string(point_bytes) + " bytes");
  Section s{vec_name, offset, count, point_bytes};
  offset += count * point_bytes;
  return s;
}

template <class Src>
Layout walk_layout(const Src& src, std::string_view name, bool vk_only) {
  Layout lay;
  uint64_t offset = 0;
  for (std::size_t i = 0; i < kVkPointNames.size(); ++i) {
    const std::size_t n = kVkPointIsG2[i] ? kG2UncompressedBytes : kG1UncompressedBytes;
    need(src, name, offset, n, kVkPointNames[i], "the point");
    lay.vk_point_offset[i] = offset;
    offset += n;
  }
  lay.ic = read_section(src, name, offset, kIcName, kG1UncompressedBytes);
  if (!vk_only) {
    for (std::size_t v = 0; v < kNumVectors; ++v)
      lay.vec[v] = read_section(src, name, offset, kVectorNames[v], kVectorPointBytes[v]);
  }
  lay.end = offset;
  if (src.size() != offset) {
    fail(name, std::to_string(src.size() - offset) + " trailing bytes after vector " +
                   (vk_only ? kIcName : kVectorNames.back()) + " at byte offset " + std::to_string(offset) +
                   " (expected file size " + std::to_string(offset) + ", actual " + std::to_string(src.size()) +
                   ")" + (vk_only ? "; a .params file is not a VK file" : ""));
  }
  return lay;
}

// ------------------------------------------------------------------------------------------------
// Point decoding.

DecodeError decode(G1Affine& out, std::span<const uint8_t> in, SubgroupCheck check) { return decode_g1(out, in, check); }
DecodeError decode(G2Affine& out, std::span<const uint8_t> in, SubgroupCheck check) { return decode_g2(out, in, check); }

// nullptr when the point is acceptable, else the reason (a static string).
template <class P>
const char* check_point(P& out, std::span<const uint8_t> in, SubgroupCheck check, bool reject_infinity) {
  const DecodeError e = decode(out, in, check);
  if (e != DecodeError::ok) return to_string(e);
  if (reject_infinity && out.is_infinity()) return "point at infinity";
  return nullptr;
}

struct BadPoint {
  uint64_t index = kNoIndex;
  const char* reason = nullptr;
};

// Decodes a whole vector in parallel and returns its lowest bad index (kNoIndex when none).
// Lowest, not just some: a chunk stops at its own first bad point and skips work above the
// current minimum, and every index below the final minimum was decoded by some chunk — so the
// report does not depend on the schedule.
template <class P>
BadPoint decode_vector(std::span<const uint8_t> file, const Section& s, P* out, SubgroupCheck check,
                       bool reject_infinity) {
  std::atomic<uint64_t> first_bad{kNoIndex};
  // A subgroup check costs a scalar multiplication (tens of µs); plain decoding about a µs.
  const uint64_t grain = check == SubgroupCheck::yes ? 16 : 1024;
  tbb::parallel_for(tbb::blocked_range<uint64_t>(0, s.count, grain), [&](const tbb::blocked_range<uint64_t>& r) {
    for (uint64_t i = r.begin(); i < r.end(); ++i) {
      if (i > first_bad.load(std::memory_order_relaxed)) return;
      const auto in = file.subspan(std::size_t(s.data_offset + i * s.point_bytes), s.point_bytes);
      if (check_point(out[i], in, check, reject_infinity) != nullptr) {
        uint64_t cur = first_bad.load(std::memory_order_relaxed);
        while (i < cur && !first_bad.compare_exchange_weak(cur, i, std::memory_order_relaxed)) {
        }
        return;
      }
    }
  });
  BadPoint bad;
  bad.index = first_bad.load();
  if (bad.index != kNoIndex) {
    P tmp;
    const auto in = file.subspan(std::size_t(s.data_offset + bad.index * s.point_bytes), s.point_bytes);
    bad.reason = check_point(tmp, in, check, reject_infinity);
  }
  return bad;
}

[[noreturn]] void fail_point(std::string_view name, const Section& s, const BadPoint& bad) {
  fail(name, std::string("bad point in vector ") + s.name + " at index " + std::to_string(bad.index) +
                 " (byte offset " + std::to_string(s.data_offset + bad.index * s.point_bytes) +
                 "): " + bad.reason);
}

// `bytes` covers at least [0, end of ic) of the file.
VerifyingKey decode_vk(std::span<const uint8_t> bytes, const Layout& lay, std::string_view name) {
  VerifyingKey vk;
  G1Affine* g1[6] = {&vk.alpha_g1, &vk.beta_g1, nullptr, nullptr, &vk.delta_g1, nullptr};
  G2Affine* g2[6] = {nullptr, nullptr, &vk.beta_g2, &vk.gamma_g2, nullptr, &vk.delta_g2};
  for (std::size_t i = 0; i < kVkPointNames.size(); ++i) {
    const uint64_t off = lay.vk_point_offset[i];
    const char* reason =
        kVkPointIsG2[i]
            ? check_point(*g2[i], bytes.subspan(std::size_t(off), kG2UncompressedBytes), SubgroupCheck::yes, false)
            : check_point(*g1[i], bytes.subspan(std::size_t(off), kG1UncompressedBytes), SubgroupCheck::yes, false);
    if (reason != nullptr)
      fail(name, std::string("bad point ") + kVkPointNames[i] + " (byte offset " + std::to_string(off) + "): " + reason);
  }
  vk.ic.resize(std::size_t(lay.ic.count));
  const BadPoint bad = decode_vector(bytes, lay.ic, vk.ic.data(), SubgroupCheck::yes, true);
  if (bad.index != kNoIndex) fail_point(name, lay.ic, bad);
  return vk;
}


// ------------------------------------------------------------------------------------------------
// Encoding. Both writers run the same encoder over a sink that hands out room for up to
// kChunkBytes at a time, so the file writer never holds more than one chunk.

constexpr std::size_t kChunkBytes = std::size_t(1) << 21;

uint32_t checked_count(std::size_t n, const char* vec_name) {
  if (n > std::numeric_limits<uint32_t>::max())
    throw ParamsError(std::string("vector ") + vec_name + " has " + std::to_string(n) +
                      " points; the format's u32 count holds at most 4294967295");
  return uint32_t(n);
}

template <class Sink>
void put_count(Sink& sink, uint32_t n) {
  uint8_t* p = sink.claim(kCountBytes);
  p[0] = uint8_t(n >> 24);
  p[1] = uint8_t(n >> 16);
  p[2] = uint8_t(n >> 8);
  p[3] = uint8_t(n);
}

void encode_point(uint8_t* out, const G1Affine& p) { encode_g1_uncompressed(out, p); }
void encode_point(uint8_t* out, const G2Affine& p) { encode_g2_uncompressed(out, p); }

template <class Sink, class P>
void put_points(Sink& sink, std::span<const P> pts, std::size_t point_bytes) {
  const std::size_t per_chunk = kChunkBytes / point_bytes;
  for (std::size_t start = 0; start < pts.size(); start += per_chunk) {
    const std::size_t n = std::min(per_chunk, pts.size() - start);
    uint8_t* dst = sink.claim(n * point_bytes);
    // Leaving Montgomery form costs a multiplication per coordinate: worth the threads on
    // multi-GB keys, and a no-op partition on small ones.
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 512), [&](const tbb::blocked_range<std::size_t>& r) {
      for (std::size_t i = r.begin(); i < r.end(); ++i) encode_point(dst + i * point_bytes, pts[start + i]);
    });
  }
}

template <class Sink>
void put_vk(Sink& sink, const VerifyingKey& vk) {
  const uint32_t n_ic = checked_count(vk.ic.size(), kIcName);
  encode_g1_uncompressed(sink.claim(kG1UncompressedBytes), vk.alpha_g1);
  encode_g1_uncompressed(sink.claim(kG1UncompressedBytes), vk.beta_g1);
  encode_g2_uncompressed(sink.claim(kG2UncompressedBytes), vk.beta_g2);
  encode_g2_uncompressed(sink.claim(kG2UncompressedBytes), vk.gamma_g2);
  encode_g1_uncompressed(sink.claim(kG1UncompressedBytes), vk.delta_g1);
  encode_g2_uncompressed(sink.claim(kG2UncompressedBytes), vk.delta_g2);
  put_count(sink, n_ic);
  put_points(sink, std::span<const G1Affine>(vk.ic), kG1UncompressedBytes);
}

template <class Sink>
void put_params(Sink& sink, const ProvingKey& pk) {
  put_vk(sink, pk.vk);
  put_count(sink, checked_count(pk.h.size(), "h"));
  put_points(sink, pk.h.span(), kG1UncompressedBytes);
  put_count(sink, checked_count(pk.l.size(), "l"));
  put_points(sink, pk.l.span(), kG1UncompressedBytes);
  put_count(sink, checked_count(pk.a.size(), "a"));
  put_points(sink, pk.a.span(), kG1UncompressedBytes);
  put_count(sink, checked_count(pk.b_g1.size(), "b_g1"));
  put_points(sink, pk.b_g1.span(), kG1UncompressedBytes);
  put_count(sink, checked_count(pk.b_g2.size(), "b_g2"));
  put_points(sink, pk.b_g2.span(), kG2UncompressedBytes);
}

struct VectorSink {
  std::vector<uint8_t>& out;
  uint8_t* claim(std::size_t n) {
    const std::size_t at = out.size();
    out.resize(at + n);
    return out.data() + at;
  }
};

class FileSink {
 public:
  explicit FileSink(const std::filesystem::path& path)
      : fd_(path, O_WRONLY | O_CREAT | O_TRUNC, 0644), buf_(kChunkBytes) {}
  uint8_t* claim(std::size_t n) {
    if (buf_.size() - used_ < n) flush();
    uint8_t* p = buf_.data() + used_;
    used_ += n;
    return p;
  }
  void finish() {
    flush();
    fd_.close();
  }

 private:
  void flush() {
    const uint8_t* p = buf_.data();
    std::size_t n = used_;
    while (n > 0) {
      const ssize_t w = ::write(fd_.get(), p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) fail(fd_.name(), "write failed: " + errno_text(errno));
      p += w;
      n -= std::size_t(w);
    }
    used_ = 0;
  }
  FileDescriptor fd_;
  std::vector<uint8_t> buf_;
  std::size_t used_ = 0;
};

}  // namespace

uint64_t vk_encoded_size(const VerifyingKey& vk) {
  return kVkFixedBytes + kCountBytes + uint64_t(checked_count(vk.ic.size(), kIcName)) * kG1UncompressedBytes;
}

uint64_t params_encoded_size(const ProvingKey& pk) {
  // The layout has no field for the convention; its H query is bellman's by definition.
  if (pk.convention.h_basis != HBasis::bellman)
    throw ParamsError("the key's H points are in snarkjs's basis; a .params holds bellman's (change_h_basis first)");
  uint64_t n = vk_encoded_size(pk.vk) + kNumVectors * kCountBytes;
  n += uint64_t(checked_count(pk.h.size(), "h")) * kG1UncompressedBytes;
  n += uint64_t(checked_count(pk.l.size(), "l")) * kG1UncompressedBytes;
  n += uint64_t(checked_count(pk.a.size(), "a")) * kG1UncompressedBytes;
  n += uint64_t(checked_count(pk.b_g1.size(), "b_g1")) * kG1UncompressedBytes;
  n += uint64_t(checked_count(pk.b_g2.size(), "b_g2")) * kG2UncompressedBytes;
  return n;
}

namespace {

// A whole key (.params) or its verifying key alone: one encoder, to memory or to a file.
uint64_t encoded_size(const ProvingKey& pk) { return params_encoded_size(pk); }
uint64_t encoded_size(const VerifyingKey& vk) { return vk_encoded_size(vk); }
template <class Sink>
void put(Sink& sink, const ProvingKey& pk) { put_params(sink, pk); }
template <class Sink>
void put(Sink& sink, const VerifyingKey& vk) { put_vk(sink, vk); }

template <class Key>
std::vector<uint8_t> encode_key(const Key& key) {
  std::vector<uint8_t> out;
  out.reserve(std::size_t(encoded_size(key)));
  VectorSink sink{out};
  put(sink, key);
  return out;
}

template <class Key>
void write_key(const std::filesystem::path& path, const Key& key) {
  try {
    encoded_size(key);  // count overflow (and a key in snarkjs's basis) is found before the file is touched
  } catch (const ParamsError& e) {
    fail(path.string(), e.what());
  }
  FileSink sink(path);
  put(sink, key);
  sink.finish();
}

}  // namespace

std::vector<uint8_t> encode_params(const ProvingKey& pk) { return encode_key(pk); }
std::vector<uint8_t> encode_vk(const VerifyingKey& vk) { return encode_key(vk); }
void write_params(const std::filesystem::path& path, const ProvingKey& pk) { write_key(path, pk); }
void write_vk(const std::filesystem::path& path, const VerifyingKey& vk) { write_key(path, vk); }

ProvingKey parse_params(std::span<const uint8_t> bytes, const ParamsReadOptions& options, std::string_view name) {
  const Layout lay = walk_layout(SpanSource{bytes}, name, false);
  ProvingKey pk;
  pk.vk = decode_vk(bytes, lay, name);

  std::vector<G1Affine> g1[4];
  for (std::size_t v = 0; v < 4; ++v) g1[v].resize(std::size_t(lay.vec[v].count));
  std::vector<G2Affine> g2(std::size_t(lay.vec[4].count));
  G1Affine* g1_out[4] = {g1[0].data(), g1[1].data(), g1[2].data(), g1[3].data()};

  // The vectors run concurrently (nested in TBB's pool), so small vectors do not serialize.
  std::array<BadPoint, kNumVectors> bad;
  tbb::parallel_for(std::size_t(0), kNumVectors, [&](std::size_t v) {
    bad[v] = v < 4 ? decode_vector(bytes, lay.vec[v], g1_out[v], options.subgroup, true)
                   : decode_vector(bytes, lay.vec[v], g2.data(), options.subgroup, true);
  });
  for (std::size_t v = 0; v < kNumVectors; ++v)
    if (bad[v].index != kNoIndex) fail_point(name, lay.vec[v], bad[v]);
  pk.h = std::move(g1[0]);
  pk.l = std::move(g1[1]);
  pk.a = std::move(g1[2]);
  pk.b_g1 = std::move(g1[3]);
  pk.b_g2 = std::move(g2);
  return pk;
}

std::shared_ptr<const MappedFile> map_key_file(const std::filesystem::path& path) {
  try {
    return std::make_shared<const MappedFile>(path);
  } catch (const FormatError& e) {
    throw ParamsError(e.what());
  }
}

ProvingKey read_params(const std::filesystem::path& path, const ParamsReadOptions& options) {
  const std::shared_ptr<const MappedFile> file = map_key_file(path);
  if (is_key_cache(file->bytes())) return map_key_cache(file, path);
  file->advise_sequential();  // each decoding thread walks its chunk front to back
  return parse_params(file->bytes(), options, path.string());
}

ParamsHeader parse_params_header(std::span<const uint8_t> bytes, std::string_view name) {
  const Layout lay = walk_layout(SpanSource{bytes}, name, false);
  ParamsHeader hdr;
  hdr.vk = decode_vk(bytes, lay, name);
  hdr.h = std::size_t(lay.vec[0].count);
  hdr.l = std::size_t(lay.vec[1].count);
  hdr.a = std::size_t(lay.vec[2].count);
  hdr.b_g1 = std::size_t(lay.vec[3].count);
  hdr.b_g2 = std::size_t(lay.vec[4].count);
  hdr.file_size = bytes.size();
  return hdr;
}

QueryLayout params_layout(const ParamsHeader& header, std::string_view name) {
  try {
    return QueryLayout::of_sizes(header.convention.h_basis, header.vk.ic.size(), header.h, header.l, header.a, header.b_g1,
                                 header.b_g2);
  } catch (const std::invalid_argument& e) {
    throw ParamsError(std::string(name) + ": " + e.what());
  }
}

ParamsHeader read_params_header(const std::filesystem::path& path) {
  const std::shared_ptr<const MappedFile> file = map_key_file(path);
  if (is_key_cache(file->bytes())) return key_cache_header(file->bytes(), path);
  return parse_params_header(file->bytes(), path.string());
}

VerifyingKey parse_vk(std::span<const uint8_t> bytes, std::string_view name) {
  const Layout lay = walk_layout(SpanSource{bytes}, name, true);
  return decode_vk(bytes, lay, name);
}

VerifyingKey read_vk(const std::filesystem::path& path) { return parse_vk(map_key_file(path)->bytes(), path.string()); }

}  // namespace pp
