// HttpServer's insides, shared by http_server.cpp (setup, auth, errors) and
// routes.cpp (the handlers). Not part of the server's interface.
#pragma once

#include <httplib.h>

#include "server/api_error.h"
#include "server/http_server.h"

namespace cairn::server {

// httplib's listen backlog is fixed at 5; a burst of clients would wait on
// SYN retries. listen() again on the bound socket widens it (Linux).
class Listener : public httplib::Server {
 public:
  bool widen_backlog(int backlog);
};

class HttpServer::Impl {
 public:
  explicit Impl(HttpServer& owner) : s(owner) {}
  void install();

  HttpServer& s;
  Listener http;

 private:
  void install_handlers();
  void install_routes();
  httplib::Server::HandlerResponse authenticate(const httplib::Request& req,
                                                httplib::Response& res);
  void fill_error(const httplib::Request& req, httplib::Response& res);

  // Route handlers (routes.cpp).
  void generate(Api api, const httplib::Request& req, httplib::Response& res);
  void list_models(const httplib::Request& req, httplib::Response& res);
  void tokenize(const httplib::Request& req, httplib::Response& res);
  void detokenize(const httplib::Request& req, httplib::Response& res);
  void health(const httplib::Request& req, httplib::Response& res);
  void metrics(const httplib::Request& req, httplib::Response& res);
  void flush_cache(const httplib::Request& req, httplib::Response& res);
  // Throws ApiError 503 unless the model is loaded and the server not draining.
  void require_ready() const;
  std::string model_name() const;
};

// Writes `e` as the response: OpenAI's shape, or Anthropic's on /v1/messages.
void send_error(const httplib::Request& req, httplib::Response& res, const ApiError& e);
void send_json(httplib::Response& res, int status, const nlohmann::json& body);

}  // namespace cairn::server
