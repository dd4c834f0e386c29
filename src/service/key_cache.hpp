// SPDX-License-Identifier: Apache-2.0 OR MIT
// The daemon's key cache (docs/SERVICE.md, "How it proves"): the canonical key path to a key on
// the C API's engine, loaded on first use (or by PreloadKey) and kept until EvictKey; a key
// changed on disk is not reloaded until then.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include "inputs.hpp"
#include "proofpipe/proofpipe.h"

namespace pp::service {

// A key of the key cache, on the C API's engine: a bellperson .params or a snarkjs .zkey.
struct LoadedKey {
  std::shared_ptr<pp_key> key;
  bool snarkjs = false;        // a .zkey: its jobs prove .wtns files and keep snarkjs's JSON
  std::size_t num_public = 0;  // a .zkey's public signals (nPublic)
  pp_curve curve = PP_CURVE_BLS12_381;     // the key's curve (a bn128 .zkey: BN254)
  std::size_t proof_bytes = PP_PROOF_BYTES;  // of one proof (pp_key_info.proof_bytes)
  bool loaded() const { return bool(key); }
};

class KeyCache {
 public:
  // The loaded key (loading it on first use: one load at a time per key, others wait for it);
  // *load_ms is the time this call spent loading. RequestError (invalid_argument, naming
  // key_path) when it cannot be loaded; the entry is then dropped.
  LoadedKey get(const ResolvedKey& key, double* load_ms);

  // Drops the key's entry and its GPU copies (running jobs hold their own reference; the GPUs'
  // copies go now, or when their partitions end). The file's size when it was loaded; 0 when
  // it was not in the cache.
  uint64_t evict(const std::filesystem::path& key);

  // f(path, key, file_bytes) for every loaded key, under that key's load lock; a key still
  // loading is left out.
  using Visit = std::function<void(const std::filesystem::path&, const LoadedKey&, uint64_t file_bytes)>;
  void for_each_loaded(const Visit& f);

  void clear();

 private:
  struct Entry {
    std::mutex load_mu;  // one load at a time per key; others wait for it
    LoadedKey loaded;
    std::filesystem::path path;
    uint64_t file_bytes = 0;
  };
  std::shared_ptr<Entry> entry(const std::filesystem::path& key);

  std::mutex mu_;
  std::map<std::filesystem::path, std::shared_ptr<Entry>> keys_;
};

}  // namespace pp::service
