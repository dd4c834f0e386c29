// SPDX-License-Identifier: Apache-2.0 OR MIT
// Synthetic PoRep-shaped circuits: block-parallel CSR generation and a row-by-row witness solver.
//
// Construction. The n = 2^k − num_inputs rows are cut into blocks of about kBlockRows rows that
// reference only their own variables, the constant one and the public inputs wired into them,
// so blocks are built (and their witnesses solved) independently and in parallel, writing
// straight into the preallocated CSR arrays: memory is the CSR plus a few per-block scratch
// arrays, nothing per entry. Every row defines exactly one new aux variable, the one whose
// index equals the row's (so num_aux == num_constraints). A block of R rows holds, in order:
//   1. boolean rows    (1 − b)·b = 0       A = 1 − b, B = b, C = ∅   d data bits + s selector bits
//   2. conditional swaps, w of them, two rows each (a, b → c0 = s ? a : b, c1 = the other):
//        select        s·(a − b) = c0 − b  A = a − b, B = s, C = c0 − b
//        complement    (a + b)·1 = c0 + c1 A = a + b, B = 1, C = c0 + c1
//      arranged as a permutation network over the d data bits (each layer pairs the current
//      wires at random), selectors drawn from the s selector bits;
//   3. field stages: M linear mixing rows, the first `chains` of them each followed by an
//      x^5 round (x·x = x2, x2·x2 = x4, x4·x = x5), each mixing row taking the previous
//      stage's field output:
//        mixing        (k + prev + inputs + Σ 2^t·bits)·1 = y + Σ 2^t·bits   (y new, k random)
//      the last one (the sink) writes its y on the A side with coefficient −1.
// Why this mix: bellman's AllocatedBit writes booleanity as (1 − b)·b = 0, i.e. A = 1 − b,
// B = b (we follow that orientation rather than A = b, B = 1 − b so that every row has exactly
// one B entry: PoRep's B has 1.0 non-zeros per row). Bits derived by gadgets (swaps here, like
// SHA's xor/and or Merkle-path selection in PoRep) appear in A and C but not in B, which is how
// PoRep's B-aux density stays at 25 % although most values are bits. A swap outputs a
// permutation of its inputs, so every layer of the network carries exactly the multiset of data
// bits: the 0/1 split of the derived bits equals that of the (stratified-sampled) data bits
// instead of drifting as and/xor chains would. The mixing rows absorb whatever A and C entries
// the fixed rows leave to reach 2.4 and 2.2 per row (≈ 21 + 29 terms each at the defaults),
// consume every final swap output (so those appear in A), and carry the public inputs.
// Per block the planner picks: field variables F = round(other·R) (= M + 3·chains), B-variables
// round(0.254·R) = boolean bits + 2·chains (x and x2 are in B, x4 is not), the rest swaps;
// s ≈ 0.2 of the boolean bits. A-aux density: floor(0.003·n) final swap outputs are left out of
// the mixing rows (they appear only in C), giving 99.7 %. Blocks of fewer than ~50 rows (only
// k = 4, 5 with the default 8 inputs) fall back gracefully: data bits double as selectors, no
// x^5 round fits, the one mixing row grows to hold every input; shapes are then approximate.
// Extreme options also bend the shape: with "other" near 0 the block's single mixing row cannot
// hold its whole share of distinct bit columns (C ≈ 2.09/row at 0.5/0.5/0); with "other" = 1
// there are no bits at all (A ≈ 1.6, C 1.0).
//
// Mix at the defaults (k = 20): boolean 20.4 % of rows (16.3 % data, 4.1 % selector bits),
// select 34.8 %, complement 34.8 % (≈ 4.3 network layers), x^5 rounds 7.5 %, mixing 2.5 %
// (≈ 21 A + 29 C entries each).
// Achieved statistics, default options and seed 1 (checked with tolerances by test_r1cs):
//   k   rows      A/row B/row C/row  A-aux    B-aux    zero   one    other
//    4  7         3.429 1.000 1.714  100.00 % 28.57 %  0.4286 0.4286 0.1429
//    6  55        2.400 1.000 2.200  100.00 % 25.45 %  0.4727 0.4364 0.0909
//   10  1015      2.400 1.000 2.200   99.70 % 25.42 %  0.4463 0.4542 0.0995
//   14  16375     2.400 1.000 2.200   99.70 % 25.40 %  0.4511 0.4489 0.1000
//   20  1048567   2.400 1.000 2.200   99.70 % 25.40 %  0.4501 0.4499 0.1000
//   24  16777207  2.400 1.000 2.200   99.70 % 25.40 %  0.4500 0.4500 0.1000
// Over 40 structure seeds × 3 witness seeds the 0/1 fractions stay within 0.03 of the options
// for k = 5..9, 0.0062 at k = 10 and 0.0017 at k = 14. (PoRep itself has 0.9992 aux per
// constraint; here it is exactly 1.)
#include "proofpipe/groth16/synthetic.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_invoke.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace pp {
namespace {

constexpr uint32_t kBlockRows = 8192;
constexpr uint64_t kMissPerMille = 3;  // 1 − A-aux density, in thousandths
constexpr double kSelectorShare = 0.2;
constexpr uint64_t kStructureDomain = 0x5354'5255'4354'5552ULL;
constexpr uint64_t kWitnessDomain = 0x5749'544e'4553'5321ULL;
constexpr uint32_t kNone = ~uint32_t(0);
constexpr Fr kOne = Fr::one();
const Fr kMinusOne = -Fr::one();

uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// splitmix64: tiny state, so every block gets its own stream, derived from (seed, domain, block).
struct Rng {
  uint64_t s;
  Rng(uint64_t seed, uint64_t domain, uint64_t block) : s(mix64(seed ^ mix64(domain ^ mix64(block + 1)))) {}
  uint64_t next() { return mix64(s += 0x9e3779b97f4a7c15ULL); }
  uint64_t below(uint64_t n) { return uint64_t((unsigned __int128)next() * n >> 64); }
  double unit() { return double(next() >> 11) * 0x1p-53; }
  // Uniform below 2^254 < r: every draw is a valid canonical value.
  Fr field() {
    const uint64_t x[4] = {next(), next(), next(), next() >> 2};
    Fr f;
    Fr::from_canonical(f, x);
    return f;
  }
  Fr nonzero_field() {
    for (;;) {
      const Fr f = field();
      if (!f.is_zero()) return f;
    }
  }
};

// What one block of R rows contains; a pure function of (R, inputs, miss, options), shared by
// the structure builder and the witness solver.
struct Plan {
  uint32_t rows = 0, bits = 0;  // bits = d + s + 2w
  uint32_t d = 0, s = 0, w = 0, chains = 0, mixes = 0;
  uint32_t inputs = 0, miss = 0;
  uint64_t mix_a_total = 0, mix_c_total = 0;
  uint64_t nnz_a = 0, nnz_b = 0, nnz_c = 0;
};

struct MixCounts {
  uint32_t a, c;
};

uint32_t inputs_of_mix(const Plan& p, uint32_t j) { return p.inputs / p.mixes + (j < p.inputs % p.mixes ? 1 : 0); }

// Entries of mixing row j: an even share of the block's budget, at least what the row must
// hold, and no more distinct bit columns than the block has.
MixCounts mix_counts(const Plan& p, uint32_t j) {
  const uint64_t M = p.mixes;
  const uint64_t share_a = p.mix_a_total / M + (j < p.mix_a_total % M ? 1 : 0);
  const uint64_t share_c = p.mix_c_total / M + (j < p.mix_c_total % M ? 1 : 0);
  const uint64_t mand_a = 1 + (j > 0 ? 1 : 0) + (j + 1 == M ? 1 : 0) + inputs_of_mix(p, j);
  const uint64_t mand_c = (j + 1 == M) ? 0 : 1;
  uint64_t bits_a = std::max(share_a, mand_a) - mand_a;
  uint64_t bits_c = std::max(share_c, mand_c) - mand_c;
  bits_a = std::min<uint64_t>(bits_a, p.bits - p.miss);
  bits_c = std::min<uint64_t>(bits_c, p.bits - bits_a);
  return {uint32_t(mand_a + bits_a), uint32_t(mand_c + bits_c)};
}

Plan make_plan(uint32_t R, uint32_t inputs, uint32_t miss, double other) {
  Plan p;
  p.rows = R;
  p.inputs = inputs;
  const uint32_t F = uint32_t(std::clamp<long long>(std::llround(other * R), 1, R));
  const uint32_t nb = R - F;
  const uint32_t bt = uint32_t(std::llround(porep_shape::b_aux_density * R));
  // Chains put x and x2 in B (x4 sits on the A side of x4·x). Keep at least ~10 % of the bits
  // booleanity-checked so the swap network does not get absurdly deep when "other" is large.
  const uint32_t bool_min = nb == 0 ? 0 : std::min(nb, std::max(2u, nb / 10));
  const uint32_t c_field = (F - 1) / 4;  // M = F − 3c must be >= c + 1 (a sink after the last chain)
  const uint32_t c_b = bt > bool_min ? (bt - bool_min) / 2 : 0;
  const uint32_t c = std::min(c_field, c_b);
  uint32_t nbool = 0, w = 0;
  if (nb > 0) {
    const uint32_t lo = std::min(nb, 2u);
    nbool = uint32_t(std::clamp<long long>((long long)bt - 2LL * c, lo, nb));
    if ((nb - nbool) % 2) {
      // The swaps take the remaining bits two at a time: step to whichever neighbour is
      // closer to the unrounded B target.
      const double exact = porep_shape::b_aux_density * R - 2.0 * c;
      const bool down_ok = nbool > lo, up_ok = nbool < nb;
      if (down_ok && (!up_ok || std::abs(double(nbool) - 1 - exact) <= std::abs(double(nbool) + 1 - exact)))
        --nbool;
      else
        ++nbool;
    }
    w = (nb - nbool) / 2;
    if (w > 0 && nbool < 2) {
      nbool += 2;
      w -= 1;
    }
  }
  if (w == 0) {
    p.d = nbool;
  } else if (nbool >= 3) {
    p.s = uint32_t(std::clamp<long long>(std::llround(nbool * kSelectorShare), 1, nbool - 2));
    p.d = nbool - p.s;
  } else {
    p.d = nbool;  // tiny block: the data bits double as selectors
  }
  p.w = w;
  p.bits = nb;
  p.chains = c;
  p.mixes = F - 3 * c;
  const uint32_t derived_final = w > 0 ? std::min(p.d, 2 * w) : 0;
  p.miss = std::min(miss, derived_final);

  const uint64_t fixed_a = 2ULL * nbool + 4ULL * w + 3ULL * c;
  const uint64_t fixed_c = 4ULL * w + 3ULL * c;
  const uint64_t t_a = uint64_t(std::llround(porep_shape::a_per_row * R));
  const uint64_t t_c = uint64_t(std::llround(porep_shape::c_per_row * R));
  const uint64_t mand_a = 2ULL * p.mixes + inputs;  // const (M) + prev (M − 1) + sink y (1) + inputs
  p.mix_a_total = std::max<uint64_t>(t_a > fixed_a ? t_a - fixed_a : 0, mand_a + derived_final);
  p.mix_c_total = std::max<uint64_t>(t_c > fixed_c ? t_c - fixed_c : 0, p.mixes - 1);
  p.nnz_a = fixed_a;
  p.nnz_c = fixed_c;
  for (uint32_t j = 0; j < p.mixes; ++j) {
    const MixCounts mc = mix_counts(p, j);
    p.nnz_a += mc.a;
    p.nnz_c += mc.c;
  }
  p.nnz_b = R;
  return p;
}

struct BlockInfo {
  uint64_t row0;         // first global row (== first aux index)
  uint32_t first_input;  // first public input (0-based among the public ones)
  Plan plan;
  uint64_t a0, b0, c0;   // first entry in A, B, C
};

struct Layout {
  SyntheticSizes sizes;
  double other = 0, one_share = 0;  // one_share: P(bit == 1)
  std::vector<BlockInfo> blocks;
  uint64_t nnz_a = 0, nnz_b = 0, nnz_c = 0;
};

Layout make_layout(const SyntheticOptions& o) {
  Layout L;
  L.sizes = synthetic_sizes(o);
  const double bits = o.zero_fraction + o.one_fraction;
  L.other = std::max(0.0, 1.0 - bits);
  L.one_share = bits > 0 ? o.one_fraction / bits : 0.0;
  const uint64_t n = L.sizes.num_constraints;
  const uint64_t P = o.num_public_inputs;
  const uint64_t B = (n + kBlockRows - 1) / kBlockRows;
  L.blocks.resize(B);
  uint64_t a = 0, b = 0, c = 0;
  for (uint64_t k = 0; k < B; ++k) {
    BlockInfo& bi = L.blocks[k];
    const uint64_t r0 = k * n / B, r1 = (k + 1) * n / B;
    // Public input t goes to block floor(t·B/P): spread over the circuit, several per block
    // when there are more inputs than blocks.
    const uint64_t t0 = (k * P + B - 1) / B, t1 = ((k + 1) * P + B - 1) / B;
    const uint64_t miss = r1 * kMissPerMille / 1000 - r0 * kMissPerMille / 1000;
    bi.row0 = r0;
    bi.first_input = uint32_t(t0);
    bi.plan = make_plan(uint32_t(r1 - r0), uint32_t(t1 - t0), uint32_t(miss), L.other);
    bi.a0 = a;
    bi.b0 = b;
    bi.c0 = c;
    a += bi.plan.nnz_a;
    b += bi.plan.nnz_b;
    c += bi.plan.nnz_c;
  }
  L.nnz_a = a;
  L.nnz_b = b;
  L.nnz_c = c;
  return L;
}

struct Entry {
  uint32_t col;
  Fr val;
};

// Appends one row to a matrix at its cursor; rows are emitted sorted by column, which keeps
// the SpMV's gathers in order.
struct Writer {
  SparseMatrix* m;
  uint64_t cursor;
  void row(uint64_t global_row, std::vector<Entry>& buf) {
    std::sort(buf.begin(), buf.end(), [](const Entry& x, const Entry& y) { return x.col < y.col; });
    m->row_start[global_row] = cursor;
    for (const Entry& e : buf) {
      m->column[cursor] = e.col;
      m->value[cursor] = e.val;
      ++cursor;
    }
    buf.clear();
  }
};

// A bit column (local index < bits) not yet in this row and, for the A side, not one of the
// outputs deliberately kept out of A.
uint32_t pick_bit(Rng& rng, uint32_t bits, const std::vector<uint32_t>& stamp, uint32_t tag,
                  const std::vector<uint8_t>* no_a) {
  auto ok = [&](uint32_t v) { return stamp[v] != tag && !(no_a && (*no_a)[v]); };
  for (int tries = 0; tries < 32; ++tries) {
    const uint32_t v = uint32_t(rng.below(bits));
    if (ok(v)) return v;
  }
  const uint32_t start = uint32_t(rng.below(bits));
  for (uint32_t i = 0; i < bits; ++i) {
    const uint32_t v = (start + i) % bits;
    if (ok(v)) return v;
  }
  throw std::logic_error("synthetic: no free bit column for a mixing row (planner bug)");
}

void build_block(const Layout& L, std::size_t k, uint64_t seed, R1cs& r1cs, const std::vector<Fr>& pow2) {
  const BlockInfo& bi = L.blocks[k];
  const Plan& p = bi.plan;
  const uint32_t ni = uint32_t(L.sizes.num_inputs);
  const uint64_t r0 = bi.row0;
  auto col = [&](uint32_t local) { return uint32_t(ni + r0 + local); };
  Rng rng(seed, kStructureDomain, k);
  Writer wa{&r1cs.a, bi.a0}, wb{&r1cs.b, bi.b0}, wc{&r1cs.c, bi.c0};
  std::vector<Entry> ea, eb, ec;
  ea.reserve(64);
  eb.reserve(4);
  ec.reserve(64);
  auto emit = [&](uint32_t local) {
    wa.row(r0 + local, ea);
    wb.row(r0 + local, eb);
    wc.row(r0 + local, ec);
  };

  // 1. Booleanity of data and selector bits.
  const uint32_t nbool = p.d + p.s;
  for (uint32_t i = 0; i < nbool; ++i) {
    ea.push_back({0, kOne});
    ea.push_back({col(i), kMinusOne});
    eb.push_back({col(i), kOne});
    emit(i);
  }

  // 2. Swap network.
  std::vector<uint32_t> wires(p.d);
  for (uint32_t i = 0; i < p.d; ++i) wires[i] = i;
  const uint32_t pairs = p.d / 2;
  uint32_t r = nbool;
  for (uint32_t sw = 0; sw < p.w; ++sw) {
    if (sw % pairs == 0) {
      for (uint32_t i = p.d; i > 1; --i) std::swap(wires[i - 1], wires[rng.below(i)]);
    }
    const uint32_t q = sw % pairs;
    const uint32_t a = wires[2 * q], b = wires[2 * q + 1];
    const uint32_t s = p.s > 0 ? p.d + uint32_t(rng.below(p.s)) : uint32_t(rng.below(p.d));
    const uint32_t c0 = r, c1 = r + 1;
    ea.push_back({col(a), kOne});
    ea.push_back({col(b), kMinusOne});
    eb.push_back({col(s), kOne});
    ec.push_back({col(c0), kOne});
    ec.push_back({col(b), kMinusOne});
    emit(c0);
    ea.push_back({col(a), kOne});
    ea.push_back({col(b), kOne});
    eb.push_back({0, kOne});
    ec.push_back({col(c0), kOne});
    ec.push_back({col(c1), kOne});
    emit(c1);
    wires[2 * q] = c0;
    wires[2 * q + 1] = c1;
    r += 2;
  }

  // Final swap outputs are not in A yet: most go into the mixing rows' A side, p.miss of them
  // stay out (the ~0.3 % of aux variables without an A column).
  std::vector<uint8_t> no_a(p.bits, 0);
  std::vector<uint32_t> required;
  required.reserve(p.d);
  uint32_t missed = 0;
  for (uint32_t v : wires) {
    if (v < nbool) continue;  // a data bit never swapped: its booleanity row has it in A
    if (missed < p.miss) {
      no_a[v] = 1;
      ++missed;
    } else {
      required.push_back(v);
    }
  }

  // 3. Field stages.
  std::vector<uint32_t> stamp(p.rows, 0);
  std::size_t next_required = 0;
  uint32_t prev = kNone;
  uint32_t next_input = 0;
  for (uint32_t j = 0; j < p.mixes; ++j) {
    const uint32_t y = r, tag = r + 1;
    const bool sink = j + 1 == p.mixes;
    const MixCounts mc = mix_counts(p, j);
    ea.push_back({0, rng.nonzero_field()});
    if (prev != kNone) {
      ea.push_back({col(prev), kOne});
      stamp[prev] = tag;
    }
    for (uint32_t t = 0, cnt = inputs_of_mix(p, j); t < cnt; ++t) {
      // Round-robin: local input u sits in mixing row u % M.
      const uint32_t u = j + t * p.mixes;
      ea.push_back({1 + bi.first_input + u, kOne});
      ++next_input;
    }
    if (sink) {
      ea.push_back({col(y), kMinusOne});
      stamp[y] = tag;
    }
    uint32_t t = 0;
    while (ea.size() < mc.a && next_required < required.size()) {
      const uint32_t v = required[next_required++];
      ea.push_back({col(v), pow2[t++ % 64]});
      stamp[v] = tag;
    }
    while (ea.size() < mc.a) {
      const uint32_t v = pick_bit(rng, p.bits, stamp, tag, &no_a);
      ea.push_back({col(v), pow2[t++ % 64]});
      stamp[v] = tag;
    }
    if (!sink) {
      ec.push_back({col(y), kOne});
      stamp[y] = tag;
    }
    t = 0;
    while (ec.size() < mc.c) {
      const uint32_t v = pick_bit(rng, p.bits, stamp, tag, nullptr);
      ec.push_back({col(v), pow2[t++ % 64]});
      stamp[v] = tag;
    }
    eb.push_back({0, kOne});
    emit(y);
    if (j < p.chains) {
      const uint32_t x = y, x2 = r + 1, x4 = r + 2, x5 = r + 3;
      ea.push_back({col(x), kOne});
      eb.push_back({col(x), kOne});
      ec.push_back({col(x2), kOne});
      emit(x2);
      ea.push_back({col(x2), kOne});
      eb.push_back({col(x2), kOne});
      ec.push_back({col(x4), kOne});
      emit(x4);
      ea.push_back({col(x4), kOne});
      eb.push_back({col(x), kOne});
      ec.push_back({col(x5), kOne});
      emit(x5);
      prev = x5;
      r += 4;
    } else {
      prev = y;
      r += 1;
    }
  }
  if (r != p.rows || next_input != p.inputs || wa.cursor != bi.a0 + p.nnz_a || wb.cursor != bi.b0 + p.nnz_b ||
      wc.cursor != bi.c0 + p.nnz_c)
    throw std::logic_error("synthetic: block " + std::to_string(k) + " does not match its plan (planner bug)");
}

// Exactly round-randomised(share·count) ones among `count` bits, positions uniform (selection
// sampling): the bit split is then as close to the options as the block size allows.
void sample_bits(Fr* out, uint32_t count, double share, Rng& rng) {
  const double want = share * count;
  uint64_t ones = uint64_t(want);
  if (rng.unit() < want - double(ones)) ++ones;
  for (uint32_t i = 0; i < count; ++i) {
    const bool one = double(rng.below(count - i)) < double(ones);
    out[i] = one ? kOne : Fr::zero();
    if (one) --ones;
  }
}


Fr divide(const Fr& x, const Fr& coeff) {
  if (coeff == kOne) return x;
  if (coeff == kMinusOne) return -x;
  return x * coeff.inverse();
}

// Solves row `row` for the variable in column vcol, which must occur in it exactly once and
// linearly (true for every non-boolean row here). False when the row does not allow that.
bool solve_row(const R1cs& r1cs, std::size_t row, uint32_t vcol, Fr* z) {
  const SparseMatrix* ms[3] = {&r1cs.a, &r1cs.b, &r1cs.c};
  Fr sums[3];
  Fr coeff = Fr::zero();
  int where = -1;
  for (int k = 0; k < 3; ++k) {
    const SparseMatrix& m = *ms[k];
    Fr acc = Fr::zero();
    for (uint64_t e = m.row_start[row], end = m.row_start[row + 1]; e < end; ++e) {
      if (m.column[e] == vcol) {
        if (where != -1) return false;
        where = k;
        coeff = m.value[e];
        continue;
      }
      accumulate_product(acc, m.value[e], z[m.column[e]]);
    }
    sums[k] = acc;
  }
  if (where == -1 || coeff.is_zero()) return false;
  if (where == 2) {
    z[vcol] = divide(sums[0] * sums[1] - sums[2], coeff);
    return true;
  }
  const Fr other = sums[1 - where];
  if (other.is_zero()) return false;
  const Fr target = other == kOne ? sums[2] : sums[2] * other.inverse();
  z[vcol] = divide(target - sums[where], coeff);
  return true;
}

std::vector<Fr> powers_of_two() {
  std::vector<Fr> p(64);
  for (int i = 0; i < 64; ++i) p[i] = Fr::from_u64(uint64_t(1) << i);
  return p;
}

}  // namespace

SyntheticSizes synthetic_sizes(const SyntheticOptions& o) {
  if (o.lg_constraints < 4 || o.lg_constraints > 28)
    throw std::invalid_argument("synthetic: lg_constraints = " + std::to_string(o.lg_constraints) +
                                " out of range 4..28");
  if (!(o.zero_fraction >= 0) || !(o.one_fraction >= 0) || !(o.zero_fraction + o.one_fraction <= 1.0 + 1e-12))
    throw std::invalid_argument("synthetic: zero_fraction and one_fraction must be >= 0 with a sum <= 1 (got " +
                                std::to_string(o.zero_fraction) + ", " + std::to_string(o.one_fraction) + ")");
  const uint64_t domain = uint64_t(1) << o.lg_constraints;
  const uint64_t ni = uint64_t(o.num_public_inputs) + 1;
  if (o.num_public_inputs >= domain || domain - ni < 4)
    throw std::invalid_argument("synthetic: 2^" + std::to_string(o.lg_constraints) + " leaves fewer than 4 constraints after " +
                                std::to_string(ni) + " inputs");
  return {std::size_t(ni), std::size_t(domain - ni), std::size_t(domain - ni)};
}

R1cs make_porep_like_r1cs(const SyntheticOptions& opts) {
  const Layout L = make_layout(opts);
  const std::size_t n = L.sizes.num_constraints;
  R1cs r1cs;
  r1cs.num_inputs = L.sizes.num_inputs;
  r1cs.num_aux = L.sizes.num_aux;
  // std::vector value-initialises: a zero fill plus the first-touch page faults, ~1 s per few
  // GiB. The nine arrays are sized concurrently so that at 2^27 (~27 GiB) this is not a long
  // single-threaded prologue; the blocks then fill their disjoint slices in parallel.
  tbb::parallel_invoke([&] { r1cs.a.row_start.resize(n + 1); }, [&] { r1cs.b.row_start.resize(n + 1); },
                       [&] { r1cs.c.row_start.resize(n + 1); }, [&] { r1cs.a.column.resize(L.nnz_a); },
                       [&] { r1cs.b.column.resize(L.nnz_b); }, [&] { r1cs.c.column.resize(L.nnz_c); },
                       [&] { r1cs.a.value.resize(L.nnz_a); }, [&] { r1cs.b.value.resize(L.nnz_b); },
                       [&] { r1cs.c.value.resize(L.nnz_c); });
  r1cs.a.row_start[n] = L.nnz_a;
  r1cs.b.row_start[n] = L.nnz_b;
  r1cs.c.row_start[n] = L.nnz_c;
  const std::vector<Fr> pow2 = powers_of_two();
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, L.blocks.size(), 1), [&](const tbb::blocked_range<std::size_t>& rg) {
    for (std::size_t k = rg.begin(); k < rg.end(); ++k) build_block(L, k, opts.seed, r1cs, pow2);
  });
  return r1cs;
}

std::vector<Fr> make_witness(const R1cs& r1cs, const SyntheticOptions& opts, uint64_t witness_seed) {
  const Layout L = make_layout(opts);
  if (r1cs.num_inputs != L.sizes.num_inputs || r1cs.num_aux != L.sizes.num_aux ||
      r1cs.num_constraints() != L.sizes.num_constraints || r1cs.b.rows() != L.sizes.num_constraints ||
      r1cs.c.rows() != L.sizes.num_constraints)
    throw std::invalid_argument("synthetic: make_witness: the R1cs does not have the sizes of these options (inputs " +
                                std::to_string(r1cs.num_inputs) + " vs " + std::to_string(L.sizes.num_inputs) +
                                ", constraints " + std::to_string(r1cs.num_constraints()) + " vs " +
                                std::to_string(L.sizes.num_constraints) + ")");
  const uint32_t ni = uint32_t(L.sizes.num_inputs);
  std::vector<Fr> z(r1cs.num_variables());
  z[0] = kOne;
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, L.blocks.size(), 1), [&](const tbb::blocked_range<std::size_t>& rg) {
    for (std::size_t k = rg.begin(); k < rg.end(); ++k) {
      const BlockInfo& bi = L.blocks[k];
      const Plan& p = bi.plan;
      Rng rng(witness_seed, kWitnessDomain, k);
      for (uint32_t t = 0; t < p.inputs; ++t) z[1 + bi.first_input + t] = rng.field();
      Fr* aux = z.data() + ni + bi.row0;
      sample_bits(aux, p.d, L.one_share, rng);
      sample_bits(aux + p.d, p.s, L.one_share, rng);
      for (uint32_t i = p.d + p.s; i < p.rows; ++i) {
        const uint64_t row = bi.row0 + i;
        if (!solve_row(r1cs, row, uint32_t(ni + row), z.data()))
          throw std::invalid_argument("synthetic: make_witness: row " + std::to_string(row) +
                                      " does not define aux variable " + std::to_string(row) +
                                      " linearly; was this R1cs made with these options?");
      }
    }
  });
  return z;
}

SyntheticCircuit make_porep_like(const SyntheticOptions& opts) {
  SyntheticCircuit out;
  out.r1cs = make_porep_like_r1cs(opts);
  out.z = make_witness(out.r1cs, opts, opts.seed);
  return out;
}

ShapeStats shape_stats(const R1cs& r1cs, std::span<const Fr> z) {
  ShapeStats st;
  st.num_constraints = r1cs.num_constraints();
  st.num_inputs = r1cs.num_inputs;
  st.num_aux = r1cs.num_aux;
  const double rows = double(std::max<std::size_t>(1, st.num_constraints));
  st.a_per_row = double(r1cs.a.non_zeros()) / rows;
  st.b_per_row = double(r1cs.b.non_zeros()) / rows;
  st.c_per_row = double(r1cs.c.non_zeros()) / rows;
  const Densities d = column_densities(r1cs);
  const double aux = double(std::max<std::size_t>(1, st.num_aux));
  st.a_aux_density = double(count_bits(d.a_aux)) / aux;
  st.b_aux_density = double(count_bits(d.b_aux)) / aux;
  if (!z.empty()) {
    if (z.size() != r1cs.num_variables()) throw std::invalid_argument("shape_stats: z has the wrong size");
    using Counts = std::pair<std::size_t, std::size_t>;
    const Counts zc = tbb::parallel_reduce(
        tbb::blocked_range<std::size_t>(r1cs.num_inputs, z.size(), 1 << 16), Counts{0, 0},
        [&](const tbb::blocked_range<std::size_t>& rg, Counts acc) {
          for (std::size_t i = rg.begin(); i < rg.end(); ++i) {
            if (z[i].is_zero()) ++acc.first;
            else if (z[i] == kOne) ++acc.second;
          }
          return acc;
        },
        [](Counts x, Counts y) { return Counts{x.first + y.first, x.second + y.second}; });
    st.zero_fraction = double(zc.first) / aux;
    st.one_fraction = double(zc.second) / aux;
    st.other_fraction = 1.0 - st.zero_fraction - st.one_fraction;
  }
  return st;
}

}  // namespace pp

namespace pp::engine {

CircuitShape porep_like_shape(int lg, uint64_t public_inputs) {
  SyntheticOptions o;
  o.lg_constraints = lg;
  o.num_public_inputs = std::size_t(public_inputs);
  const SyntheticSizes z = synthetic_sizes(o);
  CircuitShape s;
  s.lg = lg;
  s.num_inputs = z.num_inputs;
  s.num_aux = z.num_aux;
  s.h_points = s.domain() - 1;
  // Densities rounded up: a plan for these counts fits the real key, which has at most as many.
  const auto share = [&](double d) { return std::min<uint64_t>(s.num_aux, uint64_t(double(s.num_aux) * d) + 1); };
  s.a_points = s.num_inputs + share(porep_shape::a_aux_density);
  s.b_points = s.num_inputs + share(porep_shape::b_aux_density);
  return s;
}

}  // namespace pp::engine
