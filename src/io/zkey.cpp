// SPDX-License-Identifier: Apache-2.0 OR MIT
// snarkjs Groth16 `.zkey` files: section-table reader with parallel point checks, and the writer.
#include "proofpipe/io/zkey.hpp"

#include "proofpipe/core/big_vector.hpp"
#include "proofpipe/core/lowest_failing.hpp"
#include "proofpipe/ntt/ntt.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_invoke.h>

#include <exception>
#include <limits>
#include <memory>
#include <optional>
#include <type_traits>
#include <stdexcept>
#include <string>

namespace pp {
namespace {

constexpr uint32_t kProtocolGroth16 = 1;
constexpr std::size_t kCoefficientBytes = 12 + 32;
// snarkjs's H step needs the 2n-th root: the domain is at most half the field's 2-adicity (BLS12-381
// 2^31, BN254 2^27).
template <class E>
constexpr int kMaxDomainLg = DomainOf<typename E::Fr>::kMaxLg - 1;

// Checks `count` points of a section (its bytes `data`, at file offset `base`), decoding each into
// out[i] when `out` is given; throws for the lowest bad one (the read's and the deferred checks'
// one error).
template <class C>
void decode_points(const SectionReader& in, std::span<const uint8_t> data, uint64_t base, uint64_t count,
                   const char* what, PointCheck check, Affine<C>* out) {
  constexpr std::size_t B = kLemPointBytes<C>;
  const uint64_t bad = lowest_failing(count, 256, [&](uint64_t i) {
    Affine<C> scratch;
    return point_from_lem<C>(out != nullptr ? out[i] : scratch, data.subspan(i * B, B), check) == PointError::ok;
  });
  if (bad == kNoneFailed) return;
  Affine<C> p;
  const PointError e = point_from_lem<C>(p, data.subspan(bad * B, B), check);
  in.fail_at(base + bad * B,
             std::string(what) + " point " + std::to_string(bad) + " of " + std::to_string(count) + ": " + to_string(e));
}

template <class C>
std::vector<Affine<C>> read_points(SectionReader& in, uint64_t count, const char* what, PointCheck check) {
  constexpr std::size_t B = kLemPointBytes<C>;
  in.need_items(count, B, what);
  const uint64_t base = in.offset();
  const std::span<const uint8_t> data = in.bytes(count * B, what);
  // Faulted in on every core, not value-initialised on one: a 2^23-point section is 0.5 GB.
  std::vector<Affine<C>> out = big_vector<Affine<C>>(count);
  decode_points<C>(in, data, base, count, what, check, out.data());
  return out;
}

// The checks read_points(…, PointCheck::coordinates) left, over the same section: the rest of the
// section's bytes are its points (their count was checked when it was read).
template <class C>
void check_points(SectionReader in, const char* what, PointCheck check) {
  constexpr std::size_t B = kLemPointBytes<C>;
  const uint64_t count = in.remaining() / B, base = in.offset();
  decode_points<C>(in, in.bytes(count * B, what), base, count, what, check, nullptr);
}

template <class C>
Affine<C> read_point(SectionReader& in, const char* what) {
  const uint64_t at = in.offset();
  Affine<C> p;
  const PointError e = point_from_lem<C>(p, in.bytes(kLemPointBytes<C>, what), PointCheck::subgroup);
  if (e != PointError::ok) in.fail_at(at, std::string(what) + ": " + to_string(e));
  return p;
}

// The curve whose primes these are (n8q bytes of q, n8r of r), if any.
std::optional<CurveId> curve_of(std::span<const uint8_t> q, std::span<const uint8_t> r) {
  if (is_prime_of<Fp>(q) && is_prime_of<Fr>(r)) return CurveId::bls12_381;
  if (is_prime_of<bn254::Fp>(q) && is_prime_of<bn254::Fr>(r)) return CurveId::bn254;
  return std::nullopt;
}

// The start of the Groth16 header (section 2): n8q, q, n8r, r; the curve they name, or a
// FormatError at q for primes of neither curve.
CurveId read_primes(SectionReader& in) {
  const uint32_t n8q = in.u32("n8q");
  const uint64_t q_at = in.offset();
  if (n8q != 32 && n8q != 48) in.fail_at(q_at - 4, "n8q = " + std::to_string(n8q) + " (32 for bn128, 48 for bls12381)");
  const std::span<const uint8_t> q = in.bytes(n8q, "q");
  const uint32_t n8r = in.u32("n8r");
  if (n8r != 32) in.fail_at(in.offset() - 4, "n8r = " + std::to_string(n8r) + ", expected 32");
  const std::span<const uint8_t> r = in.bytes(n8r, "r");
  const std::optional<CurveId> curve = curve_of(q, r);
  if (!curve)
    in.fail_at(q_at, "wrong curve: the primes are neither BLS12-381's nor BN254's (proofpipe proves on bls12381 and bn128)");
  return *curve;
}

template <class E>
constexpr CurveId kCurveId = std::is_same_v<E, Bls12_381> ? CurveId::bls12_381 : CurveId::bn254;

template <class E>
void read_header(const BinFile& file, ZkeyOf<E>& z) {
  using G1 = typename E::G1;
  using G2 = typename E::G2;
  {
    SectionReader in = file.section(1, "header");
    const uint32_t protocol = in.u32("protocol");
    if (protocol != kProtocolGroth16)
      in.fail("protocol " + std::to_string(protocol) + " is not Groth16 (1; 2 is PLONK, 10 FFLONK)");
    in.expect_end();
  }
  SectionReader in = file.section(2, "Groth16 header");
  const uint64_t q_at = in.offset() + 4;
  const CurveId curve = read_primes(in);
  if (curve != kCurveId<E>)
    in.fail_at(q_at, std::string("wrong curve: a ") + to_string(curve) + " key read as " + to_string(kCurveId<E>) +
                         " (zkey_curve tells which)");
  z.num_vars = in.u32("nVars");
  z.num_public = in.u32("nPublic");
  z.domain_size = in.u32("domainSize");
  if (z.num_public + 1 > z.num_vars)
    in.fail("nPublic = " + std::to_string(z.num_public) + " leaves no room for the constant one in nVars = " +
            std::to_string(z.num_vars));
  const std::size_t max_domain = std::size_t(1) << kMaxDomainLg<E>;
  if ((z.domain_size < 2) || (z.domain_size & (z.domain_size - 1)) != 0 || z.domain_size > max_domain)
    in.fail("domainSize " + std::to_string(z.domain_size) + " is not a power of two in 2..2^" +
            std::to_string(kMaxDomainLg<E>));
  z.vk.alpha_g1 = read_point<G1>(in, "alpha_1");
  z.vk.beta_g1 = read_point<G1>(in, "beta_1");
  z.vk.beta_g2 = read_point<G2>(in, "beta_2");
  z.vk.gamma_g2 = read_point<G2>(in, "gamma_2");
  z.vk.delta_g1 = read_point<G1>(in, "delta_1");
  z.vk.delta_g2 = read_point<G2>(in, "delta_2");
  in.expect_end();
}

}  // namespace

const char* to_string(CurveId c) { return c == CurveId::bls12_381 ? "bls12381" : "bn128"; }

CurveId zkey_curve(std::span<const uint8_t> bytes, std::string_view name) {
  const BinFile file(bytes, name, "zkey", 1);
  SectionReader in = file.section(2, "Groth16 header");
  return read_primes(in);
}

CurveId zkey_curve(const std::filesystem::path& path) {
  const MappedFile file(path);
  return zkey_curve(file.bytes(), path.string());
}

template <class E>
ZkeyOf<E> parse_zkey(std::span<const uint8_t> bytes, std::string_view name, const ZkeyReadOptions& options,
                     ZkeyPointChecks* deferred) {
  using G1 = typename E::G1;
  using G2 = typename E::G2;
  constexpr std::size_t kG1 = kLemPointBytes<G1>, kG2 = kLemPointBytes<G2>;
  const BinFile file(bytes, name, "zkey", 1);
  ZkeyOf<E> z;
  read_header(file, z);
  {
    SectionReader in = file.section(3, "IC");
    in.need_items(z.num_public + 1, kG1, "IC");
    z.vk.ic = read_points<G1>(in, z.num_public + 1, "IC", PointCheck::subgroup);
    in.expect_end();
  }
  SectionReader coeffs = file.section(4, "coefficients");
  const uint32_t num_coefficients = coeffs.u32("coefficient count");
  coeffs.need_items(num_coefficients, kCoefficientBytes, "coefficients");
  if (options.header_only) {
    z.coefficients.resize(num_coefficients);  // sizes only: `info` reports the count
    for (uint32_t id : {5u, 6u, 7u, 8u, 9u}) (void)file.section(id, "point section");
    return z;
  }
  // Decoded in parallel chunks; on a bad coefficient the lowest bad index is decoded again
  // serially, so the error (index, offset, reason) is the one a serial read reports.
  auto read_coefficients = [&] {
    using Coefficient = ZkeyCoefficientOf<typename E::Fr>;
    const uint64_t base = coeffs.offset();
    const std::span<const uint8_t> raw = coeffs.bytes(uint64_t(num_coefficients) * kCoefficientBytes, "coefficients");
    z.coefficients = big_vector<Coefficient>(num_coefficients);
    auto decode = [&](uint32_t k, Coefficient& c) {  // true when the coefficient is well formed
      const uint8_t* at = raw.data() + std::size_t(k) * kCoefficientBytes;
      c.matrix = le_u32(at);
      c.constraint = le_u32(at + 4);
      c.signal = le_u32(at + 8);
      return c.matrix <= 1 && c.constraint < z.domain_size && c.signal < z.num_vars &&
             zkey_coefficient_from_bytes(c.value, std::span<const uint8_t, 32>(at + 12, 32));
    };
    const uint64_t bad = lowest_failing(num_coefficients, 4096, [&](uint64_t k) {
      return decode(uint32_t(k), z.coefficients[k]);
    });
    if (bad != kNoneFailed) {
      const auto k = uint32_t(bad);
      Coefficient c;
      (void)decode(k, c);
      const uint64_t at = base + uint64_t(k) * kCoefficientBytes;
      const std::string which = "coefficient " + std::to_string(k);
      if (c.matrix > 1) coeffs.fail_at(at, which + ": matrix " + std::to_string(c.matrix) + " (0 is A, 1 is B)");
      if (c.constraint >= z.domain_size)
        coeffs.fail_at(at, which + ": constraint " + std::to_string(c.constraint) + " >= domainSize " +
                               std::to_string(z.domain_size));
      if (c.signal >= z.num_vars)
        coeffs.fail_at(at, which + ": signal " + std::to_string(c.signal) + " >= nVars " + std::to_string(z.num_vars));
      coeffs.fail_at(at + 12, which + ": value is not below r");
    }
    coeffs.expect_end();
  };
  auto read_point_sections = [&] {
    const PointCheck sub = deferred != nullptr    ? PointCheck::coordinates
                           : options.subgroup_check ? PointCheck::subgroup
                                                    : PointCheck::curve;
    auto g1_section = [&](uint32_t id, const char* what, std::size_t count) {
      SectionReader in = file.section(id, what);
      if (in.remaining() != count * kG1)
        in.fail(std::string(what) + ": " + std::to_string(in.remaining()) + " bytes, expected " + std::to_string(count) +
                " points × " + std::to_string(kG1) + " = " + std::to_string(count * kG1));
      return read_points<G1>(in, count, what, sub);
    };
    z.a = g1_section(5, "A", z.num_vars);
    z.b1 = g1_section(6, "B1", z.num_vars);
    {
      SectionReader in = file.section(7, "B2");
      if (in.remaining() != z.num_vars * kG2)
        in.fail("B2: " + std::to_string(in.remaining()) + " bytes, expected " + std::to_string(z.num_vars) +
                " points × " + std::to_string(kG2) + " = " + std::to_string(z.num_vars * kG2));
      z.b2 = read_points<G2>(in, z.num_vars, "B2", sub);
    }
    z.c = g1_section(8, "C", z.num_vars - z.num_public - 1);
    z.h = g1_section(9, "H", z.domain_size);
  };
  // The coefficients (a serial parse) and the point sections (parallel decoding) are
  // independent: the coefficients run as one task beside the point chunks, so that the serial
  // part does not add to the read. The coefficients' error, if any, wins, so a file that is wrong
  // in both reports what a serial read would.
  std::exception_ptr coefficient_error, point_error;
  tbb::parallel_invoke(
      [&] {
        try {
          read_coefficients();
        } catch (...) {
          coefficient_error = std::current_exception();
        }
      },
      [&] {
        try {
          read_point_sections();
        } catch (...) {
          point_error = std::current_exception();
        }
      });
  if (coefficient_error) std::rethrow_exception(coefficient_error);
  if (point_error) std::rethrow_exception(point_error);
  if (file.has(10)) {
    SectionReader in = file.section(10, "MPC parameters");
    const auto raw = in.bytes(in.remaining(), "MPC parameters");
    z.mpc_params.assign(raw.begin(), raw.end());
  }
  if (deferred != nullptr) {
    deferred->keeper = nullptr;
    deferred->bytes = bytes;
    deferred->name = std::string(name);
    deferred->subgroup_check = options.subgroup_check;
    deferred->curve = kCurveId<E>;
  }
  return z;
}

template <class E>
ZkeyOf<E> parse_zkey(std::span<const uint8_t> bytes, std::string_view name, const ZkeyReadOptions& options) {
  return parse_zkey<E>(bytes, name, options, nullptr);
}

template <class E>
ZkeyOf<E> read_zkey(const std::filesystem::path& path, const ZkeyReadOptions& options) {
  const MappedFile file(path);
  return parse_zkey<E>(file.bytes(), path.string(), options);
}

template <class E>
ZkeyOf<E> read_zkey(const std::filesystem::path& path, const ZkeyReadOptions& options, ZkeyPointChecks* deferred) {
  auto file = std::make_shared<const MappedFile>(path);
  ZkeyOf<E> z = parse_zkey<E>(file->bytes(), path.string(), options, deferred);
  if (deferred != nullptr) deferred->keeper = std::move(file);
  return z;
}

namespace {
template <class E>
void run_point_checks(const ZkeyPointChecks& c) {
  const BinFile file(c.bytes, c.name, "zkey", 1);
  const PointCheck check = c.subgroup_check ? PointCheck::subgroup : PointCheck::curve;
  check_points<typename E::G1>(file.section(5, "A"), "A", check);
  check_points<typename E::G1>(file.section(6, "B1"), "B1", check);
  check_points<typename E::G2>(file.section(7, "B2"), "B2", check);
  check_points<typename E::G1>(file.section(8, "C"), "C", check);
  check_points<typename E::G1>(file.section(9, "H"), "H", check);
}
}  // namespace

void ZkeyPointChecks::run() const {
  if (bytes.empty()) throw std::logic_error("ZkeyPointChecks::run: no read deferred its checks here");
  if (curve == CurveId::bn254) run_point_checks<bn254::Bn254>(*this);
  else run_point_checks<Bls12_381>(*this);
}

template <class E>
std::vector<uint8_t> encode_zkey(const ZkeyOf<E>& z) {
  using G1 = typename E::G1;
  using G2 = typename E::G2;
  using Fq = typename G1::Field;
  using F = typename E::Fr;
  auto expect = [](const char* what, std::size_t got, std::size_t want) {
    if (got != want)
      throw std::invalid_argument(std::string("encode_zkey: ") + what + " has " + std::to_string(got) +
                                  " entries, expected " + std::to_string(want));
  };
  if (z.num_vars < z.num_public + 1) throw std::invalid_argument("encode_zkey: nVars < nPublic + 1");
  if (z.num_vars > std::numeric_limits<uint32_t>::max() || z.domain_size > (std::size_t(1) << kMaxDomainLg<E>) ||
      z.coefficients.size() > std::numeric_limits<uint32_t>::max())
    throw std::invalid_argument("encode_zkey: sizes beyond the format's u32 fields");
  expect("ic", z.vk.ic.size(), z.num_public + 1);
  expect("a", z.a.size(), z.num_vars);
  expect("b1", z.b1.size(), z.num_vars);
  expect("b2", z.b2.size(), z.num_vars);
  expect("c", z.c.size(), z.num_vars - z.num_public - 1);
  expect("h", z.h.size(), z.domain_size);

  BinFileWriter w("zkey", 1, 10);
  uint8_t g1[kLemPointBytes<G1>], g2[kLemPointBytes<G2>], fr[32];
  auto put_g1 = [&](const Affine<G1>& p) {
    point_to_lem(g1, p);
    w.bytes(g1);
  };
  auto put_g2 = [&](const Affine<G2>& p) {
    point_to_lem(g2, p);
    w.bytes(g2);
  };
  auto put_prime = [&](const auto& modulus, int limbs) {
    for (int i = 0; i < limbs; ++i) w.u64(modulus.v[i]);
  };
  w.begin_section(1);
  w.u32(kProtocolGroth16);
  w.end_section();
  w.begin_section(2);
  w.u32(uint32_t(sizeof(Fq)));
  put_prime(Fq::Params::modulus, Fq::Params::N);
  w.u32(32);
  put_prime(F::Params::modulus, 4);
  w.u32(uint32_t(z.num_vars));
  w.u32(uint32_t(z.num_public));
  w.u32(uint32_t(z.domain_size));
  put_g1(z.vk.alpha_g1);
  put_g1(z.vk.beta_g1);
  put_g2(z.vk.beta_g2);
  put_g2(z.vk.gamma_g2);
  put_g1(z.vk.delta_g1);
  put_g2(z.vk.delta_g2);
  w.end_section();
  w.begin_section(3);
  for (const Affine<G1>& p : z.vk.ic) put_g1(p);
  w.end_section();
  w.begin_section(4);
  w.u32(uint32_t(z.coefficients.size()));
  for (const ZkeyCoefficientOf<F>& c : z.coefficients) {
    w.u32(c.matrix);
    w.u32(c.constraint);
    w.u32(c.signal);
    zkey_coefficient_to_bytes(fr, c.value);
    w.bytes(fr);
  }
  w.end_section();
  w.begin_section(5);
  for (const Affine<G1>& p : z.a) put_g1(p);
  w.end_section();
  w.begin_section(6);
  for (const Affine<G1>& p : z.b1) put_g1(p);
  w.end_section();
  w.begin_section(7);
  for (const Affine<G2>& p : z.b2) put_g2(p);
  w.end_section();
  w.begin_section(8);
  for (const Affine<G1>& p : z.c) put_g1(p);
  w.end_section();
  w.begin_section(9);
  for (const Affine<G1>& p : z.h) put_g1(p);
  w.end_section();
  w.begin_section(10);
  if (z.mpc_params.empty()) {
    // An empty transcript: a zero circuit hash and no contributions. `snarkjs zkey verify`
    // rejects it (there is no ceremony to check), proving and exporting the VK need nothing more.
    const std::vector<uint8_t> cs_hash(64, 0);
    w.bytes(cs_hash);
    w.u32(0);
  } else {
    w.bytes(z.mpc_params);
  }
  w.end_section();
  return w.finish();
}

template <class E>
void write_zkey(const std::filesystem::path& path, const ZkeyOf<E>& zkey) {
  write_file_bytes(path, encode_zkey(zkey));
}

#define PP_ZKEY_DEFINE(E)                                                                                 \
  template ZkeyOf<E> parse_zkey<E>(std::span<const uint8_t>, std::string_view, const ZkeyReadOptions&);     \
  template ZkeyOf<E> read_zkey<E>(const std::filesystem::path&, const ZkeyReadOptions&);                    \
  template ZkeyOf<E> parse_zkey<E>(std::span<const uint8_t>, std::string_view, const ZkeyReadOptions&,       \
                                   ZkeyPointChecks*);                                                        \
  template ZkeyOf<E> read_zkey<E>(const std::filesystem::path&, const ZkeyReadOptions&, ZkeyPointChecks*);  \
  template std::vector<uint8_t> encode_zkey(const ZkeyOf<E>&);                                             \
  template void write_zkey(const std::filesystem::path&, const ZkeyOf<E>&);
PP_ZKEY_DEFINE(Bls12_381)
PP_ZKEY_DEFINE(bn254::Bn254)
#undef PP_ZKEY_DEFINE

}  // namespace pp
