// SPDX-License-Identifier: Apache-2.0 OR MIT
// AVX-512 IFMA arithmetic for the CPU MSM's affine batches: Fp products eight at a time (one
// per 64-bit lane, 52-bit limbs), chosen at run time, with the scalar code as the fallback.
// Every kernel exists for BLS12-381 (pp::Fp, pp::G1Affine, ...) and BN254 (pp::bn254::...).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "proofpipe/ec/bls12_381.hpp"
#include "proofpipe/ec/bn254.hpp"

namespace pp::msm_simd {

// supported(): this build has the kernels (x86-64) and the CPU and OS run AVX-512F + IFMA
// (cpuid leaf 7 and the XCR0 state bits). enabled(): the MSM uses them; true at start where
// supported unless the environment sets PROOFPIPE_MSM_SIMD=0. allow(false) forces the scalar
// code (tests and A/B benchmarks run both paths); allow(true) restores the kernels where
// supported. A plain global: flip it only while no MSM runs.
bool supported();
bool enabled();
void allow(bool on);

// Scratch of the batch kernels, kept by the caller across calls (no allocation per batch). Held
// by value (no allocation of its own until a kernel first needs room).
class Scratch {
 public:
  struct Impl {
    // Eight elements in 52-bit limbs: limb k of lane j at w[8k + j].
    struct alignas(64) Block {
      uint64_t w[64];
    };
    std::vector<Block> inv;   // one block per group of eight batch elements
    std::vector<Block> keys;  // the pair kernels' keys (x differences, for G2 their norms)
  };
  Impl& impl() { return impl_; }

 private:
  Impl impl_;
};

// The kernels below need supported(); they are exposed for the tests and the MSM.

// r[i] = a[i]·b[i] (Montgomery products, canonical results) for i < n. Any aliasing.
void mul_batch(Fp* r, const Fp* a, const Fp* b, std::size_t n);

// r[i] = 1/a[i] for i < n; every a[i] non-zero. Montgomery's trick on eight interleaved chains
// (element i on lane i % 8) and one scalar inversion. r may alias a.
void inverse_batch(Fp* r, const Fp* a, std::size_t n, Scratch& scratch);

// One level of the G1 affine batch: for pair t < pairs, with P = points[in[t]], Q = points[in[t] + 1]
// (a G1 affine point is 12 words: x then y, each 6 limbs), writes points[out[t]] = P + Q. For a
// pair whose bit is set in special[t / 8] (bit t % 8: equal x, which the caller handles) it
// writes infinity instead; every other pair must have P.x != Q.x. The pairs go eight at a time,
// each group's inputs read before its outputs are written, so out[t] must not be an input of a
// later pair (the MSM's levels write entry j/2 of a bucket from its entries j and j + 1).
void g1_add_pairs(G1Affine* points, const uint32_t* in, const uint32_t* out, const uint8_t* special,
                  std::size_t pairs, Scratch& scratch);

// The same for G2 (24 words a point: x.c0, x.c1, y.c0, y.c1); its keys are the norms of
// Q.x - P.x, inverted in Fp (1/d = conj(d)/N(d)).
void g2_add_pairs(G2Affine* points, const uint32_t* in, const uint32_t* out, const uint8_t* special,
                  std::size_t pairs, Scratch& scratch);

// The same four for BN254 (a G1 affine point is 8 words, a G2 one 16).
void mul_batch(bn254::Fp* r, const bn254::Fp* a, const bn254::Fp* b, std::size_t n);
void inverse_batch(bn254::Fp* r, const bn254::Fp* a, std::size_t n, Scratch& scratch);
void g1_add_pairs(bn254::G1Affine* points, const uint32_t* in, const uint32_t* out, const uint8_t* special,
                  std::size_t pairs, Scratch& scratch);
void g2_add_pairs(bn254::G2Affine* points, const uint32_t* in, const uint32_t* out, const uint8_t* special,
                  std::size_t pairs, Scratch& scratch);

}  // namespace pp::msm_simd
