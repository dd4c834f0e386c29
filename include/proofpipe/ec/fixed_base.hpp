// SPDX-License-Identifier: Apache-2.0 OR MIT
// Fixed-base scalar multiplication by 8-bit windows: table[w·256 + d] = d·2^(8w)·B in affine, so
// k·B costs at most 32 mixed additions. Key generation multiplies two generators by every
// exponent of the key; the CPU (groth16/setup.cpp) and the GPU (src/gpu/prover.cu) share this body.
#pragma once

#include <cstdint>
#include <vector>

#include "proofpipe/core/hd.hpp"
#include "proofpipe/ec/curve.hpp"
#include "proofpipe/ff/bls12_381.hpp"

namespace pp {

inline constexpr int kFixedBaseWindow = 8;
inline constexpr int kFixedBaseWindows = 256 / kFixedBaseWindow;
inline constexpr int kFixedBaseEntries = kFixedBaseWindows << kFixedBaseWindow;

// k·B in XYZZ (k in Montgomery form); `table` holds kFixedBaseEntries affine points.
template <class C>
PP_HD XYZZ<C> fixed_base_mul(const Affine<C>* table, const typename C::Scalar& k) {
  uint64_t c[4];
  k.to_canonical(c);
  XYZZ<C> acc = XYZZ<C>::infinity();
  for (int w = 0; w < kFixedBaseWindows; ++w) {
    const unsigned d = unsigned(c[w / 8] >> (8 * (w % 8))) & 0xffu;
    if (d) acc = acc.add_mixed(table[(w << kFixedBaseWindow) + int(d)]);
  }
  return acc;
}

// The table of `base` (host code).
template <class C>
std::vector<Affine<C>> fixed_base_table(const Affine<C>& base) {
  std::vector<Jacobian<C>> jac(kFixedBaseEntries);
  Jacobian<C> row_base = Jacobian<C>::from_affine(base);
  for (int w = 0; w < kFixedBaseWindows; ++w) {
    const int row = w << kFixedBaseWindow;
    jac[row] = Jacobian<C>::infinity();
    for (int d = 1; d < 256; ++d) jac[row + d] = jac[row + d - 1] + row_base;
    row_base = jac[row + 255] + row_base;  // 256 · the previous row's base
  }
  std::vector<Affine<C>> table(jac.size());
  std::vector<typename C::Field> scratch(jac.size());
  batch_to_affine(jac.data(), table.data(), jac.size(), scratch.data());
  return table;
}

}  // namespace pp
