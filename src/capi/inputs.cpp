// SPDX-License-Identifier: Apache-2.0 OR MIT
// The C API's inputs (inputs.hpp): caller arrays, .ppw files and bytes, circom files.
#include "inputs.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <sys/mman.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <bit>
#include <cstring>
#include <type_traits>
#include <random>
#include <span>

#include "proofpipe/core/big_vector.hpp"
#include "proofpipe/core/lowest_failing.hpp"
#include "proofpipe/io/r1cs_file.hpp"
#include "proofpipe/io/snarkjs.hpp"
#include "proofpipe/io/witness.hpp"
#include "proofpipe/io/wtns.hpp"

namespace pp::capi {

uint64_t load_u64_le(const uint8_t* p) {
  uint64_t v = 0;
  for (int k = 7; k >= 0; --k) v = (v << 8) | p[k];
  return v;
}
void store_u64_le(uint8_t* p, uint64_t v) {
  for (int k = 0; k < 8; ++k) p[k] = uint8_t(v >> (8 * k));
}

// A Montgomery-form scalar as it crosses the API (4 LE limbs, < r).
template <class F>
bool load_montgomery(F& out, const uint8_t* bytes) {
  static_assert(sizeof(F) == PP_FR_BYTES);
  F x;
  for (int i = 0; i < 4; ++i) x.l[i] = load_u64_le(bytes + 8 * i);
  if (!x.is_reduced()) return false;
  out = x;
  return true;
}
template <class F>
void store_montgomery(uint8_t* bytes, const F& x) {
  for (int i = 0; i < 4; ++i) store_u64_le(bytes + 8 * i, x.l[i]);
}
template bool load_montgomery(Fr&, const uint8_t*);
template bool load_montgomery(bn254::Fr&, const uint8_t*);
template void store_montgomery(uint8_t*, const Fr&);
template void store_montgomery(uint8_t*, const bn254::Fr&);

[[noreturn]] void throw_unreduced(const std::string& what, std::size_t bad) {
  throw ApiError(PP_ERR_INVALID_ARGUMENT, what + "[" + std::to_string(bad) + "] is not a reduced scalar (limbs >= r)");
}

// Copies and range-checks n caller scalars on every core (a 2^27 partition's a, b, c are 12 GiB);
// the first bad index is reported.
template <class F>
std::vector<F> load_scalars_of(const uint8_t* bytes, std::size_t n, const std::string& what) {
  std::vector<F> out = big_vector<F>(n);
  const uint64_t bad =
      lowest_failing(n, 1 << 14, [&](uint64_t i) { return load_montgomery(out[i], bytes + i * PP_FR_BYTES); });
  if (bad != kNoneFailed) throw_unreduced(what, std::size_t(bad));
  return out;
}
template std::vector<Fr> load_scalars_of(const uint8_t*, std::size_t, const std::string&);
template std::vector<bn254::Fr> load_scalars_of(const uint8_t*, std::size_t, const std::string&);

std::vector<Fr> load_scalars(const uint8_t* bytes, std::size_t n, const std::string& what) {
  return load_scalars_of<Fr>(bytes, n, what);
}

// The caller's scalars as they lie when their layout is pp's (little-endian limbs, Fr's
// alignment), a checked copy otherwise. Borrowed scalars are not range-checked here: the
// prover's check_witness_values does it in the pass that reads them for a·b = c, before any
// proof leaves (the arrays are read once, not twice: a 2^26 partition's are 8.6 GB).
HostArray<Fr> borrow_scalars(const uint8_t* bytes, std::size_t n, const std::string& what) {
  static_assert(sizeof(Fr) == PP_FR_BYTES && std::is_trivially_copyable_v<Fr>);
  if constexpr (std::endian::native == std::endian::little) {
    if (reinterpret_cast<std::uintptr_t>(bytes) % alignof(Fr) == 0)
      return HostArray<Fr>::borrow(reinterpret_cast<const Fr*>(bytes), n);
  }
  return load_scalars(bytes, n, what);
}

// The memory of copy_scalars' copies: anonymous mappings offered to transparent huge pages, kept
// for the next copy of the same size when released (up to kKeepBytes in all), so that a steady
// stream of calls copies into memory whose pages are already faulted in (a fresh 2^24 a, b, c is
// 1.5 GB of page faults and zeroing before the copy starts).
class CopyRegions {
 public:
  static constexpr std::size_t kKeepBytes = std::size_t(16) << 30;

  std::shared_ptr<void> take(std::size_t bytes) {
    void* p = nullptr;
    {
      std::lock_guard lock(mu_);
      if (const auto it = free_.find(bytes); it != free_.end()) {
        p = it->second;
        free_.erase(it);
        kept_ -= bytes;
      }
    }
    if (!p) {
      p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
      ::madvise(p, bytes, MADV_HUGEPAGE);  // advice only
    }
    return std::shared_ptr<void>(p, [this, bytes](void* q) { give_back(q, bytes); });
  }

 private:
  void give_back(void* p, std::size_t bytes) {
    {
      std::lock_guard lock(mu_);
      if (kept_ + bytes <= kKeepBytes) {
        free_.emplace(bytes, p);
        kept_ += bytes;
        return;
      }
    }
    ::munmap(p, bytes);
  }
  std::mutex mu_;
  std::multimap<std::size_t, void*> free_;
  std::size_t kept_ = 0;
};

CopyRegions& copy_regions() {
  static CopyRegions* regions = new CopyRegions;  // never destroyed: copies may outlive static destruction
  return *regions;
}

// n scalars copied as they are, on every core (a 2^24 partition's a, b, c are 1.5 GB), into a
// recycled region.
HostArray<Fr> copy_scalars(const Fr* from, std::size_t n) {
  if (n == 0) return HostArray<Fr>(std::vector<Fr>());
  std::shared_ptr<void> region = copy_regions().take(n * sizeof(Fr));
  Fr* to = static_cast<Fr*>(region.get());
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 1 << 16), [&](const tbb::blocked_range<std::size_t>& r) {
    std::memcpy(to + r.begin(), from + r.begin(), (r.end() - r.begin()) * sizeof(Fr));
  });
  return HostArray<Fr>::view(std::move(region), to, n);
}

// A density bitmap whose word count and pointer check_assignment_shape has checked.
std::vector<uint64_t> load_bits(const uint64_t* words, std::size_t n_words, std::size_t n_bits, const std::string& what) {
  std::vector<uint64_t> out(words, words + n_words);
  if (n_bits % 64 != 0 && (out.back() >> (n_bits % 64)) != 0)
    throw ApiError(PP_ERR_INVALID_ARGUMENT, what + ": bits past variable " + std::to_string(n_bits - 1) +
                                                " are set in the last word (must be zero)");
  return out;
}

std::string input_name(std::size_t k) { return "inputs[" + std::to_string(k) + "]"; }

// The checks of an assignment that do not read its arrays: counts, pointers, density lengths.
void check_assignment_shape(const pp_assignment& as, const std::string& where) {
  if (as.num_rows == 0) throw ApiError(PP_ERR_INVALID_ARGUMENT, where + ".assignment.num_rows is 0");
  if (as.num_inputs == 0)
    throw ApiError(PP_ERR_INVALID_ARGUMENT, where + ".assignment.num_inputs is 0 (the constant 1 is input 0)");
  const std::size_t max_scalars = std::numeric_limits<std::size_t>::max() / PP_FR_BYTES;
  if (as.num_rows > max_scalars || as.num_inputs > max_scalars || as.num_aux > max_scalars)
    throw ApiError(PP_ERR_INVALID_ARGUMENT, where + ".assignment: a length overflows the address space");
  const std::string p = where + ".assignment.";
  require(as.a, (p + "a").c_str());
  require(as.b, (p + "b").c_str());
  require(as.c, (p + "c").c_str());
  require(as.input, (p + "input").c_str());
  if (as.num_aux > 0) require(as.aux, (p + "aux").c_str());
  auto words = [&](const uint64_t* w, std::size_t n_words, std::size_t n_bits, const char* name) {
    const std::size_t want = (n_bits + 63) / 64;
    if (n_words != want)
      throw ApiError(PP_ERR_INVALID_ARGUMENT, p + name + " has " + std::to_string(n_words) + " words, " +
                                                  std::to_string(n_bits) + " variables need " + std::to_string(want));
    if (want > 0) require(w, (p + name).c_str());
  };
  words(as.a_aux_density, as.a_aux_density_words, as.num_aux, "a_aux_density");
  words(as.b_input_density, as.b_input_density_words, as.num_inputs, "b_input_density");
  words(as.b_aux_density, as.b_aux_density_words, as.num_aux, "b_aux_density");
}

Witness witness_from_arrays(const pp_assignment& as, const std::string& where, bool borrow) {
  check_assignment_shape(as, where);
  const std::string p = where + ".assignment.";
  auto scalars = [&](const uint8_t* bytes, std::size_t n, const char* name) {
    return borrow ? borrow_scalars(bytes, n, p + name) : HostArray<Fr>(load_scalars(bytes, n, p + name));
  };
  Witness w;
  w.a = scalars(as.a, as.num_rows, "a");
  w.b = scalars(as.b, as.num_rows, "b");
  w.c = scalars(as.c, as.num_rows, "c");
  w.input = scalars(as.input, as.num_inputs, "input");
  w.aux = scalars(as.aux, as.num_aux, "aux");
  w.densities.a_aux = load_bits(as.a_aux_density, as.a_aux_density_words, as.num_aux, p + "a_aux_density");
  w.densities.b_input = load_bits(as.b_input_density, as.b_input_density_words, as.num_inputs, p + "b_input_density");
  w.densities.b_aux = load_bits(as.b_aux_density, as.b_aux_density_words, as.num_aux, p + "b_aux_density");
  return w;
}

Witness witness_copying_abc(const pp_input& in, std::size_t k) {
  Witness w = witness_from_arrays(in.assignment, input_name(k), /*borrow=*/true);
  for (HostArray<Fr>* v : {&w.a, &w.b, &w.c}) *v = copy_scalars(v->data(), v->size());
  return w;
}

// A file or a byte range, for the readers that take either.
struct Source {
  bool is_file;
  std::string path;
  std::span<const uint8_t> bytes;
};
Source source(const pp_source& s, const std::string& what) {
  if (s.path) return {true, s.path, {}};
  if (s.data == nullptr)
    throw ApiError(s.size ? PP_ERR_NULL_POINTER : PP_ERR_INVALID_ARGUMENT,
                   what + ": neither path nor data is set");
  const std::string field = what.substr(what.rfind('.') + 1);  // "ppw", "r1cs", "wtns"
  return {false, field + ".data", std::span<const uint8_t>(s.data, s.size)};
}

const char* kind_name(int kind) {
  switch (kind) {
    case PP_INPUT_ASSIGNMENT: return "PP_INPUT_ASSIGNMENT";
    case PP_INPUT_PPW: return "PP_INPUT_PPW";
    case PP_INPUT_R1CS_WTNS: return "PP_INPUT_R1CS_WTNS";
    default: return "PP_INPUT_WTNS";
  }
}

// The input kinds a key takes: a .zkey key proves .wtns files (snarkjs's convention), a .params
// key everything else. ApiError naming the input otherwise.
void check_kind(int kind, const KeyImpl& key, const std::string& where) {
  if (kind < PP_INPUT_ASSIGNMENT || kind > PP_INPUT_WTNS)
    throw ApiError(PP_ERR_INVALID_ARGUMENT, where + ".kind is " + std::to_string(kind) +
                                                " (PP_INPUT_ASSIGNMENT, PP_INPUT_PPW, PP_INPUT_R1CS_WTNS or PP_INPUT_WTNS)");
  if ((key.zkey || key.zkey_bn254) && kind != PP_INPUT_WTNS)
    throw ApiError(PP_ERR_INVALID_ARGUMENT,
                   where + ".kind is " + kind_name(kind) +
                       " but the key was loaded from a snarkjs .zkey, which proves PP_INPUT_WTNS inputs");
  if (!key.zkey && !key.zkey_bn254 && kind == PP_INPUT_WTNS)
    throw ApiError(PP_ERR_INVALID_ARGUMENT, where +
                                                ".kind is PP_INPUT_WTNS, which needs a key loaded from a snarkjs .zkey "
                                                "(this key is a bellperson .params)");
}

Witness witness_from_input(const pp_input& in, std::size_t k, const KeyImpl& key, bool borrow) {
  const std::string where = input_name(k);
  // A C caller may store any int in the enum field; loading such a value as the C++ enum is
  // undefined behaviour (UBSan flags it), so the field is read as the int it is.
  static_assert(sizeof(pp_input_kind) == sizeof(int));
  int kind;
  std::memcpy(&kind, &in.kind, sizeof kind);
  check_kind(kind, key, where);
  switch (kind) {
    case PP_INPUT_ASSIGNMENT:
      return witness_from_arrays(in.assignment, where, borrow);
    case PP_INPUT_PPW: {
      const Source src = source(in.ppw, where + ".ppw");
      if (src.is_file) throw std::logic_error("witness_from_input: .ppw files are read while proving (PendingInput)");
      return as_witness_error(where, [&] { return parse_witness(src.bytes, src.path); });
    }
    case PP_INPUT_R1CS_WTNS: {
      const Source r1cs_src = source(in.r1cs, where + ".r1cs");
      const Source wtns_src = source(in.wtns, where + ".wtns");
      return as_witness_error(where, [&] {
        const CircomR1cs circuit =
            r1cs_src.is_file ? read_r1cs_file(r1cs_src.path) : parse_r1cs_file(r1cs_src.bytes, r1cs_src.path);
        circuit.r1cs.validate();
        const std::vector<Fr> z = wtns_src.is_file ? read_wtns(wtns_src.path) : parse_wtns(wtns_src.bytes, wtns_src.path);
        return witness_from_assignment(circuit.r1cs, z);
      });
    }
    case PP_INPUT_WTNS: {
      const Source src = source(in.wtns, where + ".wtns");
      return as_witness_error(where, [&] {
        const std::vector<Fr> z = src.is_file ? read_wtns(src.path) : parse_wtns(src.bytes, src.path);
        return witness_from_zkey(*key.zkey, z, key.zkey_densities);
      });
    }
  }
  throw std::logic_error("witness_from_input: check_kind let an unknown kind through");
}

// The column densities of one partition's input, without its scalars where the form allows.
Densities densities_of_input(const pp_input& in, const KeyImpl& key) {
  const std::string where = "sample";
  int kind;
  std::memcpy(&kind, &in.kind, sizeof kind);
  check_kind(kind, key, where);
  if (kind == PP_INPUT_WTNS) return key.zkey_densities;  // a snarkjs key's columns are the key's
  if (kind == PP_INPUT_PPW && in.ppw.path)
    return as_witness_error(where, [&] { return read_witness_densities(in.ppw.path); });
  if (kind == PP_INPUT_ASSIGNMENT) {
    const pp_assignment& as = in.assignment;
    check_assignment_shape(as, where);
    const std::string p = where + ".assignment.";
    Densities d;
    d.a_aux = load_bits(as.a_aux_density, as.a_aux_density_words, as.num_aux, p + "a_aux_density");
    d.b_input = load_bits(as.b_input_density, as.b_input_density_words, as.num_inputs, p + "b_input_density");
    d.b_aux = load_bits(as.b_aux_density, as.b_aux_density_words, as.num_aux, p + "b_aux_density");
    return d;
  }
  return witness_from_input(in, 0, key).densities;
}

// A uniformly random scalar from the operating system (std::random_device reads getrandom /
// /dev/urandom on Linux): bits up to r's length, rejected when >= r (BLS12-381: 255 bits, about
// 1 draw in 10 rejected; BN254: 254 bits, about 1 in 4).
template <class F>
F os_random_scalar(std::random_device& rd) {
  constexpr int kTopBits = F::BITS - 192;  // bits of r's top limb
  for (;;) {
    uint64_t limbs[4];
    for (uint64_t& w : limbs) w = (uint64_t(rd()) << 32) | uint64_t(rd());
    limbs[3] >>= 64 - kTopBits;
    F x;
    if (F::from_canonical(x, limbs)) return x;
  }
}

// Randomisers r, s for n partitions: seeded (tests, reproducible runs), from the operating system,
// or the caller's per input (both or neither; Montgomery form, reduced).
template <class F>
std::vector<RandomizersOf<F>> request_randomizers(const pp_input* inputs, std::size_t n, const uint64_t* seed) {
  std::vector<RandomizersOf<F>> out;
  if (seed) {
    out = randomizers_from_seed<F>(*seed, n);
  } else {
    std::random_device rd;
    out.resize(n);
    for (RandomizersOf<F>& rs : out) {
      rs.r = os_random_scalar<F>(rd);
      rs.s = os_random_scalar<F>(rd);
    }
  }
  for (std::size_t k = 0; k < n; ++k) {
    const pp_input& in = inputs[k];
    if ((in.r == nullptr) != (in.s == nullptr))
      throw ApiError(PP_ERR_INVALID_ARGUMENT, input_name(k) + ": give both r and s or neither");
    if (!in.r) continue;
    if (!load_montgomery(out[k].r, in.r) || !load_montgomery(out[k].s, in.s))
      throw ApiError(PP_ERR_INVALID_ARGUMENT, input_name(k) + ": r or s is not a reduced Montgomery-form scalar");
  }
  return out;
}

// A BN254 key's request: every input a bn128 .wtns (file or bytes), its witness computed now from
// the key's coefficients (as a BLS12-381 .zkey key's are).
Request copy_bn254_request(const KeyImpl& key, const pp_input* inputs, std::size_t n, const uint64_t* seed) {
  Request req;
  for (std::size_t k = 0; k < n; ++k) {
    const pp_input& in = inputs[k];
    int kind;
    std::memcpy(&kind, &in.kind, sizeof kind);
    const std::string where = input_name(k);
    check_kind(kind, key, where);
    const Source src = source(in.wtns, where + ".wtns");
    req.bn254_witnesses.push_back(as_witness_error(where, [&] {
      const std::vector<bn254::Fr> z =
          src.is_file ? read_wtns<bn254::Fr>(src.path) : parse_wtns<bn254::Fr>(src.bytes, src.path);
      return std::make_shared<const bn254::Witness>(witness_from_zkey(*key.zkey_bn254, z, key.zkey_densities));
    }));
  }
  req.bn254_randomizers = request_randomizers<bn254::Fr>(inputs, n, seed);
  return req;
}

// The cheap checks of a .ppw file against the key, so that start reports them: the header, the
// file's size, and the counts the key fixes. The scalars are checked as they are read.
void check_ppw_file(const std::string& path, const ProvingKey& pk, const std::string& where) {
  const WitnessHeader h = as_witness_error(where, [&] { return read_witness_header(path); });
  auto mismatch = [&](const char* what, uint64_t got, uint64_t want) {
    if (got != want)
      throw ApiError(PP_ERR_WITNESS, where + ": " + path + ": " + what + " " + std::to_string(got) + ", the key has " +
                                         std::to_string(want) + " (witness and proving key do not match)");
  };
  mismatch("input count", h.inputs, pk.vk.ic.size());
  mismatch("aux count", h.aux, pk.l.size());
}

// borrow (PP_BORROW_*): PP_BORROW_ALL, the caller keeps its assignment arrays valid until the
// request ends (pp_prove returns only then; pp_prove_start_with's caller promises it), so they are
// read while proving; PP_BORROW_ASSIGNMENT, the same but a, b, c are copied ahead of the proving;
// PP_BORROW_NONE (pp_prove_start), every in-memory input is copied now.
Request copy_request(const KeyImpl& key, const pp_input* inputs, std::size_t n, const uint64_t* seed, int borrow) {
  if (n == 0) throw ApiError(PP_ERR_INVALID_ARGUMENT, "num_inputs is 0");
  require(inputs, "inputs");
  if (key.curve == PP_CURVE_BN254) return copy_bn254_request(key, inputs, n, seed);
  Request req;
  req.inputs.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    const pp_input& in = inputs[k];
    int kind;
    std::memcpy(&kind, &in.kind, sizeof kind);
    check_kind(kind, key, input_name(k));
    if (kind == PP_INPUT_PPW && in.ppw.path) {
      req.inputs[k].file = in.ppw.path;
      check_ppw_file(req.inputs[k].file, *key.pk, input_name(k));
    } else if (borrow != PP_BORROW_NONE && kind == PP_INPUT_ASSIGNMENT) {
      check_assignment_shape(in.assignment, input_name(k));
      req.inputs[k].borrowed = in;
      req.inputs[k].copy_abc = borrow == PP_BORROW_ASSIGNMENT;
    } else {
      req.inputs[k].witness = std::make_shared<const Witness>(witness_from_input(in, k, key));
    }
  }
  req.randomizers = request_randomizers<Fr>(inputs, n, seed);
  return req;
}

}  // namespace pp::capi
