// SPDX-License-Identifier: Apache-2.0 OR MIT
// QueryLayout: the point counts of a key's queries, the domain and the A/B variable maps.
#include "proofpipe/groth16/query_layout.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

namespace pp {
namespace {

std::size_t popcount(std::span<const uint64_t> bits) {
  std::size_t n = 0;
  for (uint64_t w : bits) n += std::size_t(std::popcount(w));
  return n;
}

int ceil_log2(uint64_t m) { return m <= 1 ? 0 : int(std::bit_width(m - 1)); }

// The inputs (all, or those with a bit in input_density), then num_inputs + j for every aux
// variable j with a bit in aux_density.
std::vector<uint32_t> variables(uint64_t num_inputs, const std::vector<uint64_t>* input_density, uint64_t num_aux,
                                const std::vector<uint64_t>& aux_density, std::size_t expected) {
  std::vector<uint32_t> vars;
  vars.reserve(expected);
  for (uint64_t i = 0; i < num_inputs; ++i)
    if (!input_density || test_bit(*input_density, i)) vars.push_back(uint32_t(i));
  for (uint64_t j = 0; j < num_aux; ++j)
    if (test_bit(aux_density, j)) vars.push_back(uint32_t(num_inputs + j));
  return vars;
}

}  // namespace


QueryLayout QueryLayout::of_sizes(HBasis basis, uint64_t num_inputs, uint64_t h, uint64_t l, uint64_t a, uint64_t b_g1,
                                  uint64_t b_g2) {
  const auto bad = [](const std::string& what) { throw std::invalid_argument("proving key: " + what); };
  if (num_inputs == 0) bad("no IC points (the inputs count the constant one)");
  if (l >= (uint64_t(1) << 32) || num_inputs + l >= (uint64_t(1) << 32))
    bad(std::to_string(num_inputs + l) + " variables (IC + L points), the provers index fewer than 2^32");
  if (b_g1 != b_g2)
    bad("the B_G1 query has " + std::to_string(b_g1) + " points and the B_G2 query " + std::to_string(b_g2) +
        " (they must match)");
  if (a > num_inputs + l)
    bad("the A query has " + std::to_string(a) + " points, more than the " + std::to_string(num_inputs + l) +
        " variables");
  if (b_g1 > num_inputs + l)
    bad("the B queries have " + std::to_string(b_g1) + " points, more than the " + std::to_string(num_inputs + l) +
        " variables");
  if (h == 0) bad("the H query is empty");
  if (h >= (uint64_t(1) << 31)) bad("the H query has " + std::to_string(h) + " points, beyond a 2^31 domain");
  if (basis == HBasis::snarkjs && (h < 2 || !std::has_single_bit(h)))
    bad("the H query has " + std::to_string(h) + " points, not a power of two >= 2 (snarkjs keys have n)");
  QueryLayout q;
  q.h_basis = basis;
  q.num_inputs = num_inputs;
  q.num_aux = l;
  q.h_points = h;
  q.a_points = a;
  q.b_points = b_g1;
  return q;
}

int QueryLayout::lg() const { return std::max(1, ceil_log2(h_points + (h_basis == HBasis::bellman ? 1 : 0))); }

void QueryLayout::check_counts(uint64_t rows, uint64_t inputs, uint64_t aux, const std::string& where) const {
  auto expect = [&](const char* what, uint64_t got, uint64_t want) {
    if (got != want)
      throw WitnessError(where + what + " has " + std::to_string(got) + " values, expected " + std::to_string(want) +
                         " (witness and proving key do not match)");
  };
  expect("the input assignment", inputs, num_inputs);
  expect("the aux assignment", aux, num_aux);
  check_rows(rows, where);
}

void QueryLayout::check_rows(uint64_t rows, const std::string& where) const {
  // bellman: the domain is the smallest power of two (at least 2) holding the rows, and the key's
  // H query has one point fewer; snarkjs: the key's n points must hold the rows.
  const uint64_t n = domain_size();
  const bool fits = h_basis == HBasis::bellman ? rows <= n && std::bit_ceil(std::max<uint64_t>(rows, 2)) == n
                                               : rows <= n;
  if (!fits)
    throw WitnessError(where + std::to_string(rows) + " rows do not fit the key's domain of 2^" +
                       std::to_string(lg()) + " (its H query has " + std::to_string(h_points) +
                       " points; witness and proving key do not match)");
}

void QueryLayout::check_densities(const Densities& d, const std::string& where) const {
  auto expect = [&](const char* what, uint64_t got, uint64_t want, const char* unit) {
    if (got != want)
      throw WitnessError(where + what + " has " + std::to_string(got) + " " + unit + ", expected " +
                         std::to_string(want) + " (witness and proving key do not match)");
  };
  expect("the A-aux density", d.a_aux.size(), (num_aux + 63) / 64, "words");
  expect("the B-aux density", d.b_aux.size(), (num_aux + 63) / 64, "words");
  expect("the B-input density", d.b_input.size(), (num_inputs + 63) / 64, "words");
  expect("the A query", a_points, num_inputs + popcount(d.a_aux), "points");
  expect("the B_G1 query", b_points, popcount(d.b_input) + popcount(d.b_aux), "points");
}


std::vector<uint32_t> QueryLayout::a_variables(const Densities& d) const {
  return variables(num_inputs, nullptr, num_aux, d.a_aux, a_points);
}

std::vector<uint32_t> QueryLayout::b_variables(const Densities& d) const {
  return variables(num_inputs, &d.b_input, num_aux, d.b_aux, b_points);
}

namespace {
template <class F>
std::vector<F> gather(std::span<const F> input, std::span<const F> aux, std::span<const uint32_t> vars) {
  std::vector<F> out(vars.size());
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, vars.size(), 1 << 14), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t p = r.begin(); p != r.end(); ++p) {
      const uint32_t v = vars[p];
      out[p] = v < input.size() ? input[v] : aux[v - input.size()];
    }
  });
  return out;
}
}  // namespace

std::vector<Fr> gather_scalars(std::span<const Fr> input, std::span<const Fr> aux, std::span<const uint32_t> vars) {
  return gather(input, aux, vars);
}
std::vector<bn254::Fr> gather_scalars(std::span<const bn254::Fr> input, std::span<const bn254::Fr> aux,
                                      std::span<const uint32_t> vars) {
  return gather(input, aux, vars);
}

}  // namespace pp
