// SPDX-License-Identifier: Apache-2.0 OR MIT
// The code both SupraSeal-ABI drop-ins share (abi_common.hpp).
#include "abi_common.hpp"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <list>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <unistd.h>
#include <utility>
#include <vector>

#include "proofpipe/ec/bls12_381.hpp"
#include "proofpipe/engine_options.hpp"
#include "proofpipe/io/serialize.hpp"

namespace pp::supraseal {

// ----- layout: the ABI's types are exactly what bellperson and blst hold ----------------------

static_assert(sizeof(std::size_t) == 8 && sizeof(void*) == 8, "the ABI is defined for 64-bit targets");
static_assert(sizeof(Assignment) == 17 * 8, "Assignment: 17 eight-byte fields");
static_assert(offsetof(Assignment, b_inp_density) == 3 * 8 && offsetof(Assignment, b_aux_density) == 6 * 8 &&
              offsetof(Assignment, a) == 9 * 8 && offsetof(Assignment, abc_size) == 12 * 8 &&
              offsetof(Assignment, inp_assignment_data) == 13 * 8 &&
              offsetof(Assignment, aux_assignment_size) == 16 * 8);
static_assert(sizeof(RustError) == 16 && offsetof(RustError, message) == 8);
static_assert(sizeof(SRS) == 8);
static_assert(sizeof(blst_fr) == PP_FR_BYTES, "blst_fr is pp's scalar layout: handed over as is");
static_assert(sizeof(groth16_proof) == 384 && offsetof(groth16_proof, b) == 96 && offsetof(groth16_proof, c) == 288);

// pp's affine points are blst's: Fp as 6 little-endian u64 limbs in Montgomery form with
// R = 2^384 mod p, Fp2 as c0 then c1, (x, y) packed, infinity as all zero. Checked on a known
// value: the G1 generator's x * 2^384 mod p (computed independently of this code base).
static_assert(sizeof(pp::Fp) == sizeof(blst_fp) && sizeof(pp::Fp2) == sizeof(blst_fp2));
static_assert(sizeof(pp::G1Affine) == sizeof(blst_p1_affine) && sizeof(pp::G2Affine) == sizeof(blst_p2_affine));
static_assert(offsetof(pp::G1Affine, y) == offsetof(blst_p1_affine, y));
static_assert(offsetof(pp::G2Affine, y) == offsetof(blst_p2_affine, y));
static_assert(offsetof(pp::Fp2, c1) == sizeof(blst_fp));
constexpr uint64_t kG1GeneratorXMont[6] = {0x5cb38790fd530c16, 0x7817fc679976fff5, 0x154f95c7143ba1c1,
                                           0xf0ae6acdf3d0e747, 0xedce6ecc21dbf440, 0x120177419e0bfb75};
constexpr bool g1_generator_matches_blst() {
  for (int i = 0; i < 6; ++i)
    if (pp::g1_generator_value.x.l[i] != kG1GeneratorXMont[i]) return false;
  return true;
}
static_assert(g1_generator_matches_blst(), "pp::Fp is not blst's Montgomery representation");
static_assert(pp::Fp::one().l[0] == 0x760900000002fffdULL && pp::Fp::one().l[5] == 0x15f65ec3fa80e493ULL,
              "one = 2^384 mod p");

// ----- errors --------------------------------------------------------------------------------

RustError ok() { return RustError{0, nullptr}; }

RustError to_rust(const Failure& f) {
  // strdup may fail under memory pressure: the code still says what happened.
  return RustError{f.code != 0 ? f.code : ENOTRECOVERABLE, strdup(f.message.c_str())};
}

RustError to_rust(int code, const std::string& message) { return to_rust(Failure{code, message}); }

int errno_of(pp_status status) {
  int code;  // compared as an int: see pp_status_name
  std::memcpy(&code, &status, sizeof code);
  switch (code) {
    case PP_ERR_NULL_POINTER:
    case PP_ERR_INVALID_ARGUMENT:
    case PP_ERR_BUFFER_TOO_SMALL:
    case PP_ERR_KEY:
    case PP_ERR_WITNESS: return EINVAL;
    case PP_ERR_OUT_OF_MEMORY: return ENOMEM;
    case PP_ERR_UNSUPPORTED: return ENODEV;
    case PP_ERR_DEVICE: return EIO;  // a GPU failed with the CPU fallback off
    case PP_ERR_CANCELLED: return ECANCELED;
    default: return ENOTRECOVERABLE;  // PP_ERR_INTERNAL and anything unknown: a bug
  }
}

std::string in_abi_terms(std::string m) {
  // The C API function that failed: the caller knows its own ("generate_groth16_proofs_c: ...").
  for (std::string_view fn : {"pp_prove_finalize: ", "pp_prove_start: ", "pp_prove: "})
    if (m.rfind(fn, 0) == 0) {
      m.erase(0, fn.size());
      break;
    }
  static constexpr std::pair<std::string_view, std::string_view> kNames[] = {
      {"inputs[", "provers["},
      {".assignment.input[", ".inp_assignment_data["},
      {".assignment.aux[", ".aux_assignment_data["},
      {".assignment.a[", ".a["},
      {".assignment.b[", ".b["},
      {".assignment.c[", ".c["},
      {".assignment.a_aux_density", ".a_aux_density"},
      {".assignment.b_input_density", ".b_inp_density"},
      {".assignment.b_aux_density", ".b_aux_density"},
  };
  for (const auto& [from, to] : kNames)
    for (std::size_t at = m.find(from); at != std::string::npos; at = m.find(from, at + to.size()))
      m.replace(at, from.size(), to);
  // The prover's row check names input k "partition k" (pp_prove proves input k as its partition
  // k): "partition 3: a·b != c ..." is about provers[3].
  constexpr std::string_view kPartition = "partition ";
  for (std::size_t at = m.find(kPartition); at != std::string::npos; at = m.find(kPartition, at + 1)) {
    std::size_t end = at + kPartition.size();
    while (end < m.size() && m[end] >= '0' && m[end] <= '9') ++end;
    if (end == at + kPartition.size() || m.compare(end, 2, ": ") != 0) continue;
    m.replace(at, end - at, "provers[" + m.substr(at + kPartition.size(), end - at - kPartition.size()) + "]");
  }
  return m;
}

namespace {

// ----- the process-wide engine -------------------------------------------------------------

// Environment: PROOFPIPE_GPUS ("all" | "none" | comma list of CUDA ordinals),
// PROOFPIPE_GPU_WORKERS (1..16), PROOFPIPE_HOST_MEMORY (a byte size: "64GiB", "68719476736"; 0:
// unlimited) and PROOFPIPE_DEVICE_MEMORY ("card" or a byte size: "16GiB"), read as the CLI's
// --host-budget and --vram-budget are (host_budget_bytes, device_budget_bytes),
// PROOFPIPE_CHECK_PROOFS (1, the default, or 0). Throws Failure on a bad value.
bool parse_u64(std::string_view s, uint64_t& out) {
  if (s.empty() || s.size() > 20) return false;
  uint64_t v = 0;
  for (char ch : s) {
    if (ch < '0' || ch > '9') return false;
    const uint64_t d = uint64_t(ch - '0');
    if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) return false;
    v = v * 10 + d;
  }
  out = v;
  return true;
}

pp_engine_config config_from_environment() {
  pp_engine_config config;
  pp_engine_config_default(&config);
  if (const char* gpus = std::getenv("PROOFPIPE_GPUS"); gpus && *gpus && std::string_view(gpus) != "all") {
    const std::string_view list(gpus);
    if (list == "none") {
      config.num_gpus = 0;
    } else {
      config.num_gpus = 0;
      std::size_t start = 0;
      for (;;) {
        const std::size_t comma = std::min(list.find(',', start), list.size());
        uint64_t ordinal = 0;
        if (!parse_u64(list.substr(start, comma - start), ordinal) || ordinal > 1023 ||
            config.num_gpus == PP_MAX_GPUS)
          throw Failure{EINVAL, "PROOFPIPE_GPUS=\"" + std::string(list) +
                                    "\": expected \"all\", \"none\" or up to " + std::to_string(PP_MAX_GPUS) +
                                    " comma-separated GPU ordinals"};
        config.gpus[config.num_gpus++] = int(ordinal);
        if (comma == list.size()) break;
        start = comma + 1;
      }
    }
  }
  if (const char* gw = std::getenv("PROOFPIPE_GPU_WORKERS"); gw && *gw) {
    uint64_t v = 0;
    if (!parse_u64(gw, v) || v < 1 || v > 16)
      throw Failure{EINVAL, "PROOFPIPE_GPU_WORKERS=\"" + std::string(gw) + "\": expected 1..16"};
    config.gpu_workers = int(v);
  }
  auto bytes = [](const char* name, uint64_t& out, uint64_t (*parse)(std::string_view)) {
    const char* v = std::getenv(name);
    if (!v || !*v) return;
    try {
      out = parse(v);
    } catch (const std::invalid_argument& e) {
      throw Failure{EINVAL, std::string(name) + "=\"" + v + "\": " + e.what()};
    }
  };
  bytes("PROOFPIPE_HOST_MEMORY", config.host_memory_budget, host_budget_bytes);
  // Below a key's resident size the planner streams the SRS.
  bytes("PROOFPIPE_DEVICE_MEMORY", config.device_memory_budget, device_budget_bytes);
  if (const char* check = std::getenv("PROOFPIPE_CHECK_PROOFS"); check && *check) {
    const std::string_view v(check);
    if (v != "0" && v != "1") throw Failure{EINVAL, "PROOFPIPE_CHECK_PROOFS=\"" + std::string(v) + "\": expected 0 or 1"};
    config.check_proofs = v == "1" ? 1 : 0;
  }
  return config;
}

struct EngineSlot {
  std::once_flag once;
  pp_engine* engine = nullptr;  // lives until the process ends (callers may prove until then)
  Failure failure{0, {}};
};

EngineSlot& engine_slot() {
  static EngineSlot slot;
  return slot;
}

}  // namespace

pp_engine* shared_engine() {
  EngineSlot& slot = engine_slot();
  std::call_once(slot.once, [&slot] {
    try {
      const pp_engine_config config = config_from_environment();
      pp_error err;
      if (pp_engine_create(&config, &slot.engine, &err) != PP_OK) {
        slot.engine = nullptr;
        slot.failure = Failure{errno_of(err.code), std::string("proofpipe engine: ") + err.message};
      }
    } catch (const Failure& f) {
      slot.failure = f;
    } catch (const std::bad_alloc&) {
      slot.failure = Failure{ENOMEM, "proofpipe engine: out of memory"};
    }
  });
  if (!slot.engine) throw slot.failure;
  return slot.engine;
}

namespace {

// ----- keys and the path cache ---------------------------------------------------------------

pp_key* key_of(const SRS* srs) { return srs ? static_cast<pp_key*>(const_cast<void*>(srs->ptr)) : nullptr; }

// create_SRS(..., cache = true): the most recently used keys by path, each holding one
// reference (SupraSeal keeps four).
class KeyCache {
 public:
  static constexpr std::size_t kEntries = 4;

  // A new reference to the cached key of `path`, or nullptr.
  pp_key* find(const std::string& path) {
    std::lock_guard lock(mutex_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it)
      if (it->first == path) {
        entries_.splice(entries_.begin(), entries_, it);
        pp_key_retain(it->second);
        return it->second;
      }
    return nullptr;
  }

  // Caches `key` (taking over the caller's reference) unless another thread cached `path`
  // meanwhile; returns the key the caller should use, with one reference for the caller.
  pp_key* insert(const std::string& path, pp_key* key) {
    pp_key* result = key;
    pp_key* release = nullptr;  // released outside the lock: the last release frees a large key
    try {
      std::lock_guard lock(mutex_);
      const auto it = std::find_if(entries_.begin(), entries_.end(), [&](const auto& e) { return e.first == path; });
      if (it != entries_.end()) {
        pp_key_retain(it->second);
        result = it->second;
        release = key;
      } else {
        entries_.emplace_front(path, key);
        pp_key_retain(key);  // the cache's reference
        if (entries_.size() > kEntries) {
          release = entries_.back().second;
          entries_.pop_back();
        }
      }
    } catch (...) {
      pp_key_release(key);
      throw;
    }
    pp_key_release(release);
    return result;
  }

  // Drops the cache's references to `key`.
  void evict(const pp_key* key) {
    std::vector<pp_key*> dropped;
    {
      std::lock_guard lock(mutex_);
      for (auto it = entries_.begin(); it != entries_.end();)
        if (it->second == key) {
          dropped.push_back(it->second);
          it = entries_.erase(it);
        } else {
          ++it;
        }
    }
    for (pp_key* k : dropped) pp_key_release(k);
  }

 private:
  std::mutex mutex_;
  std::list<std::pair<std::string, pp_key*>> entries_;
};

KeyCache& key_cache() {
  static KeyCache* cache = new KeyCache;  // never destroyed: keys may be in use at exit
  return *cache;
}

// The key of `path`, with one reference for the caller.
pp_key* load_key(const char* path) {
  // open() first, so that a missing or unreadable file is reported with its errno (ENOENT,
  // EACCES, ...) as SupraSeal does.
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    throw Failure{e, std::string("create_SRS: cannot open \"") + path + "\": " + std::generic_category().message(e)};
  }
  ::close(fd);
  pp_key* key = nullptr;
  pp_error err;
  if (pp_key_load(path, 0, &key, &err) != PP_OK)
    throw Failure{errno_of(err.code), std::string("create_SRS: \"") + path + "\" is not a usable .params file: " +
                                          err.message};
  return key;
}

// ----- validation ----------------------------------------------------------------------------

std::string circuit(std::size_t i) { return "provers[" + std::to_string(i) + "]"; }

// Set bits among the first `bits` bits of `words` (ceil(bits / 64) words are read).
std::size_t popcount_bits(const uint64_t* words, std::size_t bits) {
  std::size_t n = 0;
  const std::size_t full = bits / 64;
  for (std::size_t w = 0; w < full; ++w) n += std::size_t(std::popcount(words[w]));
  if (bits % 64) n += std::size_t(std::popcount(words[full] & ((uint64_t(1) << (bits % 64)) - 1)));
  return n;
}

// True when bits at or past `bits` are set in the last word (pp_prove wants them clear;
// bellperson's bit vectors keep them clear, SupraSeal ignores them).
bool stray_bits(const uint64_t* words, std::size_t bits) {
  return bits % 64 != 0 && (words[bits / 64] >> (bits % 64)) != 0;
}

// blst_fr limbs below r (pp_prove checks this too; here the message names the ABI's array).
bool reduced(const blst_fr& x) {
  pp::Fr f;
  std::memcpy(&f, &x, sizeof f);  // the same layout (static_assert above)
  return f.is_reduced();
}

void check_circuit(const std::string& fn, const Assignment& p, std::size_t i, const pp_key_info& key) {
  const std::string at = circuit(i) + ".";
  auto fail = [&](const std::string& what) { throw Failure{EINVAL, fn + at + what}; };
  auto expect_size = [&](const char* field, std::size_t got, uint64_t want, const char* of_key) {
    if (got != want)
      fail(std::string(field) + " is " + std::to_string(got) + ", the SRS has " + std::to_string(want) + " " +
           of_key);
  };
  // Sizes first: nothing is read before they are known to match the key.
  expect_size("inp_assignment_size", p.inp_assignment_size, key.num_inputs, "public inputs (IC points)");
  expect_size("aux_assignment_size", p.aux_assignment_size, key.num_aux, "aux variables (L points)");
  expect_size("b_inp_bit_len", p.b_inp_bit_len, key.num_inputs, "public inputs (IC points)");
  expect_size("a_aux_bit_len", p.a_aux_bit_len, key.num_aux, "aux variables (L points)");
  expect_size("b_aux_bit_len", p.b_aux_bit_len, key.num_aux, "aux variables (L points)");
  if (p.abc_size == 0) fail("abc_size is 0");
  if (p.abc_size > key.domain_size)
    fail("abc_size is " + std::to_string(p.abc_size) + ", above the SRS's evaluation domain of " +
         std::to_string(key.domain_size));
  // A bellman key (n - 1 H points) is made for the domain of its circuit's row count: the
  // smallest power of two holding abc_size rows must be the key's (pp's prover checks the same).
  if (key.h + 1 == key.domain_size && std::bit_ceil(p.abc_size) != key.domain_size)
    fail("abc_size is " + std::to_string(p.abc_size) + ": its evaluation domain is " +
         std::to_string(std::bit_ceil(p.abc_size)) + ", the SRS's is " + std::to_string(key.domain_size) +
         " (a circuit of this key has " + std::to_string(key.domain_size / 2 + 1) + ".." +
         std::to_string(key.domain_size) + " rows)");
  // Pointers.
  if (!p.a) fail("a is NULL");
  if (!p.b) fail("b is NULL");
  if (!p.c) fail("c is NULL");
  if (!p.inp_assignment_data) fail("inp_assignment_data is NULL");
  if (!p.aux_assignment_data && p.aux_assignment_size > 0) fail("aux_assignment_data is NULL");
  if (!p.a_aux_density && p.a_aux_bit_len > 0) fail("a_aux_density is NULL");
  if (!p.b_inp_density && p.b_inp_bit_len > 0) fail("b_inp_density is NULL");
  if (!p.b_aux_density && p.b_aux_bit_len > 0) fail("b_aux_density is NULL");
  // Popcounts: what the density words hold, and what the key's queries were made for.
  auto expect_popcount = [&](const char* field, std::size_t claimed, const uint64_t* words, std::size_t bits,
                             const char* density) {
    const std::size_t real = words ? popcount_bits(words, bits) : 0;
    if (claimed != real)
      fail(std::string(field) + " is " + std::to_string(claimed) + ", but " + density + " has " +
           std::to_string(real) + " of its " + std::to_string(bits) + " bits set");
  };
  expect_popcount("a_aux_popcount", p.a_aux_popcount, p.a_aux_density, p.a_aux_bit_len, "a_aux_density");
  expect_popcount("b_inp_popcount", p.b_inp_popcount, p.b_inp_density, p.b_inp_bit_len, "b_inp_density");
  expect_popcount("b_aux_popcount", p.b_aux_popcount, p.b_aux_density, p.b_aux_bit_len, "b_aux_density");
  if (p.inp_assignment_size + p.a_aux_popcount != key.a)
    fail("inp_assignment_size + a_aux_popcount is " + std::to_string(p.inp_assignment_size + p.a_aux_popcount) +
         ", the SRS has " + std::to_string(key.a) + " A points (the densities are not the key's circuit)");
  if (p.b_inp_popcount + p.b_aux_popcount != key.b_g1)
    fail("b_inp_popcount + b_aux_popcount is " + std::to_string(p.b_inp_popcount + p.b_aux_popcount) +
         ", the SRS has " + std::to_string(key.b_g1) + " B points (the densities are not the key's circuit)");
}

// A density as pp_prove takes it: the caller's words, or a copy with the bits past the end
// cleared when the caller left some set there.
const uint64_t* density_words(const uint64_t* words, std::size_t bits, std::vector<std::vector<uint64_t>>& copies) {
  if (!words || !stray_bits(words, bits)) return words;
  std::vector<uint64_t>& copy = copies.emplace_back(words, words + (bits + 63) / 64);
  copy.back() &= (uint64_t(1) << (bits % 64)) - 1;
  return copy.data();
}

// One compressed proof (pp_prove's 192 bytes) into blst's affine coordinates.
void decode_proof(const std::string& fn, groth16_proof& out, const uint8_t* bytes, std::size_t i) {
  pp::G1Affine a, c;
  pp::G2Affine b;
  const pp::DecodeError ea = pp::decode_g1(a, std::span<const uint8_t>(bytes, 48), pp::SubgroupCheck::no);
  const pp::DecodeError eb = pp::decode_g2(b, std::span<const uint8_t>(bytes + 48, 96), pp::SubgroupCheck::no);
  const pp::DecodeError ec = pp::decode_g1(c, std::span<const uint8_t>(bytes + 144, 48), pp::SubgroupCheck::no);
  for (const auto& [e, what] : {std::pair{ea, "A"}, std::pair{eb, "B"}, std::pair{ec, "C"}})
    if (e != pp::DecodeError::ok)
      throw Failure{ENOTRECOVERABLE, fn + "proof " + std::to_string(i) + "." + what +
                                         " from the prover does not decode (" + pp::to_string(e) + ")"};
  std::memcpy(&out.a, &a, sizeof out.a);
  std::memcpy(&out.b, &b, sizeof out.b);
  std::memcpy(&out.c, &c, sizeof out.c);
}

RustError create_srs(SRS* ret, const char* srs_path, bool cache) {
  if (!ret) return to_rust(EINVAL, "create_SRS: ret is NULL");
  if (!srs_path) return to_rust(EINVAL, "create_SRS: srs_path is NULL");
  pp_key* key = nullptr;
  if (cache) {
    const std::string path(srs_path);
    key = key_cache().find(path);
    if (!key) key = key_cache().insert(path, load_key(srs_path));
  } else {
    key = load_key(srs_path);
  }
  ret->ptr = key;
  return ok();
}

}  // namespace

Failure failure_of(const std::string& fn, const pp_error& err) {
  return Failure{errno_of(err.code), fn + in_abi_terms(err.message)};
}

Call prepare_call(const std::string& fn, const Assignment* provers, std::size_t num_circuits, const blst_fr* r_s,
                  const blst_fr* s_s, const SRS* srs) {
  auto fail = [&](const std::string& what) { throw Failure{EINVAL, fn + what}; };
  if (!provers) fail("provers is NULL");
  if (num_circuits == 0) fail("num_circuits is 0");
  if (num_circuits > std::numeric_limits<std::size_t>::max() / PP_PROOF_BYTES)
    fail("num_circuits " + std::to_string(num_circuits) + " is too large");
  if (!r_s) fail("r_s is NULL");
  if (!s_s) fail("s_s is NULL");
  if (!srs) fail("srs is NULL");
  Call call;
  call.key = key_of(srs);
  if (!call.key) fail("srs holds no key (srs->ptr is NULL)");

  pp_key_info info;
  pp_error err;
  if (pp_key_info_get(call.key, &info, &err) != PP_OK) throw Failure{errno_of(err.code), fn + err.message};
  for (std::size_t i = 0; i < num_circuits; ++i) {
    check_circuit(fn, provers[i], i, info);
    if (!reduced(r_s[i])) fail("r_s[" + std::to_string(i) + "] is not a reduced scalar (limbs >= r)");
    if (!reduced(s_s[i])) fail("s_s[" + std::to_string(i) + "] is not a reduced scalar (limbs >= r)");
  }

  call.engine = shared_engine();
  call.inputs.resize(num_circuits);
  for (std::size_t i = 0; i < num_circuits; ++i) {
    const Assignment& p = provers[i];
    pp_input& in = call.inputs[i];
    std::memset(&in, 0, sizeof in);
    in.kind = PP_INPUT_ASSIGNMENT;
    pp_assignment& as = in.assignment;
    as.a = reinterpret_cast<const uint8_t*>(p.a);
    as.b = reinterpret_cast<const uint8_t*>(p.b);
    as.c = reinterpret_cast<const uint8_t*>(p.c);
    as.num_rows = p.abc_size;
    as.input = reinterpret_cast<const uint8_t*>(p.inp_assignment_data);
    as.num_inputs = p.inp_assignment_size;
    as.aux = reinterpret_cast<const uint8_t*>(p.aux_assignment_data);
    as.num_aux = p.aux_assignment_size;
    as.a_aux_density = density_words(p.a_aux_density, p.a_aux_bit_len, call.density_copies);
    as.a_aux_density_words = (p.a_aux_bit_len + 63) / 64;
    as.b_input_density = density_words(p.b_inp_density, p.b_inp_bit_len, call.density_copies);
    as.b_input_density_words = (p.b_inp_bit_len + 63) / 64;
    as.b_aux_density = density_words(p.b_aux_density, p.b_aux_bit_len, call.density_copies);
    as.b_aux_density_words = (p.b_aux_bit_len + 63) / 64;
    in.r = reinterpret_cast<const uint8_t*>(&r_s[i]);
    in.s = reinterpret_cast<const uint8_t*>(&s_s[i]);
  }
  return call;
}

void decode_proofs(const std::string& fn, const uint8_t* compressed, std::size_t n, groth16_proof* out) {
  for (std::size_t i = 0; i < n; ++i) decode_proof(fn, out[i], compressed + i * PP_PROOF_BYTES, i);
}

}  // namespace pp::supraseal

using namespace pp::supraseal;

extern "C" {

PP_SUPRASEAL_API RustError create_SRS(SRS* ret, const char* srs_path, bool cache) {
  return guarded("create_SRS", [&] { return create_srs(ret, srs_path, cache); });
}

PP_SUPRASEAL_API void evict_SRS(const SRS* by_ref) {
  pp_key* key = key_of(by_ref);
  if (!key) return;
  try {
    key_cache().evict(key);
  } catch (...) {
    // std::mutex::lock may throw std::system_error; nothing may leave a C function.
  }
  pp_key_evict(key, nullptr);
}

PP_SUPRASEAL_API void drop_SRS(const SRS* by_ref) { pp_key_release(key_of(by_ref)); }

PP_SUPRASEAL_API SRS clone_SRS(const SRS* by_ref) {
  pp_key* key = key_of(by_ref);
  pp_key_retain(key);
  return SRS{key};
}

PP_SUPRASEAL_API int proofpipe_engine_counters(uint64_t* partitions, double* ms_gpu_busy, uint32_t* gpus) {
  try {
    pp_engine_stats stats;
    if (pp_engine_stats_get(shared_engine(), &stats, nullptr) != PP_OK) return -1;
    if (partitions) *partitions = stats.partitions_proven;
    if (ms_gpu_busy) *ms_gpu_busy = stats.ms_gpu_busy;
    if (gpus) *gpus = stats.gpus;
    return 0;
  } catch (...) {
    return -1;
  }
}

}  // extern "C"
