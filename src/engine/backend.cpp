// SPDX-License-Identifier: Apache-2.0 OR MIT
// The device interface's shared pieces: runtime-call counting, device busy intervals, host sizes.
#include "proofpipe/engine/backend.hpp"
#include "proofpipe/engine/plan.hpp"

#include <algorithm>

namespace pp::engine {

const char* to_string(DeviceCall call) {
  switch (call) {
    case DeviceCall::malloc: return "malloc";
    case DeviceCall::free: return "free";
    case DeviceCall::mem_get_info: return "mem_get_info";
    case DeviceCall::device_synchronize: return "device_synchronize";
    case DeviceCall::mem_pool_trim: return "mem_pool_trim";
    case DeviceCall::host_register: return "host_register";
    case DeviceCall::memcpy_async: return "memcpy_async";
    case DeviceCall::kernel_launch: return "kernel_launch";
    case DeviceCall::event_record: return "event_record";
    case DeviceCall::stream_wait_event: return "stream_wait_event";
    case DeviceCall::event_synchronize: return "event_synchronize";
    case DeviceCall::memset_async: return "memset_async";
    case DeviceCall::stream_synchronize: return "stream_synchronize";
    case DeviceCall::host_query: return "host_query";
    case DeviceCall::count_: break;
  }
  return "?";
}

bool is_forbidden(DeviceCall call) {
  switch (call) {
    case DeviceCall::malloc:
    case DeviceCall::free:
    case DeviceCall::mem_get_info:
    case DeviceCall::device_synchronize:
    case DeviceCall::mem_pool_trim:
    case DeviceCall::host_register: return true;
    default: return false;
  }
}

namespace {
thread_local DeviceCalls* t_current = nullptr;
}  // namespace

DeviceCalls* current_calls() { return t_current; }
void count_call(DeviceCall call) {
  if (t_current) t_current->count(call);
}
CallScope::CallScope(DeviceCalls* calls) : previous_(t_current) { t_current = calls; }
CallScope::~CallScope() { t_current = previous_; }

uint64_t DeviceCalls::forbidden() const {
  uint64_t n = 0;
  for (int k = 0; k < int(DeviceCall::count_); ++k)
    if (is_forbidden(DeviceCall(k))) n += calls(DeviceCall(k));
  return n;
}

std::string DeviceCalls::describe() const {
  std::string out;
  for (int k = 0; k < int(DeviceCall::count_); ++k) {
    const uint64_t n = calls(DeviceCall(k));
    if (n == 0) continue;
    if (!out.empty()) out += ' ';
    out += std::string(to_string(DeviceCall(k))) + "=" + std::to_string(n);
  }
  return out.empty() ? "none" : out;
}

void DeviceTimeline::record(DeviceInterval interval) {
  std::lock_guard lock(mu_);
  intervals_.push_back(std::move(interval));
}

std::vector<DeviceInterval> DeviceTimeline::snapshot() const {
  std::lock_guard lock(mu_);
  return intervals_;
}

Clock::duration DeviceTimeline::busy(const std::string& queue, Clock::time_point from, Clock::time_point to) const {
  std::vector<std::pair<Clock::time_point, Clock::time_point>> spans;
  {
    std::lock_guard lock(mu_);
    for (const auto& i : intervals_) {
      if (i.queue != queue) continue;
      const auto s = std::max(i.start, from), e = std::min(i.end, to);
      if (s < e) spans.emplace_back(s, e);
    }
  }
  std::sort(spans.begin(), spans.end());
  Clock::duration total{0};
  Clock::time_point cur_s{}, cur_e{};
  bool open = false;
  for (const auto& [s, e] : spans) {
    if (open && s <= cur_e) {
      cur_e = std::max(cur_e, e);
      continue;
    }
    if (open) total += cur_e - cur_s;
    cur_s = s;
    cur_e = e;
    open = true;
  }
  if (open) total += cur_e - cur_s;
  return total;
}

uint64_t witness_bytes(const Witness& w) { return witness_bytes(w.a.size(), w.input.size(), w.aux.size()); }
uint64_t witness_bytes(const bn254::Witness& w) { return witness_bytes(w.a.size(), w.input.size(), w.aux.size()); }

template <class E>
uint64_t BackendOf<E>::host_bytes(const Task& task) const {
  return task.witness ? witness_bytes(*task.witness) : 0;
}

template class BackendOf<Bls12_381>;
template class BackendOf<bn254::Bn254>;

}  // namespace pp::engine
