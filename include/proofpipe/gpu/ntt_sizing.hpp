// SPDX-License-Identifier: Apache-2.0 OR MIT
// The GPU NTT's shapes, public: the limits, the pass plan, the tables' layout and size
// (table_elements: the planner's bound), the roots they are made of, and the scalings and pass
// jobs the schedule (gpu/ntt.hpp) hands the kernels. The bodies that run them are private:
// src/gpu/ntt_kernels.hpp (the algorithm is described there).
#pragma once

#include <cstddef>
#include <cstdint>

#include "proofpipe/core/hd.hpp"
#include "proofpipe/ff/bls12_381.hpp"
#include "proofpipe/ff/bn254.hpp"

namespace pp::gpu {

inline constexpr int kMaxNttLg = 28;       // the largest transform the GPU path supports
inline constexpr int kMaxPassLg = 10;      // butterfly levels per pass (K <= 1024)
inline constexpr int kBlockLg = 10;        // elements a block holds in shared memory: 2^10 (32 KiB)
inline constexpr int kBlockElements = 1 << kBlockLg;
inline constexpr int kThreadLg = 2;        // elements a thread holds in registers: 2^2 (the most)
inline constexpr int kThreadElements = 1 << kThreadLg;
inline constexpr int kBlockThreads = kBlockElements / kThreadElements;
// Small transforms (up to 2^kSmallNttLg) give a thread 2^kSmallThreadLg elements instead: they
// have too few elements to fill the card's warps (2^16 in threads of 4: 512 warps for 132 SMs,
// each stalled on its own dependent products), and threads of 2 double the warps: 2^16 0.040 ->
// 0.033 ms on an H100, while 2^18 ran 0.078 ms in threads of 4 and 0.080 in threads of 2
// (docs/results/ntt_16byte_small_threads_h100.txt, ntt_rounds_h100.txt).
inline constexpr int kSmallThreadLg = 1;
inline constexpr int kSmallNttLg = 17;
inline constexpr int kTwistTableLg = 18;   // the default direct twist table: up to 2^18 roots (8 MiB)
// A pass keeps at least 2^kMinPassBlocksLg blocks where its columns allow (fewer columns a block):
// full blocks left most SMs idle at 2^16 (64 blocks of 2^10 elements for an H100's 132 SMs; 256
// blocks of 2^8: 0.042 ms instead of 0.045), while 2^18 ran faster in 256 blocks of 2^10 than in
// 512 of 2^9 (0.088 against 0.094 ms; docs/results/ntt_small_blocks_h100.txt). From 2^20 up
// every pass has more blocks than that anyway.
inline constexpr int kMinPassBlocksLg = 8;
static_assert(kBlockLg >= kMaxPassLg, "a block holds at least one whole column of the largest pass");
static_assert(kThreadLg <= kBlockLg, "a thread's elements lie in one block");

// One pass: levels [m, m + k) of a 2^lg transform, 2^cols_lg columns per block. Element e of a
// block is position pos = e >> cols_lg of column col = e & (cols - 1).
struct NttPass {
  int lg, m, k, cols_lg;
  int thread_lg = kThreadLg;  // elements a thread holds: 2^thread_lg
  PP_HD uint32_t K() const { return 1u << k; }
  PP_HD uint32_t cols() const { return 1u << cols_lg; }
  PP_HD uint32_t elements_per_block() const { return 1u << (cols_lg + k); }
  PP_HD uint32_t threads_per_block() const {
    return cols_lg + k > thread_lg ? 1u << (cols_lg + k - thread_lg) : 1u;
  }
  PP_HD uint64_t blocks() const { return uint64_t(1) << (lg - k - cols_lg); }
  PP_HD int rounds() const { return rounds_of(k, thread_lg); }
  // Rounds of a pass of k levels in threads of 2^tl elements (the kernels call it with their
  // thread shape as a constant).
  PP_HD static constexpr int rounds_of(int k, int tl) { return (k + tl - 1) / tl; }
  // Column index (in [0, 2^m)) of a block's column `col`.
  PP_HD uint32_t column(uint64_t block, uint32_t col) const {
    return uint32_t(block & ((uint64_t(1) << (m - cols_lg)) - 1)) << cols_lg | col;
  }
  PP_HD uint64_t global_index(uint64_t block, uint32_t pos, uint32_t col) const {
    const uint64_t hi = block >> (m - cols_lg);
    return (hi << (m + k)) + (uint64_t(pos) << m) + column(block, col);
  }
  PP_HD uint64_t global_index(uint64_t block, uint32_t e) const {
    return global_index(block, e >> cols_lg, e & (cols() - 1));
  }
};

// Passes of a 2^lg transform, ordered from the top bits down (the DIF order; DIT runs them in
// reverse). Levels are spread evenly in whole rounds of the thread shape where the pass limit
// allows, the remainder in the top pass: 22 = 6 + 8 + 8 (11 rounds of 2 levels; 8 + 7 + 7 takes
// 12, each 7 ending on a round of one level that costs a round's shared-memory trips), 27 =
// 9 + 8 + 10. The top pass packs many columns into a block (m is large); the bottom one (m = 0) has
// one column a block, 2^k elements, so a short pass there makes tiny blocks (8 + 8 + 5, blocks of
// 32 elements at the bottom, ran 2^21 1.5 times slower than 8 + 7 + 7; ntt_rounds_h100.txt). A
// block takes as many columns as fit in kBlockElements, fewer where that would leave fewer than
// 2^kMinPassBlocksLg blocks.
struct NttPlan {
  int lg = 0;
  int count = 0;
  NttPass pass[kMaxNttLg];
};

// `max_pass` < kMaxPassLg gives more, smaller passes and `min_blocks_lg` = 0 full blocks, and
// `thread_lg` (0: the size's own, kSmallThreadLg up to 2^kSmallNttLg, else kThreadLg) another
// thread shape (tests use them to reach multi-pass plans, blocks of many columns and both thread
// shapes at small sizes).
PP_HD inline int ntt_thread_lg(int lg) { return lg <= kSmallNttLg ? kSmallThreadLg : kThreadLg; }
PP_HD inline NttPlan make_ntt_plan(int lg, int max_pass = kMaxPassLg, int min_blocks_lg = kMinPassBlocksLg,
                                   int thread_lg = 0) {
  NttPlan plan;
  plan.lg = lg;
  plan.count = (lg + max_pass - 1) / max_pass;
  const int tl = thread_lg > 0 ? thread_lg : ntt_thread_lg(lg);
  // The levels of each pass, bottom pass first: ceil(remaining / passes left), up to whole rounds
  // where the limit and the passes above allow; a middle pass keeps its span (m + k) within the
  // default direct twist table (27 = 9 + 8 + 10, not 7 + 10 + 10, whose middle pass would take
  // its twists from the two-level tables); the top pass takes what is left.
  int ks[kMaxNttLg] = {};
  int rest = lg, below = 0;
  for (int i = plan.count - 1; i >= 0; --i) {
    int k = (rest + i) / (i + 1);
    if (i > 0) {
      const int whole = NttPass::rounds_of(k, tl) * tl;
      if (whole <= max_pass && rest - whole >= i) k = whole;
      const int capped = (kTwistTableLg - below) / tl * tl;
      if (below > 0 && below + k > kTwistTableLg && capped >= 1 && rest - capped <= i * max_pass) k = capped;
    }
    ks[i] = k;
    rest -= k;
    below += k;
  }
  int top = lg;
  for (int i = 0; i < plan.count; ++i) {
    const int k = ks[i], m = top - k;
    int cols_lg = kBlockLg - k < m ? kBlockLg - k : m;
    if (cols_lg > lg - k - min_blocks_lg) cols_lg = lg - k - min_blocks_lg > 0 ? lg - k - min_blocks_lg : 0;
    plan.pass[i] = NttPass{lg, m, k, cols_lg, tl};
    top = m;
  }
  return plan;
}

// The roots a transform of size 2^lg needs, all in one buffer that lives in device memory (or
// host memory for the twin): lo[i] = w^i (i < 2^b), hi[j] = w^(j·2^b) (j < 2^(lg-b)) for
// w = omega, omega^-1, the coset shift and its inverse; small[v] = w_K^v for the largest pass
// size K (v < K/2) for omega and omega^-1; mid[e] = omega^(e·2^(lg - mid_lg)) (e < 2^mid_lg), the
// direct twist table, for both directions (omega^-x is entry -x mod 2^mid_lg).
// The 1/n of the scalings is folded into hi tables, so that a factor is one product of two
// entries: shift_inv_hi[j] = shift^(-j·2^b)/n (the coset inverse's factor), shift_inv_hi_plain the
// same as canonical integers (lo ⊗ it is then the factor's integer: the canonical output's
// factor), shift_hi_sized[j] = shift^(j·2^b)/n (a coset forward that takes an inverse's deferred 1/n).
// F: the scalar field (BLS12-381's or BN254's Fr; both are four 64-bit words).
template <class F>
struct NttTablesOf {
  int lg = 0, b = 0, small_lg = 0, mid_lg = 0;
  const F* fwd_lo = nullptr; const F* fwd_hi = nullptr;
  const F* inv_lo = nullptr; const F* inv_hi = nullptr;
  const F* shift_lo = nullptr; const F* shift_hi = nullptr;
  const F* shift_inv_lo = nullptr; const F* shift_inv_hi = nullptr;
  const F* shift_hi_sized = nullptr; const F* shift_inv_hi_plain = nullptr;
  const F* small_fwd = nullptr; const F* small_inv = nullptr;
  const F* mid = nullptr;
  F size_inv;        // 1 / 2^lg
  // The canonical integer of 1 / 2^lg in the limbs: the Montgomery product of x·R by it is x/2^lg
  // itself, so the last scaling of an inverse transform can leave Montgomery form for free.
  F size_inv_plain;
};
using NttTables = NttTablesOf<Fr>;

PP_HD inline int table_split(int lg) { return (lg + 1) / 2; }
// The direct twist table's limit for a 2^lg domain: the default, or lg for a root per twist.
PP_HD inline int twist_table_lg(int lg, bool full) { return full ? lg : kTwistTableLg; }
PP_HD inline int table_small_lg(int lg) { return lg < kMaxPassLg ? lg : kMaxPassLg; }
// The direct twist table's size: the largest m + k <= twist_lg of a twisted pass (m > 0) of the
// 2^lg plan, 0 if none (then every twist uses the two-level tables).
PP_HD inline int table_mid_lg(int lg, int twist_lg = kTwistTableLg) {
  const NttPlan plan = make_ntt_plan(lg);
  int t = 0;
  for (int i = 0; i < plan.count; ++i) {
    const int span = plan.pass[i].m + plan.pass[i].k;
    if (plan.pass[i].m > 0 && span <= twist_lg && span > t) t = span;
  }
  return t;
}
PP_HD inline std::size_t table_mid_elements(int lg, int twist_lg = kTwistTableLg) {
  const int t = table_mid_lg(lg, twist_lg);
  return t > 0 ? std::size_t(1) << t : 0;
}
// Elements of the table buffer of a 2^lg domain, in the order of the fields above.
PP_HD inline std::size_t table_elements(int lg, int twist_lg = kTwistTableLg) {
  const int b = table_split(lg);
  const std::size_t hi = std::size_t(1) << (lg - b), two_level = (std::size_t(1) << b) + hi;
  return 4 * two_level + 2 * hi + 2 * (std::size_t(1) << (table_small_lg(lg) - 1)) + table_mid_elements(lg, twist_lg);
}
// Points `t` into a buffer of table_elements(lg, twist_lg) elements (no values written).
template <class F>
PP_HD inline NttTablesOf<F> bind_tables(F* base, int lg, const F& size_inv, int twist_lg = kTwistTableLg) {
  NttTablesOf<F> t;
  t.lg = lg;
  t.b = table_split(lg);
  t.small_lg = table_small_lg(lg);
  t.mid_lg = table_mid_lg(lg, twist_lg);
  const std::size_t lo = std::size_t(1) << t.b, hi = std::size_t(1) << (lg - t.b);
  F* p = base;
  t.fwd_lo = p; p += lo; t.fwd_hi = p; p += hi;
  t.inv_lo = p; p += lo; t.inv_hi = p; p += hi;
  t.shift_lo = p; p += lo; t.shift_hi = p; p += hi;
  t.shift_inv_lo = p; p += lo; t.shift_inv_hi = p; p += hi;
  t.shift_hi_sized = p; p += hi; t.shift_inv_hi_plain = p; p += hi;
  t.small_fwd = p; p += std::size_t(1) << (t.small_lg - 1);
  t.small_inv = p; p += std::size_t(1) << (t.small_lg - 1);
  t.mid = p;
  t.size_inv = size_inv;
  t.size_inv_plain = size_inv.canonical_limbs();
  return t;
}

// The four base values the tables are powers of, and 1/n (n = 2^lg of the domain), which the
// sized hi tables fold in.
template <class F>
struct NttRootsOf {
  F omega, omega_inv, shift, shift_inv, size_inv;
};
using NttRoots = NttRootsOf<Fr>;

enum class Scale : uint8_t {
  none,
  shift,          // a[i] *= shift^idx           (coset forward, before the transform)
  shift_inv,      // a[i] *= shift^-idx · factor (coset inverse, after it; factor = 1/n)
  size_inv,       // a[i] *= 1/n
  shift_size_inv, // a[i] *= shift^idx / n       (coset forward taking an inverse's deferred 1/n)
  // shift_inv and size_inv with the result as canonical integers (out of Montgomery form), at the
  // same cost: the factor's last product is by a canonical integer (shift_inv_hi_plain's entry or
  // size_inv_plain).
  shift_inv_canonical,
  size_inv_canonical,
};

// What one pass does besides its levels: the direction, and the scalings it takes over from the
// schedule (the first pass run takes `pre`, the last `post`).
struct PassJob {
  bool dif = true, inverse = false;
  Scale pre = Scale::none;   // applied to the loaded elements (input order: natural for DIF)
  Scale post = Scale::none;  // applied to the stored elements (output order: bit-reversed for DIF)
};

}  // namespace pp::gpu
