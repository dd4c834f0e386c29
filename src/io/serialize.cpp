// SPDX-License-Identifier: Apache-2.0 OR MIT
// zcash/IETF BLS12-381 point encoding and decoding (see include/proofpipe/io/serialize.hpp).
#include "proofpipe/io/serialize.hpp"

#include <bit>
#include <cstring>

namespace pp {

namespace {

static_assert(Fp::N == 6 && Fp::BYTES == 48);

PP_INLINE uint64_t load_be64(const uint8_t* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  if constexpr (std::endian::native == std::endian::little) w = __builtin_bswap64(w);
  return w;
}

PP_INLINE void store_be64(uint8_t* p, uint64_t w) {
  if constexpr (std::endian::native == std::endian::little) w = __builtin_bswap64(w);
  std::memcpy(p, &w, 8);
}

// Reads a 48-byte big-endian Fp straight from the input, clearing the three flag bits of the
// first byte when `strip_flags` (only the leading coordinate carries flags). False when >= p.
PP_INLINE bool load_fp(Fp& out, const uint8_t* in, bool strip_flags) {
  uint64_t x[6];
  for (int i = 0; i < 6; ++i) x[i] = load_be64(in + 8 * (5 - i));
  if (strip_flags) x[5] &= ~(uint64_t(0xe0) << 56);
  return Fp::from_canonical(out, x);
}

// Fp2 as c1 || c0 (96 bytes).
PP_INLINE bool load_fp2(Fp2& out, const uint8_t* in, bool strip_flags) {
  return load_fp(out.c1, in, strip_flags) && load_fp(out.c0, in + 48, false);
}

PP_INLINE void store_fp(uint8_t* out, const Fp& a) {
  uint64_t x[6];
  a.to_canonical(x);
  for (int i = 0; i < 6; ++i) store_be64(out + 8 * (5 - i), x[i]);
}

PP_INLINE void store_fp2(uint8_t* out, const Fp2& a) {
  store_fp(out, a.c1);
  store_fp(out + 48, a.c0);
}

// True when every byte except the flag bits of byte 0 is zero.
bool rest_is_zero(std::span<const uint8_t> in) {
  uint8_t acc = in[0] & 0x1f;
  for (std::size_t i = 1; i < in.size(); ++i) acc |= in[i];
  return acc == 0;
}

// Shared decoder over the coordinate field. `Curve` is G1Curve or G2Curve, `kCoord` the byte
// length of one coordinate (48 or 96).
template <class Curve, std::size_t kCoord>
DecodeError decode_point(Affine<Curve>& out, std::span<const uint8_t> in, SubgroupCheck check) {
  using F = typename Curve::Field;
  const bool compressed_len = in.size() == kCoord;
  if (!compressed_len && in.size() != 2 * kCoord) return DecodeError::wrong_length;

  const uint8_t flags = in[0];
  const bool c_flag = (flags & kFlagCompressed) != 0;
  const bool i_flag = (flags & kFlagInfinity) != 0;
  const bool s_flag = (flags & kFlagSign) != 0;
  if (c_flag != compressed_len) return DecodeError::bad_flags;
  if (s_flag && (!c_flag || i_flag)) return DecodeError::bad_flags;

  if (i_flag) {
    if (!rest_is_zero(in)) return DecodeError::infinity_not_canonical;
    out = Affine<Curve>::infinity();
    return DecodeError::ok;
  }

  Affine<Curve> p;
  constexpr F b = Curve::b;
  if constexpr (kCoord == 48) {
    if (!load_fp(p.x, in.data(), true)) return DecodeError::coordinate_not_canonical;
  } else {
    if (!load_fp2(p.x, in.data(), true)) return DecodeError::coordinate_not_canonical;
  }

  if (c_flag) {
    const F rhs = p.x.sqr() * p.x + b;
    if (!sqrt(p.y, rhs)) return DecodeError::not_a_square;
    // y = 0 would have no sign; no such point exists on either curve (odd group orders), but a
    // sign flag on it would be non-canonical.
    if (p.y.is_zero() && s_flag) return DecodeError::bad_flags;
    if (p.y.is_lexicographically_largest() != s_flag) p.y = -p.y;
  } else {
    if constexpr (kCoord == 48) {
      if (!load_fp(p.y, in.data() + kCoord, false)) return DecodeError::coordinate_not_canonical;
    } else {
      if (!load_fp2(p.y, in.data() + kCoord, false)) return DecodeError::coordinate_not_canonical;
    }
    // x = y = 0 is our in-memory infinity, which is_on_curve() accepts; as an encoding without
    // the infinity flag it is the point (0, 0), which is not on the curve (b != 0).
    if (p.y.sqr() != p.x.sqr() * p.x + b) return DecodeError::not_on_curve;
  }

  if (check == SubgroupCheck::yes && !is_in_subgroup(p)) return DecodeError::not_in_subgroup;
  out = p;
  return DecodeError::ok;
}

}  // namespace

const char* to_string(DecodeError e) {
  switch (e) {
    case DecodeError::ok: return "ok";
    case DecodeError::wrong_length: return "wrong length";
    case DecodeError::bad_flags: return "bad flags";
    case DecodeError::coordinate_not_canonical: return "coordinate not canonical (>= p)";
    case DecodeError::not_on_curve: return "point not on curve";
    case DecodeError::not_in_subgroup: return "point not in prime-order subgroup";
    case DecodeError::not_a_square: return "compressed x has no matching y (not a square)";
    case DecodeError::infinity_not_canonical: return "infinity encoding not canonical";
  }
  return "unknown decode error";
}

void encode_g1_compressed(uint8_t out[kG1CompressedBytes], const G1Affine& p) {
  if (p.is_infinity()) {
    std::memset(out, 0, kG1CompressedBytes);
    out[0] = kFlagCompressed | kFlagInfinity;
    return;
  }
  store_fp(out, p.x);
  out[0] |= kFlagCompressed | (p.y.is_lexicographically_largest() ? kFlagSign : 0);
}

void encode_g1_uncompressed(uint8_t out[kG1UncompressedBytes], const G1Affine& p) {
  if (p.is_infinity()) {
    std::memset(out, 0, kG1UncompressedBytes);
    out[0] = kFlagInfinity;
    return;
  }
  store_fp(out, p.x);
  store_fp(out + 48, p.y);
}

void encode_g2_compressed(uint8_t out[kG2CompressedBytes], const G2Affine& p) {
  if (p.is_infinity()) {
    std::memset(out, 0, kG2CompressedBytes);
    out[0] = kFlagCompressed | kFlagInfinity;
    return;
  }
  store_fp2(out, p.x);
  out[0] |= kFlagCompressed | (p.y.is_lexicographically_largest() ? kFlagSign : 0);
}

void encode_g2_uncompressed(uint8_t out[kG2UncompressedBytes], const G2Affine& p) {
  if (p.is_infinity()) {
    std::memset(out, 0, kG2UncompressedBytes);
    out[0] = kFlagInfinity;
    return;
  }
  store_fp2(out, p.x);
  store_fp2(out + 96, p.y);
}

DecodeError decode_g1(G1Affine& out, std::span<const uint8_t> in, SubgroupCheck check) {
  return decode_point<G1Curve, kG1CompressedBytes>(out, in, check);
}

DecodeError decode_g2(G2Affine& out, std::span<const uint8_t> in, SubgroupCheck check) {
  return decode_point<G2Curve, kG2CompressedBytes>(out, in, check);
}

}  // namespace pp
