// SPDX-License-Identifier: Apache-2.0 OR MIT
// AVX-512 IFMA kernels of the CPU MSM (msm/simd.hpp) for BLS12-381 and BN254. Eight Fp elements
// at a time, element j in 64-bit lane j of vectors of 52-bit limbs (eight for BLS12-381's 381-bit
// p: 416 bits; five for BN254's 254-bit p: 260 bits), with room for values up to 4p, so sums and
// differences need no reduction between products. The Montgomery product divides by R = 2^384
// (2^256) like the 64-bit code (seven 52-bit reduction steps and one of 20 bits; four and one of
// 48), so a value's 52-bit limbs are its 64-bit Montgomery limbs re-cut, with no conversion product.
//
// Only the functions marked PP_IFMA use AVX-512, through the target attribute: the file is
// compiled for the baseline, so no inline function it shares with other files (which the
// linker may merge) holds AVX-512 code, and nothing runs it unless supported() said so.

// GCC 12's avx512fintrin.h shift intrinsics start from _mm512_undefined_epi32() (a variable
// initialised with itself), which GCC reports once inlined here: -Wmaybe-uninitialized at -O3,
// -Wuninitialized at -O2 -g (the tsan preset). A known false positive (GCC PR 105593, fixed in
// GCC 13); before any include, since the headers' lines carry the diagnostic state.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include "proofpipe/msm/simd.hpp"

#include "proofpipe/msm/fp_inverse.hpp"

#include <array>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace pp::msm_simd {

#if defined(__x86_64__)

namespace {

// cpuid leaf 1 ECX bit 27: the OS uses XSAVE (xgetbv is allowed); XCR0 bits 1, 2, 5, 6, 7: the
// OS saves the SSE, AVX, opmask and both ZMM register states; leaf 7 EBX bit 16: AVX512F,
// bit 21: AVX512_IFMA.
bool cpu_has_ifma() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !((c >> 27) & 1)) return false;
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  if ((lo & 0xe6) != 0xe6) return false;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  return ((b >> 16) & 1) && ((b >> 21) & 1);
}

bool env_allows() {
  const char* e = std::getenv("PROOFPIPE_MSM_SIMD");
  return !(e && std::strcmp(e, "0") == 0);
}

const bool kSupported = cpu_has_ifma();
bool g_enabled = kSupported && env_allows();

constexpr uint64_t kMask52 = (uint64_t(1) << 52) - 1;

#define PP_IFMA __attribute__((target("avx512f,avx512ifma")))
#define PP_IFMA_INLINE __attribute__((target("avx512f,avx512ifma"), always_inline)) inline

using V = __m512i;
using Block = Scratch::Impl::Block;

PP_IFMA_INLINE V bc(uint64_t x) { return _mm512_set1_epi64(static_cast<long long>(x)); }
PP_IFMA_INLINE V zero() { return _mm512_setzero_si512(); }

// The kernels over the prime field with Montgomery parameters P (BLS12-381's Fp: six 64-bit
// words, eight 52-bit limbs; BN254's Fp: four words, five limbs). R = 2^(64·W): the Montgomery
// product divides by R like the 64-bit code, in L - 1 reduction steps of 52 bits and one of
// kTopBits (20 for BLS12-381, 48 for BN254), so the limbs are the 64-bit words re-cut.
template <class P>
struct Lanes {
  using Fp = Field<P>;
  using Consts = FieldConsts<P>;
  static constexpr int W = P::N;                     // 64-bit words of an element
  static constexpr int L = (64 * W + 51) / 52;       // 52-bit limbs of an element
  static constexpr int kTopBits = 64 * W - 52 * (L - 1);
  // 4p < R: a product of two values below 2p reduces to below 2p, and sums of two such values
  // with a multiple of p added stay below R.
  static_assert(Consts::bits + 2 <= 64 * W, "the lazy bounds need 4p < R");
  static_assert(L <= 8 && sizeof(Block) >= 64 * 8, "a scratch block holds eight lanes of L limbs");
  // 8p < R: a sum of two products of values below 2p (mont_mul2, the Fp2 product and norm) still
  // reduces to below 2p. Not for BN254 (p > 2^253): there one factor of each product in such a sum
  // must be canonical (below p), 2p^2 + 2p^2 < p·R.
  static constexpr bool kRoomFor8p = Consts::bits + 3 <= 64 * W;

  struct F8 {
    V l[L];
  };
  using Const = std::array<uint64_t, L>;

  // A value of W 64-bit words re-cut into L 52-bit limbs.
  static constexpr Const to52(const uint64_t* w) {
    Const r{};
    for (int k = 0; k < L; ++k) {
      const int bit = 52 * k, i = bit / 64, s = bit % 64;
      uint64_t v = i < W ? w[i] >> s : 0;
      if (s > 12 && i + 1 < W) v |= w[i + 1] << (64 - s);
      r[k] = v & kMask52;
    }
    return r;
  }
  static constexpr Const times(int m) {  // m·p, m <= 4 (< R)
    uint64_t w[W] = {};
    unsigned __int128 carry = 0;
    for (int i = 0; i < W; ++i) {
      carry += (unsigned __int128)Consts::modulus.v[i] * unsigned(m);
      w[i] = uint64_t(carry);
      carry >>= 64;
    }
    return to52(w);
  }
  static constexpr Const kP = times(1), k2P = times(2);
  static constexpr Const kOne = to52(Consts::r1.v);
  static constexpr uint64_t kMinv = Consts::inv64 & kMask52;  // -p^-1 mod 2^52

  // r = (a·b + c·d) / R mod p (c·d only with Two) with the rows of b (and d) interleaved with the
  // reduction steps (CIOS): L + 1 column sums live instead of 2L, which leaves the inputs in
  // registers. (The product first, in sixteen column sums, then the reduction, spilled them on
  // BLS12-381: G1 2^16 ran 1.25x and G2 2^14 1.33x this one's time.) Row i adds a·b_i at the
  // current lowest limb; after each of the first L - 1 a reduction step clears that limb and the
  // window moves up by one limb; after the last a kTopBits-bit step completes R. A column gets at
  // most 4 (Two: 6) terms below 2^52 per row, so the sums stay below 2^58.
  template <bool Two>
  PP_IFMA_INLINE static void mont_rows(F8& r, const F8& a, const F8& b, const F8& c, const F8& d) {
    const V minv = bc(kMinv), mask = bc(kMask52);
    V t[L + 2];
    for (int k = 0; k < L + 2; ++k) t[k] = zero();
    for (int i = 0; i < L; ++i) {
      for (int j = 0; j < L; ++j) {
        t[j] = _mm512_madd52lo_epu64(t[j], a.l[j], b.l[i]);
        t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], a.l[j], b.l[i]);
      }
      if constexpr (Two)
        for (int j = 0; j < L; ++j) {
          t[j] = _mm512_madd52lo_epu64(t[j], c.l[j], d.l[i]);
          t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], c.l[j], d.l[i]);
        }
      V q = _mm512_madd52lo_epu64(zero(), t[0], minv);
      if (i == L - 1) q = _mm512_and_si512(q, bc((uint64_t(1) << kTopBits) - 1));
      for (int j = 0; j < L; ++j) {
        t[j] = _mm512_madd52lo_epu64(t[j], bc(kP[j]), q);
        t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], bc(kP[j]), q);
      }
      if (i == L - 1) break;
      t[1] = _mm512_add_epi64(t[1], _mm512_srli_epi64(t[0], 52));
      for (int k = 0; k < L + 1; ++k) t[k] = t[k + 1];
      t[L + 1] = zero();
    }
    // t_0's low kTopBits bits are zero: normalize, then shift t_0..t_L down by kTopBits bits.
    for (int k = 0; k < L; ++k) {
      t[k + 1] = _mm512_add_epi64(t[k + 1], _mm512_srli_epi64(t[k], 52));
      t[k] = _mm512_and_si512(t[k], mask);
    }
    for (int k = 0; k < L; ++k)
      r.l[k] = _mm512_or_si512(_mm512_srli_epi64(t[k], kTopBits),
                               _mm512_and_si512(_mm512_slli_epi64(t[k + 1], 52 - kTopBits), mask));
  }

  // r = a·b / R mod p; a, b below 2p (4p^2 < p·R since 4p < R), r below 2p.
  PP_IFMA_INLINE static void mont_mul(F8& r, const F8& a, const F8& b) { mont_rows<false>(r, a, b, a, b); }
  // r = (a·b + c·d) / R mod p for a·b + c·d < p·R; r below 2p.
  PP_IFMA_INLINE static void mont_mul2(F8& r, const F8& a, const F8& b, const F8& c, const F8& d) {
    mont_rows<true>(r, a, b, c, d);
  }

  // r = a + c - b - d (c a constant multiple of p making it non-negative; d may be null), limbs
  // normalized with signed carries. The result must stay below 2^(52L).
  PP_IFMA_INLINE static void sub_mod(F8& r, const F8& a, const F8& b, const F8* d, const Const& c) {
    const V mask = bc(kMask52);
    V carry = zero();
    for (int k = 0; k < L; ++k) {
      V v = _mm512_add_epi64(_mm512_sub_epi64(a.l[k], b.l[k]), bc(c[k]));
      if (d) v = _mm512_sub_epi64(v, d->l[k]);
      v = _mm512_add_epi64(v, carry);
      carry = _mm512_srai_epi64(v, 52);
      r.l[k] = _mm512_and_si512(v, mask);
    }
  }

  // x - c where x >= c (lane by lane), else x: one step of the final reduction.
  PP_IFMA_INLINE static void cond_sub(F8& x, const Const& c) {
    const V mask = bc(kMask52);
    V carry = zero(), d[L];
    for (int k = 0; k < L; ++k) {
      const V v = _mm512_add_epi64(_mm512_sub_epi64(x.l[k], bc(c[k])), carry);
      carry = _mm512_srai_epi64(v, 52);
      d[k] = _mm512_and_si512(v, mask);
    }
    // x - c = sum_k<L-1 d_k·2^(52k) + v_(L-1)·2^(52(L-1)) with the top limb signed: carry < 0 iff x < c.
    const __mmask8 ge = _mm512_cmpge_epi64_mask(carry, zero());
    for (int k = 0; k < L; ++k) x.l[k] = _mm512_mask_blend_epi64(ge, x.l[k], d[k]);
  }
  // Below p from below 2p.
  PP_IFMA_INLINE static void canonical(F8& x) { cond_sub(x, kP); }

  // W 64-bit word vectors -> L 52-bit limb vectors, and back (values < R). The shift counts are
  // constants once the loops unroll.
  PP_IFMA_INLINE static void from64(F8& r, const V* w) {
    const V mask = bc(kMask52);
    for (int k = 0; k < L; ++k) {
      const int bit = 52 * k, i = bit / 64, s = bit % 64;
      V v = s ? _mm512_srli_epi64(w[i], unsigned(s)) : w[i];
      if (s > 12 && i + 1 < W) v = _mm512_or_si512(v, _mm512_slli_epi64(w[i + 1], unsigned(64 - s)));
      r.l[k] = _mm512_and_si512(v, mask);
    }
  }
  PP_IFMA_INLINE static void to64(V* w, const F8& a) {
    for (int i = 0; i < W; ++i) {
      V v = zero();
      for (int k = 0; k < L; ++k) {
        const int lo = 52 * k - 64 * i;  // limb k's lowest bit within word i
        if (lo >= 64 || lo + 52 <= 0) continue;
        v = _mm512_or_si512(v, lo >= 0 ? _mm512_slli_epi64(a.l[k], unsigned(lo)) : _mm512_srli_epi64(a.l[k], unsigned(-lo)));
      }
      w[i] = v;
    }
  }

  // Eight elements of W words each from base + idx[j] (word offsets), lanes outside m get `fill`.
  PP_IFMA_INLINE static void gather(F8& r, const uint64_t* base, V idx, __mmask8 m, const uint64_t* fill) {
    V w[W];
    for (int k = 0; k < W; ++k) w[k] = _mm512_mask_i64gather_epi64(bc(fill[k]), m, idx, base + k, 8);
    from64(r, w);
  }
  PP_IFMA_INLINE static void scatter(uint64_t* base, V idx, __mmask8 m, const F8& a) {
    V w[W];
    to64(w, a);
    for (int k = 0; k < W; ++k) _mm512_mask_i64scatter_epi64(base + k, m, idx, w[k], 8);
  }

  PP_IFMA_INLINE static void load(F8& r, const Block& b) {
    for (int k = 0; k < L; ++k) r.l[k] = _mm512_load_si512(b.w + 8 * k);
  }
  PP_IFMA_INLINE static void store(Block& b, const F8& a) {
    for (int k = 0; k < L; ++k) _mm512_store_si512(b.w + 8 * k, a.l[k]);
  }
  PP_IFMA_INLINE static void broadcast(F8& r, const Const& c) {
    for (int k = 0; k < L; ++k) r.l[k] = bc(c[k]);
  }

  PP_IFMA_INLINE static __mmask8 lanes(std::size_t n, std::size_t s) {  // valid lanes of group s
    const std::size_t left = n - 8 * s;
    return left >= 8 ? __mmask8(0xff) : __mmask8((1u << left) - 1);
  }
  PP_IFMA_INLINE static V word_offsets(std::size_t first, std::size_t words) {  // (first + j)·words
    const long long w = static_cast<long long>(words);
    return _mm512_add_epi64(_mm512_set_epi64(7 * w, 6 * w, 5 * w, 4 * w, 3 * w, 2 * w, w, 0), bc(first * words));
  }
  // Eight entry indices (below 2^32) -> word offsets of points of `words` words (vpmuludq:
  // AVX512F has no 64-bit mullo).
  PP_IFMA_INLINE static V point_offsets(const uint32_t* idx, unsigned words) {
    const V x = _mm512_cvtepu32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(idx)));
    return _mm512_mul_epu32(x, bc(words));
  }
  // The indices of group s (zeros past the last pair).
  PP_IFMA_INLINE static V group_offsets(const uint32_t* idx, std::size_t pairs, std::size_t s, unsigned words) {
    uint32_t i8[8] = {};
    const std::size_t cnt = pairs - 8 * s < 8 ? pairs - 8 * s : 8;
    std::memcpy(i8, idx + 8 * s, cnt * sizeof(uint32_t));
    return point_offsets(i8, words);
  }

  static Fp invert_scalar(const Fp& a) {
    if constexpr (std::is_same_v<Fp, pp::Fp>)
      return msm_inverse::inverse_vartime(a);  // Bernstein-Yang, BLS12-381's Fp only
    else
      return a.inverse();
  }

  // inv[s] lane j = 1/key j of group s (< 2p, 52-bit limbs) for the groups. Forward: prefix
  // products on eight chains (inv[s] holds the product of the chain's elements before s); the
  // eight chain totals are inverted together with scalar code (one inversion); backward:
  // inv[s] = prefix·(1/product up to s), then 1/product up to s-1 = that times a[8s + j].
  // Keys from an Fp array (padding lanes one) or from blocks already in 52-bit form.
  struct KeysFromArray {
    const Fp* a;
    std::size_t n;
    PP_IFMA_INLINE void operator()(F8& d, std::size_t s) const {
      gather(d, a[0].l, word_offsets(8 * s, W), lanes(n, s), Consts::r1.v);
    }
  };
  struct KeysFromBlocks {
    const Block* b;
    PP_IFMA_INLINE void operator()(F8& d, std::size_t s) const { load(d, b[s]); }
  };

  template <class Keys>
  PP_IFMA_INLINE static void invert_groups(const Keys& key, std::size_t groups, std::vector<Block>& inv) {
    inv.resize(groups);
    F8 acc, d;
    broadcast(acc, kOne);
    for (std::size_t s = 0; s < groups; ++s) {
      store(inv[s], acc);
      key(d, s);
      mont_mul(acc, acc, d);
    }
    // The chain totals, canonical, through scalar code.
    canonical(acc);
    V w[W];
    to64(w, acc);
    alignas(64) uint64_t lane[W][8];
    for (int k = 0; k < W; ++k) _mm512_store_si512(lane[k], w[k]);
    Fp tot[8], pre[8];
    for (int j = 0; j < 8; ++j)
      for (int k = 0; k < W; ++k) tot[j].l[k] = lane[k][j];
    Fp run = Fp::one();
    for (int j = 0; j < 8; ++j) {
      pre[j] = run;
      run *= tot[j];
    }
    Fp ir = invert_scalar(run);
    for (int j = 8; j-- > 0;) {
      const Fp t = pre[j] * ir;
      ir *= tot[j];
      for (int k = 0; k < W; ++k) lane[k][j] = t.l[k];
    }
    for (int k = 0; k < W; ++k) w[k] = _mm512_load_si512(lane[k]);
    F8 cur;
    from64(cur, w);
    for (std::size_t s = groups; s-- > 0;) {
      F8 p, r;
      load(p, inv[s]);
      key(d, s);
      mont_mul(r, p, cur);
      mont_mul(cur, cur, d);
      store(inv[s], r);
    }
  }

  PP_IFMA static void mul_batch(Fp* r, const Fp* a, const Fp* b, std::size_t n) {
    const uint64_t zeros[W] = {};
    for (std::size_t s = 0; s < (n + 7) / 8; ++s) {
      const V idx = word_offsets(8 * s, W);
      const __mmask8 m = lanes(n, s);
      F8 x, y, z;
      gather(x, a[0].l, idx, m, zeros);
      gather(y, b[0].l, idx, m, zeros);
      mont_mul(z, x, y);
      canonical(z);
      scatter(r[0].l, idx, m, z);
    }
  }

  PP_IFMA static void inverse_batch(Fp* r, const Fp* a, std::size_t n, Scratch& scratch) {
    std::vector<Block>& inv = scratch.impl().inv;
    invert_groups(KeysFromArray{a, n}, (n + 7) / 8, inv);
    for (std::size_t s = 0; s < inv.size(); ++s) {
      F8 x;
      load(x, inv[s]);
      canonical(x);
      scatter(r[0].l, word_offsets(8 * s, W), lanes(n, s), x);
    }
  }

  // Stores group s's keys, one in place of the equal-x pairs' (the caller's, bit set in
  // `special`) and the padding lanes' (outside m): no key is zero.
  PP_IFMA_INLINE static void store_key(Block& slot, F8 key, uint8_t special, __mmask8 m) {
    F8 one;
    broadcast(one, kOne);
    const __mmask8 unit = __mmask8(special | ~m);
    for (int k = 0; k < L; ++k) key.l[k] = _mm512_mask_blend_epi64(unit, key.l[k], one.l[k]);
    store(slot, key);
  }

  // `w`: the points' words, a G1 affine point being 2W words (x then y).
  PP_IFMA static void g1_add_pairs(uint64_t* w, const uint32_t* in, const uint32_t* out, const uint8_t* special,
                                   std::size_t pairs, Scratch& scratch) {
    const uint64_t zeros[W] = {};
    constexpr unsigned kPoint = 2 * W;
    // The keys Q.x - P.x (+ p: below 2p), one for equal-x pairs and padding lanes.
    const std::size_t groups = (pairs + 7) / 8;
    std::vector<Block>& keys = scratch.impl().keys;
    keys.resize(groups);
    for (std::size_t s = 0; s < groups; ++s) {
      const __mmask8 m = lanes(pairs, s);
      const V pi = group_offsets(in, pairs, s, kPoint);
      F8 px, qx, d;
      gather(px, w, pi, m, zeros);
      gather(qx, w + kPoint, pi, m, zeros);
      sub_mod(d, qx, px, nullptr, kP);
      store_key(keys[s], d, special[s], m);
    }
    std::vector<Block>& inv = scratch.impl().inv;
    invert_groups(KeysFromBlocks{keys.data()}, groups, inv);
    for (std::size_t s = 0; s < inv.size(); ++s) {
      const __mmask8 m = lanes(pairs, s);
      const V pi = group_offsets(in, pairs, s, kPoint), po = group_offsets(out, pairs, s, kPoint);
      F8 px, py, qx, qy, il, l, t, x3, y3;
      gather(px, w, pi, m, zeros);
      gather(py, w + W, pi, m, zeros);
      gather(qx, w + kPoint, pi, m, zeros);
      gather(qy, w + kPoint + W, pi, m, zeros);
      load(il, inv[s]);
      // lambda = (qy - py)/(qx - px); x3 = lambda^2 - px - qx; y3 = lambda·(px - x3) - py.
      sub_mod(t, qy, py, nullptr, kP);  // < 2p
      mont_mul(l, t, il);
      mont_mul(t, l, l);
      sub_mod(x3, t, px, &qx, k2P);  // < 4p
      cond_sub(x3, k2P);
      cond_sub(x3, kP);
      sub_mod(t, px, x3, nullptr, kP);  // < 2p
      mont_mul(y3, l, t);
      sub_mod(y3, y3, py, nullptr, kP);  // < 3p
      cond_sub(y3, k2P);
      cond_sub(y3, kP);
      // Equal-x pairs (the caller's) leave infinity, (0, 0).
      const __mmask8 keep = __mmask8(~special[s]);
      for (int k = 0; k < L; ++k) {
        x3.l[k] = _mm512_maskz_mov_epi64(keep, x3.l[k]);
        y3.l[k] = _mm512_maskz_mov_epi64(keep, y3.l[k]);
      }
      scatter(w, po, m, x3);
      scatter(w + W, po, m, y3);
    }
  }

  // Fp2 in the vector form: c0 + c1·u, u^2 = -1 (both curves' towers).
  struct F8x2 {
    F8 c0, c1;
  };

  // r = a·b with two reductions: c0 = (a0·b0 + a1·(2p - b1)) / R, c1 = (a0·b1 + a1·b0) / R; b's
  // coordinates below 2p, a's below 2p where 8p < R and below p otherwise (each sum then below
  // 8p^2, resp. 4p^2, < p·R); r's below 2p.
  PP_IFMA_INLINE static void fp2_mul(F8x2& r, const F8x2& a, const F8x2& b) {
    F8 nb1, z;
    broadcast(z, {});
    sub_mod(nb1, z, b.c1, nullptr, k2P);
    F8 c1;
    mont_mul2(c1, a.c0, b.c1, a.c1, b.c0);
    mont_mul2(r.c0, a.c0, b.c0, a.c1, nb1);
    r.c1 = c1;
  }
  // fp2_mul's first factor: below p where 8p >= R (below 2p is enough otherwise).
  PP_IFMA_INLINE static void left_factor(F8x2& a) {
    if constexpr (!kRoomFor8p) {
      canonical(a.c0);
      canonical(a.c1);
    }
  }

  PP_IFMA_INLINE static void gather2(F8x2& r, const uint64_t* base, V idx, __mmask8 m, const uint64_t* fill) {
    gather(r.c0, base, idx, m, fill);
    gather(r.c1, base + W, idx, m, fill);
  }

  // `w`: the points' words, a G2 affine point being 4W words (x.c0, x.c1, y.c0, y.c1).
  PP_IFMA static void g2_add_pairs(uint64_t* w, const uint32_t* in, const uint32_t* out, const uint8_t* special,
                                   std::size_t pairs, Scratch& scratch) {
    const uint64_t zeros[W] = {};
    constexpr unsigned kPoint = 4 * W;
    const std::size_t groups = (pairs + 7) / 8;
    // The keys: the norms d0^2 + d1^2 of d = Q.x - P.x (one reduction), one for equal-x pairs.
    std::vector<Block>& keys = scratch.impl().keys;
    keys.resize(groups);
    for (std::size_t s = 0; s < groups; ++s) {
      const V pi = group_offsets(in, pairs, s, kPoint);
      const __mmask8 m = lanes(pairs, s);
      F8x2 px, qx;
      gather2(px, w, pi, m, zeros);
      gather2(qx, w + kPoint, pi, m, zeros);
      F8x2 d;
      sub_mod(d.c0, qx.c0, px.c0, nullptr, kP);
      sub_mod(d.c1, qx.c1, px.c1, nullptr, kP);
      left_factor(d);
      F8 nrm;
      mont_mul2(nrm, d.c0, d.c0, d.c1, d.c1);
      store_key(keys[s], nrm, special[s], m);
    }
    std::vector<Block>& inv = scratch.impl().inv;
    invert_groups(KeysFromBlocks{keys.data()}, groups, inv);
    for (std::size_t s = 0; s < groups; ++s) {
      const __mmask8 m = lanes(pairs, s);
      const V pi = group_offsets(in, pairs, s, kPoint), po = group_offsets(out, pairs, s, kPoint);
      F8x2 px, py, qx, qy, iv, dy, l, t2, x3, y3;
      gather2(px, w, pi, m, zeros);
      gather2(py, w + 2 * W, pi, m, zeros);
      gather2(qx, w + kPoint, pi, m, zeros);
      gather2(qy, w + kPoint + 2 * W, pi, m, zeros);
      F8 in_norm;
      load(in_norm, inv[s]);
      // 1/d = conj(d) / N(d); lambda = (qy - py)/d; x3 = lambda^2 - px - qx; y3 = lambda·(px - x3) - py.
      sub_mod(dy.c0, qx.c0, px.c0, nullptr, kP);
      sub_mod(dy.c1, px.c1, qx.c1, nullptr, kP);  // -(d.c1)
      mont_mul(iv.c0, dy.c0, in_norm);
      mont_mul(iv.c1, dy.c1, in_norm);
      sub_mod(dy.c0, qy.c0, py.c0, nullptr, kP);
      sub_mod(dy.c1, qy.c1, py.c1, nullptr, kP);
      left_factor(dy);
      fp2_mul(l, dy, iv);
      left_factor(l);  // l is the left factor of both products below
      fp2_mul(t2, l, l);
      sub_mod(x3.c0, t2.c0, px.c0, &qx.c0, k2P);  // < 4p
      sub_mod(x3.c1, t2.c1, px.c1, &qx.c1, k2P);
      for (F8* c : {&x3.c0, &x3.c1}) {
        cond_sub(*c, k2P);
        cond_sub(*c, kP);
      }
      sub_mod(t2.c0, px.c0, x3.c0, nullptr, kP);
      sub_mod(t2.c1, px.c1, x3.c1, nullptr, kP);
      fp2_mul(y3, l, t2);
      sub_mod(y3.c0, y3.c0, py.c0, nullptr, kP);  // < 3p
      sub_mod(y3.c1, y3.c1, py.c1, nullptr, kP);
      for (F8* c : {&y3.c0, &y3.c1}) {
        cond_sub(*c, k2P);
        cond_sub(*c, kP);
      }
      const __mmask8 keep = __mmask8(~special[s]);
      for (F8* c : {&x3.c0, &x3.c1, &y3.c0, &y3.c1})
        for (int k = 0; k < L; ++k) c->l[k] = _mm512_maskz_mov_epi64(keep, c->l[k]);
      scatter(w, po, m, x3.c0);
      scatter(w + W, po, m, x3.c1);
      scatter(w + 2 * W, po, m, y3.c0);
      scatter(w + 3 * W, po, m, y3.c1);
    }
  }
};

using Bls = Lanes<FpParams>;
using Bn = Lanes<bn254::FpParams>;
static_assert(Bls::L == 8 && Bls::kTopBits == 20 && Bls::kRoomFor8p);
static_assert(Bn::L == 5 && Bn::kTopBits == 48 && !Bn::kRoomFor8p);

void require_supported(const char* what) {
  if (!kSupported) throw std::logic_error(std::string("msm_simd::") + what + ": this CPU has no AVX-512 IFMA");
}

}  // namespace

bool supported() { return kSupported; }
bool enabled() { return g_enabled; }
void allow(bool on) { g_enabled = on && kSupported; }

#define PP_SIMD_ENTRY_POINTS(K, FP, G1A, G2A)                                                                 \
  void mul_batch(FP* r, const FP* a, const FP* b, std::size_t n) {                                          \
    require_supported("mul_batch");                                                                         \
    if (n) K::mul_batch(r, a, b, n);                                                                        \
  }                                                                                                         \
  void inverse_batch(FP* r, const FP* a, std::size_t n, Scratch& scratch) {                                 \
    require_supported("inverse_batch");                                                                     \
    if (n) K::inverse_batch(r, a, n, scratch);                                                              \
  }                                                                                                         \
  void g1_add_pairs(G1A* points, const uint32_t* in, const uint32_t* out, const uint8_t* special,           \
                    std::size_t pairs, Scratch& scratch) {                                                  \
    require_supported("g1_add_pairs");                                                                      \
    if (pairs) K::g1_add_pairs(points[0].x.l, in, out, special, pairs, scratch);                            \
  }                                                                                                         \
  void g2_add_pairs(G2A* points, const uint32_t* in, const uint32_t* out, const uint8_t* special,           \
                    std::size_t pairs, Scratch& scratch) {                                                  \
    require_supported("g2_add_pairs");                                                                      \
    if (pairs) K::g2_add_pairs(points[0].x.c0.l, in, out, special, pairs, scratch);                         \
  }

#else  // no x86-64: the scalar code only

namespace {
[[noreturn]] void not_built() { throw std::logic_error("msm_simd: not built"); }
}  // namespace

bool supported() { return false; }
bool enabled() { return false; }
void allow(bool) {}

#define PP_SIMD_ENTRY_POINTS(K, FP, G1A, G2A)                                                                 \
  void mul_batch(FP*, const FP*, const FP*, std::size_t) { not_built(); }                                   \
  void inverse_batch(FP*, const FP*, std::size_t, Scratch&) { not_built(); }                                \
  void g1_add_pairs(G1A*, const uint32_t*, const uint32_t*, const uint8_t*, std::size_t, Scratch&) {        \
    not_built();                                                                                            \
  }                                                                                                         \
  void g2_add_pairs(G2A*, const uint32_t*, const uint32_t*, const uint8_t*, std::size_t, Scratch&) {        \
    not_built();                                                                                            \
  }

#endif

PP_SIMD_ENTRY_POINTS(Bls, Fp, G1Affine, G2Affine)
PP_SIMD_ENTRY_POINTS(Bn, bn254::Fp, bn254::G1Affine, bn254::G2Affine)

}  // namespace pp::msm_simd
