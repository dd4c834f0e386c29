// SPDX-License-Identifier: Apache-2.0 OR MIT
// Tests of the zcash/IETF BLS12-381 point encoding: round trips, known answers and every decode error.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "proofpipe/ec/bls12_381.hpp"
#include "proofpipe/io/serialize.hpp"

using namespace pp;

namespace {

using Bytes = std::vector<uint8_t>;

// Deterministic scalar for round trips: 1 and r - 1 first, then seeded random values.
Fr test_scalar(int i) {
  if (i == 0) return Fr::one();
  if (i == 1) return -Fr::one();
  std::mt19937_64 rng(0x5e1a11ce00ULL + uint64_t(i));
  for (;;) {
    uint64_t v[4];
    for (auto& w : v) w = rng();
    v[3] &= 0x7fffffffffffffffULL;
    Fr k;
    if (Fr::from_canonical(k, v)) return k;
  }
}

G1Affine g1_point(int i) { return scalar_mul(g1_generator(), test_scalar(i)).to_affine(); }
G2Affine g2_point(int i) { return scalar_mul(g2_generator(), test_scalar(i)).to_affine(); }

Bytes enc_g1c(const G1Affine& p) { Bytes b(48); encode_g1_compressed(b.data(), p); return b; }
Bytes enc_g1u(const G1Affine& p) { Bytes b(96); encode_g1_uncompressed(b.data(), p); return b; }
Bytes enc_g2c(const G2Affine& p) { Bytes b(96); encode_g2_compressed(b.data(), p); return b; }
Bytes enc_g2u(const G2Affine& p) { Bytes b(192); encode_g2_uncompressed(b.data(), p); return b; }

DecodeError dec1(const Bytes& b, SubgroupCheck c = SubgroupCheck::yes) {
  G1Affine p;
  return decode_g1(p, b, c);
}
DecodeError dec2(const Bytes& b, SubgroupCheck c = SubgroupCheck::yes) {
  G2Affine p;
  return decode_g2(p, b, c);
}

std::string hex(const Bytes& b) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (uint8_t c : b) { s += d[c >> 4]; s += d[c & 15]; }
  return s;
}

// p as 48 big-endian bytes.
std::array<uint8_t, 48> modulus_be() {
  std::array<uint8_t, 48> out{};
  for (int i = 0; i < 6; ++i)
    for (int k = 0; k < 8; ++k) out[8 * (5 - i) + k] = uint8_t(FpParams::modulus.v[i] >> (56 - 8 * k));
  return out;
}
void put_modulus(Bytes& b, std::size_t offset) {
  const auto m = modulus_be();
  std::memcpy(b.data() + offset, m.data(), 48);
}

Fp fp(uint64_t v) { return Fp::from_u64(v); }
const Fp kB1 = fp(4);
const Fp2 kB2{fp(4), fp(4)};

// First on-curve point (x = 0, 1, 2, ...) outside the prime-order subgroup.
G1Affine g1_non_subgroup_point() {
  for (uint64_t i = 0;; ++i) {
    G1Affine p;
    p.x = fp(i);
    if (!sqrt(p.y, p.x.sqr() * p.x + kB1)) continue;
    if (!is_in_subgroup(p)) return p;
  }
}
G2Affine g2_non_subgroup_point() {
  for (uint64_t i = 0;; ++i) {
    G2Affine p;
    p.x = Fp2{fp(i), Fp::zero()};
    if (!sqrt(p.y, p.x.sqr() * p.x + kB2)) continue;
    if (!is_in_subgroup(p)) return p;
  }
}
// First x = 0, 1, 2, ... with x^3 + b not a square.
Fp g1_x_without_y() {
  for (uint64_t i = 0;; ++i) {
    const Fp x = fp(i);
    if (!(x.sqr() * x + kB1).is_square()) return x;
  }
}
Fp2 g2_x_without_y() {
  for (uint64_t i = 0;; ++i) {
    const Fp2 x{fp(i), Fp::zero()};
    if (!(x.sqr() * x + kB2).is_square()) return x;
  }
}

}  // namespace

// ------------------------------------------------------------------------------------------------
// Round trips

class G1RoundTrip : public ::testing::TestWithParam<int> {};
class G2RoundTrip : public ::testing::TestWithParam<int> {};

TEST_P(G1RoundTrip, Compressed) {
  const G1Affine p = g1_point(GetParam());
  ASSERT_TRUE(p.is_on_curve());
  const Bytes b = enc_g1c(p);
  EXPECT_EQ(b[0] & kFlagCompressed, kFlagCompressed);
  EXPECT_EQ(b[0] & kFlagInfinity, 0);
  EXPECT_EQ((b[0] & kFlagSign) != 0, p.y.is_lexicographically_largest());
  for (auto check : {SubgroupCheck::yes, SubgroupCheck::no}) {
    G1Affine q;
    ASSERT_EQ(decode_g1(q, b, check), DecodeError::ok) << hex(b);
    EXPECT_EQ(q, p);
  }
}

TEST_P(G1RoundTrip, Uncompressed) {
  const G1Affine p = g1_point(GetParam());
  const Bytes b = enc_g1u(p);
  EXPECT_EQ(b[0] & 0xe0, 0);
  for (auto check : {SubgroupCheck::yes, SubgroupCheck::no}) {
    G1Affine q;
    ASSERT_EQ(decode_g1(q, b, check), DecodeError::ok) << hex(b);
    EXPECT_EQ(q, p);
  }
  // The compressed x is the uncompressed x plus flags.
  Bytes c = enc_g1c(p);
  c[0] &= 0x1f;
  EXPECT_TRUE(std::equal(c.begin(), c.end(), b.begin()));
}

TEST_P(G1RoundTrip, NegationFlipsOnlySign) {
  const G1Affine p = g1_point(GetParam());
  const Bytes a = enc_g1c(p);
  const Bytes b = enc_g1c(-p);
  EXPECT_EQ(a[0] ^ b[0], kFlagSign);
  EXPECT_TRUE(std::equal(a.begin() + 1, a.end(), b.begin() + 1));
  G1Affine q;
  ASSERT_EQ(decode_g1(q, b, SubgroupCheck::yes), DecodeError::ok);
  EXPECT_EQ(q, -p);
}

TEST_P(G2RoundTrip, Compressed) {
  const G2Affine p = g2_point(GetParam());
  ASSERT_TRUE(p.is_on_curve());
  const Bytes b = enc_g2c(p);
  EXPECT_EQ(b[0] & kFlagCompressed, kFlagCompressed);
  EXPECT_EQ(b[0] & kFlagInfinity, 0);
  EXPECT_EQ((b[0] & kFlagSign) != 0, p.y.is_lexicographically_largest());
  for (auto check : {SubgroupCheck::yes, SubgroupCheck::no}) {
    G2Affine q;
    ASSERT_EQ(decode_g2(q, b, check), DecodeError::ok) << hex(b);
    EXPECT_EQ(q, p);
  }
}

TEST_P(G2RoundTrip, Uncompressed) {
  const G2Affine p = g2_point(GetParam());
  const Bytes b = enc_g2u(p);
  EXPECT_EQ(b[0] & 0xe0, 0);
  for (auto check : {SubgroupCheck::yes, SubgroupCheck::no}) {
    G2Affine q;
    ASSERT_EQ(decode_g2(q, b, check), DecodeError::ok) << hex(b);
    EXPECT_EQ(q, p);
  }
  Bytes c = enc_g2c(p);
  c[0] &= 0x1f;
  EXPECT_TRUE(std::equal(c.begin(), c.end(), b.begin()));
}

TEST_P(G2RoundTrip, NegationFlipsOnlySign) {
  const G2Affine p = g2_point(GetParam());
  const Bytes a = enc_g2c(p);
  const Bytes b = enc_g2c(-p);
  EXPECT_EQ(a[0] ^ b[0], kFlagSign);
  EXPECT_TRUE(std::equal(a.begin() + 1, a.end(), b.begin() + 1));
  G2Affine q;
  ASSERT_EQ(decode_g2(q, b, SubgroupCheck::yes), DecodeError::ok);
  EXPECT_EQ(q, -p);
}

INSTANTIATE_TEST_SUITE_P(Points, G1RoundTrip, ::testing::Range(0, 8));
INSTANTIATE_TEST_SUITE_P(Points, G2RoundTrip, ::testing::Range(0, 8));

// ------------------------------------------------------------------------------------------------
// Infinity and known answers

TEST(G1Infinity, EncodesCanonically) {
  Bytes c = enc_g1c(G1Affine::infinity()), u = enc_g1u(G1Affine::infinity());
  Bytes ec(48, 0), eu(96, 0);
  ec[0] = 0xc0;
  eu[0] = 0x40;
  EXPECT_EQ(c, ec);
  EXPECT_EQ(u, eu);
}

TEST(G1Infinity, DecodesBothForms) {
  for (const Bytes& b : {enc_g1c(G1Affine::infinity()), enc_g1u(G1Affine::infinity())}) {
    G1Affine q = g1_generator();
    ASSERT_EQ(decode_g1(q, b, SubgroupCheck::yes), DecodeError::ok);
    EXPECT_TRUE(q.is_infinity());
  }
}

TEST(G2Infinity, EncodesCanonically) {
  Bytes c = enc_g2c(G2Affine::infinity()), u = enc_g2u(G2Affine::infinity());
  Bytes ec(96, 0), eu(192, 0);
  ec[0] = 0xc0;
  eu[0] = 0x40;
  EXPECT_EQ(c, ec);
  EXPECT_EQ(u, eu);
}

TEST(G2Infinity, DecodesBothForms) {
  for (const Bytes& b : {enc_g2c(G2Affine::infinity()), enc_g2u(G2Affine::infinity())}) {
    G2Affine q = g2_generator();
    ASSERT_EQ(decode_g2(q, b, SubgroupCheck::yes), DecodeError::ok);
    EXPECT_TRUE(q.is_infinity());
  }
}

// The generators' compressed encodings as published with the zcash pairing crate / IETF draft.
TEST(G1KnownAnswer, GeneratorCompressed) {
  EXPECT_EQ(hex(enc_g1c(g1_generator())),
            "97f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac586c55e83ff97a1aeffb3af00adb22c6bb");
}

TEST(G2KnownAnswer, GeneratorCompressed) {
  EXPECT_EQ(hex(enc_g2c(g2_generator())),
            "93e02b6052719f607dacd3a088274f65596bd0d09920b61ab5da61bbdc7f5049334cf11213945d57e5ac7d055d042b7e"
            "024aa2b2f08f0a91260805272dc51051c6e47ad4fa403b02b4510b647ae3d1770bac0326a805bbefd48056c8c121bdb8");
}

TEST(G1KnownAnswer, GeneratorUncompressed) {
  EXPECT_EQ(hex(enc_g1u(g1_generator())),
            "17f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac586c55e83ff97a1aeffb3af00adb22c6bb"
            "08b3f481e3aaa0f1a09e30ed741d8ae4fcf5e095d5d00af600db18cb2c04b3edd03cc744a2888ae40caa232946c5e7e1");
}

// The encoder's Fp2 sign rule on synthetic y values (encoding does not validate the point):
// c1 decides when non-zero, c0 only when c1 == 0.
TEST(G2SignRule, ComparesC1ThenC0) {
  const Fp small = fp(5), large = -fp(5);
  struct Case { Fp2 y; bool sign; };
  const Case cases[] = {
      {{small, Fp::zero()}, false}, {{large, Fp::zero()}, true},
      {{large, small}, false},      {{small, large}, true},
      {{Fp::zero(), large}, true},  {{Fp::zero(), small}, false},
  };
  for (const Case& c : cases) {
    const G2Affine p{g2_generator().x, c.y};
    EXPECT_EQ((enc_g2c(p)[0] & kFlagSign) != 0, c.sign);
  }
}

TEST(G1SignRule, HalfModulusBoundary) {
  // (p-1)/2 is not "largest"; (p+1)/2 = -(p-1)/2 is.
  const Fp half = -(fp(2).inverse());  // -(1/2) = (p-1)/2
  const G1Affine a{g1_generator().x, half}, b{g1_generator().x, -half};
  EXPECT_EQ(enc_g1c(a)[0] & kFlagSign, 0);
  EXPECT_EQ(enc_g1c(b)[0] & kFlagSign, kFlagSign);
}

TEST(G1Decode, OutputUntouchedOnError) {
  Bytes b = enc_g1u(g1_generator());
  b[95] ^= 1;
  G1Affine q = g1_point(3);
  const G1Affine before = q;
  EXPECT_EQ(decode_g1(q, b, SubgroupCheck::no), DecodeError::not_on_curve);
  EXPECT_EQ(q, before);
}

TEST(G2Decode, OutputUntouchedOnError) {
  Bytes b = enc_g2u(g2_generator());
  b[191] ^= 1;
  G2Affine q = g2_point(3);
  const G2Affine before = q;
  EXPECT_EQ(decode_g2(q, b, SubgroupCheck::no), DecodeError::not_on_curve);
  EXPECT_EQ(q, before);
}

TEST(DecodeErrorText, AllDistinctAndNonEmpty) {
  std::set<std::string> seen;
  for (DecodeError e : {DecodeError::ok, DecodeError::wrong_length, DecodeError::bad_flags,
                        DecodeError::coordinate_not_canonical, DecodeError::not_on_curve,
                        DecodeError::not_in_subgroup, DecodeError::not_a_square,
                        DecodeError::infinity_not_canonical}) {
    const char* s = to_string(e);
    ASSERT_NE(s, nullptr);
    EXPECT_GT(std::strlen(s), 0u);
    seen.insert(s);
  }
  EXPECT_EQ(seen.size(), 8u);
}

// ------------------------------------------------------------------------------------------------
// wrong_length: truncated / extended inputs (derived from a valid encoding where possible).

class G1WrongLength : public ::testing::TestWithParam<std::size_t> {};
class G2WrongLength : public ::testing::TestWithParam<std::size_t> {};

TEST_P(G1WrongLength, Rejected) {
  const std::size_t n = GetParam();
  Bytes full = enc_g1u(g1_generator());
  full.resize(std::max<std::size_t>(full.size(), n), 0);
  Bytes b(full.begin(), full.begin() + long(n));
  if (n > 0 && n < 48) b[0] |= kFlagCompressed;  // looks like a truncated compressed encoding
  G1Affine q = g1_generator();
  EXPECT_EQ(decode_g1(q, b, SubgroupCheck::no), DecodeError::wrong_length);
}

TEST_P(G2WrongLength, Rejected) {
  const std::size_t n = GetParam();
  Bytes full = enc_g2u(g2_generator());
  full.resize(std::max<std::size_t>(full.size(), n), 0);
  Bytes b(full.begin(), full.begin() + long(n));
  if (n > 0 && n < 96) b[0] |= kFlagCompressed;
  G2Affine q = g2_generator();
  EXPECT_EQ(decode_g2(q, b, SubgroupCheck::no), DecodeError::wrong_length);
}

INSTANTIATE_TEST_SUITE_P(Lengths, G1WrongLength,
                         ::testing::Values(0, 1, 32, 47, 49, 64, 95, 97, 144, 192));
INSTANTIATE_TEST_SUITE_P(Lengths, G2WrongLength,
                         ::testing::Values(0, 1, 48, 95, 97, 144, 191, 193, 288, 384));

TEST(G1WrongLengthEmptySpan, Rejected) {
  G1Affine q;
  EXPECT_EQ(decode_g1(q, std::span<const uint8_t>(), SubgroupCheck::yes), DecodeError::wrong_length);
}

// ------------------------------------------------------------------------------------------------
// bad_flags

TEST(G1BadFlags, CompressedLengthWithoutCompressedFlag) {
  Bytes b = enc_g1c(g1_generator());
  b[0] &= ~kFlagCompressed;
  EXPECT_EQ(dec1(b), DecodeError::bad_flags);
}
TEST(G1BadFlags, UncompressedLengthWithCompressedFlag) {
  Bytes b = enc_g1u(g1_generator());
  b[0] |= kFlagCompressed;
  EXPECT_EQ(dec1(b), DecodeError::bad_flags);
}
TEST(G1BadFlags, SignOnUncompressed) {
  Bytes b = enc_g1u(g1_generator());
  b[0] |= kFlagSign;
  EXPECT_EQ(dec1(b), DecodeError::bad_flags);
}
TEST(G1BadFlags, SignOnCompressedInfinity) {
  Bytes b(48, 0);
  b[0] = 0xe0;
  EXPECT_EQ(dec1(b), DecodeError::bad_flags);
}
TEST(G1BadFlags, SignOnUncompressedInfinity) {
  Bytes b(96, 0);
  b[0] = 0x60;
  EXPECT_EQ(dec1(b), DecodeError::bad_flags);
}
TEST(G1BadFlags, CompressedInfinityWithoutCompressedFlag) {
  Bytes b(48, 0);
  b[0] = 0x40;  // uncompressed-infinity byte on a 48-byte input
  EXPECT_EQ(dec1(b), DecodeError::bad_flags);
}
TEST(G1BadFlags, UncompressedInfinityWithCompressedFlag) {
  Bytes b(96, 0);
  b[0] = 0xc0;
  EXPECT_EQ(dec1(b), DecodeError::bad_flags);
}

TEST(G2BadFlags, CompressedLengthWithoutCompressedFlag) {
  Bytes b = enc_g2c(g2_generator());
  b[0] &= ~kFlagCompressed;
  EXPECT_EQ(dec2(b), DecodeError::bad_flags);
}
TEST(G2BadFlags, UncompressedLengthWithCompressedFlag) {
  Bytes b = enc_g2u(g2_generator());
  b[0] |= kFlagCompressed;
  EXPECT_EQ(dec2(b), DecodeError::bad_flags);
}
TEST(G2BadFlags, SignOnUncompressed) {
  Bytes b = enc_g2u(g2_generator());
  b[0] |= kFlagSign;
  EXPECT_EQ(dec2(b), DecodeError::bad_flags);
}
TEST(G2BadFlags, SignOnCompressedInfinity) {
  Bytes b(96, 0);
  b[0] = 0xe0;
  EXPECT_EQ(dec2(b), DecodeError::bad_flags);
}
TEST(G2BadFlags, SignOnUncompressedInfinity) {
  Bytes b(192, 0);
  b[0] = 0x60;
  EXPECT_EQ(dec2(b), DecodeError::bad_flags);
}
TEST(G2BadFlags, UncompressedInfinityWithCompressedFlag) {
  Bytes b(192, 0);
  b[0] = 0xc0;
  EXPECT_EQ(dec2(b), DecodeError::bad_flags);
}

// ------------------------------------------------------------------------------------------------
// infinity_not_canonical

TEST(G1InfinityNotCanonical, CompressedTrailingBit) {
  Bytes b(48, 0);
  b[0] = 0xc0;
  b[47] = 1;
  EXPECT_EQ(dec1(b), DecodeError::infinity_not_canonical);
}
TEST(G1InfinityNotCanonical, CompressedLowBitsOfFirstByte) {
  Bytes b(48, 0);
  b[0] = 0xc1;
  EXPECT_EQ(dec1(b), DecodeError::infinity_not_canonical);
}
TEST(G1InfinityNotCanonical, CompressedWithGeneratorX) {
  Bytes b = enc_g1c(g1_generator());
  b[0] |= kFlagInfinity;
  b[0] &= ~kFlagSign;
  EXPECT_EQ(dec1(b), DecodeError::infinity_not_canonical);
}
TEST(G1InfinityNotCanonical, UncompressedBitInY) {
  Bytes b(96, 0);
  b[0] = 0x40;
  b[60] = 0x10;
  EXPECT_EQ(dec1(b), DecodeError::infinity_not_canonical);
}
TEST(G1InfinityNotCanonical, UncompressedWithGeneratorCoordinates) {
  Bytes b = enc_g1u(g1_generator());
  b[0] |= kFlagInfinity;
  EXPECT_EQ(dec1(b, SubgroupCheck::no), DecodeError::infinity_not_canonical);
}

TEST(G2InfinityNotCanonical, CompressedBitInC0) {
  Bytes b(96, 0);
  b[0] = 0xc0;
  b[95] = 1;
  EXPECT_EQ(dec2(b), DecodeError::infinity_not_canonical);
}
TEST(G2InfinityNotCanonical, CompressedLowBitsOfFirstByte) {
  Bytes b(96, 0);
  b[0] = 0xdf;
  EXPECT_EQ(dec2(b), DecodeError::infinity_not_canonical);
}
TEST(G2InfinityNotCanonical, UncompressedBitInY) {
  Bytes b(192, 0);
  b[0] = 0x40;
  b[191] = 0x80;
  EXPECT_EQ(dec2(b), DecodeError::infinity_not_canonical);
}

// ------------------------------------------------------------------------------------------------
// coordinate_not_canonical (value >= p)

TEST(G1NotCanonical, CompressedXEqualsP) {
  Bytes b(48, 0);
  put_modulus(b, 0);
  b[0] |= kFlagCompressed;
  EXPECT_EQ(dec1(b), DecodeError::coordinate_not_canonical);
}
TEST(G1NotCanonical, CompressedXAllOnes) {
  Bytes b(48, 0xff);  // 2^381 - 1 with compressed and sign flags (infinity flag clear)
  b[0] = 0xbf;
  EXPECT_EQ(dec1(b), DecodeError::coordinate_not_canonical);
}
TEST(G1NotCanonical, CompressedXPlusP) {
  // x0 + p, for the small x0 of an on-curve point, still fits in 381 bits: a non-canonical
  // alias of a valid encoding, which must not decode to (x0, y).
  const G1Affine p0 = g1_non_subgroup_point();
  const Bytes g = enc_g1u(p0);
  const auto m = modulus_be();
  Bytes b(48, 0);
  unsigned carry = 0;
  for (int i = 47; i >= 0; --i) {
    const unsigned s = unsigned(g[size_t(i)]) + m[size_t(i)] + carry;
    b[size_t(i)] = uint8_t(s);
    carry = s >> 8;
  }
  ASSERT_EQ(carry, 0u);
  ASSERT_EQ(b[0] & 0xe0, 0);
  b[0] |= kFlagCompressed;
  EXPECT_EQ(dec1(b, SubgroupCheck::no), DecodeError::coordinate_not_canonical);
}
TEST(G1NotCanonical, UncompressedXEqualsP) {
  Bytes b = enc_g1u(g1_generator());
  put_modulus(b, 0);
  EXPECT_EQ(dec1(b), DecodeError::coordinate_not_canonical);
}
TEST(G1NotCanonical, UncompressedYEqualsP) {
  Bytes b = enc_g1u(g1_generator());
  put_modulus(b, 48);
  EXPECT_EQ(dec1(b), DecodeError::coordinate_not_canonical);
}
TEST(G1NotCanonical, UncompressedYTopBitsSet) {
  // Only the first byte carries flags: high bits of y's first byte are value bits (>= p).
  Bytes b = enc_g1u(g1_generator());
  b[48] |= 0x80;
  EXPECT_EQ(dec1(b), DecodeError::coordinate_not_canonical);
}

TEST(G2NotCanonical, CompressedXC1EqualsP) {
  Bytes b = enc_g2c(g2_generator());
  put_modulus(b, 0);
  b[0] |= kFlagCompressed;
  EXPECT_EQ(dec2(b), DecodeError::coordinate_not_canonical);
}
TEST(G2NotCanonical, CompressedXC0EqualsP) {
  Bytes b = enc_g2c(g2_generator());
  put_modulus(b, 48);
  EXPECT_EQ(dec2(b), DecodeError::coordinate_not_canonical);
}
TEST(G2NotCanonical, CompressedXC0TopBitsSet) {
  Bytes b = enc_g2c(g2_generator());
  b[48] |= 0xe0;
  EXPECT_EQ(dec2(b), DecodeError::coordinate_not_canonical);
}
TEST(G2NotCanonical, UncompressedXC1EqualsP) {
  Bytes b = enc_g2u(g2_generator());
  put_modulus(b, 0);
  EXPECT_EQ(dec2(b), DecodeError::coordinate_not_canonical);
}
TEST(G2NotCanonical, UncompressedXC0EqualsP) {
  Bytes b = enc_g2u(g2_generator());
  put_modulus(b, 48);
  EXPECT_EQ(dec2(b), DecodeError::coordinate_not_canonical);
}
TEST(G2NotCanonical, UncompressedYC1EqualsP) {
  Bytes b = enc_g2u(g2_generator());
  put_modulus(b, 96);
  EXPECT_EQ(dec2(b), DecodeError::coordinate_not_canonical);
}
TEST(G2NotCanonical, UncompressedYC0EqualsP) {
  Bytes b = enc_g2u(g2_generator());
  put_modulus(b, 144);
  EXPECT_EQ(dec2(b), DecodeError::coordinate_not_canonical);
}

// ------------------------------------------------------------------------------------------------
// not_on_curve (uncompressed) and not_a_square (compressed)

TEST(G1NotOnCurve, YPlusOne) {
  G1Affine p = g1_generator();
  p.y += Fp::one();
  EXPECT_EQ(dec1(enc_g1u(p), SubgroupCheck::no), DecodeError::not_on_curve);
}
TEST(G1NotOnCurve, ZeroZeroWithoutInfinityFlag) {
  // (0, 0) is our in-memory infinity but, without the flag, an off-curve point.
  EXPECT_EQ(dec1(Bytes(96, 0), SubgroupCheck::no), DecodeError::not_on_curve);
}
TEST(G1NotOnCurve, SwappedCoordinates) {
  const G1Affine g = g1_generator();
  EXPECT_EQ(dec1(enc_g1u(G1Affine{g.y, g.x}), SubgroupCheck::no), DecodeError::not_on_curve);
}
TEST(G1NotASquare, Compressed) {
  const Fp x = g1_x_without_y();
  G1Affine p{x, Fp::one()};  // y is ignored by the compressed encoder except for its sign
  for (auto check : {SubgroupCheck::yes, SubgroupCheck::no})
    EXPECT_EQ(dec1(enc_g1c(p), check), DecodeError::not_a_square);
}
TEST(G1Decode, CompressedZeroXIsAPoint) {
  // x = 0: 0^3 + 4 = 2^2 is a square, so 0xa0 00.. / 0x80 00.. decode to (0, ±2), not errors,
  // and neither is in the subgroup.
  Bytes b(48, 0);
  b[0] = 0x80;
  G1Affine q;
  ASSERT_EQ(decode_g1(q, b, SubgroupCheck::no), DecodeError::ok);
  EXPECT_TRUE(q.x.is_zero());
  EXPECT_EQ(q.y.sqr(), fp(4));
  EXPECT_FALSE(q.y.is_lexicographically_largest());
  EXPECT_EQ(decode_g1(q, b, SubgroupCheck::yes), DecodeError::not_in_subgroup);
}

TEST(G2NotOnCurve, YPlusOne) {
  G2Affine p = g2_generator();
  p.y += Fp2::one();
  EXPECT_EQ(dec2(enc_g2u(p), SubgroupCheck::no), DecodeError::not_on_curve);
}
TEST(G2NotOnCurve, YConjugated) {
  G2Affine p = g2_generator();
  p.y = p.y.conjugate();
  EXPECT_EQ(dec2(enc_g2u(p), SubgroupCheck::no), DecodeError::not_on_curve);
}
TEST(G2NotOnCurve, ZeroZeroWithoutInfinityFlag) {
  EXPECT_EQ(dec2(Bytes(192, 0), SubgroupCheck::no), DecodeError::not_on_curve);
}
TEST(G2NotASquare, Compressed) {
  const Fp2 x = g2_x_without_y();
  G2Affine p{x, Fp2::one()};
  for (auto check : {SubgroupCheck::yes, SubgroupCheck::no})
    EXPECT_EQ(dec2(enc_g2c(p), check), DecodeError::not_a_square);
}

// ------------------------------------------------------------------------------------------------
// not_in_subgroup: on-curve points of the full curve group, found by searching x = 0, 1, 2, ...

TEST(G1NotInSubgroup, Compressed) {
  const G1Affine p = g1_non_subgroup_point();
  ASSERT_TRUE(p.is_on_curve());
  EXPECT_EQ(dec1(enc_g1c(p), SubgroupCheck::yes), DecodeError::not_in_subgroup);
}
TEST(G1NotInSubgroup, Uncompressed) {
  const G1Affine p = g1_non_subgroup_point();
  EXPECT_EQ(dec1(enc_g1u(p), SubgroupCheck::yes), DecodeError::not_in_subgroup);
}
TEST(G1NotInSubgroup, AcceptedWithoutCheck) {
  const G1Affine p = g1_non_subgroup_point();
  for (const Bytes& b : {enc_g1c(p), enc_g1u(p)}) {
    G1Affine q;
    ASSERT_EQ(decode_g1(q, b, SubgroupCheck::no), DecodeError::ok);
    EXPECT_EQ(q, p);
  }
}
TEST(G2NotInSubgroup, Compressed) {
  const G2Affine p = g2_non_subgroup_point();
  ASSERT_TRUE(p.is_on_curve());
  EXPECT_EQ(dec2(enc_g2c(p), SubgroupCheck::yes), DecodeError::not_in_subgroup);
}
TEST(G2NotInSubgroup, Uncompressed) {
  const G2Affine p = g2_non_subgroup_point();
  EXPECT_EQ(dec2(enc_g2u(p), SubgroupCheck::yes), DecodeError::not_in_subgroup);
}
TEST(G2NotInSubgroup, AcceptedWithoutCheck) {
  const G2Affine p = g2_non_subgroup_point();
  for (const Bytes& b : {enc_g2c(p), enc_g2u(p)}) {
    G2Affine q;
    ASSERT_EQ(decode_g2(q, b, SubgroupCheck::no), DecodeError::ok);
    EXPECT_EQ(q, p);
  }
}
