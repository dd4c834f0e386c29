// SPDX-License-Identifier: Apache-2.0 OR MIT
// snarkjs interoperability: .zkey as a proving key (and back), .wtns as a witness, snarkjs's JSON files;
// on bls12381 and bn128 alike (templates over the curve E; the unsuffixed types are BLS12-381's).
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "proofpipe/groth16/prover.hpp"
#include "proofpipe/io/zkey.hpp"

namespace pp {

// Which variables have a column in A and B: a coefficient in the zkey or a point that is not
// the point at infinity (snarkjs's prover sums every point, so either makes the variable count).
template <class E>
Densities zkey_densities(const ZkeyOf<E>& zkey);

// The zkey as a proofpipe proving key in kSnarkjsConvention: IC, L = the C section, H as
// stored; a, b_g1, b_g2 keep the points of the variables in zkey_densities (inputs always in a).
template <class E>
ProvingKeyOf<E> proving_key_from_zkey(const ZkeyOf<E>& zkey);
// The same, taking over the H and C sections instead of copying them (zkey.h and zkey.c are
// left empty).
template <class E>
ProvingKeyOf<E> proving_key_from_zkey(ZkeyOf<E>&& zkey);
// The same, taking over all five point sections (zkey.a, b1, b2, c, h are left empty; the A and
// B points are kept in place, without a copy). `densities` must be zkey_densities(zkey). Reads
// and writes only the point sections (and the header's counts and vk): witness_from_zkey(zkey,
// z, densities), which reads only the header and the coefficients, may run at the same time.
template <class E>
ProvingKeyOf<E> take_proving_key(ZkeyOf<E>& zkey, const Densities& densities);

// The prover's witness from the full assignment z of a .wtns: a = A·z and b = B·z over the
// zkey's coefficients (domainSize rows), c = a∘b as snarkjs computes it (the zkey has no C).
// Throws std::invalid_argument when z.size() != nVars or z[0] != 1.
template <class E>
WitnessOf<E> witness_from_zkey(const ZkeyOf<E>& zkey, SpanOf<typename E::Fr> z);
// The same with the zkey's densities computed already (zkey_densities(zkey)).
template <class E>
WitnessOf<E> witness_from_zkey(const ZkeyOf<E>& zkey, SpanOf<typename E::Fr> z, const Densities& densities);

// A .zkey from a proving key made for `circuit` with bellman's rows: the circuit's constraints
// in order, then one row `input_i · 0 = 0` per input (the constant one first), row k at
// omega^k for pk's domain generator — what bellman's generator, proofpipe's setup() and so a
// bellperson .params for this circuit have (set pk.convention.domain_generator = 5 for a
// .params that was exported from a .zkey: its rows are snarkjs's). The rows are renumbered onto
// snarkjs's generator-5 domain and the H points changed to snarkjs's basis (see
// change_h_basis). Throws std::invalid_argument when the key's sizes do not fit the circuit. A
// BN254 key must be in kSnarkjsConvention already (the conversions are BLS12-381's).
template <class E>
ZkeyOf<E> zkey_from_proving_key(const ProvingKeyOf<E>& pk, const std::type_identity_t<R1csOf<typename E::Fr>>& circuit);
// A test key for `circuit` (fresh random toxic waste, NOT a ceremony), as a .zkey, made in
// snarkjs's convention directly (constraint k at row k, as snarkjs groth16 setup places it).
template <class F>
ZkeyOf<CurveOf<F>> zkey_test_setup(const R1csOf<F>& circuit, uint64_t seed);

// ---- JSON, byte for byte as snarkjs 0.7 writes it (bfj, one-space indent) ----
// verification_key.json: protocol, curve ("bls12381" or "bn128"), nPublic, vk_alpha_1, vk_beta_2,
// vk_gamma_2, vk_delta_2, vk_alphabeta_12 (e(alpha, beta) as ffjavascript's pairing gives it), IC.
template <class E>
std::string vk_to_snarkjs_json(const VerifyingKeyOf<E>& vk);
// Reads a verification_key.json (protocol groth16, E's curve); vk.beta_g1 and delta_g1 are not in
// the file and are left at infinity. Throws std::runtime_error naming the file and field (a file
// for the other curve says so).
template <class E = Bls12_381>
VerifyingKeyOf<E> read_snarkjs_vk(const std::filesystem::path& path);
// The curve a verification_key.json names (its "curve" field).
CurveId snarkjs_vk_curve(const std::filesystem::path& path);
// proof.json: pi_a, pi_b, pi_c (projective with z = 1), protocol, curve.
template <class E>
std::string proof_to_snarkjs_json(const ProofOf<E>& proof);
// Reads a proof.json. The points must be on the curve and in the subgroup (snarkjs itself
// checks only on-curve; a small-order component is never a valid proof). Throws
// std::runtime_error naming the file and field.
template <class E = Bls12_381>
ProofOf<E> read_snarkjs_proof(const std::filesystem::path& path);
// public.json: the public signals (z[1 .. nPublic]) as decimal strings.
std::string public_to_snarkjs_json(std::span<const Fr> inputs_without_one);
std::string public_to_snarkjs_json(std::span<const bn254::Fr> inputs_without_one);

void write_text_file(const std::filesystem::path& path, const std::string& text);

}  // namespace pp
