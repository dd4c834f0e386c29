// SPDX-License-Identifier: Apache-2.0 OR MIT
// snarkjs `.zkey` files (Groth16, curve bls12381 or bn128): reader with located errors, writer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "proofpipe/groth16/keys.hpp"
#include "proofpipe/io/binfile.hpp"

namespace pp {

// Sections (snarkjs zkey_utils.js / zkey_new.js; layout in docs/FORMATS.md):
//   1 u32 protocol (1 = Groth16)
//   2 u32 n8q, q, u32 n8r, r, u32 nVars, u32 nPublic, u32 domainSize,
//     alpha_1, beta_1, beta_2, gamma_2, delta_1, delta_2
//   3 IC: nPublic + 1 G1        4 coefficients: u32 n, n × {u32 matrix, u32 constraint, u32 signal, coef·R² mod r}
//   5 A: nVars G1   6 B1: nVars G1   7 B2: nVars G2   8 C: nVars − nPublic − 1 G1
//   9 H: domainSize G1 (the odd Lagrange points of the 2·domainSize domain, over δ)
//  10 MPC parameters (contributions; kept as raw bytes, not needed to prove)
// nPublic counts outputs and public inputs, not the constant one.
template <class F>
struct ZkeyCoefficientOf {
  uint32_t matrix = 0;      // 0: A, 1: B (snarkjs stores no C: the prover recomputes it as A·B)
  uint32_t constraint = 0;  // row, < domainSize; row k is the domain point ω^k (ω from 5)
  uint32_t signal = 0;      // wire, < nVars
  F value;                  // the coefficient itself (Montgomery form in memory)
};
using ZkeyCoefficient = ZkeyCoefficientOf<Fr>;

// E is the curve (groth16/curves.hpp); Zkey is BLS12-381's, bn254::Zkey BN254's.
template <class E>
struct ZkeyOf {
  using Curve = E;
  std::size_t num_vars = 0;    // wires, the constant one included
  std::size_t num_public = 0;  // outputs + public inputs, without the one
  std::size_t domain_size = 0;
  VerifyingKeyOf<E> vk;        // beta_g1 is the header's beta_1
  std::vector<ZkeyCoefficientOf<typename E::Fr>> coefficients;
  std::vector<Affine<typename E::G1>> a, b1, c, h;
  std::vector<Affine<typename E::G2>> b2;
  std::vector<uint8_t> mpc_params;  // section 10 as stored; empty: write an empty transcript
};
using Zkey = ZkeyOf<Bls12_381>;
namespace bn254 {
using Zkey = ZkeyOf<Bn254>;
}

// The curve a .zkey (or .wtns, .r1cs: any file whose first field section starts with n8 and a
// prime) is for, from its header's primes: FormatError naming the file when neither curve's.
enum class CurveId { bls12_381, bn254 };
const char* to_string(CurveId c);  // "bls12381", "bn128": snarkjs's names
CurveId zkey_curve(std::span<const uint8_t> bytes, std::string_view name);
CurveId zkey_curve(const std::filesystem::path& path);

struct ZkeyReadOptions {
  bool subgroup_check = false;  // every point of sections 5–9 (on-curve is always checked)
  bool header_only = false;     // sections 1–3 and the coefficient count; vectors left empty
};

// The checks of sections 5–9's points that a read left for later (the `deferred` argument of
// read_zkey and parse_zkey): the read checks every coordinate is below p; run() checks each point
// is on the curve (and, with subgroup_check, in the subgroup) from the same bytes, and throws the
// FormatError the read would have thrown — the lowest bad point of the first section that has
// one. A caller runs it beside work that does not need the points to be valid yet (the GPU's
// proof) and joins it before it uses or returns anything made from them. run() may be called
// from any thread, as often as wanted.
struct ZkeyPointChecks {
  std::shared_ptr<const void> keeper;  // keeps `bytes` alive: the file's mapping (read_zkey), or null
  std::span<const uint8_t> bytes;      // the whole .zkey
  std::string name;
  bool subgroup_check = false;
  CurveId curve = CurveId::bls12_381;  // whose points these are
  void run() const;
};

// Throws FormatError naming the file, the section, the index and the byte offset of the first
// problem: bad magic or version, a missing or repeated section, a protocol other than Groth16,
// primes that are not E's (a bn128 key read as BLS12-381's says so), sizes that disagree with the
// header, a coefficient out of range, a point off the curve. Points are decoded in parallel; the
// error reported is always the lowest index.
template <class E = Bls12_381>
ZkeyOf<E> parse_zkey(std::span<const uint8_t> bytes, std::string_view name, const ZkeyReadOptions& options = {});
template <class E = Bls12_381>
ZkeyOf<E> read_zkey(const std::filesystem::path& path, const ZkeyReadOptions& options = {});
// The same with the curve checks of sections 5–9 left to *deferred (above). parse_zkey's bytes
// must outlive deferred->run(); read_zkey's mapping is kept alive by *deferred.
template <class E = Bls12_381>
ZkeyOf<E> parse_zkey(std::span<const uint8_t> bytes, std::string_view name, const ZkeyReadOptions& options,
                     ZkeyPointChecks* deferred);
template <class E = Bls12_381>
ZkeyOf<E> read_zkey(const std::filesystem::path& path, const ZkeyReadOptions& options, ZkeyPointChecks* deferred);
// Sections in id order 1..10. Throws std::invalid_argument when the vectors disagree with the
// sizes (a, b1, b2 nVars points; c nVars − nPublic − 1; h domainSize; ic nPublic + 1).
template <class E>
std::vector<uint8_t> encode_zkey(const ZkeyOf<E>& zkey);
template <class E>
void write_zkey(const std::filesystem::path& path, const ZkeyOf<E>& zkey);

}  // namespace pp
