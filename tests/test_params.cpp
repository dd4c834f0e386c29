// SPDX-License-Identifier: Apache-2.0 OR MIT
// Tests of the bellperson .params / VK file readers and writers and of the Groth16 proof bytes.
#include <gtest/gtest.h>

#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "proofpipe/ec/bls12_381.hpp"
#include "proofpipe/groth16/keys.hpp"
#include "proofpipe/io/binfile.hpp"
#include "proofpipe/io/key_cache.hpp"
#include "proofpipe/io/params.hpp"
#include "proofpipe/io/serialize.hpp"

using namespace pp;
namespace fs = std::filesystem;

namespace {

using Bytes = std::vector<uint8_t>;

// ------------------------------------------------------------------------------------------------
// Points and keys

Fr random_scalar(std::mt19937_64& rng) {
  for (;;) {
    uint64_t v[4];
    for (auto& w : v) w = rng();
    v[3] &= 0x7fffffffffffffffULL;
    Fr k;
    if (Fr::from_canonical(k, v) && !k.is_zero()) return k;
  }
}

G1Affine random_g1(std::mt19937_64& rng) { return scalar_mul(g1_generator(), random_scalar(rng)).to_affine(); }
G2Affine random_g2(std::mt19937_64& rng) { return scalar_mul(g2_generator(), random_scalar(rng)).to_affine(); }

// n points k·G, (k+d)·G, ...: random multiples at one addition each, for the long vectors.
std::vector<G1Affine> g1_progression(std::mt19937_64& rng, std::size_t n) {
  G1Jacobian p = scalar_mul(g1_generator(), random_scalar(rng));
  const G1Jacobian d = scalar_mul(g1_generator(), random_scalar(rng));
  std::vector<G1Affine> out;
  for (std::size_t i = 0; i < n; ++i, p += d) out.push_back(p.to_affine());
  return out;
}

struct Shape {
  std::size_t ic, h, l, a, b_g1, b_g2;
};

// Default shape: a few dozen points per vector, b_g1 empty (bellman drops all-zero columns, so
// empty query vectors do occur).
constexpr Shape kShape{3, 31, 24, 20, 0, 12};

ProvingKey random_key(uint64_t seed, const Shape& s = kShape) {
  std::mt19937_64 rng(seed);
  ProvingKey pk;
  pk.vk.alpha_g1 = random_g1(rng);
  pk.vk.beta_g1 = random_g1(rng);
  pk.vk.beta_g2 = random_g2(rng);
  pk.vk.gamma_g2 = random_g2(rng);
  pk.vk.delta_g1 = random_g1(rng);
  pk.vk.delta_g2 = random_g2(rng);
  for (std::size_t i = 0; i < s.ic; ++i) pk.vk.ic.push_back(random_g1(rng));
  auto g1s = [&](std::size_t n) {
    std::vector<G1Affine> v;
    for (std::size_t i = 0; i < n; ++i) v.push_back(random_g1(rng));
    return v;
  };
  pk.h = g1s(s.h);
  pk.l = g1s(s.l);
  pk.a = g1s(s.a);
  pk.b_g1 = g1s(s.b_g1);
  std::vector<G2Affine> b_g2;
  for (std::size_t i = 0; i < s.b_g2; ++i) b_g2.push_back(random_g2(rng));
  pk.b_g2 = std::move(b_g2);
  return pk;
}

const Fp kB1 = Fp::from_u64(4);
const Fp2 kB2{Fp::from_u64(4), Fp::from_u64(4)};

// On-curve points outside the order-r subgroup (almost every curve point is: the cofactors are
// large), found by walking x = 1, 2, 3, ...
G1Affine g1_non_subgroup_point() {
  for (uint64_t i = 1;; ++i) {
    G1Affine p;
    p.x = Fp::from_u64(i);
    if (sqrt(p.y, p.x.sqr() * p.x + kB1) && !is_in_subgroup(p)) return p;
  }
}
G2Affine g2_non_subgroup_point() {
  for (uint64_t i = 1;; ++i) {
    G2Affine p;
    p.x = Fp2{Fp::from_u64(i), Fp::zero()};
    if (sqrt(p.y, p.x.sqr() * p.x + kB2) && !is_in_subgroup(p)) return p;
  }
}

void expect_same_vk(const VerifyingKey& x, const VerifyingKey& y) {
  EXPECT_TRUE(x.alpha_g1 == y.alpha_g1) << "alpha_g1";
  EXPECT_TRUE(x.beta_g1 == y.beta_g1) << "beta_g1";
  EXPECT_TRUE(x.beta_g2 == y.beta_g2) << "beta_g2";
  EXPECT_TRUE(x.gamma_g2 == y.gamma_g2) << "gamma_g2";
  EXPECT_TRUE(x.delta_g1 == y.delta_g1) << "delta_g1";
  EXPECT_TRUE(x.delta_g2 == y.delta_g2) << "delta_g2";
  ASSERT_EQ(x.ic.size(), y.ic.size());
  for (std::size_t i = 0; i < x.ic.size(); ++i) EXPECT_TRUE(x.ic[i] == y.ic[i]) << "ic[" << i << "]";
}

template <class P>
void expect_same_points(std::span<const P> x, std::span<const P> y, const char* name) {
  ASSERT_EQ(x.size(), y.size()) << name;
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_TRUE(x[i] == y[i]) << name << "[" << i << "]";
}

void expect_same_key(const ProvingKey& x, const ProvingKey& y) {
  expect_same_vk(x.vk, y.vk);
  expect_same_points(x.h.span(), y.h.span(), "h");
  expect_same_points(x.l.span(), y.l.span(), "l");
  expect_same_points(x.a.span(), y.a.span(), "a");
  expect_same_points(x.b_g1.span(), y.b_g1.span(), "b_g1");
  expect_same_points(x.b_g2.span(), y.b_g2.span(), "b_g2");
}

// ------------------------------------------------------------------------------------------------
// The layout as computed here from bellperson's format, independently of src/io/params.cpp.

struct Region {
  uint64_t begin, end;
  std::string truncation_label;  // what a file cut inside this region must be blamed on
};

struct Offsets {
  uint64_t vk_point[6];
  uint64_t ic_count, ic_data;
  uint64_t count[5], data[5];  // h, l, a, b_g1, b_g2
  uint64_t end;
  std::vector<Region> regions;
};

Offsets offsets_of(const ProvingKey& pk) {
  Offsets o{};
  const char* vk_names[6] = {"vk.alpha_g1", "vk.beta_g1", "vk.beta_g2", "vk.gamma_g2", "vk.delta_g1", "vk.delta_g2"};
  const uint64_t vk_sizes[6] = {96, 96, 192, 192, 96, 192};
  uint64_t at = 0;
  for (int i = 0; i < 6; ++i) {
    o.vk_point[i] = at;
    o.regions.push_back({at, at + vk_sizes[i], std::string("truncated in ") + vk_names[i] + ":"});
    at += vk_sizes[i];
  }
  auto vec = [&](uint64_t& count_at, uint64_t& data_at, std::size_t n, uint64_t size, const std::string& name) {
    const std::string label = "truncated in vector " + name + ":";
    count_at = at;
    o.regions.push_back({at, at + 4, label});
    at += 4;
    data_at = at;
    for (std::size_t i = 0; i < n; ++i, at += size) o.regions.push_back({at, at + size, label});
  };
  vec(o.ic_count, o.ic_data, pk.vk.ic.size(), 96, "vk.ic");
  vec(o.count[0], o.data[0], pk.h.size(), 96, "h");
  vec(o.count[1], o.data[1], pk.l.size(), 96, "l");
  vec(o.count[2], o.data[2], pk.a.size(), 96, "a");
  vec(o.count[3], o.data[3], pk.b_g1.size(), 96, "b_g1");
  vec(o.count[4], o.data[4], pk.b_g2.size(), 192, "b_g2");
  o.end = at;
  return o;
}

std::array<uint8_t, 48> modulus_be() {
  std::array<uint8_t, 48> out{};
  for (int i = 0; i < 6; ++i)
    for (int k = 0; k < 8; ++k) out[8 * (5 - i) + k] = uint8_t(FpParams::modulus.v[i] >> (56 - 8 * k));
  return out;
}

uint32_t be32(const Bytes& b, uint64_t at) {
  return (uint32_t(b[at]) << 24) | (uint32_t(b[at + 1]) << 16) | (uint32_t(b[at + 2]) << 8) | b[at + 3];
}

// ------------------------------------------------------------------------------------------------
// Files and errors

class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() /
           ("proofpipe_test_params_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(dir_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path operator/(const std::string& name) const { return dir_ / name; }

 private:
  fs::path dir_;
};

Bytes read_file_prefix(const fs::path& p, std::size_t n) {
  std::ifstream in(p, std::ios::binary);
  Bytes b(n);
  in.read(reinterpret_cast<char*>(b.data()), std::streamsize(n));
  b.resize(std::size_t(in.gcount()));
  return b;
}

Bytes read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_file(const fs::path& p, const Bytes& b) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
  ASSERT_TRUE(out.good());
}

// The ParamsError message of f(), or a test failure when f() does not throw one (any other
// exception type escapes and fails the test too).
template <class F>
std::string params_error(F&& f) {
  try {
    f();
  } catch (const ParamsError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a ParamsError";
  return {};
}

std::string parse_error(const Bytes& b, SubgroupCheck check = SubgroupCheck::no) {
  return params_error([&] { parse_params(b, ParamsReadOptions{check}, "mem.params"); });
}

#define EXPECT_HAS(haystack, needle) EXPECT_NE(std::string(haystack).find(needle), std::string::npos) \
    << "message: " << (haystack) << "\nmissing: " << (needle)

std::string bad_point_text(const std::string& vec, std::size_t index, uint64_t offset) {
  return "bad point in vector " + vec + " at index " + std::to_string(index) + " (byte offset " +
         std::to_string(offset) + "): ";
}

}  // namespace

// ------------------------------------------------------------------------------------------------
// Round trips and layout

TEST(ParamsRoundTrip, WriteReadIsFieldByFieldIdentical) {
  TempDir dir;
  const ProvingKey pk = random_key(1);
  write_params(dir / "k.params", pk);
  EXPECT_EQ(fs::file_size(dir / "k.params"), params_encoded_size(pk));
  for (auto check : {SubgroupCheck::no, SubgroupCheck::yes}) {
    SCOPED_TRACE(check == SubgroupCheck::yes ? "subgroup yes" : "subgroup no");
    expect_same_key(read_params(dir / "k.params", ParamsReadOptions{check}), pk);
  }
}

TEST(ParamsRoundTrip, RewriteIsByteIdentical) {
  TempDir dir;
  const ProvingKey pk = random_key(2);
  write_params(dir / "a.params", pk);
  write_params(dir / "b.params", read_params(dir / "a.params"));
  const Bytes a = read_file(dir / "a.params");
  EXPECT_EQ(a, read_file(dir / "b.params"));
  EXPECT_EQ(a, encode_params(pk));
}

TEST(ParamsRoundTrip, AllVectorsEmpty) {
  TempDir dir;
  const ProvingKey pk = random_key(3, Shape{0, 0, 0, 0, 0, 0});
  write_params(dir / "e.params", pk);
  EXPECT_EQ(fs::file_size(dir / "e.params"), 864u + 4u + 5u * 4u);
  expect_same_key(read_params(dir / "e.params"), pk);
}

TEST(ParamsRoundTrip, VkPointsAtInfinityAreAccepted) {
  // bellperson's VerifyingKey::read decodes the six VK points without an infinity check.
  ProvingKey pk = random_key(4, Shape{1, 1, 1, 1, 1, 1});
  pk.vk.alpha_g1 = G1Affine::infinity();
  pk.vk.delta_g2 = G2Affine::infinity();
  expect_same_key(parse_params(encode_params(pk), {}, "mem"), pk);
}

TEST(ParamsLayout, FieldsSitWhereBellpersonPutsThem) {
  const ProvingKey pk = random_key(5);
  const Bytes b = encode_params(pk);
  const Offsets o = offsets_of(pk);
  ASSERT_EQ(b.size(), o.end);

  auto g1_at = [&](uint64_t at, const G1Affine& p) {
    uint8_t e[96];
    encode_g1_uncompressed(e, p);
    return std::memcmp(b.data() + at, e, 96) == 0;
  };
  auto g2_at = [&](uint64_t at, const G2Affine& p) {
    uint8_t e[192];
    encode_g2_uncompressed(e, p);
    return std::memcmp(b.data() + at, e, 192) == 0;
  };
  EXPECT_TRUE(g1_at(o.vk_point[0], pk.vk.alpha_g1));
  EXPECT_TRUE(g1_at(o.vk_point[1], pk.vk.beta_g1));
  EXPECT_TRUE(g2_at(o.vk_point[2], pk.vk.beta_g2));
  EXPECT_TRUE(g2_at(o.vk_point[3], pk.vk.gamma_g2));
  EXPECT_TRUE(g1_at(o.vk_point[4], pk.vk.delta_g1));
  EXPECT_TRUE(g2_at(o.vk_point[5], pk.vk.delta_g2));
  EXPECT_EQ(o.ic_count, 864u);
  EXPECT_EQ(be32(b, o.ic_count), pk.vk.ic.size());
  for (std::size_t i = 0; i < pk.vk.ic.size(); ++i) EXPECT_TRUE(g1_at(o.ic_data + 96 * i, pk.vk.ic[i]));
  const HostArray<G1Affine>* g1v[4] = {&pk.h, &pk.l, &pk.a, &pk.b_g1};
  for (int v = 0; v < 4; ++v) {
    EXPECT_EQ(be32(b, o.count[v]), g1v[v]->size());
    for (std::size_t i = 0; i < g1v[v]->size(); ++i) EXPECT_TRUE(g1_at(o.data[v] + 96 * i, (*g1v[v])[i]));
  }
  EXPECT_EQ(be32(b, o.count[4]), pk.b_g2.size());
  for (std::size_t i = 0; i < pk.b_g2.size(); ++i) EXPECT_TRUE(g2_at(o.data[4] + 192 * i, pk.b_g2[i]));
  // Uncompressed encodings: no compression flag anywhere.
  EXPECT_EQ(b[0] & 0x80, 0);
}

TEST(ParamsLayout, MatchesBellpersonSillyCircuitSize) {
  // bellperson's proof.rs serialization test: MySillyCircuit (one public input, two aux, one
  // constraint) gives parameters whose write() output is 2136 bytes. Its shape: ic 2 (one + c),
  // h 3 (domain 4 - 1), l 2, a 3 (two inputs + a), b_g1 1, b_g2 1.
  const ProvingKey pk = random_key(6, Shape{2, 3, 2, 3, 1, 1});
  EXPECT_EQ(encode_params(pk).size(), 2136u);
  EXPECT_EQ(params_encoded_size(pk), 2136u);
}

// ------------------------------------------------------------------------------------------------
// Header

TEST(ParamsHeader, AgreesWithFullRead) {
  TempDir dir;
  const ProvingKey pk = random_key(7);
  write_params(dir / "k.params", pk);
  const ParamsHeader hdr = read_params_header(dir / "k.params");
  expect_same_vk(hdr.vk, pk.vk);
  EXPECT_EQ(hdr.h, pk.h.size());
  EXPECT_EQ(hdr.l, pk.l.size());
  EXPECT_EQ(hdr.a, pk.a.size());
  EXPECT_EQ(hdr.b_g1, pk.b_g1.size());
  EXPECT_EQ(hdr.b_g2, pk.b_g2.size());
  EXPECT_EQ(hdr.file_size, fs::file_size(dir / "k.params"));

  const ParamsHeader mem = parse_params_header(read_file(dir / "k.params"), "mem");
  expect_same_vk(mem.vk, pk.vk);
  EXPECT_EQ(mem.h, hdr.h);
  EXPECT_EQ(mem.b_g2, hdr.b_g2);
  EXPECT_EQ(mem.file_size, hdr.file_size);
}

TEST(ParamsHeader, ChecksFileSizeWithoutReadingPoints) {
  TempDir dir;
  const ProvingKey pk = random_key(8);
  Bytes b = encode_params(pk);
  const Offsets o = offsets_of(pk);
  // Garbage inside h is not the header reader's business (it never decodes h) ...
  b[o.data[0] + 50] ^= 0xff;
  write_file(dir / "g.params", b);
  EXPECT_EQ(read_params_header(dir / "g.params").h, pk.h.size());
  // ... but the size must match the counts exactly.
  Bytes cut(b.begin(), b.end() - 1);
  write_file(dir / "t.params", cut);
  const std::string e1 = params_error([&] { read_params_header(dir / "t.params"); });
  EXPECT_HAS(e1, (dir / "t.params").string());
  EXPECT_HAS(e1, "truncated in vector b_g2:");
  b.push_back(0);
  write_file(dir / "x.params", b);
  EXPECT_HAS(params_error([&] { read_params_header(dir / "x.params"); }), "trailing bytes");
  // A bad VK point is found.
  Bytes v = encode_params(pk);
  v[o.vk_point[1] + 95] ^= 1;
  write_file(dir / "v.params", v);
  EXPECT_HAS(params_error([&] { read_params_header(dir / "v.params"); }), "bad point vk.beta_g1 (byte offset 96)");
}

// ------------------------------------------------------------------------------------------------
// Truncation and trailing bytes

TEST(ParamsTruncation, EveryBoundaryAndMidPointNamesTheVector) {
  const ProvingKey pk = random_key(9);
  const Bytes full = encode_params(pk);
  const Offsets o = offsets_of(pk);
  ASSERT_EQ(full.size(), o.end);

  std::set<uint64_t> cuts;
  for (const Region& r : o.regions) {
    for (int64_t d = -1; d <= 1; ++d)
      if (int64_t(r.begin) + d >= 0) cuts.insert(uint64_t(int64_t(r.begin) + d));
    cuts.insert((r.begin + r.end) / 2);
  }
  cuts.insert(o.end - 1);
  std::size_t checked = 0;
  for (uint64_t cut : cuts) {
    if (cut >= o.end) continue;
    // The blame goes to the region holding the first missing byte.
    const Region* blame = nullptr;
    for (const Region& r : o.regions)
      if (r.begin <= cut && cut < r.end) blame = &r;
    ASSERT_NE(blame, nullptr) << cut;
    const Bytes b(full.begin(), full.begin() + std::ptrdiff_t(cut));
    const std::string e = parse_error(b);
    EXPECT_HAS(e, "mem.params: ");
    EXPECT_HAS(e, blame->truncation_label) << " (cut at " << cut << ")";
    EXPECT_HAS(e, "actual " + std::to_string(cut) + ")");
    ++checked;
  }
  EXPECT_GT(checked, 3 * (6 + 6 + 3 + 31 + 24 + 20 + 12));
}

TEST(ParamsTruncation, CountCutOffMidway) {
  const ProvingKey pk = random_key(10);
  const Offsets o = offsets_of(pk);
  const Bytes full = encode_params(pk);
  const Bytes b(full.begin(), full.begin() + std::ptrdiff_t(o.count[1] + 2));
  const std::string e = parse_error(b);
  EXPECT_HAS(e, "truncated in vector l: its u32 count needs 4 bytes at byte offset " + std::to_string(o.count[1]));
  EXPECT_HAS(e, "only 2 remain");
}

TEST(ParamsTruncation, ForgedHugeCountIsASizeErrorNotAnAllocation) {
  const ProvingKey pk = random_key(11);
  const Offsets o = offsets_of(pk);
  Bytes b = encode_params(pk);
  b[o.count[2]] = b[o.count[2] + 1] = b[o.count[2] + 2] = b[o.count[2] + 3] = 0xff;
  const std::string e = parse_error(b);
  EXPECT_HAS(e, "truncated in vector a: 4294967295 points of 96 bytes needs 412316860320 bytes");
  EXPECT_HAS(e, "expected file size at least " + std::to_string(o.data[2] + 412316860320ull));
}

TEST(ParamsTruncation, FileReaderNamesTheFile) {
  TempDir dir;
  const ProvingKey pk = random_key(12);
  const Offsets o = offsets_of(pk);
  const Bytes full = encode_params(pk);
  for (uint64_t cut : {uint64_t(0), uint64_t(100), o.data[1] + 10, o.count[4], o.end - 1}) {
    const fs::path p = dir / ("cut" + std::to_string(cut) + ".params");
    write_file(p, Bytes(full.begin(), full.begin() + std::ptrdiff_t(cut)));
    const std::string e = params_error([&] { read_params(p); });
    EXPECT_HAS(e, p.string() + ": truncated in ");
  }
  EXPECT_HAS(params_error([&] { read_params(dir / "cut0.params"); }), "truncated in vk.alpha_g1:");
  EXPECT_HAS(params_error([&] { read_params(dir / ("cut" + std::to_string(o.data[1] + 10) + ".params")); }),
             "truncated in vector l:");
}

TEST(ParamsTrailing, ExtraBytesRejected) {
  TempDir dir;
  const ProvingKey pk = random_key(13);
  const Bytes full = encode_params(pk);
  for (std::size_t extra : {1u, 4u, 96u, 1000u}) {
    Bytes b = full;
    b.resize(b.size() + extra, 0);
    const std::string e = parse_error(b);
    EXPECT_HAS(e, std::to_string(extra) + " trailing bytes after vector b_g2 at byte offset " +
                      std::to_string(full.size()));
    EXPECT_HAS(e, "(expected file size " + std::to_string(full.size()) + ", actual " +
                      std::to_string(full.size() + extra) + ")");
  }
  Bytes b = full;
  b.push_back(0x42);
  write_file(dir / "t.params", b);
  EXPECT_HAS(params_error([&] { read_params(dir / "t.params"); }), (dir / "t.params").string() + ": 1 trailing bytes");
}

// ------------------------------------------------------------------------------------------------
// Corrupted points

TEST(ParamsCorruption, FlippedCoordinateByte) {
  const ProvingKey pk = random_key(14);
  const Offsets o = offsets_of(pk);
  {
    Bytes b = encode_params(pk);
    const uint64_t at = o.data[1] + 96 * 5;
    b[at + 47] ^= 0x01;  // last byte of l[5].x: still < p, now off the curve
    EXPECT_HAS(parse_error(b), bad_point_text("l", 5, at) + "point not on curve");
  }
  {
    Bytes b = encode_params(pk);
    const uint64_t at = o.data[4] + 192 * 11;
    b[at + 150] ^= 0x80;  // inside b_g2[11].y.c0
    EXPECT_HAS(parse_error(b), bad_point_text("b_g2", 11, at) + "point not on curve");
  }
}

TEST(ParamsCorruption, CoordinateNotBelowModulus) {
  const ProvingKey pk = random_key(15);
  const Offsets o = offsets_of(pk);
  const auto p = modulus_be();
  {
    Bytes b = encode_params(pk);
    const uint64_t at = o.data[0] + 96 * 7;
    std::memcpy(b.data() + at + 48, p.data(), 48);  // h[7].y = p
    EXPECT_HAS(parse_error(b), bad_point_text("h", 7, at) + "coordinate not canonical (>= p)");
  }
  {
    Bytes b = encode_params(pk);
    const uint64_t at = o.data[4] + 192 * 0;
    std::memcpy(b.data() + at + 48, p.data(), 48);  // b_g2[0].x.c0 = p
    EXPECT_HAS(parse_error(b), bad_point_text("b_g2", 0, at) + "coordinate not canonical (>= p)");
  }
  {
    Bytes b = encode_params(pk);
    const uint64_t at = o.ic_data + 96 * 2;
    std::memcpy(b.data() + at, p.data(), 48);  // ic[2].x = p
    EXPECT_HAS(parse_error(b), bad_point_text("vk.ic", 2, at) + "coordinate not canonical (>= p)");
  }
}

TEST(ParamsCorruption, PointNotOnCurve) {
  const ProvingKey pk = random_key(16);
  const Offsets o = offsets_of(pk);
  Bytes b = encode_params(pk);
  G1Affine q = pk.a[13];
  q.y = q.y + Fp::one();
  const uint64_t at = o.data[2] + 96 * 13;
  encode_g1_uncompressed(b.data() + at, q);
  EXPECT_HAS(parse_error(b), bad_point_text("a", 13, at) + "point not on curve");

  // A VK point, named by its field.
  Bytes v = encode_params(pk);
  G2Affine d = pk.vk.delta_g2;
  d.y = d.y + Fp2::one();
  encode_g2_uncompressed(v.data() + o.vk_point[5], d);
  EXPECT_HAS(parse_error(v), "bad point vk.delta_g2 (byte offset " + std::to_string(o.vk_point[5]) +
                                 "): point not on curve");
}

TEST(ParamsCorruption, FlagBitsRejected) {
  const ProvingKey pk = random_key(17);
  const Offsets o = offsets_of(pk);
  Bytes b = encode_params(pk);
  const uint64_t at = o.data[1] + 96 * 3;
  b[at] |= 0x80;  // a compressed flag on a 96-byte G1 slot
  EXPECT_HAS(parse_error(b), bad_point_text("l", 3, at) + "bad flags");
}

TEST(ParamsCorruption, OffSubgroupPointOnlyRejectedWithSubgroupCheck) {
  ProvingKey pk = random_key(18);
  const Offsets o = offsets_of(pk);
  const G2Affine bad2 = g2_non_subgroup_point();
  const G1Affine bad1 = g1_non_subgroup_point();
  pk.b_g2.at_mut(4) = bad2;
  pk.l.at_mut(9) = bad1;
  const Bytes b = encode_params(pk);
  // Without the check the points load as they are (on the curve).
  expect_same_key(parse_params(b, ParamsReadOptions{SubgroupCheck::no}, "mem"), pk);
  // With it, the first bad point in file order is l[9] (l precedes b_g2).
  EXPECT_HAS(parse_error(b, SubgroupCheck::yes),
             bad_point_text("l", 9, o.data[1] + 96 * 9) + "point not in prime-order subgroup");
  pk.l.at_mut(9) = random_key(19, Shape{0, 0, 1, 0, 0, 0}).l[0];
  EXPECT_HAS(parse_error(encode_params(pk), SubgroupCheck::yes),
             bad_point_text("b_g2", 4, o.data[4] + 192 * 4) + "point not in prime-order subgroup");
}

TEST(ParamsCorruption, VkPointsAlwaysSubgroupChecked) {
  ProvingKey pk = random_key(20);
  const Offsets o = offsets_of(pk);
  {
    ProvingKey k = pk;
    k.vk.gamma_g2 = g2_non_subgroup_point();
    EXPECT_HAS(parse_error(encode_params(k), SubgroupCheck::no),
               "bad point vk.gamma_g2 (byte offset " + std::to_string(o.vk_point[3]) +
                   "): point not in prime-order subgroup");
  }
  {
    ProvingKey k = pk;
    k.vk.ic[1] = g1_non_subgroup_point();
    EXPECT_HAS(parse_error(encode_params(k), SubgroupCheck::no),
               bad_point_text("vk.ic", 1, o.ic_data + 96) + "point not in prime-order subgroup");
  }
}

TEST(ParamsCorruption, InfinityRejectedInIcAndQueryVectors) {
  const ProvingKey pk = random_key(21);
  const Offsets o = offsets_of(pk);
  const uint64_t g1_slots[] = {o.ic_data, o.data[0] + 96 * 30, o.data[1] + 96 * 2, o.data[2]};
  const char* names[] = {"vk.ic", "h", "l", "a"};
  const std::size_t idx[] = {0, 30, 2, 0};
  for (int k = 0; k < 4; ++k) {
    Bytes b = encode_params(pk);
    encode_g1_uncompressed(b.data() + g1_slots[k], G1Affine::infinity());
    EXPECT_HAS(parse_error(b), bad_point_text(names[k], idx[k], g1_slots[k]) + "point at infinity");
  }
  Bytes b = encode_params(pk);
  encode_g2_uncompressed(b.data() + o.data[4] + 192 * 6, G2Affine::infinity());
  EXPECT_HAS(parse_error(b), bad_point_text("b_g2", 6, o.data[4] + 192 * 6) + "point at infinity");
}

TEST(ParamsCorruption, FirstBadPointInFileOrderWhateverTheSchedule) {
  // Long enough for several parallel chunks in both grain sizes.
  std::mt19937_64 rng(22);
  ProvingKey pk = random_key(22, Shape{1, 40, 0, 1, 1, 1});
  pk.l = g1_progression(rng, 3500);
  const Offsets o = offsets_of(pk);
  Bytes b = encode_params(pk);
  for (std::size_t i : {3400u, 2100u, 1500u, 2900u}) b[o.data[1] + 96 * i + 47] ^= 0x01;
  for (int rep = 0; rep < 10; ++rep)
    EXPECT_HAS(parse_error(b), bad_point_text("l", 1500, o.data[1] + 96 * 1500) + "point not on curve");
  EXPECT_HAS(parse_error(b, SubgroupCheck::yes), bad_point_text("l", 1500, o.data[1] + 96 * 1500));
  // An earlier vector wins over a lower index in a later one.
  b[o.data[0] + 96 * 39 + 47] ^= 0x01;
  for (int rep = 0; rep < 5; ++rep) EXPECT_HAS(parse_error(b), bad_point_text("h", 39, o.data[0] + 96 * 39));
}

// ------------------------------------------------------------------------------------------------
// File-level errors

TEST(ParamsFileErrors, MissingFileDirectoryAndEmptyFile) {
  TempDir dir;
  const fs::path missing = dir / "nope.params";
  EXPECT_HAS(params_error([&] { read_params(missing); }), missing.string() + ": cannot open");
  EXPECT_HAS(params_error([&] { read_params_header(missing); }), missing.string() + ": cannot open");
  EXPECT_HAS(params_error([&] { read_vk(missing); }), missing.string() + ": cannot open");
  fs::create_directories(dir / "sub");
  EXPECT_HAS(params_error([&] { read_params(dir / "sub"); }), "not a regular file");
  write_file(dir / "empty.params", {});
  EXPECT_HAS(params_error([&] { read_params(dir / "empty.params"); }),
             (dir / "empty.params").string() + ": truncated in vk.alpha_g1: the point needs 96 bytes");
}

TEST(ParamsFileErrors, WriteToMissingDirectoryNamesTheFile) {
  TempDir dir;
  const fs::path p = dir / "no" / "such" / "dir.params";
  const ProvingKey pk = random_key(23, Shape{1, 1, 1, 1, 1, 1});
  EXPECT_HAS(params_error([&] { write_params(p, pk); }), p.string() + ": cannot open");
  EXPECT_HAS(params_error([&] { write_vk(p, pk.vk); }), p.string() + ": cannot open");
}

TEST(ParamsFileErrors, WriteToFullDeviceFails) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  const ProvingKey pk = random_key(24, Shape{1, 1, 1, 1, 1, 1});
  EXPECT_HAS(params_error([&] { write_params("/dev/full", pk); }), "/dev/full: write failed");
}

// ------------------------------------------------------------------------------------------------
// VK files

TEST(VkFile, RoundTripAndPrefixOfParams) {
  TempDir dir;
  const ProvingKey pk = random_key(25);
  write_vk(dir / "k.vk", pk.vk);
  const Bytes vk_bytes = read_file(dir / "k.vk");
  EXPECT_EQ(vk_bytes.size(), vk_encoded_size(pk.vk));
  EXPECT_EQ(vk_bytes.size(), 864u + 4u + 96u * pk.vk.ic.size());
  const Bytes params = encode_params(pk);
  EXPECT_TRUE(std::equal(vk_bytes.begin(), vk_bytes.end(), params.begin()));
  EXPECT_EQ(vk_bytes, encode_vk(pk.vk));
  expect_same_vk(read_vk(dir / "k.vk"), pk.vk);
  expect_same_vk(parse_vk(vk_bytes, "mem"), pk.vk);
}

TEST(VkFile, ParamsFileIsNotAVkFile) {
  TempDir dir;
  const ProvingKey pk = random_key(26);
  write_params(dir / "k.params", pk);
  const std::string e = params_error([&] { read_vk(dir / "k.params"); });
  EXPECT_HAS(e, "trailing bytes after vector vk.ic");
  EXPECT_HAS(e, "a .params file is not a VK file");
}

TEST(VkFile, TruncatedIcNamed) {
  const ProvingKey pk = random_key(27);
  const Bytes full = encode_vk(pk.vk);
  const Bytes b(full.begin(), full.end() - 10);
  EXPECT_HAS(params_error([&] { parse_vk(b, "mem.vk"); }), "mem.vk: truncated in vector vk.ic:");
}

// ------------------------------------------------------------------------------------------------
// Proof bytes

namespace {

Proof random_proof(uint64_t seed) {
  std::mt19937_64 rng(seed);
  return Proof{random_g1(rng), random_g2(rng), random_g1(rng)};
}

std::string proof_error(const std::array<uint8_t, Proof::kBytes>& b) {
  try {
    Proof::from_bytes(b);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected std::invalid_argument";
  return {};
}

}  // namespace

TEST(ProofBytes, RoundTripAndLayout) {
  for (uint64_t seed = 0; seed < 8; ++seed) {
    const Proof p = random_proof(100 + seed);
    const auto b = p.to_bytes();
    uint8_t a[48], bb[96], c[48];
    encode_g1_compressed(a, p.a);
    encode_g2_compressed(bb, p.b);
    encode_g1_compressed(c, p.c);
    EXPECT_EQ(std::memcmp(b.data(), a, 48), 0);
    EXPECT_EQ(std::memcmp(b.data() + 48, bb, 96), 0);
    EXPECT_EQ(std::memcmp(b.data() + 144, c, 48), 0);
    EXPECT_EQ(b[0] & 0x80, 0x80);
    EXPECT_EQ(b[48] & 0x80, 0x80);
    EXPECT_EQ(b[144] & 0x80, 0x80);
    const Proof q = Proof::from_bytes(b);
    EXPECT_TRUE(q.a == p.a && q.b == p.b && q.c == p.c);
  }
}

TEST(ProofBytes, RejectsBadBytesNamingTheElement) {
  const Proof p = random_proof(200);
  const auto good = p.to_bytes();
  {
    auto b = good;
    b[0] &= 0x7f;  // A loses its compressed flag
    const std::string e = proof_error(b);
    EXPECT_HAS(e, "proof.a: ");
    EXPECT_HAS(e, to_string(DecodeError::bad_flags));
  }
  {
    auto b = good;
    const auto m = modulus_be();
    std::memcpy(b.data() + 48 + 48, m.data(), 48);  // B.x.c0 = p
    const std::string e = proof_error(b);
    EXPECT_HAS(e, "proof.b: ");
    EXPECT_HAS(e, to_string(DecodeError::coordinate_not_canonical));
  }
  {
    auto b = good;
    encode_g1_compressed(b.data() + 144, g1_non_subgroup_point());
    const std::string e = proof_error(b);
    EXPECT_HAS(e, "proof.c: ");
    EXPECT_HAS(e, to_string(DecodeError::not_in_subgroup));
  }
  {
    auto b = good;
    encode_g2_compressed(b.data() + 48, G2Affine::infinity());
    EXPECT_HAS(proof_error(b), "proof.b: point at infinity");
  }
  // Any single flipped byte is rejected or (never, for these seeds) decodes to another point:
  // it must not decode to the same proof.
  for (std::size_t i = 0; i < Proof::kBytes; i += 7) {
    auto b = good;
    b[i] ^= 0x04;
    const char* part = i < 48 ? "proof.a: " : i < 144 ? "proof.b: " : "proof.c: ";
    try {
      const Proof q = Proof::from_bytes(b);
      EXPECT_FALSE(q.a == p.a && q.b == p.b && q.c == p.c) << i;
    } catch (const std::invalid_argument& e) {
      EXPECT_HAS(e.what(), part) << " byte " << i;
    }
  }
}

// ------------------------------------------------------------------------------------------------
// The key cache (io/key_cache.hpp)

namespace {

// Overwrites one byte of a file in place.
void poke(const fs::path& path, uint64_t offset, uint8_t value) {
  std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
  f.seekp(std::streamoff(offset));
  f.put(char(value));
}

uint64_t le64_at(const Bytes& b, std::size_t at) {
  uint64_t v = 0;
  std::memcpy(&v, b.data() + at, 8);
  return v;
}

}  // namespace

TEST(KeyCache, RoundTripMapsTheSamePoints) {
  TempDir dir;
  ProvingKey pk = random_key(31);
  pk.convention = kSnarkjsConvention;
  write_key_cache(dir / "k.ppk", pk);
  EXPECT_TRUE(is_key_cache(read_file(dir / "k.ppk")));
  const ProvingKey m = map_key_cache(dir / "k.ppk");
  EXPECT_TRUE(m.h.is_view() && m.l.is_view() && m.b_g2.is_view());
  EXPECT_TRUE(m.convention == kSnarkjsConvention);
  expect_same_key(m, pk);
  // read_params recognises a cache; the header peek gives the counts and the convention.
  expect_same_key(read_params(dir / "k.ppk"), pk);
  const ParamsHeader h = read_params_header(dir / "k.ppk");
  EXPECT_EQ(h.h, pk.h.size());
  EXPECT_EQ(h.b_g2, pk.b_g2.size());
  EXPECT_TRUE(h.convention == kSnarkjsConvention);
  EXPECT_TRUE(h.key_cache);
  // A .params file is not a cache.
  ProvingKey bellman = pk;
  bellman.convention = kBellmanConvention;
  write_params(dir / "k.params", bellman);
  EXPECT_FALSE(is_key_cache(read_file(dir / "k.params")));
  EXPECT_FALSE(read_params_header(dir / "k.params").key_cache);
  EXPECT_HAS(params_error([&] { map_key_cache(dir / "k.params"); }), "not a key cache");
}

TEST(KeyCache, ViewsOutliveTheKeyAndSurviveReleasedPages) {
  TempDir dir;
  const ProvingKey pk = random_key(32, Shape{2, 0, 3000, 0, 0, 5});
  write_key_cache(dir / "k.ppk", pk);
  HostArray<G1Affine> l;
  {
    const ProvingKey m = map_key_cache(dir / "k.ppk");
    l = m.l;  // shares the mapping
  }
  ASSERT_EQ(l.size(), pk.l.size());
  l.release_pages();  // back to the kernel; read again from the file
  EXPECT_TRUE(l == pk.l);
  l.release_pages(100, 2000);
  EXPECT_TRUE(l == pk.l);
  EXPECT_THROW(l.at_mut(0), std::logic_error);  // a view is read-only
}

// A borrowed array (a C API caller's witness) is a read-only view whose pages are the caller's:
// release_pages must leave them alone (MADV_DONTNEED on anonymous memory would zero them).
TEST(HostArrayBorrow, ViewsTheCallersMemoryAndNeverReleasesIt) {
  std::vector<uint64_t> caller(std::size_t(1) << 20);  // 8 MiB: whole pages inside
  for (std::size_t i = 0; i < caller.size(); ++i) caller[i] = i * 0x9e3779b97f4a7c15ULL + 1;
  const std::vector<uint64_t> expected = caller;
  HostArray<uint64_t> b = HostArray<uint64_t>::borrow(caller.data(), caller.size());
  EXPECT_TRUE(b.is_view());
  EXPECT_EQ(b.data(), caller.data());
  const HostArray<uint64_t> copy = b;  // copies the view, not the elements
  EXPECT_EQ(copy.data(), caller.data());
  b.release_pages();
  copy.release_pages(1000, 500000);
  EXPECT_TRUE(caller == expected);
  EXPECT_THROW(b.at_mut(0), std::logic_error);
  EXPECT_THROW(b.push_back(1), std::logic_error);
  HostArray<uint64_t> moved = std::move(b);
  EXPECT_EQ(moved.data(), caller.data());
  EXPECT_TRUE(moved.is_view());
  moved = std::vector<uint64_t>{1, 2, 3};  // owned again: writable
  moved.at_mut(0) = 7;
  EXPECT_FALSE(moved.is_view());
  EXPECT_EQ(moved[0], 7u);
  EXPECT_TRUE(caller == expected);
}

TEST(KeyCache, EmptyQueries) {
  TempDir dir;
  const ProvingKey pk = random_key(33, Shape{0, 0, 0, 0, 0, 0});
  write_key_cache(dir / "k.ppk", pk);
  expect_same_key(map_key_cache(dir / "k.ppk"), pk);
}

TEST(KeyCache, CorruptionIsNamed) {
  TempDir dir;
  const ProvingKey pk = random_key(34);
  write_key_cache(dir / "k.ppk", pk);
  const Bytes good = read_file(dir / "k.ppk");
  const uint64_t l_offset = le64_at(good, 80 + 16 * 1);  // section l's offset
  auto corrupt = [&](uint64_t at) {
    write_file_bytes(dir / "c.ppk", good);
    poke(dir / "c.ppk", at, uint8_t(good[at] ^ 0x01));
    return params_error([&] { map_key_cache(dir / "c.ppk"); });
  };
  const std::string points = corrupt(l_offset + 96 * 7 + 5);
  EXPECT_HAS(points, (dir / "c.ppk").string());
  EXPECT_HAS(points, "section l, block 0 (byte offsets " + std::to_string(l_offset) + "..");
  EXPECT_HAS(points, "checksum mismatch");
  EXPECT_HAS(corrupt(4096 + 10), "the VK's or the checksum table's checksum does not match");
  EXPECT_HAS(corrupt(20), "the header's checksum does not match");
  EXPECT_HAS(corrupt(0), "not a key cache");
  // Truncated and over-long files.
  write_file_bytes(dir / "t.ppk", Bytes(good.begin(), good.end() - 1));
  EXPECT_HAS(params_error([&] { map_key_cache(dir / "t.ppk"); }), "truncated or over-long");
  Bytes longer = good;
  longer.push_back(0);
  write_file_bytes(dir / "t.ppk", longer);
  EXPECT_HAS(params_error([&] { map_key_cache(dir / "t.ppk"); }), "truncated or over-long");
  write_file_bytes(dir / "t.ppk", Bytes(good.begin(), good.begin() + 100));
  EXPECT_HAS(params_error([&] { map_key_cache(dir / "t.ppk"); }), "shorter than its header");
}

TEST(KeyCache, TheLowestBadBlockOfALongSectionIsReported) {
  // h spans three 64 MiB checksum blocks; blocks 1 and 2 are corrupted, block 1 is named.
  TempDir dir;
  ProvingKey pk = random_key(35, Shape{1, 0, 2, 1, 1, 1});
  const std::size_t n = (std::size_t(130) << 20) / sizeof(G1Affine);
  pk.h = std::vector<G1Affine>(n, pk.l[0]);
  write_key_cache(dir / "k.ppk", pk);
  const uint64_t h_offset = le64_at(read_file_prefix(dir / "k.ppk", 4096), 80);
  constexpr uint64_t kBlock = uint64_t(64) << 20;
  poke(dir / "k.ppk", h_offset + 2 * kBlock + 1, 0x55);
  poke(dir / "k.ppk", h_offset + kBlock + 3, 0x55);
  EXPECT_HAS(params_error([&] { map_key_cache(dir / "k.ppk"); }),
             "section h, block 1 (byte offsets " + std::to_string(h_offset + kBlock) + ".." +
                 std::to_string(h_offset + 2 * kBlock) + ")");
}
