// SPDX-License-Identifier: Apache-2.0 OR MIT
// Prime field in Montgomery form, one source for host (64-bit limbs) and device (32-bit PTX).
#pragma once

#include <cstdint>
#include <cstring>

#include "proofpipe/core/hd.hpp"
#include "proofpipe/core/limbs.hpp"
#include "proofpipe/core/pow.hpp"
#include "proofpipe/ff/mont_words.hpp"

#if !PP_DEVICE_CODE && defined(__x86_64__)
#include <cpuid.h>      // __get_cpuid_count: the BMI2/ADX check
#include <immintrin.h>  // _addcarry_u64, _subborrow_u64
#endif

namespace pp {

// A field is described by a parameter struct holding only its modulus:
//   struct P { static constexpr int N = <64-bit limbs>;
//              static constexpr Limbs<N> modulus = limbs::from_hex<N>("..."); };
// Everything else is derived here at compile time.
template <class P>
struct FieldConsts {
  static constexpr int N = P::N;
  static constexpr Limbs<N> modulus = P::modulus;
  static constexpr int bits = limbs::bit_length(modulus);
  static_assert(modulus.v[0] & 1, "Montgomery arithmetic needs an odd modulus");
  static_assert(bits < 64 * N, "the top limb must have a spare bit (lazy carry handling)");
  /* R = 2^(64N) mod p */
  static constexpr Limbs<N> r1 = limbs::pow2_mod(64 * N, modulus);
  /* R^2 = 2^(128N) mod p */
  static constexpr Limbs<N> r2 = limbs::pow2_mod(128 * N, modulus);
  /* -p^{-1} mod 2^64 */
  static constexpr uint64_t inv64 = limbs::neg_inv64(modulus.v[0]);
  static_assert(uint64_t(modulus.v[0] * inv64) == ~uint64_t(0), "inv64 * p == -1 mod 2^64");
  /* p - 2, the inversion exponent (Fermat) */
  static constexpr Limbs<N> p_minus_2 = limbs::sub_small(modulus, 2);
  /* (p - 1) / 2, the Legendre exponent */
  static constexpr Limbs<N> p_minus_1_half = limbs::shr1(limbs::sub_small(modulus, 1));
};

namespace detail {

// Portable CIOS Montgomery multiplication over 64-bit limbs; constexpr so that compile-time
// constants (curve coefficients, tower non-residues) can be built from it.
template <int N>
constexpr void mont_mul_portable(uint64_t* out, const uint64_t* a, const uint64_t* b,
                                 const uint64_t* m, uint64_t inv) {
  using u128 = unsigned __int128;
  uint64_t t[N + 1] = {};
PP_UNROLL
  for (int i = 0; i < N; ++i) {
    // t += a * b[i]
    uint64_t carry = 0;
PP_UNROLL
    for (int j = 0; j < N; ++j) {
      const u128 s = (u128)a[j] * b[i] + t[j] + carry;
      t[j] = uint64_t(s);
      carry = uint64_t(s >> 64);
    }
    const uint64_t top = t[N] + carry;  // no overflow: p < 2^(64N-1) keeps t < 2p
    // t = (t + q p) / 2^64
    const uint64_t q = t[0] * inv;
    u128 s = (u128)q * m[0] + t[0];
    carry = uint64_t(s >> 64);
PP_UNROLL
    for (int j = 1; j < N; ++j) {
      s = (u128)q * m[j] + t[j] + carry;
      t[j - 1] = uint64_t(s);
      carry = uint64_t(s >> 64);
    }
    s = (u128)top + carry;
    t[N - 1] = uint64_t(s);
    t[N] = uint64_t(s >> 64);
  }
  // t < 2p: one conditional subtraction.
  uint64_t d[N] = {};
  uint64_t borrow = 0;
PP_UNROLL
  for (int i = 0; i < N; ++i) {
    const u128 x = (u128)t[i] - m[i] - borrow;
    d[i] = uint64_t(x);
    borrow = uint64_t(x >> 64) & 1;
  }
  const bool keep = t[N] == 0 && borrow;
PP_UNROLL
  for (int i = 0; i < N; ++i) out[i] = keep ? t[i] : d[i];
}

#if defined(__CUDACC__)
// See device_inv32 below.
template <uint32_t V>
__constant__ uint32_t kOpaqueInv32 = V;
#endif

#if PP_DEVICE_CODE
// The Montgomery factor -p^-1 mod 2^32 as mont_mul_words should see it. Fr's is 2^32 - 1: given
// that constant, ptxas knows the row factor q = -t[0] and rewrites the reduction's products so
// that their low and high halves no longer pair into IMAD.WIDE, and the Fr product is markedly
// slower (docs/perf-history/gpu-kernels-v1-v9.md). Read from constant memory the value is opaque
// to it; other factors (Fp's) stay immediates, which already pair.
// (kOpaqueInv32 is declared for both compilation passes: the host pass registers it.)
template <uint32_t V>
__device__ PP_INLINE uint32_t device_inv32() {
  if constexpr (V == 0xffffffffu) return kOpaqueInv32<V>;
  else return V;
}

#endif

#if !PP_DEVICE_CODE
// ---------------------------------------------------------------------------------------------
// Host arithmetic
//
// Branch-free: whether a sum needs its modulus subtracted is a coin flip for random elements,
// and a mispredicted branch (~15 cycles) costs as much as the whole addition. Every loop runs
// over a compile-time N and is fully unrolled, so the limbs live in registers. Carries go
// through _addcarry_u64/_subborrow_u64 on x86-64 (one adc/sbb each; gcc and clang do not reliably
// turn the unsigned __int128 idiom into adc chains), through unsigned __int128 elsewhere.

PP_INLINE unsigned char addc64(unsigned char c, uint64_t a, uint64_t b, uint64_t& out) {
#if defined(__x86_64__)
  unsigned long long r;  // uint64_t is unsigned long: the intrinsic wants unsigned long long
  c = _addcarry_u64(c, a, b, &r);
  out = r;
  return c;
#else
  const unsigned __int128 s = (unsigned __int128)a + b + c;
  out = uint64_t(s);
  return (unsigned char)(s >> 64);
#endif
}

PP_INLINE unsigned char subb64(unsigned char c, uint64_t a, uint64_t b, uint64_t& out) {
#if defined(__x86_64__)
  unsigned long long r;
  c = _subborrow_u64(c, a, b, &r);
  out = r;
  return c;
#else
  const unsigned __int128 d = (unsigned __int128)a - b - c;
  out = uint64_t(d);
  return (unsigned char)(d >> 64) & 1;
#endif
}

// mask ? x : y for mask = 0 or ~0. On x86-64 a test and cmov in asm: compilers are free to turn
// a C++ select (ternary or and/or masks) into a branch, and gcc 12 does so for six limbs, or
// into SSE code. Elsewhere the masks, which at least cannot mispredict if compiled as written.
PP_INLINE uint64_t select64(uint64_t mask, uint64_t x, uint64_t y) {
#if defined(__x86_64__)
  asm("testq %[m], %[m]\n\tcmovnzq %[x], %[y]" : [y] "+r"(y) : [x] "r"(x), [m] "r"(mask) : "cc");
  return y;
#else
  return (x & mask) | (y & ~mask);
#endif
}

// ~0 if the borrow is set, else 0: one more step of the borrow chain (a single sbb r, r).
PP_INLINE uint64_t borrow_mask(unsigned char borrow) {
  uint64_t mask;
  subb64(borrow, 0, 0, mask);
  return mask;
}

// r = s - m if s >= m, else s; for s < 2m, so s - m needs no extra limb.
template <int N>
PP_INLINE void cond_sub_host(uint64_t* r, const uint64_t* s, const uint64_t* m) {
  uint64_t d[N];
  unsigned char borrow = 0;
PP_UNROLL
  for (int i = 0; i < N; ++i) borrow = subb64(borrow, s[i], m[i], d[i]);
  const uint64_t keep = borrow_mask(borrow);  // s < m
PP_UNROLL
  for (int i = 0; i < N; ++i) r[i] = select64(keep, s[i], d[i]);
}

// r = a + b mod m for a, b < m < 2^(64N-1): the sum fits N limbs (the spare bit, asserted by
// FieldConsts), so the carry out of the top limb is always zero and only s - m's borrow decides.
template <int N>
PP_INLINE void mod_add_host(uint64_t* r, const uint64_t* a, const uint64_t* b, const uint64_t* m) {
  uint64_t s[N];
  unsigned char carry = 0;
PP_UNROLL
  for (int i = 0; i < N; ++i) carry = addc64(carry, a[i], b[i], s[i]);
  cond_sub_host<N>(r, s, m);
}

// r = a - b mod m: d = a - b and e = d + m side by side, then e where the subtraction borrowed.
// Adding m & mask instead saves the select but puts the mask's "and"s into the add chain,
// where they clobber the carry flag (gcc then saves and restores it with setc at every limb),
// and the second chain could only start once the first one ended.
template <int N>
PP_INLINE void mod_sub_host(uint64_t* r, const uint64_t* a, const uint64_t* b, const uint64_t* m) {
  uint64_t d[N], e[N];
  unsigned char borrow = 0;
PP_UNROLL
  for (int i = 0; i < N; ++i) borrow = subb64(borrow, a[i], b[i], d[i]);
  const uint64_t wrap = borrow_mask(borrow);
  unsigned char carry = 0;
PP_UNROLL
  for (int i = 0; i < N; ++i) carry = addc64(carry, d[i], m[i], e[i]);  // final carry unused
PP_UNROLL
  for (int i = 0; i < N; ++i) r[i] = select64(wrap, e[i], d[i]);
}

// Portable CIOS Montgomery multiplication with the "no-carry" shortcut (gnark-crypto's): when
// the modulus' top limb is below 2^63 - 1, the running sum t never needs an (N+1)-th limb, so
// the multiply and reduce passes of each row merge into one loop with two carries (A for a·b_i,
// C for q·m) and t stays in N registers. mont_mul_generic checks the condition at compile time.
// Same result as mont_mul_portable (the fully reduced Montgomery product is unique).
template <int N>
PP_INLINE void mont_mul_nocarry(uint64_t* out, const uint64_t* a, const uint64_t* b,
                                const uint64_t* m, uint64_t inv) {
  using u128 = unsigned __int128;
  uint64_t t[N] = {};
PP_UNROLL
  for (int i = 0; i < N; ++i) {
    u128 s = (u128)a[0] * b[i] + t[0];
    uint64_t A = uint64_t(s >> 64);
    const uint64_t q = uint64_t(s) * inv;
    u128 c = (u128)q * m[0] + uint64_t(s);  // low word is 0 by the choice of q
    uint64_t C = uint64_t(c >> 64);
PP_UNROLL
    for (int j = 1; j < N; ++j) {
      s = (u128)a[j] * b[i] + t[j] + A;
      A = uint64_t(s >> 64);
      c = (u128)q * m[j] + uint64_t(s) + C;
      C = uint64_t(c >> 64);
      t[j - 1] = uint64_t(c);
    }
    t[N - 1] = C + A;  // cannot overflow: the no-carry condition
  }
  cond_sub_host<N>(out, t, m);  // t < 2m
}

#if defined(__x86_64__)
// ----- x86-64 BMI2 + ADX kernels -----
//
// mulx multiplies by rdx without touching the flags, and adcx/adox are add-with-carry on two
// independent flags (CF and OF), so the low and high halves of a row of products accumulate
// in two interleaved carry chains with no flag saves: faster than the portable code below for
// both Fp and Fr (docs/perf-history/cpu-issue18.md).

// cpuid leaf 7, subleaf 0: EBX bit 8 = BMI2 (mulx), bit 19 = ADX (adcx/adox). <cpuid.h> works
// with gcc and clang (clang 14 rejects __builtin_cpu_supports("adx")).
inline bool cpu_has_bmi2_adx() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  return ((ebx >> 8) & 1) && ((ebx >> 19) & 1);
}
#if defined(__ADX__) && defined(__BMI2__)
// The target guarantees the instructions (-madx -mbmi2, or an -march that has them, e.g.
// CMAKE_CXX_FLAGS=-march=x86-64-v3 -madx): no cpuid. This also keeps the kernels under
// valgrind, whose emulated CPU reports no ADX (the instruction counts in
// docs/perf-history/cpu-issue18.md).
inline constexpr bool kCpuHasMulx = true;
#else
// Checked once, at static initialisation. Code that runs before (other static initialisers)
// sees false and takes the portable path, which gives the same results.
inline const bool kCpuHasMulx = cpu_has_bmi2_adx();
#endif
// The path in use: kCpuHasMulx unless a test or benchmark forced the portable code
// (field_allow_asm below). A plain bool, so the check is one load the compiler may share
// between neighbouring multiplications. (Its own cpuid call, not a copy of kCpuHasMulx: no
// reliance on the order in which the two are initialised.)
#if defined(__ADX__) && defined(__BMI2__)
inline bool g_host_mulx = true;
#else
inline bool g_host_mulx = cpu_has_bmi2_adx();
#endif

// The modulus limbs, -m^-1 mod 2^64 and a zero word, in one table the kernels address through
// a single pointer register (the zero closes an adox chain: adox has no immediate form).
template <class P>
struct MulxTable {
  static constexpr int N = P::N;
  uint64_t v[N + 2];
  static constexpr MulxTable make() {
    MulxTable t{};
    for (int i = 0; i < N; ++i) t.v[i] = FieldConsts<P>::modulus.v[i];
    t.v[N] = FieldConsts<P>::inv64;
    t.v[N + 1] = 0;
    return t;
  }
};
template <class P>
alignas(64) inline constexpr MulxTable<P> kMulxTable = MulxTable<P>::make();

// CIOS with N+1 accumulator registers that rotate: a row adds a·b_i (lo halves on OF, hi
// halves on CF), the reduction adds q·m with q = t0·(-m^-1), which zeroes t0; that register
// becomes the next row's top word. Bounds: entering a row t < 2m; t + a·b_i + q·m < 2m +
// 2·m·2^64 < 2^(64(N+1)) since m < 2^(64N-1), so no carry leaves the top word and the row ends
// with t < 2m again. One conditional subtraction (cmov) finishes.

// lo(x·rdx) into t_lo on the OF chain, hi(x·rdx) into t_hi on the CF chain.
#define PP_MULX_MAC(x, tl, th) \
  "mulxq " x ", %[lo], %[hi]\n\tadoxq %[lo], %[" tl "]\n\tadcxq %[hi], %[" th "]\n\t"
// The first row needs no accumulation: t = a·b_0 with one plain add/adc chain (mulx leaves
// the flags alone, so the chain runs through the interleaved multiplications).
#define PP_MULX_ROW0_HEAD "movq 0(%[b]), %%rdx\n\tmulxq 0(%[a]), %[r0], %[r1]\n\t"
#define PP_MULX_ROW0_STEP(off, tl, th) \
  "mulxq " off "(%[a]), %[lo], %[" th "]\n\tadcq %[lo], %[" tl "]\n\t"

// 4 limbs (Fr). Table: m at 0..24, inv at 32, zero at 40.
#define PP_MULX4_ROW(bi, t0, t1, t2, t3, t4)                                                 \
  "movq " bi "(%[b]), %%rdx\n\txorl %k[" t4 "], %k[" t4 "]\n\t" PP_MULX_MAC("0(%[a])", t0, t1) \
      PP_MULX_MAC("8(%[a])", t1, t2) PP_MULX_MAC("16(%[a])", t2, t3)                          \
          PP_MULX_MAC("24(%[a])", t3, t4) "adoxq 40(%[k]), %[" t4 "]\n\t"
#define PP_MULX4_RED(t0, t1, t2, t3, t4)                                                      \
  "movq %[" t0 "], %%rdx\n\timulq 32(%[k]), %%rdx\n\txorl %k[lo], %k[lo]\n\t" PP_MULX_MAC(     \
      "0(%[k])", t0, t1) PP_MULX_MAC("8(%[k])", t1, t2) PP_MULX_MAC("16(%[k])", t2, t3)         \
      PP_MULX_MAC("24(%[k])", t3, t4) "adoxq 40(%[k]), %[" t4 "]\n\t"

// 6 limbs (Fp). Table: m at 0..40, inv at 48, zero at 56.
#define PP_MULX6_ROW(bi, t0, t1, t2, t3, t4, t5, t6)                                         \
  "movq " bi "(%[b]), %%rdx\n\txorl %k[" t6 "], %k[" t6 "]\n\t" PP_MULX_MAC("0(%[a])", t0, t1) \
      PP_MULX_MAC("8(%[a])", t1, t2) PP_MULX_MAC("16(%[a])", t2, t3)                          \
          PP_MULX_MAC("24(%[a])", t3, t4) PP_MULX_MAC("32(%[a])", t4, t5)                     \
              PP_MULX_MAC("40(%[a])", t5, t6) "adoxq 56(%[k]), %[" t6 "]\n\t"
#define PP_MULX6_RED(t0, t1, t2, t3, t4, t5, t6)                                              \
  "movq %[" t0 "], %%rdx\n\timulq 48(%[k]), %%rdx\n\txorl %k[lo], %k[lo]\n\t" PP_MULX_MAC(     \
      "0(%[k])", t0, t1) PP_MULX_MAC("8(%[k])", t1, t2) PP_MULX_MAC("16(%[k])", t2, t3)         \
      PP_MULX_MAC("24(%[k])", t3, t4) PP_MULX_MAC("32(%[k])", t4, t5)                           \
          PP_MULX_MAC("40(%[k])", t5, t6) "adoxq 56(%[k]), %[" t6 "]\n\t"

// The 6-limb kernels' last step: the result t = (r6, r0, r1, r2, r3, r4) is below 2m; r5 (zero
// by then), lo, hi, rdx and the two named scratch operands x4, x5 receive t - m, which replaces t
// unless the subtraction borrowed (cmovae: CF clear). Branch-free.
#define PP_MULX6_CSUB(x4, x5)                                                                 \
  "movq %[r6], %[lo]\n\tsubq 0(%[k]), %[lo]\n\t"                                            \
  "movq %[r0], %[hi]\n\tsbbq 8(%[k]), %[hi]\n\t"                                            \
  "movq %[r1], %%rdx\n\tsbbq 16(%[k]), %%rdx\n\t"                                           \
  "movq %[r2], %[r5]\n\tsbbq 24(%[k]), %[r5]\n\t"                                           \
  "movq %[r3], %[" x4 "]\n\tsbbq 32(%[k]), %[" x4 "]\n\t"                                    \
  "movq %[r4], %[" x5 "]\n\tsbbq 40(%[k]), %[" x5 "]\n\t"                                    \
  "cmovaeq %[lo], %[r6]\n\tcmovaeq %[hi], %[r0]\n\tcmovaeq %%rdx, %[r1]\n\t"                 \
  "cmovaeq %[r5], %[r2]\n\tcmovaeq %[" x4 "], %[r3]\n\tcmovaeq %[" x5 "], %[r4]"

// Stores a 6-limb kernel's result, whose limbs end in the registers (r6, r0, r1, r2, r3, r4).
PP_INLINE void store_mulx6_result(uint64_t* out, uint64_t w0, uint64_t w1, uint64_t w2,
                                  uint64_t w3, uint64_t w4, uint64_t w5) {
  out[0] = w0;
  out[1] = w1;
  out[2] = w2;
  out[3] = w3;
  out[4] = w4;
  out[5] = w5;
}

// The asm reads the limbs behind a and b, which the compiler must have stored first. Optimised
// builds say so with one memory operand per array; unoptimised ones give each its own address
// register, which the 6-limb kernel (13 registers) cannot spare next to a frame pointer, so
// there a "memory" clobber says it more bluntly.
#if defined(__OPTIMIZE__)
#define PP_MULX_READS(n, a, b) , "m"(*(const uint64_t(*)[n])a), "m"(*(const uint64_t(*)[n])b)
#define PP_MULX_MEMORY
#else
#define PP_MULX_READS(n, a, b)
#define PP_MULX_MEMORY , "memory"
#endif

PP_INLINE void mont_mul_mulx4(uint64_t* out, const uint64_t* a, const uint64_t* b,
                              const uint64_t* k) {
  uint64_t r0, r1, r2, r3, r4, lo, hi;
  asm(PP_MULX_ROW0_HEAD
      "mulxq 8(%[a]), %[lo], %[r2]\n\taddq %[lo], %[r1]\n\t"
      PP_MULX_ROW0_STEP("16", "r2", "r3") PP_MULX_ROW0_STEP("24", "r3", "r4")
      "adcq $0, %[r4]\n\t"
      PP_MULX4_RED("r0", "r1", "r2", "r3", "r4")
      PP_MULX4_ROW("8", "r1", "r2", "r3", "r4", "r0") PP_MULX4_RED("r1", "r2", "r3", "r4", "r0")
      PP_MULX4_ROW("16", "r2", "r3", "r4", "r0", "r1") PP_MULX4_RED("r2", "r3", "r4", "r0", "r1")
      PP_MULX4_ROW("24", "r3", "r4", "r0", "r1", "r2") PP_MULX4_RED("r3", "r4", "r0", "r1", "r2")
      // t = (r4, r0, r1, r2) < 2m; r3 (now zero), lo, hi, rdx hold t - m; keep t on borrow.
      "movq %[r4], %[lo]\n\tsubq 0(%[k]), %[lo]\n\t"
      "movq %[r0], %[hi]\n\tsbbq 8(%[k]), %[hi]\n\t"
      "movq %[r1], %%rdx\n\tsbbq 16(%[k]), %%rdx\n\t"
      "movq %[r2], %[r3]\n\tsbbq 24(%[k]), %[r3]\n\t"
      "cmovaeq %[lo], %[r4]\n\tcmovaeq %[hi], %[r0]\n\t"
      "cmovaeq %%rdx, %[r1]\n\tcmovaeq %[r3], %[r2]"
      : [r0] "=&r"(r0), [r1] "=&r"(r1), [r2] "=&r"(r2), [r3] "=&r"(r3), [r4] "=&r"(r4),
        [lo] "=&r"(lo), [hi] "=&r"(hi)
      : [a] "r"(a), [b] "r"(b), [k] "r"(k) PP_MULX_READS(4, a, b)
      : "rdx", "cc" PP_MULX_MEMORY);
  out[0] = r4;
  out[1] = r0;
  out[2] = r1;
  out[3] = r2;
}

// Thirteen registers: r0-r6, lo, hi, rdx, a, b, k. The final subtraction needs six scratch
// registers, so a and b are in-out copies reused once the products are done.
// Out of line, unlike the 4-limb kernel: at ~280 instructions, and with dozens of Fp products
// in every curve and pairing function, inlining each one costs instruction cache for no gain
// (G1 additions and the pairing are no faster inlined, some are slower).
__attribute__((noinline)) inline void mont_mul_mulx6(uint64_t* out, const uint64_t* a,
                                                     const uint64_t* b, const uint64_t* k) {
  uint64_t r0, r1, r2, r3, r4, r5, r6, lo, hi;
  const uint64_t* pa = a;
  const uint64_t* pb = b;
  asm(PP_MULX_ROW0_HEAD
      "mulxq 8(%[a]), %[lo], %[r2]\n\taddq %[lo], %[r1]\n\t"
      PP_MULX_ROW0_STEP("16", "r2", "r3") PP_MULX_ROW0_STEP("24", "r3", "r4")
      PP_MULX_ROW0_STEP("32", "r4", "r5") PP_MULX_ROW0_STEP("40", "r5", "r6")
      "adcq $0, %[r6]\n\t"
      PP_MULX6_RED("r0", "r1", "r2", "r3", "r4", "r5", "r6")
      PP_MULX6_ROW("8", "r1", "r2", "r3", "r4", "r5", "r6", "r0")
      PP_MULX6_RED("r1", "r2", "r3", "r4", "r5", "r6", "r0")
      PP_MULX6_ROW("16", "r2", "r3", "r4", "r5", "r6", "r0", "r1")
      PP_MULX6_RED("r2", "r3", "r4", "r5", "r6", "r0", "r1")
      PP_MULX6_ROW("24", "r3", "r4", "r5", "r6", "r0", "r1", "r2")
      PP_MULX6_RED("r3", "r4", "r5", "r6", "r0", "r1", "r2")
      PP_MULX6_ROW("32", "r4", "r5", "r6", "r0", "r1", "r2", "r3")
      PP_MULX6_RED("r4", "r5", "r6", "r0", "r1", "r2", "r3")
      PP_MULX6_ROW("40", "r5", "r6", "r0", "r1", "r2", "r3", "r4")
      PP_MULX6_RED("r5", "r6", "r0", "r1", "r2", "r3", "r4")
      // t = (r6, r0, r1, r2, r3, r4) < 2m; a and b are free now.
      PP_MULX6_CSUB("a", "b")
      : [r0] "=&r"(r0), [r1] "=&r"(r1), [r2] "=&r"(r2), [r3] "=&r"(r3), [r4] "=&r"(r4),
        [r5] "=&r"(r5), [r6] "=&r"(r6), [lo] "=&r"(lo), [hi] "=&r"(hi), [a] "+r"(pa),
        [b] "+r"(pb)
      : [k] "r"(k) PP_MULX_READS(6, a, b)
      : "rdx", "cc" PP_MULX_MEMORY);
  store_mulx6_result(out, r6, r0, r1, r2, r3, r4);
}

// ----- Lazy reduction: a 12-limb product and a separate Montgomery reduction (Fp only) -----
//
// A sum or difference of products needs one reduction, not one per product: the Fp2 product
// (ff/bls12_381.hpp) takes three of these products and two reductions instead of three full
// Montgomery products.

// One row of the unreduced product: (t0..t6) += a·b_i with t6 the fresh top word, then t0 is
// final and goes to out[i] (out's offset equals b_i's). adox has no immediate form, and mov
// leaves the flags alone: lo becomes the zero that closes the OF chain.
#define PP_MULXW_ROW(bi, t0, t1, t2, t3, t4, t5, t6)                                        \
  "movq " bi "(%[b]), %%rdx\n\txorl %k[" t6 "], %k[" t6 "]\n\t" PP_MULX_MAC("0(%[a])", t0, t1) \
      PP_MULX_MAC("8(%[a])", t1, t2) PP_MULX_MAC("16(%[a])", t2, t3)                          \
          PP_MULX_MAC("24(%[a])", t3, t4) PP_MULX_MAC("32(%[a])", t4, t5)                     \
              PP_MULX_MAC("40(%[a])", t5, t6) "movl $0, %k[lo]\n\tadoxq %[lo], %[" t6 "]\n\t"  \
                                              "movq %[" t0 "], " bi "(%[o])\n\t"
#if defined(__OPTIMIZE__)
#define PP_MULX_WRITES(n, o) , "=m"(*(uint64_t(*)[n])o)
#else
#define PP_MULX_WRITES(n, o)
#endif

// out[0..12) = a·b for 6-limb a, b (any values below 2^384: no modulus involved). After row i
// the accumulators hold sum_{j<=i} a·b_j·2^(64j) >> 64i < a·2^64 < 2^448, so the top word
// never carries out.
PP_INLINE void mul_wide_mulx6(uint64_t* out, const uint64_t* a, const uint64_t* b) {
  uint64_t r0, r1, r2, r3, r4, r5, r6, lo, hi;
  asm(PP_MULX_ROW0_HEAD
      "mulxq 8(%[a]), %[lo], %[r2]\n\taddq %[lo], %[r1]\n\t"
      PP_MULX_ROW0_STEP("16", "r2", "r3") PP_MULX_ROW0_STEP("24", "r3", "r4")
      PP_MULX_ROW0_STEP("32", "r4", "r5") PP_MULX_ROW0_STEP("40", "r5", "r6")
      "adcq $0, %[r6]\n\tmovq %[r0], 0(%[o])\n\t"
      PP_MULXW_ROW("8", "r1", "r2", "r3", "r4", "r5", "r6", "r0")
      PP_MULXW_ROW("16", "r2", "r3", "r4", "r5", "r6", "r0", "r1")
      PP_MULXW_ROW("24", "r3", "r4", "r5", "r6", "r0", "r1", "r2")
      PP_MULXW_ROW("32", "r4", "r5", "r6", "r0", "r1", "r2", "r3")
      PP_MULXW_ROW("40", "r5", "r6", "r0", "r1", "r2", "r3", "r4")
      "movq %[r6], 48(%[o])\n\tmovq %[r0], 56(%[o])\n\tmovq %[r1], 64(%[o])\n\t"
      "movq %[r2], 72(%[o])\n\tmovq %[r3], 80(%[o])\n\tmovq %[r4], 88(%[o])"
      : [r0] "=&r"(r0), [r1] "=&r"(r1), [r2] "=&r"(r2), [r3] "=&r"(r3), [r4] "=&r"(r4),
        [r5] "=&r"(r5), [r6] "=&r"(r6), [lo] "=&r"(lo), [hi] "=&r"(hi) PP_MULX_WRITES(12, out)
      : [a] "r"(a), [b] "r"(b), [o] "r"(out) PP_MULX_READS(6, a, b)
      : "rdx", "cc" PP_MULX_MEMORY);
}

// out = t·2^-384 mod m for a 12-limb t < m·2^384, fully reduced. The six reduction steps of
// mont_mul_mulx6 run on t's low half alone (the q's only depend on it): the window stays below
// 2^384 + m·2^64 before each shift, and ends as (t_low + Q·m)/2^384 < m + 1; adding t's high
// half (< m) gives (t + Q·m)/2^384 < 2m, one conditional subtraction.
PP_INLINE void redc_mulx6(uint64_t* out, const uint64_t* t, const uint64_t* k) {
  uint64_t r0, r1, r2, r3, r4, r5, r6, lo, hi, s;
  const uint64_t* pt = t;
  asm("movq 0(%[t]), %[r0]\n\tmovq 8(%[t]), %[r1]\n\tmovq 16(%[t]), %[r2]\n\t"
      "movq 24(%[t]), %[r3]\n\tmovq 32(%[t]), %[r4]\n\tmovq 40(%[t]), %[r5]\n\t"
      "xorl %k[r6], %k[r6]\n\t"
      PP_MULX6_RED("r0", "r1", "r2", "r3", "r4", "r5", "r6")
      PP_MULX6_RED("r1", "r2", "r3", "r4", "r5", "r6", "r0")
      PP_MULX6_RED("r2", "r3", "r4", "r5", "r6", "r0", "r1")
      PP_MULX6_RED("r3", "r4", "r5", "r6", "r0", "r1", "r2")
      PP_MULX6_RED("r4", "r5", "r6", "r0", "r1", "r2", "r3")
      PP_MULX6_RED("r5", "r6", "r0", "r1", "r2", "r3", "r4")
      // + t_high; the window is (r6, r0, r1, r2, r3, r4), r5 is zero.
      "addq 48(%[t]), %[r6]\n\tadcq 56(%[t]), %[r0]\n\tadcq 64(%[t]), %[r1]\n\t"
      "adcq 72(%[t]), %[r2]\n\tadcq 80(%[t]), %[r3]\n\tadcq 88(%[t]), %[r4]\n\t"
      // < 2m; t is free now, s is scratch.
      PP_MULX6_CSUB("t", "s")
      : [r0] "=&r"(r0), [r1] "=&r"(r1), [r2] "=&r"(r2), [r3] "=&r"(r3), [r4] "=&r"(r4),
        [r5] "=&r"(r5), [r6] "=&r"(r6), [lo] "=&r"(lo), [hi] "=&r"(hi), [s] "=&r"(s), [t] "+r"(pt)
      : [k] "r"(k) PP_MULX_READS(12, t, t)
      : "rdx", "cc" PP_MULX_MEMORY);
  store_mulx6_result(out, r6, r0, r1, r2, r3, r4);
}

// out[0..12) = a^2 for a 6-limb a: the 15 products a_i·a_j (i < j) once, then doubled with the
// 6 squares a_i^2 added (21 mulx instead of mul_wide_mulx6's 36). Pass one writes the cross
// products' words 1..10 to out as they become final (row i is the last to touch words 2i+1 and
// 2i+2); pass two runs one chain over all twelve words: adcx doubles (CF), adox adds the
// squares (OF). The flags survive mulx and mov, which touch none.
PP_INLINE void sqr_wide_mulx6(uint64_t* out, const uint64_t* a) {
  uint64_t w1, w2, w3, w4, w5, w6, lo, hi;
  asm("movq 0(%[a]), %%rdx\n\t"
      "mulxq 8(%[a]), %[w1], %[w2]\n\t"
      "mulxq 16(%[a]), %[lo], %[w3]\n\taddq %[lo], %[w2]\n\t"
      "mulxq 24(%[a]), %[lo], %[w4]\n\tadcq %[lo], %[w3]\n\t"
      "mulxq 32(%[a]), %[lo], %[w5]\n\tadcq %[lo], %[w4]\n\t"
      "mulxq 40(%[a]), %[lo], %[w6]\n\tadcq %[lo], %[w5]\n\t"
      "adcq $0, %[w6]\n\t"
      "movq %[w1], 8(%[o])\n\tmovq %[w2], 16(%[o])\n\t"
      // a1·(a2..a5) into words 3..7 (word 7 in w1's register)
      "movq 8(%[a]), %%rdx\n\txorl %k[w1], %k[w1]\n\t"
      PP_MULX_MAC("16(%[a])", "w3", "w4") PP_MULX_MAC("24(%[a])", "w4", "w5")
      PP_MULX_MAC("32(%[a])", "w5", "w6") PP_MULX_MAC("40(%[a])", "w6", "w1")
      "movl $0, %k[lo]\n\tadoxq %[lo], %[w1]\n\t"
      "movq %[w3], 24(%[o])\n\tmovq %[w4], 32(%[o])\n\t"
      // a2·(a3..a5) into words 5..8 (word 8 in w2's register)
      "movq 16(%[a]), %%rdx\n\txorl %k[w2], %k[w2]\n\t"
      PP_MULX_MAC("24(%[a])", "w5", "w6") PP_MULX_MAC("32(%[a])", "w6", "w1")
      PP_MULX_MAC("40(%[a])", "w1", "w2")
      "movl $0, %k[lo]\n\tadoxq %[lo], %[w2]\n\t"
      "movq %[w5], 40(%[o])\n\tmovq %[w6], 48(%[o])\n\t"
      // a3·(a4, a5) into words 7..9 (word 9 in w3's register)
      "movq 24(%[a]), %%rdx\n\txorl %k[w3], %k[w3]\n\t"
      PP_MULX_MAC("32(%[a])", "w1", "w2") PP_MULX_MAC("40(%[a])", "w2", "w3")
      "movl $0, %k[lo]\n\tadoxq %[lo], %[w3]\n\t"
      "movq %[w1], 56(%[o])\n\tmovq %[w2], 64(%[o])\n\t"
      // a4·a5 into words 9, 10 (word 10 in w4's register)
      "movq 32(%[a]), %%rdx\n\tmulxq 40(%[a]), %[lo], %[w4]\n\t"
      "addq %[lo], %[w3]\n\tadcq $0, %[w4]\n\t"
      "movq %[w3], 72(%[o])\n\tmovq %[w4], 80(%[o])\n\t"
      // Pass two: out = 2·cross + squares, word 0 being a0^2's low half (no cross term).
      "xorl %k[w1], %k[w1]\n\t"
      "movq 0(%[a]), %%rdx\n\tmulxq %%rdx, %[lo], %[hi]\n\tmovq %[lo], 0(%[o])\n\t"
      "movq 8(%[o]), %[w1]\n\tadcxq %[w1], %[w1]\n\tadoxq %[hi], %[w1]\n\tmovq %[w1], 8(%[o])\n\t"
      "movq 8(%[a]), %%rdx\n\tmulxq %%rdx, %[lo], %[hi]\n\t"
      "movq 16(%[o]), %[w1]\n\tadcxq %[w1], %[w1]\n\tadoxq %[lo], %[w1]\n\tmovq %[w1], 16(%[o])\n\t"
      "movq 24(%[o]), %[w1]\n\tadcxq %[w1], %[w1]\n\tadoxq %[hi], %[w1]\n\tmovq %[w1], 24(%[o])\n\t"
      "movq 16(%[a]), %%rdx\n\tmulxq %%rdx, %[lo], %[hi]\n\t"
      "movq 32(%[o]), %[w1]\n\tadcxq %[w1], %[w1]\n\tadoxq %[lo], %[w1]\n\tmovq %[w1], 32(%[o])\n\t"
      "movq 40(%[o]), %[w1]\n\tadcxq %[w1], %[w1]\n\tadoxq %[hi], %[w1]\n\tmovq %[w1], 40(%[o])\n\t"
      "movq 24(%[a]), %%rdx\n\tmulxq %%rdx, %[lo], %[hi]\n\t"
      "movq 48(%[o]), %[w1]\n\tadcxq %[w1], %[w1]\n\tadoxq %[lo], %[w1]\n\tmovq %[w1], 48(%[o])\n\t"
      "movq 56(%[o]), %[w1]\n\tadcxq %[w1], %[w1]\n\tadoxq %[hi], %[w1]\n\tmovq %[w1], 56(%[o])\n\t"
      "movq 32(%[a]), %%rdx\n\tmulxq %%rdx, %[lo], %[hi]\n\t"
      "movq 64(%[o]), %[w1]\n\tadcxq %[w1], %[w1]\n\tadoxq %[lo], %[w1]\n\tmovq %[w1], 64(%[o])\n\t"
      "adcxq %[w3], %[w3]\n\tadoxq %[hi], %[w3]\n\tmovq %[w3], 72(%[o])\n\t"
      "movq 40(%[a]), %%rdx\n\tmulxq %%rdx, %[lo], %[hi]\n\t"
      "adcxq %[w4], %[w4]\n\tadoxq %[lo], %[w4]\n\tmovq %[w4], 80(%[o])\n\t"
      "movl $0, %k[w1]\n\tadcxq %[w1], %[w1]\n\tadoxq %[hi], %[w1]\n\tmovq %[w1], 88(%[o])"
      : [w1] "=&r"(w1), [w2] "=&r"(w2), [w3] "=&r"(w3), [w4] "=&r"(w4), [w5] "=&r"(w5),
        [w6] "=&r"(w6), [lo] "=&r"(lo), [hi] "=&r"(hi) PP_MULX_WRITES(12, out)
      : [a] "r"(a), [o] "r"(out) PP_MULX_READS(6, a, a)
      : "rdx", "cc" PP_MULX_MEMORY);
}
#undef PP_MULXW_ROW
#undef PP_MULX_WRITES
#undef PP_MULX_MAC
#undef PP_MULX_ROW0_HEAD
#undef PP_MULX_ROW0_STEP
#undef PP_MULX4_ROW
#undef PP_MULX4_RED
#undef PP_MULX6_ROW
#undef PP_MULX6_RED
#undef PP_MULX_READS
#undef PP_MULX_MEMORY
#endif  // __x86_64__

// Portable Montgomery product: the no-carry CIOS where the modulus allows it, else the
// general one.
template <class P>
PP_INLINE void mont_mul_generic(uint64_t* r, const uint64_t* a, const uint64_t* b) {
  using C = FieldConsts<P>;
  constexpr int N = P::N;
  if constexpr (C::modulus.v[N - 1] < 0x7fffffffffffffffULL) {
    mont_mul_nocarry<N>(r, a, b, C::modulus.v, C::inv64);
  } else {
    mont_mul_portable<N>(r, a, b, C::modulus.v, C::inv64);
  }
}

#if defined(__x86_64__)
// The same out of line, where it is only the fallback of a kernel: no code size at call sites.
template <class P>
__attribute__((noinline)) void mont_mul_fallback(uint64_t* r, const uint64_t* a,
                                                 const uint64_t* b) {
  mont_mul_generic<P>(r, a, b);
}
#endif

// Montgomery product for the host: the mulx kernel where there is one and the CPU has it.
template <class P>
PP_INLINE void mont_mul_host(uint64_t* r, const uint64_t* a, const uint64_t* b) {
#if defined(__x86_64__)
  if constexpr (P::N == 4 || P::N == 6) {
    // The kernels' carry bounds (and mod_add_host's) need the spare bit: m < 2^(64N-1).
    static_assert(FieldConsts<P>::bits < 64 * P::N, "the mulx kernels need a spare top bit");
    if (__builtin_expect(g_host_mulx, 1)) {
      if constexpr (P::N == 4) mont_mul_mulx4(r, a, b, kMulxTable<P>.v);
      else mont_mul_mulx6(r, a, b, kMulxTable<P>.v);
    } else {
      // Through a temporary: were r's address passed to the call, r would have to live in
      // memory on the fast path too, and the inlined kernel's result (in registers) would be
      // stored there and reloaded by wider copies, which stalls store forwarding.
      uint64_t t[P::N];
      mont_mul_fallback<P>(t, a, b);
      for (int i = 0; i < P::N; ++i) r[i] = t[i];
    }
    return;
  }
#endif
  mont_mul_generic<P>(r, a, b);
}
#endif  // !PP_DEVICE_CODE

}  // namespace detail

#if !PP_DEVICE_CODE
// Host arithmetic path, for tests and benchmarks. field_asm_supported(): this build and CPU have
// the x86-64 BMI2/ADX kernels; field_asm_enabled(): they are in use; field_allow_asm(false)
// forces the portable code for every field (true restores the kernels where supported). The
// switch is a plain global: flip it only while no other thread does field arithmetic.
inline bool field_asm_supported() {
#if defined(__x86_64__)
  return detail::kCpuHasMulx;
#else
  return false;
#endif
}
inline bool field_asm_enabled() {
#if defined(__x86_64__)
  return detail::g_host_mulx;
#else
  return false;
#endif
}
inline void field_allow_asm([[maybe_unused]] bool allow) {
#if defined(__x86_64__)
  detail::g_host_mulx = allow && detail::kCpuHasMulx;
#endif
}
#endif

// An element of Z/pZ in Montgomery form (value·R mod p), fully reduced (< p).
// The layout is N little-endian 64-bit limbs on both host and device; device code views the
// same bytes as 2N little-endian 32-bit words.
template <class P>
struct alignas(8) Field {
  using Params = P;
  using Consts = FieldConsts<P>;
  static constexpr int N = P::N;
  static constexpr int W = 2 * N;  // 32-bit words
  static constexpr int BYTES = 8 * N;
  static constexpr int BITS = Consts::bits;

  uint64_t l[N];

  // ----- construction -----
  PP_HD static constexpr Field zero() { return Field{}; }
  PP_HD static constexpr Field one() {
    constexpr Limbs<N> c = Consts::r1;
    Field r{};
    for (int i = 0; i < N; ++i) r.l[i] = c.v[i];
    return r;
  }
  // From a canonical integer (< p) given as little-endian limbs; constexpr for constants.
  static constexpr Field from_canonical_constexpr(const Limbs<N>& x) {
    Field a{};
    for (int i = 0; i < N; ++i) a.l[i] = x.v[i];
    Field r{};
    detail::mont_mul_portable<N>(r.l, a.l, Consts::r2.v, Consts::modulus.v, Consts::inv64);
    return r;
  }
  static consteval Field from_hex(const char* s) {
    return from_canonical_constexpr(limbs::from_hex<N>(s));
  }
  static constexpr Field from_u64_constexpr(uint64_t x) {
    Limbs<N> v{};
    v.v[0] = x;
    return from_canonical_constexpr(v);
  }
  PP_HD static Field from_u64(uint64_t x) {
    Field a{};
    a.l[0] = x;
    return a.mul_r2();
  }
  // From canonical little-endian limbs; returns false if x >= p (out of range).
  // Whether the limbs hold a value below the modulus. Every Field the arithmetic makes does;
  // limbs taken from outside (a caller's array, a file) may not.
  PP_HD bool is_reduced() const { return less_than_modulus(l); }
  PP_HD static bool from_canonical(Field& out, const uint64_t* x) {
    if (!less_than_modulus(x)) return false;
    Field a;
    for (int i = 0; i < N; ++i) a.l[i] = x[i];
    out = a.mul_r2();
    return true;
  }
  // To canonical little-endian limbs.
  PP_HD void to_canonical(uint64_t* x) const {
    Field one_raw{};
    one_raw.l[0] = 1;
    const Field c = *this * one_raw;
    for (int i = 0; i < N; ++i) x[i] = c.l[i];
  }
  // The canonical integer held in the limbs: not an element in Montgomery form but the operand
  // whose Montgomery product with y·R is the integer of y·x, so a last scaling by it also leaves
  // Montgomery form (gpu::NttOp::canonical_out, the GPU prover's H step).
  PP_HD Field canonical_limbs() const {
    Field r;
    to_canonical(r.l);
    return r;
  }

  // ----- bytes (canonical value) -----
  // Big-endian, BYTES long. False when the value is >= p.
  bool from_bytes_be(const uint8_t* in) {
    uint64_t x[N];
    for (int i = 0; i < N; ++i) {
      uint64_t w = 0;
      for (int k = 0; k < 8; ++k) w = (w << 8) | in[8 * (N - 1 - i) + k];
      x[i] = w;
    }
    return from_canonical(*this, x);
  }
  void to_bytes_be(uint8_t* out) const {
    uint64_t x[N];
    to_canonical(x);
    for (int i = 0; i < N; ++i)
      for (int k = 0; k < 8; ++k) out[8 * (N - 1 - i) + k] = uint8_t(x[i] >> (56 - 8 * k));
  }
  bool from_bytes_le(const uint8_t* in) {
    uint64_t x[N];
    for (int i = 0; i < N; ++i) {
      uint64_t w = 0;
      for (int k = 7; k >= 0; --k) w = (w << 8) | in[8 * i + k];
      x[i] = w;
    }
    return from_canonical(*this, x);
  }
  void to_bytes_le(uint8_t* out) const {
    uint64_t x[N];
    to_canonical(x);
    for (int i = 0; i < N; ++i)
      for (int k = 0; k < 8; ++k) out[8 * i + k] = uint8_t(x[i] >> (8 * k));
  }

  // ----- predicates -----
  PP_HD bool is_zero() const {
    uint64_t acc = 0;
    for (int i = 0; i < N; ++i) acc |= l[i];
    return acc == 0;
  }
  PP_HD bool is_one() const { return *this == one(); }
  PP_HD friend bool operator==(const Field& a, const Field& b) {
    uint64_t acc = 0;
    for (int i = 0; i < N; ++i) acc |= a.l[i] ^ b.l[i];
    return acc == 0;
  }
  PP_HD friend bool operator!=(const Field& a, const Field& b) { return !(a == b); }
  // Canonical value > (p-1)/2: the "lexicographically largest" sign of zcash encodings.
  bool is_lexicographically_largest() const {
    uint64_t x[N];
    to_canonical(x);
    Limbs<N> v{};
    for (int i = 0; i < N; ++i) v.v[i] = x[i];
    return limbs::less(Consts::p_minus_1_half, v);
  }

  // ----- arithmetic -----
  PP_HD friend Field operator+(const Field& a, const Field& b) {
    Field r;
#if PP_DEVICE_CODE
    constexpr Limbs<N> m = Consts::modulus;
    detail::PtxCarry k;
    detail::mod_add_words<W>(k, r.w(), a.w(), b.w(), reinterpret_cast<const uint32_t*>(m.v));
#else
    detail::mod_add_host<N>(r.l, a.l, b.l, Consts::modulus.v);
#endif
    return r;
  }
  PP_HD friend Field operator-(const Field& a, const Field& b) {
    Field r;
#if PP_DEVICE_CODE
    constexpr Limbs<N> m = Consts::modulus;
    detail::PtxCarry k;
    detail::mod_sub_words<W>(k, r.w(), a.w(), b.w(), reinterpret_cast<const uint32_t*>(m.v));
#else
    detail::mod_sub_host<N>(r.l, a.l, b.l, Consts::modulus.v);
#endif
    return r;
  }
  PP_HD Field operator-() const { return zero() - *this; }
  PP_HD friend Field operator*(const Field& a, const Field& b) {
    Field r;
#if PP_DEVICE_CODE
    constexpr Limbs<N> m = Consts::modulus;
    constexpr uint32_t inv32 = uint32_t(Consts::inv64);
    static_assert(BITS < 32 * W, "mont_mul_words drops top-word carries: needs p < 2^(32W-1)");
    detail::PtxCarry k;
    detail::mont_mul_words<W>(k, r.w(), a.w(), b.w(), reinterpret_cast<const uint32_t*>(m.v),
                              detail::device_inv32<inv32>());
#else
    detail::mont_mul_host<P>(r.l, a.l, b.l);
#endif
    return r;
  }
  PP_HD Field& operator+=(const Field& b) { return *this = *this + b; }
  PP_HD Field& operator-=(const Field& b) { return *this = *this - b; }
  // In place on the host: the kernel's result goes straight into this element's limbs. The
  // by-value form (a = a * b) makes a temporary that the compiler copies with 16-byte SSE
  // moves; loading 16 bytes that two 8-byte stores just wrote defeats store forwarding on
  // x86-64 and slows a dependent chain of Fp products (`proofpipe bench field`, form=inplace vs
  // form=value; docs/perf-history/cpu-issue18.md). Aliasing is safe: every path reads a and b
  // before writing.
  PP_HD Field& operator*=(const Field& b) {
#if PP_DEVICE_CODE
    return *this = *this * b;
#else
    detail::mont_mul_host<P>(l, l, b.l);
    return *this;
#endif
  }
  PP_HD Field sqr() const { return *this * *this; }
  // this = this^2 without a temporary (see operator*=).
  PP_HD Field& square_inplace() {
#if PP_DEVICE_CODE
    return *this = sqr();
#else
    detail::mont_mul_host<P>(l, l, l);
    return *this;
#endif
  }
  PP_HD Field dbl() const { return *this + *this; }
  // r = a·b and r = a^2 written straight into r's limbs (no temporary to copy, see
  // operator*=): for hot formulas whose results land in existing variables. r may alias a or b.
  // Forced inline, as the add/sub forms below: a hot loop should not pay a call around the
  // kernel's own call (the compiler keeps the by-value operators out of line).
  PP_HD PP_INLINE friend void mul_into(Field& r, const Field& a, const Field& b) {
#if PP_DEVICE_CODE
    r = a * b;
#else
    detail::mont_mul_host<P>(r.l, a.l, b.l);
#endif
  }
  // The product kernel with a = b: in a dependent chain it beats the dedicated 12-limb square
  // plus reduction (sqr_wide_mulx6 + redc_mulx6), whose shorter multiplication half is off the
  // critical path of the reduction (docs/perf-history/cpu-issue18.md).
  PP_HD PP_INLINE friend void sqr_into(Field& r, const Field& a) { mul_into(r, a, a); }
  PP_HD PP_INLINE friend void add_into(Field& r, const Field& a, const Field& b) {
#if PP_DEVICE_CODE
    r = a + b;
#else
    detail::mod_add_host<N>(r.l, a.l, b.l, Consts::modulus.v);
#endif
  }
  // r = a·b - c·d. On the device one reduction for both products (mont_words.hpp's mul_sub_words);
  // on the host two products and a subtraction. r may alias any input.
  PP_HD PP_INLINE friend void mul_sub_into(Field& r, const Field& a, const Field& b, const Field& c, const Field& d) {
#if PP_DEVICE_CODE
    constexpr Limbs<N> m = Consts::modulus;
    constexpr uint32_t inv32 = uint32_t(Consts::inv64);
    static_assert(BITS < 32 * W, "mul_sub_words needs p < 2^(32W-1)");
    detail::PtxCarry k;
    detail::mul_sub_words<W>(k, r.w(), a.w(), b.w(), c.w(), d.w(), reinterpret_cast<const uint32_t*>(m.v),
                             detail::device_inv32<inv32>());
#else
    Field x, y;
    mul_into(x, a, b);
    mul_into(y, c, d);
    sub_into(r, x, y);
#endif
  }
  PP_HD PP_INLINE friend void sub_into(Field& r, const Field& a, const Field& b) {
#if PP_DEVICE_CODE
    r = a - b;
#else
    detail::mod_sub_host<N>(r.l, a.l, b.l, Consts::modulus.v);
#endif
  }
  // r = -a when neg, else a; without a branch on the host (neg is a coin flip in the MSM).
  PP_HD PP_INLINE friend void neg_into_if(Field& r, const Field& a, bool neg) {
#if PP_DEVICE_CODE
    r = neg ? -a : a;
#else
    Field t;
    detail::mod_sub_host<N>(t.l, zero().l, a.l, Consts::modulus.v);
    const uint64_t mask = uint64_t(0) - uint64_t(neg);
    for (int i = 0; i < N; ++i) r.l[i] = detail::select64(mask, t.l[i], a.l[i]);
#endif
  }

  // x^e for e given as little-endian limbs of any count (left-to-right binary).
  template <int M>
  PP_HD Field pow(const Limbs<M>& e) const {
    return pow_limbs(*this, e);
  }
  PP_HD Field pow_u64(uint64_t e) const {
    Limbs<1> x{{e}};
    return pow(x);
  }
  // Multiplicative inverse by Fermat; inverse of zero is zero.
  PP_HD Field inverse() const {
    constexpr Limbs<N> e = Consts::p_minus_2;
    return pow(e);
  }
  // Legendre symbol: 1 for non-zero squares, -1 for non-squares, 0 for zero.
  PP_HD int legendre() const {
    if (is_zero()) return 0;
    constexpr Limbs<N> e = Consts::p_minus_1_half;
    return pow(e).is_one() ? 1 : -1;
  }
  PP_HD bool is_square() const { return legendre() >= 0; }

  // ----- raw views -----
  PP_HD uint32_t* w() { return reinterpret_cast<uint32_t*>(l); }
  PP_HD const uint32_t* w() const { return reinterpret_cast<const uint32_t*>(l); }

 private:
  PP_HD Field mul_r2() const {
    constexpr Limbs<N> c = Consts::r2;
    Field r2{};
    for (int i = 0; i < N; ++i) r2.l[i] = c.v[i];
    return *this * r2;
  }
  PP_HD static bool less_than_modulus(const uint64_t* x) {
    constexpr Limbs<N> m = Consts::modulus;
    for (int i = N - 1; i >= 0; --i) {
      if (x[i] != m.v[i]) return x[i] < m.v[i];
    }
    return false;
  }
};

}  // namespace pp
