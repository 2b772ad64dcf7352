// cairn serve [--model PATH] [--host 127.0.0.1] [--port 8080] [--api-key KEY]
//             [--served-model-name NAME] [--max-connections N] [--max-body-bytes N]
//             [--shutdown-timeout S] [engine and KV flags]
// Binds first (503 while the model loads), prints the URL, serves until SIGINT
// or SIGTERM, then drains: new requests get 503, those in flight have
// --shutdown-timeout seconds to finish, the rest are cancelled; exit status 0.
#include <fmt/format.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <thread>

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
  EngineOptions engine;
  std::string kv_budget = "1G", prefix_cache = "256M", max_body = "4M";
  bool kv_config = false;
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

void drain(server::HttpServer& http, Engine& engine, double timeout_s) {
  using Clock = std::chrono::steady_clock;
  http.drain();
  engine.stop_admitting();
  auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  while (engine.n_in_flight() > 0 && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  int64_t left = engine.n_in_flight();
  if (left > 0) fmt::print(stderr, "cairn serve: cancelling {} requests\n", left);
  engine.cancel_all();
  // Let the handlers write their last frames before the sockets close.
  auto grace = Clock::now() + std::chrono::seconds(5);
  while ((engine.n_in_flight() > 0 || http.n_active() > 0) && Clock::now() < grace)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

void run_serve(ServeFlags& f) {
  sigset_t set = stop_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);
  set_threads(f.threads);
  f.http.max_body_bytes = parse_bytes(f.max_body, "--max-body-bytes");
  f.engine.kv_budget_bytes = parse_bytes(f.kv_budget, "--kv-budget");
  f.engine.prefix_cache_bytes = parse_bytes(f.prefix_cache, "--prefix-cache-bytes");
  server::HttpServer http(f.http);
  int port = http.bind();
  http.start();
  fmt::print("cairn serve: listening on http://{}:{}\n", f.http.host, port);
  std::fflush(stdout);
  LoadedModel m = load_for_cli(f.model);
  if (f.kv_config) f.engine.kv.kv_config_path = m.model->config().path + "/kv_config.json";
  f.engine.model_fingerprint = fingerprint_files(m.path);
  Engine engine(*m.model, m.tokenizer.get(), f.engine);
  ChatPrompter prompter(*m.tokenizer);
  server::ServedModel served{&engine, m.tokenizer.get(), parse_context_for(m, prompter),
                             "fp_" + f.engine.model_fingerprint.substr(0, 10),
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

void add_engine_flags(CLI::App& cmd, ServeFlags& f) {
  cmd.add_option("--max-batch-tokens", f.engine.max_batch_tokens, "tokens per engine step")
      ->capture_default_str();
  cmd.add_option("--max-seqs", f.engine.max_seqs, "running sequences at most")
      ->capture_default_str();
  cmd.add_option("--max-queue", f.engine.max_queue, "waiting requests at most (more get 429)")
      ->capture_default_str();
  cmd.add_option("--kv-budget", f.kv_budget, "KV page memory (e.g. 512M, 2G)")
      ->capture_default_str();
  cmd.add_option("--prefix-cache-bytes", f.prefix_cache, "RAM prefix cache (0 = off)")
      ->capture_default_str();
  cmd.add_option("--kv-bits", f.engine.kv.bits, "quantize KV pages to 4 or 8 bits (0 = off)")
      ->capture_default_str();
  cmd.add_option("--kv-group-size", f.engine.kv.group_size, "KV quantization group: 32, 64 or 128")
      ->capture_default_str();
  cmd.add_option("--kv-quant-start", f.engine.kv.quant_start,
                 "keep full-precision KV until a sequence holds N positions")
      ->capture_default_str();
  cmd.add_option("--kv-dtype", f.engine.kv.dtype,
                 "full-precision KV store: f32, bf16, f16 or model")
      ->capture_default_str();
  cmd.add_flag("--kv-config", f.kv_config, "per-layer KV quantization from kv_config.json");
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
  add_engine_flags(*cmd, *f);
  cmd->callback([f] { run_serve(*f); });
}

}  // namespace cairn
