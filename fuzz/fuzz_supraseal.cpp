// SPDX-License-Identifier: Apache-2.0 OR MIT
// libFuzzer target for the SupraSeal C2 drop-in (src/supraseal): generate_groth16_proofs_c with
// an Assignment built from the fuzz input — sizes, densities, popcounts, abc_size, NULL pointers,
// scalars — against a tiny key made in memory. Every array is allocated with exactly the length
// its size field claims (a one-element stand-in when the claim is huge), so AddressSanitizer
// reports any read the claim does not cover, and a huge claim must be rejected before it is used.
//
// Invariants (a violation aborts): no crash; success iff an independent oracle calls the call
// valid (when the scalars make a satisfied witness); a failure has a code and a message; a
// success writes points that are on their curves.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "../src/supraseal/supraseal_c2.h"
#include "proofpipe/ec/bls12_381.hpp"
#include "proofpipe/io/params.hpp"
#include "proofpipe/proofpipe.h"

namespace {

using namespace pp;

// The key: 2 public inputs, 6 aux variables, domain 8; A-aux density 0b101101, B-input 0b11,
// B-aux 0b000111, so A has 2 + 4 points and B 2 + 3.
constexpr std::size_t kInputs = 2, kAux = 6, kDomain = 8;
constexpr uint64_t kAAux = 0b101101, kBInp = 0b11, kBAux = 0b000111;
constexpr std::size_t kCap = 4096;  // largest claimed length that is really allocated

ProvingKey tiny_key() {
  std::mt19937_64 rng(1);
  auto scalar = [&] {
    for (;;) {
      uint64_t v[4];
      for (auto& w : v) w = rng();
      v[3] &= 0x7fffffffffffffffULL;
      Fr k;
      if (Fr::from_canonical(k, v) && !k.is_zero()) return k;
    }
  };
  auto g1 = [&] { return scalar_mul(g1_generator(), scalar()).to_affine(); };
  auto g2 = [&] { return scalar_mul(g2_generator(), scalar()).to_affine(); };
  ProvingKey pk;
  pk.vk = {g1(), g1(), g2(), g2(), g1(), g2(), {}};
  for (std::size_t i = 0; i < kInputs; ++i) pk.vk.ic.push_back(g1());
  for (std::size_t i = 0; i + 1 < kDomain; ++i) pk.h.push_back(g1());  // bellman's H: n - 1 points
  for (std::size_t i = 0; i < kAux; ++i) pk.l.push_back(g1());
  for (int i = 0; i < 6; ++i) pk.a.push_back(g1());
  for (int i = 0; i < 5; ++i) pk.b_g1.push_back(g1());
  for (int i = 0; i < 5; ++i) pk.b_g2.push_back(g2());
  return pk;
}

SRS& key() {
  static SRS srs = [] {
    const std::vector<uint8_t> bytes = encode_params(tiny_key());
    pp_key* k = nullptr;
    if (pp_key_load_memory(bytes.data(), bytes.size(), 1, &k, nullptr) != PP_OK) std::abort();
    return SRS{k};
  }();
  return srs;
}

// The fuzz input as a stream; past its end every read is 0.
struct Reader {
  const uint8_t* p;
  std::size_t n;
  uint8_t byte() {
    if (n == 0) return 0;
    --n;
    return *p++;
  }
  uint64_t u64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t(byte()) << (8 * i);
    return v;
  }
  // A size field: usually the right value, sometimes off by a little, sometimes anything.
  std::size_t size(std::size_t right) {
    switch (byte() % 4) {
      case 1: return right + std::size_t(int64_t(int8_t(byte())));
      case 2: return std::size_t(u64());
      default: return right;
    }
  }
};

// An array of `claimed` elements, each filled by `fill`; a one-element stand-in above kCap.
template <class T, class F>
std::unique_ptr<T[]> array(std::size_t claimed, F fill) {
  const std::size_t n = claimed <= kCap ? claimed : 1;
  auto out = std::make_unique<T[]>(n == 0 ? 1 : n);  // a zero-length claim gets a valid pointer
  for (std::size_t i = 0; i < n; ++i) out[i] = fill(i);
  return out;
}

std::size_t popcount_bits(const uint64_t* w, std::size_t bits) {
  std::size_t c = 0;
  for (std::size_t i = 0; i < bits; ++i) c += (w[i / 64] >> (i % 64)) & 1;
  return c;
}

struct Circuit {
  Assignment as{};
  std::unique_ptr<blst_fr[]> a, b, c, inp, aux;
  std::unique_ptr<uint64_t[]> da, dbi, dba;
  bool valid = true;      // the oracle's verdict on sizes, pointers and popcounts
  bool satisfied = true;  // the scalars form a satisfied witness with input[0] = 1 (zero mode)
};

blst_fr one_mont() {
  blst_fr x;
  const Fr one = Fr::one();
  std::memcpy(&x, &one, sizeof x);
  return x;
}

Circuit make_circuit(Reader& in) {
  Circuit k;
  const uint8_t nulls = in.byte();
  const bool zero_scalars = in.byte() % 4 != 0;
  const bool key_densities = in.byte() % 4 != 0;

  Assignment& as = k.as;
  as.a_aux_bit_len = in.size(kAux);
  as.b_inp_bit_len = in.size(kInputs);
  as.b_aux_bit_len = in.size(kAux);
  as.abc_size = in.size(kDomain);
  as.inp_assignment_size = in.size(kInputs);
  as.aux_assignment_size = in.size(kAux);

  auto density = [&](std::size_t bits, uint64_t key_word) {
    return array<uint64_t>((bits + 63) / 64, [&](std::size_t i) {
      if (key_densities) return i == 0 ? key_word : 0;
      return in.u64();
    });
  };
  k.da = density(as.a_aux_bit_len, kAAux);
  k.dbi = density(as.b_inp_bit_len, kBInp);
  k.dba = density(as.b_aux_bit_len, kBAux);
  auto scalars = [&](std::size_t n, bool input) {
    return array<blst_fr>(n, [&](std::size_t i) {
      blst_fr x{};
      if (zero_scalars) {
        if (input && i == 0) x = one_mont();
      } else {
        for (auto& l : x.l) l = in.u64();
      }
      return x;
    });
  };
  k.a = scalars(as.abc_size, false);
  k.b = scalars(as.abc_size, false);
  k.c = scalars(as.abc_size, false);
  k.inp = scalars(as.inp_assignment_size, true);
  k.aux = scalars(as.aux_assignment_size, false);
  k.satisfied = zero_scalars;

  as.a_aux_density = nulls & 0x01 ? nullptr : k.da.get();
  as.b_inp_density = nulls & 0x02 ? nullptr : k.dbi.get();
  as.b_aux_density = nulls & 0x04 ? nullptr : k.dba.get();
  as.a = nulls & 0x08 ? nullptr : k.a.get();
  as.b = nulls & 0x10 ? nullptr : k.b.get();
  as.c = nulls & 0x20 ? nullptr : k.c.get();
  as.inp_assignment_data = nulls & 0x40 ? nullptr : k.inp.get();
  as.aux_assignment_data = nulls & 0x80 ? nullptr : k.aux.get();

  // The oracle, written apart from the library's checks.
  const bool sizes = as.a_aux_bit_len == kAux && as.b_aux_bit_len == kAux && as.b_inp_bit_len == kInputs &&
                     as.inp_assignment_size == kInputs && as.aux_assignment_size == kAux && as.abc_size > kDomain / 2 &&
                     as.abc_size <= kDomain;  // bellman's domain for abc_size rows is the key's
  k.valid = sizes && nulls == 0;  // with the right sizes every array is non-empty: NULL is wrong
  // Popcounts: the real ones (claims within kCap only: beyond, the arrays are stand-ins), then
  // perturbed by the input.
  auto popcount = [&](const uint64_t* w, std::size_t bits) {
    return w && bits <= kCap ? popcount_bits(w, bits) : 0;
  };
  as.a_aux_popcount = in.size(popcount(as.a_aux_density, as.a_aux_bit_len));
  as.b_inp_popcount = in.size(popcount(as.b_inp_density, as.b_inp_bit_len));
  as.b_aux_popcount = in.size(popcount(as.b_aux_density, as.b_aux_bit_len));
  if (k.valid) {
    const std::size_t pa = popcount_bits(k.da.get(), kAux), pbi = popcount_bits(k.dbi.get(), kInputs),
                      pba = popcount_bits(k.dba.get(), kAux);
    k.valid = as.a_aux_popcount == pa && as.b_inp_popcount == pbi && as.b_aux_popcount == pba &&
              kInputs + pa == 6 && pbi + pba == 5;
  }
  return k;
}

bool on_curve(const groth16_proof& p) {
  G1Affine a, c;
  G2Affine b;
  std::memcpy(&a, &p.a, sizeof a);
  std::memcpy(&b, &p.b, sizeof b);
  std::memcpy(&c, &p.c, sizeof c);
  return a.is_on_curve() && b.is_on_curve() && c.is_on_curve();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("PROOFPIPE_GPUS", "none", 1);  // the shared engine: CPU only, whatever the machine has
  // The key's points are random, not a setup's: its proofs cannot verify, so the engine's check
  // before release is off here (the oracle judges the call's arguments, not the proof's validity).
  setenv("PROOFPIPE_CHECK_PROOFS", "0", 1);
  (void)key();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  Reader in{data, size};
  const uint8_t top = in.byte();
  const std::size_t n = in.byte() % 4;
  std::vector<Circuit> circuits;
  for (std::size_t i = 0; i < n; ++i) circuits.push_back(make_circuit(in));
  std::vector<Assignment> provers;
  for (const Circuit& k : circuits) provers.push_back(k.as);
  const bool zero_rs = in.byte() % 4 != 0;
  std::vector<blst_fr> r(n == 0 ? 1 : n), s(n == 0 ? 1 : n);
  for (std::size_t i = 0; i < n && !zero_rs; ++i)
    for (auto* x : {&r[i], &s[i]})
      for (auto& l : x->l) l = in.u64();
  std::vector<groth16_proof> proofs(n == 0 ? 1 : n);
  std::memset(proofs.data(), 0xa5, proofs.size() * sizeof(groth16_proof));

  const SRS empty{nullptr};
  const RustError e = generate_groth16_proofs_c(top & 0x01 ? nullptr : provers.data(), n,
                                                top & 0x02 ? nullptr : r.data(), top & 0x04 ? nullptr : s.data(),
                                                top & 0x08 ? nullptr : proofs.data(),
                                                top & 0x10 ? nullptr : (top & 0x20 ? &empty : &key()));

  bool valid = (top & 0x3f) == 0 && n > 0, satisfied = zero_rs;
  for (const Circuit& k : circuits) valid = valid && k.valid, satisfied = satisfied && k.satisfied;
  auto violated = [&](const char* what) {
    std::fprintf(stderr, "fuzz_supraseal: %s (code %d, message %s)\n", what, e.code, e.message ? e.message : "NULL");
    std::abort();
  };
  if ((e.code == 0) != (e.message == nullptr)) violated("code and message disagree");
  if (e.code != 0 && std::strncmp(e.message, "generate_groth16_proofs_c: ", 27) != 0)
    violated("the message does not name the function");
  if (e.code == 0 && !valid) violated("accepted a call the oracle rejects");
  if (e.code != 0 && valid && satisfied) violated("rejected a valid call");
  if (e.code == 0)
    for (std::size_t i = 0; i < n; ++i)
      if (!on_curve(proofs[i])) violated("a proof point is not on its curve");
  std::free(e.message);
  return 0;
}
