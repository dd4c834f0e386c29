// SPDX-License-Identifier: Apache-2.0 OR MIT
// `proofpipe serve | submit | await | status`: the proving daemon (src/service) and its command
// line clients over the same gRPC API (proto/proofpipe/v1/prover.proto, docs/SERVICE.md). Built as
// a module that the CLI loads only for these commands (service_options.cpp says why).
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
#include "service_commands.hpp"
#include "proofpipe/v1/prover.grpc.pb.h"
#include "server.hpp"

namespace pp::cli {

namespace v1 = ::proofpipe::v1;


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

}  // namespace pp::cli

// The entry point the CLI finds with dlsym (service_options.cpp): one of the four commands was
// parsed. Exceptions reach the CLI's handler (same compiler and C++ runtime on both sides).
extern "C" int pp_cli_run_service_command(const pp::cli::ServiceCommands* commands, int threads) {
  using namespace pp::cli;
  const ServiceCommands& c = *commands;
  if (c.serve->parsed()) return run_serve(c.config, threads);
  if (c.submit->parsed()) {
    if ((!c.out.empty() || !c.public_out.empty()) && !c.wait)
      throw std::invalid_argument("submit: --out and --public need --wait");
    return run_submit(c);
  }
  if (c.await->parsed()) return await_job(connect(c), c.job, c.out, c.public_out);
  if (c.status->parsed()) return run_status(c);
  throw std::logic_error("pp_cli_run_service_command: none of serve, submit, await, status was parsed");
}
