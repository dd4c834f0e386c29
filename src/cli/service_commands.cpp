// `proofpipe serve | submit | await | status`: the proving daemon (src/service) and its command
// line clients over the same gRPC API (proto/proofpipe/v1/prover.proto, docs/SERVICE.md).
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <google/protobuf/util/json_util.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "commands.hpp"
#include "proofpipe/v1/prover.grpc.pb.h"
#include "server.hpp"

namespace pp::cli {

namespace v1 = ::proofpipe::v1;

struct ServiceCommands {
  CLI::App* serve = nullptr;
  CLI::App* submit = nullptr;
  CLI::App* await = nullptr;
  CLI::App* status = nullptr;
  service::ServiceConfig config;
  std::string server = "127.0.0.1:50051";
  std::string token_file, tls_ca;  // clients: bearer token, CA certificate of a TLS daemon
  // submit
  std::string key, request_id;
  std::vector<std::string> witnesses;
  bool inline_witnesses = false, wait = false;
  int priority = 0;
  // submit --wait, await
  std::string job;
  std::string out, public_out;
};

namespace {

const char* code_name(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return "OK";
    case grpc::StatusCode::CANCELLED: return "CANCELLED";
    case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND: return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS: return "ALREADY_EXISTS";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::UNIMPLEMENTED: return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL: return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::StatusCode::UNAUTHENTICATED: return "UNAUTHENTICATED";
    default: return "ERROR";
  }
}

void check(const char* rpc, const grpc::Status& status) {
  if (!status.ok())
    throw std::runtime_error(fmt::format("{}: {}: {}", rpc, code_name(status.error_code()), status.error_message()));
}

std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error(path + ": cannot open");
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// A connection to the daemon: TLS with --tls-ca, and the bearer token of --token-file on every call.
struct Client {
  std::unique_ptr<v1::Prover::Stub> stub;
  std::string authorization;  // "Bearer <token>", or empty

  // Every call's context goes through here.
  void prepare(grpc::ClientContext& ctx) const {
    if (!authorization.empty()) ctx.AddMetadata("authorization", authorization);
  }
};

Client connect(const ServiceCommands& c) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (!c.tls_ca.empty()) {
    grpc::SslCredentialsOptions options;
    options.pem_root_certs = read_bytes(c.tls_ca);
    credentials = grpc::SslCredentials(options);
  }
  Client client{v1::Prover::NewStub(grpc::CreateCustomChannel(c.server, credentials, args)), ""};
  if (!c.token_file.empty()) {
    const std::string text = read_bytes(c.token_file);
    std::string token = text.substr(0, text.find('\n'));
    while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
    while (!token.empty() && std::isspace(static_cast<unsigned char>(token.front()))) token.erase(0, 1);
    if (token.empty()) throw std::runtime_error("--token-file " + c.token_file + ": the first line is empty");
    client.authorization = "Bearer " + token;
  }
  return client;
}

const char* state_name(v1::JobState s) {
  // JOB_STATE_SUCCEEDED -> SUCCEEDED
  const std::string& full = v1::JobState_Name(s);
  return full.c_str() + (full.rfind("JOB_STATE_", 0) == 0 ? 10 : 0);
}

// Where a job stands, on stderr: on a terminal one line redrawn in place with a bar
// ("[#######.............] 3/10 partitions RUNNING 4.2 s"); otherwise (a log, a pipe) one line
// per change.
class Progress {
 public:
  explicit Progress(std::string job_id) : job_id_(std::move(job_id)), tty_(isatty(STDERR_FILENO) == 1) {}
  ~Progress() { end(); }

  void show(const v1::Job& job) {
    const bool changed = job.partitions_done() != done_ || int(job.state()) != state_;
    done_ = job.partitions_done();
    state_ = int(job.state());
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    if (!tty_) {
      if (changed)
        fmt::print(stderr, "  job {} {} {}/{} partition(s)\n", job_id_, state_name(job.state()), job.partitions_done(),
                   job.partitions_total());
      return;
    }
    constexpr uint32_t kWidth = 30;
    const uint32_t total = std::max<uint32_t>(job.partitions_total(), 1);
    const uint32_t filled = std::min(kWidth, uint32_t(uint64_t(kWidth) * job.partitions_done() / total));
    fmt::print(stderr, "\r  job {}: [{}{}] {}/{} partitions {:<9} {:.1f} s ", job_id_.substr(0, 12),
               std::string(filled, '#'), std::string(kWidth - filled, '.'), job.partitions_done(),
               job.partitions_total(), state_name(job.state()), s);
    drawn_ = true;
  }
  void end() {
    if (drawn_) fmt::print(stderr, "\n");
    drawn_ = false;
  }

 private:
  std::string job_id_;
  bool tty_;
  bool drawn_ = false;
  uint32_t done_ = UINT32_MAX;
  int state_ = -1;
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
};

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), std::streamsize(bytes.size()));
  f.close();
  if (!f) throw std::runtime_error(path + ": write failed");
}

// Follows the job (Watch: one message per state change and per finished partition) with a
// progress bar until it is finished, then writes its result: a bellperson job's proofs to `out`,
// a snarkjs job's proof.json to `out` and public.json to `public_out`.
int await_job(const Client& client, const std::string& job_id, const std::string& out, const std::string& public_out) {
  v1::Job job;
  Progress progress(job_id);
  while (job.state() < v1::JOB_STATE_SUCCEEDED) {
    // A Watch ends when the job is finished, or early when the daemon stops: then watch again
    // (a daemon that is gone answers UNAVAILABLE, which ends the command).
    grpc::ClientContext ctx;
    client.prepare(ctx);
    v1::WatchRequest req;
    req.set_job_id(job_id);
    std::unique_ptr<grpc::ClientReader<v1::Job>> reader = client.stub->Watch(&ctx, req);
    while (reader->Read(&job)) progress.show(job);
    check("Watch", reader->Finish());
  }
  progress.end();
  fmt::print("{} {}\n", job_id, state_name(job.state()));
  if (job.state() != v1::JOB_STATE_SUCCEEDED) {
    if (!job.error().empty()) fmt::print(stderr, "proofpipe: job {}: {}\n", job_id, job.error());
    return 1;
  }
  if (!job.proof_json().empty()) {  // a snarkjs job
    if (!out.empty()) write_file(out, job.proof_json());
    if (!public_out.empty()) write_file(public_out, job.public_json());
    if (!out.empty() || !public_out.empty())
      fmt::print(stderr, "wrote {}{}{}\n", out, out.empty() || public_out.empty() ? "" : " and ", public_out);
    return 0;
  }
  if (!public_out.empty())
    throw std::invalid_argument("--public: job " + job_id + " is a bellperson job (proofs only; no public.json)");
  if (!out.empty()) {
    write_file(out, job.proofs());
    fmt::print(stderr, "wrote {} proof(s) to {}\n", job.proofs().size() / 192, out);
  }
  return 0;
}

int run_serve(service::ServiceConfig config, int threads) {
  config.engine.threads = threads;
  // SIGINT and SIGTERM are taken by sigwait below: blocked here, before any thread starts, so
  // that every thread of the daemon inherits the mask and none is interrupted by them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  service::Daemon daemon(config);
  std::string security = config.tls_cert.empty() ? "plaintext" : "TLS";
  security += config.token_file.empty() ? ", no token" : ", bearer token";
  std::string metrics;
  if (daemon.metrics_port())
    metrics = fmt::format("; metrics on http://{}:{}/metrics", config.metrics.substr(0, config.metrics.rfind(':')),
                          daemon.metrics_port());
  // With --queue: the shared queue's jobs, the store without its password, and this daemon's
  // owner id (the store's owner and finished_by columns name it).
  const std::string jobs =
      config.queue.empty()
          ? fmt::format("{} job(s) resumed from the journal", daemon.recovered())
          : fmt::format("{} job(s) queued in {}; owner {}", daemon.recovered(), daemon.store(), daemon.owner());
  fmt::print("proofpipe serve: listening on {}:{} ({}; {}){}\n", config.listen.substr(0, config.listen.rfind(':')),
             daemon.port(), security, jobs, metrics);
  std::fflush(stdout);
  int sig = 0;
  sigwait(&signals, &sig);
  fmt::print(stderr, "proofpipe serve: {}: shutting down (queued jobs stay in the journal)\n",
             sig == SIGINT ? "SIGINT" : "SIGTERM");
  daemon.shutdown();
  fmt::print(stderr, "proofpipe serve: stopped\n");
  return 0;
}

int run_submit(const ServiceCommands& c) {
  const Client client = connect(c);
  v1::SubmitRequest req;
  req.set_request_id(c.request_id);
  req.set_key_path(c.key);
  req.set_priority(c.priority);
  for (const std::string& w : c.witnesses) {
    if (c.inline_witnesses)
      req.add_witnesses(read_bytes(w));
    else
      req.add_witness_paths(w);
  }
  grpc::ClientContext ctx;
  client.prepare(ctx);
  v1::SubmitResponse resp;
  check("Submit", client.stub->Submit(&ctx, req, &resp));
  if (resp.duplicate()) fmt::print(stderr, "proofpipe: request_id '{}' was submitted before: the same job\n", c.request_id);
  if (!c.wait) {
    fmt::print("{}\n", resp.job_id());
    return 0;
  }
  return await_job(client, resp.job_id(), c.out, c.public_out);
}

int run_status(const ServiceCommands& c) {
  const Client client = connect(c);
  grpc::ClientContext ctx;
  client.prepare(ctx);
  v1::Status status;
  check("GetStatus", client.stub->GetStatus(&ctx, v1::GetStatusRequest{}, &status));
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  if (!google::protobuf::util::MessageToJsonString(status, &json, options).ok())
    throw std::runtime_error("status: cannot print the reply as JSON");
  fmt::print("{}", json);
  return 0;
}

}  // namespace

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
  if (c.serve->parsed()) return run_serve(c.config, threads);
  if (c.submit->parsed()) {
    if ((!c.out.empty() || !c.public_out.empty()) && !c.wait)
      throw std::invalid_argument("submit: --out and --public need --wait");
    return run_submit(c);
  }
  if (c.await->parsed()) {
    return await_job(connect(c), c.job, c.out, c.public_out);
  }
  if (c.status->parsed()) return run_status(c);
  return std::nullopt;
}

}  // namespace pp::cli
