// Entry points of the CLI's subcommands (each returns the process exit code).
#pragma once

#include <cstdint>

namespace pp::cli {

struct SelfcheckOptions {
  uint64_t seed = 0x9e3779b97f4a7c15ULL;
  int iterations = 64;
};

// End-to-end arithmetic self-check: fields, curves, encodings and the pairing agree with
// each other and with published constants. Prints a table; exit code 0 when all hold.
int run_selfcheck(const SelfcheckOptions& options);

}  // namespace pp::cli
