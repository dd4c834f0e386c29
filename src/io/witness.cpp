// SPDX-License-Identifier: Apache-2.0 OR MIT
// Native witness files, decimal scalars and public-input JSON (formats in docs/FORMATS.md).
#include "proofpipe/io/witness.hpp"

#include "proofpipe/core/big_vector.hpp"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <tbb/blocked_range.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>
#include <tbb/parallel_for.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <stdexcept>

namespace pp {
namespace {

constexpr char kMagic[8] = {'P', 'P', 'W', 'I', 'T', 'N', 'S', '1'};
constexpr std::size_t kHeaderBytes = 8 + 3 * 8;
constexpr std::size_t kScalarBytes = 32;

std::size_t words_for(std::size_t bits) { return (bits + 63) / 64; }

class Writer {
 public:
  explicit Writer(const std::filesystem::path& path) : path_(path), out_(path, std::ios::binary | std::ios::trunc) {
    if (!out_) throw std::runtime_error(path_.string() + ": cannot open for writing");
    buffer_.reserve(kBufferBytes);
  }
  void bytes(const void* p, std::size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    buffer_.insert(buffer_.end(), b, b + n);
    if (buffer_.size() >= kBufferBytes) flush();
  }
  void u64(uint64_t v) {
    uint8_t b[8];
    for (int i = 0; i < 8; ++i) b[i] = uint8_t(v >> (8 * i));
    bytes(b, 8);
  }
  void scalars(std::span<const Fr> v) {
    uint8_t b[kScalarBytes];
    for (const Fr& x : v) {
      x.to_bytes_le(b);
      bytes(b, kScalarBytes);
    }
  }
  void words(std::span<const uint64_t> v) {
    for (uint64_t w : v) u64(w);
  }
  void finish() {
    flush();
    out_.close();
    if (!out_) throw std::runtime_error(path_.string() + ": write failed");
  }

 private:
  static constexpr std::size_t kBufferBytes = 1 << 20;
  void flush() {
    out_.write(reinterpret_cast<const char*>(buffer_.data()), std::streamsize(buffer_.size()));
    if (!out_) throw std::runtime_error(path_.string() + ": write failed");
    buffer_.clear();
  }
  std::filesystem::path path_;
  std::ofstream out_;
  std::vector<uint8_t> buffer_;
};

class Reader {
 public:
  Reader(std::span<const uint8_t> bytes, std::string_view name) : bytes_(bytes), name_(name) {}
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(std::string(name_) + ": " + what + " (byte offset " + std::to_string(pos_) + ")");
  }
  void need(std::size_t n, const char* section) const {
    if (bytes_.size() - pos_ < n)
      fail(std::string("truncated in ") + section + ": needs " + std::to_string(n) + " more bytes, " +
           std::to_string(bytes_.size() - pos_) + " left");
  }
  uint64_t u64(const char* section) {
    need(8, section);
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | bytes_[pos_ + std::size_t(i)];
    pos_ += 8;
    return v;
  }
  // Counts come from the file: compare by division so that a forged huge count is a size
  // error, never an overflowed multiplication or a giant allocation.
  void need_items(std::size_t count, std::size_t item_bytes, const char* section) const {
    const std::size_t left = bytes_.size() - pos_;
    if (count > left / item_bytes)
      fail(std::string("truncated in ") + section + ": " + std::to_string(count) + " items of " +
           std::to_string(item_bytes) + " bytes do not fit in the " + std::to_string(left) + " bytes left");
  }
  std::vector<Fr> scalars(std::size_t count, const char* section) {
    need_items(count, kScalarBytes, section);
    std::vector<Fr> v(count);
    for (std::size_t i = 0; i < count; ++i) {
      if (!v[i].from_bytes_le(bytes_.data() + pos_))
        fail(std::string(section) + "[" + std::to_string(i) + "] is not a canonical scalar (>= r)");
      pos_ += kScalarBytes;
    }
    return v;
  }
  std::vector<uint64_t> words(std::size_t count, const char* section) {
    need_items(count, 8, section);
    std::vector<uint64_t> v(count);
    for (auto& w : v) w = u64(section);
    return v;
  }
  void magic() {
    need(sizeof kMagic, "header");
    if (std::memcmp(bytes_.data(), kMagic, sizeof kMagic) != 0) fail("not a proofpipe witness file (bad magic)");
    pos_ += sizeof kMagic;
  }
  void end() const {
    if (pos_ != bytes_.size()) fail(std::to_string(bytes_.size() - pos_) + " unexpected trailing bytes");
  }

 private:
  std::span<const uint8_t> bytes_;
  std::string_view name_;
  std::size_t pos_ = 0;
};

// Bits beyond `bits` in the last word must be clear, so that densities have one meaning.
void check_padding(const Reader& r, std::span<const uint64_t> words, std::size_t bits, const char* section) {
  if (bits % 64 != 0 && !words.empty() && (words.back() >> (bits % 64)) != 0)
    r.fail(std::string(section) + ": bits set beyond the " + std::to_string(bits) + " variables");
}

// The header (magic and the three counts), checked: what every reader of the format starts with.
WitnessHeader read_counts(Reader& in) {
  in.magic();
  WitnessHeader h;
  h.rows = in.u64("header");
  h.inputs = in.u64("header");
  h.aux = in.u64("header");
  if (h.inputs == 0) in.fail("header: the input count must include the constant one");
  if (h.rows < h.inputs) in.fail("header: fewer constraints than inputs (the input constraints are part of a, b, c)");
  return h;
}

}  // namespace

void write_witness(const std::filesystem::path& path, const Witness& w) {
  Writer out(path);
  out.bytes(kMagic, sizeof kMagic);
  out.u64(w.a.size());
  out.u64(w.input.size());
  out.u64(w.aux.size());
  out.scalars(w.a);
  out.scalars(w.b);
  out.scalars(w.c);
  out.scalars(w.input);
  out.scalars(w.aux);
  out.words(w.densities.a_aux);
  out.words(w.densities.b_input);
  out.words(w.densities.b_aux);
  out.finish();
}

Witness parse_witness(std::span<const uint8_t> bytes, std::string_view name) {
  Reader in(bytes, name);
  const WitnessHeader h = read_counts(in);
  const uint64_t m = h.rows, num_inputs = h.inputs, num_aux = h.aux;
  Witness w;
  w.a = in.scalars(m, "a");
  w.b = in.scalars(m, "b");
  w.c = in.scalars(m, "c");
  w.input = in.scalars(num_inputs, "input");
  w.aux = in.scalars(num_aux, "aux");
  w.densities.a_aux = in.words(words_for(num_aux), "a_aux density");
  w.densities.b_input = in.words(words_for(num_inputs), "b_input density");
  w.densities.b_aux = in.words(words_for(num_aux), "b_aux density");
  check_padding(in, w.densities.a_aux, num_aux, "a_aux density");
  check_padding(in, w.densities.b_input, num_inputs, "b_input density");
  check_padding(in, w.densities.b_aux, num_aux, "b_aux density");
  in.end();
  if (!w.input[0].is_one()) in.fail("input[0] must be 1");
  return w;
}

WitnessHeader parse_witness_header(std::span<const uint8_t> bytes, std::string_view name) {
  Reader in(bytes.first(std::min<std::size_t>(bytes.size(), kHeaderBytes)), name);
  WitnessHeader h = read_counts(in);
  h.file_bytes = bytes.size();
  const uint64_t want = witness_file_bytes(h.rows, h.inputs, h.aux);
  if (want == 0 || want != bytes.size()) {
    if (want != 0 && want < bytes.size()) {
      parse_witness(bytes, name);  // names the first trailing byte
    }
    throw std::runtime_error(std::string(name) + ": the header's counts (" + std::to_string(h.rows) + " rows, " +
                             std::to_string(h.inputs) + " inputs, " + std::to_string(h.aux) + " aux) need " +
                             (want ? std::to_string(want) : std::string("more than 2^64")) + " bytes, there are " +
                             std::to_string(bytes.size()) + " (truncated or not a whole .ppw file)");
  }
  return h;
}

uint64_t witness_file_bytes(uint64_t rows, uint64_t inputs, uint64_t aux) {
  const uint64_t limit = std::numeric_limits<uint64_t>::max() / 64;
  if (rows > limit || inputs > limit || aux > limit) return 0;
  const uint64_t scalars = 3 * rows + inputs + aux;
  if (scalars > limit) return 0;
  return kHeaderBytes + scalars * kScalarBytes + (2 * words_for(aux) + words_for(inputs)) * 8;
}

namespace {

// An open file read with pread (thread-safe: no shared offset).
class File {
 public:
  explicit File(const std::filesystem::path& path) : name_(path.string()) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw std::runtime_error(name_ + ": cannot open (" + std::strerror(errno) + ")");
    struct stat st {};
    if (::fstat(fd_, &st) != 0) {
      ::close(fd_);
      throw std::runtime_error(name_ + ": cannot stat (" + std::strerror(errno) + ")");
    }
    size_ = uint64_t(st.st_size);
    ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);  // this descriptor reads front to back
  }
  ~File() { ::close(fd_); }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  uint64_t size() const { return size_; }
  const std::string& name() const { return name_; }
  // Exactly n bytes at offset (short reads continued), else std::runtime_error.
  void read(void* out, uint64_t n, uint64_t offset) const {
    auto* p = static_cast<char*>(out);
    while (n > 0) {
      const ssize_t got = ::pread(fd_, p, std::size_t(std::min<uint64_t>(n, uint64_t(1) << 30)), off_t(offset));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0)
        throw std::runtime_error(name_ + ": read failed at byte offset " + std::to_string(offset) + " (" +
                                 (got < 0 ? std::strerror(errno) : "unexpected end of file") + ")");
      p += got;
      n -= uint64_t(got);
      offset += uint64_t(got);
    }
  }

 private:
  std::string name_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

WitnessHeader header_of(const File& f) {
  uint8_t head[kHeaderBytes];
  if (f.size() < kHeaderBytes) {
    // Too short for a header: the byte parser gives the exact message.
    std::vector<uint8_t> bytes(f.size());
    if (!bytes.empty()) f.read(bytes.data(), bytes.size(), 0);
    parse_witness(bytes, f.name());
  }
  f.read(head, kHeaderBytes, 0);
  Reader in(std::span<const uint8_t>(head, kHeaderBytes), f.name());
  WitnessHeader h = read_counts(in);
  h.file_bytes = f.size();
  return h;
}

// The scalar sections of a file (a, b, c, input, aux: consecutive from byte kHeaderBytes) read
// and converted to Montgomery form on every core. The region is cut into one contiguous stripe
// per thread; each thread opens the file itself (its own readahead state: interleaved offsets on
// one descriptor look random to the kernel and defeat readahead on a cold cache) and reads its
// stripe front to back in large blocks. The first non-canonical scalar is reported as
// parse_witness does.
struct Section {
  std::vector<Fr>* v;
  uint64_t n;
  const char* name;
};

void read_sections(const std::filesystem::path& path, const std::string& name, std::span<const Section> sections) {
  // Allocate the sections concurrently (each one's value-initialisation is a serial pass).
  tbb::parallel_for(std::size_t(0), sections.size(), [&](std::size_t k) { *sections[k].v = big_vector<Fr>(sections[k].n); });
  uint64_t total = 0;
  for (const Section& s : sections) total += s.n;
  if (total == 0) return;
  auto locate = [&](uint64_t g, std::size_t& k, uint64_t& i) {  // global scalar index -> (section, index)
    k = 0;
    while (g >= sections[k].n) g -= sections[k++].n;
    i = g;
  };
  constexpr uint64_t kBlock = uint64_t(1) << 15;  // scalars per read: 1 MiB
  const uint64_t stripes = std::min<uint64_t>(4 * uint64_t(std::max(1, tbb::this_task_arena::max_concurrency())),
                                              (total + kBlock - 1) / kBlock);
  std::atomic<uint64_t> first_bad{total};
  tbb::parallel_for(
      tbb::blocked_range<uint64_t>(0, stripes, 1),
      [&](const tbb::blocked_range<uint64_t>& r) {
        for (uint64_t stripe = r.begin(); stripe != r.end(); ++stripe) {
          const File f(path);
          std::vector<uint8_t> buf(kBlock * kScalarBytes);
          const uint64_t lo = total * stripe / stripes, hi = total * (stripe + 1) / stripes;
          for (uint64_t g = lo; g < hi; g += kBlock) {
            const uint64_t n = std::min(kBlock, hi - g);
            f.read(buf.data(), n * kScalarBytes, kHeaderBytes + g * kScalarBytes);
            std::size_t k;
            uint64_t i;
            locate(g, k, i);
            for (uint64_t j = 0; j < n;) {  // runs of the block that fall in one section
              while (i == sections[k].n) {
                ++k;
                i = 0;
              }
              const uint64_t run = std::min(n - j, sections[k].n - i);
              Fr* out = sections[k].v->data() + i;
              const uint8_t* in = buf.data() + j * kScalarBytes;
              for (uint64_t t = 0; t < run; ++t) {
                if (out[t].from_bytes_le(in + t * kScalarBytes)) continue;
                uint64_t seen = first_bad.load();
                while (g + j + t < seen && !first_bad.compare_exchange_weak(seen, g + j + t)) {
                }
                return;
              }
              j += run;
              i += run;
            }
          }
        }
      },
      tbb::simple_partitioner());
  if (const uint64_t bad = first_bad.load(); bad < total) {
    std::size_t k;
    uint64_t i;
    locate(bad, k, i);
    throw std::runtime_error(name + ": " + sections[k].name + "[" + std::to_string(i) +
                             "] is not a canonical scalar (>= r) (byte offset " +
                             std::to_string(kHeaderBytes + bad * kScalarBytes) + ")");
  }
}

}  // namespace

namespace {

// The header of an open file, with its size checked against the counts: a truncated file, or one
// with trailing bytes, goes through the byte parser, which names the exact place (bounded by the
// file's own size: such a file is short or carries more than its counts say).
WitnessHeader checked_header(const File& f) {
  const WitnessHeader h = header_of(f);
  const uint64_t want = witness_file_bytes(h.rows, h.inputs, h.aux);
  if (want == 0 || want != f.size()) {
    if (f.size() <= (uint64_t(1) << 32)) {
      std::vector<uint8_t> bytes(f.size());
      f.read(bytes.data(), bytes.size(), 0);
      parse_witness(bytes, f.name());
    }
    throw std::runtime_error(f.name() + ": the header's counts (" + std::to_string(h.rows) + " rows, " +
                             std::to_string(h.inputs) + " inputs, " + std::to_string(h.aux) + " aux) need " +
                             (want ? std::to_string(want) : std::string("more than 2^64")) + " bytes, the file has " +
                             std::to_string(f.size()));
  }
  return h;
}

// The density bitmaps at the end of a file whose size checked_header has checked.
Densities densities_of(const File& f, const WitnessHeader& h) {
  const uint64_t at = kHeaderBytes + (3 * h.rows + h.inputs + h.aux) * kScalarBytes;
  const uint64_t tail = f.size() - at;
  std::vector<uint8_t> rest(tail);
  if (tail) f.read(rest.data(), tail, at);
  uint64_t pos = 0;
  auto words = [&](uint64_t n) {
    std::vector<uint64_t> v(n);
    for (auto& x : v) {
      x = 0;
      for (int i = 7; i >= 0; --i) x = (x << 8) | rest[pos + uint64_t(i)];
      pos += 8;
    }
    return v;
  };
  Densities d;
  d.a_aux = words(words_for(h.aux));
  d.b_input = words(words_for(h.inputs));
  d.b_aux = words(words_for(h.aux));
  const Reader at_end(std::span<const uint8_t>(rest.data(), rest.size()), f.name());
  check_padding(at_end, d.a_aux, h.aux, "a_aux density");
  check_padding(at_end, d.b_input, h.inputs, "b_input density");
  check_padding(at_end, d.b_aux, h.aux, "b_aux density");
  return d;
}

}  // namespace

WitnessHeader read_witness_header(const std::filesystem::path& path) {
  const File f(path);
  return checked_header(f);
}

void prefetch_witness(const std::filesystem::path& path) {
  // Plain sequential reads into a scratch buffer, as `cat` does: the kernel's readahead follows
  // one stream at the storage's speed on any file system (a WILLNEED hint is not honoured
  // everywhere). The bytes themselves are dropped; the page cache keeps them.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  std::vector<char> scratch(std::size_t(4) << 20);
  for (;;) {
    const ssize_t got = ::read(fd, scratch.data(), scratch.size());
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
  }
  ::close(fd);
}

Densities read_witness_densities(const std::filesystem::path& path) {
  const File f(path);
  return densities_of(f, checked_header(f));
}

Witness read_witness(const std::filesystem::path& path) {
  const File f(path);
  const WitnessHeader h = checked_header(f);
  Witness w;
  std::vector<Fr> a, b, c, input, aux;
  const Section sections[] = {{&a, h.rows, "a"}, {&b, h.rows, "b"}, {&c, h.rows, "c"},
                              {&input, h.inputs, "input"}, {&aux, h.aux, "aux"}};
  read_sections(path, f.name(), sections);
  w.a = std::move(a);
  w.b = std::move(b);
  w.c = std::move(c);
  w.input = std::move(input);
  w.aux = std::move(aux);
  w.densities = densities_of(f, h);
  if (!w.input[0].is_one())
    throw std::runtime_error(f.name() + ": input[0] must be 1 (byte offset " +
                             std::to_string(f.size()) + ")");  // where the byte parser reports it
  return w;
}

void write_public_json(const std::filesystem::path& path, std::span<const Fr> inputs_without_one) {
  nlohmann::json j = nlohmann::json::array();
  for (const Fr& x : inputs_without_one) j.push_back(to_decimal(x));
  std::ofstream f(path);
  f << j.dump(1) << "\n";
  if (!f) throw std::runtime_error(path.string() + ": write failed");
}

template <class F>
std::vector<F> read_public_json(const std::filesystem::path& path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error(path.string() + ": cannot open");
  nlohmann::json j;
  try {
    f >> j;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path.string() + ": not valid JSON: " + e.what());
  }
  if (!j.is_array()) throw std::runtime_error(path.string() + ": expected a JSON array of decimal strings");
  std::vector<F> out;
  for (std::size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_string()) throw std::runtime_error(path.string() + ": element " + std::to_string(i) + " is not a string");
    const auto x = from_decimal<F>(j[i].get<std::string>());
    if (!x)
      throw std::runtime_error(path.string() + ": element " + std::to_string(i) +
                               " is not a decimal scalar below the group order");
    out.push_back(*x);
  }
  return out;
}
template std::vector<Fr> read_public_json<Fr>(const std::filesystem::path&);
template std::vector<bn254::Fr> read_public_json<bn254::Fr>(const std::filesystem::path&);

}  // namespace pp
