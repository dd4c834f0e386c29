// SPDX-License-Identifier: Apache-2.0 OR MIT
// Groth16 key generation with random toxic waste (tests and benchmarks only; not a ceremony).
#include <tbb/parallel_for.h>
#include <tbb/parallel_invoke.h>

#include <atomic>
#include <mutex>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "proofpipe/ec/fixed_base.hpp"
#include "proofpipe/groth16/prover.hpp"
#include "proofpipe/ntt/ntt.hpp"

namespace pp {
namespace {

template <class F>
F random_nonzero(std::mt19937_64& rng) {
  for (;;) {
    uint64_t c[4] = {rng(), rng(), rng(), rng() >> 2};
    F x;
    if (F::from_canonical(x, c) && !x.is_zero()) return x;
  }
}

// Fixed-base multiplication of one generator (ec/fixed_base.hpp), in parallel.
template <class C>
class FixedBase {
 public:
  explicit FixedBase(const Affine<C>& base) : table_(fixed_base_table(base)) {}

  Jacobian<C> mul(const typename C::Scalar& k) const { return fixed_base_mul(table_.data(), k).to_jacobian(); }

  // out[i] = scalars[i] · base, in parallel, converted to affine in batches; `tick(k)` after
  // every k points.
  template <class Tick>
  std::vector<Affine<C>> mul_all(const std::vector<typename C::Scalar>& scalars, Tick&& tick) const {
    std::vector<Affine<C>> out(scalars.size());
    constexpr std::size_t kChunk = 1024;
    tbb::parallel_for(std::size_t(0), (scalars.size() + kChunk - 1) / kChunk, [&](std::size_t chunk) {
      const std::size_t begin = chunk * kChunk, end = std::min(scalars.size(), begin + kChunk);
      std::vector<Jacobian<C>> jac(end - begin);
      std::vector<typename C::Field> scratch(end - begin);
      for (std::size_t i = begin; i < end; ++i) jac[i - begin] = mul(scalars[i]);
      batch_to_affine(jac.data(), out.data() + begin, end - begin, scratch.data());
      tick(end - begin);
    });
    return out;
  }

 private:
  std::vector<Affine<C>> table_;
};

// Inverts every element in place (all must be non-zero): one field inversion per block of
// 2^16 elements, blocks in parallel.
template <class F>
void batch_invert(std::span<F> v) {
  constexpr std::size_t kBlock = std::size_t(1) << 16;
  tbb::parallel_for(std::size_t(0), (v.size() + kBlock - 1) / kBlock, [&](std::size_t blk) {
    const std::size_t begin = blk * kBlock, end = std::min(v.size(), begin + kBlock);
    std::vector<F> prefix(end - begin);
    F acc = F::one();
    for (std::size_t i = begin; i < end; ++i) {
      prefix[i - begin] = acc;
      acc *= v[i];
    }
    F inv = acc.inverse();
    for (std::size_t i = end; i-- > begin;) {
      const F vi = v[i];
      v[i] = inv * prefix[i - begin];
      inv *= vi;
    }
  });
}

// out[i] = first · ratio^i, in parallel blocks.
template <class F>
void geometric(std::span<F> out, const F& first, const F& ratio) {
  constexpr std::size_t kBlock = std::size_t(1) << 16;
  tbb::parallel_for(std::size_t(0), (out.size() + kBlock - 1) / kBlock, [&](std::size_t blk) {
    const std::size_t begin = blk * kBlock, end = std::min(out.size(), begin + kBlock);
    F x = first * ratio.pow(Limbs<1>{{uint64_t(begin)}});
    for (std::size_t i = begin; i < end; ++i) {
      out[i] = x;
      x *= ratio;
    }
  });
}

// Positions of the set bits of `bits` over [0, n) in order: the exclusive prefix count per word.
std::vector<std::size_t> word_ranks(const std::vector<uint64_t>& bits) {
  std::vector<std::size_t> rank(bits.size() + 1, 0);
  for (std::size_t w = 0; w < bits.size(); ++w) rank[w + 1] = rank[w] + std::size_t(__builtin_popcountll(bits[w]));
  return rank;
}

}  // namespace

template <class F>
KeyScalarsOf<F> key_scalars(const R1csOf<F>& r1cs, uint64_t seed, const KeyConvention& convention) {
  using Domain = DomainOf<F>;
  r1cs.validate();
  const std::size_t m0 = r1cs.num_constraints();
  const std::size_t num_inputs = r1cs.num_inputs;
  const std::size_t num_vars = r1cs.num_variables();
  const std::size_t num_aux = r1cs.num_aux;
  // bellman appends `input_i · 0 = 0` per input so that every input has an independent A column.
  const Domain domain = Domain::at_least(m0 + num_inputs, convention.domain_generator);
  const std::size_t n = domain.size();

  KeyScalarsOf<F> ks;
  ks.convention = convention;
  std::mt19937_64 rng(seed);
  const F tau = random_nonzero<F>(rng);
  ks.alpha = random_nonzero<F>(rng);
  ks.beta = random_nonzero<F>(rng);
  ks.gamma = random_nonzero<F>(rng);
  ks.delta = random_nonzero<F>(rng);

  // Lagrange basis at tau: L_j(tau) = (tau^n - 1)/n · omega^j / (tau - omega^j).
  const F z_tau = tau.pow(Limbs<1>{{uint64_t(n)}}) - F::one();
  if (z_tau.is_zero()) throw std::runtime_error("setup: tau landed in the domain; use another seed");
  std::vector<F> omega_pow(n), lagrange(n);
  geometric<F>(omega_pow, F::one(), domain.omega());
  tbb::parallel_for(std::size_t(0), n, [&](std::size_t j) { lagrange[j] = tau - omega_pow[j]; });
  batch_invert<F>(lagrange);
  const F scale = z_tau * domain.size_inv();
  tbb::parallel_for(std::size_t(0), n, [&](std::size_t j) { lagrange[j] = lagrange[j] * omega_pow[j] * scale; });

  // u_i(tau), v_i(tau), w_i(tau): column sums of the matrices weighted by L_row(tau) (one
  // matrix per thread: the sums scatter over columns).
  std::vector<F> u(num_vars, F::zero()), v(num_vars, F::zero()), w(num_vars, F::zero());
  auto accumulate = [&](const SparseMatrixOf<F>& m, std::vector<F>& out) {
    for (std::size_t row = 0; row < m.rows(); ++row)
      for (uint64_t e = m.row_start[row]; e < m.row_start[row + 1]; ++e)
        out[m.column[e]] += m.value[e] * lagrange[row];
  };
  tbb::parallel_invoke([&] { accumulate(r1cs.a, u); }, [&] { accumulate(r1cs.b, v); },
                       [&] { accumulate(r1cs.c, w); });
  for (std::size_t i = 0; i < num_inputs; ++i) u[i] += lagrange[m0 + i];

  const Densities dens = column_densities(r1cs);
  const F gamma_inv = ks.gamma.inverse(), delta_inv = ks.delta.inverse();
  auto combined = [&](std::size_t i) { return ks.beta * u[i] + ks.alpha * v[i] + w[i]; };

  ks.ic.resize(num_inputs);
  for (std::size_t i = 0; i < num_inputs; ++i) ks.ic[i] = combined(i) * gamma_inv;
  // A zero L point would be the point at infinity, which key readers (ours, bellperson's)
  // reject; bellman refuses such circuits the same way (UnconstrainedVariable).
  ks.l.resize(num_aux);
  std::atomic<std::size_t> first_zero{num_aux};
  tbb::parallel_for(std::size_t(0), num_aux, [&](std::size_t j) {
    const F k = combined(num_inputs + j);
    if (k.is_zero()) {
      std::size_t seen = first_zero.load();
      while (j < seen && !first_zero.compare_exchange_weak(seen, j)) {
      }
    }
    ks.l[j] = k * delta_inv;
  });
  if (first_zero.load() < num_aux)
    throw std::invalid_argument("setup: aux variable " + std::to_string(first_zero.load()) +
                                " appears in no constraint (unconstrained variable)");
  // A: every input, then the aux variables with an A column; B: by both densities.
  const std::vector<std::size_t> a_rank = word_ranks(dens.a_aux), b_rank = word_ranks(dens.b_aux);
  std::size_t b_inputs = 0;
  for (std::size_t i = 0; i < num_inputs; ++i) b_inputs += test_bit(dens.b_input, i) ? 1 : 0;
  ks.a.resize(num_inputs + a_rank.back());
  ks.b.resize(b_inputs + b_rank.back());
  for (std::size_t i = 0, k = 0; i < num_inputs; ++i) {
    ks.a[i] = u[i];
    if (test_bit(dens.b_input, i)) ks.b[k++] = v[i];
  }
  tbb::parallel_for(std::size_t(0), dens.a_aux.size(), [&](std::size_t word) {
    std::size_t ka = num_inputs + a_rank[word], kb = b_inputs + b_rank[word];
    for (std::size_t j = word * 64; j < std::min(num_aux, word * 64 + 64); ++j) {
      if (test_bit(dens.a_aux, j)) ks.a[ka++] = u[num_inputs + j];
      if (test_bit(dens.b_aux, j)) ks.b[kb++] = v[num_inputs + j];
    }
  });

  if (convention.h_basis == HBasis::bellman) {
    // H query: tau^i Z(tau) / delta for i < n - 1.
    ks.h.resize(n - 1);
    geometric<F>(ks.h, z_tau * delta_inv, tau);
  } else {
    // snarkjs's H query: L_{2j+1}(tau) / delta over the 2n-point domain, at x_j = nu·omega^j:
    // L_{2j+1}(tau) = (tau^(2n) - 1)/(2n) · x_j / (tau - x_j).
    const Domain wide(domain.lg() + 1, convention.domain_generator);
    const F z2_tau = tau.pow(Limbs<1>{{uint64_t(2 * n)}}) - F::one();
    if (z2_tau.is_zero()) throw std::runtime_error("setup: tau landed in the domain; use another seed");
    ks.h.resize(n);
    std::vector<F> x(n);
    tbb::parallel_for(std::size_t(0), n, [&](std::size_t j) {
      x[j] = wide.omega() * omega_pow[j];
      ks.h[j] = tau - x[j];
    });
    batch_invert<F>(ks.h);
    const F hscale = z2_tau * wide.size_inv() * delta_inv;
    tbb::parallel_for(std::size_t(0), n, [&](std::size_t j) { ks.h[j] = ks.h[j] * x[j] * hscale; });
  }
  return ks;
}

template <class F>
ProvingKeyOf<CurveOf<F>> key_from_scalars(const KeyScalarsOf<F>& ks, const ProgressFn& progress) {
  using E = CurveOf<F>;
  const std::size_t total_points = ks.ic.size() + ks.h.size() + ks.l.size() + ks.a.size() + 2 * ks.b.size();
  std::atomic<std::size_t> done{0};
  std::mutex report;
  auto tick = [&](std::size_t k) {
    const std::size_t now = done += k;
    if (progress) {
      std::lock_guard lock(report);
      progress(now, total_points);
    }
  };
  const FixedBase<typename E::G1> g1(E::g1());
  const FixedBase<typename E::G2> g2(E::g2());
  ProvingKeyOf<E> pk = key_skeleton(ks);
  pk.vk.ic = g1.mul_all(ks.ic, tick);
  pk.h = g1.mul_all(ks.h, tick);
  pk.l = g1.mul_all(ks.l, tick);
  pk.a = g1.mul_all(ks.a, tick);
  pk.b_g1 = g1.mul_all(ks.b, tick);
  pk.b_g2 = g2.mul_all(ks.b, tick);
  return pk;
}

template <class F>
ProvingKeyOf<CurveOf<F>> key_skeleton(const KeyScalarsOf<F>& ks) {
  using E = CurveOf<F>;
  const FixedBase<typename E::G1> g1(E::g1());
  const FixedBase<typename E::G2> g2(E::g2());
  ProvingKeyOf<E> pk;
  pk.convention = ks.convention;
  pk.vk.alpha_g1 = g1.mul(ks.alpha).to_affine();
  pk.vk.beta_g1 = g1.mul(ks.beta).to_affine();
  pk.vk.beta_g2 = g2.mul(ks.beta).to_affine();
  pk.vk.gamma_g2 = g2.mul(ks.gamma).to_affine();
  pk.vk.delta_g1 = g1.mul(ks.delta).to_affine();
  pk.vk.delta_g2 = g2.mul(ks.delta).to_affine();
  return pk;
}

template <class F>
ProvingKeyOf<CurveOf<F>> setup(const R1csOf<F>& r1cs, uint64_t seed, const ProgressFn& progress,
                               const KeyConvention& convention) {
  return key_from_scalars(key_scalars(r1cs, seed, convention), progress);
}

#define PP_SETUP_DEFINE(F)                                                                                   \
  template KeyScalarsOf<F> key_scalars(const R1csOf<F>&, uint64_t, const KeyConvention&);                    \
  template ProvingKeyOf<CurveOf<F>> key_from_scalars(const KeyScalarsOf<F>&, const ProgressFn&);             \
  template ProvingKeyOf<CurveOf<F>> key_skeleton(const KeyScalarsOf<F>&);                                    \
  template ProvingKeyOf<CurveOf<F>> setup(const R1csOf<F>&, uint64_t, const ProgressFn&, const KeyConvention&);
PP_SETUP_DEFINE(Fr)
PP_SETUP_DEFINE(bn254::Fr)
#undef PP_SETUP_DEFINE

}  // namespace pp
