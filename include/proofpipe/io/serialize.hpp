// SPDX-License-Identifier: Apache-2.0 OR MIT
// zcash/IETF BLS12-381 point encoding (G1 48/96 bytes, G2 96/192 bytes), as used by blst, bellperson and Filecoin.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "proofpipe/ec/bls12_381.hpp"

namespace pp {

// Format (big-endian coordinates; an Fp2 element is written c1 first, then c0):
//   G1 compressed   48 bytes: x            G1 uncompressed  96 bytes: x || y
//   G2 compressed   96 bytes: x.c1 || x.c0 G2 uncompressed 192 bytes: x.c1 || x.c0 || y.c1 || y.c0
// The top three bits of the first byte are flags (the coordinates are < 2^381, so they are free):
//   0x80 compressed, 0x40 point at infinity, 0x20 sign of y (compressed, non-infinity only):
//   set when y is lexicographically largest (y > (p-1)/2; for Fp2 compare c1, and c0 when c1 == 0).
// Infinity is exactly 0xc0 00..00 (compressed) or 0x40 00..00 (uncompressed).
inline constexpr std::size_t kG1CompressedBytes = 48;
inline constexpr std::size_t kG1UncompressedBytes = 96;
inline constexpr std::size_t kG2CompressedBytes = 96;
inline constexpr std::size_t kG2UncompressedBytes = 192;

inline constexpr uint8_t kFlagCompressed = 0x80;
inline constexpr uint8_t kFlagInfinity = 0x40;
inline constexpr uint8_t kFlagSign = 0x20;

enum class DecodeError {
  ok,
  wrong_length,              // not one of the two lengths of the group
  bad_flags,                 // compressed flag disagrees with the length; sign flag on an
                             // uncompressed or infinity encoding
  coordinate_not_canonical,  // a coordinate (or Fp2 component) is >= p
  not_on_curve,              // uncompressed (x, y) not on the curve (including x = y = 0 without
                             // the infinity flag)
  not_in_subgroup,           // on the curve but not in the order-r subgroup (SubgroupCheck::yes)
  not_a_square,              // compressed x with x^3 + b not a square: no such point
  infinity_not_canonical,    // infinity flag with any other bit set
};

enum class SubgroupCheck { yes, no };

// A short fixed description ("ok", "wrong length", ...); never null.
const char* to_string(DecodeError e);

// Encoders: the input must be a valid affine point (x = y = 0 means infinity); not checked.
void encode_g1_compressed(uint8_t out[kG1CompressedBytes], const G1Affine& p);
void encode_g1_uncompressed(uint8_t out[kG1UncompressedBytes], const G1Affine& p);
void encode_g2_compressed(uint8_t out[kG2CompressedBytes], const G2Affine& p);
void encode_g2_uncompressed(uint8_t out[kG2UncompressedBytes], const G2Affine& p);

// Decoders: accept either length of the group (the compressed flag must match the length).
// On-curve is always checked; subgroup membership (one scalar multiplication by r) only with
// SubgroupCheck::yes. `out` is written only when the result is DecodeError::ok.
// Error precedence: wrong_length, bad_flags, infinity_not_canonical, coordinate_not_canonical,
// not_a_square / not_on_curve, not_in_subgroup.
DecodeError decode_g1(G1Affine& out, std::span<const uint8_t> in, SubgroupCheck check);
DecodeError decode_g2(G2Affine& out, std::span<const uint8_t> in, SubgroupCheck check);

}  // namespace pp
