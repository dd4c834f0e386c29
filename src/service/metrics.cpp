// SPDX-License-Identifier: Apache-2.0 OR MIT
#include "metrics.hpp"

#include <fmt/core.h>
#include <httplib.h>

#include <charconv>
#include <chrono>
#include <cmath>
#include <iterator>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "paths.hpp"

namespace pp::service {

namespace {

std::string escape(std::string_view s, bool quotes) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else if (c == '"' && quotes)
      out += "\\\"";
    else
      out += c;
  }
  return out;
}

std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);  // the shortest form that reads back the same
}

constexpr const char* kRpcNames[] = {"Submit", "Await", "Prove", "Cancel", "Watch", "GetStatus", "PreloadKey", "EvictKey"};
static_assert(std::size(kRpcNames) == std::size_t(Rpc::count));

// grpc::StatusCode's names, by number (0..16).
constexpr const char* kCodeNames[] = {"OK",           "CANCELLED",          "UNKNOWN",        "INVALID_ARGUMENT",
                                      "DEADLINE_EXCEEDED", "NOT_FOUND",     "ALREADY_EXISTS", "PERMISSION_DENIED",
                                      "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
                                      "UNIMPLEMENTED", "INTERNAL",          "UNAVAILABLE",    "DATA_LOSS",
                                      "UNAUTHENTICATED"};
static_assert(std::size(kCodeNames) == kStatusCodes);

const char* metric_state(JobState st) {
  switch (st) {
    case JobState::queued: return "queued";
    case JobState::running: return "running";
    case JobState::succeeded: return "succeeded";
    case JobState::failed: return "failed";
    case JobState::cancelled: return "cancelled";
  }
  return "unspecified";
}

}  // namespace

const char* rpc_name(Rpc rpc) { return kRpcNames[std::size_t(rpc)]; }

void PromText::family(std::string_view name, std::string_view help, std::string_view type) {
  text_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, escape(help, false), name, type);
}

void PromText::sample(std::string_view name, double value, Labels labels) {
  text_ += name;
  if (labels.size()) {
    text_ += '{';
    bool first = true;
    for (const auto& [key, val] : labels) {
      if (!first) text_ += ',';
      first = false;
      text_ += fmt::format("{}=\"{}\"", key, escape(val, true));
    }
    text_ += '}';
  }
  text_ += ' ';
  text_ += number(value);
  text_ += '\n';
}

std::string metrics_text(const DaemonMetrics& m) {
  const pp_engine_stats& s = m.engine;
  const auto& counts = m.jobs;
  const auto queued = counts.find(JobState::queued);
  const std::size_t depth = queued == counts.end() ? 0 : queued->second;  // the store's: every daemon's

  PromText t;
  constexpr JobState states[] = {JobState::queued, JobState::running, JobState::succeeded, JobState::failed,
                                 JobState::cancelled};
  t.family("proofpipe_jobs", "Jobs in the journal by state (finished ones until --retention-hours)", "gauge");
  for (JobState st : states) {
    const auto it = counts.find(st);
    t.sample("proofpipe_jobs", double(it == counts.end() ? 0 : it->second), {{"state", metric_state(st)}});
  }
  t.family("proofpipe_jobs_finished_total", "Jobs this daemon brought to a final state since it started", "counter");
  for (JobState st : {JobState::succeeded, JobState::failed, JobState::cancelled})
    t.sample("proofpipe_jobs_finished_total", double((*m.finished)[std::size_t(st)].load()),
             {{"state", metric_state(st)}});
  t.family("proofpipe_partitions_proved_total", "Partitions the engine proved since the daemon started", "counter");
  t.sample("proofpipe_partitions_proved_total", double(s.partitions_proven));
  t.family("proofpipe_queue_depth", "Jobs waiting for a slot (in the shared queue with --queue)", "gauge");
  t.sample("proofpipe_queue_depth", double(depth));
  t.family("proofpipe_jobs_running", "Jobs this daemon is proving now", "gauge");
  t.sample("proofpipe_jobs_running", double(m.running));
  t.family("proofpipe_keys_loaded", "Proving keys in the key cache (host memory)", "gauge");
  t.sample("proofpipe_keys_loaded", double(m.keys_loaded));
  t.family("proofpipe_keys_device_resident", "Keys of the key cache with a copy on some GPU", "gauge");
  t.sample("proofpipe_keys_device_resident", double(m.keys_device_resident));
  t.family("proofpipe_gpus", "GPUs the engine proves on (0: the CPU prover)", "gauge");
  t.sample("proofpipe_gpus", double(s.gpus));
  t.family("proofpipe_gpu_busy_ms_total", "Milliseconds some GPU ran kernels for the daemon's engine", "counter");
  t.sample("proofpipe_gpu_busy_ms_total", s.ms_gpu_busy);
  // A family with one sample per GPU, labelled by its CUDA ordinal.
  const auto per_gpu = [&](const char* name, const char* help, const char* type, auto value) {
    t.family(name, help, type);
    for (const pp_gpu_info& g : m.gpus) t.sample(name, double(value(g)), {{"gpu", std::to_string(g.device)}});
  };
  per_gpu("proofpipe_gpu_healthy", "1 per GPU the engine proves on; 0 once it was lost (its partitions go to the others)",
          "gauge", [](const pp_gpu_info& g) { return g.healthy; });
  per_gpu("proofpipe_gpu_partitions_total", "Partitions proved on each GPU", "counter",
          [](const pp_gpu_info& g) { return g.partitions; });
  per_gpu("proofpipe_gpu_handed_off_total", "Partitions a GPU held when it was lost, proved again on another", "counter",
          [](const pp_gpu_info& g) { return g.partitions_handed_off; });
  per_gpu("proofpipe_gpu_compute_ms_total", "Milliseconds each GPU's compute stream ran the daemon's partitions",
          "counter", [](const pp_gpu_info& g) { return g.ms_busy; });
  t.family("proofpipe_key_loads_total", "Proving keys uploaded to a GPU (or pinned there, when streamed)", "counter");
  t.sample("proofpipe_key_loads_total", double(s.key_loads));
  t.family("proofpipe_srs_streamed_bytes_total",
           "SRS bytes copied to the GPUs per partition of keys streamed from host memory (0 while keys are resident)",
           "counter");
  t.sample("proofpipe_srs_streamed_bytes_total", double(s.srs_bytes_streamed));
  t.family("proofpipe_device_memory_bytes",
           "Each GPU's memory: the card (total), what the keys may use (budget), what they use (used, peak)", "gauge");
  for (const pp_gpu_info& g : m.gpus) {
    const std::string gpu = std::to_string(g.device);
    t.sample("proofpipe_device_memory_bytes", double(g.memory_total), {{"gpu", gpu}, {"kind", "total"}});
    t.sample("proofpipe_device_memory_bytes", double(g.memory_budget), {{"gpu", gpu}, {"kind", "budget"}});
    t.sample("proofpipe_device_memory_bytes", double(g.memory_used), {{"gpu", gpu}, {"kind", "used"}});
    t.sample("proofpipe_device_memory_bytes", double(g.memory_peak), {{"gpu", gpu}, {"kind", "peak"}});
  }
  t.family("proofpipe_proofs_checked_total", "Proofs verified before release (retries included)", "counter");
  t.sample("proofpipe_proofs_checked_total", double(s.proofs_checked));
  t.family("proofpipe_proofs_rejected_total",
           "Proofs that did not verify and were proved again, by the GPU that made them (cpu: the CPU prover)",
           "counter");
  for (const pp_gpu_info& g : m.gpus)
    t.sample("proofpipe_proofs_rejected_total", double(g.proofs_rejected), {{"gpu", std::to_string(g.device)}});
  t.sample("proofpipe_proofs_rejected_total",
           double(s.gpus == 0 ? s.proofs_rejected : s.proofs_rejected_cpu), {{"gpu", "cpu"}});
  t.family("proofpipe_verify_ms_total", "Milliseconds spent verifying proofs before release", "counter");
  t.sample("proofpipe_verify_ms_total", s.ms_verify);
  per_gpu("proofpipe_device_resident_keys", "Keys with a copy on each GPU", "gauge",
          [](const pp_gpu_info& g) { return g.resident_keys; });
  t.family("proofpipe_host_budget_bytes",
           "Host memory partitions in flight and the GPU provers' holdings may use (--host-budget; 0: unlimited)", "gauge");
  t.sample("proofpipe_host_budget_bytes", double(m.host_budget_bytes));
  t.family("proofpipe_host_rss_bytes", "Resident set size of the daemon process", "gauge");
  t.sample("proofpipe_host_rss_bytes", double(m.rss_bytes));
  t.family("proofpipe_host_peak_bytes",
           "Peak host memory charged to the host budget: partitions in flight and the GPU provers' holdings", "gauge");
  t.sample("proofpipe_host_peak_bytes", double(s.host_peak_bytes));
  t.family("proofpipe_uptime_seconds", "Seconds since the daemon started", "gauge");
  t.sample("proofpipe_uptime_seconds", m.uptime_s);
  // Every RPC's OK series exists from the start; other codes once they happened.
  t.family("proofpipe_requests_total", "gRPC calls answered, by RPC and status code", "counter");
  for (std::size_t r = 0; r < std::size_t(Rpc::count); ++r)
    for (std::size_t code = 0; code < kStatusCodes; ++code)
      if (const uint64_t n = (*m.requests)[r][code].load(); n || code == 0)
        t.sample("proofpipe_requests_total", double(n), {{"rpc", kRpcNames[r]}, {"code", kCodeNames[code]}});
  return t.str();
}

struct MetricsServer::Impl {
  httplib::Server http;
  std::thread thread;
  int port = 0;
  std::once_flag stopped;
};

MetricsServer::MetricsServer(const std::string& listen, std::function<std::string()> render)
    : impl_(std::make_unique<Impl>()) {
  if (!is_loopback_listen(listen))
    throw std::invalid_argument(fmt::format(
        "--metrics {}: give a loopback host:port (127.0.0.1, ::1, localhost); the metrics endpoint has no "
        "authentication",
        listen));
  const std::size_t colon = listen.rfind(':');
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  int wanted = -1;
  const std::string_view digits = std::string_view(listen).substr(colon + 1);
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), wanted);
  if (ec != std::errc() || end != digits.data() + digits.size() || wanted > 65535)
    throw std::invalid_argument(fmt::format("--metrics {}: the port is not a number 0..65535", listen));

  Impl& s = *impl_;
  s.http.new_task_queue = [] { return new httplib::ThreadPool(2); };
  s.http.Get("/metrics", [render = std::move(render)](const httplib::Request&, httplib::Response& res) {
    try {
      res.set_content(render(), "text/plain; version=0.0.4; charset=utf-8");
    } catch (const std::exception& e) {
      res.status = 500;
      res.set_content(fmt::format("metrics: {}\n", e.what()), "text/plain");
    }
  });
  if (wanted == 0) {
    s.port = s.http.bind_to_any_port(host);
  } else if (s.http.bind_to_port(host, wanted)) {
    s.port = wanted;
  }
  if (s.port <= 0) throw std::invalid_argument(fmt::format("--metrics {}: cannot listen there (in use?)", listen));
  s.thread = std::thread([&s] { s.http.listen_after_bind(); });
  // httplib's stop() does nothing until the server runs: wait for it, so that stop() always stops.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!s.http.is_running() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (!s.http.is_running()) {
    stop();
    throw std::runtime_error(fmt::format("--metrics {}: the HTTP server did not start", listen));
  }
}

MetricsServer::~MetricsServer() { stop(); }

int MetricsServer::port() const { return impl_->port; }

void MetricsServer::stop() {
  std::call_once(impl_->stopped, [this] {
    impl_->http.stop();
    if (impl_->thread.joinable()) impl_->thread.join();
  });
}

}  // namespace pp::service
