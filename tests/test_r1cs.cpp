// SPDX-License-Identifier: Apache-2.0 OR MIT
// R1CS validation, parallel SpMV, densities, and the synthetic PoRep-shaped circuit family.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "proofpipe/groth16/r1cs.hpp"
#include "proofpipe/groth16/synthetic.hpp"

namespace pp::test {
namespace {

using Row = std::vector<std::pair<uint32_t, int64_t>>;

Fr fr(int64_t v) { return v >= 0 ? Fr::from_u64(uint64_t(v)) : -Fr::from_u64(uint64_t(-v)); }

SparseMatrix csr(const std::vector<Row>& rows) {
  SparseMatrix m;
  m.row_start.push_back(0);
  for (const Row& r : rows) {
    for (auto [col, v] : r) {
      m.column.push_back(col);
      m.value.push_back(fr(v));
    }
    m.row_start.push_back(m.column.size());
  }
  return m;
}

// x^3 + x + 5 = out with one public input: z = (1, out, x, s1 = x·x, y = s1·x).
R1cs cubic() {
  R1cs r;
  r.num_inputs = 2;
  r.num_aux = 3;
  r.a = csr({{{2, 1}}, {{3, 1}}, {{4, 1}, {2, 1}, {0, 5}}});
  r.b = csr({{{2, 1}}, {{2, 1}}, {{0, 1}}});
  r.c = csr({{{3, 1}}, {{4, 1}}, {{1, 1}}});
  return r;
}

std::vector<Fr> cubic_witness(int64_t x) { return {fr(1), fr(x * x * x + x + 5), fr(x), fr(x * x), fr(x * x * x)}; }

std::string validate_message(const R1cs& r) {
  try {
    r.validate();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

// Reference SpMV with no shortcuts and no threads.
Fr naive_dot(const SparseMatrix& m, std::size_t row, const std::vector<Fr>& z) {
  Fr acc = Fr::zero();
  for (uint64_t e = m.row_start[row]; e < m.row_start[row + 1]; ++e) acc += m.value[e] * z[m.column[e]];
  return acc;
}

// ---------------------------------------------------------------- hand-built circuits

TEST(R1csHand, CubicEvaluatesAndSatisfies) {
  const R1cs r = cubic();
  EXPECT_NO_THROW(r.validate());
  const std::vector<Fr> z = cubic_witness(3);
  const Evaluations ev = evaluate(r, z);
  ASSERT_EQ(ev.a.size(), 3u);
  EXPECT_EQ(ev.a, (std::vector<Fr>{fr(3), fr(9), fr(35)}));
  EXPECT_EQ(ev.b, (std::vector<Fr>{fr(3), fr(3), fr(1)}));
  EXPECT_EQ(ev.c, (std::vector<Fr>{fr(9), fr(27), fr(35)}));
  EXPECT_EQ(first_unsatisfied(r, z), std::nullopt);
  // Negative and large values go through the general multiplication path.
  EXPECT_EQ(first_unsatisfied(r, cubic_witness(-123456)), std::nullopt);
}

TEST(R1csHand, WrongWitnessReportsFirstFailingConstraint) {
  const R1cs r = cubic();
  auto with = [](std::size_t i, int64_t v) {
    std::vector<Fr> z = cubic_witness(3);
    z[i] = fr(v);
    return z;
  };
  EXPECT_EQ(first_unsatisfied(r, with(2, 4)), std::optional<std::size_t>(0));   // x: breaks rows 0..2
  EXPECT_EQ(first_unsatisfied(r, with(3, 10)), std::optional<std::size_t>(0));  // s1: rows 0 and 1
  EXPECT_EQ(first_unsatisfied(r, with(4, 28)), std::optional<std::size_t>(1));  // y: rows 1 and 2
  EXPECT_EQ(first_unsatisfied(r, with(1, 36)), std::optional<std::size_t>(2));  // out: row 2 only
  EXPECT_EQ(first_unsatisfied(r, with(0, 2)), std::optional<std::size_t>(2));   // the constant
}

TEST(R1csHand, WrongWitnessSizeThrows) {
  const R1cs r = cubic();
  std::vector<Fr> z = cubic_witness(3);
  z.pop_back();
  EXPECT_THROW(evaluate(r, z), std::invalid_argument);
  EXPECT_THROW(first_unsatisfied(r, z), std::invalid_argument);
}

TEST(R1csHand, InconsistentMatricesThrowInsteadOfReadingOutOfBounds) {
  R1cs r = cubic();
  r.b.row_start.pop_back();
  EXPECT_THROW(evaluate(r, cubic_witness(3)), std::invalid_argument);
  r = cubic();
  r.c.column.pop_back();
  EXPECT_THROW(first_unsatisfied(r, cubic_witness(3)), std::invalid_argument);
  EXPECT_THROW(column_densities(r), std::invalid_argument);
}

TEST(R1csHand, EmptySystem) {
  R1cs r;
  r.num_inputs = 1;
  EXPECT_NO_THROW(r.validate());
  const std::vector<Fr> z = {Fr::one()};
  EXPECT_TRUE(evaluate(r, z).a.empty());
  EXPECT_EQ(first_unsatisfied(r, z), std::nullopt);
}

// ---------------------------------------------------------------- validate()

TEST(R1csValidate, BadColumnNamesMatrixRowAndEntry) {
  R1cs r = cubic();
  r.c = csr({{{3, 1}}, {{4, 1}, {5, 1}}, {{1, 1}}});  // row 1, entry 1: column 5 == num_variables
  const std::string msg = validate_message(r);
  EXPECT_NE(msg.find("matrix C"), std::string::npos) << msg;
  EXPECT_NE(msg.find("row 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("entry 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("column 5"), std::string::npos) << msg;
}

TEST(R1csValidate, FirstBadColumnIsReportedEvenWithManyBadEntries) {
  // Enough entries for several parallel tasks; the lowest bad one must win.
  R1cs r;
  r.num_inputs = 1;
  r.num_aux = 3;
  std::vector<Row> rows(300000, Row{{0, 1}, {1, 1}});
  for (std::size_t i = 123457; i < rows.size(); i += 1000) rows[i][1].first = 77;
  r.a = csr(rows);
  r.b = csr(std::vector<Row>(rows.size(), Row{{0, 1}}));
  r.c = csr(std::vector<Row>(rows.size(), Row{}));
  const std::string msg = validate_message(r);
  EXPECT_NE(msg.find("matrix A, row 123457, entry 1 (index 246915)"), std::string::npos) << msg;
}

TEST(R1csValidate, RowCountMismatch) {
  R1cs r = cubic();
  r.b = csr({{{2, 1}}, {{2, 1}}});
  const std::string msg = validate_message(r);
  EXPECT_NE(msg.find("different row counts"), std::string::npos) << msg;
  EXPECT_NE(msg.find("B 2"), std::string::npos) << msg;
}

TEST(R1csValidate, NonMonotoneRowStart) {
  R1cs r = cubic();
  r.a.row_start = {0, 2, 1, 5};
  const std::string msg = validate_message(r);
  EXPECT_NE(msg.find("matrix A"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not monotone at row 1"), std::string::npos) << msg;
}

TEST(R1csValidate, RowStartMustStartAtZeroAndEndAtEntryCount) {
  R1cs r = cubic();
  r.b.row_start[0] = 1;
  EXPECT_NE(validate_message(r).find("matrix B: row_start[0] = 1"), std::string::npos) << validate_message(r);
  r = cubic();
  r.c.row_start.back() = 2;
  EXPECT_NE(validate_message(r).find("matrix C: row_start[3] = 2"), std::string::npos) << validate_message(r);
  r = cubic();
  r.a.value.pop_back();
  EXPECT_NE(validate_message(r).find("matrix A: column has 5 entries but value has 4"), std::string::npos)
      << validate_message(r);
}

TEST(R1csValidate, UnreducedValueAndMissingConstant) {
  R1cs r = cubic();
  constexpr Limbs<4> m = FrParams::modulus;
  for (int i = 0; i < 4; ++i) r.b.value[2].l[i] = m.v[i];
  const std::string msg = validate_message(r);
  EXPECT_NE(msg.find("matrix B, row 2, entry 0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not a reduced Fr"), std::string::npos) << msg;
  r = cubic();
  r.num_inputs = 0;
  EXPECT_NE(validate_message(r).find("num_inputs"), std::string::npos);
}

// ---------------------------------------------------------------- densities

TEST(R1csDensities, CubicHandExample) {
  const Densities d = column_densities(cubic());
  ASSERT_EQ(d.a_aux.size(), 1u);
  EXPECT_EQ(d.a_aux[0], 0b111u);   // x, s1, y all in A
  EXPECT_EQ(d.b_aux[0], 0b001u);   // only x in B
  EXPECT_EQ(d.b_input[0], 0b01u);  // the constant in B, the public output not
}

TEST(R1csDensities, AcrossWordBoundaries) {
  R1cs r;
  r.num_inputs = 66;  // inputs span two words
  r.num_aux = 130;    // aux spans three words
  r.a = csr({{{66 + 0, 1}, {66 + 64, 1}}, {{66 + 129, 0}}});  // a zero coefficient still counts
  r.b = csr({{{65, 1}, {66 + 63, 1}}, {{66 + 64, 1}, {66 + 64, 1}}});
  r.c = csr({{{66 + 1, 1}}, {}});
  ASSERT_NO_THROW(r.validate());
  const Densities d = column_densities(r);
  ASSERT_EQ(d.a_aux.size(), 3u);
  ASSERT_EQ(d.b_input.size(), 2u);
  EXPECT_EQ(d.a_aux, (std::vector<uint64_t>{1, 1, uint64_t(1) << 1}));
  EXPECT_EQ(d.b_aux, (std::vector<uint64_t>{uint64_t(1) << 63, 1, 0}));
  EXPECT_EQ(d.b_input, (std::vector<uint64_t>{0, uint64_t(1) << 1}));
  EXPECT_TRUE(test_bit(d.a_aux, 129));
  EXPECT_FALSE(test_bit(d.a_aux, 1));  // aux 1 only in C
  EXPECT_EQ(count_bits(d.a_aux), 3u);
}

// ---------------------------------------------------------------- parallel SpMV

TEST(R1csEvaluate, MatchesSerialReferenceOnSyntheticCircuit) {
  SyntheticOptions o;
  o.lg_constraints = 13;
  const SyntheticCircuit sc = make_porep_like(o);
  // Once with the satisfying witness (mostly bits), once with arbitrary field values.
  std::vector<Fr> zr = sc.z;
  for (std::size_t i = 1; i < zr.size(); ++i) zr[i] = Fr::from_u64(i * 0x9e3779b97f4a7c15ULL) * zr[i - 1] + fr(7);
  for (const std::vector<Fr>* z : {&sc.z, static_cast<const std::vector<Fr>*>(&zr)}) {
    const Evaluations ev = evaluate(sc.r1cs, *z);
    ASSERT_EQ(ev.a.size(), sc.r1cs.num_constraints());
    for (std::size_t r = 0; r < sc.r1cs.num_constraints(); ++r) {
      ASSERT_EQ(ev.a[r], naive_dot(sc.r1cs.a, r, *z)) << "row " << r;
      ASSERT_EQ(ev.b[r], naive_dot(sc.r1cs.b, r, *z)) << "row " << r;
      ASSERT_EQ(ev.c[r], naive_dot(sc.r1cs.c, r, *z)) << "row " << r;
    }
  }
  const Evaluations ev = evaluate(sc.r1cs, sc.z);
  for (std::size_t r = 0; r < ev.a.size(); ++r) ASSERT_EQ(ev.a[r] * ev.b[r], ev.c[r]) << "row " << r;
}

TEST(R1csEvaluate, FirstUnsatisfiedIsLowestFailingRowInLargeCircuit) {
  SyntheticOptions o;
  o.lg_constraints = 15;
  SyntheticCircuit sc = make_porep_like(o);
  // Each synthetic row references only earlier aux variables and the one it defines, so
  // corrupting aux v breaks row v first (a bit becomes 2, failing even its booleanity row).
  for (std::size_t v : {std::size_t(0), std::size_t(20000), sc.r1cs.num_constraints() - 1}) {
    std::vector<Fr> z = sc.z;
    z[sc.r1cs.num_inputs + v] += fr(2);
    EXPECT_EQ(first_unsatisfied(sc.r1cs, z), std::optional<std::size_t>(v));
  }
}

// ---------------------------------------------------------------- synthetic circuits

struct Kinds {
  std::size_t boolean = 0, pow = 0, mixing = 0, select = 0;
};

// Recognises the constraint kinds of the documented mix from the rows themselves.
Kinds classify(const R1cs& r) {
  Kinds k;
  auto len = [](const SparseMatrix& m, std::size_t i) { return m.row_start[i + 1] - m.row_start[i]; };
  for (std::size_t i = 0; i < r.num_constraints(); ++i) {
    const uint64_t a0 = r.a.row_start[i], b0 = r.b.row_start[i];
    const bool b_const = len(r.b, i) == 1 && r.b.column[b0] == 0;
    if (len(r.c, i) == 0 && len(r.a, i) == 2 && len(r.b, i) == 1 && r.a.column[a0] == 0 &&
        r.a.column[a0 + 1] == r.b.column[b0] && r.a.value[a0] == Fr::one() && r.a.value[a0 + 1] == -Fr::one())
      ++k.boolean;
    else if (len(r.a, i) == 1 && len(r.b, i) == 1 && len(r.c, i) == 1 && !b_const)
      ++k.pow;
    else if (b_const && len(r.a, i) >= 3)
      ++k.mixing;
    else if (!b_const && len(r.a, i) == 2 && len(r.c, i) == 2)
      ++k.select;
  }
  return k;
}

// The 0/1 split is stratified per block, so fractions are tight except where a circuit is only
// a few dozen rows; "other" is structural (round(other·rows) per block).
double value_tolerance(std::size_t aux) { return aux < 100 ? 0.2 : aux < 1000 ? 0.05 : 0.01; }

class SyntheticShape : public ::testing::TestWithParam<int> {};

TEST_P(SyntheticShape, SatisfiesAndMatchesPorepShape) {
  SyntheticOptions o;
  o.lg_constraints = GetParam();
  const SyntheticCircuit sc = make_porep_like(o);
  const R1cs& r = sc.r1cs;
  const std::size_t n = (std::size_t(1) << o.lg_constraints) - 9;

  // Documented sizes: constraints + inputs (constant included) == 2^k, aux == constraints.
  EXPECT_EQ(r.num_inputs, 9u);
  EXPECT_EQ(r.num_constraints(), n);
  EXPECT_EQ(r.num_aux, n);
  EXPECT_EQ(sc.z.size(), 9 + n);
  const SyntheticSizes sz = synthetic_sizes(o);
  EXPECT_EQ(sz.num_constraints, n);
  ASSERT_NO_THROW(r.validate());
  EXPECT_EQ(first_unsatisfied(r, sc.z), std::nullopt);

  const ShapeStats st = shape_stats(r, sc.z);
  std::printf("k=%2d rows=%8zu  A %.3f B %.3f C %.3f /row  A-aux %.2f%% B-aux %.2f%%  zero %.4f one %.4f other %.4f\n",
              o.lg_constraints, n, st.a_per_row, st.b_per_row, st.c_per_row, 100 * st.a_aux_density,
              100 * st.b_aux_density, st.zero_fraction, st.one_fraction, st.other_fraction);
  EXPECT_GE(st.a_aux_density, 0.99);
  EXPECT_GE(st.b_aux_density, 0.20);
  EXPECT_LE(st.b_aux_density, 0.30);
  EXPECT_DOUBLE_EQ(st.b_per_row, 1.0);  // every row has exactly one B entry, as in PoRep
  if (o.lg_constraints >= 10) {
    EXPECT_NEAR(st.a_aux_density, porep_shape::a_aux_density, 0.0005);
    EXPECT_NEAR(st.b_aux_density, porep_shape::b_aux_density, 0.003);
    EXPECT_NEAR(st.a_per_row, porep_shape::a_per_row, 0.01);
    EXPECT_NEAR(st.c_per_row, porep_shape::c_per_row, 0.01);
  }
  const double tol = value_tolerance(n);
  EXPECT_NEAR(st.zero_fraction, o.zero_fraction, tol);
  EXPECT_NEAR(st.one_fraction, o.one_fraction, tol);
  EXPECT_NEAR(st.other_fraction, 1 - o.zero_fraction - o.one_fraction, tol);

  // The documented constraint mix is there (x^5 rounds need a few dozen rows to fit).
  const Kinds k = classify(r);
  EXPECT_GT(k.boolean, 0u);
  EXPECT_GT(k.mixing, 0u);
  EXPECT_GT(k.select, 0u);
  if (o.lg_constraints >= 6) {
    EXPECT_GT(k.pow, 0u);
    EXPECT_EQ(k.pow % 3, 0u);
  }
  // Every public input is wired into some constraint.
  std::vector<bool> used(r.num_inputs, false);
  for (const SparseMatrix* m : {&r.a, &r.b, &r.c})
    for (uint32_t c : m->column)
      if (c < r.num_inputs) used[c] = true;
  for (std::size_t i = 0; i < r.num_inputs; ++i) EXPECT_TRUE(used[i]) << "input " << i;
}

INSTANTIATE_TEST_SUITE_P(K4to14, SyntheticShape, ::testing::Range(4, 15),
                         [](const ::testing::TestParamInfo<int>& p) { return "k" + std::to_string(p.param); });

TEST(Synthetic, WitnessSeedsGiveDifferentSatisfyingWitnesses) {
  SyntheticOptions o;
  o.lg_constraints = 12;
  const SyntheticCircuit sc = make_porep_like(o);
  const std::vector<Fr> z1 = make_witness(sc.r1cs, o, 1001);
  const std::vector<Fr> z2 = make_witness(sc.r1cs, o, 1002);
  EXPECT_EQ(first_unsatisfied(sc.r1cs, z1), std::nullopt);
  EXPECT_EQ(first_unsatisfied(sc.r1cs, z2), std::nullopt);
  std::size_t inputs_differ = 0, aux_differ = 0;
  for (std::size_t i = 1; i < sc.r1cs.num_inputs; ++i) inputs_differ += z1[i] != z2[i];
  for (std::size_t i = sc.r1cs.num_inputs; i < z1.size(); ++i) aux_differ += z1[i] != z2[i];
  EXPECT_EQ(inputs_differ, sc.r1cs.num_inputs - 1);
  EXPECT_GT(aux_differ, z1.size() / 4);
  // Both witnesses keep the value mix of the options.
  for (const auto* z : {&z1, &z2}) {
    const ShapeStats st = shape_stats(sc.r1cs, *z);
    EXPECT_NEAR(st.zero_fraction, o.zero_fraction, 0.01);
    EXPECT_NEAR(st.one_fraction, o.one_fraction, 0.01);
  }
  // make_porep_like's witness is the one for witness seed == opts.seed.
  EXPECT_EQ(make_witness(sc.r1cs, o, o.seed), sc.z);
}

TEST(Synthetic, DeterministicForEqualOptionsAndSeedChangesStructure) {
  SyntheticOptions o;
  o.lg_constraints = 11;
  const SyntheticCircuit x = make_porep_like(o), y = make_porep_like(o);
  EXPECT_EQ(x.r1cs.a.column, y.r1cs.a.column);
  EXPECT_EQ(x.r1cs.c.value, y.r1cs.c.value);
  EXPECT_EQ(x.z, y.z);
  const R1cs only = make_porep_like_r1cs(o);
  EXPECT_EQ(only.b.column, x.r1cs.b.column);
  o.seed = 2;
  const R1cs other = make_porep_like_r1cs(o);
  EXPECT_EQ(other.a.non_zeros(), x.r1cs.a.non_zeros());  // shape depends on sizes only
  EXPECT_NE(other.a.column, x.r1cs.a.column);
}

TEST(Synthetic, ValueFractionOptionsAreHonoured) {
  const std::pair<double, double> mixes[] = {{0.70, 0.20}, {0.30, 0.40}, {0.50, 0.50}, {0.20, 0.20}, {0.0, 0.0}};
  for (auto [zero, one] : mixes) {
    SyntheticOptions o;
    o.lg_constraints = 14;
    o.zero_fraction = zero;
    o.one_fraction = one;
    o.seed = 5;
    const SyntheticCircuit sc = make_porep_like(o);
    ASSERT_EQ(first_unsatisfied(sc.r1cs, sc.z), std::nullopt) << zero << "/" << one;
    const ShapeStats st = shape_stats(sc.r1cs, sc.z);
    std::printf("zero %.2f one %.2f -> zero %.4f one %.4f other %.4f  A %.3f C %.3f  A-aux %.2f%% B-aux %.2f%%\n",
                zero, one, st.zero_fraction, st.one_fraction, st.other_fraction, st.a_per_row, st.c_per_row,
                100 * st.a_aux_density, 100 * st.b_aux_density);
    EXPECT_NEAR(st.zero_fraction, zero, 0.01);
    EXPECT_NEAR(st.one_fraction, one, 0.01);
    EXPECT_GE(st.a_aux_density, 0.99);
    EXPECT_NEAR(st.b_aux_density, porep_shape::b_aux_density, 0.01);
  }
}

TEST(Synthetic, ManyPublicInputsAllWired) {
  SyntheticOptions o;
  o.lg_constraints = 15;
  o.num_public_inputs = 328;  // a PoRep partition's count
  const SyntheticCircuit sc = make_porep_like(o);
  EXPECT_EQ(sc.r1cs.num_constraints() + sc.r1cs.num_inputs, std::size_t(1) << 15);
  EXPECT_EQ(first_unsatisfied(sc.r1cs, sc.z), std::nullopt);
  std::vector<bool> used(sc.r1cs.num_inputs, false);
  for (uint32_t c : sc.r1cs.a.column)
    if (c < sc.r1cs.num_inputs) used[c] = true;
  for (std::size_t i = 0; i < used.size(); ++i) EXPECT_TRUE(used[i]) << "input " << i;
}

TEST(Synthetic, RejectsBadOptions) {
  auto bad = [](auto mutate) {
    SyntheticOptions o;
    mutate(o);
    return o;
  };
  EXPECT_THROW(synthetic_sizes(bad([](SyntheticOptions& o) { o.lg_constraints = 3; })), std::invalid_argument);
  EXPECT_THROW(synthetic_sizes(bad([](SyntheticOptions& o) { o.lg_constraints = 29; })), std::invalid_argument);
  EXPECT_THROW(synthetic_sizes(bad([](SyntheticOptions& o) { o.zero_fraction = 0.7; })), std::invalid_argument);
  EXPECT_THROW(synthetic_sizes(bad([](SyntheticOptions& o) { o.one_fraction = -0.1; })), std::invalid_argument);
  EXPECT_THROW(make_porep_like(bad([](SyntheticOptions& o) {
                 o.lg_constraints = 4;
                 o.num_public_inputs = 12;
               })),
               std::invalid_argument);
}

TEST(Synthetic, MakeWitnessRejectsForeignCircuit) {
  SyntheticOptions o;
  o.lg_constraints = 10;
  R1cs r = make_porep_like_r1cs(o);
  SyntheticOptions bigger = o;
  bigger.lg_constraints = 11;
  EXPECT_THROW(make_witness(r, bigger, 3), std::invalid_argument);
  EXPECT_THROW(make_witness(cubic(), o, 3), std::invalid_argument);
  // The last row is the sink mixing row, defining its variable on the A side: unhook it.
  const std::size_t last = r.num_constraints() - 1;
  for (uint64_t e = r.a.row_start[last]; e < r.a.row_start[last + 1]; ++e)
    if (r.a.column[e] == r.num_inputs + last) r.a.column[e] = 0;
  EXPECT_THROW(make_witness(r, o, 3), std::invalid_argument);
}

TEST(Synthetic, ShapeStatsAgreeWithDirectCount) {
  SyntheticOptions o;
  o.lg_constraints = 12;
  const SyntheticCircuit sc = make_porep_like(o);
  const R1cs& r = sc.r1cs;
  std::vector<bool> in_a(r.num_aux), in_b(r.num_aux);
  for (uint32_t c : r.a.column)
    if (c >= r.num_inputs) in_a[c - r.num_inputs] = true;
  for (uint32_t c : r.b.column)
    if (c >= r.num_inputs) in_b[c - r.num_inputs] = true;
  std::size_t na = 0, nb = 0, zeros = 0, ones = 0;
  for (std::size_t i = 0; i < r.num_aux; ++i) {
    na += in_a[i];
    nb += in_b[i];
    zeros += sc.z[r.num_inputs + i].is_zero();
    ones += sc.z[r.num_inputs + i] == Fr::one();
  }
  const ShapeStats st = shape_stats(r, sc.z);
  EXPECT_DOUBLE_EQ(st.a_aux_density, double(na) / r.num_aux);
  EXPECT_DOUBLE_EQ(st.b_aux_density, double(nb) / r.num_aux);
  EXPECT_DOUBLE_EQ(st.zero_fraction, double(zeros) / r.num_aux);
  EXPECT_DOUBLE_EQ(st.one_fraction, double(ones) / r.num_aux);
  EXPECT_DOUBLE_EQ(st.a_per_row, double(r.a.non_zeros()) / r.num_constraints());
}

TEST(Synthetic, GeneratesTwoToTheTwentyQuickly) {
  SyntheticOptions o;
  o.lg_constraints = 20;
  const auto t0 = std::chrono::steady_clock::now();
  const R1cs r = make_porep_like_r1cs(o);
  const auto t1 = std::chrono::steady_clock::now();
  const std::vector<Fr> z = make_witness(r, o, o.seed);
  const auto t2 = std::chrono::steady_clock::now();
  const Evaluations ev = evaluate(r, z);
  const auto t3 = std::chrono::steady_clock::now();
  ASSERT_EQ(first_unsatisfied(r, z), std::nullopt);
  const ShapeStats st = shape_stats(r, z);
  auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  std::printf("k=20: structure %.0f ms, witness %.0f ms, evaluate %.0f ms; A %.3f B %.3f C %.3f /row, "
              "A-aux %.2f%% B-aux %.2f%%, zero %.4f one %.4f other %.4f\n",
              ms(t0, t1), ms(t1, t2), ms(t2, t3), st.a_per_row, st.b_per_row, st.c_per_row, 100 * st.a_aux_density,
              100 * st.b_aux_density, st.zero_fraction, st.one_fraction, st.other_fraction);
  EXPECT_EQ(ev.a.size(), r.num_constraints());
  EXPECT_NEAR(st.a_aux_density, porep_shape::a_aux_density, 0.0005);
  EXPECT_NEAR(st.b_aux_density, porep_shape::b_aux_density, 0.003);
  EXPECT_NEAR(st.zero_fraction, o.zero_fraction, 0.005);
  EXPECT_NEAR(st.one_fraction, o.one_fraction, 0.005);
}

}  // namespace
}  // namespace pp::test
