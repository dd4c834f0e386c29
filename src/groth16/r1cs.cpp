// SPDX-License-Identifier: Apache-2.0 OR MIT
// R1CS checks and the parallel sparse matrix–vector products that turn a witness into a, b, c.
#include "proofpipe/groth16/r1cs.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <limits>
#include <stdexcept>
#include <string>

namespace pp {
namespace {

// Rows per task: large enough to amortise scheduling, small enough to balance rows of very
// different lengths (a PoRep-like circuit mixes 1-entry rows with ~50-entry packing rows).
constexpr std::size_t kRowGrain = 2048;
constexpr std::size_t kEntryGrain = 1 << 16;


template <class F>
inline F row_dot(const SparseMatrixOf<F>& m, std::size_t row, const F* z) {
  F acc = F::zero();
  const uint64_t end = m.row_start[row + 1];
  for (uint64_t e = m.row_start[row]; e < end; ++e) accumulate_product(acc, m.value[e], z[m.column[e]]);
  return acc;
}

const char* matrix_name(int k) { return k == 0 ? "A" : k == 1 ? "B" : "C"; }

[[noreturn]] void fail(const std::string& msg) { throw std::invalid_argument("R1cs: " + msg); }

// Row holding entry e (the last row whose start is <= e; empty rows share starts).
template <class F>
std::size_t row_of_entry(const SparseMatrixOf<F>& m, uint64_t e) {
  auto it = std::upper_bound(m.row_start.begin(), m.row_start.end(), e);
  return std::size_t(it - m.row_start.begin()) - 1;
}

// The O(1) consistency that evaluate() and friends need before they index anything.
template <class F>
void check_shapes(const R1csOf<F>& r1cs, std::size_t z_size, const char* who) {
  const std::size_t n = r1cs.num_constraints();
  const SparseMatrixOf<F>* ms[3] = {&r1cs.a, &r1cs.b, &r1cs.c};
  for (int k = 0; k < 3; ++k) {
    const SparseMatrixOf<F>& m = *ms[k];
    if (m.rows() != n)
      fail(std::string(who) + ": matrix " + matrix_name(k) + " has " + std::to_string(m.rows()) +
           " rows, A has " + std::to_string(n));
    const uint64_t last = m.row_start.empty() ? 0 : m.row_start.back();
    if (last != m.column.size() || m.column.size() != m.value.size())
      fail(std::string(who) + ": matrix " + matrix_name(k) + " is inconsistent (run validate())");
  }
  if (z_size != r1cs.num_variables())
    fail(std::string(who) + ": z has " + std::to_string(z_size) + " entries, expected num_inputs + num_aux = " +
         std::to_string(r1cs.num_variables()));
}

}  // namespace

std::size_t count_bits(std::span<const uint64_t> bits) {
  std::size_t n = 0;
  for (uint64_t w : bits) n += std::size_t(std::popcount(w));
  return n;
}

template <class F>
void R1csOf<F>::validate() const {
  if (num_inputs == 0) fail("num_inputs must be >= 1 (variable 0 is the constant one)");
  const SparseMatrixOf<F>* ms[3] = {&a, &b, &c};
  for (int k = 0; k < 3; ++k) {
    if (ms[k]->rows() != a.rows())
      fail("matrices have different row counts: A " + std::to_string(a.rows()) + ", B " +
           std::to_string(b.rows()) + ", C " + std::to_string(c.rows()));
  }
  const std::size_t nvars = num_variables();
  for (int k = 0; k < 3; ++k) {
    const SparseMatrixOf<F>& m = *ms[k];
    const std::string name = std::string("matrix ") + matrix_name(k);
    if (m.column.size() != m.value.size())
      fail(name + ": column has " + std::to_string(m.column.size()) + " entries but value has " +
           std::to_string(m.value.size()));
    if (m.row_start.empty()) {
      if (!m.column.empty()) fail(name + ": row_start is empty but the matrix holds " + std::to_string(m.column.size()) + " entries");
      continue;
    }
    if (m.row_start[0] != 0) fail(name + ": row_start[0] = " + std::to_string(m.row_start[0]) + ", expected 0");
    // Sequential on purpose: one compare per row is memory-bound and cheap next to the entries.
    for (std::size_t r = 0; r + 1 < m.row_start.size(); ++r) {
      if (m.row_start[r + 1] < m.row_start[r])
        fail(name + ": row_start not monotone at row " + std::to_string(r) + ": row_start[" + std::to_string(r) +
             "] = " + std::to_string(m.row_start[r]) + " > row_start[" + std::to_string(r + 1) +
             "] = " + std::to_string(m.row_start[r + 1]));
    }
    if (m.row_start.back() != m.column.size())
      fail(name + ": row_start[" + std::to_string(m.rows()) + "] = " + std::to_string(m.row_start.back()) +
           " but the matrix holds " + std::to_string(m.column.size()) + " entries");

    // Lowest bad entry, found in parallel so that validating a 25 GiB PoRep R1CS is not a
    // single-core scan. 0: ok, 1: bad column, 2: unreduced value.
    constexpr uint64_t kNone = std::numeric_limits<uint64_t>::max();
    const uint64_t bad = tbb::parallel_reduce(
        tbb::blocked_range<uint64_t>(0, m.column.size(), kEntryGrain), kNone,
        [&](const tbb::blocked_range<uint64_t>& rg, uint64_t best) {
          for (uint64_t e = rg.begin(); e < rg.end() && e < best; ++e) {
            if (m.column[e] >= nvars || !m.value[e].is_reduced()) return e;
          }
          return best;
        },
        [](uint64_t x, uint64_t y) { return std::min(x, y); });
    if (bad != kNone) {
      const std::size_t row = row_of_entry(m, bad);
      const std::string where = name + ", row " + std::to_string(row) + ", entry " +
                                std::to_string(bad - m.row_start[row]) + " (index " + std::to_string(bad) + ")";
      if (m.column[bad] >= nvars)
        fail(where + ": column " + std::to_string(m.column[bad]) + " out of range (num_variables = " +
             std::to_string(nvars) + ")");
      fail(where + ": value is not a reduced Fr (>= r in Montgomery form)");
    }
  }
}

template <class F>
EvaluationsOf<F> evaluate(const R1csOf<F>& r1cs, std::type_identity_t<std::span<const F>> z) {
  check_shapes(r1cs, z.size(), "evaluate");
  const std::size_t n = r1cs.num_constraints();
  EvaluationsOf<F> ev;
  ev.a.resize(n);
  ev.b.resize(n);
  ev.c.resize(n);
  const F* zp = z.data();
  // One pass over the rows doing all three matrices, so each task streams its share of A, B
  // and C once and writes three contiguous output runs.
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, kRowGrain), [&](const tbb::blocked_range<std::size_t>& rg) {
    for (std::size_t r = rg.begin(); r < rg.end(); ++r) {
      ev.a[r] = row_dot(r1cs.a, r, zp);
      ev.b[r] = row_dot(r1cs.b, r, zp);
      ev.c[r] = row_dot(r1cs.c, r, zp);
    }
  });
  return ev;
}

template <class F>
std::optional<std::size_t> first_unsatisfied(const R1csOf<F>& r1cs, std::type_identity_t<std::span<const F>> z) {
  check_shapes(r1cs, z.size(), "first_unsatisfied");
  const std::size_t n = r1cs.num_constraints();
  const F* zp = z.data();
  // Tasks past an already-found failure have nothing to add; tasks before it must still run,
  // which keeps the answer the lowest failing index regardless of scheduling.
  std::atomic<std::size_t> first{n};
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, kRowGrain), [&](const tbb::blocked_range<std::size_t>& rg) {
    for (std::size_t r = rg.begin(); r < rg.end(); ++r) {
      if (r >= first.load(std::memory_order_relaxed)) return;
      const F av = row_dot(r1cs.a, r, zp);
      const F bv = row_dot(r1cs.b, r, zp);
      const F cv = row_dot(r1cs.c, r, zp);
      if (av * bv != cv) {
        std::size_t cur = first.load(std::memory_order_relaxed);
        while (r < cur && !first.compare_exchange_weak(cur, r, std::memory_order_relaxed)) {
        }
        return;
      }
    }
  });
  const std::size_t f = first.load();
  if (f == n) return std::nullopt;
  return f;
}

template <class F>
Densities column_densities(const R1csOf<F>& r1cs) {
  check_shapes(r1cs, r1cs.num_variables(), "column_densities");
  const std::size_t ni = r1cs.num_inputs;
  Densities d;
  d.a_aux.assign((r1cs.num_aux + 63) / 64, 0);
  d.b_aux.assign((r1cs.num_aux + 63) / 64, 0);
  d.b_input.assign((ni + 63) / 64, 0);

  // Entries of neighbouring tasks hit the same words, hence atomic ORs; the relaxed load first
  // keeps already-set bits (the common case: columns repeat) from costing a locked operation.
  auto set_bit = [](std::vector<uint64_t>& bits, std::size_t i) {
    std::atomic_ref<uint64_t> w(bits[i / 64]);
    const uint64_t mask = uint64_t(1) << (i % 64);
    if (!(w.load(std::memory_order_relaxed) & mask)) w.fetch_or(mask, std::memory_order_relaxed);
  };
  auto scan = [&](const SparseMatrixOf<F>& m, std::vector<uint64_t>* input_bits, std::vector<uint64_t>& aux_bits) {
    tbb::parallel_for(tbb::blocked_range<uint64_t>(0, m.column.size(), kEntryGrain),
                      [&](const tbb::blocked_range<uint64_t>& rg) {
                        for (uint64_t e = rg.begin(); e < rg.end(); ++e) {
                          const std::size_t col = m.column[e];
                          if (col >= ni) {
                            set_bit(aux_bits, col - ni);
                          } else if (input_bits) {
                            set_bit(*input_bits, col);
                          }
                        }
                      });
  };
  scan(r1cs.a, nullptr, d.a_aux);
  scan(r1cs.b, &d.b_input, d.b_aux);
  return d;
}

#define PP_R1CS_DEFINE(F)                                                                         \
  template struct R1csOf<F>;                                                                      \
  template EvaluationsOf<F> evaluate(const R1csOf<F>&, std::type_identity_t<std::span<const F>>); \
  template std::optional<std::size_t> first_unsatisfied(const R1csOf<F>&,                         \
                                                        std::type_identity_t<std::span<const F>>); \
  template Densities column_densities(const R1csOf<F>&);
PP_R1CS_DEFINE(Fr)
PP_R1CS_DEFINE(bn254::Fr)
#undef PP_R1CS_DEFINE

}  // namespace pp
