// SPDX-License-Identifier: Apache-2.0 OR MIT
// The daemon's Prometheus endpoint (--metrics HOST:PORT, docs/SERVICE.md): the text exposition
// format 0.0.4, the daemon's metrics in it, and a small HTTP server (Debian's cpp-httplib)
// answering GET /metrics.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "job_store.hpp"
#include "proofpipe/proofpipe.h"

namespace pp::service {

// The RPCs of proofpipe.v1.Prover (the request counters are indexed by them).
enum class Rpc { Submit, Await, Prove, Cancel, Watch, GetStatus, PreloadKey, EvictKey, count };
const char* rpc_name(Rpc rpc);

// grpc::StatusCode's values, 0 (OK) .. 16 (UNAUTHENTICATED).
constexpr std::size_t kStatusCodes = 17;

// Counters since start-up: calls answered by RPC and status code; jobs this daemon brought to a
// final state, by JobState.
using RequestCounts = std::array<std::array<std::atomic<uint64_t>, kStatusCodes>, std::size_t(Rpc::count)>;
using FinishedCounts = std::array<std::atomic<uint64_t>, 6>;

// What one scrape reports, gathered by the daemon.
struct DaemonMetrics {
  pp_engine_stats engine{};
  std::vector<pp_gpu_info> gpus;             // the engine's GPUs (none on the CPU prover)
  std::map<JobState, uint64_t> jobs;         // the store's jobs by state (every daemon's with --queue)
  std::size_t running = 0;                   // jobs this daemon is proving
  std::size_t keys_loaded = 0, keys_device_resident = 0;
  const FinishedCounts* finished = nullptr;
  const RequestCounts* requests = nullptr;
  uint64_t host_budget_bytes = 0;
  uint64_t rss_bytes = 0;
  double uptime_s = 0;
};

// One scrape of --metrics (Prometheus text format 0.0.4).
std::string metrics_text(const DaemonMetrics& m);

// Builds a scrape: family() writes a metric family's # HELP and # TYPE lines, sample() one
// sample line, with label values escaped as the format wants (\\, \", \n).
class PromText {
 public:
  using Labels = std::initializer_list<std::pair<std::string_view, std::string_view>>;
  // type: "counter" or "gauge".
  void family(std::string_view name, std::string_view help, std::string_view type);
  void sample(std::string_view name, double value, Labels labels = {});
  const std::string& str() const { return text_; }

 private:
  std::string text_;
};

class MetricsServer {
 public:
  // Serves render() at http://LISTEN/metrics on a thread of its own; port 0 picks a free port.
  // `listen` must be a loopback host:port (the endpoint has no authentication).
  // std::invalid_argument naming --metrics when it is not, or when the port cannot be bound.
  MetricsServer(const std::string& listen, std::function<std::string()> render);
  ~MetricsServer();  // stop()
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  int port() const;
  void stop();  // idempotent

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace pp::service
