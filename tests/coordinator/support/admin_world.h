#pragma once

#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <string>

#include "in_process_settled.h"
#include "json_client.h"

namespace settle::testing {

// One bearer token per access level, each named (after "#") as the audit trail, the alerts and
// the logs show its caller: "dashboard", "orders" and "on-call".
inline const std::string kReadToken = "world-read-token-aaaaaaaaaaaa";
inline const std::string kClientToken = "world-client-token-bbbbbbbbbb";
inline const std::string kAdminToken = "world-admin-token-cccccccccccc";

// For AdminWorld's `adjust`: a failed call is retried only an hour later, or when an operator
// asks, so that only an operator moves a failing transaction on.
inline void RetryHourly(app::ServerConfig& config) {
  config.coordinator.retry_interval = std::chrono::hours(1);
  config.retry.max_interval = std::chrono::hours(1);
}

// settled in this process (InProcessSettled) that admits the three tokens above, and a client
// calling it with each: where the tests of operators' routes (audit, pause, bulk, resolve)
// start. `adjust` changes the rest of the configuration, after the tokens are added.
struct AdminWorld {
  explicit AdminWorld(std::function<void(app::ServerConfig&)> adjust = [](app::ServerConfig&) {})
      : settled([&adjust](app::ServerConfig& config) {
          REQUIRE(config.api.tokens
                      .AddFromText("read " + kReadToken + "  # dashboard\nclient " + kClientToken +
                                   "  # orders\nadmin " + kAdminToken + "  # on-call\n")
                      .ok());
          adjust(config);
        }),
        client(ClientWith(settled.port(), kClientToken)),
        admin(ClientWith(settled.port(), kAdminToken)),
        reader(ClientWith(settled.port(), kReadToken)) {}

  InProcessSettled settled;
  JsonClient client;  // with kClientToken
  JsonClient admin;   // with kAdminToken
  JsonClient reader;  // with kReadToken
};

}  // namespace settle::testing
