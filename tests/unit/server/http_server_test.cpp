// The HTTP server before a model is loaded and while draining, over real
// loopback HTTP: 503s, the JSON bodies of httplib's own refusals (404, 405,
// 413), authentication, /metrics.
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "server/http_server.h"

namespace cairn::server {
namespace {

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions o;
    o.port = 0;
    o.api_key = "k";
    o.max_body_bytes = 1000;
    o.max_connections = 4;
    server_ = std::make_unique<HttpServer>(o);
    port_ = server_->bind();
    server_->start();
    client_ = std::make_unique<httplib::Client>("127.0.0.1", port_);
    client_->set_default_headers({{"Authorization", "Bearer k"}});
  }
  void TearDown() override { server_->stop(); }

  static nlohmann::json error_of(const httplib::Result& r) {
    EXPECT_TRUE(r);
    nlohmann::json body = nlohmann::json::parse(r->body, nullptr, false);
    EXPECT_TRUE(body.is_object()) << r->body;
    return body.is_object() && body.contains("error") ? body["error"] : nlohmann::json();
  }

  std::unique_ptr<HttpServer> server_;
  std::unique_ptr<httplib::Client> client_;
  int port_ = 0;
};

TEST_F(HttpServerTest, AnswersServiceUnavailableWhileLoading) {
  auto h = client_->Get("/health");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 503);
  EXPECT_EQ(nlohmann::json::parse(h->body)["status"], "loading");
  auto c = client_->Post("/v1/chat/completions", "{}", "application/json");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, 503);
  EXPECT_EQ(error_of(c)["code"], "model_loading");
  auto m = client_->Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->status, 200);
  EXPECT_NE(m->body.find("cairn_ready 0\n"), std::string::npos) << m->body;
  EXPECT_EQ(client_->Get("/v1/models")->status, 503);
}

TEST_F(HttpServerTest, DrainingAnswersServiceUnavailable) {
  server_->drain();
  auto h = client_->Get("/health");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 503);
  EXPECT_EQ(nlohmann::json::parse(h->body)["status"], "draining");
  EXPECT_NE(client_->Get("/metrics")->body.find("cairn_draining 1\n"), std::string::npos);
}

TEST_F(HttpServerTest, RefusalsHaveJsonBodies) {
  auto r = client_->Get("/v2/nothing");
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(error_of(r)["code"], "unknown_route");
  r = client_->Get("/v1/completions");
  EXPECT_EQ(r->status, 405);
  EXPECT_EQ(r->get_header_value("Allow"), "POST");
  EXPECT_EQ(error_of(r)["code"], "method_not_allowed");
  r = client_->Post("/v1/completions", std::string(5000, 'x'), "application/json");
  EXPECT_EQ(r->status, 413);
  EXPECT_EQ(error_of(r)["code"], "body_too_large");
  r = client_->Delete("/v1/messages");
  EXPECT_EQ(r->status, 405);
  nlohmann::json body = nlohmann::json::parse(r->body);
  EXPECT_EQ(body["type"], "error");  // Anthropic's shape on its route
}

TEST_F(HttpServerTest, ApiKeyGuardsEverythingButHealthAndMetrics) {
  httplib::Client anon("127.0.0.1", port_);
  auto r = anon.Post("/v1/chat/completions", "{}", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  EXPECT_EQ(error_of(r)["type"], "authentication_error");
  r = anon.Post("/v1/messages", {{"x-api-key", "wrong"}}, "{}", "application/json");
  EXPECT_EQ(r->status, 401);
  EXPECT_EQ(nlohmann::json::parse(r->body)["error"]["type"], "authentication_error");
  r = anon.Post("/v1/messages", {{"x-api-key", "k"}}, "{}", "application/json");
  EXPECT_EQ(r->status, 503);  // past authentication: the model is loading
  EXPECT_EQ(anon.Get("/health")->status, 503);
  EXPECT_EQ(anon.Get("/metrics")->status, 200);
}

}  // namespace
}  // namespace cairn::server
