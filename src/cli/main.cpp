// cairn: one binary, one verb per file (generate, chat, tokenize, inspect, bench, ...).
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <malloc.h>

#include <cstdio>

#include "cli/verbs.h"
#include "core/error.h"

int main(int argc, char** argv) {
  // Step buffers (activations, logits) of tens of MB are freed and asked for
  // again every step: keep them in the heap rather than mapping fresh, zeroed
  // pages from the kernel each time (page faults cost more than a decode step's
  // arithmetic at small batch sizes).
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  CLI::App app{"cairn: an LLM inference engine with tiered, durable, deterministic KV state"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "cairn 0.1.0");
  cairn::register_verbs(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every command-line error exits 1, as cairn's own errors do
    // (CLI11's codes, 105 and up, would tell scripts nothing more).
    return app.exit(e) == 0 ? 0 : 1;
  } catch (const cairn::Error& e) {
    fmt::print(stderr, "cairn: error: {}\n", e.what());
    return 1;
  }
  return 0;
}
