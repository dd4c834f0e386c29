// SPDX-License-Identifier: Apache-2.0 OR MIT
// libFuzzer target for the proving daemon's request handlers (src/service/server.cpp), in
// process: no network, a Daemon without a gRPC server (server_testing.hpp) on the CPU prover,
// its journal and data root in a temporary directory. The first input byte picks the RPC, the
// rest is parsed as its request message (inputs that do not parse are skipped):
//   0, 1 Submit   2 Await   3 Cancel   4 GetStatus   5 PreloadKey   6 EvictKey   7 Prove
// The data root holds what a fuzzed path may hit: a real tiny key (k/params, 2^4 constraints)
// and two of its witnesses, a snarkjs key of the same circuit with a .wtns (s/c.zkey, s/w.wtns),
// a file with only the .ppw magic, a text file, a fake .zkey, a directory, and symlinks pointing
// out of the root. A job id of one byte n stands for the n-th most recent
// job (so Await and Cancel reach real jobs); Await waits at most 2 ms.
//
// Invariants (a violation aborts): no crash, no sanitizer report; every call answers a status
// among those the API documents for a bad request (never INTERNAL, UNKNOWN or UNAVAILABLE),
// and a refusal's message is not empty.
#include <google/protobuf/stubs/logging.h>
#include <grpcpp/grpcpp.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "../src/service/server_testing.hpp"
#include "proofpipe/groth16/prover.hpp"
#include "proofpipe/groth16/synthetic.hpp"
#include "proofpipe/io/params.hpp"
#include "proofpipe/io/snarkjs.hpp"
#include "proofpipe/io/witness.hpp"
#include "proofpipe/io/wtns.hpp"
#include "proofpipe/io/zkey.hpp"

namespace {

namespace fs = std::filesystem;
namespace v1 = ::proofpipe::v1;

struct World {
  fs::path dir;
  std::unique_ptr<pp::service::Daemon> daemon;
  std::deque<std::string> recent;  // job ids, newest first

  World() {
    google::protobuf::SetLogHandler(nullptr);  // not-UTF-8 string fields: a skipped input, not a log line
    const char* shm = "/dev/shm";
    std::string templ = (fs::exists(shm) ? fs::path(shm) : fs::temp_directory_path()) / "pp-fuzz-service-XXXXXX";
    if (!mkdtemp(templ.data())) std::abort();
    dir = templ;
    const fs::path data = dir / "data", k = data / "k";
    fs::create_directories(k);
    fs::create_directories(data / "a-directory");
    pp::SyntheticOptions opts;
    opts.lg_constraints = 4;
    opts.num_public_inputs = 1;
    const pp::R1cs r1cs = pp::make_porep_like_r1cs(opts);
    pp::write_params(k / "params", pp::setup(r1cs, 7));
    for (int i = 0; i < 2; ++i)
      pp::write_witness(k / ("w" + std::to_string(i) + ".ppw"),
                        pp::witness_from_assignment(r1cs, pp::make_witness(r1cs, opts, 100 + uint64_t(i))));
    std::ofstream(k / "magic-only.ppw", std::ios::binary) << "PPWITNS1";
    std::ofstream(k / "public.json") << "[\"1\"]\n";
    std::ofstream(k / "c.zkey", std::ios::binary) << "zkey" << std::string(60, '\0');
    // A real snarkjs key of the same circuit and one of its .wtns (s/c.zkey, s/w.wtns).
    fs::create_directories(data / "s");
    pp::write_zkey(data / "s" / "c.zkey", pp::zkey_test_setup(r1cs, 9));
    pp::write_wtns(data / "s" / "w.wtns", pp::make_witness(r1cs, opts, 100));
    std::ofstream(dir / "outside.ppw", std::ios::binary) << "PPWITNS1";
    fs::create_symlink(dir / "outside.ppw", data / "escape.ppw");
    fs::create_symlink("/etc", data / "etc");
    fs::create_symlink("params", k / "params-link");

    pp::service::ServiceConfig config;
    config.listen = "";  // no gRPC server: in-process calls only
    config.data_root = data;
    config.state_dir = dir / "state";
    config.engine.cpu_only = true;
    config.engine.threads = 1;
    config.jobs_in_flight = 1;
    config.max_queue = 8;
    daemon = std::make_unique<pp::service::Daemon>(config);
  }
  ~World() {
    daemon.reset();
    std::error_code ec;
    fs::remove_all(dir, ec);
  }

  // A one-byte job id n means the n-th most recent job.
  std::string job(const std::string& id) const {
    if (id.size() != 1 || recent.empty()) return id;
    return recent[uint8_t(id[0]) % recent.size()];
  }
  void remember(const std::string& id) {
    if (id.empty()) return;
    recent.push_front(id);
    if (recent.size() > 16) recent.pop_back();
  }
};

World& world() {
  static World w;
  return w;
}

void check(const grpc::Status& status) {
  switch (status.error_code()) {
    case grpc::StatusCode::OK: return;
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::NOT_FOUND:
    case grpc::StatusCode::ALREADY_EXISTS:
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
    case grpc::StatusCode::UNIMPLEMENTED:
      if (status.error_message().empty()) {
        std::fprintf(stderr, "fuzz_service: status %d without a message\n", int(status.error_code()));
        std::abort();
      }
      return;
    default:
      std::fprintf(stderr, "fuzz_service: unexpected status %d: %s\n", int(status.error_code()),
                   status.error_message().c_str());
      std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  World& w = world();
  v1::Prover::Service& h = pp::service::handlers(*w.daemon);
  grpc::ServerContext ctx;
  const uint8_t* body = data + 1;
  const int n = int(size - 1);
  switch (data[0] % 8) {
    case 0:
    case 1: {
      v1::SubmitRequest req;
      if (!req.ParseFromArray(body, n)) return 0;
      v1::SubmitResponse resp;
      const grpc::Status st = h.Submit(&ctx, &req, &resp);
      check(st);
      if (st.ok()) w.remember(resp.job_id());
      break;
    }
    case 2: {
      v1::AwaitRequest req;
      if (!req.ParseFromArray(body, n)) return 0;
      req.set_job_id(w.job(req.job_id()));
      req.set_timeout_ms(1 + req.timeout_ms() % 2);
      v1::Job job;
      check(h.Await(&ctx, &req, &job));
      break;
    }
    case 3: {
      v1::CancelRequest req;
      if (!req.ParseFromArray(body, n)) return 0;
      req.set_job_id(w.job(req.job_id()));
      v1::Job job;
      check(h.Cancel(&ctx, &req, &job));
      break;
    }
    case 4: {
      v1::GetStatusRequest req;
      if (!req.ParseFromArray(body, n)) return 0;
      v1::Status status;
      check(h.GetStatus(&ctx, &req, &status));
      break;
    }
    case 5:
    case 6: {
      v1::KeyRequest req;
      if (!req.ParseFromArray(body, n)) return 0;
      v1::KeyInfo info;
      check(data[0] % 8 == 5 ? h.PreloadKey(&ctx, &req, &info) : h.EvictKey(&ctx, &req, &info));
      break;
    }
    case 7: {  // Submit and wait: the job runs to its end (succeeds or fails) on the tiny key
      v1::SubmitRequest req;
      if (!req.ParseFromArray(body, n)) return 0;
      v1::Job job;
      const grpc::Status st = h.Prove(&ctx, &req, &job);
      check(st);
      if (st.ok()) {
        w.remember(job.job_id());
        if (job.state() != v1::JOB_STATE_SUCCEEDED && job.state() != v1::JOB_STATE_FAILED &&
            job.state() != v1::JOB_STATE_CANCELLED)
          std::abort();  // Prove returns a finished job
      }
      break;
    }
  }
  return 0;
}
