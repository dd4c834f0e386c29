// proofpipe command line: parses arguments (CLI11) and dispatches to the subcommands.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <exception>

#include "commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"proofpipe: Groth16 proving engine for BLS12-381"};
  app.set_version_flag("--version", "proofpipe 0.1.0");
  app.require_subcommand(1);

  pp::cli::SelfcheckOptions selfcheck;
  auto* sc = app.add_subcommand("selfcheck", "Check field, curve, encoding and pairing arithmetic end to end");
  sc->add_option("--seed", selfcheck.seed, "Seed of the pseudo-random inputs")->capture_default_str();
  sc->add_option("--iterations", selfcheck.iterations, "Random cases per check")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();

  CLI11_PARSE(app, argc, argv);
  try {
    if (sc->parsed()) return pp::cli::run_selfcheck(selfcheck);
  } catch (const std::exception& e) {
    fmt::print(stderr, "proofpipe: error: {}\n", e.what());
    return 1;
  }
  return 0;
}
