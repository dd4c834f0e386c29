// SPDX-License-Identifier: Apache-2.0 OR MIT
// Square-and-multiply exponentiation shared by every field and extension field.
#pragma once

#include "proofpipe/core/hd.hpp"
#include "proofpipe/core/limbs.hpp"

namespace pp {

// x^e, e given as little-endian 64-bit limbs of any count (left-to-right binary). T needs
// one(), sqr() and operator*.
template <class T, int M>
PP_HD T pow_limbs(const T& x, const Limbs<M>& e) {
  T r = T::one();
  bool started = false;
  for (int i = 64 * M - 1; i >= 0; --i) {
    if (started) r = r.sqr();
    if ((e.v[i / 64] >> (i % 64)) & 1) {
      r = started ? r * x : x;
      started = true;
    }
  }
  return r;
}

}  // namespace pp
