// SPDX-License-Identifier: Apache-2.0 OR MIT
// A read-mostly array of trivially copyable elements in host memory that either owns its storage
// (a std::vector) or views storage someone else keeps alive. Two kinds of view:
// - mapped (view()): a memory-mapped file, kept alive by a keeper. The proving key's points live
//   in these when the key comes from a key cache (io/key_cache.hpp): the kernel reads the pages in
//   on access and the GPU prover hands them back (release_pages) once it has copied them to the
//   device, so a key resident on the GPU does not also sit in host memory.
// - borrowed (borrow()): a caller's memory that outlives every use, with no keeper: a C API caller's
//   witness arrays while pp_prove runs, proved where they lie instead of copied. Its pages are
//   never released (they are the caller's anonymous memory: dropping them would zero its data).
//
// Reading is the same for every kind. Writing (element assignment) is for owned arrays only:
// mappings are read-only, and a write through them would fault, so the mutable accessors throw
// std::logic_error for views.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

namespace pp {

template <class T>
class HostArray {
  static_assert(std::is_trivially_copyable_v<T>, "HostArray: trivially copyable elements only");

 public:
  using value_type = T;
  using const_iterator = const T*;

  HostArray() = default;
  HostArray(std::vector<T> v) : owned_(std::move(v)) { sync(); }  // NOLINT: a vector is an array
  HostArray(std::initializer_list<T> items) : owned_(items) { sync(); }
  HostArray(const HostArray& o)
      : owned_(o.is_view() ? std::vector<T>() : o.owned_), keeper_(o.keeper_), storage_(o.storage_) {
    if (is_view()) view_(o.data_, o.size_);
    else sync();
  }
  HostArray(HostArray&& o) noexcept
      : owned_(std::move(o.owned_)), keeper_(std::move(o.keeper_)), storage_(o.storage_) {
    if (is_view()) view_(o.data_, o.size_);
    else sync();
    o.reset_();
  }
  HostArray& operator=(HostArray o) noexcept {
    owned_ = std::move(o.owned_);
    keeper_ = std::move(o.keeper_);
    storage_ = o.storage_;
    if (is_view()) view_(o.data_, o.size_);
    else sync();
    o.reset_();
    return *this;
  }
  HostArray& operator=(std::vector<T> v) { return *this = HostArray(std::move(v)); }

  // Views `count` elements at `data`, kept alive by `keeper` (e.g. the mapping they lie in).
  static HostArray view(std::shared_ptr<const void> keeper, const T* data, std::size_t count) {
    HostArray a;
    a.keeper_ = std::move(keeper);
    a.storage_ = Storage::mapped;
    a.view_(data, count);
    return a;
  }
  // Views `count` elements at `data`, which the caller keeps alive and unchanged for as long as
  // this array or a copy of it is used.
  static HostArray borrow(const T* data, std::size_t count) {
    HostArray a;
    a.storage_ = Storage::borrowed;
    a.view_(data, count);
    return a;
  }

  bool is_view() const { return storage_ != Storage::owned; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  const T& front() const { return data_[0]; }
  const T& back() const { return data_[size_ - 1]; }
  operator std::span<const T>() const { return {data_, size_}; }  // NOLINT: read as a span anywhere
  std::span<const T> span() const { return {data_, size_}; }
  std::vector<T> to_vector() const { return std::vector<T>(begin(), end()); }

  // Writable access: owned arrays only (tests edit keys; readers fill them before they are shared).
  T* mutable_data() { return writable().data(); }
  T& at_mut(std::size_t i) { return writable().at(i); }
  void push_back(const T& x) {
    writable().push_back(x);
    sync();
  }

  // Hands the pages of elements [first, first + count) back to the kernel when this is a view of
  // a file mapping: they leave this process's resident set and are read again from the file (page
  // cache or disk) on the next access. Contents are unchanged; a no-op for owned and borrowed arrays.
  void release_pages(std::size_t first, std::size_t count) const {
    if (storage_ != Storage::mapped || count == 0 || first >= size_) return;
    if (count > size_ - first) count = size_ - first;
    constexpr std::uintptr_t kPage = 4096;
    const auto lo = reinterpret_cast<std::uintptr_t>(data_ + first), hi = reinterpret_cast<std::uintptr_t>(data_ + first + count);
    const std::uintptr_t a = (lo + kPage - 1) & ~(kPage - 1), b = hi & ~(kPage - 1);  // whole pages inside only
    if (b > a) ::madvise(reinterpret_cast<void*>(a), b - a, MADV_DONTNEED);  // advice: failure changes nothing
  }
  void release_pages() const { release_pages(0, size_); }

  friend bool operator==(const HostArray& x, const HostArray& y) {
    if (x.size_ != y.size_) return false;
    for (std::size_t i = 0; i < x.size_; ++i)
      if (!(x.data_[i] == y.data_[i])) return false;
    return true;
  }

 private:
  enum class Storage { owned, mapped, borrowed };

  std::vector<T>& writable() {
    if (is_view()) throw std::logic_error("HostArray: a view of storage it does not own (a mapped key, a caller's array) cannot be written");
    return owned_;
  }
  void sync() {
    data_ = owned_.data();
    size_ = owned_.size();
  }
  void view_(const T* data, std::size_t count) {
    data_ = data;
    size_ = count;
  }
  void reset_() {
    owned_.clear();
    keeper_.reset();
    storage_ = Storage::owned;
    data_ = nullptr;
    size_ = 0;
  }

  std::vector<T> owned_;
  std::shared_ptr<const void> keeper_;
  Storage storage_ = Storage::owned;
  const T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace pp
