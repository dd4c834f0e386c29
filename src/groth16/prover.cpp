// SPDX-License-Identifier: Apache-2.0 OR MIT
// Groth16 prover on the CPU: the H step of the key's convention (bellman or snarkjs), split MSMs, assembly.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_invoke.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <bit>

#include <chrono>
#include <functional>
#include <random>
#include <span>
#include <stdexcept>
#include <string>

#include "proofpipe/groth16/prover.hpp"
#include "proofpipe/msm/msm.hpp"
#include "proofpipe/ntt/ntt.hpp"

namespace pp {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Uniform below r by rejection from 256 - (the bits r lacks) random bits: BLS12-381's draws are
// those of every earlier version (one bit dropped).
template <class F>
F random_scalar(std::mt19937_64& rng) {
  for (;;) {
    uint64_t c[4] = {rng(), rng(), rng(), rng() >> (256 - F::BITS)};
    F x;
    if (F::from_canonical(x, c)) return x;
  }
}

// How many scalars are neither 0 nor 1.
template <class F>
std::size_t count_other(std::span<const F> scalars) {
  const F one = F::one();
  return tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, scalars.size(), 1 << 14), std::size_t(0),
      [&](const tbb::blocked_range<std::size_t>& r, std::size_t count) {
        for (std::size_t i = r.begin(); i != r.end(); ++i) count += !scalars[i].is_zero() && !(scalars[i] == one);
        return count;
      },
      std::plus<>());
}

// Whether split_msm sends a vector of n scalars, `other` of them neither 0 nor 1, to Pippenger
// whole: its scalars are mostly other values (a dense circom witness), whose 0s and 1s cost
// little there (no digit, or one), and copying the tail's points (12 MB for a 2^16 G2 vector)
// cost more than the batch addition saved.
bool pippenger_whole(std::size_t other, std::size_t n) { return 2 * other > n; }

// The split MSM: scalars equal to 0 are skipped, those equal to 1 are batch-added from a bitmap,
// the rest go through Pippenger. Most PoRep aux values are bits, so this halves the work.
// `other` is count_other(scalars), counted once by the caller for vectors used twice.
template <class C>
Jacobian<C> split_msm(std::span<const Affine<C>> points, std::span<const ScalarOf<C>> scalars, std::size_t other) {
  using F = ScalarOf<C>;
  const F one = F::one();
  if (pippenger_whole(other, scalars.size())) return msm<C>(points, scalars);
  std::vector<uint64_t> ones((points.size() + 63) / 64, 0);
  std::vector<Affine<C>> tail_points;
  std::vector<F> tail_scalars;
  tail_points.reserve(other);
  tail_scalars.reserve(other);
  for (std::size_t i = 0; i < scalars.size(); ++i) {
    if (scalars[i].is_zero()) continue;
    if (scalars[i] == one) {
      ones[i / 64] |= uint64_t(1) << (i % 64);
    } else {
      tail_points.push_back(points[i]);
      tail_scalars.push_back(scalars[i]);
    }
  }
  Jacobian<C> sum = batch_add<C>(points, ones);
  if (!tail_points.empty()) sum += msm<C>(std::span<const Affine<C>>(tail_points), std::span<const F>(tail_scalars));
  return sum;
}


// bellman: coefficients of h = (a·b - c)/Z, computed on the coset g·<omega> where Z is the
// constant g^n - 1; n - 1 of them are used.
template <class F>
void h_scalars_bellman(std::vector<F>& a, std::vector<F>& b, std::vector<F>& c, const DomainOf<F>& domain) {
  // The bit-reversed middle order saves the permutation passes between the transforms.
  auto to_coset = [&](std::vector<F>& v) {
    intt(v, domain, Order::natural, Order::bit_reversed);
    coset_ntt(v, domain, Order::bit_reversed, Order::natural);
  };
  tbb::parallel_invoke([&] { to_coset(a); }, [&] { to_coset(b); }, [&] { to_coset(c); });
  const F z_inv = domain.vanishing_on_coset().inverse();
  const std::size_t n = domain.size();
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 4096), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t i = r.begin(); i != r.end(); ++i) a[i] = (a[i] * b[i] - c[i]) * z_inv;
  });
  coset_intt(a, domain);
}

// snarkjs: the values of a·b - c at the odd points nu·omega^j of the 2n-point domain (nu the
// 2n-th root from the same generator), where the H points are the matching Lagrange points.
// All n are used.
template <class F>
void h_scalars_snarkjs(std::vector<F>& a, std::vector<F>& b, std::vector<F>& c, const DomainOf<F>& domain,
                       uint64_t generator) {
  const std::size_t n = domain.size();
  const F nu = DomainOf<F>(domain.lg() + 1, generator).omega();
  // nu^i, stored in bit-reversed order to scale the bit-reversed coefficients in place.
  std::vector<F> nu_pow(n);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 4096), [&](const tbb::blocked_range<std::size_t>& r) {
    F x = nu.pow(Limbs<1>{{uint64_t(r.begin())}});
    for (std::size_t i = r.begin(); i != r.end(); ++i) {
      nu_pow[i] = x;
      x *= nu;
    }
  });
  bit_reverse_permute(nu_pow);
  auto to_odd_points = [&](std::vector<F>& v) {
    intt(v, domain, Order::natural, Order::bit_reversed);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 4096), [&](const tbb::blocked_range<std::size_t>& r) {
      for (std::size_t i = r.begin(); i != r.end(); ++i) v[i] *= nu_pow[i];
    });
    ntt(v, domain, Order::bit_reversed, Order::natural);
  };
  tbb::parallel_invoke([&] { to_odd_points(a); }, [&] { to_odd_points(b); }, [&] { to_odd_points(c); });
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 4096), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t i = r.begin(); i != r.end(); ++i) a[i] = a[i] * b[i] - c[i];
  });
}

std::string partition_name(std::size_t part) { return "partition " + std::to_string(part) + ": "; }

}  // namespace

template <class F>
WitnessOf<CurveOf<F>> witness_from_assignment(const R1csOf<F>& r1cs, std::type_identity_t<std::span<const F>> z) {
  if (z.size() != r1cs.num_variables())
    throw WitnessError("assignment has " + std::to_string(z.size()) + " values, the circuit has " +
                                std::to_string(r1cs.num_variables()) + " variables");
  if (!z[0].is_one()) throw WitnessError("assignment: z[0] must be 1");
  EvaluationsOf<F> ev = evaluate(r1cs, z);
  const std::size_t m0 = r1cs.num_constraints();
  for (std::size_t k = 0; k < m0; ++k)
    if (ev.a[k] * ev.b[k] != ev.c[k])
      throw WitnessError("the assignment does not satisfy constraint " + std::to_string(k));
  // bellman's input constraints input_i · 0 = 0: a = z_i, b = c = 0.
  for (std::size_t i = 0; i < r1cs.num_inputs; ++i) {
    ev.a.push_back(z[i]);
    ev.b.push_back(F::zero());
    ev.c.push_back(F::zero());
  }
  WitnessOf<CurveOf<F>> w;
  w.a = std::move(ev.a);
  w.b = std::move(ev.b);
  w.c = std::move(ev.c);
  w.input = std::vector<F>(z.begin(), z.begin() + std::ptrdiff_t(r1cs.num_inputs));
  w.aux = std::vector<F>(z.begin() + std::ptrdiff_t(r1cs.num_inputs), z.end());
  w.densities = column_densities(r1cs);
  return w;
}

template <class E>
DomainOf<typename E::Fr> check_witness(const ProvingKeyOf<E>& pk, const std::type_identity_t<WitnessOf<E>>& w,
                                       std::size_t part) {
  const DomainOf<typename E::Fr> domain = check_witness_shape(pk, w, part);
  check_witness_values(w, part);
  return domain;
}

template <class E>
DomainOf<typename E::Fr> check_witness_shape(const ProvingKeyOf<E>& pk, const std::type_identity_t<WitnessOf<E>>& w,
                                             std::size_t part) {
  const std::string where = partition_name(part);
  const QueryLayout layout = QueryLayout::of(pk);
  layout.check_counts(w.a.size(), w.input.size(), w.aux.size(), where);
  auto expect = [&](const char* what, std::size_t got, std::size_t want) {
    if (got != want)
      throw WitnessError(where + what + " has " + std::to_string(got) + " values, expected " + std::to_string(want) +
                         " (witness and proving key do not match)");
  };
  expect("b", w.b.size(), w.a.size());
  expect("c", w.c.size(), w.a.size());
  if (!w.input[0].is_one()) throw WitnessError(where + "input[0] must be 1");
  layout.check_densities(w.densities, where);
  return layout.template domain<typename E::Fr>(w.a.size(), pk.convention.domain_generator, where);
}

namespace {

// The lowest index in [0, n) at which bad(i) holds (n if none), on every core.
template <class Bad>
std::size_t lowest_where(std::size_t n, Bad&& bad) {
  return tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, n, 1 << 14), n,
      [&](const tbb::blocked_range<std::size_t>& r, std::size_t found) {
        for (std::size_t k = r.begin(); k != r.end() && k < found; ++k)
          if (bad(k)) return k;
        return found;
      },
      [](std::size_t x, std::size_t y) { return std::min(x, y); });
}

[[noreturn]] void throw_unreduced(std::size_t part, const char* vector, std::size_t index) {
  throw ScalarRangeError(partition_name(part) + vector + "[" + std::to_string(index) +
                             "] is not a reduced scalar (limbs >= r)",
                         vector, index);
}

}  // namespace

template <class E>
void check_witness_values(const WitnessOf<E>& w, std::size_t part) {
  using F = typename E::Fr;
  const auto in_range = [&](std::span<const F> v, const char* name) {
    if (const std::size_t i = lowest_where(v.size(), [&](std::size_t k) { return !v[k].is_reduced(); }); i < v.size())
      throw_unreduced(part, name, i);
  };
  in_range(w.input, "input");
  in_range(w.aux, "aux");
  // a, b and c in one pass (2^27 rows take seconds on one core): each row's values are in range
  // and satisfy a·b = c; the lowest row that fails is named, with what failed there.
  const auto reduced = [&](std::size_t k) { return w.a[k].is_reduced() && w.b[k].is_reduced() && w.c[k].is_reduced(); };
  const std::size_t rows = w.a.size();
  const std::size_t bad = lowest_where(rows, [&](std::size_t k) { return !reduced(k) || w.a[k] * w.b[k] != w.c[k]; });
  if (bad == rows) return;
  if (!w.a[bad].is_reduced()) throw_unreduced(part, "a", bad);
  if (!w.b[bad].is_reduced()) throw_unreduced(part, "b", bad);
  if (!w.c[bad].is_reduced()) throw_unreduced(part, "c", bad);
  throw WitnessError(partition_name(part) + "a·b != c at constraint " + std::to_string(bad) +
                     " (the witness does not satisfy the circuit)");
}

template <class F>
std::vector<RandomizersOf<F>> randomizers_from_seed(uint64_t seed, std::size_t partitions) {
  std::mt19937_64 rng(seed);
  std::vector<RandomizersOf<F>> out(partitions);
  for (RandomizersOf<F>& rs : out) {
    rs.r = random_scalar<F>(rng);
    rs.s = random_scalar<F>(rng);
  }
  return out;
}

template <class E>
ProofOf<E> assemble_proof(const VerifyingKeyOf<E>& vk, const std::type_identity_t<MsmSumsOf<E>>& sums,
                          const std::type_identity_t<RandomizersOf<typename E::Fr>>& rs) {
  using J1 = Jacobian<typename E::G1>;
  using J2 = Jacobian<typename E::G2>;
  const typename E::Fr &r = rs.r, &s = rs.s;
  const J1 g_a = sums.a.add_mixed(vk.alpha_g1) + scalar_mul(vk.delta_g1, r);
  const J2 g_b = sums.b_g2.add_mixed(vk.beta_g2) + scalar_mul(vk.delta_g2, s);
  const J1 b1 = sums.b_g1.add_mixed(vk.beta_g1) + scalar_mul(vk.delta_g1, s);
  const J1 g_c = sums.h + sums.l + scalar_mul(g_a, s) + scalar_mul(b1, r) - scalar_mul(vk.delta_g1, r * s);
  return ProofOf<E>{g_a.to_affine(), g_b.to_affine(), g_c.to_affine()};
}

template <class E>
ProofOf<E> prove_partition(const ProvingKeyOf<E>& pk, const std::type_identity_t<WitnessOf<E>>& w,
                           const std::type_identity_t<RandomizersOf<typename E::Fr>>& rs, std::size_t part,
                           ProveTimings* timings) {
  using F = typename E::Fr;
  using G1 = typename E::G1;
  using G2 = typename E::G2;
  ProveTimings local;
  ProveTimings& total = timings ? *timings : local;
  auto t0 = Clock::now();
  const DomainOf<F> domain = check_witness(pk, w, part);
  const std::size_t n = domain.size();
  std::vector<F> a(n, F::zero()), b(n, F::zero()), c(n, F::zero());
  std::copy(w.a.begin(), w.a.end(), a.begin());
  std::copy(w.b.begin(), w.b.end(), b.begin());
  std::copy(w.c.begin(), w.c.end(), c.begin());
  total.evaluate += ms_since(t0);

  // H: the one step that depends on the key's convention.
  t0 = Clock::now();
  if (pk.convention.h_basis == HBasis::bellman)
    h_scalars_bellman(a, b, c, domain);
  else
    h_scalars_snarkjs(a, b, c, domain, pk.convention.domain_generator);
  total.ntt += ms_since(t0);

  const QueryLayout layout = QueryLayout::of(pk);
  const std::vector<F> a_scalars = gather_scalars(w.input, w.aux, layout.a_variables(w.densities));
  const std::vector<F> b_scalars = gather_scalars(w.input, w.aux, layout.b_variables(w.densities));

  // C needs H, L and B_G1 only as sum H + sum L + r·sum B_G1 (assemble_proof: r·(beta_1 +
  // sum B_G1 + s·delta_1)). Where L's and B_G1's scalars are dense, so that each would be one
  // Pippenger MSM anyway, they join H's MSM (B_G1's scalars times r) if that widens its window:
  // one MSM over ~3x the points with fewer windows per point, one bucket reduction per window
  // instead of three. sums.l and sums.b_g1 are then infinity and assemble_proof adds the same
  // C. Vectors of mostly 0s and 1s keep their split MSM (a batch addition is far cheaper).
  // Joining pays when it widens the window (one wider window over all the points beats three
  // narrower ones); at equal windows the joined points fit the caches less well and it gains
  // nothing, hence the condition (docs/perf-history/cpu-issue18.md). Nor when the joined window
  // is 15 or more (millions of points): there the bucket lists' cache misses outweigh the saved
  // reductions (BN254 mul_chain 2^20, 2 cores: H + L + B_G1 joined at 15 took 5.9 s, apart at
  // 14 5.1 s; docs/results/bn254_msm_windows_2core.txt).
  const std::size_t l_other = count_other<F>(w.aux), b_other = count_other<F>(b_scalars);
  const bool l_dense = pippenger_whole(l_other, w.aux.size()), b_g1_dense = pippenger_whole(b_other, b_scalars.size());
  const std::size_t joined = pk.h.size() + (l_dense ? pk.l.size() : 0) + (b_g1_dense ? pk.b_g1.size() : 0);
  const int joined_window = msm_default_window(joined);
  const bool widens = joined_window > msm_default_window(pk.h.size()) && joined_window < 15;
  const bool l_joins = l_dense && widens, b_g1_joins = b_g1_dense && widens;
  std::vector<F> rb;
  MsmSumsOf<E> sums;
  t0 = Clock::now();
  {
    std::vector<MsmPart<G1>> c_parts{{pk.h, std::span<const F>(a.data(), pk.h.size())}};
    if (l_joins) c_parts.push_back({pk.l, w.aux});
    if (b_g1_joins) {
      rb.resize(b_scalars.size());
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, rb.size(), 4096),
                        [&](const tbb::blocked_range<std::size_t>& r) {
                          for (std::size_t i = r.begin(); i != r.end(); ++i) rb[i] = b_scalars[i] * rs.r;
                        });
      c_parts.push_back({pk.b_g1, rb});
    }
    sums.h = msm_sum<G1>(c_parts);
  }
  total.msm_h += ms_since(t0);
  if (l_joins) {
    sums.l = Jacobian<G1>::infinity();
  } else {
    t0 = Clock::now();
    sums.l = split_msm<G1>(pk.l, w.aux, l_other);
    total.msm_l += ms_since(t0);
  }
  t0 = Clock::now();
  sums.a = split_msm<G1>(pk.a, a_scalars, count_other<F>(a_scalars));
  total.msm_a += ms_since(t0);
  if (b_g1_joins) {
    sums.b_g1 = Jacobian<G1>::infinity();
  } else {
    t0 = Clock::now();
    sums.b_g1 = split_msm<G1>(pk.b_g1, b_scalars, b_other);
    total.msm_b_g1 += ms_since(t0);
  }
  t0 = Clock::now();
  sums.b_g2 = split_msm<G2>(pk.b_g2, b_scalars, b_other);
  total.msm_b_g2 += ms_since(t0);

  t0 = Clock::now();
  ProofOf<E> proof = assemble_proof(pk.vk, sums, rs);
  total.assembly += ms_since(t0);
  return proof;
}

template <class E>
std::vector<ProofOf<E>> prove(const ProvingKeyOf<E>& pk, SpanOf<WitnessOf<E>> witnesses, uint64_t seed,
                              ProveTimings* timings, const ProgressFn& progress) {
  const auto randomizers = randomizers_from_seed<typename E::Fr>(seed, witnesses.size());
  return prove<E>(pk, witnesses, randomizers, timings, progress);
}

template <class E>
std::vector<ProofOf<E>> prove(const ProvingKeyOf<E>& pk, SpanOf<WitnessOf<E>> witnesses,
                              SpanOf<RandomizersOf<typename E::Fr>> randomizers, ProveTimings* timings,
                              const ProgressFn& progress) {
  if (randomizers.size() != witnesses.size())
    throw std::invalid_argument("prove: " + std::to_string(randomizers.size()) + " randomiser pair(s) for " +
                                std::to_string(witnesses.size()) + " partition(s)");
  std::vector<ProofOf<E>> proofs;
  ProveTimings total;
  for (std::size_t part = 0; part < witnesses.size(); ++part) {
    proofs.push_back(prove_partition<E>(pk, witnesses[part], randomizers[part], part, &total));
    if (progress) progress(part + 1, witnesses.size());
  }
  if (timings) *timings = total;
  return proofs;
}

#define PP_PROVER_DEFINE(E)                                                                                        \
  template WitnessOf<E> witness_from_assignment(const R1csOf<E::Fr>&, std::type_identity_t<std::span<const E::Fr>>); \
  template DomainOf<E::Fr> check_witness(const ProvingKeyOf<E>&, const WitnessOf<E>&, std::size_t);                 \
  template DomainOf<E::Fr> check_witness_shape(const ProvingKeyOf<E>&, const WitnessOf<E>&, std::size_t);           \
  template void check_witness_values(const WitnessOf<E>&, std::size_t);                                             \
  template std::vector<RandomizersOf<E::Fr>> randomizers_from_seed(uint64_t, std::size_t);                          \
  template ProofOf<E> assemble_proof(const VerifyingKeyOf<E>&, const MsmSumsOf<E>&, const RandomizersOf<E::Fr>&);   \
  template ProofOf<E> prove_partition(const ProvingKeyOf<E>&, const WitnessOf<E>&, const RandomizersOf<E::Fr>&,     \
                                      std::size_t, ProveTimings*);                                                  \
  template std::vector<ProofOf<E>> prove(const ProvingKeyOf<E>&, SpanOf<WitnessOf<E>>, uint64_t, ProveTimings*,     \
                                         const ProgressFn&);                                                        \
  template std::vector<ProofOf<E>> prove(const ProvingKeyOf<E>&, SpanOf<WitnessOf<E>>,                              \
                                         SpanOf<RandomizersOf<E::Fr>>, ProveTimings*, const ProgressFn&);
PP_PROVER_DEFINE(Bls12_381)
PP_PROVER_DEFINE(bn254::Bn254)
#undef PP_PROVER_DEFINE

}  // namespace pp
