// SPDX-License-Identifier: Apache-2.0 OR MIT
// Radix-2 number-theoretic transforms over Fr: domains, forward/inverse, coset, both orders.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "proofpipe/ff/bls12_381.hpp"

namespace pp {

namespace detail {
struct TwiddleTable;
}

// The evaluation domain {omega^i} of size 2^lg, 1 <= lg <= 32 (Fr's 2-adicity is 32).
// omega = g^((r-1)/2^lg) for a multiplicative generator g of Fr*: bellman/blst/arkworks use
// g = 7, snarkjs uses g = 5 (its roots come from 5); the coset shift of the prover is g.
//
// Copies are cheap (a few field elements and one shared pointer) and share the twiddle table,
// so keep one Domain per size alive across the transforms of a proof.
class Domain {
 public:
  static constexpr int kMaxLg = 32;
  static constexpr uint64_t kBellmanGenerator = 7;
  static constexpr uint64_t kSnarkjsGenerator = 5;

  // Throws std::invalid_argument when lg is out of range or g is not a quadratic non-residue
  // (then omega would not have order exactly 2^lg).
  explicit Domain(int lg, uint64_t generator = kBellmanGenerator);
  // The smallest domain with at least n points (at least 2).
  static Domain at_least(std::size_t n, uint64_t generator = kBellmanGenerator);

  int lg() const { return lg_; }
  std::size_t size() const { return std::size_t(1) << lg_; }
  const Fr& omega() const { return omega_; }
  const Fr& omega_inv() const { return omega_inv_; }
  const Fr& size_inv() const { return size_inv_; }
  const Fr& generator() const { return generator_; }          // coset shift g
  const Fr& generator_inv() const { return generator_inv_; }
  // Z(x) = x^n - 1 evaluated on the coset g·<omega>: the constant g^n - 1.
  Fr vanishing_on_coset() const;

  // size()/2 twiddles, entry i = omega^bitrev(i) (bit reversal over lg-1 bits). In this order
  // the first 2^k entries are the table of the 2^(k+1)-point domain, so every butterfly level
  // reads a contiguous prefix, and inverse twiddles are entries of the same table (negated),
  // so one table of n/2 elements serves ntt and intt. Built on first use (thread-safe, in
  // parallel) and shared by all copies of this Domain; freed with the last copy.
  std::span<const Fr> twiddles() const;

 private:
  int lg_;
  Fr omega_, omega_inv_, size_inv_, generator_, generator_inv_;
  std::shared_ptr<detail::TwiddleTable> twiddles_;
};

enum class Order { natural, bit_reversed };

// In-place transforms of a.size() == domain.size() values (std::invalid_argument otherwise).
// Forward: coefficients -> evaluations at omega^i. Inverse: evaluations -> coefficients.
// `in`/`out` give the orders of the input and output, so callers can chain transforms
// without a separate bit-reversal pass: natural -> bit_reversed and bit_reversed -> natural
// need none; natural -> natural and bit_reversed -> bit_reversed cost one bit_reverse_permute.
// Multithreaded with oneTBB in the caller's task arena (limit it with tbb::task_arena or
// tbb::global_control). Concurrent calls on distinct arrays with one Domain are safe.
void ntt(std::span<Fr> a, const Domain& d, Order in = Order::natural, Order out = Order::natural);
void intt(std::span<Fr> a, const Domain& d, Order in = Order::natural, Order out = Order::natural);
// Coset variants: evaluations at g·omega^i (forward multiplies coefficient i by g^i first;
// inverse divides by g^i after).
void coset_ntt(std::span<Fr> a, const Domain& d, Order in = Order::natural, Order out = Order::natural);
void coset_intt(std::span<Fr> a, const Domain& d, Order in = Order::natural, Order out = Order::natural);

// Permutes a into bit-reversed index order (an involution). a.size() must be a power of two
// (1 included); std::invalid_argument otherwise.
void bit_reverse_permute(std::span<Fr> a);

namespace detail {
// The transforms use x86-64 BMI2/ADX (mulx/adcx/adox) Montgomery multiplication when the CPU
// has it, else Fr's portable operator*. These let tests and benchmarks compare the two paths;
// ntt_allow_asm(false) must not race with running transforms.
void ntt_allow_asm(bool allow);
bool ntt_uses_asm();
}  // namespace detail

}  // namespace pp
