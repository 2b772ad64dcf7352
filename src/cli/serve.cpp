// cairn serve [--model PATH] [--host 127.0.0.1] [--port 8080] [--api-key KEY]
//             [--served-model-name NAME] [--max-connections N] [--max-body-bytes N]
//             [--shutdown-timeout S] [--tensor-parallel N] [engine and KV flags]
// Binds first (503 while the model loads), prints the URL, serves until SIGINT
// or SIGTERM, then drains: new requests get 503, those in flight have
// --shutdown-timeout seconds to finish, the rest are cancelled, and the SSD
// tier's queues are flushed within the same timeout; exit status 0.
#include <fmt/format.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <thread>

#include "cli/device_flag.h"
#include "cli/engine_flags.h"
#include "cli/loaded_model.h"
#include "cli/serve_setup.h"
#include "cli/verbs.h"
#include "engine/engine.h"
#include "model/config.h"
#include "server/http_server.h"

namespace cairn {
namespace {

struct ServeFlags {
  std::string model;
  server::ServerOptions http;
  double shutdown_timeout_s = 30;
  int threads = 0;
  EngineFlags engine;
  std::string device = "auto";
  GraphFlags graphs;
  std::string max_body = "4MiB";
};

// SIGINT and SIGTERM are blocked in every thread and taken here synchronously.
sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

int wait_for_stop_signal() {
  sigset_t set = stop_signals();
  int sig = 0;
  sigwait(&set, &sig);
  return sig;
}

// Stops admitting, gives requests in flight until the deadline (less what the
// flush keeps: a quarter of the timeout, at most 10 s, with an SSD tier),
// cancels the rest (their checkpoints stay), lets handlers write their last
// frames, then closes the engine: every cached page and checkpoint goes to
// disk within what is left of --shutdown-timeout.
void drain(server::HttpServer& http, Engine& engine, double timeout_s) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(timeout_s));
  const bool ssd = !engine.options().ssd_cache_dir.empty();
  const auto reserve = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(ssd ? std::min(timeout_s / 4, 10.0) : 0.0));
  http.drain();
  engine.stop_admitting();
  while (engine.n_in_flight() > 0 && Clock::now() < deadline - reserve)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  int64_t left = engine.n_in_flight();
  if (left > 0) fmt::print(stderr, "cairn serve: cancelling {} requests\n", left);
  engine.cancel_all();
  // Let the handlers write their last frames before the sockets close.
  auto grace = Clock::now() + std::chrono::seconds(5);
  while ((engine.n_in_flight() > 0 || http.n_active() > 0) && Clock::now() < grace)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (!ssd) return;
  const auto rest = std::max(Clock::duration::zero(), deadline - Clock::now());
  const CacheFlush f = engine.close(std::chrono::duration_cast<std::chrono::milliseconds>(rest));
  if (f.durable)
    fmt::print(stderr, "cairn serve: KV cache and checkpoints flushed to disk\n");
  else
    fmt::print(stderr,
               "cairn serve: flush not durable: {} items ({} bytes) pending, {} dropped, {} failed "
               "{}\n",
               f.pending_items, f.pending_bytes, f.dropped, f.failed, f.error);
}

void run_serve(ServeFlags& f) {
  sigset_t set = stop_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);
  set_threads(f.threads);
  f.http.max_body_bytes = parse_bytes(f.max_body, "--max-body-bytes");
  server::HttpServer http(f.http);
  int port = http.bind();
  http.start();
  fmt::print("cairn serve: listening on http://{}:{}\n", f.http.host, port);
  std::fflush(stdout);
  LoadedModel m = load_for_cli(f.model);
  place_model(m.model, f.device, f.engine.tensor_parallel, f.graphs);
  EngineOptions options = engine_options(f.engine, m.path, m.model->device());
  Engine engine(*m.model, m.tokenizer.get(), options);
  ChatPrompter prompter(*m.tokenizer);
  std::string name = std::filesystem::path(m.path).lexically_normal().filename().string();
  if (name.empty()) name = std::filesystem::path(m.path).parent_path().filename().string();
  server::ServedModel served{&engine,
                             m.tokenizer.get(),
                             parse_context_for(m, prompter),
                             name,
                             "fp_" + options.model_fingerprint.substr(0, 10),
                             static_cast<int64_t>(std::time(nullptr))};
  http.set_model(served);
  fmt::print("cairn serve: ready ({}, context {})\n", m.path, served.parse.context_length);
  std::fflush(stdout);
  int sig = wait_for_stop_signal();
  fmt::print(stderr, "cairn serve: {} received, draining (up to {} s)\n",
             sig == SIGINT ? "SIGINT" : "SIGTERM", f.shutdown_timeout_s);
  drain(http, engine, f.shutdown_timeout_s);
  http.stop();
  fmt::print(stderr, "cairn serve: stopped\n");
}

}  // namespace

void register_serve(CLI::App& app) {
  auto f = std::make_shared<ServeFlags>();
  CLI::App* cmd = app.add_subcommand("serve", "Serve the OpenAI and Anthropic HTTP APIs");
  cmd->add_option("--model,-m", f->model, "model folder (default model if omitted)");
  cmd->add_option("--host", f->http.host, "address to bind")->capture_default_str();
  cmd->add_option("--port", f->http.port, "port (0 = any free port)")->capture_default_str();
  cmd->add_option("--api-key", f->http.api_key,
                  "required as 'Authorization: Bearer KEY' or x-api-key");
  cmd->add_option("--served-model-name", f->http.served_model_name,
                  "the model id clients see (default: the folder's name)");
  cmd->add_option("--max-connections", f->http.max_connections,
                  "connections served at once (one thread each)")
      ->capture_default_str();
  cmd->add_option("--max-body-bytes", f->max_body, "larger request bodies get 413")
      ->capture_default_str();
  cmd->add_option("--read-timeout", f->http.read_timeout_s, "seconds one socket read may wait")
      ->capture_default_str();
  cmd->add_option("--write-timeout", f->http.write_timeout_s, "seconds one socket write may wait")
      ->capture_default_str();
  cmd->add_option("--shutdown-timeout", f->shutdown_timeout_s,
                  "seconds in-flight requests get after SIGINT/SIGTERM")
      ->capture_default_str();
  cmd->add_option("--threads,-t", f->threads, "CPU threads (0 = all cores)")->capture_default_str();
  add_engine_flags(*cmd, f->engine);
  add_device_flag(*cmd, f->device);
  add_graph_flags(*cmd, f->graphs);
  cmd->callback([f] { run_serve(*f); });
}

}  // namespace cairn
