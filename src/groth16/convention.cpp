// SPDX-License-Identifier: Apache-2.0 OR MIT
// H basis changes as group-element NTTs, and row renumbering between domain generators.
#include "proofpipe/groth16/convention.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <bit>
#include <stdexcept>
#include <string>
#include <utility>

#include "proofpipe/ntt/ntt.hpp"

namespace pp {
namespace {

using Range = tbb::blocked_range<std::size_t>;

std::size_t bit_reverse(std::size_t i, int lg) {
  std::size_t r = 0;
  for (int b = 0; b < lg; ++b) r |= ((i >> b) & 1) << (lg - 1 - b);
  return r;
}

// powers[i] = x^i · scale for i < count.
std::vector<Fr> scaled_powers(const Fr& x, const Fr& scale, std::size_t count) {
  std::vector<Fr> out(count);
  tbb::parallel_for(Range(0, count, 1024), [&](const Range& r) {
    Fr p = x.pow(Limbs<1>{{uint64_t(r.begin())}}) * scale;
    for (std::size_t i = r.begin(); i != r.end(); ++i) {
      out[i] = p;
      p *= x;
    }
  });
  return out;
}

// v_i <- Σ_j v_j root^(ij) over G1, in place (natural order in and out), root of order v.size().
// Radix-2 decimation in time: one scalar multiplication per butterfly, except twiddle 1.
void group_ntt(std::vector<G1Jacobian>& v, const Fr& root) {
  const std::size_t n = v.size();
  const int lg = std::countr_zero(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t j = bit_reverse(i, lg);
    if (i < j) std::swap(v[i], v[j]);
  }
  const std::vector<Fr> tw = scaled_powers(root, Fr::one(), n / 2);
  for (std::size_t len = 2; len <= n; len <<= 1) {
    const std::size_t half = len / 2, stride = n / len;
    tbb::parallel_for(Range(0, n / 2, 64), [&](const Range& r) {
      for (std::size_t t = r.begin(); t != r.end(); ++t) {
        const std::size_t block = t / half, j = t % half;
        const std::size_t i0 = block * len + j, i1 = i0 + half;
        const G1Jacobian u = v[i0];
        const G1Jacobian w = j == 0 ? v[i1] : scalar_mul(v[i1], tw[j * stride]);
        v[i0] = u + w;
        v[i1] = u - w;
      }
    });
  }
}

std::vector<G1Affine> to_affine_all(const std::vector<G1Jacobian>& v) {
  std::vector<G1Affine> out(v.size());
  tbb::parallel_for(Range(0, v.size(), 4096), [&](const Range& r) {
    std::vector<Fp> scratch(r.size());
    batch_to_affine(v.data() + r.begin(), out.data() + r.begin(), r.size(), scratch.data());
  });
  return out;
}

// The points scaled by the factors: out[i] = factors[i] · in[i] (in[i] = infinity beyond in.size()).
std::vector<G1Jacobian> scale_points(std::span<const G1Affine> in, const std::vector<Fr>& factors, std::size_t n) {
  std::vector<G1Jacobian> out(n, G1Jacobian::infinity());
  tbb::parallel_for(Range(0, std::min(n, in.size()), 64), [&](const Range& r) {
    for (std::size_t i = r.begin(); i != r.end(); ++i) out[i] = scalar_mul(in[i], factors[i]);
  });
  return out;
}

}  // namespace

ProvingKey change_h_basis(const ProvingKey& pk, HBasis target) {
  if (pk.convention.h_basis == target) return pk;
  const uint64_t g = pk.convention.domain_generator;
  const std::size_t n = target == HBasis::snarkjs ? pk.h.size() + 1 : pk.h.size();
  if (n < 2 || (n & (n - 1)) != 0)
    throw std::invalid_argument("change_h_basis: the H query has " + std::to_string(pk.h.size()) +
                                " points, which fits no power-of-two domain of this basis");
  const int lg = std::countr_zero(n);
  if (lg + 1 > Domain::kMaxLg) throw std::invalid_argument("change_h_basis: the domain is too large (2^31 at most)");
  const Domain domain(lg, g);
  const Fr nu = Domain(lg + 1, g).omega();
  ProvingKey out = pk;
  out.convention.h_basis = target;
  if (target == HBasis::bellman) {
    // T_i = -2 nu^i Σ_j omega^(ij) H_j: the NTT first, then the diagonal.
    std::vector<G1Jacobian> v(n);
    for (std::size_t j = 0; j < n; ++j) v[j] = G1Jacobian::from_affine(pk.h[j]);
    group_ntt(v, domain.omega());
    const std::vector<Fr> factors = scaled_powers(nu, -Fr::from_u64(2), n - 1);
    std::vector<G1Jacobian> t(n - 1);
    tbb::parallel_for(Range(0, n - 1, 64), [&](const Range& r) {
      for (std::size_t i = r.begin(); i != r.end(); ++i) t[i] = scalar_mul(v[i], factors[i]);
    });
    out.h = to_affine_all(t);
  } else {
    // H_j = Σ_i omega^(-ij) (-1/(2n) nu^(-i) T_i): the diagonal first (T_(n-1) = 0), then the NTT.
    const Fr scale = -(Fr::from_u64(2) * Fr::from_u64(n)).inverse();
    const std::vector<Fr> factors = scaled_powers(nu.inverse(), scale, n - 1);
    std::vector<G1Jacobian> v = scale_points(pk.h, factors, n);
    group_ntt(v, domain.omega_inv());
    out.h = to_affine_all(v);
  }
  return out;
}

uint64_t row_stride(int lg, uint64_t from_generator, uint64_t to_generator) {
  const Domain from(lg, from_generator), to(lg, to_generator);
  // Bit by bit (the group has order 2^lg): with s correct modulo 2^j, gamma = omega_from /
  // omega_to^s has order dividing 2^(lg-j), and gamma^(2^(lg-1-j)) is -1 exactly when bit j is set.
  uint64_t s = 0;
  for (int j = 0; j < lg; ++j) {
    Fr gamma = from.omega() * to.omega_inv().pow(Limbs<1>{{s}});
    for (int k = 0; k < lg - 1 - j; ++k) gamma = gamma.sqr();
    if (!gamma.is_one()) s |= uint64_t(1) << j;
  }
  if (to.omega().pow(Limbs<1>{{s}}) != from.omega())
    throw std::invalid_argument("row_stride: the roots are not powers of each other");
  return s;
}

Witness move_rows(const Witness& w, int lg, uint64_t from_generator, uint64_t to_generator) {
  const std::size_t n = std::size_t(1) << lg;
  if (w.a.size() > n || w.b.size() != w.a.size() || w.c.size() != w.a.size())
    throw std::invalid_argument("move_rows: a, b, c must have equal sizes of at most 2^" + std::to_string(lg));
  const uint64_t s = row_stride(lg, from_generator, to_generator);
  std::vector<Fr> a(n, Fr::zero()), b(n, Fr::zero()), c(n, Fr::zero());
  for (std::size_t k = 0; k < w.a.size(); ++k) {
    const std::size_t to = std::size_t((unsigned __int128)s * k % n);
    a[to] = w.a[k];
    b[to] = w.b[k];
    c[to] = w.c[k];
  }
  Witness out;
  out.a = std::move(a);
  out.b = std::move(b);
  out.c = std::move(c);
  out.input = w.input;
  out.aux = w.aux;
  out.densities = w.densities;
  return out;
}

}  // namespace pp
