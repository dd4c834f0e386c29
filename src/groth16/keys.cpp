// SPDX-License-Identifier: Apache-2.0 OR MIT
// Groth16 proof bytes: BLS12-381's in bellperson's Proof::write / Proof::read layout (compressed
// A ‖ B ‖ C); BN254's in Ethereum's (uncompressed, big-endian, EIP-197 order).
#include "proofpipe/groth16/keys.hpp"

#include <stdexcept>
#include <string>

#include "proofpipe/ec/curve.hpp"
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

namespace {

using BnProof = ProofOf<bn254::Bn254>;

void put_g1(uint8_t* out, const bn254::G1Affine& p) {
  p.x.to_bytes_be(out);
  p.y.to_bytes_be(out + 32);
}
void put_g2(uint8_t* out, const bn254::G2Affine& p) {
  p.x.c1.to_bytes_be(out);
  p.x.c0.to_bytes_be(out + 32);
  p.y.c1.to_bytes_be(out + 64);
  p.y.c0.to_bytes_be(out + 96);
}

bn254::Fp get_fp(const uint8_t* in, const char* element) {
  bn254::Fp x;
  if (!x.from_bytes_be(in)) reject(element, "a coordinate is not below the base field modulus p");
  return x;
}

template <class P>
P checked(P p, const char* element) {
  if (p.is_infinity()) reject(element, "point at infinity");
  if (!p.is_on_curve()) reject(element, "not on the curve");
  if (!is_in_subgroup(p)) reject(element, "not in the prime-order subgroup");
  return p;
}

bn254::G1Affine get_g1(const uint8_t* in, const char* element) {
  return checked(bn254::G1Affine{get_fp(in, element), get_fp(in + 32, element)}, element);
}

bn254::G2Affine get_g2(const uint8_t* in, const char* element) {
  bn254::G2Affine p;
  p.x.c1 = get_fp(in, element);
  p.x.c0 = get_fp(in + 32, element);
  p.y.c1 = get_fp(in + 64, element);
  p.y.c0 = get_fp(in + 96, element);
  return checked(p, element);
}

}  // namespace

std::array<uint8_t, BnProof::kBytes> BnProof::to_bytes() const {
  std::array<uint8_t, kBytes> out{};
  put_g1(out.data(), a);
  put_g2(out.data() + 64, b);
  put_g1(out.data() + 192, c);
  return out;
}

BnProof BnProof::from_bytes(std::span<const uint8_t, kBytes> bytes) {
  BnProof p;
  p.a = get_g1(bytes.data(), "proof.a");
  p.b = get_g2(bytes.data() + 64, "proof.b");
  p.c = get_g1(bytes.data() + 192, "proof.c");
  return p;
}

}  // namespace pp
