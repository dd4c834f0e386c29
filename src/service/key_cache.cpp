// SPDX-License-Identifier: Apache-2.0 OR MIT
#include "key_cache.hpp"

#include <fmt/core.h>

#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "clock.hpp"
#include "errors.hpp"

namespace pp::service {

namespace fs = std::filesystem;

std::shared_ptr<KeyCache::Entry> KeyCache::entry(const fs::path& key) {
  std::lock_guard lock(mu_);
  auto& slot = keys_[key];
  if (!slot) {
    slot = std::make_shared<Entry>();
    slot->path = key;
  }
  return slot;
}

LoadedKey KeyCache::get(const ResolvedKey& key, double* load_ms) {
  const std::shared_ptr<Entry> e = entry(key.path);
  std::lock_guard load(e->load_mu);
  if (e->loaded.loaded()) return e->loaded;
  const auto t0 = Clock::now();
  std::string error;
  pp_error err;
  pp_key* k = nullptr;
  pp_key_info ki;
  if (pp_key_load(key.path.c_str(), 0, &k, &err) == PP_OK) {
    e->loaded.key = std::shared_ptr<pp_key>(k, pp_key_release);
    e->loaded.snarkjs = key.kind == KeyKind::snarkjs;
    if (pp_key_info_get(k, &ki, &err) != PP_OK) throw std::runtime_error(err.message);
    e->loaded.num_public = ki.num_inputs - 1;
    e->loaded.curve = pp_curve(ki.curve);
    e->loaded.proof_bytes = ki.proof_bytes;
  } else {
    error = err.message;
  }
  if (!e->loaded.loaded()) {
    std::lock_guard lock(mu_);
    if (auto it = keys_.find(key.path); it != keys_.end() && it->second == e) keys_.erase(it);
    throw RequestError(ErrorCode::invalid_argument, fmt::format("key_path: {}", error));
  }
  std::error_code ec;
  e->file_bytes = fs::file_size(key.path, ec);
  if (load_ms) *load_ms = ms_since(t0);
  return e->loaded;
}

uint64_t KeyCache::evict(const fs::path& key) {
  std::shared_ptr<Entry> e;
  {
    std::lock_guard lock(mu_);
    if (auto it = keys_.find(key); it != keys_.end()) {
      e = it->second;
      keys_.erase(it);
    }
  }
  if (!e) return 0;
  std::lock_guard load(e->load_mu);
  // Running jobs hold their own reference; the GPUs' copies go now (or when their partitions end).
  if (e->loaded.key) pp_key_evict(e->loaded.key.get(), nullptr);
  e->loaded = {};
  return e->file_bytes;
}

void KeyCache::for_each_loaded(const Visit& f) {
  std::vector<std::shared_ptr<Entry>> entries;
  {
    std::lock_guard lock(mu_);
    for (const auto& [path, e] : keys_) entries.push_back(e);
  }
  for (const auto& e : entries) {
    std::unique_lock load(e->load_mu, std::try_to_lock);  // a key still loading is left out
    if (load.owns_lock() && e->loaded.loaded()) f(e->path, e->loaded, e->file_bytes);
  }
}

void KeyCache::clear() {
  std::lock_guard lock(mu_);
  keys_.clear();
}

}  // namespace pp::service
