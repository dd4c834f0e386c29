// SPDX-License-Identifier: Apache-2.0 OR MIT
// snarkjs interoperability: zkey <-> proving key, wtns -> witness, and snarkjs's JSON files.
#include "proofpipe/io/snarkjs.hpp"

#include <nlohmann/json.hpp>
#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <bit>
#include <fstream>
#include <span>
#include <stdexcept>
#include <string>

#include "proofpipe/core/big_vector.hpp"
#include "proofpipe/groth16/convention.hpp"
#include "proofpipe/io/decimal.hpp"
#include "proofpipe/io/witness.hpp"
#include "proofpipe/ntt/ntt.hpp"
#include "proofpipe/pairing/bn254.hpp"
#include "proofpipe/pairing/pairing.hpp"

namespace pp {
namespace {

using Json = nlohmann::ordered_json;

void set_bit(std::vector<uint64_t>& bits, std::size_t i) { bits[i / 64] |= uint64_t(1) << (i % 64); }

// snarkjs's name of the curve and e(alpha, beta) as ffjavascript's pairing returns it: its final
// exponentiations (zkcrypto's addition chain for BLS12-381, the Fuentes-Castaneda hard part for
// BN254, as @noble/curves') yield e^3 and e^m (bn254::kLibraryPairingExponent); proofpipe's
// pairing() is e exactly (pairing.hpp, pairing/bn254.hpp).
template <class E>
struct SnarkjsCurve;
template <>
struct SnarkjsCurve<Bls12_381> {
  static constexpr CurveId id = CurveId::bls12_381;
  static Fp12 alphabeta(const Fp12& e) { return e * e * e; }
};
template <>
struct SnarkjsCurve<bn254::Bn254> {
  static constexpr CurveId id = CurveId::bn254;
  static bn254::Fp12 alphabeta(const bn254::Fp12& e) { return e.pow(bn254::kLibraryPairingExponent); }
};
template <class E>
const char* curve_name() {
  return to_string(SnarkjsCurve<E>::id);
}

template <class C>
Json point_json(const Affine<C>& p) {
  if constexpr (requires { typename C::Field::Base; }) {
    auto fp2 = [](const typename C::Field& x) { return Json::array({to_decimal(x.c0), to_decimal(x.c1)}); };
    if (p.is_infinity()) return Json::array({Json::array({"0", "0"}), Json::array({"1", "0"}), Json::array({"0", "0"})});
    return Json::array({fp2(p.x), fp2(p.y), Json::array({"1", "0"})});
  } else {
    if (p.is_infinity()) return Json::array({"0", "1", "0"});
    return Json::array({to_decimal(p.x), to_decimal(p.y), "1"});
  }
}
template <class F2>
Json fp2_json(const F2& x) {
  return Json::array({to_decimal(x.c0), to_decimal(x.c1)});
}

// ---- reading JSON ----
class JsonReader {
 public:
  explicit JsonReader(const std::filesystem::path& path) : name_(path.string()) {
    std::ifstream f(path);
    if (!f) throw std::runtime_error(name_ + ": cannot open");
    try {
      root_ = Json::parse(f);
    } catch (const std::exception& e) {
      throw std::runtime_error(name_ + ": not valid JSON: " + e.what());
    }
    if (!root_.is_object()) fail("", "expected a JSON object");
  }
  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw std::runtime_error(name_ + (field.empty() ? "" : ": " + field) + ": " + what);
  }
  const Json& field(const std::string& key) const {
    if (!root_.contains(key)) fail(key, "missing");
    return root_.at(key);
  }
  const Json& root() const { return root_; }

  template <class F>
  F element(const Json& j, const std::string& where) const {
    if (!j.is_string()) fail(where, "expected a decimal string");
    const std::optional<F> x = from_decimal<F>(j.get<std::string>());
    if (!x) fail(where, "\"" + j.get<std::string>() + "\" is not a decimal number below the field's modulus");
    return *x;
  }
  const Json& array(const Json& j, std::size_t size, const std::string& where) const {
    if (!j.is_array() || j.size() != size) fail(where, "expected an array of " + std::to_string(size));
    return j;
  }
  // A coordinate: a decimal string, or [c0, c1] for Fp2.
  template <class F>
  F coordinate(const Json& j, const std::string& where) const {
    if constexpr (requires { typename F::Base; }) {
      array(j, 2, where);
      using B = typename F::Base;
      return F{element<B>(j[0], where + "[0]"), element<B>(j[1], where + "[1]")};
    } else {
      return element<F>(j, where);
    }
  }
  // [x, y, z] projective (snarkjs writes z = 1; "0" for infinity) -> affine.
  template <class C>
  Affine<C> point(const Json& j, const std::string& where) const {
    using F = typename C::Field;
    array(j, 3, where);
    const F x = coordinate<F>(j[0], where + "[0]"), y = coordinate<F>(j[1], where + "[1]"),
            z = coordinate<F>(j[2], where + "[2]");
    if (z.is_zero()) return Affine<C>::infinity();
    const F zi = z.inverse(), zi2 = zi.sqr();
    const Affine<C> p{x * zi2, y * zi2 * zi};  // Jacobian, as ffjavascript's fromObject reads it
    if (!p.is_on_curve()) fail(where, "not on the curve");
    return p;
  }

 private:
  std::string name_;
  Json root_;
};

template <class E>
void expect_groth16(const JsonReader& in, bool curve_required) {
  if (in.root().contains("protocol") && in.field("protocol") != "groth16")
    in.fail("protocol", "is not \"groth16\"");
  if (curve_required || in.root().contains("curve")) {
    const Json& c = in.field("curve");
    if (c != curve_name<E>())
      in.fail("curve", c.dump() + " is not \"" + curve_name<E>() +
                           "\" (proofpipe reads bls12381 and bn128 files, each for its own curve)");
  }
}

}  // namespace

template <class E>
Densities zkey_densities(const ZkeyOf<E>& z) {
  const std::size_t num_inputs = z.num_public + 1, num_aux = z.num_vars - num_inputs;
  std::vector<uint64_t> a_col((z.num_vars + 63) / 64, 0), b_col((z.num_vars + 63) / 64, 0);
  // The points first, in parallel (a pass over 3·nVars points): each task owns whole words.
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, a_col.size(), 64), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t i = r.begin() * 64; i < std::min(r.end() * 64, z.num_vars); ++i) {
      if (!z.a[i].is_infinity()) set_bit(a_col, i);
      if (!z.b1[i].is_infinity() || !z.b2[i].is_infinity()) set_bit(b_col, i);
    }
  });
  // Then the coefficients (tens of millions in a 2^22 circuit) on every core: each thread sets
  // the bits of its own pair of bitmaps (their signals are scattered: shared words would need
  // atomic updates, which made this pass three times slower), OR-ed in at the end.
  struct Columns {
    std::vector<uint64_t> a, b;
  };
  tbb::enumerable_thread_specific<Columns> local([&] { return Columns{std::vector<uint64_t>(a_col.size()), std::vector<uint64_t>(b_col.size())}; });
  const auto& co = z.coefficients;
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, co.size(), 1 << 16), [&](const tbb::blocked_range<std::size_t>& r) {
    Columns& mine = local.local();
    for (std::size_t k = r.begin(); k != r.end(); ++k) set_bit(co[k].matrix == 0 ? mine.a : mine.b, co[k].signal);
  });
  for (const Columns& mine : local)
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, a_col.size(), 1 << 12), [&](const tbb::blocked_range<std::size_t>& r) {
      for (std::size_t w = r.begin(); w != r.end(); ++w) {
        a_col[w] |= mine.a[w];
        b_col[w] |= mine.b[w];
      }
    });
  Densities d;
  d.a_aux.assign((num_aux + 63) / 64, 0);
  d.b_aux.assign((num_aux + 63) / 64, 0);
  d.b_input.assign((num_inputs + 63) / 64, 0);
  for (std::size_t i = 0; i < num_inputs; ++i)
    if (test_bit(b_col, i)) set_bit(d.b_input, i);
  for (std::size_t j = 0; j < num_aux; ++j) {
    if (test_bit(a_col, num_inputs + j)) set_bit(d.a_aux, j);
    if (test_bit(b_col, num_inputs + j)) set_bit(d.b_aux, j);
  }
  return d;
}

namespace {

template <class E>
void expect_point_sections(const ZkeyOf<E>& z) {
  if (z.a.size() != z.num_vars || z.b1.size() != z.num_vars || z.b2.size() != z.num_vars)
    throw std::invalid_argument("proving_key_from_zkey: the zkey's point sections were not read");
}

// The first bit at or after `from` that is clear in bits [0, count), or count; a word at a time.
std::size_t first_clear(std::span<const uint64_t> bits, std::size_t from, std::size_t count) {
  std::size_t i = from;
  while (i < count) {
    const uint64_t word = bits[i / 64] >> (i % 64);  // bits i .. the word's end, from bit 0
    const std::size_t ones = std::size_t(std::countr_one(word));
    if (ones < 64 - i % 64) return std::min(count, i + ones);
    i += 64 - i % 64;
  }
  return count;
}

// v's elements i with keep(i), in order, moved to the front of v's own storage (no second
// array: the capacity, already faulted in when the section was read, stays). Elements [0,
// kept_prefix) are known to be kept and stay where they are: a circuit whose columns are all
// dense (every wire in A and B) moves nothing.
template <class P, class Keep>
std::vector<P> keep_points(std::vector<P> v, std::size_t kept_prefix, const Keep& keep) {
  std::size_t j = std::min(kept_prefix, v.size());
  for (std::size_t i = j; i < v.size(); ++i)
    if (keep(i)) v[j++] = v[i];
  v.resize(j);
  return v;
}

// Everything but the H and L queries; a, b1, b2 are the zkey's (copies, or taken from it).
template <class E>
ProvingKeyOf<E> key_without_h_l(const ZkeyOf<E>& z, const Densities& d, std::vector<Affine<typename E::G1>> a,
                                std::vector<Affine<typename E::G1>> b1, std::vector<Affine<typename E::G2>> b2) {
  const std::size_t num_inputs = z.num_public + 1;
  ProvingKeyOf<E> pk;
  pk.convention = kSnarkjsConvention;
  pk.vk = z.vk;
  auto in_a = [&](std::size_t i) { return i < num_inputs || test_bit(d.a_aux, i - num_inputs); };
  auto in_b = [&](std::size_t i) { return i < num_inputs ? test_bit(d.b_input, i) : test_bit(d.b_aux, i - num_inputs); };
  // The kept prefixes, found a bitmap word at a time rather than a point at a time: A keeps every
  // input, then the aux variables its bits name; B its input bits, then its aux bits.
  const std::size_t num_aux = z.num_vars - num_inputs;
  const std::size_t a_prefix = num_inputs + first_clear(d.a_aux, 0, num_aux);
  const std::size_t b_inputs = first_clear(d.b_input, 0, num_inputs);
  const std::size_t b_prefix = b_inputs < num_inputs ? b_inputs : num_inputs + first_clear(d.b_aux, 0, num_aux);
  pk.a = keep_points(std::move(a), a_prefix, in_a);
  pk.b_g1 = keep_points(std::move(b1), b_prefix, in_b);
  pk.b_g2 = keep_points(std::move(b2), b_prefix, in_b);
  return pk;
}

}  // namespace

template <class E>
ProvingKeyOf<E> proving_key_from_zkey(const ZkeyOf<E>& z) {
  expect_point_sections(z);
  ProvingKeyOf<E> pk = key_without_h_l(z, zkey_densities(z), z.a, z.b1, z.b2);
  pk.h = z.h;
  pk.l = z.c;
  return pk;
}

template <class E>
ProvingKeyOf<E> proving_key_from_zkey(ZkeyOf<E>&& z) {
  expect_point_sections(z);
  ProvingKeyOf<E> pk = key_without_h_l(z, zkey_densities(z), z.a, z.b1, z.b2);
  pk.h = std::move(z.h);
  pk.l = std::move(z.c);
  return pk;
}

template <class E>
ProvingKeyOf<E> take_proving_key(ZkeyOf<E>& z, const Densities& d) {
  expect_point_sections(z);
  ProvingKeyOf<E> pk = key_without_h_l(z, d, std::move(z.a), std::move(z.b1), std::move(z.b2));
  pk.h = std::move(z.h);
  pk.l = std::move(z.c);
  z.a.clear();
  z.b1.clear();
  z.b2.clear();
  return pk;
}

template <class E>
WitnessOf<E> witness_from_zkey(const ZkeyOf<E>& z, SpanOf<typename E::Fr> values) {
  return witness_from_zkey<E>(z, values, zkey_densities(z));
}

template <class E>
WitnessOf<E> witness_from_zkey(const ZkeyOf<E>& z, SpanOf<typename E::Fr> values, const Densities& densities) {
  using Fr = typename E::Fr;
  using ZkeyCoefficient = ZkeyCoefficientOf<Fr>;
  if (values.size() != z.num_vars)
    throw std::invalid_argument("the witness has " + std::to_string(values.size()) + " values, the zkey's circuit has " +
                                "nVars = " + std::to_string(z.num_vars) +
                                " (the witness belongs to another circuit or another compilation)");
  if (!values[0].is_one()) throw std::invalid_argument("witness value 0 must be the constant 1");
  const std::size_t n = z.domain_size;
  std::vector<Fr> a = big_vector<Fr>(n), b = big_vector<Fr>(n), c = big_vector<Fr>(n);  // zeros
  const std::vector<ZkeyCoefficient>& co = z.coefficients;
  auto add = [&](std::size_t i) {
    accumulate_product(co[i].matrix == 0 ? a[co[i].constraint] : b[co[i].constraint], co[i].value, values[co[i].signal]);
  };
  // The coefficients come row by row in the files snarkjs writes (sorted by matrix, then
  // constraint; the C API sorts a key's so once when it loads it), or by constraint with both
  // matrices in each row. Then chunks of them that start where a row starts write disjoint rows,
  // and run on every core; any other order (zkey_from_proving_key's rows are renumbered) is
  // summed serially.
  auto by_matrix = [](const ZkeyCoefficient& x, const ZkeyCoefficient& y) {
    return x.matrix != y.matrix ? x.matrix < y.matrix : x.constraint < y.constraint;
  };
  auto by_row = [](const ZkeyCoefficient& x, const ZkeyCoefficient& y) { return x.constraint < y.constraint; };
  const bool matrix_major = std::is_sorted(co.begin(), co.end(), by_matrix);
  if (matrix_major || std::is_sorted(co.begin(), co.end(), by_row)) {
    // Same row: the same (matrix, constraint), or the same constraint when rows hold both matrices.
    auto same_row = [&](std::size_t i) {
      return co[i].constraint == co[i - 1].constraint && (!matrix_major || co[i].matrix == co[i - 1].matrix);
    };
    auto row_start = [&](std::size_t i) {  // the first coefficient at or after i that starts a row
      while (i > 0 && i < co.size() && same_row(i)) ++i;
      return i;
    };
    constexpr std::size_t kChunk = 1 << 14;
    const std::size_t chunks = (co.size() + kChunk - 1) / kChunk;
    tbb::parallel_for(std::size_t(0), chunks, [&](std::size_t k) {
      const std::size_t end = row_start(std::min(co.size(), (k + 1) * kChunk));
      for (std::size_t i = row_start(k * kChunk); i < end; ++i) add(i);
    });
  } else {
    for (std::size_t i = 0; i < co.size(); ++i) add(i);
  }
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 1 << 14), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t k = r.begin(); k != r.end(); ++k) c[k] = a[k] * b[k];
  });
  const std::size_t num_inputs = z.num_public + 1;
  WitnessOf<E> w;
  w.a = std::move(a);
  w.b = std::move(b);
  w.c = std::move(c);
  w.input = std::vector<Fr>(values.begin(), values.begin() + std::ptrdiff_t(num_inputs));
  std::vector<Fr> aux = big_vector<Fr>(values.size() - num_inputs);  // copied on every core (128 MB at 2^22)
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, aux.size(), 1 << 16), [&](const tbb::blocked_range<std::size_t>& r) {
    std::copy(values.begin() + std::ptrdiff_t(num_inputs + r.begin()), values.begin() + std::ptrdiff_t(num_inputs + r.end()),
              aux.begin() + std::ptrdiff_t(r.begin()));
  });
  w.aux = std::move(aux);
  w.densities = densities;
  return w;
}

template <class E>
ZkeyOf<E> zkey_from_proving_key(const ProvingKeyOf<E>& pk_in, const std::type_identity_t<R1csOf<typename E::Fr>>& circuit) {
  using Fr = typename E::Fr;
  using Domain = DomainOf<Fr>;
  using ZkeyCoefficient = ZkeyCoefficientOf<Fr>;
  using G1Affine = Affine<typename E::G1>;
  using G2Affine = Affine<typename E::G2>;
  circuit.validate();
  const std::size_t num_inputs = circuit.num_inputs, num_aux = circuit.num_aux, m0 = circuit.num_constraints();
  const Densities d = column_densities(circuit);
  auto expect = [](const char* what, std::size_t got, std::size_t want) {
    if (got != want)
      throw std::invalid_argument(std::string("the proving key does not fit the circuit: ") + what + " has " +
                                  std::to_string(got) + " points, the circuit needs " + std::to_string(want));
  };
  expect("IC", pk_in.vk.ic.size(), num_inputs);
  expect("L", pk_in.l.size(), num_aux);
  expect("A", pk_in.a.size(), num_inputs + count_bits(d.a_aux));
  expect("B_G1", pk_in.b_g1.size(), count_bits(d.b_input) + count_bits(d.b_aux));
  expect("B_G2", pk_in.b_g2.size(), pk_in.b_g1.size());
  const std::size_t n = pk_in.convention.h_basis == HBasis::bellman ? pk_in.h.size() + 1 : pk_in.h.size();
  const Domain domain = Domain::at_least(m0 + num_inputs);
  expect("H (domain size)", n, domain.size());

  // H in snarkjs's basis on generator 5. bellman's points do not depend on the generator, so a
  // bellman-basis key is relabelled first; a snarkjs-basis key on another generator goes
  // through bellman's basis (exactly).
  ProvingKeyOf<E> pk = pk_in;
  uint64_t stride = 1;
  if constexpr (std::is_same_v<E, Bls12_381>) {
    if (!(pk.convention == kSnarkjsConvention)) {
      const uint64_t rows_generator = pk.convention.domain_generator;
      if (pk.convention.h_basis == HBasis::snarkjs) pk = change_h_basis(pk, HBasis::bellman);
      pk.convention.domain_generator = Domain::kSnarkjsGenerator;
      pk = change_h_basis(pk, HBasis::snarkjs);
      pk.convention.domain_generator = rows_generator;  // where the circuit's rows are, for the renumbering
    }
    stride = row_stride(domain.lg(), pk.convention.domain_generator, Domain::kSnarkjsGenerator);
  } else if (!(pk.convention == kSnarkjsConvention)) {
    throw std::invalid_argument(std::string("zkey_from_proving_key: a ") + curve_name<E>() +
                                " key must be in snarkjs's convention (generator 5, snarkjs's H basis)");
  }
  auto row = [&](std::size_t k) { return uint32_t((unsigned __int128)stride * k % n); };

  ZkeyOf<E> z;
  z.num_vars = num_inputs + num_aux;
  z.num_public = num_inputs - 1;
  z.domain_size = n;
  z.vk = pk.vk;
  for (std::size_t k = 0; k < m0; ++k) {
    for (uint32_t matrix : {0u, 1u}) {
      const SparseMatrixOf<Fr>& m = matrix == 0 ? circuit.a : circuit.b;
      for (uint64_t e = m.row_start[k]; e < m.row_start[k + 1]; ++e)
        z.coefficients.push_back(ZkeyCoefficient{matrix, row(k), m.column[e], m.value[e]});
    }
  }
  for (std::size_t i = 0; i < num_inputs; ++i)
    z.coefficients.push_back(ZkeyCoefficient{0, row(m0 + i), uint32_t(i), Fr::one()});

  // A, B1, B2 for every variable: the filtered queries with infinity for the empty columns.
  z.a.assign(z.num_vars, G1Affine::infinity());
  z.b1.assign(z.num_vars, G1Affine::infinity());
  z.b2.assign(z.num_vars, G2Affine::infinity());
  std::size_t ai = 0, bi = 0;
  for (std::size_t i = 0; i < z.num_vars; ++i) {
    const bool input = i < num_inputs;
    if (input || test_bit(d.a_aux, i - num_inputs)) z.a[i] = pk.a[ai++];
    if (input ? test_bit(d.b_input, i) : test_bit(d.b_aux, i - num_inputs)) {
      z.b1[i] = pk.b_g1[bi];
      z.b2[i] = pk.b_g2[bi++];
    }
  }
  z.c = pk.l.to_vector();
  z.h = pk.h.to_vector();
  return z;
}

template <class F>
ZkeyOf<CurveOf<F>> zkey_test_setup(const R1csOf<F>& circuit, uint64_t seed) {
  // Made directly in snarkjs's convention (rows on generator 5, snarkjs's H points), so no basis
  // change is needed and the points are exactly what a ceremony with this tau would give.
  return zkey_from_proving_key(setup(circuit, seed, {}, kSnarkjsConvention), circuit);
}

// ---------------------------------------------------------------------------------------------
template <class E>
std::string vk_to_snarkjs_json(const VerifyingKeyOf<E>& vk) {
  const auto ab = SnarkjsCurve<E>::alphabeta(pairing(vk.alpha_g1, vk.beta_g2));
  auto fp6 = [](const auto& x) { return Json::array({fp2_json(x.c0), fp2_json(x.c1), fp2_json(x.c2)}); };
  Json j;
  j["protocol"] = "groth16";
  j["curve"] = curve_name<E>();
  j["nPublic"] = vk.ic.size() - 1;
  j["vk_alpha_1"] = point_json(vk.alpha_g1);
  j["vk_beta_2"] = point_json(vk.beta_g2);
  j["vk_gamma_2"] = point_json(vk.gamma_g2);
  j["vk_delta_2"] = point_json(vk.delta_g2);
  j["vk_alphabeta_12"] = Json::array({fp6(ab.c0), fp6(ab.c1)});
  Json ic = Json::array();
  for (const auto& p : vk.ic) ic.push_back(point_json(p));
  j["IC"] = ic;
  return j.dump(1);
}

template <class E>
VerifyingKeyOf<E> read_snarkjs_vk(const std::filesystem::path& path) {
  using G1 = typename E::G1;
  using G2 = typename E::G2;
  const JsonReader in(path);
  expect_groth16<E>(in, true);
  VerifyingKeyOf<E> vk;
  vk.alpha_g1 = in.point<G1>(in.field("vk_alpha_1"), "vk_alpha_1");
  vk.beta_g2 = in.point<G2>(in.field("vk_beta_2"), "vk_beta_2");
  vk.gamma_g2 = in.point<G2>(in.field("vk_gamma_2"), "vk_gamma_2");
  vk.delta_g2 = in.point<G2>(in.field("vk_delta_2"), "vk_delta_2");
  const Json& ic = in.field("IC");
  if (!ic.is_array() || ic.empty()) in.fail("IC", "expected a non-empty array");
  for (std::size_t i = 0; i < ic.size(); ++i) vk.ic.push_back(in.point<G1>(ic[i], "IC[" + std::to_string(i) + "]"));
  if (in.root().contains("nPublic")) {
    const Json& np = in.field("nPublic");
    if (!np.is_number_unsigned() || np.get<std::size_t>() + 1 != vk.ic.size())
      in.fail("nPublic", "does not match the " + std::to_string(vk.ic.size()) + " IC points");
  }
  return vk;
}

CurveId snarkjs_vk_curve(const std::filesystem::path& path) {
  const JsonReader in(path);
  const Json& c = in.field("curve");
  if (c == "bls12381") return CurveId::bls12_381;
  if (c == "bn128") return CurveId::bn254;
  in.fail("curve", c.dump() + " is neither \"bls12381\" nor \"bn128\"");
}

template <class E>
std::string proof_to_snarkjs_json(const ProofOf<E>& proof) {
  // nlohmann::ordered_json keeps snarkjs's key order (pi_a, pi_b, pi_c, protocol, curve).
  Json j;
  j["pi_a"] = point_json(proof.a);
  j["pi_b"] = point_json(proof.b);
  j["pi_c"] = point_json(proof.c);
  j["protocol"] = "groth16";
  j["curve"] = curve_name<E>();
  return j.dump(1);
}

template <class E>
ProofOf<E> read_snarkjs_proof(const std::filesystem::path& path) {
  const JsonReader in(path);
  expect_groth16<E>(in, false);
  ProofOf<E> p;
  p.a = in.point<typename E::G1>(in.field("pi_a"), "pi_a");
  p.b = in.point<typename E::G2>(in.field("pi_b"), "pi_b");
  p.c = in.point<typename E::G1>(in.field("pi_c"), "pi_c");
  if (!is_in_subgroup(p.a)) in.fail("pi_a", "not in the prime-order subgroup");
  if (!is_in_subgroup(p.b)) in.fail("pi_b", "not in the prime-order subgroup");
  if (!is_in_subgroup(p.c)) in.fail("pi_c", "not in the prime-order subgroup");
  return p;
}

namespace {
template <class F>
std::string public_json(std::span<const F> inputs_without_one) {
  Json j = Json::array();
  for (const F& x : inputs_without_one) j.push_back(to_decimal(x));
  return j.dump(1);
}
}  // namespace

std::string public_to_snarkjs_json(std::span<const Fr> inputs_without_one) { return public_json(inputs_without_one); }
std::string public_to_snarkjs_json(std::span<const bn254::Fr> inputs_without_one) {
  return public_json(inputs_without_one);
}

// io/witness.hpp's: the same JSON (here, so that the witness reader links without the JSON code).
std::string proof_to_json(const Proof& proof) { return proof_to_snarkjs_json(proof); }

#define PP_SNARKJS_DEFINE(E)                                                                                   \
  template Densities zkey_densities(const ZkeyOf<E>&);                                                         \
  template ProvingKeyOf<E> proving_key_from_zkey(const ZkeyOf<E>&);                                            \
  template ProvingKeyOf<E> proving_key_from_zkey(ZkeyOf<E>&&);                                                 \
  template ProvingKeyOf<E> take_proving_key(ZkeyOf<E>&, const Densities&);                                     \
  template WitnessOf<E> witness_from_zkey(const ZkeyOf<E>&, SpanOf<E::Fr>);                                    \
  template WitnessOf<E> witness_from_zkey(const ZkeyOf<E>&, SpanOf<E::Fr>, const Densities&);                  \
  template ZkeyOf<E> zkey_from_proving_key(const ProvingKeyOf<E>&, const R1csOf<E::Fr>&);                      \
  template ZkeyOf<E> zkey_test_setup(const R1csOf<E::Fr>&, uint64_t);                                          \
  template std::string vk_to_snarkjs_json(const VerifyingKeyOf<E>&);                                           \
  template VerifyingKeyOf<E> read_snarkjs_vk<E>(const std::filesystem::path&);                                 \
  template std::string proof_to_snarkjs_json(const ProofOf<E>&);                                               \
  template ProofOf<E> read_snarkjs_proof<E>(const std::filesystem::path&);
PP_SNARKJS_DEFINE(Bls12_381)
PP_SNARKJS_DEFINE(bn254::Bn254)
#undef PP_SNARKJS_DEFINE

void write_text_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::trunc);
  if (!f) throw std::runtime_error(path.string() + ": cannot open for writing");
  f << text;
  f.close();
  if (!f) throw std::runtime_error(path.string() + ": write failed");
}

}  // namespace pp
