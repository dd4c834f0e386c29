// SPDX-License-Identifier: Apache-2.0 OR MIT
#include "server.hpp"

#include <fmt/core.h>
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <fstream>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <string_view>

#include "auth.hpp"
#include "clock.hpp"
#include "errors.hpp"
#include "inputs.hpp"
#include "job_store.hpp"
#include "journal.hpp"
#include "key_cache.hpp"
#include "metrics.hpp"
#include "paths.hpp"
#include "pg_queue.hpp"
#include "proofpipe/proofpipe.h"
#include "server_testing.hpp"
#include "workers.hpp"
#include "proofpipe/v1/prover.grpc.pb.h"

// The gRPC service proofpipe.v1.Prover and the daemon's wiring: the job store, the engine, the
// key cache (key_cache.cpp), the workers (workers.cpp) and the --metrics endpoint (metrics.cpp).

namespace pp::service {

namespace fs = std::filesystem;
namespace v1 = ::proofpipe::v1;

namespace {

constexpr std::size_t kMaxRequestId = 256;

std::string new_job_id() {
  static std::mutex mu;
  static std::random_device rd;
  static std::mt19937_64 gen((uint64_t(rd()) << 32) ^ rd());
  std::lock_guard lock(mu);
  return fmt::format("{:016x}{:016x}", gen(), gen());
}

grpc::StatusCode grpc_code(ErrorCode code) {
  switch (code) {
    case ErrorCode::invalid_argument: return grpc::StatusCode::INVALID_ARGUMENT;
    case ErrorCode::not_found: return grpc::StatusCode::NOT_FOUND;
    case ErrorCode::already_exists: return grpc::StatusCode::ALREADY_EXISTS;
    case ErrorCode::resource_exhausted: return grpc::StatusCode::RESOURCE_EXHAUSTED;
    case ErrorCode::unimplemented: return grpc::StatusCode::UNIMPLEMENTED;
    case ErrorCode::unavailable: return grpc::StatusCode::UNAVAILABLE;
    case ErrorCode::unauthenticated: return grpc::StatusCode::UNAUTHENTICATED;
  }
  return grpc::StatusCode::INTERNAL;
}

// Every handler runs in here: a bad request is a status, never a crash of the daemon.
template <class F>
grpc::Status guarded(const char* rpc, F&& body) {
  try {
    body();
    return grpc::Status::OK;
  } catch (const RequestError& e) {
    return grpc::Status(grpc_code(e.code()), e.what());
  } catch (const std::bad_alloc&) {
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, fmt::format("{}: out of memory", rpc));
  } catch (const std::exception& e) {
    fmt::print(stderr, "proofpipe serve: {}: internal error: {}\n", rpc, e.what());
    return grpc::Status(grpc::StatusCode::INTERNAL, fmt::format("{}: {}", rpc, e.what()));
  } catch (...) {
    fmt::print(stderr, "proofpipe serve: {}: unknown internal error\n", rpc);
    return grpc::Status(grpc::StatusCode::INTERNAL, fmt::format("{}: unknown internal error", rpc));
  }
}

uint64_t rss_bytes() {
  std::ifstream f("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  f >> size >> resident;
  return resident * uint64_t(sysconf(_SC_PAGESIZE));
}

// This daemon's name in the job store: the host, the process and a random part (a restarted
// daemon is another owner; the leases of the one before expire).
std::string new_owner() {
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) != 0) std::strcpy(host.data(), "host");
  std::random_device rd;
  return fmt::format("{}-{}-{:08x}", host.data(), getpid(), rd());
}

}  // namespace

struct Daemon::Impl final : v1::Prover::Service {
  ServiceConfig config;
  fs::path root;
  std::optional<BearerToken> token;  // --token-file: every call must carry it
  std::optional<TlsPair> tls;        // --tls-cert, --tls-key
  pp_engine_config engine_cfg;       // the engine's options, parsed once
  SubmitChecker checker;             // a request's witnesses against its key, before the journal
  std::unique_ptr<JobStore> store;   // the SQLite journal in --state, or PostgreSQL (--queue)
  JobStore& journal;                 // *store
  const std::string owner = new_owner();
  Clock::time_point started = Clock::now();
  std::unique_ptr<pp_engine, void (*)(pp_engine*)> engine;
  std::size_t recovered = 0;

  KeyCache keys;

  // Metrics since start-up: calls answered by RPC and status code, jobs finished by final state.
  RequestCounts requests{};
  FinishedCounts finished{};
  std::unique_ptr<MetricsServer> metrics;

  Workers workers;  // the job side: --jobs workers, leases, retention
  std::unique_ptr<grpc::Server> server;
  int port = 0;
  std::once_flag shutdown_once;

  static fs::path state_of(const ServiceConfig& c) {
    return c.state_dir.empty() ? canonical_root(c.data_root) / ".proofpipe-state" : c.state_dir;
  }

  static std::unique_ptr<JobStore> store_of(const ServiceConfig& c) {
    if (c.queue.empty()) return std::make_unique<Journal>(state_of(c));
    // A connection per worker, the heartbeat thread, the maintenance thread and a few calls.
    return std::make_unique<PgQueue>(c.queue, std::size_t(c.jobs_in_flight) + 6);
  }

  static std::optional<BearerToken> token_of(const ServiceConfig& c) {
    if (c.token_file.empty()) return std::nullopt;
    return BearerToken::from_file(c.token_file);
  }

  static std::unique_ptr<pp_engine, void (*)(pp_engine*)> engine_of(const pp_engine_config& cfg) {
    pp_error err;
    pp_engine* e = nullptr;
    if (pp_engine_create(&cfg, &e, &err) != PP_OK) throw std::invalid_argument(fmt::format("engine: {}", err.message));
    return {e, pp_engine_free};
  }

  explicit Impl(const ServiceConfig& c)
      // The token and the certificate are read before the journal is opened: a bad one is refused
      // with its option's name before anything is written.
      : config(c),
        root(canonical_root(c.data_root)),
        token(token_of(c)),
        tls(c.tls_cert.empty() ? std::nullopt : std::optional<TlsPair>(read_tls_pair(c.tls_cert, c.tls_key))),
        engine_cfg(engine_config(c.engine)),
        checker(root, engine_cfg.host_memory_budget),
        store(store_of(c)),
        journal(*store),
        engine(engine_of(engine_cfg)),
        workers(Workers::Env{config, root, journal, owner, engine.get(), keys, finished}) {
    workers.purge();
    recovered = journal.recover();

    // Before any thread of ours starts: if it cannot listen, the constructor throws cleanly.
    if (!config.metrics.empty())
      metrics = std::make_unique<MetricsServer>(config.metrics, [this] { return scrape(); });
    workers.start();

    if (config.listen.empty()) return;  // in-process calls only (server_testing.hpp)
    std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
    if (tls) {
      grpc::SslServerCredentialsOptions options;
      options.pem_key_cert_pairs.push_back({tls->key_pem, tls->cert_pem});
      credentials = grpc::SslServerCredentials(options);
    }
    grpc::ServerBuilder builder;
    builder.AddListeningPort(config.listen, credentials, &port);
    builder.SetMaxReceiveMessageSize(int(std::min<std::size_t>(config.max_message_bytes, INT32_MAX)));
    builder.RegisterService(this);
    server = builder.BuildAndStart();
    if (!server || port == 0) {
      workers.join();
      throw std::runtime_error(fmt::format("--listen {}: cannot listen there (in use?)", config.listen));
    }
  }

  // Every RPC: authentication first (with --token-file), then the handler, exceptions mapped to
  // status codes.
  template <class F>
  grpc::Status call(grpc::ServerContext* ctx, Rpc rpc, F&& body) {
    const grpc::Status status = guarded(rpc_name(rpc), [&] {
      authenticate(ctx);
      body();
    });
    if (const std::size_t code = std::size_t(status.error_code()); code < kStatusCodes)
      requests[std::size_t(rpc)][code].fetch_add(1, std::memory_order_relaxed);
    return status;
  }

  void authenticate(grpc::ServerContext* ctx) const {
    if (!token) return;
    std::optional<std::string_view> value;
    const auto& metadata = ctx->client_metadata();
    if (auto it = metadata.find("authorization"); it != metadata.end())
      value = std::string_view(it->second.data(), it->second.size());
    token->check(value);
  }

  ~Impl() override { shutdown(); }

  void shutdown() {
    std::call_once(shutdown_once, [this] {
      workers.stop();
      if (metrics) metrics->stop();
      if (server) server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
      workers.join();
      if (server) server->Wait();
      keys.clear();
    });
  }

  // ----- keys (the cache: key_cache.cpp) ---------------------------------------------------------

  v1::KeyInfo key_info(const fs::path& key, const LoadedKey& k, uint64_t file_bytes) {
    v1::KeyInfo info;
    info.set_key_path(fs::relative(key, root).string());
    info.set_file_bytes(file_bytes);
    if (!k.loaded()) return info;
    info.set_loaded(true);
    pp_key_info ki;
    pp_error err;
    if (pp_key_info_get(k.key.get(), &ki, &err) == PP_OK) {
      info.set_device_resident(ki.device_resident != 0);
      info.set_device_copies(ki.device_copies);
      info.set_num_inputs(ki.num_inputs);
      info.set_num_aux(ki.num_aux);
      info.set_domain_size(ki.domain_size);
    }
    return info;
  }

  // ----- jobs -----------------------------------------------------------------------------------

  JobRecord get_or_throw(const std::string& job_id) {
    if (job_id.empty()) throw RequestError(ErrorCode::invalid_argument, "job_id: empty");
    std::optional<JobRecord> r = journal.get(job_id);
    if (!r) throw RequestError(ErrorCode::not_found, fmt::format("job_id: no job '{}'", job_id));
    return *r;
  }

  void fill(v1::Job* out, const JobRecord& r) {
    out->set_job_id(r.job_id);
    out->set_state(v1::JobState(int(r.state)));
    out->set_request_id(r.request_id);
    out->set_priority(r.priority);
    out->set_attempts(r.attempts);
    out->set_partitions_total(r.partitions_total);
    out->set_partitions_done(r.partitions_done);
    out->set_submitted_unix_ms(r.submitted_ms);
    out->set_finished_unix_ms(r.finished_ms);
    out->set_error(r.error);
    if (r.state == JobState::succeeded && !decode_snarkjs_result(r.proofs, out))
      out->set_proofs(r.proofs.data(), r.proofs.size());
    if (r.state == JobState::running)
      if (const std::optional<uint32_t> done = workers.partitions_done(r.job_id)) out->set_partitions_done(*done);
    v1::StageTimings* t = out->mutable_timings();
    if (r.started_ms) t->set_queued_ms(double(r.started_ms - r.submitted_ms));
    t->set_key_load_ms(r.key_load_ms);
    t->set_prove_ms(r.prove_ms);
    if (r.finished_ms) t->set_total_ms(double(r.finished_ms - r.submitted_ms));
  }

  // Validates a request and journals it; the job id and whether it is a duplicate.
  std::pair<std::string, bool> submit(const v1::SubmitRequest& req) {
    if (req.request_id().size() > kMaxRequestId)
      throw RequestError(ErrorCode::invalid_argument,
                         fmt::format("request_id: {} bytes, at most {}", req.request_id().size(), kMaxRequestId));
    std::string serialized;
    {
      google::protobuf::io::StringOutputStream stream(&serialized);
      google::protobuf::io::CodedOutputStream coded(&stream);
      coded.SetSerializationDeterministic(true);
      if (!req.SerializeToCodedStream(&coded)) throw std::runtime_error("cannot serialize the request");
    }
    auto same_as = [&](const JobRecord& earlier) {
      if (std::string(earlier.request.begin(), earlier.request.end()) != serialized)
        throw RequestError(ErrorCode::already_exists,
                           fmt::format("request_id: '{}' was used for a different request (job {}); use a new "
                                       "request_id for a new request",
                                       req.request_id(), earlier.job_id));
      return std::make_pair(earlier.job_id, true);
    };
    // A retried Submit gets its job back even when the queue is full or the paths changed since.
    if (!req.request_id().empty())
      if (std::optional<JobRecord> earlier = journal.find_request(req.request_id())) return same_as(*earlier);

    // The key, the witnesses' format and counts against it, paths confined: INVALID_ARGUMENT
    // naming the field before anything is journaled.
    const std::size_t partitions = checker.check(req);
    if (workers.stopping()) throw RequestError(ErrorCode::unavailable, "the daemon is shutting down");
    if (const uint64_t active = journal.active(); active >= config.max_queue)
      throw RequestError(ErrorCode::resource_exhausted,
                         fmt::format("the queue is full ({} jobs queued or running, --max-queue {})", active,
                                     config.max_queue));
    NewJob job;
    job.job_id = new_job_id();
    job.request_id = req.request_id();
    job.key_path = req.key_path();
    job.request.assign(serialized.begin(), serialized.end());
    job.priority = req.priority();
    job.partitions_total = uint32_t(partitions);
    job.submitted_ms = unix_ms();
    const Journal::Inserted ins = journal.insert(job);  // committed: from here on the job exists
    if (ins.duplicate) return same_as(ins.job);         // a concurrent Submit with the same id won
    workers.job_submitted();
    return {ins.job.job_id, false};
  }

  // ----- metrics --------------------------------------------------------------------------------

  // One scrape of --metrics (metrics_text() writes it).
  std::string scrape() {
    DaemonMetrics m;
    pp_error err;
    if (pp_engine_stats_get(engine.get(), &m.engine, &err) != PP_OK) throw std::runtime_error(err.message);
    m.jobs = journal.count_by_state();
    m.running = workers.running();
    keys.for_each_loaded([&](const fs::path&, const LoadedKey& k, uint64_t) {
      ++m.keys_loaded;
      pp_key_info ki;
      if (k.key && pp_key_info_get(k.key.get(), &ki, nullptr) == PP_OK && ki.device_resident)
        ++m.keys_device_resident;
    });
    m.finished = &finished;
    m.requests = &requests;
    m.gpus = gpu_infos(m.engine.gpus);
    m.host_budget_bytes = engine_cfg.host_memory_budget;
    m.rss_bytes = rss_bytes();
    m.uptime_s = ms_since(started) / 1000.0;
    return metrics_text(m);
  }

  // The engine's GPUs (none on the CPU prover).
  std::vector<pp_gpu_info> gpu_infos(uint32_t gpus) const {
    std::vector<pp_gpu_info> out(gpus);
    pp_error err;
    for (uint32_t i = 0; i < gpus; ++i)
      if (pp_engine_gpu_info_get(engine.get(), i, &out[i], &err) != PP_OK) throw std::runtime_error(err.message);
    return out;
  }

  // ----- the RPCs -------------------------------------------------------------------------------

  grpc::Status Submit(grpc::ServerContext* ctx, const v1::SubmitRequest* req, v1::SubmitResponse* resp) override {
    return call(ctx, Rpc::Submit, [&] {
      const auto [id, duplicate] = submit(*req);
      resp->set_job_id(id);
      resp->set_duplicate(duplicate);
    });
  }

  // Waits for the job to finish; timeout_ms 0: no limit but the call's own deadline.
  void await(grpc::ServerContext* ctx, const std::string& job_id, uint32_t timeout_ms, v1::Job* out) {
    const auto deadline =
        timeout_ms ? Clock::now() + std::chrono::milliseconds(timeout_ms) : Clock::time_point::max();
    for (;;) {
      const uint64_t seen = workers.version();
      const JobRecord r = get_or_throw(job_id);
      const bool stop = workers.stopping();
      if (is_final(r.state) || Clock::now() >= deadline || ctx->IsCancelled() || stop) return fill(out, r);
      workers.wait_change(seen, deadline);
    }
  }

  grpc::Status Await(grpc::ServerContext* ctx, const v1::AwaitRequest* req, v1::Job* out) override {
    return call(ctx, Rpc::Await, [&] { await(ctx, req->job_id(), req->timeout_ms(), out); });
  }

  grpc::Status Prove(grpc::ServerContext* ctx, const v1::SubmitRequest* req, v1::Job* out) override {
    return call(ctx, Rpc::Prove, [&] { await(ctx, submit(*req).first, 0, out); });
  }

  grpc::Status Cancel(grpc::ServerContext* ctx, const v1::CancelRequest* req, v1::Job* out) override {
    return call(ctx, Rpc::Cancel, [&] {
      const JobRecord r = get_or_throw(req->job_id());
      if (!is_final(r.state)) {
        const JobStore::Cancelled c = journal.cancel(r.job_id, unix_ms());
        if (c == JobStore::Cancelled::now)  // it was queued: CANCELLED now
          finished[std::size_t(JobState::cancelled)].fetch_add(1, std::memory_order_relaxed);
        if (c == JobStore::Cancelled::requested) {
          // Running here: stopped at its next partition boundary (Await sees it); running on
          // another daemon: that one sees the request at its next heartbeat.
          workers.cancel(r.job_id);
        }
        workers.notify();
      }
      fill(out, get_or_throw(req->job_id()));
    });
  }

  grpc::Status Watch(grpc::ServerContext* ctx, const v1::WatchRequest* req, grpc::ServerWriter<v1::Job>* writer) override {
    return call(ctx, Rpc::Watch, [&] {
      int last_state = -1;
      uint32_t last_done = UINT32_MAX;
      for (;;) {
        const uint64_t seen = workers.version();
        const JobRecord r = get_or_throw(req->job_id());
        v1::Job job;
        fill(&job, r);
        if (int(job.state()) != last_state || job.partitions_done() != last_done) {
          last_state = int(job.state());
          last_done = job.partitions_done();
          if (!writer->Write(job)) return;  // the client went away
        }
        const bool stop = workers.stopping();
        if (is_final(r.state) || ctx->IsCancelled() || stop) return;
        workers.wait_change(seen, Clock::time_point::max());
      }
    });
  }

  grpc::Status GetStatus(grpc::ServerContext* ctx, const v1::GetStatusRequest*, v1::Status* out) override {
    return call(ctx, Rpc::GetStatus, [&] {
      pp_engine_stats s;
      pp_error err;
      if (pp_engine_stats_get(engine.get(), &s, &err) != PP_OK) throw std::runtime_error(err.message);
      out->set_gpus(s.gpus);
      for (const pp_gpu_info& g : gpu_infos(s.gpus)) {
        v1::Gpu* d = out->add_devices();
        d->set_device(g.device);
        d->set_resident_keys(g.resident_keys);
        d->set_memory_total_bytes(g.memory_total);
        d->set_memory_budget_bytes(g.memory_budget);
        d->set_memory_used_bytes(g.memory_used);
        d->set_memory_peak_bytes(g.memory_peak);
        d->set_healthy(g.healthy != 0);
        d->set_partitions(g.partitions);
        d->set_partitions_handed_off(g.partitions_handed_off);
        d->set_busy_ms(g.ms_busy);
      }
      out->set_host_budget_bytes(engine_cfg.host_memory_budget);
      out->set_host_peak_bytes(s.host_peak_bytes);
      out->set_partitions_proven(s.partitions_proven);
      auto& stages = *out->mutable_engine_stage_ms();
      stages["checks"] = s.ms_checks;
      stages["ntt"] = s.ms_ntt;
      stages["msm_h"] = s.ms_msm_h;
      stages["msm_l"] = s.ms_msm_l;
      stages["msm_a"] = s.ms_msm_a;
      stages["msm_b_g1"] = s.ms_msm_b_g1;
      stages["msm_b_g2"] = s.ms_msm_b_g2;
      stages["assembly"] = s.ms_assembly;
      stages["gpu_busy"] = s.ms_gpu_busy;
      stages["gpu_upload"] = s.ms_gpu_upload;
      const auto counts = journal.count_by_state();
      auto count = [&](JobState st) { auto it = counts.find(st); return it == counts.end() ? uint64_t(0) : it->second; };
      out->set_queue_depth(uint32_t(count(JobState::queued)));  // the store's: every daemon's with --queue
      out->set_running(uint32_t(workers.running()));  // this daemon's
      out->set_max_in_flight(uint32_t(config.jobs_in_flight));
      out->set_max_queue(config.max_queue);
      out->set_jobs_succeeded(count(JobState::succeeded));
      out->set_jobs_failed(count(JobState::failed));
      out->set_jobs_cancelled(count(JobState::cancelled));
      out->set_uptime_s(ms_since(started) / 1000.0);
      out->set_host_rss_bytes(rss_bytes());
      keys.for_each_loaded([&](const fs::path& path, const LoadedKey& k, uint64_t file_bytes) {
        *out->add_resident_keys() = key_info(path, k, file_bytes);
      });
    });
  }

  grpc::Status PreloadKey(grpc::ServerContext* ctx, const v1::KeyRequest* req, v1::KeyInfo* out) override {
    return call(ctx, Rpc::PreloadKey, [&] {
      const ResolvedKey key = resolve_key(root, req->key_path());
      const LoadedKey k = keys.get(key, nullptr);
      if (!req->witness_path().empty()) {
        const fs::path sample_path = confine(root, req->witness_path(), "witness_path");
        const std::string sample_file = sample_path.string();
        pp_input sample;
        std::memset(&sample, 0, sizeof sample);
        sample.kind = k.snarkjs ? PP_INPUT_WTNS : PP_INPUT_PPW;
        (k.snarkjs ? sample.wtns : sample.ppw).path = sample_file.c_str();
        pp_error err;
        const pp_status st = pp_key_preload(engine.get(), k.key.get(), &sample, &err);
        if (st == PP_ERR_DEVICE)
          throw RequestError(ErrorCode::resource_exhausted, fmt::format("PreloadKey: {}", err.message));
        if (st != PP_OK) throw RequestError(ErrorCode::invalid_argument, fmt::format("witness_path: {}", err.message));
      }
      std::error_code ec;
      *out = key_info(key.path, k, fs::file_size(key.path, ec));
    });
  }

  grpc::Status EvictKey(grpc::ServerContext* ctx, const v1::KeyRequest* req, v1::KeyInfo* out) override {
    return call(ctx, Rpc::EvictKey, [&] {
      const fs::path key = confine(root, req->key_path(), "key_path");
      const uint64_t bytes = keys.evict(key);
      *out = key_info(key, {}, bytes);
    });
  }
};

namespace {

// What can be refused before anything (the journal, the engine) is touched.
const ServiceConfig& checked(const ServiceConfig& config) {
  if (config.tls_cert.empty() != config.tls_key.empty())
    throw std::invalid_argument("--tls-cert and --tls-key: give both (PEM certificate chain and its private key)");
  if (!config.listen.empty() && !is_loopback_listen(config.listen) && config.token_file.empty() &&
      config.tls_cert.empty())
    throw std::invalid_argument(fmt::format(
        "--listen {}: only loopback addresses (127.0.0.1, ::1, localhost) are served without authentication; "
        "give --token-file and/or --tls-cert/--tls-key to listen there",
        config.listen));
  if (config.jobs_in_flight < 1 || config.jobs_in_flight > 64)
    throw std::invalid_argument(fmt::format("--jobs {}: must be 1..64", config.jobs_in_flight));
  if (config.lease_ms < 100 || config.lease_ms > 3600000)
    throw std::invalid_argument(fmt::format("--lease-ms {}: must be 100..3600000", config.lease_ms));
  return config;
}

}  // namespace

Daemon::Daemon(const ServiceConfig& config) : impl_(std::make_unique<Impl>(checked(config))) {}
Daemon::~Daemon() { shutdown(); }
int Daemon::port() const { return impl_->port; }
int Daemon::metrics_port() const { return impl_->metrics ? impl_->metrics->port() : 0; }
std::size_t Daemon::recovered() const { return impl_->recovered; }
const std::string& Daemon::owner() const { return impl_->owner; }
std::string Daemon::store() const { return impl_->journal.describe(); }
void Daemon::shutdown() { impl_->shutdown(); }

v1::Prover::Service& handlers(Daemon& daemon) { return daemon.impl(); }

}  // namespace pp::service
