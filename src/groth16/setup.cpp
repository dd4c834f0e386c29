// Groth16 key generation with random toxic waste (tests and benchmarks only; not a ceremony).
#include <tbb/parallel_for.h>

#include <atomic>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "proofpipe/groth16/prover.hpp"
#include "proofpipe/ntt/ntt.hpp"

namespace pp {
namespace {

Fr random_nonzero(std::mt19937_64& rng) {
  for (;;) {
    uint64_t c[4] = {rng(), rng(), rng(), rng() >> 2};
    Fr x;
    if (Fr::from_canonical(x, c) && !x.is_zero()) return x;
  }
}

// Fixed-base multiplication by 8-bit windows: table[w][d] = d·2^(8w)·B in affine, so k·B costs
// 32 mixed additions. Setup multiplies each generator by millions of scalars.
template <class C>
class FixedBase {
 public:
  static constexpr int kWindow = 8;
  static constexpr int kWindows = 256 / kWindow;

  explicit FixedBase(const Affine<C>& base) : table_(kWindows * 256) {
    std::vector<Jacobian<C>> jac(kWindows * 256);
    Jacobian<C> row_base = Jacobian<C>::from_affine(base);
    for (int w = 0; w < kWindows; ++w) {
      jac[w * 256] = Jacobian<C>::infinity();
      for (int d = 1; d < 256; ++d) jac[w * 256 + d] = jac[w * 256 + d - 1] + row_base;
      row_base = jac[w * 256 + 255] + row_base;  // 256 · previous base
    }
    std::vector<typename C::Field> scratch(jac.size());
    batch_to_affine(jac.data(), table_.data(), jac.size(), scratch.data());
  }

  Jacobian<C> mul(const Fr& k) const {
    uint64_t c[4];
    k.to_canonical(c);
    XYZZ<C> acc = XYZZ<C>::infinity();
    for (int w = 0; w < kWindows; ++w) {
      const unsigned d = unsigned(c[w / 8] >> (8 * (w % 8))) & 0xff;
      if (d) acc = acc.add_mixed(table_[w * 256 + d]);
    }
    return acc.to_jacobian();
  }

  // out[i] = scalars[i] · base, in parallel, converted to affine in batches; `tick(k)` after
  // every k points.
  template <class Tick>
  std::vector<Affine<C>> mul_all(const std::vector<Fr>& scalars, Tick&& tick) const {
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

// Inverts every element in place with one field inversion (all must be non-zero).
void batch_invert(std::vector<Fr>& v) {
  std::vector<Fr> prefix(v.size());
  Fr acc = Fr::one();
  for (std::size_t i = 0; i < v.size(); ++i) {
    prefix[i] = acc;
    acc *= v[i];
  }
  Fr inv = acc.inverse();
  for (std::size_t i = v.size(); i-- > 0;) {
    const Fr vi = v[i];
    v[i] = inv * prefix[i];
    inv *= vi;
  }
}

}  // namespace

ProvingKey setup(const R1cs& r1cs, uint64_t seed, const ProgressFn& progress, const KeyConvention& convention) {
  r1cs.validate();
  const std::size_t m0 = r1cs.num_constraints();
  const std::size_t num_inputs = r1cs.num_inputs;
  const std::size_t num_vars = r1cs.num_variables();
  // bellman appends `input_i · 0 = 0` per input so that every input has an independent A column.
  const Domain domain = Domain::at_least(m0 + num_inputs, convention.domain_generator);
  const std::size_t n = domain.size();

  std::mt19937_64 rng(seed);
  const Fr tau = random_nonzero(rng), alpha = random_nonzero(rng), beta = random_nonzero(rng),
           gamma = random_nonzero(rng), delta = random_nonzero(rng);

  // Lagrange basis at tau: L_j(tau) = (tau^n - 1)/n · omega^j / (tau - omega^j).
  const Fr z_tau = tau.pow(Limbs<1>{{uint64_t(n)}}) - Fr::one();
  if (z_tau.is_zero()) throw std::runtime_error("setup: tau landed in the domain; use another seed");
  std::vector<Fr> omega_pow(n), lagrange(n);
  omega_pow[0] = Fr::one();
  for (std::size_t j = 1; j < n; ++j) omega_pow[j] = omega_pow[j - 1] * domain.omega();
  for (std::size_t j = 0; j < n; ++j) lagrange[j] = tau - omega_pow[j];
  batch_invert(lagrange);
  const Fr scale = z_tau * domain.size_inv();
  for (std::size_t j = 0; j < n; ++j) lagrange[j] = lagrange[j] * omega_pow[j] * scale;

  // u_i(tau), v_i(tau), w_i(tau): column sums of the matrices weighted by L_row(tau).
  std::vector<Fr> u(num_vars, Fr::zero()), v(num_vars, Fr::zero()), w(num_vars, Fr::zero());
  auto accumulate = [&](const SparseMatrix& m, std::vector<Fr>& out) {
    for (std::size_t row = 0; row < m.rows(); ++row)
      for (uint64_t e = m.row_start[row]; e < m.row_start[row + 1]; ++e)
        out[m.column[e]] += m.value[e] * lagrange[row];
  };
  accumulate(r1cs.a, u);
  accumulate(r1cs.b, v);
  accumulate(r1cs.c, w);
  for (std::size_t i = 0; i < num_inputs; ++i) u[i] += lagrange[m0 + i];

  const Densities dens = column_densities(r1cs);
  const Fr gamma_inv = gamma.inverse(), delta_inv = delta.inverse();

  std::vector<Fr> ic_s, l_s, a_s, b_s;
  for (std::size_t i = 0; i < num_vars; ++i) {
    const Fr k = beta * u[i] + alpha * v[i] + w[i];
    const bool input = i < num_inputs;
    if (input) {
      ic_s.push_back(k * gamma_inv);
    } else {
      // A zero L point would be the point at infinity, which key readers (ours, bellperson's)
      // reject; bellman refuses such circuits the same way (UnconstrainedVariable).
      if (k.is_zero())
        throw std::invalid_argument("setup: aux variable " + std::to_string(i - num_inputs) +
                                    " appears in no constraint (unconstrained variable)");
      l_s.push_back(k * delta_inv);
    }
    if (input || test_bit(dens.a_aux, i - num_inputs)) a_s.push_back(u[i]);
    if (input ? test_bit(dens.b_input, i) : test_bit(dens.b_aux, i - num_inputs)) b_s.push_back(v[i]);
  }
  std::vector<Fr> h_s;
  if (convention.h_basis == HBasis::bellman) {
    // H query: tau^i Z(tau) / delta for i < n - 1.
    h_s.resize(n - 1);
    Fr t = z_tau * delta_inv;
    for (std::size_t i = 0; i + 1 < n; ++i) {
      h_s[i] = t;
      t *= tau;
    }
  } else {
    // snarkjs's H query: L_{2j+1}(tau) / delta over the 2n-point domain, at x_j = nu·omega^j:
    // L_{2j+1}(tau) = (tau^(2n) - 1)/(2n) · x_j / (tau - x_j).
    const Domain wide(domain.lg() + 1, convention.domain_generator);
    const Fr z2_tau = tau.pow(Limbs<1>{{uint64_t(2 * n)}}) - Fr::one();
    if (z2_tau.is_zero()) throw std::runtime_error("setup: tau landed in the domain; use another seed");
    h_s.resize(n);
    std::vector<Fr> x(n);
    for (std::size_t j = 0; j < n; ++j) {
      x[j] = wide.omega() * omega_pow[j];
      h_s[j] = tau - x[j];
    }
    batch_invert(h_s);
    const Fr scale = z2_tau * wide.size_inv() * delta_inv;
    for (std::size_t j = 0; j < n; ++j) h_s[j] = h_s[j] * x[j] * scale;
  }
  const std::size_t total_points = ic_s.size() + h_s.size() + l_s.size() + a_s.size() + 2 * b_s.size();
  std::atomic<std::size_t> done{0};
  std::mutex report;
  auto tick = [&](std::size_t k) {
    const std::size_t now = done += k;
    if (progress) {
      std::lock_guard lock(report);
      progress(now, total_points);
    }
  };
  const FixedBase<G1Curve> g1(g1_generator());
  const FixedBase<G2Curve> g2(g2_generator());
  ProvingKey pk;
  pk.convention = convention;
  pk.vk.alpha_g1 = g1.mul(alpha).to_affine();
  pk.vk.beta_g1 = g1.mul(beta).to_affine();
  pk.vk.beta_g2 = g2.mul(beta).to_affine();
  pk.vk.gamma_g2 = g2.mul(gamma).to_affine();
  pk.vk.delta_g1 = g1.mul(delta).to_affine();
  pk.vk.delta_g2 = g2.mul(delta).to_affine();
  pk.vk.ic = g1.mul_all(ic_s, tick);
  pk.h = g1.mul_all(h_s, tick);
  pk.l = g1.mul_all(l_s, tick);
  pk.a = g1.mul_all(a_s, tick);
  pk.b_g1 = g1.mul_all(b_s, tick);
  pk.b_g2 = g2.mul_all(b_s, tick);
  return pk;
}

}  // namespace pp
