#pragma once

#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "eventually.h"
#include "json_client.h"
#include "settle/app/settled_server.h"
#include "temp_dir.h"

namespace settle::testing {

// settled, in this process, on 127.0.0.1 at a kernel-chosen port with a fresh database and
// quick retries (50 ms doubling to 400 ms, stuck after 3 failures), talking to real
// participants over real sockets. When `adjust` serves the API over HTTPS, client() trusts
// `client_ca_file`, and presents `client_cert_file` (mutual TLS) when given. It runs on the
// system's clock, or on `clock` when given (a FakeClock, which must outlive it).
class InProcessSettled {
 public:
  explicit InProcessSettled(
      std::function<void(app::ServerConfig&)> adjust = [](app::ServerConfig&) {},
      std::string client_ca_file = "", std::string client_cert_file = "",
      std::string client_key_file = "", const Clock* clock = nullptr) {
    app::ServerConfig config;
    config.port = 0;
    config.db_path = dir_.File("settle.db");
    config.coordinator.retry_interval = Duration(50);
    config.retry.max_interval = Duration(400);
    config.retry.stuck_after = 3;
    config.io_threads = 2;
    config.shutdown_grace = Duration(2000);
    config.grpc.enabled = false;  // a test that wants it sets enabled, on port 0 (any)
    config.grpc.port = 0;
    adjust(config);
    auto server = app::SettledServer::Start(config, clock != nullptr ? *clock : clock_);
    if (!server) FAIL("settled did not start: " << server.status().ToString());
    server_ = std::move(*server);
    client_ = std::make_unique<JsonClient>(server_->port(), "127.0.0.1", client_ca_file,
                                           client_cert_file, client_key_file);
  }

  int port() const { return server_->port(); }
  int grpc_port() const { return server_->grpc_port(); }
  JsonClient& client() { return *client_; }
  app::SettledServer& server() { return *server_; }

  // POST /api/settle/<route>.
  JsonResponse Call(const std::string& route, const nlohmann::json& body) {
    return client_->PostJson("/api/settle/" + route, body);
  }
  nlohmann::json Query(const std::string& gid) {
    return client_->Get("/api/settle/query?gid=" + gid).json;
  }
  std::string StatusOf(const std::string& gid) {
    const auto q = Query(gid);
    if (!q.is_object() || q["transaction"].is_null()) return "";
    return q["transaction"]["status"].get<std::string>();
  }

  // Watches /query (as a client would) until `done` holds or `timeout` passes.
  bool WaitUntil(const std::string& gid, const std::function<bool(const nlohmann::json&)>& done,
                 std::chrono::milliseconds timeout = std::chrono::seconds(15)) {
    return Eventually([&] { return done(Query(gid)); }, timeout);
  }
  bool WaitForStatus(const std::string& gid, const std::string& status) {
    return WaitUntil(gid, [&](const nlohmann::json& q) {
      return q.is_object() && q["transaction"].is_object() && q["transaction"]["status"] == status;
    });
  }

 private:
  TempDir dir_;
  SystemClock clock_;
  std::unique_ptr<app::SettledServer> server_;
  std::unique_ptr<JsonClient> client_;
};

}  // namespace settle::testing
