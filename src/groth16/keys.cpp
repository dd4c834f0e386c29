// SPDX-License-Identifier: Apache-2.0 OR MIT
// Groth16 proof bytes: bellperson's Proof::write / Proof::read layout (compressed A ‖ B ‖ C).
#include "proofpipe/groth16/keys.hpp"

#include <stdexcept>
#include <string>

#include "proofpipe/io/serialize.hpp"

namespace pp {

static_assert(Proof::kBytes == 2 * kG1CompressedBytes + kG2CompressedBytes);

std::array<uint8_t, Proof::kBytes> ProofOf<Bls12_381>::to_bytes() const {
  std::array<uint8_t, kBytes> out{};
  encode_g1_compressed(out.data(), a);
  encode_g2_compressed(out.data() + kG1CompressedBytes, b);
  encode_g1_compressed(out.data() + kG1CompressedBytes + kG2CompressedBytes, c);
  return out;
}

namespace {

[[noreturn]] void reject(const char* element, const char* reason) {
  throw std::invalid_argument(std::string("invalid Groth16 proof: ") + element + ": " + reason);
}

// Subgroup checks are not optional here: a proof comes from an untrusted prover, and a small-
// order component could bias the pairing check. Infinity is rejected as bellperson's
// Proof::read_many does; an honest prover never outputs it (A and B carry the random r, s).
template <class P, class Decode>
P decode_part(std::span<const uint8_t> in, const char* element, Decode decode) {
  P p;
  const DecodeError e = decode(p, in, SubgroupCheck::yes);
  if (e != DecodeError::ok) reject(element, to_string(e));
  if (p.is_infinity()) reject(element, "point at infinity");
  return p;
}

}  // namespace

Proof ProofOf<Bls12_381>::from_bytes(std::span<const uint8_t, kBytes> bytes) {
  // Fixed-size slices: a 48/96-byte input only decodes as a compressed point, so an uncompressed
  // flag is reported as bad flags instead of being read differently.
  const std::span<const uint8_t> all(bytes);
  Proof p;
  p.a = decode_part<G1Affine>(all.subspan(0, kG1CompressedBytes), "proof.a", decode_g1);
  p.b = decode_part<G2Affine>(all.subspan(kG1CompressedBytes, kG2CompressedBytes), "proof.b", decode_g2);
  p.c = decode_part<G1Affine>(all.subspan(kG1CompressedBytes + kG2CompressedBytes, kG1CompressedBytes), "proof.c",
                              decode_g1);
  return p;
}

}  // namespace pp
