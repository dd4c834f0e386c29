// SPDX-License-Identifier: Apache-2.0 OR MIT
// Decimal text of field elements (canonical values), as JSON formats such as snarkjs's use.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "proofpipe/ff/bls12_381.hpp"

namespace pp {

// Decimal digits of the canonical value of x.
template <class F>
std::string to_decimal(const F& x) {
  uint64_t c[F::N];
  x.to_canonical(c);
  std::string digits;
  bool nonzero = true;
  while (nonzero) {
    // Divide the multi-limb value by 10, most significant limb first.
    unsigned __int128 rem = 0;
    nonzero = false;
    for (int i = F::N - 1; i >= 0; --i) {
      const unsigned __int128 cur = (rem << 64) | c[i];
      c[i] = uint64_t(cur / 10);
      rem = cur % 10;
      nonzero |= c[i] != 0;
    }
    digits.push_back(char('0' + int(rem)));
  }
  return std::string(digits.rbegin(), digits.rend());
}

// The element whose canonical value is `text` (digits only, no sign, value below the
// modulus); nullopt on anything else.
template <class F>
std::optional<F> from_decimal(std::string_view text) {
  if (text.empty() || text.size() > 20 * F::N) return std::nullopt;
  uint64_t c[F::N + 1] = {};
  for (char ch : text) {
    if (ch < '0' || ch > '9') return std::nullopt;
    unsigned __int128 carry = uint64_t(ch - '0');
    for (auto& limb : c) {
      const unsigned __int128 cur = (unsigned __int128)limb * 10 + carry;
      limb = uint64_t(cur);
      carry = cur >> 64;
    }
    if (c[F::N] != 0 || carry != 0) return std::nullopt;
  }
  F x;
  if (!F::from_canonical(x, c)) return std::nullopt;
  return x;
}

inline std::optional<Fr> fr_from_decimal(std::string_view text) { return from_decimal<Fr>(text); }

}  // namespace pp
