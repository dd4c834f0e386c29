// SPDX-License-Identifier: Apache-2.0 OR MIT
// `proofpipe serve`: the gRPC service proofpipe.v1.Prover (proto/proofpipe/v1/prover.proto) over
// one process-wide engine reached through the C API, a key cache, a priority scheduler and the
// SQLite journal (docs/SERVICE.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "paths.hpp"
#include "proofpipe/engine_options.hpp"

namespace pp::service {

struct ServiceConfig {
  // host:port; port 0 picks a free port (Daemon::port()). Beyond loopback only with a token or
  // TLS. Empty: no gRPC server at all, the handlers are called in-process (server_testing.hpp).
  std::string listen = "127.0.0.1:0";
  std::filesystem::path data_root;      // every client path lies under it
  std::filesystem::path state_dir;      // the journal; empty: <data_root>/.proofpipe-state
  // postgresql://USER:PASSWORD@HOST:PORT/DB: the job store many daemons share (every path must
  // then name the same file on every host). Empty: the SQLite journal in state_dir.
  std::string queue;
  // A claimed job's lease: renewed every third of it (at least every second); a daemon silent
  // for longer loses its jobs to the others (with --queue).
  int64_t lease_ms = 30000;
  EngineOptions engine;                 // --cpu, --devices, --gw, --vram-budget, --host-budget, --threads
  int jobs_in_flight = 2;               // jobs proving at once (the engine overlaps them)
  uint32_t max_queue = 10000;           // queued + running jobs beyond which Submit is refused
  double retention_hours = 24;          // finished jobs older than this are deleted
  std::size_t max_message_bytes = std::size_t(64) << 20;  // largest request accepted
  // Authentication. token_file: its first line is a bearer token every call must carry
  // (metadata `authorization: Bearer <token>`). tls_cert + tls_key: PEM files; the server speaks
  // TLS only. Either one allows a non-loopback `listen`.
  std::filesystem::path token_file;
  std::filesystem::path tls_cert, tls_key;
  // Prometheus text at http://METRICS/metrics (a loopback host:port; port 0: a free port,
  // Daemon::metrics_port()). Empty: no metrics endpoint.
  std::string metrics;
};

class Daemon {
 public:
  // Opens the journal (re-queueing what was queued or running), creates the engine, starts the
  // workers and the gRPC server. std::invalid_argument / std::runtime_error when it cannot.
  explicit Daemon(const ServiceConfig& config);
  ~Daemon();  // shutdown() if not done
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  int port() const;        // the port listened on
  int metrics_port() const;  // the metrics endpoint's port (0: none)
  std::size_t recovered() const;  // jobs queued in the store at start-up (re-queued ones included)
  const std::string& owner() const;  // this daemon's name in the store (host-pid-random)
  std::string store() const;         // the journal's file, or --queue's URI without its password
  // Stops accepting calls, ends the calls in progress, interrupts running jobs (they go back to
  // the queue in the journal) and waits for the workers. Idempotent.
  void shutdown();

  struct Impl;
  Impl& impl() { return *impl_; }  // server_testing.hpp's handlers()

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace pp::service
