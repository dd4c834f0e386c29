#include "server.hpp"

#include <fmt/core.h>
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string_view>
#include <thread>

#include "auth.hpp"
#include "errors.hpp"
#include "inputs.hpp"
#include "job_store.hpp"
#include "journal.hpp"
#include "metrics.hpp"
#include "paths.hpp"
#include "pg_queue.hpp"
#include "proofpipe/proofpipe.h"
#include "server_testing.hpp"
#include "proofpipe/v1/prover.grpc.pb.h"

namespace pp::service {

namespace fs = std::filesystem;
namespace v1 = ::proofpipe::v1;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::size_t kMaxRequestId = 256;

int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

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

// The RPCs of proofpipe.v1.Prover (the request counters are indexed by them).
enum class Rpc { Submit, Await, Prove, Cancel, Watch, GetStatus, PreloadKey, EvictKey, count };
constexpr const char* kRpcNames[] = {"Submit", "Await", "Prove", "Cancel", "Watch", "GetStatus", "PreloadKey", "EvictKey"};
static_assert(std::size(kRpcNames) == std::size_t(Rpc::count));
const char* rpc_name(Rpc rpc) { return kRpcNames[std::size_t(rpc)]; }

// grpc::StatusCode's names, by number (0..16).
constexpr const char* kCodeNames[] = {"OK",           "CANCELLED",          "UNKNOWN",        "INVALID_ARGUMENT",
                                      "DEADLINE_EXCEEDED", "NOT_FOUND",     "ALREADY_EXISTS", "PERMISSION_DENIED",
                                      "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
                                      "UNIMPLEMENTED", "INTERNAL",          "UNAVAILABLE",    "DATA_LOSS",
                                      "UNAUTHENTICATED"};
constexpr std::size_t kCodes = std::size(kCodeNames);

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

// A key of the key cache, on the C API's engine: a bellperson .params or a snarkjs .zkey.
struct LoadedKey {
  std::shared_ptr<pp_key> key;
  bool snarkjs = false;        // a .zkey: its jobs prove .wtns files and keep snarkjs's JSON
  std::size_t num_public = 0;  // a .zkey's public signals (nPublic)
  bool loaded() const { return bool(key); }
};

struct KeyEntry {
  std::mutex load_mu;  // one load at a time per key; others wait for it
  LoadedKey loaded;
  fs::path path;
  uint64_t file_bytes = 0;
};

// A job a worker holds: its claim, its live progress and what Cancel needs.
struct Live {
  uint32_t attempt = 0;  // the claim's fencing token (JobRecord::attempts)
  uint32_t partitions_done = 0;
  bool cancel = false;
  bool lost = false;  // the lease went to another daemon: stop, write nothing
  pp_pending* pending = nullptr;  // set while proving; guarded by Impl::mu
};

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
  std::unique_ptr<pp_engine, void (*)(pp_engine*)> engine{nullptr, pp_engine_free};
  Clock::time_point started = Clock::now();
  std::size_t recovered = 0;

  std::mutex keys_mu;
  std::map<fs::path, std::shared_ptr<KeyEntry>> keys;

  std::mutex mu;                   // live, stopping, version, submitted
  std::condition_variable work;    // a job was submitted or re-queued here, or stopping changed
  std::condition_variable changed; // some job changed (version moved)
  uint64_t version = 0;
  uint64_t submitted = 0;          // jobs queued by this daemon (wakes the workers)
  std::map<std::string, Live> live;
  bool stopping = false;

  // Metrics since start-up: calls answered by RPC and status code, jobs finished by final state.
  std::array<std::array<std::atomic<uint64_t>, kCodes>, std::size_t(Rpc::count)> requests{};
  std::array<std::atomic<uint64_t>, 6> finished{};  // by JobState
  std::unique_ptr<MetricsServer> metrics;

  std::vector<std::thread> workers;
  std::thread maintenance;
  std::thread heartbeats;
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
        journal(*store) {
    pp_error err;
    pp_engine* e = nullptr;
    if (pp_engine_create(&engine_cfg, &e, &err) != PP_OK) throw std::invalid_argument(fmt::format("engine: {}", err.message));
    engine.reset(e);

    purge();
    recovered = journal.recover();

    // Before any thread of ours starts: if it cannot listen, the constructor throws cleanly.
    if (!config.metrics.empty())
      metrics = std::make_unique<MetricsServer>(config.metrics, [this] { return metrics_text(); });
    for (int i = 0; i < config.jobs_in_flight; ++i) workers.emplace_back([this] { worker(); });
    maintenance = std::thread([this] { maintain(); });
    heartbeats = std::thread([this] { heartbeat(); });

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
      stop_workers();
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
    if (const std::size_t code = std::size_t(status.error_code()); code < kCodes)
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
      {
        std::lock_guard lock(mu);
        stopping = true;
        ++version;
      }
      work.notify_all();
      changed.notify_all();
      if (metrics) metrics->stop();
      if (server) server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
      stop_workers();
      if (server) server->Wait();
      std::lock_guard lock(keys_mu);
      keys.clear();
    });
  }

  void stop_workers() {
    {
      std::lock_guard lock(mu);
      stopping = true;
    }
    work.notify_all();
    for (auto& t : workers)
      if (t.joinable()) t.join();
    work.notify_all();  // the heartbeat thread ends once no job is held
    if (maintenance.joinable()) maintenance.join();
    if (heartbeats.joinable()) heartbeats.join();
  }

  void notify() {
    {
      std::lock_guard lock(mu);
      ++version;
    }
    changed.notify_all();
  }

  void purge() {
    const int64_t cutoff = unix_ms() - int64_t(config.retention_hours * 3600.0 * 1000.0);
    if (const int n = journal.purge_finished_before(cutoff); n > 0)
      fmt::print(stderr, "proofpipe serve: deleted {} finished job(s) older than {} h\n", n, config.retention_hours);
  }

  void maintain() {
    const auto every = std::chrono::duration<double>(std::clamp(config.retention_hours * 3600.0 / 4, 1.0, 600.0));
    std::unique_lock lock(mu);
    while (!work.wait_for(lock, every, [this] { return stopping; })) {
      lock.unlock();
      try {
        purge();
      } catch (const std::exception& e) {
        fmt::print(stderr, "proofpipe serve: retention: {}\n", e.what());
      }
      lock.lock();
    }
  }

  // ----- key cache ------------------------------------------------------------------------------

  std::shared_ptr<KeyEntry> key_entry(const fs::path& key) {
    std::lock_guard lock(keys_mu);
    auto& slot = keys[key];
    if (!slot) {
      slot = std::make_shared<KeyEntry>();
      slot->path = key;
    }
    return slot;
  }

  // The loaded key (loading it on first use); *load_ms is the time this call spent loading.
  LoadedKey key_for(const ResolvedKey& key, double* load_ms) {
    const std::shared_ptr<KeyEntry> e = key_entry(key.path);
    std::lock_guard load(e->load_mu);
    if (e->loaded.loaded()) return e->loaded;
    const auto t0 = Clock::now();
    std::string error;
    pp_error err;
    pp_key* k = nullptr;
    pp_key_info ki;
    if (pp_key_load(key.path.c_str(), 0, &k, &err) == PP_OK) {
      e->loaded.key = std::shared_ptr<pp_key>(k, pp_key_release);
      e->loaded.snarkjs = key.kind == KeyKind::snarkjs;
      if (pp_key_info_get(k, &ki, &err) != PP_OK) throw std::runtime_error(err.message);
      e->loaded.num_public = ki.num_inputs - 1;
    } else {
      error = err.message;
    }
    if (!e->loaded.loaded()) {
      std::lock_guard lock(keys_mu);
      if (auto it = keys.find(key.path); it != keys.end() && it->second == e) keys.erase(it);
      throw RequestError(ErrorCode::invalid_argument, fmt::format("key_path: {}", error));
    }
    std::error_code ec;
    e->file_bytes = fs::file_size(key.path, ec);
    if (load_ms) *load_ms = ms_since(t0);
    return e->loaded;
  }

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

  // The claim a worker of this daemon holds on job `id` (live[id]).
  Lease lease_of(const std::string& id) {
    std::lock_guard lock(mu);
    const auto it = live.find(id);
    if (it == live.end()) throw std::logic_error(fmt::format("job {}: not held by a worker", id));
    return Lease{id, it->second.attempt};
  }

  // journal.finish under this worker's claim, counted for the metrics when it finished the job;
  // false when the claim was lost (another daemon took the job over: it finishes it).
  bool finish_job(const std::string& id, JobState state, const std::vector<uint8_t>& proofs, const std::string& error,
                  double key_load_ms, double prove_ms) {
    const bool done = journal.finish(owner, lease_of(id), state, proofs, error, unix_ms(), key_load_ms, prove_ms);
    if (done)
      finished[std::size_t(state)].fetch_add(1, std::memory_order_relaxed);
    else
      fmt::print(stderr, "proofpipe serve: job {}: not finished here: its lease was lost to another daemon\n", id);
    return done;
  }

  // Progress is for watchers only: a store that fails here does not fail the job.
  void progress_job(const std::string& id, uint32_t partitions_done) {
    try {
      journal.set_progress(owner, lease_of(id), partitions_done);
    } catch (const std::exception& e) {
      fmt::print(stderr, "proofpipe serve: job {}: progress not recorded: {}\n", id, e.what());
    }
  }

  // Interrupted (a clean shutdown, a lost lease): back to the queue (CANCELLED when a Cancel
  // reached it) if the claim is still this worker's.
  void requeue_job(const std::string& id) {
    if (!journal.requeue(owner, lease_of(id)))
      fmt::print(stderr, "proofpipe serve: job {}: stopped here: its lease was lost to another daemon\n", id);
  }

  // The lease of job `id` went to another daemon (or could not be renewed for a whole lease).
  bool lost(const std::string& id) {
    std::lock_guard lock(mu);
    const auto it = live.find(id);
    return it != live.end() && it->second.lost;
  }

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
    if (r.state == JobState::running) {
      std::lock_guard lock(mu);
      if (auto it = live.find(r.job_id); it != live.end()) out->set_partitions_done(it->second.partitions_done);
    }
    v1::StageTimings* t = out->mutable_timings();
    if (r.started_ms) t->set_queued_ms(double(r.started_ms - r.submitted_ms));
    t->set_key_load_ms(r.key_load_ms);
    t->set_prove_ms(r.prove_ms);
    if (r.finished_ms) t->set_total_ms(double(r.finished_ms - r.submitted_ms));
  }

  uint64_t current_version() {
    std::lock_guard lock(mu);
    return version;
  }

  // Waits until some job changes after `seen`, the deadline passes or the daemon stops.
  void wait_change(uint64_t seen, Clock::time_point deadline) {
    std::unique_lock lock(mu);
    const auto until = std::min(deadline, Clock::now() + std::chrono::milliseconds(200));
    changed.wait_until(lock, until, [&] { return version != seen || stopping; });
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
    {
      std::lock_guard lock(mu);
      if (stopping) throw RequestError(ErrorCode::unavailable, "the daemon is shutting down");
    }
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
    {
      std::lock_guard lock(mu);
      ++submitted;
      ++version;
    }
    work.notify_all();  // all: the maintenance thread and polling workers wait on it too
    changed.notify_all();
    return {ins.job.job_id, false};
  }

  // ----- workers --------------------------------------------------------------------------------

  // How often an idle worker asks the store for a job: other daemons submit to a shared queue
  // and jobs come back from expired leases; the journal of one host only gets jobs from here.
  std::chrono::milliseconds poll_interval() const {
    return std::chrono::milliseconds(config.queue.empty() ? 1000 : 150);
  }

  // Claims the best queued job from the store: at once after a Submit to this daemon, otherwise
  // every poll_interval().
  void worker() {
    bool failing = false;  // the last claim failed: logged once until one works again
    for (;;) {
      uint64_t seen;
      {
        std::lock_guard lock(mu);
        if (stopping) return;
        seen = submitted;
      }
      std::optional<JobRecord> claimed;
      try {
        claimed = journal.claim(owner, unix_ms(), config.lease_ms);
        if (failing) fmt::print(stderr, "proofpipe serve: claiming jobs again\n");
        failing = false;
      } catch (const std::exception& e) {
        if (!failing) fmt::print(stderr, "proofpipe serve: cannot claim a job (retrying): {}\n", e.what());
        failing = true;
      }
      if (!claimed) {
        std::unique_lock lock(mu);
        work.wait_for(lock, poll_interval(), [&] { return stopping || submitted != seen; });
        continue;
      }
      const std::string id = claimed->job_id;
      {
        std::lock_guard lock(mu);
        Live& l = live[id];
        l = Live{};
        l.attempt = claimed->attempts;
      }
      try {
        run(*claimed);
      } catch (const std::exception& e) {
        // A journal or memory failure mid-job: fail the job if the journal still takes it (if
        // not, the next start runs it again).
        fmt::print(stderr, "proofpipe serve: job {}: {}\n", id, e.what());
        try {
          finish_job(id, JobState::failed, {}, fmt::format("internal error: {}", e.what()), 0, 0);
        } catch (const std::exception& again) {
          fmt::print(stderr, "proofpipe serve: job {}: {}\n", id, again.what());
        }
      }
      {
        std::lock_guard lock(mu);
        live.erase(id);
        ++version;
      }
      changed.notify_all();
    }
  }

  // Keeps the leases of this daemon's jobs alive (renewed every third of --lease-ms, at least
  // every second), stops jobs whose lease was lost or that a Cancel sent to another daemon
  // reached, and re-queues the jobs of daemons whose leases expired. Ends once the daemon stops
  // and holds no job.
  void heartbeat() {
    const auto every = std::chrono::milliseconds(std::clamp<int64_t>(config.lease_ms / 3, 10, 1000));
    const auto lease = std::chrono::milliseconds(config.lease_ms);
    auto last_ok = Clock::now();
    bool failing = false;
    std::unique_lock lock(mu);
    while (!(stopping && live.empty())) {
      std::vector<Lease> leases;
      for (const auto& [id, l] : live) leases.push_back({id, l.attempt});
      const bool reap = !stopping;
      lock.unlock();
      std::optional<std::vector<JobStore::Held>> held;
      std::size_t reaped = 0;
      try {
        held = journal.heartbeat(owner, leases, config.lease_ms);
        if (reap) reaped = journal.reap(unix_ms());
        if (failing) fmt::print(stderr, "proofpipe serve: leases renewed again\n");
        failing = false;
      } catch (const std::exception& e) {
        if (!failing) fmt::print(stderr, "proofpipe serve: cannot renew leases (retrying): {}\n", e.what());
        failing = true;
      }
      if (reaped)
        fmt::print(stderr, "proofpipe serve: re-queued {} job(s) whose daemon's lease expired\n", reaped);
      lock.lock();
      auto stop = [](Live& l) {
        l.cancel = true;
        if (l.pending) pp_cancel(l.pending, nullptr);
      };
      if (held) {
        last_ok = Clock::now();
        for (std::size_t i = 0; i < leases.size() && i < held->size(); ++i) {
          const auto it = live.find(leases[i].job_id);
          if (it == live.end() || it->second.attempt != leases[i].attempt) continue;  // ended meanwhile
          if (!(*held)[i].held && !it->second.lost) {
            it->second.lost = true;
            stop(it->second);
          } else if ((*held)[i].cancel_requested && !it->second.cancel) {
            stop(it->second);
          }
        }
      } else if (Clock::now() - last_ok > lease) {
        // Not renewed for a whole lease: other daemons may have taken these jobs over.
        for (auto& [id, l] : live)
          if (!l.lost) {
            l.lost = true;
            stop(l);
          }
      }
      if (reaped) {
        ++submitted;
        work.notify_all();
      }
      work.wait_for(lock, every, [&] { return stopping && live.empty(); });
    }
  }

  // The claimed job: its record as claim() returned it (the request, inline witnesses included,
  // is not read from the store a second time).
  void run(const JobRecord& rec) {
    const std::string& id = rec.job_id;
    notify();
    double key_load_ms = 0;
    const auto t0 = Clock::now();
    std::unique_ptr<pp_pending, void (*)(pp_pending*)> pending(nullptr, pp_pending_free);
    auto fail = [&](const std::string& why) {
      finish_job(id, JobState::failed, {}, why, key_load_ms, ms_since(t0));
    };
    std::size_t n = 0;
    v1::SubmitRequest req;
    std::shared_ptr<pp_key> key;  // held until the job ends (an EvictKey may drop the cache's entry)
    bool snarkjs = false;
    std::size_t num_public = 0;
    try {
      if (!req.ParseFromArray(rec.request.data(), int(rec.request.size())))
        return fail("the journaled request cannot be parsed");
      // Resolved again: the files may have changed since Submit (or since the daemon restarted).
      const LoadedKey loaded = key_for(resolve_key(root, req.key_path()), &key_load_ms);
      key = loaded.key;
      snarkjs = loaded.snarkjs;
      num_public = loaded.num_public;
      std::vector<std::string> paths;
      n = std::size_t(req.witness_paths_size() + req.witnesses_size());
      for (int i = 0; i < req.witness_paths_size(); ++i)
        paths.push_back(confine(root, req.witness_paths(i), "witness_paths", std::size_t(i)).string());
      std::vector<pp_input> inputs(n, pp_input{});
      for (std::size_t i = 0; i < n; ++i) {
        // A .ppw for a .params key; a .wtns for a .zkey key (the C API computes its witness from
        // the key's coefficients, as snarkjs does).
        inputs[i].kind = snarkjs ? PP_INPUT_WTNS : PP_INPUT_PPW;
        pp_source& src = snarkjs ? inputs[i].wtns : inputs[i].ppw;
        if (!paths.empty()) {
          src.path = paths[i].c_str();
        } else {
          const std::string& w = req.witnesses(int(i));
          src.data = reinterpret_cast<const uint8_t*>(w.data());
          src.size = w.size();
        }
      }
      pp_error err;
      pp_pending* p = nullptr;
      if (pp_prove_start(engine.get(), key.get(), inputs.data(), n, nullptr, &p, &err) != PP_OK)
        return fail(fmt::format("{}: {}", paths.empty() ? "witnesses" : "witness_paths", err.message));
      pending.reset(p);
    } catch (const RequestError& e) {
      return fail(e.what());
    }
    {
      std::lock_guard lock(mu);
      Live& l = live[id];
      l.pending = pending.get();
      if (l.cancel) pp_cancel(pending.get(), nullptr);
    }
    // Cancel reaches the handle through live[id].pending: cleared on every way out of here (an
    // exception included) before `pending` frees it.
    struct Unpublish {
      Impl* self;
      const std::string& id;
      ~Unpublish() {
        std::lock_guard lock(self->mu);
        if (auto it = self->live.find(id); it != self->live.end()) it->second.pending = nullptr;
      }
    } unpublish{this, id};
    bool interrupted = false;  // by shutdown: the job goes back to the queue
    std::size_t reported = 0;
    for (int done = 0; !done;) {
      std::size_t parts = 0;
      pp_error err;
      if (pp_prove_poll(pending.get(), &done, &parts, &err) != PP_OK) break;  // finalize reports it
      if (parts != reported) {
        reported = parts;
        {
          std::lock_guard lock(mu);
          live[id].partitions_done = uint32_t(parts);
          ++version;
        }
        changed.notify_all();
        progress_job(id, uint32_t(parts));
      }
      if (done) break;
      std::unique_lock lock(mu);
      if (stopping && !interrupted) {
        interrupted = true;
        pp_cancel(pending.get(), nullptr);
      }
      work.wait_for(lock, std::chrono::milliseconds(20), [&] { return stopping && !interrupted; });
    }
    std::vector<uint8_t> proofs(n * PP_PROOF_BYTES);
    std::size_t size = proofs.size();
    pp_error err;
    const pp_status st = pp_prove_finalize(pending.get(), proofs.data(), &size, &err);
    if (st == PP_OK && snarkjs) {  // one .wtns: its proof and public signals as snarkjs's JSON
      std::vector<uint8_t> result;
      try {
        if (req.witness_paths_size() > 0) {
          result = snarkjs_result(proofs, confine(root, req.witness_paths(0), "witness_paths", 0), {}, num_public,
                                  "witness_paths[0]");
        } else {
          const std::string& w = req.witnesses(0);
          result = snarkjs_result(proofs, {}, {reinterpret_cast<const uint8_t*>(w.data()), w.size()}, num_public,
                                  "witnesses[0]");
        }
      } catch (const std::invalid_argument& e) {
        return fail(e.what());
      } catch (const RequestError& e) {
        return fail(e.what());
      }
      finish_job(id, JobState::succeeded, result, "", key_load_ms, ms_since(t0));
    } else if (st == PP_OK) {
      proofs.resize(size);
      finish_job(id, JobState::succeeded, proofs, "", key_load_ms, ms_since(t0));
    } else if (st == PP_ERR_CANCELLED && (interrupted || lost(id))) {
      requeue_job(id);
    } else if (st == PP_ERR_CANCELLED) {
      finish_job(id, JobState::cancelled, {}, "cancelled by a Cancel call", key_load_ms, ms_since(t0));
    } else {
      fail(fmt::format("{} ({}): {}", paths_or_inline(req), pp_status_name(st), err.message));
    }
  }

  static const char* paths_or_inline(const v1::SubmitRequest& req) {
    return req.witness_paths_size() ? "witness_paths" : "witnesses";
  }

  // ----- metrics --------------------------------------------------------------------------------

  // One scrape of --metrics (Prometheus text format 0.0.4).
  std::string metrics_text() {
    pp_engine_stats s;
    pp_error err;
    if (pp_engine_stats_get(engine.get(), &s, &err) != PP_OK) throw std::runtime_error(err.message);
    const auto counts = journal.count_by_state();
    const auto queued = counts.find(JobState::queued);
    const std::size_t depth = queued == counts.end() ? 0 : queued->second;  // the store's: every daemon's
    std::size_t running = 0;  // this daemon's
    {
      std::lock_guard lock(mu);
      running = live.size();
    }
    std::size_t loaded = 0, device_resident = 0;
    std::vector<std::shared_ptr<KeyEntry>> entries;
    {
      std::lock_guard lock(keys_mu);
      for (const auto& [path, e] : keys) entries.push_back(e);
    }
    for (const auto& e : entries) {
      std::unique_lock load(e->load_mu, std::try_to_lock);  // a key still loading is not loaded yet
      if (!load.owns_lock() || !e->loaded.loaded()) continue;
      ++loaded;
      pp_key_info ki;
      if (e->loaded.key && pp_key_info_get(e->loaded.key.get(), &ki, nullptr) == PP_OK && ki.device_resident)
        ++device_resident;
    }

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
      t.sample("proofpipe_jobs_finished_total", double(finished[std::size_t(st)].load()), {{"state", metric_state(st)}});
    t.family("proofpipe_partitions_proved_total", "Partitions the engine proved since the daemon started", "counter");
    t.sample("proofpipe_partitions_proved_total", double(s.partitions_proven));
    t.family("proofpipe_queue_depth", "Jobs waiting for a slot (in the shared queue with --queue)", "gauge");
    t.sample("proofpipe_queue_depth", double(depth));
    t.family("proofpipe_jobs_running", "Jobs this daemon is proving now", "gauge");
    t.sample("proofpipe_jobs_running", double(running));
    t.family("proofpipe_keys_loaded", "Proving keys in the key cache (host memory)", "gauge");
    t.sample("proofpipe_keys_loaded", double(loaded));
    t.family("proofpipe_keys_device_resident", "Keys of the key cache with a copy on some GPU", "gauge");
    t.sample("proofpipe_keys_device_resident", double(device_resident));
    t.family("proofpipe_gpus", "GPUs the engine proves on (0: the CPU prover)", "gauge");
    t.sample("proofpipe_gpus", double(s.gpus));
    t.family("proofpipe_gpu_busy_ms_total", "Milliseconds some GPU ran kernels for the daemon's engine", "counter");
    t.sample("proofpipe_gpu_busy_ms_total", s.ms_gpu_busy);
    t.family("proofpipe_device_memory_bytes",
             "Each GPU's memory: the card (total), what the keys may use (budget), what they use (used, peak)", "gauge");
    const std::vector<pp_gpu_info> gpus = gpu_infos(s.gpus);
    for (const pp_gpu_info& g : gpus) {
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
    for (const pp_gpu_info& g : gpus)
      t.sample("proofpipe_proofs_rejected_total", double(g.proofs_rejected), {{"gpu", std::to_string(g.device)}});
    t.sample("proofpipe_proofs_rejected_total",
             double(s.gpus == 0 ? s.proofs_rejected : s.proofs_rejected_cpu), {{"gpu", "cpu"}});
    t.family("proofpipe_verify_ms_total", "Milliseconds spent verifying proofs before release", "counter");
    t.sample("proofpipe_verify_ms_total", s.ms_verify);
    t.family("proofpipe_device_resident_keys", "Keys with a copy on each GPU", "gauge");
    for (const pp_gpu_info& g : gpus)
      t.sample("proofpipe_device_resident_keys", double(g.resident_keys), {{"gpu", std::to_string(g.device)}});
    t.family("proofpipe_host_budget_bytes", "Host memory partitions in flight may use (--host-budget; 0: unlimited)",
             "gauge");
    t.sample("proofpipe_host_budget_bytes", double(engine_cfg.host_memory_budget));
    t.family("proofpipe_host_rss_bytes", "Resident set size of the daemon process", "gauge");
    t.sample("proofpipe_host_rss_bytes", double(rss_bytes()));
    t.family("proofpipe_host_peak_bytes", "Peak host memory charged to partitions in flight", "gauge");
    t.sample("proofpipe_host_peak_bytes", double(s.host_peak_bytes));
    t.family("proofpipe_uptime_seconds", "Seconds since the daemon started", "gauge");
    t.sample("proofpipe_uptime_seconds", ms_since(started) / 1000.0);
    // Every RPC's OK series exists from the start; other codes once they happened.
    t.family("proofpipe_requests_total", "gRPC calls answered, by RPC and status code", "counter");
    for (std::size_t r = 0; r < std::size_t(Rpc::count); ++r)
      for (std::size_t code = 0; code < kCodes; ++code)
        if (const uint64_t n = requests[r][code].load(); n || code == 0)
          t.sample("proofpipe_requests_total", double(n), {{"rpc", kRpcNames[r]}, {"code", kCodeNames[code]}});
    return t.str();
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
      const uint64_t seen = current_version();
      const JobRecord r = get_or_throw(job_id);
      bool stop;
      {
        std::lock_guard lock(mu);
        stop = stopping;
      }
      if (is_final(r.state) || Clock::now() >= deadline || ctx->IsCancelled() || stop) return fill(out, r);
      wait_change(seen, deadline);
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
          std::lock_guard lock(mu);
          if (auto it = live.find(r.job_id); it != live.end()) {
            it->second.cancel = true;
            if (it->second.pending) pp_cancel(it->second.pending, nullptr);
          }
        }
        notify();
      }
      fill(out, get_or_throw(req->job_id()));
    });
  }

  grpc::Status Watch(grpc::ServerContext* ctx, const v1::WatchRequest* req, grpc::ServerWriter<v1::Job>* writer) override {
    return call(ctx, Rpc::Watch, [&] {
      int last_state = -1;
      uint32_t last_done = UINT32_MAX;
      for (;;) {
        const uint64_t seen = current_version();
        const JobRecord r = get_or_throw(req->job_id());
        v1::Job job;
        fill(&job, r);
        if (int(job.state()) != last_state || job.partitions_done() != last_done) {
          last_state = int(job.state());
          last_done = job.partitions_done();
          if (!writer->Write(job)) return;  // the client went away
        }
        bool stop;
        {
          std::lock_guard lock(mu);
          stop = stopping;
        }
        if (is_final(r.state) || ctx->IsCancelled() || stop) return;
        wait_change(seen, Clock::time_point::max());
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
      {
        std::lock_guard lock(mu);
        out->set_running(uint32_t(live.size()));  // this daemon's
      }
      out->set_max_in_flight(uint32_t(config.jobs_in_flight));
      out->set_max_queue(config.max_queue);
      out->set_jobs_succeeded(count(JobState::succeeded));
      out->set_jobs_failed(count(JobState::failed));
      out->set_jobs_cancelled(count(JobState::cancelled));
      out->set_uptime_s(ms_since(started) / 1000.0);
      out->set_host_rss_bytes(rss_bytes());
      std::vector<std::shared_ptr<KeyEntry>> entries;
      {
        std::lock_guard lock(keys_mu);
        for (const auto& [path, e] : keys) entries.push_back(e);
      }
      for (const auto& e : entries) {
        std::unique_lock load(e->load_mu, std::try_to_lock);  // a key still loading is left out
        if (load.owns_lock() && e->loaded.loaded())
          *out->add_resident_keys() = key_info(e->path, e->loaded, e->file_bytes);
      }
    });
  }

  grpc::Status PreloadKey(grpc::ServerContext* ctx, const v1::KeyRequest* req, v1::KeyInfo* out) override {
    return call(ctx, Rpc::PreloadKey, [&] {
      const ResolvedKey key = resolve_key(root, req->key_path());
      const LoadedKey k = key_for(key, nullptr);
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
      std::shared_ptr<KeyEntry> e;
      {
        std::lock_guard lock(keys_mu);
        if (auto it = keys.find(key); it != keys.end()) {
          e = it->second;
          keys.erase(it);
        }
      }
      uint64_t bytes = 0;
      if (e) {
        std::lock_guard load(e->load_mu);
        // Running jobs hold their own reference; the GPUs' copies go now (or when their partitions end).
        if (e->loaded.key) pp_key_evict(e->loaded.key.get(), nullptr);
        e->loaded = {};
        bytes = e->file_bytes;
      }
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
