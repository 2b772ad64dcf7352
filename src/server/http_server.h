// The HTTP front of the engine: OpenAI routes (/v1/chat/completions,
// /v1/completions, /v1/models), Anthropic's /v1/messages, /tokenize,
// /detokenize, /health and /metrics, over cpp-httplib (docs/server.md).
//
// Lifecycle: bind() → start() (answers 503 while loading) → set_model() (ready)
// → drain() (503 for new work; in-flight requests go on) → stop().
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "engine/engine.h"
#include "server/metrics.h"
#include "server/parsed_request.h"

namespace cairn::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                   // 0: any free port (bind() returns it)
  std::string api_key;               // "": no authentication
  std::string served_model_name;     // the id /v1/models lists
  int max_connections = 256;         // worker threads: one per open connection
  int64_t max_body_bytes = 4 << 20;  // larger bodies get 413
  int read_timeout_s = 30;           // per read of a request
  int write_timeout_s = 30;          // per write of a response
  int keep_alive_timeout_s = 5;      // an idle keep-alive connection closes after this
  int listen_backlog = 1024;         // pending connections the kernel queues
};

// What the routes serve once the model is loaded; the pointers outlive the server's use.
struct ServedModel {
  Engine* engine = nullptr;
  const tok::Tokenizer* tokenizer = nullptr;
  ParseContext parse;
  std::string name;         // the model id when --served-model-name is not given
  std::string fingerprint;  // system_fingerprint
  int64_t created = 0;      // unix seconds, for /v1/models
};

class HttpServer {
 public:
  explicit HttpServer(ServerOptions options);
  ~HttpServer();  // stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds host:port; returns the port. Throws Error(kIo) naming the address.
  int bind();
  // Serves on a thread of its own; every route but /health and /metrics answers 503 until
  // set_model.
  void start();
  void set_model(ServedModel model);
  // New generation requests get 503; those in flight go on.
  void drain();
  // Stops accepting, closes connections and joins the serving thread.
  void stop();

  bool draining() const { return state_.load() == kDraining; }
  // Requests being answered now (streams included).
  int64_t n_active() const { return active_.load(); }
  ServerMetrics& metrics() { return metrics_; }
  const ServerOptions& options() const { return options_; }

 private:
  class Impl;
  enum State { kLoading, kReady, kDraining };
  ServerOptions options_;
  ServerMetrics metrics_;
  ServedModel model_;
  std::atomic<int> state_{kLoading};
  std::atomic<int64_t> active_{0};
  std::unique_ptr<Impl> impl_;
  std::thread thread_;
};

}  // namespace cairn::server
