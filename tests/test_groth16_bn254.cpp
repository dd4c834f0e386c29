// SPDX-License-Identifier: Apache-2.0 OR MIT
// Groth16 over BN254 on the CPU, from the same templates as BLS12-381's: setup -> prove -> verify
// for circuits of several shapes (public inputs and outputs, range checks, a long product chain),
// in both conventions (bellman's rows on 7's roots, snarkjs's H basis on 5's), with tampering,
// batches and unsatisfied witnesses rejected.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "proofpipe/groth16/prover.hpp"
#include "proofpipe/pairing/bn254.hpp"
#include "proofpipe/testkit/random_data.hpp"

namespace pp::test {
namespace {

using bn254::Fr;
constexpr uint64_t kSeed = 0x6e32353467313600ULL;

// A circuit under construction: variables are indices into z = (1, public..., aux...), rows are
// linear combinations.
struct Builder {
  using Lc = std::vector<std::pair<uint32_t, Fr>>;
  bn254::R1cs r1cs;
  std::vector<Fr> z{Fr::one()};
  std::size_t publics = 0;

  // Public inputs first (all of them before any aux variable).
  uint32_t input(const Fr& v) {
    z.push_back(v);
    ++publics;
    r1cs.num_inputs = 1 + publics;
    return uint32_t(z.size() - 1);
  }
  uint32_t aux(const Fr& v) {
    z.push_back(v);
    r1cs.num_aux = z.size() - r1cs.num_inputs;
    return uint32_t(z.size() - 1);
  }
  static void row(bn254::SparseMatrix& m, const Lc& lc) {
    if (m.row_start.empty()) m.row_start.push_back(0);
    for (const auto& [col, coeff] : lc) {
      m.column.push_back(col);
      m.value.push_back(coeff);
    }
    m.row_start.push_back(m.column.size());
  }
  void constrain(const Lc& a, const Lc& b, const Lc& c) {
    row(r1cs.a, a);
    row(r1cs.b, b);
    row(r1cs.c, c);
  }
  // v * v' as a new aux variable.
  uint32_t mul(uint32_t x, uint32_t y) {
    const uint32_t p = aux(z[x] * z[y]);
    constrain({{x, Fr::one()}}, {{y, Fr::one()}}, {{p, Fr::one()}});
    return p;
  }
};

// The shapes: `inputs` public inputs, a public output out = x^3 + x + 5 + sum(inputs), a private x
// (below 2^64) range-checked to `bits` bits, and `chain` more products of a running value.
struct Shape {
  std::size_t inputs, bits, chain;
};

struct Circuit {
  bn254::R1cs r1cs;
  std::vector<Fr> z;
  std::vector<Fr> publics;  // without the leading 1
};

Circuit make_circuit(const Shape& s, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Builder b;
  std::vector<uint32_t> ins;
  for (std::size_t i = 0; i < s.inputs; ++i) ins.push_back(b.input(testdata::random_fr<Fr>(rng)));
  // The output is public too; its value is known once x is chosen.
  const uint64_t x_value = s.bits >= 64 ? rng() : rng() & ((uint64_t(1) << s.bits) - 1);
  const Fr x_fr = Fr::from_u64(x_value);
  Fr out = x_fr * x_fr * x_fr + x_fr + Fr::from_u64(5);
  for (uint32_t i : ins) out += b.z[i];
  const uint32_t out_var = b.input(out);
  const uint32_t x = b.aux(x_fr);
  // Range check: bits b_i with b_i·(b_i - 1) = 0 and sum 2^i b_i = x.
  Builder::Lc sum;
  Fr pow2 = Fr::one();
  for (std::size_t i = 0; i < s.bits; ++i) {
    const uint32_t bit = b.aux(Fr::from_u64(i < 64 ? (x_value >> i) & 1 : 0));
    b.constrain({{bit, Fr::one()}}, {{bit, Fr::one()}, {0, -Fr::one()}}, {});
    sum.push_back({bit, pow2});
    pow2 += pow2;
  }
  b.constrain(sum, {{0, Fr::one()}}, {{x, Fr::one()}});
  // out = x^3 + x + 5 + sum(inputs)
  const uint32_t x2 = b.mul(x, x);
  const uint32_t x3 = b.mul(x2, x);
  Builder::Lc lhs = {{x3, Fr::one()}, {x, Fr::one()}, {0, Fr::from_u64(5)}};
  for (uint32_t i : ins) lhs.push_back({i, Fr::one()});
  b.constrain(lhs, {{0, Fr::one()}}, {{out_var, Fr::one()}});
  // A chain of products mixing in the inputs (dense "other" scalars).
  uint32_t acc = x3;
  for (std::size_t k = 0; k < s.chain; ++k) {
    const uint32_t t = b.aux(b.z[acc] + (ins.empty() ? Fr::one() : b.z[ins[k % ins.size()]]));
    b.constrain({{acc, Fr::one()}, {ins.empty() ? 0u : ins[k % ins.size()], Fr::one()}}, {{0, Fr::one()}},
                {{t, Fr::one()}});
    acc = b.mul(t, t);
  }
  Circuit c;
  c.r1cs = std::move(b.r1cs);
  c.z = std::move(b.z);
  c.publics.assign(c.z.begin() + 1, c.z.begin() + std::ptrdiff_t(c.r1cs.num_inputs));
  return c;
}

struct Case {
  Shape shape;
  KeyConvention convention;
  const char* name;
};

class Bn254ProveVerify : public ::testing::TestWithParam<Case> {};

TEST_P(Bn254ProveVerify, ProofsVerifyAndTamperingFails) {
  const Case& t = GetParam();
  const Circuit c = make_circuit(t.shape, kSeed);
  ASSERT_FALSE(first_unsatisfied(c.r1cs, c.z).has_value());
  const bn254::ProvingKey pk = setup(c.r1cs, kSeed + 1, {}, t.convention);
  EXPECT_EQ(pk.convention, t.convention);
  const std::vector<bn254::Witness> ws = {witness_from_assignment(c.r1cs, c.z)};
  const std::vector<bn254::Proof> proofs = prove(pk, ws, kSeed + 2);
  ASSERT_EQ(proofs.size(), 1u);
  const bn254::Proof& p = proofs[0];
  EXPECT_TRUE(p.a.is_on_curve() && p.b.is_on_curve() && p.c.is_on_curve());
  EXPECT_TRUE(verify(pk.vk, c.publics, p));

  // Every public value matters.
  for (std::size_t i = 0; i < c.publics.size(); ++i) {
    std::vector<Fr> bad = c.publics;
    bad[i] += Fr::one();
    EXPECT_FALSE(verify(pk.vk, bad, p)) << "public " << i << " changed";
  }
  // Each proof element matters (a valid point, just the wrong one).
  bn254::Proof q = p;
  q.a = (bn254::G1Jacobian::from_affine(q.a) + bn254::G1Jacobian::from_affine(bn254::g1_generator())).to_affine();
  EXPECT_FALSE(verify(pk.vk, c.publics, q));
  q = p;
  q.b = (-bn254::G2Jacobian::from_affine(q.b)).to_affine();
  EXPECT_FALSE(verify(pk.vk, c.publics, q));
  q = p;
  std::swap(q.a, q.c);
  EXPECT_FALSE(verify(pk.vk, c.publics, q));
  // The wrong number of public inputs is an error, not a rejection.
  EXPECT_THROW(verify(pk.vk, std::vector<Fr>(c.publics.size() + 1), p), std::invalid_argument);
}

const Case kCases[] = {
    {{1, 8, 0}, kSnarkjsConvention, "one_input_snarkjs"},
    {{1, 8, 0}, kBellmanConvention, "one_input_bellman"},
    {{3, 32, 10}, kSnarkjsConvention, "three_inputs_range32_snarkjs"},
    {{0, 16, 5}, kSnarkjsConvention, "output_only_snarkjs"},
    {{5, 64, 300}, kSnarkjsConvention, "chain300_snarkjs"},
    {{5, 64, 300}, kBellmanConvention, "chain300_bellman"},
    {{2, 100, 1500}, kSnarkjsConvention, "range100_chain1500_snarkjs"},  // bits 64..99 are 0
};
INSTANTIATE_TEST_SUITE_P(Shapes, Bn254ProveVerify, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Bn254Groth16, SeveralWitnessesBatchVerifyAndRandomisation) {
  const Circuit c0 = make_circuit({2, 16, 20}, kSeed + 10);
  const bn254::ProvingKey pk = setup(c0.r1cs, kSeed + 11, {}, kSnarkjsConvention);
  std::vector<bn254::Witness> ws;
  std::vector<std::vector<Fr>> publics;
  for (uint64_t k = 0; k < 4; ++k) {
    const Circuit c = make_circuit({2, 16, 20}, kSeed + 20 + k);  // same structure, other values
    ws.push_back(witness_from_assignment(c0.r1cs, c.z));
    publics.push_back(c.publics);
  }
  const auto proofs = prove(pk, ws, kSeed + 12);
  for (std::size_t i = 0; i < proofs.size(); ++i) EXPECT_TRUE(verify(pk.vk, publics[i], proofs[i])) << i;
  EXPECT_TRUE(batch_verify(pk.vk, publics, proofs, 99));
  auto swapped = proofs;
  std::swap(swapped[1], swapped[2]);
  EXPECT_FALSE(batch_verify(pk.vk, publics, swapped, 99));
  // Same seed, same proofs; another seed, other proofs that verify too.
  const auto again = prove(pk, ws, kSeed + 12);
  EXPECT_EQ(again[0].a, proofs[0].a);
  const auto other = prove(pk, ws, kSeed + 13);
  EXPECT_NE(other[0].a, proofs[0].a);
  EXPECT_TRUE(verify(pk.vk, publics[0], other[0]));
  const bn254::PreparedVerifyingKey pvk = prepare(pk.vk);
  EXPECT_EQ(pvk.alpha_beta, bn254::pairing(pk.vk.alpha_g1, pk.vk.beta_g2));
  EXPECT_TRUE(verify(pvk, publics[3], proofs[3]));
  // A key for the same circuit from other toxic waste does not accept these proofs.
  const bn254::ProvingKey other_key = setup(c0.r1cs, kSeed + 14, {}, kSnarkjsConvention);
  EXPECT_FALSE(verify(other_key.vk, publics[0], proofs[0]));
}

TEST(Bn254Groth16, UnsatisfiedWitnessesAreRejected) {
  const Circuit c = make_circuit({1, 8, 3}, kSeed + 30);
  const bn254::ProvingKey pk = setup(c.r1cs, kSeed + 31, {}, kSnarkjsConvention);
  // A range-check bit set to 2: witness_from_assignment names the constraint.
  std::vector<Fr> z = c.z;
  z[c.r1cs.num_inputs + 1] = Fr::from_u64(2);
  EXPECT_THROW(witness_from_assignment(c.r1cs, z), WitnessError);
  // A prover handed a, b, c that break a·b = c at some row refuses to prove.
  bn254::Witness w = witness_from_assignment(c.r1cs, c.z);
  std::vector<Fr> a(w.a.begin(), w.a.end());
  a[2] += Fr::one();
  w.a = std::move(a);
  EXPECT_THROW(prove(pk, std::vector<bn254::Witness>{w}, 1), WitnessError);
}

}  // namespace
}  // namespace pp::test

namespace pp::test {
namespace {

// A point on BN254's twist outside the order-r subgroup (the twist's cofactor is large).
bn254::G2Affine g2_off_subgroup() {
  for (uint64_t i = 1;; ++i) {
    bn254::G2Affine p;
    p.x = bn254::Fp2{bn254::Fp::from_u64(i), bn254::Fp::zero()};
    if (sqrt(p.y, p.x.sqr() * p.x + bn254::G2Curve::b) && !is_in_subgroup(p)) return p;
  }
}

// Ethereum's byte form: A, B, C uncompressed big-endian, B's coordinates c1 first (EIP-197).
TEST(Bn254ProofBytes, EthereumLayoutRoundTripAndRejections) {
  const Circuit c = make_circuit({1, 8, 3}, kSeed + 40);
  const bn254::ProvingKey pk = setup(c.r1cs, kSeed + 41, {}, kSnarkjsConvention);
  const bn254::Proof p = prove(pk, std::vector<bn254::Witness>{witness_from_assignment(c.r1cs, c.z)}, kSeed + 42)[0];
  const auto bytes = p.to_bytes();
  static_assert(bn254::Proof::kBytes == 256);
  // The layout, coordinate by coordinate.
  uint8_t want[32];
  p.a.y.to_bytes_be(want);
  EXPECT_TRUE(std::equal(want, want + 32, bytes.begin() + 32)) << "A.y at 32";
  p.b.x.c1.to_bytes_be(want);
  EXPECT_TRUE(std::equal(want, want + 32, bytes.begin() + 64)) << "B.x.c1 at 64";
  p.b.y.c0.to_bytes_be(want);
  EXPECT_TRUE(std::equal(want, want + 32, bytes.begin() + 160)) << "B.y.c0 at 160";
  p.c.x.to_bytes_be(want);
  EXPECT_TRUE(std::equal(want, want + 32, bytes.begin() + 192)) << "C.x at 192";
  const bn254::Proof back = bn254::Proof::from_bytes(bytes);
  EXPECT_TRUE(back.a == p.a && back.b == p.b && back.c == p.c);
  EXPECT_TRUE(verify(pk.vk, c.publics, back));

  auto rejects = [&](std::array<uint8_t, 256> b, const std::string& reason) {
    try {
      (void)bn254::Proof::from_bytes(b);
      ADD_FAILURE() << "accepted; expected: " << reason;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
    }
  };
  auto b = bytes;
  std::fill(b.begin(), b.begin() + 32, 0xff);  // A.x >= p
  rejects(b, "proof.a: a coordinate is not below");
  b = bytes;
  b[255] ^= 1;  // C.y changed: off the curve
  rejects(b, "proof.c: not on the curve");
  b = bytes;
  std::fill(b.begin(), b.begin() + 64, 0);  // A = infinity
  rejects(b, "proof.a: point at infinity");
  b = bytes;
  bn254::Proof q = p;
  q.b = g2_off_subgroup();
  const auto off = q.to_bytes();
  std::copy(off.begin() + 64, off.begin() + 192, b.begin() + 64);
  rejects(b, "proof.b: not in the prime-order subgroup");
}

}  // namespace
}  // namespace pp::test
