#include "metrics.hpp"

#include <fmt/core.h>
#include <httplib.h>

#include <charconv>
#include <chrono>
#include <cmath>
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

}  // namespace

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
