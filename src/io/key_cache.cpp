// SPDX-License-Identifier: Apache-2.0 OR MIT
// The key cache (io/key_cache.hpp): writer and mapping reader.

#include "proofpipe/io/key_cache.hpp"

#include <fcntl.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "proofpipe/io/binfile.hpp"
#include "proofpipe/io/params.hpp"

namespace pp {

namespace {

constexpr uint32_t kVersion = 1;
constexpr uint64_t kPage = 4096;
constexpr uint64_t kBlockBytes = uint64_t(64) << 20;  // one checksum per 64 MiB of points
constexpr std::size_t kSections = 5;
constexpr std::array<const char*, kSections> kNames = {"h", "l", "a", "b_g1", "b_g2"};
constexpr uint64_t kPointBytes[kSections] = {sizeof(G1Affine), sizeof(G1Affine), sizeof(G1Affine), sizeof(G1Affine),
                                             sizeof(G2Affine)};

// The header's fields at fixed offsets.
enum Field : std::size_t {
  kMagicAt = 0,
  kVersionAt = 8,
  kG1BytesAt = 12,
  kG2BytesAt = 16,
  kBasisAt = 20,
  kGeneratorAt = 24,
  kBlockAt = 32,
  kFileBytesAt = 40,
  kVkAt = 48,         // offset, bytes
  kTableAt = 64,      // offset, bytes
  kSectionsAt = 80,   // 5 x (offset, count)
  kMetaHashAt = 160,  // XXH3 of the VK and the table
  kHeaderHashAt = 168,  // XXH3 of bytes [0, 168)
  kHeaderUsed = 176,
};

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what) {
  throw ParamsError(path.string() + ": key cache: " + what);
}

uint64_t align_page(uint64_t x) { return (x + kPage - 1) / kPage * kPage; }
uint64_t blocks_of(uint64_t bytes) { return (bytes + kBlockBytes - 1) / kBlockBytes; }

void put32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }
void put64(uint8_t* p, uint64_t v) { std::memcpy(p, &v, 8); }
uint32_t get32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
uint64_t get64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// Checksum block b of a section of `bytes` bytes: its offset in the section and its length.
struct BlockRange {
  uint64_t at, bytes;
};
BlockRange block_range(uint64_t section_bytes, uint64_t b) {
  const uint64_t at = b * kBlockBytes;
  return {at, std::min(kBlockBytes, section_bytes - at)};
}

struct Layout {
  uint64_t vk_offset = 0, vk_bytes = 0, table_offset = 0, table_bytes = 0, file_bytes = 0;
  std::array<uint64_t, kSections> offset{}, count{};
  uint64_t bytes(std::size_t s) const { return count[s] * kPointBytes[s]; }
  // Block b of section s in the file.
  BlockRange block(std::size_t s, uint64_t b) const {
    const BlockRange r = block_range(bytes(s), b);
    return {offset[s] + r.at, r.bytes};
  }
};

// Where everything goes for these counts (the writer's plan, and the reader's expectation).
Layout plan(uint64_t vk_bytes, const std::array<uint64_t, kSections>& count) {
  Layout l;
  l.count = count;
  l.vk_offset = kPage;
  l.vk_bytes = vk_bytes;
  uint64_t blocks = 0;
  for (std::size_t s = 0; s < kSections; ++s) blocks += blocks_of(l.bytes(s));
  l.table_offset = align_page(l.vk_offset + vk_bytes);
  l.table_bytes = 8 * blocks;
  uint64_t at = align_page(l.table_offset + l.table_bytes);
  for (std::size_t s = 0; s < kSections; ++s) {
    l.offset[s] = at;
    at = align_page(at + l.bytes(s));
  }
  l.file_bytes = at;
  return l;
}

// The checksums of one section's blocks, computed in parallel.
void checksum_blocks(const uint8_t* data, uint64_t bytes, uint64_t* out) {
  tbb::parallel_for(tbb::blocked_range<uint64_t>(0, blocks_of(bytes), 1), [&](const tbb::blocked_range<uint64_t>& r) {
    for (uint64_t b = r.begin(); b < r.end(); ++b) {
      const BlockRange r = block_range(bytes, b);
      out[b] = XXH3_64bits(data + r.at, r.bytes);
    }
  });
}

uint64_t meta_hash(std::span<const uint8_t> vk, std::span<const uint8_t> table) {
  XXH3_state_t st;
  XXH3_64bits_reset(&st);
  XXH3_64bits_update(&st, vk.data(), vk.size());
  XXH3_64bits_update(&st, table.data(), table.size());
  return XXH3_64bits_digest(&st);
}

// A file written with positioned writes; removed unless committed.
class TempFile {
 public:
  TempFile(std::filesystem::path final_path)
      : final_(std::move(final_path)), temp_(final_.string() + ".tmp" + std::to_string(::getpid())) {
    fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) fail(final_, "cannot create " + temp_.string() + ": " + std::strerror(errno));
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) {
      std::error_code ec;
      std::filesystem::remove(temp_, ec);
    }
  }
  void write(uint64_t offset, const void* data, uint64_t bytes) {
    const auto* p = static_cast<const uint8_t*>(data);
    while (bytes > 0) {
      const std::size_t n = std::size_t(std::min<uint64_t>(bytes, uint64_t(1) << 30));
      const ssize_t put = ::pwrite(fd_, p, n, off_t(offset));
      if (put < 0 && errno == EINTR) continue;
      if (put <= 0) fail(final_, "write failed at byte offset " + std::to_string(offset) + ": " + std::strerror(errno));
      p += put;
      offset += uint64_t(put);
      bytes -= uint64_t(put);
    }
  }
  void commit(uint64_t size) {
    if (::ftruncate(fd_, off_t(size)) != 0 || ::fsync(fd_) != 0 || ::close(fd_) != 0) {
      fd_ = -1;
      fail(final_, std::string("cannot finish the file: ") + std::strerror(errno));
    }
    fd_ = -1;
    std::error_code ec;
    std::filesystem::rename(temp_, final_, ec);
    if (ec) fail(final_, "cannot rename " + temp_.string() + " into place: " + ec.message());
    committed_ = true;
  }

 private:
  std::filesystem::path final_, temp_;
  int fd_ = -1;
  bool committed_ = false;
};

const uint8_t* section_data(const ProvingKey& pk, std::size_t s) {
  switch (s) {
    case 0: return reinterpret_cast<const uint8_t*>(pk.h.data());
    case 1: return reinterpret_cast<const uint8_t*>(pk.l.data());
    case 2: return reinterpret_cast<const uint8_t*>(pk.a.data());
    case 3: return reinterpret_cast<const uint8_t*>(pk.b_g1.data());
    default: return reinterpret_cast<const uint8_t*>(pk.b_g2.data());
  }
}

}  // namespace

bool is_key_cache(std::span<const uint8_t> first_bytes) {
  return first_bytes.size() >= sizeof(kKeyCacheMagic) && std::memcmp(first_bytes.data(), kKeyCacheMagic, sizeof(kKeyCacheMagic)) == 0;
}

void write_key_cache(const std::filesystem::path& path, const ProvingKey& pk) {
  const std::vector<uint8_t> vk = encode_vk(pk.vk);
  const Layout l = plan(vk.size(), {pk.h.size(), pk.l.size(), pk.a.size(), pk.b_g1.size(), pk.b_g2.size()});
  std::vector<uint64_t> table(l.table_bytes / 8);
  uint64_t* next = table.data();
  for (std::size_t s = 0; s < kSections; ++s) {
    checksum_blocks(section_data(pk, s), l.bytes(s), next);
    next += blocks_of(l.bytes(s));
  }
  const std::span<const uint8_t> table_bytes(reinterpret_cast<const uint8_t*>(table.data()), l.table_bytes);

  std::array<uint8_t, kPage> header{};
  std::memcpy(header.data() + kMagicAt, kKeyCacheMagic, sizeof(kKeyCacheMagic));
  put32(&header[kVersionAt], kVersion);
  put32(&header[kG1BytesAt], uint32_t(sizeof(G1Affine)));
  put32(&header[kG2BytesAt], uint32_t(sizeof(G2Affine)));
  put32(&header[kBasisAt], uint32_t(pk.convention.h_basis));
  put64(&header[kGeneratorAt], pk.convention.domain_generator);
  put64(&header[kBlockAt], kBlockBytes);
  put64(&header[kFileBytesAt], l.file_bytes);
  put64(&header[kVkAt], l.vk_offset);
  put64(&header[kVkAt + 8], l.vk_bytes);
  put64(&header[kTableAt], l.table_offset);
  put64(&header[kTableAt + 8], l.table_bytes);
  for (std::size_t s = 0; s < kSections; ++s) {
    put64(&header[kSectionsAt + 16 * s], l.offset[s]);
    put64(&header[kSectionsAt + 16 * s + 8], l.count[s]);
  }
  put64(&header[kMetaHashAt], meta_hash(vk, table_bytes));
  put64(&header[kHeaderHashAt], XXH3_64bits(header.data(), kHeaderHashAt));

  TempFile f(path);
  f.write(0, header.data(), header.size());
  f.write(l.vk_offset, vk.data(), vk.size());
  f.write(l.table_offset, table.data(), l.table_bytes);
  for (std::size_t s = 0; s < kSections; ++s) f.write(l.offset[s], section_data(pk, s), l.bytes(s));
  f.commit(l.file_bytes);
}

namespace {

// The header checked against itself, the counts and the file's size; the VK decoded (and checked).
struct Parsed {
  Layout layout;
  KeyConvention convention;
  VerifyingKey vk;
  std::span<const uint8_t> table;
};

Parsed parse_header(std::span<const uint8_t> bytes, const std::filesystem::path& path) {
  if (!is_key_cache(bytes)) fail(path, "not a key cache (the file does not start with \"PPKCACHE\")");
  if (bytes.size() < kPage) fail(path, "truncated: " + std::to_string(bytes.size()) + " bytes, shorter than its header");
  const uint8_t* h = bytes.data();
  if (get64(h + kHeaderHashAt) != XXH3_64bits(h, kHeaderHashAt)) fail(path, "the header's checksum does not match (corrupt file)");
  if (const uint32_t v = get32(h + kVersionAt); v != kVersion)
    fail(path, "version " + std::to_string(v) + ", this proofpipe reads version " + std::to_string(kVersion));
  if (get32(h + kG1BytesAt) != sizeof(G1Affine) || get32(h + kG2BytesAt) != sizeof(G2Affine))
    fail(path, "point sizes " + std::to_string(get32(h + kG1BytesAt)) + "/" + std::to_string(get32(h + kG2BytesAt)) +
                   " bytes, this build's are " + std::to_string(sizeof(G1Affine)) + "/" + std::to_string(sizeof(G2Affine)));
  if (get64(h + kBlockAt) != kBlockBytes)
    fail(path, "checksum blocks of " + std::to_string(get64(h + kBlockAt)) + " bytes, expected " + std::to_string(kBlockBytes));
  const uint32_t basis = get32(h + kBasisAt);
  if (basis != uint32_t(HBasis::bellman) && basis != uint32_t(HBasis::snarkjs))
    fail(path, "unknown H basis " + std::to_string(basis) + " at byte offset " + std::to_string(kBasisAt));

  // The layout the counts imply must be the one recorded, and the file's size.
  std::array<uint64_t, kSections> count{};
  for (std::size_t s = 0; s < kSections; ++s) {
    count[s] = get64(h + kSectionsAt + 16 * s + 8);
    if (count[s] > (uint64_t(1) << 40))  // no overflow below; 2^27 keys are ~2^27 points
      fail(path, std::string("section ") + kNames[s] + ": implausible point count " + std::to_string(count[s]));
  }
  const uint64_t vk_bytes = get64(h + kVkAt + 8);
  if (vk_bytes > bytes.size()) fail(path, "the VK's length " + std::to_string(vk_bytes) + " exceeds the file");
  Parsed p;
  p.layout = plan(vk_bytes, count);
  const Layout& l = p.layout;
  bool consistent = get64(h + kVkAt) == l.vk_offset && get64(h + kTableAt) == l.table_offset &&
                    get64(h + kTableAt + 8) == l.table_bytes && get64(h + kFileBytesAt) == l.file_bytes;
  for (std::size_t s = 0; s < kSections; ++s) consistent = consistent && get64(h + kSectionsAt + 16 * s) == l.offset[s];
  if (!consistent) fail(path, "the header's offsets do not match its counts (corrupt file)");
  if (bytes.size() != l.file_bytes)
    fail(path, "truncated or over-long: " + std::to_string(bytes.size()) + " bytes, the header says " +
                   std::to_string(l.file_bytes));
  const auto vk_span = bytes.subspan(l.vk_offset, l.vk_bytes);
  p.table = bytes.subspan(l.table_offset, l.table_bytes);
  if (get64(h + kMetaHashAt) != meta_hash(vk_span, p.table))
    fail(path, "the VK's or the checksum table's checksum does not match (corrupt file)");
  p.convention = KeyConvention{HBasis(basis), get64(h + kGeneratorAt)};
  p.vk = parse_vk(vk_span, path.string() + ": key cache VK");
  return p;
}

}  // namespace

ParamsHeader key_cache_header(std::span<const uint8_t> bytes, const std::filesystem::path& path) {
  Parsed p = parse_header(bytes, path);
  ParamsHeader hdr;
  hdr.vk = std::move(p.vk);
  hdr.convention = p.convention;
  hdr.h = std::size_t(p.layout.count[0]);
  hdr.l = std::size_t(p.layout.count[1]);
  hdr.a = std::size_t(p.layout.count[2]);
  hdr.b_g1 = std::size_t(p.layout.count[3]);
  hdr.b_g2 = std::size_t(p.layout.count[4]);
  hdr.file_size = bytes.size();
  hdr.key_cache = true;
  return hdr;
}

ParamsHeader read_key_cache_header(const std::filesystem::path& path) {
  return key_cache_header(map_key_file(path)->bytes(), path);
}

ProvingKey map_key_cache(const std::filesystem::path& path) { return map_key_cache(map_key_file(path), path); }

ProvingKey map_key_cache(std::shared_ptr<const MappedFile> file, const std::filesystem::path& path) {
  const std::span<const uint8_t> bytes = file->bytes();
  Parsed p = parse_header(bytes, path);
  const Layout& l = p.layout;
  const std::array<uint64_t, kSections>& count = l.count;
  ProvingKey pk;
  pk.convention = p.convention;
  pk.vk = std::move(p.vk);

  // Every block against its checksum, in parallel; each block's pages go back to the kernel once
  // read (a 45 GiB key is checked without becoming 45 GiB of this process). The lowest bad block
  // is reported, whatever the schedule.
  struct Block {
    std::size_t section;
    uint64_t index;
  };
  std::vector<Block> blocks;
  for (std::size_t s = 0; s < kSections; ++s)
    for (uint64_t b = 0; b < blocks_of(l.bytes(s)); ++b) blocks.push_back({s, b});
  const uint8_t* table = p.table.data();
  std::atomic<std::size_t> first_bad{blocks.size()};
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, blocks.size(), 1), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t i = r.begin(); i < r.end(); ++i) {
      const BlockRange r = l.block(blocks[i].section, blocks[i].index);
      const bool ok = XXH3_64bits(bytes.data() + r.at, r.bytes) == get64(table + 8 * i);
      ::madvise(const_cast<uint8_t*>(bytes.data() + r.at), std::size_t(r.bytes / kPage * kPage), MADV_DONTNEED);
      if (ok) continue;
      std::size_t cur = first_bad.load();
      while (i < cur && !first_bad.compare_exchange_weak(cur, i)) {
      }
    }
  });
  if (const std::size_t bad = first_bad.load(); bad < blocks.size()) {
    const Block& b = blocks[bad];
    const BlockRange r = l.block(b.section, b.index);
    fail(path, std::string("section ") + kNames[b.section] + ", block " + std::to_string(b.index) + " (byte offsets " +
                   std::to_string(r.at) + ".." + std::to_string(r.at + r.bytes) + "): checksum mismatch (corrupt file)");
  }

  auto points = [&](std::size_t s) { return bytes.data() + l.offset[s]; };
  pk.h = HostArray<G1Affine>::view(file, reinterpret_cast<const G1Affine*>(points(0)), count[0]);
  pk.l = HostArray<G1Affine>::view(file, reinterpret_cast<const G1Affine*>(points(1)), count[1]);
  pk.a = HostArray<G1Affine>::view(file, reinterpret_cast<const G1Affine*>(points(2)), count[2]);
  pk.b_g1 = HostArray<G1Affine>::view(file, reinterpret_cast<const G1Affine*>(points(3)), count[3]);
  pk.b_g2 = HostArray<G2Affine>::view(file, reinterpret_cast<const G2Affine*>(points(4)), count[4]);
  return pk;
}

}  // namespace pp
