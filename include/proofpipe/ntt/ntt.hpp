// SPDX-License-Identifier: Apache-2.0 OR MIT
// Radix-2 number-theoretic transforms over a scalar field (BLS12-381's or BN254's Fr): domains,
// forward/inverse, coset, both orders.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>

#include "proofpipe/ff/bls12_381.hpp"
#include "proofpipe/ff/bn254.hpp"

namespace pp {

namespace detail {
template <class F>
struct TwiddleTable;
// The 2-adicity of F's multiplicative group: the largest k with 2^k | r - 1.
template <class F>
constexpr int two_adicity() {
  static_assert(F::Params::modulus.v[0] != 1, "r - 1 has a zero low limb");
  return std::countr_zero(F::Params::modulus.v[0] - 1);
}
}  // namespace detail

// The evaluation domain {omega^i} of size 2^lg over the scalar field F, 1 <= lg <= kMaxLg (F's
// 2-adicity: 32 for BLS12-381's Fr, 28 for BN254's). omega = g^((r-1)/2^lg) for a quadratic
// non-residue g of F: bellman/blst/arkworks use g = 7, snarkjs uses g = 5 (its roots come from 5,
// on both curves); the coset shift of the prover is g.
//
// Copies are cheap (a few field elements and one shared pointer) and share the twiddle table,
// so keep one Domain per size alive across the transforms of a proof.
template <class F>
class DomainOf {
 public:
  static constexpr int kMaxLg = detail::two_adicity<F>();
  static constexpr uint64_t kBellmanGenerator = 7;
  static constexpr uint64_t kSnarkjsGenerator = 5;

  // Throws std::invalid_argument when lg is out of range or g is not a quadratic non-residue
  // (then omega would not have order exactly 2^lg).
  explicit DomainOf(int lg, uint64_t generator = kBellmanGenerator);
  // The smallest domain with at least n points (at least 2).
  static DomainOf at_least(std::size_t n, uint64_t generator = kBellmanGenerator);

  int lg() const { return lg_; }
  std::size_t size() const { return std::size_t(1) << lg_; }
  const F& omega() const { return omega_; }
  const F& omega_inv() const { return omega_inv_; }
  const F& size_inv() const { return size_inv_; }
  const F& generator() const { return generator_; }          // coset shift g
  const F& generator_inv() const { return generator_inv_; }
  // Z(x) = x^n - 1 evaluated on the coset g·<omega>: the constant g^n - 1.
  F vanishing_on_coset() const;

  // size()/2 twiddles, entry i = omega^bitrev(i) (bit reversal over lg-1 bits). In this order
  // the first 2^k entries are the table of the 2^(k+1)-point domain, so every butterfly level
  // reads a contiguous prefix, and inverse twiddles are entries of the same table (negated),
  // so one table of n/2 elements serves ntt and intt. Built on first use (thread-safe, in
  // parallel) and shared by all copies of this Domain; freed with the last copy.
  std::span<const F> twiddles() const;

 private:
  int lg_;
  F omega_, omega_inv_, size_inv_, generator_, generator_inv_;
  std::shared_ptr<detail::TwiddleTable<F>> twiddles_;
};

using Domain = DomainOf<Fr>;
namespace bn254 {
using Domain = DomainOf<Fr>;
}

enum class Order { natural, bit_reversed };

// In-place transforms of a.size() == domain.size() values (std::invalid_argument otherwise).
// Forward: coefficients -> evaluations at omega^i. Inverse: evaluations -> coefficients.
// `in`/`out` give the orders of the input and output, so callers can chain transforms
// without a separate bit-reversal pass: natural -> bit_reversed and bit_reversed -> natural
// need none; natural -> natural and bit_reversed -> bit_reversed cost one bit_reverse_permute.
// Multithreaded with oneTBB in the caller's task arena (limit it with tbb::task_arena or
// tbb::global_control). Concurrent calls on distinct arrays with one Domain are safe.
// The field comes from the domain (the array converts: a std::vector<F> may be passed).
template <class F>
using FieldSpan = std::type_identity_t<std::span<F>>;
template <class F>
void ntt(FieldSpan<F> a, const DomainOf<F>& d, Order in = Order::natural, Order out = Order::natural);
template <class F>
void intt(FieldSpan<F> a, const DomainOf<F>& d, Order in = Order::natural, Order out = Order::natural);
// Coset variants: evaluations at g·omega^i (forward multiplies coefficient i by g^i first;
// inverse divides by g^i after).
template <class F>
void coset_ntt(FieldSpan<F> a, const DomainOf<F>& d, Order in = Order::natural, Order out = Order::natural);
template <class F>
void coset_intt(FieldSpan<F> a, const DomainOf<F>& d, Order in = Order::natural, Order out = Order::natural);

// Permutes a into bit-reversed index order (an involution). a.size() must be a power of two
// (1 included); std::invalid_argument otherwise. One overload per scalar field.
void bit_reverse_permute(std::span<Fr> a);
void bit_reverse_permute(std::span<bn254::Fr> a);

namespace detail {
// The transforms use x86-64 BMI2/ADX (mulx/adcx/adox) Montgomery multiplication when the CPU
// has it, else Fr's portable operator*. These let tests and benchmarks compare the two paths;
// ntt_allow_asm(false) must not race with running transforms.
void ntt_allow_asm(bool allow);
bool ntt_uses_asm();
}  // namespace detail

extern template class DomainOf<Fr>;
extern template class DomainOf<bn254::Fr>;
#define PP_NTT_DECLARE(F)                                          \
  extern template void ntt<F>(FieldSpan<F>, const DomainOf<F>&, Order, Order);        \
  extern template void intt<F>(FieldSpan<F>, const DomainOf<F>&, Order, Order);       \
  extern template void coset_ntt<F>(FieldSpan<F>, const DomainOf<F>&, Order, Order);  \
  extern template void coset_intt<F>(FieldSpan<F>, const DomainOf<F>&, Order, Order);
PP_NTT_DECLARE(Fr)
PP_NTT_DECLARE(bn254::Fr)
#undef PP_NTT_DECLARE

}  // namespace pp
