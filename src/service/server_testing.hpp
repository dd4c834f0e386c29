// SPDX-License-Identifier: Apache-2.0 OR MIT
// In-process access to the daemon's request handlers, with no network: the fuzz target
// (fuzz/fuzz_service.cpp) makes a Daemon whose ServiceConfig::listen is empty (no gRPC server)
// and calls the handlers of proofpipe.v1.Prover directly, each with a grpc::ServerContext of
// its own (no metadata: make the daemon without --token-file).
#pragma once

#include "proofpipe/v1/prover.grpc.pb.h"
#include "server.hpp"

namespace pp::service {

proofpipe::v1::Prover::Service& handlers(Daemon& daemon);

}  // namespace pp::service
