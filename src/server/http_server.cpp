#include "server/http_server.h"

#include <fmt/format.h>
#include <sys/socket.h>

#include <array>
#include <chrono>
#include <thread>

#include "server/http_server_impl.h"

namespace cairn::server {

bool Listener::widen_backlog(int backlog) {
  return ::listen(svr_sock_, backlog) == 0;
}

namespace {

struct Route {
  const char* method;
  const char* path;
};
constexpr std::array<Route, 8> kRoutes = {{{"POST", "/v1/chat/completions"},
                                           {"POST", "/v1/completions"},
                                           {"POST", "/v1/messages"},
                                           {"GET", "/v1/models"},
                                           {"POST", "/tokenize"},
                                           {"POST", "/detokenize"},
                                           {"GET", "/health"},
                                           {"GET", "/metrics"}}};

// The metrics label of a path: itself when it is a route, else "other" (bounded).
std::string route_label(const std::string& path) {
  for (const Route& r : kRoutes)
    if (path == r.path) return path;
  if (path.rfind("/v1/models/", 0) == 0) return "/v1/models/{id}";
  return "other";
}

const char* allowed_method(const std::string& path) {
  for (const Route& r : kRoutes)
    if (path == r.path) return r.method;
  if (path.rfind("/v1/models/", 0) == 0) return "GET";
  return nullptr;
}

bool needs_key(const std::string& path) {
  return path != "/health" && path != "/metrics";
}

}  // namespace

void send_json(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_content(dump_json(body), "application/json");
}

void send_error(const httplib::Request& req, httplib::Response& res, const ApiError& e) {
  bool anthropic = req.path == "/v1/messages";
  send_json(res, e.status, anthropic ? anthropic_error_body(e) : openai_error_body(e));
}

HttpServer::HttpServer(ServerOptions options)
    : options_(std::move(options)), impl_(std::make_unique<Impl>(*this)) {
  impl_->install();
}

HttpServer::~HttpServer() {
  stop();
}

int HttpServer::bind() {
  int port = options_.port;
  bool ok = port == 0 ? (port = impl_->http.bind_to_any_port(options_.host)) > 0
                      : impl_->http.bind_to_port(options_.host, port);
  if (!ok) fail(ErrorCode::kIo, "cannot listen on {}:{}", options_.host, options_.port);
  impl_->http.widen_backlog(options_.listen_backlog);
  options_.port = port;
  return port;
}

void HttpServer::start() {
  thread_ = std::thread([this] { impl_->http.listen_after_bind(); });
}

void HttpServer::set_model(ServedModel model) {
  model_ = std::move(model);
  state_.store(kReady);
}

void HttpServer::drain() {
  state_.store(kDraining);
}

void HttpServer::stop() {
  if (!impl_) return;
  // httplib's stop() does nothing until the listen thread runs (a load that
  // fails at once stops it that early): wait for it, briefly, since a listen
  // that failed never runs.
  for (int i = 0; thread_.joinable() && !impl_->http.is_running() && i < 2000; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  impl_->http.stop();
  if (thread_.joinable()) thread_.join();
}

void HttpServer::Impl::install() {
  const ServerOptions& o = s.options_;
  int n_threads = std::max(1, o.max_connections);
  http.new_task_queue = [n_threads] {
    return new httplib::ThreadPool(static_cast<size_t>(n_threads));
  };
  http.set_read_timeout(o.read_timeout_s, 0);
  http.set_write_timeout(o.write_timeout_s, 0);
  http.set_keep_alive_timeout(o.keep_alive_timeout_s);
  http.set_keep_alive_max_count(1000);
  http.set_payload_max_length(static_cast<size_t>(o.max_body_bytes));
  http.set_tcp_nodelay(true);
  install_handlers();
  install_routes();
}

void HttpServer::Impl::install_handlers() {
  http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    return authenticate(req, res);
  });
  http.set_error_handler(httplib::Server::HandlerWithResponse(
      [this](const httplib::Request& req, httplib::Response& res) {
        fill_error(req, res);
        return httplib::Server::HandlerResponse::Handled;
      }));
  http.set_exception_handler(
      [](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "internal error";
        try {
          std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        send_error(req, res, ApiError(500, "server_error", what));
      });
  http.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    s.metrics_.count_request(route_label(req.path), res.status);
  });
}

httplib::Server::HandlerResponse HttpServer::Impl::authenticate(const httplib::Request& req,
                                                                httplib::Response& res) {
  const std::string& key = s.options_.api_key;
  if (key.empty() || !needs_key(req.path)) return httplib::Server::HandlerResponse::Unhandled;
  std::string bearer = req.get_header_value("Authorization");
  if (bearer == "Bearer " + key || req.get_header_value("x-api-key") == key)
    return httplib::Server::HandlerResponse::Unhandled;
  send_error(
      req, res,
      ApiError(401, "authentication_error", "invalid or missing API key", "", "invalid_api_key"));
  return httplib::Server::HandlerResponse::Handled;
}

// Gives httplib's own refusals (unknown route, body too large, malformed
// request) the JSON body every other error has.
void HttpServer::Impl::fill_error(const httplib::Request& req, httplib::Response& res) {
  if (!res.body.empty()) return;
  const char* allowed = allowed_method(req.path);
  if (res.status == 404 && allowed && req.method != allowed) {
    res.set_header("Allow", allowed);
    return send_error(req, res,
                      ApiError(405, "invalid_request_error",
                               fmt::format("{} {}: use {}", req.method, req.path, allowed), "",
                               "method_not_allowed"));
  }
  if (res.status == 404)
    return send_error(
        req, res,
        ApiError(404, "invalid_request_error", fmt::format("no route {} {}", req.method, req.path),
                 "", "unknown_route"));
  if (res.status == 413)
    return send_error(req, res,
                      ApiError(413, "invalid_request_error",
                               fmt::format("the body exceeds --max-body-bytes ({} bytes)",
                                           s.options_.max_body_bytes),
                               "", "body_too_large"));
  send_error(req, res,
             ApiError(res.status, "invalid_request_error",
                      fmt::format("malformed HTTP request ({})", res.status), "", "bad_request"));
}

}  // namespace cairn::server
