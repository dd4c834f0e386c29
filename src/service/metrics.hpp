// The daemon's Prometheus endpoint (--metrics HOST:PORT, docs/SERVICE.md): the text exposition
// format 0.0.4 and a small HTTP server (Debian's cpp-httplib) answering GET /metrics.
#pragma once

#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace pp::service {

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
