// SPDX-License-Identifier: Apache-2.0 OR MIT
// Cache-blocked, oneTBB-parallel radix-2 NTTs over a scalar field F (see ntt.hpp for the contract);
// one source for BLS12-381's Fr and BN254's, instantiated at the end.
//
// Two in-place algorithms, both with one twiddle per butterfly block taken from the
// bit-reversed table T[b] = omega^bitrev(b) (Domain::twiddles()):
//   CT  natural -> bit_reversed: levels L = 0..lg-1, block b of level L (2^L blocks of
//       n/2^L) splits a mod (X^{2h} - T[b]^2) into a mod (X^h -+ T[b]):  (x, y) -> (x + t·y, x - t·y).
//   GS  bit_reversed -> natural: the inverse of CT up to the factor n, levels lg-1..0,
//       (u, v) -> (u + v, (u - v)·t). Run with T it computes the forward transform.
// The inverse transforms run the same code with omega^-1, whose table entries are, for b >= 1,
// -T[3·2^j - 1 - b] with j = floor(log2 b) (and 1 for b = 0); the minus sign is absorbed by
// swapping the butterfly's add and subtract, so no second table is stored.
//
// Cache blocking: n = R·C with the array viewed as R rows of C contiguous elements. The first
// lg(R) CT levels pair elements of the same column; they run on tiles of W columns x R rows
// copied into a contiguous scratch buffer (copying avoids the cache-set conflicts of
// power-of-two strides). The remaining lg(C) levels stay inside one row. GS runs the same two
// phases in the other order. Each phase is a parallel loop over tiles or rows, each of which
// fits in L2, so every element crosses main memory about twice per transform.
// Coset and 1/n scalings are applied inside these phases while the data is in cache.
// The butterflies are bound by field arithmetic: F's operators, whose host code (field.hpp)
// is branch-free and uses mulx/adcx/adox Montgomery multiplication where the CPU has BMI2+ADX.

#include "proofpipe/ntt/ntt.hpp"

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

namespace pp {

namespace {

// Reverses the low k bits of x (k = 0 gives 0).
inline std::size_t bit_rev(std::size_t x, int k) {
  if (k == 0) return 0;
  uint64_t v = x;
  v = ((v >> 1) & 0x5555555555555555ULL) | ((v & 0x5555555555555555ULL) << 1);
  v = ((v >> 2) & 0x3333333333333333ULL) | ((v & 0x3333333333333333ULL) << 2);
  v = ((v >> 4) & 0x0f0f0f0f0f0f0f0fULL) | ((v & 0x0f0f0f0f0f0f0f0fULL) << 4);
  v = __builtin_bswap64(v);
  return std::size_t(v >> (64 - k));
}

// Uninitialised, cache-line aligned storage: the twiddle table reaches 2^27 elements, and
// zero-filling it (as std::vector would) costs a full memory pass for nothing.
struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
template <class F>
using Buffer = std::unique_ptr<F[], FreeDeleter>;

template <class F>
Buffer<F> allocate(std::size_t n) {
  const std::size_t bytes = ((n * sizeof(F) + 63) / 64) * 64;
  void* p = std::aligned_alloc(64, bytes == 0 ? 64 : bytes);
  if (p == nullptr) throw std::bad_alloc();
  return Buffer<F>(static_cast<F*>(p));
}

}  // namespace

namespace detail {
template <class F>
struct TwiddleTable {
  std::once_flag once;
  Buffer<F> table;
};
}  // namespace detail

// ------------------------------------------------------------------------------------------
// Domain

template <class F>
DomainOf<F>::DomainOf(int lg, uint64_t generator) : lg_(lg) {
  if (lg < 1 || lg > kMaxLg)
    throw std::invalid_argument("pp::Domain: lg must be in [1, " + std::to_string(kMaxLg) + "], got " +
                                std::to_string(lg));
  generator_ = F::from_u64(generator);
  Limbs<F::Params::N> e = limbs::sub_small(F::Params::modulus, 1);
  for (int i = 0; i < lg; ++i) e = limbs::shr1(e);
  omega_ = generator_.pow(e);
  // omega^(2^(lg-1)) == -1 makes the order exactly 2^lg; it fails iff g is a square (or 0).
  F x = omega_;
  for (int i = 0; i < lg - 1; ++i) x = x.sqr();
  if (x != -F::one() || !x.sqr().is_one())
    throw std::invalid_argument("pp::Domain: generator " + std::to_string(generator) +
                                " is not a quadratic non-residue of Fr");
  omega_inv_ = omega_.inverse();
  size_inv_ = F::from_u64(uint64_t(1) << lg).inverse();
  generator_inv_ = generator_.inverse();
  twiddles_ = std::make_shared<detail::TwiddleTable<F>>();
}

template <class F>
DomainOf<F> DomainOf<F>::at_least(std::size_t n, uint64_t generator) {
  int lg = 1;
  while (lg <= kMaxLg && (std::size_t(1) << lg) < n) ++lg;
  return DomainOf(lg, generator);
}

template <class F>
F DomainOf<F>::vanishing_on_coset() const {
  F x = generator_;
  for (int i = 0; i < lg_; ++i) x = x.sqr();
  return x - F::one();
}

// ------------------------------------------------------------------------------------------
// Test hooks
//
// The butterflies' arithmetic is the field's own (no kernels of their own), so these hooks switch the
// field's host path, process-wide (see pp::field_allow_asm).

namespace detail {
void ntt_allow_asm(bool allow) { field_allow_asm(allow); }
bool ntt_uses_asm() { return field_asm_enabled(); }
}  // namespace detail

// ------------------------------------------------------------------------------------------
// Twiddle table

namespace {

// T[2^j + i] = T[i]·omega^(n/2^(j+2)): each doubling reads the finished prefix, so the table
// costs n/2 multiplications, all on contiguous memory.
template <class F>
void fill_twiddles(F* t, std::size_t half, const F& omega, int lg) {
  t[0] = F::one();
  for (int j = 0; (std::size_t(1) << j) < half; ++j) {
    const std::size_t m = std::size_t(1) << j;
    F rho = omega;
    for (int s = 0; s < lg - j - 2; ++s) rho = rho.sqr();
    F* dst = t + m;
    const F* src = t;
    if (m < 4096) {
      for (std::size_t i = 0; i < m; ++i) dst[i] = src[i] * rho;
      continue;
    }
    // Isolated: while waiting here this thread must not pick up an unrelated task that could
    // call twiddles() on the same Domain and block on the once_flag this thread holds.
    tbb::this_task_arena::isolate([&] {
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, m, 2048),
                        [&](const tbb::blocked_range<std::size_t>& r) {
                          for (std::size_t i = r.begin(); i != r.end(); ++i) dst[i] = src[i] * rho;
                        });
    });
  }
}

}  // namespace

template <class F>
std::span<const F> DomainOf<F>::twiddles() const {
  const std::size_t half = size() / 2;
  detail::TwiddleTable<F>& tt = *twiddles_;
  std::call_once(tt.once, [&] {
    Buffer<F> t = allocate<F>(half);
    fill_twiddles(t.get(), half, omega_, lg_);
    tt.table = std::move(t);
  });
  return {tt.table.get(), half};
}

// ------------------------------------------------------------------------------------------
// Butterflies

namespace {

// Twiddle of butterfly block b for omega (forward) or omega^-1 (inverse). Null for block 0,
// whose twiddle is 1 (callers skip the multiplication); `neg` says the twiddle is -*result.
template <class F>
struct Twiddles {
  const F* table;
  bool inverse;

  PP_INLINE const F* get(std::size_t b, bool& neg) const {
    if (b == 0) {
      neg = false;
      return nullptr;
    }
    if (!inverse) {
      neg = false;
      return table + b;
    }
    const std::size_t j = std::size_t(std::bit_width(b)) - 1;
    neg = true;
    return table + (3 * (std::size_t(1) << j) - 1 - b);
  }
};

// Butterflies (x[k], y[k]) for k < len with twiddle t: CT (kCT) -> (x + t·y, x - t·y), GS ->
// (x + y, (x - y)·t); t = -t when kNeg. The sign is a template parameter so that the loop has no
// branch in it.
template <bool kCT, bool kNeg, class F>
void twiddled_run(F* x, F* y, std::size_t len, const F t) {
  for (std::size_t k = 0; k < len; ++k) {
    const F u = x[k];
    if constexpr (kCT) {
      const F v = y[k] * t;
      x[k] = kNeg ? u - v : u + v;
      y[k] = kNeg ? u + v : u - v;
    } else {
      const F v = y[k];
      x[k] = u + v;
      y[k] = kNeg ? (v - u) * t : (u - v) * t;
    }
  }
}

// CT or GS butterflies as above; t = 1 when w is null (the two are then the same: (x + y,
// x - y)), -*w when neg.
template <bool kCT, class F>
void butterfly_run(F* x, F* y, std::size_t len, const F* w, bool neg) {
  if (w == nullptr) {
    for (std::size_t k = 0; k < len; ++k) {
      const F u = x[k], v = y[k];
      x[k] = u + v;
      y[k] = u - v;
    }
  } else if (!neg) {
    twiddled_run<kCT, false>(x, y, len, *w);
  } else {
    twiddled_run<kCT, true>(x, y, len, *w);
  }
}

// A buffer of 2^k units (a unit is `unit` consecutive elements) that is block `bbase` of
// global level L0; runs global levels L0 .. L0+k-1, whose blocks inside the buffer are
// numbered bbase·2^i + j at local level i: CT from the first level down, GS from the last up.
template <bool kCT, class F>
void levels(F* buf, int k, std::size_t unit, std::size_t bbase, const Twiddles<F>& tw) {
  for (int step = 0; step < k; ++step) {
    const int i = kCT ? step : k - 1 - step;
    const std::size_t half = unit << (k - 1 - i);
    const std::size_t nb = std::size_t(1) << i;
    for (std::size_t j = 0; j < nb; ++j) {
      bool neg;
      const F* w = tw.get((bbase << i) + j, neg);
      F* x = buf + 2 * half * j;
      butterfly_run<kCT>(x, x + half, half, w, neg);
    }
  }
}

// ------------------------------------------------------------------------------------------
// Plan and scalings

// Up to 2^10 elements (32 KiB, L1) a transform runs as one sequential buffer: below that the
// work is too small to repay splitting it across threads.
constexpr int kSingleBufferMaxLg = 10;
// A column tile of about 2^13 elements (256 KiB) stays in L2 while its lg(R) levels run.
constexpr int kTileLg = 13;

struct Plan {
  int lg, lg_r, lg_c;
  std::size_t n, rows, cols, tile_w;
};

Plan make_plan(int lg) {
  Plan p{};
  p.lg = lg;
  p.n = std::size_t(1) << lg;
  // Rows no longer than columns: at 2^28 a row of 2^14 elements (512 KiB) still fits L2.
  p.lg_r = lg <= kSingleBufferMaxLg ? 0 : lg / 2;
  p.lg_c = lg - p.lg_r;
  p.rows = std::size_t(1) << p.lg_r;
  p.cols = std::size_t(1) << p.lg_c;
  // At least 2 columns (one 64-byte line per row), at least 8 tiles for the threads.
  const int lg_w = std::max(1, std::min(kTileLg - p.lg_r, p.lg_c - 3));
  p.tile_w = p.lg_r == 0 ? p.cols : std::size_t(1) << lg_w;
  return p;
}

// Multiplies the element at position p = r·C + c by rowf[r]·colf[c] (or by k alone). Any
// factor K·base^idx(p), with idx the natural or bit-reversed index, splits this way:
//   natural:      idx = r·C + c                    -> K·(base^C)^r     · base^c
//   bit-reversed: idx = rev(c)·R + rev(r)           -> K·base^rev(r)   · (base^R)^rev(c)
// so the tables cost R + C elements instead of n.
template <class F>
struct Scale {
  enum class Kind { none, constant, powers } kind = Kind::none;
  F k{};
  std::vector<F> rowf, colf;

  static Scale constant(const F& k) {
    Scale s;
    s.kind = Kind::constant;
    s.k = k;
    return s;
  }
  static Scale powers(const Plan& p, const F& k, const F& base, Order order) {
    Scale s;
    s.kind = Kind::powers;
    s.rowf.resize(p.rows);
    s.colf.resize(p.cols);
    auto power_table = [](std::vector<F>& out, const F& x) {
      F cur = F::one();
      for (auto& v : out) {
        v = cur;
        cur *= x;
      }
    };
    if (order == Order::natural) {
      power_table(s.colf, base);
      power_table(s.rowf, base.pow_u64(p.cols));
      for (auto& v : s.rowf) v *= k;
    } else {
      std::vector<F> pr(p.rows), pc(p.cols);
      power_table(pr, base);
      power_table(pc, base.pow_u64(p.rows));
      for (std::size_t r = 0; r < p.rows; ++r) s.rowf[r] = k * pr[bit_rev(r, p.lg_r)];
      for (std::size_t c = 0; c < p.cols; ++c) s.colf[c] = pc[bit_rev(c, p.lg_c)];
    }
    return s;
  }

  // Scales len elements of row r starting at column c0.
  void apply(F* x, std::size_t r, std::size_t c0, std::size_t len) const {
    if (kind == Kind::constant) {
      for (std::size_t i = 0; i < len; ++i) x[i] = x[i] * k;
    } else if (kind == Kind::powers) {
      const F f = rowf[r];
      const F* cf = colf.data() + c0;
      for (std::size_t i = 0; i < len; ++i) x[i] = x[i] * (f * cf[i]);
    }
  }
};

// ------------------------------------------------------------------------------------------
// The two blocked algorithms

// Column phase: tiles of W columns x R rows, levels 0 .. lg_r-1 (CT) or lg_r-1 .. 0 (GS).
template <bool kCT, class F>
void column_phase(F* a, const Plan& p, const Twiddles<F>& tw, const Scale<F>& pre, const Scale<F>& post) {
  const std::size_t w = p.tile_w, rows = p.rows, cols = p.cols;
  tbb::enumerable_thread_specific<Buffer<F>> scratch([&] { return allocate<F>(rows * w); });
  tbb::parallel_for(std::size_t(0), cols / w, [&](std::size_t tile) {
    F* s = scratch.local().get();
    const std::size_t c0 = tile * w;
    for (std::size_t r = 0; r < rows; ++r) {
      const F* src = a + r * cols + c0;
      F* dst = s + r * w;
      std::copy(src, src + w, dst);
      pre.apply(dst, r, c0, w);
    }
    levels<kCT>(s, p.lg_r, w, 0, tw);
    for (std::size_t r = 0; r < rows; ++r) {
      F* src = s + r * w;
      post.apply(src, r, c0, w);
      std::copy(src, src + w, a + r * cols + c0);
    }
  });
}

// Row phase: each row of C elements is block r of level lg_r; levels lg_r .. lg-1.
template <bool kCT, class F>
void row_phase(F* a, const Plan& p, const Twiddles<F>& tw, const Scale<F>& pre, const Scale<F>& post) {
  auto one_row = [&](std::size_t r) {
    F* x = a + r * p.cols;
    pre.apply(x, r, 0, p.cols);
    levels<kCT>(x, p.lg_c, 1, r, tw);
    post.apply(x, r, 0, p.cols);
  };
  if (p.rows == 1) {
    one_row(0);
  } else {
    tbb::parallel_for(std::size_t(0), p.rows, one_row);
  }
}

// kCT: natural -> bit-reversed; pre-scaling sees natural order, post-scaling bit-reversed.
// GS:  bit-reversed -> natural; pre-scaling sees bit-reversed order, post-scaling natural.
template <bool kCT, class F>
void run(F* a, const Plan& p, const Twiddles<F>& tw, const Scale<F>& pre, const Scale<F>& post) {
  const Scale<F> kNoScale{};
  if (p.rows == 1) {
    row_phase<kCT>(a, p, tw, pre, post);
  } else if (kCT) {
    column_phase<true>(a, p, tw, pre, kNoScale);
    row_phase<true>(a, p, tw, kNoScale, post);
  } else {
    row_phase<false>(a, p, tw, pre, kNoScale);
    column_phase<false>(a, p, tw, kNoScale, post);
  }
}

template <class F>
void bit_reverse(std::span<F> a);

template <class F>
void transform(std::span<F> a, const DomainOf<F>& d, Order in, Order out, bool inverse, bool coset) {
  if (a.size() != d.size())
    throw std::invalid_argument("pp::ntt: array of " + std::to_string(a.size()) +
                                " elements for a domain of " + std::to_string(d.size()));
  const Plan p = make_plan(d.lg());
  const Twiddles<F> tw{d.twiddles().data(), inverse};
  // GS only for bit_reversed -> natural; every other combination is CT, with one permutation
  // before (bit_reversed input) or after (natural output).
  const bool gs = in == Order::bit_reversed && out == Order::natural;
  const Order before = gs ? Order::bit_reversed : Order::natural;
  const Order after = gs ? Order::natural : Order::bit_reversed;

  Scale<F> pre, post;
  if (inverse) {
    post = coset ? Scale<F>::powers(p, d.size_inv(), d.generator_inv(), after)
                 : Scale<F>::constant(d.size_inv());
  } else if (coset) {
    pre = Scale<F>::powers(p, F::one(), d.generator(), before);
  }

  if (!gs && in == Order::bit_reversed) bit_reverse(a);
  if (gs) {
    run<false>(a.data(), p, tw, pre, post);
  } else {
    run<true>(a.data(), p, tw, pre, post);
  }
  if (!gs && out == Order::natural) bit_reverse(a);
}

// ------------------------------------------------------------------------------------------
// Bit reversal

template <class F>
void bit_reverse(std::span<F> a) {
  const std::size_t n = a.size();
  if (!std::has_single_bit(n))
    throw std::invalid_argument("pp::bit_reverse_permute: size " + std::to_string(n) +
                                " is not a power of two");
  const int lg = std::countr_zero(n);
  // Index = hi (kB bits) | mid | lo (kB bits); reversal maps (hi, mid, lo) to
  // (rev lo, rev mid, rev hi). For each pair {mid, rev mid} the 2^kB rows of 2^kB contiguous
  // elements are copied out and written back transposed, so every memory access moves runs of
  // 2^kB·32 = 512 bytes instead of single scattered elements.
  constexpr int kB = 4;
  if (lg < 2 * kB + 2) {
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t j = bit_rev(i, lg);
      if (i < j) std::swap(a[i], a[j]);
    }
    return;
  }
  constexpr std::size_t B = std::size_t(1) << kB;
  const int mid_bits = lg - 2 * kB;
  const std::size_t stride = n >> kB;  // distance between consecutive hi values
  F* base = a.data();
  tbb::parallel_for(
      tbb::blocked_range<std::size_t>(0, std::size_t(1) << mid_bits, 64),
      [&](const tbb::blocked_range<std::size_t>& range) {
        F tx[B * B], ty[B * B];
        std::size_t rev_b[B];
        for (std::size_t i = 0; i < B; ++i) rev_b[i] = bit_rev(i, kB);
        for (std::size_t mid = range.begin(); mid != range.end(); ++mid) {
          const std::size_t mid_r = bit_rev(mid, mid_bits);
          if (mid_r < mid) continue;
          F* x = base + mid * B;
          F* y = base + mid_r * B;
          for (std::size_t h = 0; h < B; ++h) std::copy(x + h * stride, x + h * stride + B, tx + h * B);
          if (mid_r != mid)
            for (std::size_t h = 0; h < B; ++h) std::copy(y + h * stride, y + h * stride + B, ty + h * B);
          const F* from_x = tx;
          const F* from_y = mid_r != mid ? ty : tx;
          for (std::size_t h = 0; h < B; ++h)
            for (std::size_t l = 0; l < B; ++l) {
              x[h * stride + l] = from_y[rev_b[l] * B + rev_b[h]];
              if (mid_r != mid) y[h * stride + l] = from_x[rev_b[l] * B + rev_b[h]];
            }
        }
      });
}

}  // namespace

template <class F>
void ntt(FieldSpan<F> a, const DomainOf<F>& d, Order in, Order out) {
  transform<F>(a, d, in, out, /*inverse=*/false, /*coset=*/false);
}
template <class F>
void intt(FieldSpan<F> a, const DomainOf<F>& d, Order in, Order out) {
  transform<F>(a, d, in, out, /*inverse=*/true, /*coset=*/false);
}
template <class F>
void coset_ntt(FieldSpan<F> a, const DomainOf<F>& d, Order in, Order out) {
  transform<F>(a, d, in, out, /*inverse=*/false, /*coset=*/true);
}
template <class F>
void coset_intt(FieldSpan<F> a, const DomainOf<F>& d, Order in, Order out) {
  transform<F>(a, d, in, out, /*inverse=*/true, /*coset=*/true);
}

void bit_reverse_permute(std::span<Fr> a) { bit_reverse(a); }
void bit_reverse_permute(std::span<bn254::Fr> a) { bit_reverse(a); }

template class DomainOf<Fr>;
template class DomainOf<bn254::Fr>;
#define PP_NTT_DEFINE(F)                                                       \
  template void ntt<F>(FieldSpan<F>, const DomainOf<F>&, Order, Order);        \
  template void intt<F>(FieldSpan<F>, const DomainOf<F>&, Order, Order);       \
  template void coset_ntt<F>(FieldSpan<F>, const DomainOf<F>&, Order, Order);  \
  template void coset_intt<F>(FieldSpan<F>, const DomainOf<F>&, Order, Order);
PP_NTT_DEFINE(Fr)
PP_NTT_DEFINE(bn254::Fr)
#undef PP_NTT_DEFINE

}  // namespace pp
