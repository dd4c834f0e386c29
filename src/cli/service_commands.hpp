// SPDX-License-Identifier: Apache-2.0 OR MIT
// What `serve | submit | await | status` parsed: shared by the CLI (service_options.cpp) and the
// service module that runs them (service_commands.cpp).
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "server.hpp"

namespace pp::cli {

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
}  // namespace pp::cli

// The service module's entry point (dlsym name "pp_cli_run_service_command"): runs the one of the
// four commands that was parsed and returns its exit code.
extern "C" int pp_cli_run_service_command(const pp::cli::ServiceCommands* commands, int threads);
