// SPDX-License-Identifier: Apache-2.0 OR MIT
// `serve | submit | await | status` in the CLI: their options, and the module that runs them,
// loaded only when one of them is given.
//
// The daemon and its clients need gRPC, protobuf, abseil, OpenSSL, SQLite, libpq (and through it
// Kerberos, LDAP, GnuTLS): about 75 shared libraries. Linked into the CLI, the dynamic loader
// would map and relocate all of them for every command, most of the start-up time of a command
// that uses none of them and a large share of a small `proofpipe prove`. So they live in
// libproofpipe_service_cli.so beside the executable, loaded only for these four commands. The
// measurements: docs/perf-history/cpu-issue18.md, "Issue 18, fifth round".
#include <dlfcn.h>
#include <fmt/core.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "commands.hpp"
#include "service_commands.hpp"

namespace pp::cli {

std::shared_ptr<ServiceCommands> add_service_commands(CLI::App& app) {
  auto c = std::make_shared<ServiceCommands>();
  service::ServiceConfig& cfg = c->config;
  c->serve = app.add_subcommand("serve", "Run the proving daemon: gRPC API proofpipe.v1.Prover (docs/SERVICE.md)");
  c->serve->add_option("--listen", cfg.listen,
                       "host:port to listen on (port 0: any free port; beyond loopback only with --token-file or TLS)")
      ->capture_default_str();
  c->serve->add_option("--token-file", cfg.token_file,
                       "Every call must carry metadata 'authorization: Bearer <token>', the token being this file's "
                       "first line")
      ->check(CLI::ExistingFile);
  c->serve->add_option("--tls-cert", cfg.tls_cert, "TLS: the server's certificate chain (PEM); needs --tls-key")
      ->check(CLI::ExistingFile);
  c->serve->add_option("--tls-key", cfg.tls_key, "TLS: the certificate's private key (PEM, no passphrase)")
      ->check(CLI::ExistingFile);
  c->serve->add_option("--metrics", cfg.metrics,
                       "Serve Prometheus metrics at http://HOST:PORT/metrics (loopback only; port 0: any free port)");
  c->serve->add_option("--data-root", cfg.data_root, "Directory every key and witness path is relative to (and inside)")
      ->required()
      ->check(CLI::ExistingDirectory);
  c->serve->add_option("--state", cfg.state_dir, "Directory of the job journal (default: DATA_ROOT/.proofpipe-state)");
  c->serve->add_option("--queue", cfg.queue,
                       "postgresql://USER:PASSWORD@HOST:PORT/DB: pull jobs from this PostgreSQL database, shared "
                       "with other daemons, instead of the journal in --state (paths must then name the same files "
                       "on every host)");
  c->serve->add_option("--lease-ms", cfg.lease_ms,
                       "A claimed job's lease, renewed every third of it: a daemon silent for longer loses its "
                       "jobs to the other daemons (--queue)")
      ->check(CLI::Range(int64_t(100), int64_t(3600000)))
      ->capture_default_str();
  add_engine_options(c->serve, cfg.engine);
  c->serve->add_option("--jobs", cfg.jobs_in_flight, "Jobs proving at once (the engine overlaps them)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  c->serve->add_option("--max-queue", cfg.max_queue, "Queued + running jobs beyond which Submit answers RESOURCE_EXHAUSTED")
      ->check(CLI::Range(1u, 10000000u))
      ->capture_default_str();
  c->serve->add_option("--retention-hours", cfg.retention_hours, "Finished jobs are deleted from the journal after this")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  c->serve->add_option("--max-message", cfg.max_message_bytes, "Largest request in bytes (inline witnesses)")
      ->check(CLI::Range(std::size_t(1) << 16, std::size_t(1) << 31))
      ->capture_default_str();

  auto server_option = [&](CLI::App* cmd) {
    cmd->add_option("--server", c->server, "Daemon address host:port")->capture_default_str();
    cmd->add_option("--token-file", c->token_file, "Send the bearer token on this file's first line")
        ->check(CLI::ExistingFile);
    cmd->add_option("--tls-ca", c->tls_ca, "Connect over TLS, trusting this CA certificate (PEM)")
        ->check(CLI::ExistingFile);
  };
  c->submit = app.add_subcommand("submit", "Submit a job to a daemon; prints the job id (or, with --wait, its end)");
  server_option(c->submit);
  c->submit->add_option("--key", c->key, "Proving key (.params or .zkey), relative to the daemon's --data-root")
      ->required();
  c->submit->add_option("--witness", c->witnesses,
                        "Witness per partition, in order, relative to --data-root (.ppw; one .wtns for a .zkey)")
      ->required();
  c->submit->add_flag("--inline", c->inline_witnesses, "Send the witness files' bytes (local paths) instead of their paths");
  c->submit->add_option("--request-id", c->request_id, "Idempotency key: a retried submit returns the same job");
  c->submit->add_option("--priority", c->priority, "Higher runs first")->capture_default_str();
  c->submit->add_flag("--wait", c->wait, "Wait for the job to finish (a progress bar on a terminal), print its state");
  c->submit->add_option("--out", c->out, "With --wait: write the proofs here (192 bytes each; snarkjs: proof.json)");
  c->submit->add_option("--public", c->public_out, "With --wait, a snarkjs job: write public.json here");

  c->await = app.add_subcommand("await", "Wait for a job and print its state; write its proofs with --out");
  server_option(c->await);
  c->await->add_option("--job", c->job, "Job id")->required();
  c->await->add_option("--out", c->out, "Write the proofs here (192 bytes each; snarkjs: proof.json)");
  c->await->add_option("--public", c->public_out, "A snarkjs job: write public.json here");

  c->status = app.add_subcommand("status", "Print a daemon's status (JSON): engine, keys, queue, memory");
  server_option(c->status);
  return c;
}

std::optional<int> run_service_commands(const ServiceCommands& c, int threads) {
  if (!c.serve->parsed() && !c.submit->parsed() && !c.await->parsed() && !c.status->parsed()) return std::nullopt;
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find the proofpipe executable (/proc/self/exe): " + ec.message());
  const std::filesystem::path module = exe.parent_path() / "libproofpipe_service_cli.so";
  // Never closed: the daemon's threads and static objects live until the process exits.
  void* handle = dlopen(module.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) throw std::runtime_error(fmt::format("cannot load the service module: {}", dlerror()));
  auto* run = reinterpret_cast<decltype(&pp_cli_run_service_command)>(dlsym(handle, "pp_cli_run_service_command"));
  if (!run) throw std::runtime_error(fmt::format("{}: no pp_cli_run_service_command", module.string()));
  return run(&c, threads);
}

}  // namespace pp::cli
