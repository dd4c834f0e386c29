// SPDX-License-Identifier: Apache-2.0 OR MIT
// Groth16 end to end on the CPU: setup -> prove -> verify, tampering, batches, bad inputs.
#include <gtest/gtest.h>

#include <array>
#include <fstream>
#include <string>
#include <iterator>
#include <random>

#include "proofpipe/groth16/prover.hpp"
#include "proofpipe/groth16/synthetic.hpp"
#include "proofpipe/io/witness.hpp"
#include "proofpipe/pairing/pairing.hpp"

namespace pp::test {
namespace {

constexpr uint64_t kSeed = 0x67726f7468313600ULL;

struct Fixture {
  SyntheticOptions opts;
  R1cs r1cs;
  ProvingKey pk;
  std::vector<Witness> witnesses;
  std::vector<std::vector<Fr>> publics;  // without the leading 1
};

Fixture make_fixture(int lg, std::size_t partitions, uint64_t seed = kSeed) {
  Fixture f;
  f.opts.lg_constraints = lg;
  f.opts.num_public_inputs = 3;
  f.opts.seed = seed;
  f.r1cs = make_porep_like_r1cs(f.opts);
  f.pk = setup(f.r1cs, seed + 1);
  for (std::size_t p = 0; p < partitions; ++p) {
    const std::vector<Fr> z = make_witness(f.r1cs, f.opts, seed + 100 + p);
    f.witnesses.push_back(witness_from_assignment(f.r1cs, z));
    f.publics.emplace_back(z.begin() + 1, z.begin() + std::ptrdiff_t(f.r1cs.num_inputs));
  }
  return f;
}

class ProveVerify : public ::testing::TestWithParam<int> {};

TEST_P(ProveVerify, ValidProofVerifiesAndTamperingFails) {
  const Fixture f = make_fixture(GetParam(), 1);
  const std::vector<Proof> proofs = prove(f.pk, f.witnesses, kSeed);
  ASSERT_EQ(proofs.size(), 1u);
  const Proof& p = proofs[0];
  ASSERT_FALSE(p.a.is_infinity());
  ASSERT_FALSE(p.c.is_infinity());
  EXPECT_TRUE(verify(f.pk.vk, f.publics[0], p));

  std::vector<Fr> tampered = f.publics[0];
  tampered[0] += Fr::one();
  EXPECT_FALSE(verify(f.pk.vk, tampered, p)) << "tampered public input accepted";

  // A flipped byte either fails to decode or fails to verify.
  auto bytes = p.to_bytes();
  for (std::size_t at : {std::size_t(5), std::size_t(60), std::size_t(150)}) {
    auto bad = bytes;
    bad[at] ^= 0x01;
    bool accepted = false;
    try {
      accepted = verify(f.pk.vk, f.publics[0], Proof::from_bytes(std::span<const uint8_t, Proof::kBytes>(bad)));
    } catch (const std::invalid_argument&) {
    }
    EXPECT_FALSE(accepted) << "proof with byte " << at << " flipped accepted";
  }
  EXPECT_TRUE(verify(f.pk.vk, f.publics[0], Proof::from_bytes(std::span<const uint8_t, Proof::kBytes>(bytes))));
}

INSTANTIATE_TEST_SUITE_P(Sizes, ProveVerify, ::testing::Range(4, 17),
                         [](const auto& info) { return "lg" + std::to_string(info.param); });

TEST(Groth16, SeveralPartitionsAndBatchVerify) {
  const Fixture f = make_fixture(8, 10);
  const std::vector<Proof> proofs = prove(f.pk, f.witnesses, kSeed);
  ASSERT_EQ(proofs.size(), 10u);
  for (std::size_t i = 0; i < proofs.size(); ++i) EXPECT_TRUE(verify(f.pk.vk, f.publics[i], proofs[i])) << i;
  EXPECT_TRUE(batch_verify(f.pk.vk, f.publics, proofs, 7));
  // One proof verified against another partition's inputs: the batch must fail.
  std::vector<Proof> swapped = proofs;
  std::swap(swapped[3], swapped[4]);
  EXPECT_FALSE(batch_verify(f.pk.vk, f.publics, swapped, 7));
  std::vector<std::vector<Fr>> bad_inputs = f.publics;
  bad_inputs[9][1] += Fr::one();
  EXPECT_FALSE(batch_verify(f.pk.vk, bad_inputs, proofs, 7));
}

TEST(Groth16, PreparedKeyVerifiesLikeThePlainKey) {
  const Fixture f = make_fixture(7, 3);
  const auto proofs = prove(f.pk, f.witnesses, kSeed);
  const PreparedVerifyingKey pvk = prepare(f.pk.vk);
  EXPECT_EQ(pvk.alpha_beta, pairing(f.pk.vk.alpha_g1, f.pk.vk.beta_g2));
  for (std::size_t i = 0; i < proofs.size(); ++i) {
    EXPECT_TRUE(verify(pvk, f.publics[i], proofs[i]));
    EXPECT_FALSE(verify(pvk, f.publics[(i + 1) % proofs.size()], proofs[i]));
  }
}

TEST(Groth16, ProofFromAnotherKeyFails) {
  const Fixture f = make_fixture(6, 1);
  const ProvingKey other = setup(f.r1cs, kSeed + 999);
  const std::vector<Proof> proofs = prove(other, f.witnesses, kSeed);
  EXPECT_TRUE(verify(other.vk, f.publics[0], proofs[0]));
  EXPECT_FALSE(verify(f.pk.vk, f.publics[0], proofs[0]));
}

TEST(Groth16, ProofsAreRandomisedButDeterministicPerSeed) {
  const Fixture f = make_fixture(6, 1);
  const auto p1 = prove(f.pk, f.witnesses, 1), p2 = prove(f.pk, f.witnesses, 1), p3 = prove(f.pk, f.witnesses, 2);
  EXPECT_EQ(p1[0].to_bytes(), p2[0].to_bytes());
  EXPECT_NE(p1[0].to_bytes(), p3[0].to_bytes());
  EXPECT_TRUE(verify(f.pk.vk, f.publics[0], p3[0]));
}

// Known answers: the proof bytes for fixed circuits, keys, witnesses and randomisers, recorded
// from the prover before the G1 MSMs that only C uses were merged into one (d5d60ca). Any change
// to how the prover computes the sums must leave them as they are (the GPU prover's proofs are
// compared with these bit for bit). One witness mostly 0/1 (the split MSMs' batch additions),
// one mostly other values (their Pippenger tails).
std::string hex(const std::array<uint8_t, Proof::kBytes>& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

TEST(Groth16, ProofBytesAreKnownAnswers) {
  struct Case {
    int lg;
    double zeros, ones;
    const char* expected;
  };
  const Case cases[] = {
      {9, 0.45, 0.45,
         "89910c2e4ea5378b9b6e803f507fd96785f54c344a66ca5cc04475a6511bd9236f14e3090e82441a99c660bf55db6949"
         "9840bc64e88f44027ebcd458b90f38a18d7eb30069594b607dec493fbd529712437067ac4be427956c2c9fd33ad84d9c"
         "09d51259ddb89887a0c6183271cecaae0ca2131ce9a772e93e8c4b91cafe95eca55fc4106e9e8c52731854a1eafe0746"
         "99330e048561490bc9dda90dee9895128905c71400b9f252571341e2a073f6618e93e4baa229b1d44cc8fce59c5df6e7"},
      {10, 0.10, 0.10,
         "b7d0479e234983dd0b4ff7509c765aa46b00acfd58acd0b4f649dd3fa880852e48dae1e5cb942ce94c0d3f93bd7a2fe3"
         "85b43ea86ebdf242eb259265e48453bb089227610f5e196b5f8c21b9316b2adec4022da04fcddfa47f1c204a6d882268"
         "0c0c6810d9e485106ac478135e2a7cfb804da1d0a619ffea5e135c02f7f4300928fed1053f7e20668f80eb9fe20ecce5"
         "abbb802de5cd360907dc30fa1d025d95ccdc1c70037d551ad0ddcf06fccfa62cf63bfa4242974524568cbaba1dd6b421"},
  };
  for (const Case& k : cases) {
    SyntheticOptions o;
    o.lg_constraints = k.lg;
    o.num_public_inputs = 3;
    o.zero_fraction = k.zeros;
    o.one_fraction = k.ones;
    o.seed = kSeed;
    const R1cs r1cs = make_porep_like_r1cs(o);
    const ProvingKey pk = setup(r1cs, kSeed + 1);
    const std::vector<Witness> w{witness_from_assignment(r1cs, make_witness(r1cs, o, kSeed + 100))};
    const Proof proof = prove(pk, w, kSeed).at(0);
    EXPECT_EQ(hex(proof.to_bytes()), k.expected) << "lg " << k.lg;
  }
}

TEST(Groth16, UnsatisfiedWitnessIsRejectedWithTheConstraint) {
  const Fixture f = make_fixture(6, 1);
  const std::vector<Fr> z = make_witness(f.r1cs, f.opts, kSeed + 100);
  std::vector<Fr> bad = z;
  bad.back() += Fr::one();
  try {
    (void)witness_from_assignment(f.r1cs, bad);
    FAIL() << "unsatisfied assignment accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("constraint"), std::string::npos) << e.what();
  }
  Witness w = f.witnesses[0];
  w.c.at_mut(3) += Fr::one();
  try {
    (void)prove(f.pk, std::vector<Witness>{w}, kSeed);
    FAIL() << "inconsistent a, b, c accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("constraint 3"), std::string::npos) << e.what();
  }
}

// check_witness is its two halves: the shape (cheap, no row read) and the rows (a·b = c), which
// the GPU prover runs beside its kernels.
TEST(Groth16, WitnessShapeAndRowsAreCheckedApart) {
  const Fixture f = make_fixture(6, 1);
  Witness w = f.witnesses[0];
  w.c.at_mut(5) += Fr::one();
  EXPECT_EQ(check_witness_shape(f.pk, w, 2).size(), check_witness(f.pk, f.witnesses[0], 2).size());
  try {
    check_witness_values(w, 2);
    FAIL() << "an unsatisfied row passed";
  } catch (const WitnessError& e) {
    EXPECT_NE(std::string(e.what()).find("partition 2: a·b != c at constraint 5"), std::string::npos) << e.what();
  }
  EXPECT_THROW(check_witness(f.pk, w, 2), WitnessError);
  check_witness_values(f.witnesses[0], 0);  // a satisfied witness passes
  Witness short_b = f.witnesses[0];
  std::vector<Fr> b = short_b.b.to_vector();
  b.pop_back();
  short_b.b = std::move(b);
  EXPECT_THROW(check_witness_shape(f.pk, short_b, 0), WitnessError);
}

// Values that are not field elements (a caller's borrowed arrays are checked only here) are named
// by vector and index, as a ScalarRangeError; the lowest failing row is named, whatever failed.
TEST(Groth16, ValuesOutOfRangeAreNamed) {
  const Fixture f = make_fixture(6, 1);
  const auto message = [&](const Witness& w) -> std::string {
    try {
      check_witness_values(w, 1);
    } catch (const ScalarRangeError& e) {
      return std::string("range: ") + e.what();
    } catch (const WitnessError& e) {
      return std::string("row: ") + e.what();
    }
    return "passed";
  };
  const auto unreduced = [](Fr& x) { x.l[3] = ~uint64_t(0); };
  ASSERT_EQ(message(f.witnesses[0]), "passed");
  ASSERT_GE(f.witnesses[0].aux.size(), 3u);
  ASSERT_GE(f.witnesses[0].a.size(), 10u);
  for (const char* vector : {"input", "aux", "a", "b", "c"}) {
    Witness w = f.witnesses[0];
    const std::string name(vector);
    const std::size_t at = name == "input" ? 0 : 2;
    HostArray<Fr>& v = name == "input" ? w.input : name == "aux" ? w.aux : name == "a" ? w.a : name == "b" ? w.b : w.c;
    unreduced(v.at_mut(at));
    EXPECT_EQ(message(w), "range: partition 1: " + name + "[" + std::to_string(at) + "] is not a reduced scalar (limbs >= r)");
  }
  // The modulus itself is out of range; r - 1 is in range (and breaks the row, whose a is not 0).
  Witness w = f.witnesses[0];
  std::size_t k = 0;
  while (k < w.a.size() && w.a[k].is_zero()) ++k;
  ASSERT_LT(k, w.a.size());
  Fr& x = w.b.at_mut(k);
  for (int i = 0; i < 4; ++i) x.l[i] = Fr::Consts::modulus.v[i];
  EXPECT_EQ(message(w), "range: partition 1: b[" + std::to_string(k) + "] is not a reduced scalar (limbs >= r)");
  x.l[0] -= 1;
  ASSERT_NE(x, f.witnesses[0].b[k]);
  EXPECT_EQ(message(w).rfind("row: partition 1: a·b != c at constraint " + std::to_string(k), 0), 0u) << message(w);
  // A row failing below a value out of range is named first, and the other way round.
  w = f.witnesses[0];
  w.c.at_mut(3) += Fr::one();
  unreduced(w.a.at_mut(7));
  EXPECT_EQ(message(w).rfind("row: partition 1: a·b != c at constraint 3", 0), 0u) << message(w);
  unreduced(w.c.at_mut(2));
  EXPECT_EQ(message(w), "range: partition 1: c[2] is not a reduced scalar (limbs >= r)");
}

TEST(Groth16, KeyForAnotherCircuitIsRejected) {
  const Fixture small = make_fixture(6, 1);
  const Fixture big = make_fixture(7, 1);
  EXPECT_THROW((void)prove(small.pk, big.witnesses, kSeed), std::invalid_argument);
  Witness w = small.witnesses[0];
  std::vector<Fr> aux = w.aux.to_vector();
  aux.pop_back();
  w.aux = std::move(aux);
  EXPECT_THROW((void)prove(small.pk, std::vector<Witness>{w}, kSeed), std::invalid_argument);
}

// The one description of a key's queries: counts from the key, checks that name what is wrong,
// and variable maps that select exactly the key's A and B points.
TEST(QueryLayout, DescribesTheKeyAndRejectsWitnessesOfAnotherKey) {
  const Fixture f = make_fixture(6, 1);
  const QueryLayout q = QueryLayout::of(f.pk);
  EXPECT_EQ(q.num_inputs, f.pk.vk.ic.size());
  EXPECT_EQ(q.num_aux, f.pk.l.size());
  EXPECT_EQ(q.h_points, f.pk.h.size());
  EXPECT_EQ(q.domain_size(), f.pk.h.size() + 1);  // bellman: n - 1 H points
  const Witness& w = f.witnesses[0];
  EXPECT_NO_THROW(q.check_counts(w.a.size(), w.input.size(), w.aux.size(), ""));
  EXPECT_NO_THROW(q.check_densities(w.densities, ""));
  const std::vector<uint32_t> a = q.a_variables(w.densities), b = q.b_variables(w.densities);
  EXPECT_EQ(a.size(), f.pk.a.size());
  EXPECT_EQ(b.size(), f.pk.b_g1.size());
  // Every A point's scalar is the variable's value (independent recount over z = input ‖ aux).
  const std::vector<Fr> scalars = gather_scalars(w.input, w.aux, a);
  for (std::size_t p = 0; p < a.size(); ++p)
    ASSERT_EQ(scalars[p], a[p] < w.input.size() ? w.input[a[p]] : w.aux[a[p] - w.input.size()]) << p;

  auto message = [&](auto&& body) {
    try {
      body();
    } catch (const WitnessError& e) {
      return std::string(e.what());
    }
    return std::string("(no WitnessError)");
  };
  EXPECT_NE(message([&] { q.check_counts(w.a.size(), w.input.size() + 1, w.aux.size(), "p0: "); })
                .find("p0: the input assignment has"),
            std::string::npos);
  EXPECT_NE(message([&] { q.check_counts(w.a.size(), w.input.size(), w.aux.size() - 1, ""); }).find("aux assignment"),
            std::string::npos);
  // A witness of half the rows has a smaller domain than the key's: bellman's H does not fit.
  EXPECT_NE(message([&] { q.check_counts(q.domain_size() / 2, w.input.size(), w.aux.size(), ""); }).find("rows do not fit"),
            std::string::npos);
  EXPECT_NE(message([&] { q.check_counts(q.domain_size() + 1, w.input.size(), w.aux.size(), ""); }).find("rows do not fit"),
            std::string::npos);
  Densities d = w.densities;
  d.a_aux[0] ^= 1;  // one more or one fewer A point than the key has
  EXPECT_NE(message([&] { q.check_densities(d, ""); }).find("the A query"), std::string::npos);

  // Counts that cannot belong to one key.
  EXPECT_THROW(QueryLayout::of_sizes(HBasis::bellman, 0, 63, 10, 5, 5, 5), std::invalid_argument);
  EXPECT_THROW(QueryLayout::of_sizes(HBasis::bellman, 2, 63, 10, 5, 5, 4), std::invalid_argument);
  EXPECT_THROW(QueryLayout::of_sizes(HBasis::bellman, 2, 63, 10, 13, 5, 5), std::invalid_argument);
  EXPECT_THROW(QueryLayout::of_sizes(HBasis::snarkjs, 2, 48, 10, 5, 5, 5), std::invalid_argument);
  EXPECT_THROW(QueryLayout::of_sizes(HBasis::bellman, 2, 63, uint64_t(1) << 32, 5, 5, 5), std::invalid_argument);
  EXPECT_EQ(QueryLayout::of_sizes(HBasis::snarkjs, 2, 64, 10, 5, 5, 5).lg(), 6);
  EXPECT_EQ(QueryLayout::of_sizes(HBasis::bellman, 2, 63, 10, 5, 5, 5).lg(), 6);
}

TEST(Groth16, WrongInputCountIsAnError) {
  const Fixture f = make_fixture(5, 1);
  const auto proofs = prove(f.pk, f.witnesses, kSeed);
  std::vector<Fr> short_inputs(f.publics[0].begin(), f.publics[0].end() - 1);
  EXPECT_THROW((void)verify(f.pk.vk, short_inputs, proofs[0]), std::invalid_argument);
}

TEST(WitnessFile, RoundTripAndRejection) {
  const Fixture f = make_fixture(6, 1);
  const auto path = std::filesystem::temp_directory_path() / "proofpipe_test_witness.ppw";
  write_witness(path, f.witnesses[0]);
  const Witness back = read_witness(path);
  EXPECT_EQ(back.a, f.witnesses[0].a);
  EXPECT_EQ(back.c, f.witnesses[0].c);
  EXPECT_EQ(back.aux, f.witnesses[0].aux);
  EXPECT_EQ(back.densities.b_aux, f.witnesses[0].densities.b_aux);
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(path);
  // The header alone (what the daemon checks at Submit): the counts, and the size they fix.
  const WitnessHeader h = parse_witness_header(bytes, "w");
  EXPECT_EQ(h.rows, f.witnesses[0].a.size());
  EXPECT_EQ(h.inputs, f.witnesses[0].input.size());
  EXPECT_EQ(h.aux, f.witnesses[0].aux.size());
  EXPECT_EQ(h.file_bytes, bytes.size());
  for (std::size_t cut : {std::size_t(0), std::size_t(7), std::size_t(20), bytes.size() / 2, bytes.size() - 1}) {
    EXPECT_THROW((void)parse_witness(std::span<const uint8_t>(bytes.data(), cut), "w"), std::runtime_error) << cut;
    EXPECT_THROW((void)parse_witness_header(std::span<const uint8_t>(bytes.data(), cut), "w"), std::runtime_error)
        << cut;
  }
  auto bad = bytes;
  for (int i = 0; i < 32; ++i) bad[32 + i] = 0xff;  // a[0] >= r
  try {
    (void)parse_witness(bad, "w");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("a[0]"), std::string::npos) << e.what();
  }
  auto huge = bytes;
  huge[8 + 7] = 0x10;  // m = 2^60 + ...: must be a size error, not an allocation
  EXPECT_THROW((void)parse_witness(huge, "w"), std::runtime_error);
  EXPECT_THROW((void)parse_witness_header(huge, "w"), std::runtime_error);
  bytes.push_back(0);
  EXPECT_THROW((void)parse_witness(bytes, "w"), std::runtime_error);
  EXPECT_THROW((void)parse_witness_header(bytes, "w"), std::runtime_error);
}

TEST(Decimal, RoundTripAndRejection) {
  std::mt19937_64 rng(kSeed);
  for (int i = 0; i < 200; ++i) {
    const Fr x = Fr::from_u64(rng()) * Fr::from_u64(rng()) * Fr::from_u64(rng()) * Fr::from_u64(rng());
    const auto back = fr_from_decimal(to_decimal(x));
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, x);
  }
  EXPECT_EQ(to_decimal(Fr::zero()), "0");
  EXPECT_EQ(to_decimal(Fr::from_u64(1234567890123ULL)), "1234567890123");
  EXPECT_EQ(to_decimal(-Fr::one()),
            "52435875175126190479447740508185965837690552500527637822603658699938581184512");
  EXPECT_FALSE(fr_from_decimal("52435875175126190479447740508185965837690552500527637822603658699938581184513"));
  EXPECT_FALSE(fr_from_decimal(""));
  EXPECT_FALSE(fr_from_decimal("12a"));
  EXPECT_FALSE(fr_from_decimal("-1"));
  EXPECT_FALSE(fr_from_decimal(std::string(100, '9')));
}

}  // namespace
}  // namespace pp::test
