// The alert webhook's shutdown against a real webhook on 127.0.0.1 that holds its answer: Stop
// gives the alert on its way its grace, and no more.
#include "settle/app/webhook_alerts.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <memory>

#include "participant_server.h"
#include "settle/async/io_threads.h"

namespace settle::app {
namespace {

using testing::ParticipantServer;
using testing::ScriptedAnswer;

TEST_CASE(
    "an alert still on its way when Stop's grace runs out is cut then, failed: a webhook that "
    "holds its answer does not hold up the stop",
    "[alerts]") {
  ParticipantServer webhook;
  webhook.SetDefault("/alert", ScriptedAnswer{.status = 200, .body = "{}", .held = true});
  SystemClock clock;
  async::IoThreads io{1};
  auto client = net::Client::Create();
  REQUIRE(client);
  auto alerts = WebhookAlerts::Create(webhook.Url("/alert"), clock, io.executor(), **client,
                                      {.timeout = Duration(60'000)});
  REQUIRE(alerts);
  io.Start();
  storage::Transaction tx;
  tx.global.gid = "s1";
  (*alerts)->TransactionStuck(tx);
  REQUIRE(webhook.WaitForHeld(1));

  const auto stopped_at = std::chrono::steady_clock::now();
  (*alerts)->Stop(Duration(300));
  const auto took =
      std::chrono::duration_cast<Duration>(std::chrono::steady_clock::now() - stopped_at);
  CHECK(took >= Duration(300));    // the alert had its grace
  CHECK(took < Duration(10'000));  // and the stop did not wait for the 60 s timeout
  CHECK((*alerts)->failed() == 1);
  CHECK((*alerts)->sent() == 0);
  CHECK(webhook.CountCalls("/alert") == 1);
  webhook.Release();
  io.Stop();
}

}  // namespace
}  // namespace settle::app
