// SPDX-License-Identifier: Apache-2.0 OR MIT
// snarkjs/circom formats and conventions: fixtures written by snarkjs 0.7.6 / circom 2.2.3, malformed
// files, the H basis change and row renumbering, and keys converted both ways.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <algorithm>
#include <functional>
#include <random>
#include <string>

#include "proofpipe/groth16/convention.hpp"
#include "proofpipe/groth16/prover.hpp"
#include "proofpipe/groth16/synthetic.hpp"
#include "proofpipe/io/r1cs_file.hpp"
#include "proofpipe/io/snarkjs.hpp"
#include "proofpipe/io/witness.hpp"
#include "proofpipe/io/wtns.hpp"
#include "proofpipe/io/zkey.hpp"
#include "proofpipe/ntt/ntt.hpp"

namespace pp::test {
namespace {

const std::filesystem::path kData = PROOFPIPE_TEST_DATA;
constexpr uint64_t kSeed = 0x736e61726b6a73ULL;

std::vector<uint8_t> bytes_of(const char* name) { return read_file_bytes(kData / "snarkjs" / name); }
std::string text_of(const char* name) {
  const std::vector<uint8_t> b = bytes_of(name);
  return std::string(b.begin(), b.end());
}

// The message of the FormatError that `f` throws; fails the test when nothing is thrown.
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const FormatError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no FormatError";
  return "";
}

void put_u32(std::vector<uint8_t>& b, std::size_t at, uint32_t v) {
  for (int k = 0; k < 4; ++k) b[at + std::size_t(k)] = uint8_t(v >> (8 * k));
}

// Byte offset of the data of section `id` (the table walk, as a reader would do it).
std::size_t section_offset(const std::vector<uint8_t>& b, uint32_t id) {
  const BinFile f(b, "t", std::string(b.begin(), b.begin() + 4), 2);
  for (const BinSection& s : f.sections())
    if (s.id == id) return s.offset;
  ADD_FAILURE() << "no section " << id;
  return 0;
}

// ---- the multiplier fixture (c = a·b, a = 3, b = 11; one public output) ----

TEST(SnarkjsFixture, ReadsWhatSnarkjsAndCircomWrote) {
  const Zkey z = parse_zkey(bytes_of("multiplier.zkey"), "multiplier.zkey");
  EXPECT_EQ(z.num_vars, 4u);
  EXPECT_EQ(z.num_public, 1u);
  EXPECT_EQ(z.domain_size, 4u);  // 1 constraint + 2 public-signal rows (the one and c) -> 4
  EXPECT_EQ(z.vk.gamma_g2, g2_generator());  // snarkjs fixes gamma = 1
  EXPECT_EQ(z.c.size(), 2u);
  EXPECT_EQ(z.h.size(), 4u);
  // The coefficients are the constraint's A and B entries plus one A entry per public signal,
  // each stored as coef·R² and read back as the plain coefficient.
  std::size_t ones = 0;
  for (const ZkeyCoefficient& c : z.coefficients) ones += c.value == Fr::one() || c.value == -Fr::one();
  EXPECT_EQ(ones, z.coefficients.size());
  EXPECT_EQ(z.coefficients.size(), 4u);

  const std::vector<Fr> w = parse_wtns(bytes_of("multiplier.wtns"), "multiplier.wtns");
  ASSERT_EQ(w.size(), 4u);
  EXPECT_EQ(w[1], Fr::from_u64(33));  // wire order: 1, output c, then inputs a, b
  EXPECT_EQ(w[2], Fr::from_u64(3));
  EXPECT_EQ(w[3], Fr::from_u64(11));

  const CircomR1cs c = parse_r1cs_file(bytes_of("multiplier.r1cs"), "multiplier.r1cs");
  EXPECT_EQ(c.r1cs.num_constraints(), 1u);
  EXPECT_EQ(c.r1cs.num_inputs, 2u);
  EXPECT_EQ(c.r1cs.num_aux, 2u);
  EXPECT_EQ(c.num_outputs, 1u);
  EXPECT_EQ(c.num_private_inputs, 2u);
  EXPECT_FALSE(first_unsatisfied(c.r1cs, w).has_value());
}

TEST(SnarkjsFixture, EncodeReproducesTheContributedFileByteForByte) {
  const std::vector<uint8_t> bytes = bytes_of("multiplier.zkey");
  EXPECT_EQ(encode_zkey(parse_zkey(bytes, "multiplier.zkey")), bytes);
  // The setup file has its sections out of id order (1,2,4,3,9,8,5,6,7,10): same content.
  const Zkey a = parse_zkey(bytes_of("multiplier_setup.zkey"), "setup");
  const Zkey b = parse_zkey(encode_zkey(a), "re-encoded");
  EXPECT_EQ(encode_zkey(b), encode_zkey(a));
  const std::vector<Fr> z = parse_wtns(bytes_of("multiplier.wtns"), "w");
  EXPECT_EQ(encode_wtns(z), bytes_of("multiplier.wtns"));
}

TEST(SnarkjsFixture, VerificationKeyJsonIsSnarkjsByteForByte) {
  ZkeyReadOptions ro;
  ro.header_only = true;
  const Zkey z = parse_zkey(bytes_of("multiplier.zkey"), "multiplier.zkey", ro);
  EXPECT_EQ(vk_to_snarkjs_json(z.vk), text_of("multiplier_vk.json"));
}

TEST(SnarkjsFixture, VerifiesSnarkjsProofAndProvesWhatItVerifies) {
  const VerifyingKey vk = read_snarkjs_vk(kData / "snarkjs/multiplier_vk.json");
  const Proof theirs = read_snarkjs_proof(kData / "snarkjs/multiplier_proof.json");
  const std::vector<Fr> publics = read_public_json(kData / "snarkjs/multiplier_public.json");
  ASSERT_EQ(publics.size(), 1u);
  EXPECT_TRUE(verify(vk, publics, theirs));
  const std::vector<Fr> wrong = {publics[0] + Fr::one()};
  EXPECT_FALSE(verify(vk, wrong, theirs));

  const Zkey z = parse_zkey(bytes_of("multiplier.zkey"), "multiplier.zkey");
  const std::vector<Fr> w = parse_wtns(bytes_of("multiplier.wtns"), "w");
  const ProvingKey pk = proving_key_from_zkey(z);
  EXPECT_EQ(pk.convention, kSnarkjsConvention);
  const Witness witness = witness_from_zkey(z, w);
  const Proof ours = prove(pk, std::span<const Witness>(&witness, 1), kSeed).at(0);
  EXPECT_TRUE(verify(vk, publics, ours));
  EXPECT_FALSE(verify(vk, wrong, ours));
  EXPECT_EQ(public_to_snarkjs_json(publics), text_of("multiplier_public.json"));
  // A proof written and read back as snarkjs JSON is the same proof.
  const std::filesystem::path tmp = std::filesystem::temp_directory_path() / "pp_test_snarkjs_proof.json";
  write_text_file(tmp, proof_to_snarkjs_json(ours));
  const Proof back = read_snarkjs_proof(tmp);
  std::filesystem::remove(tmp);
  EXPECT_EQ(back.a, ours.a);
  EXPECT_EQ(back.b, ours.b);
  EXPECT_EQ(back.c, ours.c);
}

TEST(SnarkjsFixture, WitnessOfTheWrongLengthIsRefused) {
  const Zkey z = parse_zkey(bytes_of("multiplier.zkey"), "multiplier.zkey");
  std::vector<Fr> w = parse_wtns(bytes_of("multiplier.wtns"), "w");
  w.push_back(Fr::one());
  try {
    (void)witness_from_zkey(z, w);
    FAIL() << "accepted a witness of the wrong length";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("nVars = 4"), std::string::npos) << e.what();
  }
}

// ---- malformed files ----

TEST(SnarkjsMalformed, EveryTruncationIsAFormatError) {
  for (const char* name : {"multiplier.zkey", "multiplier_setup.zkey", "multiplier.wtns", "multiplier.r1cs"}) {
    const std::vector<uint8_t> b = bytes_of(name);
    for (std::size_t len = 0; len < b.size(); ++len) {
      const std::span<const uint8_t> cut(b.data(), len);
      const std::string ext = std::filesystem::path(name).extension().string();
      const std::string msg = error_of([&] {
        if (ext == ".zkey") {
          (void)parse_zkey(cut, name);
        } else if (ext == ".wtns") {
          (void)parse_wtns(cut, name);
        } else {
          (void)parse_r1cs_file(cut, name);
        }
      });
      ASSERT_NE(msg.find(name), std::string::npos) << len << ": " << msg;
    }
  }
}

// A read that leaves the curve checks to ZkeyPointChecks::run(): the run reports exactly what
// the full read would, for either curve and any section; the read still rejects coordinates >= p;
// a good key's points are the full read's.
TEST(SnarkjsMalformed, DeferredPointChecksReportWhatTheReadWould) {
  for (const char* name : {"multiplier.zkey", "multiplier_bn128.zkey"}) {
    SCOPED_TRACE(name);
    const std::vector<uint8_t> z = bytes_of(name);
    const bool bn = std::string(name).find("bn128") != std::string::npos;
    const std::size_t g1 = bn ? 64 : 96, coord = g1 / 2;
    auto full_read = [&](const std::vector<uint8_t>& b) {
      if (bn) (void)parse_zkey<bn254::Bn254>(b, "k.zkey");
      else (void)parse_zkey(b, "k.zkey");
    };
    auto deferred_read = [&](const std::vector<uint8_t>& b, ZkeyPointChecks* c) {
      if (bn) (void)parse_zkey<bn254::Bn254>(b, "k.zkey", {}, c);
      else (void)parse_zkey(b, "k.zkey", {}, c);
    };
    {  // good: both pass, and the deferred read's points are the full read's
      ZkeyPointChecks checks;
      if (bn) EXPECT_EQ(parse_zkey<bn254::Bn254>(z, "k.zkey", {}, &checks).h, parse_zkey<bn254::Bn254>(z, "k.zkey").h);
      else EXPECT_EQ(parse_zkey(z, "k.zkey", {}, &checks).h, parse_zkey(z, "k.zkey").h);
      EXPECT_NO_THROW(checks.run());
    }
    for (uint32_t section : {5u, 9u}) {  // a point off the curve in the first and in the last point section
      SCOPED_TRACE(section);
      std::vector<uint8_t> b = z;
      b[section_offset(b, section) + g1 + coord] ^= 1;  // point 1's y
      const std::string direct = error_of([&] { full_read(b); });
      ASSERT_NE(direct.find("not on the curve"), std::string::npos) << direct;
      ZkeyPointChecks checks;
      ASSERT_NO_THROW(deferred_read(b, &checks));
      EXPECT_EQ(error_of([&] { checks.run(); }), direct);
    }
    {  // a coordinate >= p is still the read's own error
      std::vector<uint8_t> b = z;
      std::memset(b.data() + section_offset(b, 9) + g1, 0xff, coord);
      ZkeyPointChecks checks;
      const std::string msg = error_of([&] { deferred_read(b, &checks); });
      EXPECT_NE(msg.find("H point 1 of"), std::string::npos) << msg;
      EXPECT_NE(msg.find("coordinate not below"), std::string::npos) << msg;
    }
  }
  // read_zkey keeps its mapping alive for the run, after the read has returned.
  std::vector<uint8_t> b = bytes_of("multiplier.zkey");
  b[section_offset(b, 8) + 96 + 48] ^= 1;  // C point 1's y
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "pp_deferred_checks.zkey";
  write_file_bytes(path, b);
  ZkeyPointChecks checks;
  ASSERT_NO_THROW((void)read_zkey(path, {}, &checks));
  std::filesystem::remove(path);
  const std::string msg = error_of([&] { checks.run(); });
  EXPECT_NE(msg.find("C point 1 of"), std::string::npos) << msg;
  EXPECT_NE(msg.find("pp_deferred_checks.zkey"), std::string::npos) << msg;
  EXPECT_THROW(ZkeyPointChecks{}.run(), std::logic_error);
}

TEST(SnarkjsMalformed, MessagesNameTheProblemAndWhere) {
  std::vector<uint8_t> z = bytes_of("multiplier.zkey");
  {
    std::vector<uint8_t> b = z;
    b[0] = 'x';
    EXPECT_NE(error_of([&] { (void)parse_zkey(b, "k.zkey"); }).find("bad magic"), std::string::npos);
    EXPECT_NE(error_of([&] { (void)parse_wtns(z, "k.wtns"); }).find("not a .wtns file"), std::string::npos);
  }
  {  // wrong curve: one byte of q (section 2, after n8q)
    std::vector<uint8_t> b = z;
    b[section_offset(b, 2) + 4] ^= 1;
    const std::string msg = error_of([&] { (void)parse_zkey(b, "k.zkey"); });
    EXPECT_NE(msg.find("wrong curve"), std::string::npos) << msg;
    EXPECT_NE(msg.find("section 2"), std::string::npos) << msg;
    EXPECT_NE(msg.find("byte offset"), std::string::npos) << msg;
  }
  {  // a missing section: renumber section 9 (H) to 11
    std::vector<uint8_t> b = z;
    put_u32(b, section_offset(b, 9) - 12, 11);
    EXPECT_NE(error_of([&] { (void)parse_zkey(b, "k.zkey"); }).find("section 9 (H) is missing"), std::string::npos);
  }
  {  // a repeated section
    std::vector<uint8_t> b = z;
    put_u32(b, section_offset(b, 9) - 12, 8);
    EXPECT_NE(error_of([&] { (void)parse_zkey(b, "k.zkey"); }).find("appears twice"), std::string::npos);
  }
  {  // a point off the curve: A point 1's y
    std::vector<uint8_t> b = z;
    const std::size_t at = section_offset(b, 5) + 96 + 48;
    b[at] ^= 1;
    const std::string msg = error_of([&] { (void)parse_zkey(b, "k.zkey"); });
    EXPECT_NE(msg.find("A point 1 of 4: not on the curve"), std::string::npos) << msg;
    EXPECT_NE(msg.find("byte offset " + std::to_string(at - 48)), std::string::npos) << msg;
  }
  {  // a coefficient's signal out of range
    std::vector<uint8_t> b = z;
    put_u32(b, section_offset(b, 4) + 4 + 8, 4);
    EXPECT_NE(error_of([&] { (void)parse_zkey(b, "k.zkey"); }).find("coefficient 0: signal 4 >= nVars 4"),
              std::string::npos);
  }
  {  // wrong in the coefficients and in a point: the coefficients are read beside the points,
     // and their error is the one reported, every time (as a serial read would)
    std::vector<uint8_t> b = z;
    put_u32(b, section_offset(b, 4) + 4 + 8, 4);
    b[section_offset(b, 5) + 96 + 48] ^= 1;
    for (int i = 0; i < 20; ++i)
      ASSERT_NE(error_of([&] { (void)parse_zkey(b, "k.zkey"); }).find("coefficient 0: signal 4 >= nVars 4"),
                std::string::npos);
  }
  {  // not Groth16
    std::vector<uint8_t> b = z;
    put_u32(b, section_offset(b, 1), 2);
    EXPECT_NE(error_of([&] { (void)parse_zkey(b, "k.zkey"); }).find("not Groth16"), std::string::npos);
  }
  std::vector<uint8_t> w = bytes_of("multiplier.wtns");
  {  // nWitness disagrees with the data
    std::vector<uint8_t> b = w;
    put_u32(b, section_offset(b, 1) + 4 + 32, 5);
    EXPECT_NE(error_of([&] { (void)parse_wtns(b, "w.wtns"); }).find("the header says 5 values"), std::string::npos);
  }
  {  // a witness over another prime (bn128's r differs in the first byte too)
    std::vector<uint8_t> b = w;
    b[section_offset(b, 1) + 4] ^= 0x55;
    EXPECT_NE(error_of([&] { (void)parse_wtns(b, "w.wtns"); }).find("wrong prime"), std::string::npos);
  }
  {  // a value >= r
    std::vector<uint8_t> b = w;
    std::memset(b.data() + section_offset(b, 2) + 32 * 2, 0xff, 32);
    EXPECT_NE(error_of([&] { (void)parse_wtns(b, "w.wtns"); }).find("value 2 is not below r"), std::string::npos);
  }
  std::vector<uint8_t> r = bytes_of("multiplier.r1cs");
  {  // a wire out of range in the first term of the first A combination
    std::vector<uint8_t> b = r;
    put_u32(b, section_offset(b, 2) + 4, 99);
    EXPECT_NE(error_of([&] { (void)parse_r1cs_file(b, "c.r1cs"); }).find("constraint 0, A, term 0: wire 99"),
              std::string::npos);
  }
  {  // trailing garbage after the last section
    std::vector<uint8_t> b = r;
    b.push_back(0);
    EXPECT_NE(error_of([&] { (void)parse_r1cs_file(b, "c.r1cs"); }).find("after the last"), std::string::npos);
  }
}

// ---- conventions on a synthetic circuit with a known-good bellman key ----

struct Synthetic {
  SyntheticOptions opts;
  R1cs r1cs;
  ProvingKey pk;
  std::vector<Fr> z, publics;
  Witness witness;
};

Synthetic make_synthetic(int lg) {
  Synthetic s;
  s.opts.lg_constraints = lg;
  s.opts.num_public_inputs = 2;
  s.opts.seed = kSeed;
  s.r1cs = make_porep_like_r1cs(s.opts);
  s.pk = setup(s.r1cs, kSeed + 1);
  s.z = make_witness(s.r1cs, s.opts, kSeed + 2);
  s.publics.assign(s.z.begin() + 1, s.z.begin() + std::ptrdiff_t(s.r1cs.num_inputs));
  s.witness = witness_from_assignment(s.r1cs, s.z);
  return s;
}

bool proves(const ProvingKey& pk, const Witness& w, std::span<const Fr> publics) {
  const Proof p = prove(pk, std::span<const Witness>(&w, 1), kSeed).at(0);
  std::vector<Fr> wrong(publics.begin(), publics.end());
  wrong[0] += Fr::one();
  return verify(pk.vk, publics, p) && !verify(pk.vk, wrong, p);
}

TEST(SnarkjsConvention, RowStrideRelatesTheTwoRoots) {
  for (int lg : {1, 2, 5, 10, 20, 31}) {
    const uint64_t s = row_stride(lg, 5, 7);
    EXPECT_EQ(Domain(lg, 7).omega().pow(Limbs<1>{{s}}), Domain(lg, 5).omega()) << lg;
    EXPECT_EQ(s & 1, 1u);
    const uint64_t t = row_stride(lg, 7, 5);
    EXPECT_EQ((unsigned __int128)s * t % (uint64_t(1) << lg), 1u) << lg;
  }
}

TEST(SnarkjsConvention, HBasisChangeRoundTripsAndEveryConventionProves) {
  const Synthetic s = make_synthetic(6);
  ASSERT_TRUE(proves(s.pk, s.witness, s.publics));
  // bellman -> snarkjs: proofs still verify with the snarkjs H step.
  const ProvingKey sj = change_h_basis(s.pk, HBasis::snarkjs);
  EXPECT_EQ(sj.h.size(), s.pk.h.size() + 1);
  EXPECT_EQ(sj.convention, (KeyConvention{HBasis::snarkjs, 7}));
  EXPECT_TRUE(proves(sj, s.witness, s.publics));
  // ... and back is exact.
  const ProvingKey back = change_h_basis(sj, HBasis::bellman);
  ASSERT_EQ(back.h.size(), s.pk.h.size());
  for (std::size_t i = 0; i < back.h.size(); ++i) ASSERT_EQ(back.h[i], s.pk.h[i]) << i;
  // The same key on generator 5, with the rows renumbered.
  ProvingKey on5 = s.pk;
  on5.convention.domain_generator = 5;
  const Witness moved = move_rows(s.witness, 6, 7, 5);
  EXPECT_TRUE(proves(on5, moved, s.publics));
  EXPECT_FALSE(proves(on5, s.witness, s.publics));  // rows left in place: the proof is wrong
  EXPECT_TRUE(proves(change_h_basis(on5, HBasis::snarkjs), moved, s.publics));
}

TEST(SnarkjsConvention, ZkeyFromABellmanKeyProvesLikeSnarkjs) {
  const Synthetic s = make_synthetic(7);
  const Zkey z = zkey_from_proving_key(s.pk, s.r1cs);
  EXPECT_EQ(z.domain_size, 128u);
  const Zkey back = parse_zkey(encode_zkey(z), "converted.zkey");
  const ProvingKey pk = proving_key_from_zkey(back);
  const Witness w = witness_from_zkey(back, s.z);
  EXPECT_TRUE(proves(pk, w, s.publics));
  // And to .params again (H exact), proved through the moved witness on bellman's generator.
  ProvingKey params_key = change_h_basis(pk, HBasis::bellman);
  params_key.convention.domain_generator = 7;  // as a .params file is read
  EXPECT_TRUE(proves(params_key, move_rows(w, 7, 5, 7), s.publics));
}

// The coefficients are decoded in parallel chunks: with bad coefficients in several chunks, the
// error is always the lowest index's, with its offset and reason, as a serial read reports it. The
// lowest sits just below the middle and another just above it, where a second thread starts: that
// one is found first, so a reader that reported the first bad coefficient it found would fail here.
// A value not below r names the value's own offset.
TEST(SnarkjsMalformed, TheLowestBadCoefficientIsReportedWhateverTheChunks) {
  const Synthetic s = make_synthetic(13);
  const std::vector<uint8_t> good = encode_zkey(zkey_from_proving_key(s.pk, s.r1cs));
  const std::size_t table = section_offset(good, 4) + 4;
  const uint32_t count = uint32_t(good[table - 4]) | uint32_t(good[table - 3]) << 8 | uint32_t(good[table - 2]) << 16 |
                         uint32_t(good[table - 1]) << 24;
  ASSERT_GT(count, 3u * 4096);  // several of the reader's chunks
  auto at = [&](uint32_t k) { return table + std::size_t(k) * 44; };
  std::vector<uint8_t> b = good;
  const uint32_t lowest = count / 2 - 3;
  put_u32(b, at(count - 1), 7);              // the last: matrix 7
  put_u32(b, at(count / 2 + 3) + 8, 1u << 30);  // signal out of range
  put_u32(b, at(lowest) + 4, 1u << 30);         // constraint out of range: the lowest
  for (int i = 0; i < 10; ++i) {
    const std::string msg = error_of([&] { (void)parse_zkey(b, "k.zkey"); });
    ASSERT_NE(msg.find("coefficient " + std::to_string(lowest) + ": constraint 1073741824 >= domainSize"), std::string::npos)
        << msg;
    ASSERT_NE(msg.find("byte offset " + std::to_string(at(lowest))), std::string::npos) << msg;
  }
  b = good;
  for (int i = 0; i < 32; ++i) b[at(6000) + 12 + std::size_t(i)] = 0xff;  // the value: 2^256 - 1 >= r
  const std::string msg = error_of([&] { (void)parse_zkey(b, "k.zkey"); });
  EXPECT_NE(msg.find("coefficient 6000: value is not below r"), std::string::npos) << msg;
  EXPECT_NE(msg.find("byte offset " + std::to_string(at(6000) + 12)), std::string::npos) << msg;
  EXPECT_EQ(parse_zkey(good, "k.zkey").coefficients.size(), count);
}

// witness_from_zkey sums the coefficients on every core when they come row by row (by matrix then
// constraint, as snarkjs writes them), in chunks that start at a row; any other order (this
// converted key's renumbered rows, a shuffle) is summed serially. Every order gives the same
// witness, with a row that straddles the chunks (more than one chunk of coefficients here).
TEST(SnarkjsConvention, TheWitnessIsTheSameInEveryCoefficientOrder) {
  const Synthetic s = make_synthetic(13);
  Zkey by_row = zkey_from_proving_key(s.pk, s.r1cs);
  ASSERT_GT(by_row.coefficients.size(), std::size_t(1) << 14);  // more than one chunk
  auto same = [](const Witness& x, const Witness& y) {
    for (auto v : {&Witness::a, &Witness::b, &Witness::c})
      if (!std::equal((x.*v).begin(), (x.*v).end(), (y.*v).begin(), (y.*v).end())) return false;
    return true;
  };
  const Witness reference = witness_from_zkey(by_row, s.z);
  Zkey by_matrix = by_row;
  std::stable_sort(by_matrix.coefficients.begin(), by_matrix.coefficients.end(), [](const auto& x, const auto& y) {
    return x.matrix != y.matrix ? x.matrix < y.matrix : x.constraint < y.constraint;
  });
  EXPECT_TRUE(same(witness_from_zkey(by_matrix, s.z), reference));
  Zkey shuffled = by_row;
  std::mt19937_64 rng(5);
  std::shuffle(shuffled.coefficients.begin(), shuffled.coefficients.end(), rng);
  EXPECT_TRUE(same(witness_from_zkey(shuffled, s.z), reference));
  EXPECT_TRUE(proves(proving_key_from_zkey(by_row), reference, s.publics));
}

}  // namespace
}  // namespace pp::test
