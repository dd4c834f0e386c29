// SPDX-License-Identifier: Apache-2.0 OR MIT
// AVX-512 IFMA kernels of the CPU MSM (msm/simd.hpp). Eight Fp elements at a time, element j in
// 64-bit lane j of eight vectors of 52-bit limbs (416 bits: room for values up to 4p, so sums
// and differences need no reduction between products). The Montgomery product divides by
// 2^384 like the 64-bit code (seven 52-bit reduction steps and one of 20 bits), so a value's
// 52-bit limbs are its 64-bit Montgomery limbs re-cut, with no conversion product.
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
using Consts = FieldConsts<FpParams>;

// A 384-bit value (six 64-bit limbs) re-cut into eight 52-bit limbs.
constexpr std::array<uint64_t, 8> to52(const uint64_t* w) {
  std::array<uint64_t, 8> r{};
  for (int k = 0; k < 8; ++k) {
    const int bit = 52 * k, i = bit / 64, s = bit % 64;
    uint64_t v = i < 6 ? w[i] >> s : 0;
    if (s > 12 && i + 1 < 6) v |= w[i + 1] << (64 - s);
    r[k] = v & kMask52;
  }
  return r;
}
constexpr std::array<uint64_t, 8> times52(int m) {  // m·p, m <= 4 (< 2^384)
  uint64_t w[6] = {};
  unsigned __int128 carry = 0;
  for (int i = 0; i < 6; ++i) {
    carry += (unsigned __int128)Consts::modulus.v[i] * unsigned(m);
    w[i] = uint64_t(carry);
    carry >>= 64;
  }
  return to52(w);
}
constexpr std::array<uint64_t, 8> kP = times52(1), k2P = times52(2);
constexpr std::array<uint64_t, 8> kOne = to52(Consts::r1.v);
constexpr uint64_t kMinv = Consts::inv64 & kMask52;  // -p^-1 mod 2^52
static_assert(Consts::bits == 381, "the 52-bit layout assumes a 381-bit p: 4p < 2^384 = R");

#define PP_IFMA __attribute__((target("avx512f,avx512ifma")))
#define PP_IFMA_INLINE __attribute__((target("avx512f,avx512ifma"), always_inline)) inline

using V = __m512i;
struct F8 {
  V l[8];
};

PP_IFMA_INLINE V bc(uint64_t x) { return _mm512_set1_epi64(static_cast<long long>(x)); }
PP_IFMA_INLINE V zero() { return _mm512_setzero_si512(); }

// r = (a·b + c·d) / 2^384 mod p (c·d only with Two) with the rows of b (and d) interleaved
// with the reduction steps (CIOS): nine column sums live instead of sixteen, which leaves the
// inputs in registers. (The product first, in sixteen column sums, then the reduction, spilled
// them: G1 2^16 ran 1.25x and G2 2^14 1.33x this one's time.) Row i adds a·b_i at the current
// lowest limb; after each of the first seven a reduction step clears that limb and the window
// moves up by one limb; after the last a 20-bit step completes 2^384. A column gets at most 4
// (Two: 6) terms below 2^52 per row, so the sums stay below 2^58.
template <bool Two>
PP_IFMA_INLINE void mont_rows(F8& r, const F8& a, const F8& b, const F8& c, const F8& d) {
  const V minv = bc(kMinv), mask = bc(kMask52);
  V t[10];
  for (int k = 0; k < 10; ++k) t[k] = zero();
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j) {
      t[j] = _mm512_madd52lo_epu64(t[j], a.l[j], b.l[i]);
      t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], a.l[j], b.l[i]);
    }
    if constexpr (Two)
      for (int j = 0; j < 8; ++j) {
        t[j] = _mm512_madd52lo_epu64(t[j], c.l[j], d.l[i]);
        t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], c.l[j], d.l[i]);
      }
    V q = _mm512_madd52lo_epu64(zero(), t[0], minv);
    if (i == 7) q = _mm512_and_si512(q, bc((uint64_t(1) << 20) - 1));
    for (int j = 0; j < 8; ++j) {
      t[j] = _mm512_madd52lo_epu64(t[j], bc(kP[j]), q);
      t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], bc(kP[j]), q);
    }
    if (i == 7) break;
    t[1] = _mm512_add_epi64(t[1], _mm512_srli_epi64(t[0], 52));
    for (int k = 0; k < 9; ++k) t[k] = t[k + 1];
    t[9] = zero();
  }
  // t_0's low 20 bits are zero: normalize, then shift t_0..t_8 down by 20 bits.
  for (int k = 0; k < 8; ++k) {
    t[k + 1] = _mm512_add_epi64(t[k + 1], _mm512_srli_epi64(t[k], 52));
    t[k] = _mm512_and_si512(t[k], mask);
  }
  for (int k = 0; k < 8; ++k)
    r.l[k] = _mm512_or_si512(_mm512_srli_epi64(t[k], 20), _mm512_and_si512(_mm512_slli_epi64(t[k + 1], 32), mask));
}

// r = a·b / 2^384 mod p; a, b below 2p (4p^2 < p·2^384 since 4p < 2^384), r below 2p.
PP_IFMA_INLINE void mont_mul(F8& r, const F8& a, const F8& b) {
  mont_rows<false>(r, a, b, a, b);
}
// r = (a·b + c·d) / 2^384 mod p for a·b + c·d < p·2^384; r below 2p.
PP_IFMA_INLINE void mont_mul2(F8& r, const F8& a, const F8& b, const F8& c, const F8& d) {
  mont_rows<true>(r, a, b, c, d);
}

// r = a + c - b - d (c a constant multiple of p making it non-negative; d may be null), limbs
// normalized with signed carries. The result must stay below 2^416.
PP_IFMA_INLINE void sub_mod(F8& r, const F8& a, const F8& b, const F8* d, const std::array<uint64_t, 8>& c) {
  const V mask = bc(kMask52);
  V carry = zero();
  for (int k = 0; k < 8; ++k) {
    V v = _mm512_add_epi64(_mm512_sub_epi64(a.l[k], b.l[k]), bc(c[k]));
    if (d) v = _mm512_sub_epi64(v, d->l[k]);
    v = _mm512_add_epi64(v, carry);
    carry = _mm512_srai_epi64(v, 52);
    r.l[k] = _mm512_and_si512(v, mask);
  }
}

// x - c where x >= c (lane by lane), else x: one step of the final reduction.
PP_IFMA_INLINE void cond_sub(F8& x, const std::array<uint64_t, 8>& c) {
  const V mask = bc(kMask52);
  V carry = zero(), d[8];
  for (int k = 0; k < 8; ++k) {
    const V v = _mm512_add_epi64(_mm512_sub_epi64(x.l[k], bc(c[k])), carry);
    carry = _mm512_srai_epi64(v, 52);
    d[k] = _mm512_and_si512(v, mask);
  }
  // x - c = sum_k<7 d_k·2^(52k) + v_7·2^364 with the top limb signed: carry < 0 iff x < c.
  const __mmask8 ge = _mm512_cmpge_epi64_mask(carry, zero());
  for (int k = 0; k < 8; ++k) x.l[k] = _mm512_mask_blend_epi64(ge, x.l[k], d[k]);
}

// 52 bits from bit s of lo on, continued by hi's low bits.
PP_IFMA_INLINE V cut(V lo, unsigned s, V hi) {
  return _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(lo, s), _mm512_slli_epi64(hi, 64 - s)), bc(kMask52));
}

// Six 64-bit limb vectors -> eight 52-bit limb vectors, and back (values < 2^384).
PP_IFMA_INLINE void from64(F8& r, const V* w) {
  const V mask = bc(kMask52);
  r.l[0] = _mm512_and_si512(w[0], mask);
  r.l[1] = cut(w[0], 52, w[1]);
  r.l[2] = cut(w[1], 40, w[2]);
  r.l[3] = cut(w[2], 28, w[3]);
  r.l[4] = cut(w[3], 16, w[4]);
  r.l[5] = _mm512_and_si512(_mm512_srli_epi64(w[4], 4), mask);
  r.l[6] = cut(w[4], 56, w[5]);
  r.l[7] = _mm512_srli_epi64(w[5], 44);
}
PP_IFMA_INLINE void to64(V* w, const F8& a) {
  w[0] = _mm512_or_si512(a.l[0], _mm512_slli_epi64(a.l[1], 52));
  w[1] = _mm512_or_si512(_mm512_srli_epi64(a.l[1], 12), _mm512_slli_epi64(a.l[2], 40));
  w[2] = _mm512_or_si512(_mm512_srli_epi64(a.l[2], 24), _mm512_slli_epi64(a.l[3], 28));
  w[3] = _mm512_or_si512(_mm512_srli_epi64(a.l[3], 36), _mm512_slli_epi64(a.l[4], 16));
  w[4] = _mm512_or_si512(_mm512_or_si512(_mm512_srli_epi64(a.l[4], 48), _mm512_slli_epi64(a.l[5], 4)),
                         _mm512_slli_epi64(a.l[6], 56));
  w[5] = _mm512_or_si512(_mm512_srli_epi64(a.l[6], 8), _mm512_slli_epi64(a.l[7], 44));
}

// Eight elements of 6 words each from base + idx[j] (word offsets), lanes outside m get `fill`.
PP_IFMA_INLINE void gather(F8& r, const uint64_t* base, V idx, __mmask8 m, const uint64_t* fill) {
  V w[6];
  for (int k = 0; k < 6; ++k)
    w[k] = _mm512_mask_i64gather_epi64(bc(fill[k]), m, idx, base + k, 8);
  from64(r, w);
}
PP_IFMA_INLINE void scatter(uint64_t* base, V idx, __mmask8 m, const F8& a) {
  V w[6];
  to64(w, a);
  for (int k = 0; k < 6; ++k) _mm512_mask_i64scatter_epi64(base + k, m, idx, w[k], 8);
}

PP_IFMA_INLINE void load(F8& r, const Scratch::Impl::Block& b) {
  for (int k = 0; k < 8; ++k) r.l[k] = _mm512_load_si512(b.w + 8 * k);
}
PP_IFMA_INLINE void store(Scratch::Impl::Block& b, const F8& a) {
  for (int k = 0; k < 8; ++k) _mm512_store_si512(b.w + 8 * k, a.l[k]);
}
PP_IFMA_INLINE void broadcast(F8& r, const std::array<uint64_t, 8>& c) {
  for (int k = 0; k < 8; ++k) r.l[k] = bc(c[k]);
}

PP_IFMA_INLINE __mmask8 lanes(std::size_t n, std::size_t s) {  // valid lanes of group s
  const std::size_t left = n - 8 * s;
  return left >= 8 ? __mmask8(0xff) : __mmask8((1u << left) - 1);
}
PP_IFMA_INLINE V word_offsets(std::size_t first, std::size_t words) {  // (first + j)·words
  const long long w = static_cast<long long>(words);
  return _mm512_add_epi64(_mm512_set_epi64(7 * w, 6 * w, 5 * w, 4 * w, 3 * w, 2 * w, w, 0), bc(first * words));
}
// Eight entry indices -> word offsets of 12-word points (x·12 = x·8 + x·4: AVX512F has no 64-bit mullo).
PP_IFMA_INLINE V point_offsets(const uint32_t* idx) {
  const V x = _mm512_cvtepu32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(idx)));
  return _mm512_add_epi64(_mm512_slli_epi64(x, 3), _mm512_slli_epi64(x, 2));
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
    gather(d, a[0].l, word_offsets(8 * s, 6), lanes(n, s), Consts::r1.v);
  }
};
struct KeysFromBlocks {
  const Scratch::Impl::Block* b;
  PP_IFMA_INLINE void operator()(F8& d, std::size_t s) const { load(d, b[s]); }
};

template <class Keys>
PP_IFMA_INLINE void invert_groups(const Keys& key, std::size_t groups, std::vector<Scratch::Impl::Block>& inv) {
  inv.resize(groups);
  F8 acc, d;
  broadcast(acc, kOne);
  for (std::size_t s = 0; s < groups; ++s) {
    store(inv[s], acc);
    key(d, s);
    mont_mul(acc, acc, d);
  }
  // The chain totals, canonical, through scalar code.
  cond_sub(acc, kP);
  V w[6];
  to64(w, acc);
  alignas(64) uint64_t lane[6][8];
  for (int k = 0; k < 6; ++k) _mm512_store_si512(lane[k], w[k]);
  Fp tot[8], pre[8];
  for (int j = 0; j < 8; ++j)
    for (int k = 0; k < 6; ++k) tot[j].l[k] = lane[k][j];
  Fp run = Fp::one();
  for (int j = 0; j < 8; ++j) {
    pre[j] = run;
    run *= tot[j];
  }
  Fp ir = msm_inverse::inverse_vartime(run);
  for (int j = 8; j-- > 0;) {
    const Fp t = pre[j] * ir;
    ir *= tot[j];
    for (int k = 0; k < 6; ++k) lane[k][j] = t.l[k];
  }
  for (int k = 0; k < 6; ++k) w[k] = _mm512_load_si512(lane[k]);
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

PP_IFMA void mul_batch_ifma(Fp* r, const Fp* a, const Fp* b, std::size_t n) {
  const uint64_t zeros[6] = {};
  for (std::size_t s = 0; s < (n + 7) / 8; ++s) {
    const V idx = word_offsets(8 * s, 6);
    const __mmask8 m = lanes(n, s);
    F8 x, y, z;
    gather(x, a[0].l, idx, m, zeros);
    gather(y, b[0].l, idx, m, zeros);
    mont_mul(z, x, y);
    cond_sub(z, kP);
    scatter(r[0].l, idx, m, z);
  }
}

PP_IFMA void inverse_batch_ifma(Fp* r, const Fp* a, std::size_t n, Scratch& scratch) {
  std::vector<Scratch::Impl::Block>& inv = scratch.impl().inv;
  invert_groups(KeysFromArray{a, n}, (n + 7) / 8, inv);
  for (std::size_t s = 0; s < inv.size(); ++s) {
    F8 x;
    load(x, inv[s]);
    cond_sub(x, kP);
    scatter(r[0].l, word_offsets(8 * s, 6), lanes(n, s), x);
  }
}

PP_IFMA void g1_add_pairs_ifma(G1Affine* points, const uint32_t* in, const uint32_t* out,
                               const uint8_t* special, std::size_t pairs, Scratch& scratch) {
  uint64_t* w = points[0].x.l;
  const uint64_t zeros[6] = {};
  // The keys Q.x - P.x (+ p: below 2p), one for equal-x pairs and padding lanes.
  const std::size_t groups = (pairs + 7) / 8;
  std::vector<Scratch::Impl::Block>& keys = scratch.impl().keys;
  keys.resize(groups);
  F8 one;
  broadcast(one, kOne);
  for (std::size_t s = 0; s < groups; ++s) {
    const __mmask8 m = lanes(pairs, s);
    uint32_t i8[8] = {};
    const std::size_t cnt = pairs - 8 * s < 8 ? pairs - 8 * s : 8;
    std::memcpy(i8, in + 8 * s, cnt * sizeof(uint32_t));
    const V pi = point_offsets(i8);
    F8 px, qx, d;
    gather(px, w, pi, m, zeros);
    gather(qx, w + 12, pi, m, zeros);
    sub_mod(d, qx, px, nullptr, kP);
    const __mmask8 unit = __mmask8(special[s] | ~m);
    for (int k = 0; k < 8; ++k) d.l[k] = _mm512_mask_blend_epi64(unit, d.l[k], one.l[k]);
    store(keys[s], d);
  }
  std::vector<Scratch::Impl::Block>& inv = scratch.impl().inv;
  invert_groups(KeysFromBlocks{keys.data()}, groups, inv);
  for (std::size_t s = 0; s < inv.size(); ++s) {
    const __mmask8 m = lanes(pairs, s);
    uint32_t i8[8] = {}, o8[8] = {};
    const std::size_t cnt = pairs - 8 * s < 8 ? pairs - 8 * s : 8;
    std::memcpy(i8, in + 8 * s, cnt * sizeof(uint32_t));
    std::memcpy(o8, out + 8 * s, cnt * sizeof(uint32_t));
    const V pi = point_offsets(i8), po = point_offsets(o8);
    F8 px, py, qx, qy, il, l, t, x3, y3;
    gather(px, w, pi, m, zeros);
    gather(py, w + 6, pi, m, zeros);
    gather(qx, w + 12, pi, m, zeros);
    gather(qy, w + 18, pi, m, zeros);
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
    for (int k = 0; k < 8; ++k) {
      x3.l[k] = _mm512_maskz_mov_epi64(keep, x3.l[k]);
      y3.l[k] = _mm512_maskz_mov_epi64(keep, y3.l[k]);
    }
    scatter(w, po, m, x3);
    scatter(w + 6, po, m, y3);
  }
}


// Fp2 in the vector form: c0 + c1·u, u^2 = -1.
struct F8x2 {
  F8 c0, c1;
};

// r = a·b with two reductions: c0 = (a0·b0 + a1·(2p - b1)) / 2^384, c1 = (a0·b1 + a1·b0) / 2^384;
// every coordinate below 2p in and out (each sum below 8p^2 < p·2^384).
PP_IFMA_INLINE void fp2_mul(F8x2& r, const F8x2& a, const F8x2& b) {
  F8 nb1, z;
  broadcast(z, {});
  sub_mod(nb1, z, b.c1, nullptr, k2P);
  F8 c1;
  mont_mul2(c1, a.c0, b.c1, a.c1, b.c0);
  mont_mul2(r.c0, a.c0, b.c0, a.c1, nb1);
  r.c1 = c1;
}

PP_IFMA_INLINE void gather2(F8x2& r, const uint64_t* base, V idx, __mmask8 m, const uint64_t* fill) {
  gather(r.c0, base, idx, m, fill);
  gather(r.c1, base + 6, idx, m, fill);
}

// Eight entry indices -> word offsets of 24-word points.
PP_IFMA_INLINE V point2_offsets(const uint32_t* idx) {
  const V x = _mm512_cvtepu32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(idx)));
  return _mm512_add_epi64(_mm512_slli_epi64(x, 4), _mm512_slli_epi64(x, 3));
}

PP_IFMA void g2_add_pairs_ifma(G2Affine* points, const uint32_t* in, const uint32_t* out,
                               const uint8_t* special, std::size_t pairs, Scratch& scratch) {
  // A G2 point is 24 words: x.c0, x.c1, y.c0, y.c1.
  uint64_t* w = points[0].x.c0.l;
  const uint64_t zeros[6] = {};
  const std::size_t groups = (pairs + 7) / 8;
  auto offsets = [&](const uint32_t* idx, std::size_t s, uint32_t* buf) {
    const std::size_t cnt = pairs - 8 * s < 8 ? pairs - 8 * s : 8;
    std::memcpy(buf, idx + 8 * s, cnt * sizeof(uint32_t));
  };
  // The keys: the norms d0^2 + d1^2 of d = Q.x - P.x (one reduction), one for equal-x pairs.
  std::vector<Scratch::Impl::Block>& keys = scratch.impl().keys;
  keys.resize(groups);
  F8 one;
  broadcast(one, kOne);
  for (std::size_t s = 0; s < groups; ++s) {
    uint32_t i8[8] = {};
    offsets(in, s, i8);
    const V pi = point2_offsets(i8);
    const __mmask8 m = lanes(pairs, s);
    F8x2 px, qx;
    gather2(px, w, pi, m, zeros);
    gather2(qx, w + 24, pi, m, zeros);
    F8 d0, d1, nrm;
    sub_mod(d0, qx.c0, px.c0, nullptr, kP);
    sub_mod(d1, qx.c1, px.c1, nullptr, kP);
    mont_mul2(nrm, d0, d0, d1, d1);
    const __mmask8 unit = __mmask8(special[s] | ~m);  // padding lanes too: no zero keys
    for (int k = 0; k < 8; ++k) nrm.l[k] = _mm512_mask_blend_epi64(unit, nrm.l[k], one.l[k]);
    store(keys[s], nrm);
  }
  std::vector<Scratch::Impl::Block>& inv = scratch.impl().inv;
  invert_groups(KeysFromBlocks{keys.data()}, groups, inv);
  for (std::size_t s = 0; s < groups; ++s) {
    const __mmask8 m = lanes(pairs, s);
    uint32_t i8[8] = {}, o8[8] = {};
    offsets(in, s, i8);
    offsets(out, s, o8);
    const V pi = point2_offsets(i8), po = point2_offsets(o8);
    F8x2 px, py, qx, qy, iv, dy, l, t2, x3, y3;
    gather2(px, w, pi, m, zeros);
    gather2(py, w + 12, pi, m, zeros);
    gather2(qx, w + 24, pi, m, zeros);
    gather2(qy, w + 36, pi, m, zeros);
    F8 in_norm;
    load(in_norm, inv[s]);
    // 1/d = conj(d) / N(d); lambda = (qy - py)/d; x3 = lambda^2 - px - qx; y3 = lambda·(px - x3) - py.
    sub_mod(dy.c0, qx.c0, px.c0, nullptr, kP);
    sub_mod(dy.c1, px.c1, qx.c1, nullptr, kP);  // -(d.c1)
    mont_mul(iv.c0, dy.c0, in_norm);
    mont_mul(iv.c1, dy.c1, in_norm);
    sub_mod(dy.c0, qy.c0, py.c0, nullptr, kP);
    sub_mod(dy.c1, qy.c1, py.c1, nullptr, kP);
    fp2_mul(l, dy, iv);
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
      for (int k = 0; k < 8; ++k) c->l[k] = _mm512_maskz_mov_epi64(keep, c->l[k]);
    scatter(w, po, m, x3.c0);
    scatter(w + 6, po, m, x3.c1);
    scatter(w + 12, po, m, y3.c0);
    scatter(w + 18, po, m, y3.c1);
  }
}

void require_supported(const char* what) {
  if (!kSupported) throw std::logic_error(std::string("msm_simd::") + what + ": this CPU has no AVX-512 IFMA");
}

}  // namespace

bool supported() { return kSupported; }
bool enabled() { return g_enabled; }
void allow(bool on) { g_enabled = on && kSupported; }

void mul_batch(Fp* r, const Fp* a, const Fp* b, std::size_t n) {
  require_supported("mul_batch");
  if (n) mul_batch_ifma(r, a, b, n);
}
void inverse_batch(Fp* r, const Fp* a, std::size_t n, Scratch& scratch) {
  require_supported("inverse_batch");
  if (n) inverse_batch_ifma(r, a, n, scratch);
}
void g1_add_pairs(G1Affine* points, const uint32_t* in, const uint32_t* out, const uint8_t* special,
                  std::size_t pairs, Scratch& scratch) {
  require_supported("g1_add_pairs");
  if (pairs) g1_add_pairs_ifma(points, in, out, special, pairs, scratch);
}
void g2_add_pairs(G2Affine* points, const uint32_t* in, const uint32_t* out, const uint8_t* special,
                  std::size_t pairs, Scratch& scratch) {
  require_supported("g2_add_pairs");
  if (pairs) g2_add_pairs_ifma(points, in, out, special, pairs, scratch);
}

#else  // no x86-64: the scalar code only

bool supported() { return false; }
bool enabled() { return false; }
void allow(bool) {}
void mul_batch(Fp*, const Fp*, const Fp*, std::size_t) { throw std::logic_error("msm_simd: not built"); }
void inverse_batch(Fp*, const Fp*, std::size_t, Scratch&) { throw std::logic_error("msm_simd: not built"); }
void g1_add_pairs(G1Affine*, const uint32_t*, const uint32_t*, const uint8_t*, std::size_t, Scratch&) {
  throw std::logic_error("msm_simd: not built");
}
void g2_add_pairs(G2Affine*, const uint32_t*, const uint32_t*, const uint8_t*, std::size_t, Scratch&) {
  throw std::logic_error("msm_simd: not built");
}

#endif

}  // namespace pp::msm_simd
