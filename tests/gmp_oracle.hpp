// SPDX-License-Identifier: Apache-2.0 OR MIT
// Big-integer (GMP) reference for field tests: conversions between pp fields and mpz values.
#pragma once

#include <gmp.h>

#include <cstdint>
#include <random>
#include <string>

#include "proofpipe/core/limbs.hpp"

namespace pp::test {

// RAII wrapper around mpz_t (only what the tests need).
class Mpz {
 public:
  Mpz() { mpz_init(v_); }
  explicit Mpz(const char* hex) { mpz_init_set_str(v_, hex, 16); }
  Mpz(const Mpz& o) { mpz_init_set(v_, o.v_); }
  Mpz& operator=(const Mpz& o) {
    mpz_set(v_, o.v_);
    return *this;
  }
  ~Mpz() { mpz_clear(v_); }
  mpz_ptr get() { return v_; }
  mpz_srcptr get() const { return v_; }
  std::string hex() const {
    char* s = mpz_get_str(nullptr, 16, v_);
    std::string r(s);
    void (*freefunc)(void*, size_t);
    mp_get_memory_functions(nullptr, nullptr, &freefunc);
    freefunc(s, r.size() + 1);
    return r;
  }
  friend bool operator==(const Mpz& a, const Mpz& b) { return mpz_cmp(a.v_, b.v_) == 0; }

 private:
  mpz_t v_;
};

template <int N>
Mpz to_mpz(const uint64_t* limbs) {
  Mpz r;
  mpz_import(r.get(), N, -1, sizeof(uint64_t), 0, 0, limbs);
  return r;
}

template <int N>
void from_mpz(uint64_t* limbs, const Mpz& x) {
  for (int i = 0; i < N; ++i) limbs[i] = 0;
  size_t count = 0;
  mpz_export(limbs, &count, -1, sizeof(uint64_t), 0, 0, x.get());
}

template <class F>
Mpz modulus_mpz() {
  constexpr Limbs<F::N> m = F::Consts::modulus;
  return to_mpz<F::N>(m.v);
}

// Canonical value of a field element.
template <class F>
Mpz value(const F& a) {
  uint64_t c[F::N];
  a.to_canonical(c);
  return to_mpz<F::N>(c);
}

// Field element from an mpz value already reduced mod p.
template <class F>
F element(const Mpz& x) {
  uint64_t c[F::N];
  from_mpz<F::N>(c, x);
  F r;
  if (!F::from_canonical(r, c)) throw std::runtime_error("element(): value not reduced");
  return r;
}

// Uniform element below p from a seeded generator (rejection sampling on the top limb's bits).
template <class F>
F random_element(std::mt19937_64& rng) {
  constexpr Limbs<F::N> m = F::Consts::modulus;
  const int top_bits = F::BITS - 64 * (F::N - 1);
  for (;;) {
    uint64_t c[F::N];
    for (int i = 0; i < F::N; ++i) c[i] = rng();
    c[F::N - 1] &= (top_bits == 64) ? ~uint64_t(0) : ((uint64_t(1) << top_bits) - 1);
    F r;
    if (F::from_canonical(r, c)) return r;
    (void)m;
  }
}

}  // namespace pp::test
