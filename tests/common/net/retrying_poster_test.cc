// net::RetryingPoster against a real HTTP server on 127.0.0.1: which answers are attempted
// again, the doubling backoff, and what Stop's grace leaves of the attempts, the one in flight
// included.
#include "settle/net/retrying_poster.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <memory>
#include <string>

#include "fake_clock.h"
#include "participant_server.h"
#include "settle/async/io_threads.h"

namespace settle::net {
namespace {

using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using testing::ParticipantServer;
using testing::ScriptedAnswer;

constexpr const char* kPath = "/hook";

std::unique_ptr<Client> MakeClient() {
  auto client = Client::Create();
  REQUIRE(client);
  return std::move(*client);
}

// A poster on an I/O thread of its own, posting to `server`'s kPath.
struct Posting {
  Posting(const ParticipantServer& server, RetrySettings settings, const Clock& clock)
      : client(MakeClient()),
        strand(asio::make_strand(io.executor())),
        poster(*ParseUrl(server.Url(kPath)), *client, clock, strand, std::move(settings)) {
    io.Start();
  }
  ~Posting() {
    poster.Stop(Duration(0));
    io.Stop();
  }
  // Post(body) started on the poster's strand.
  std::future<Status> Start(std::string body) {
    return asio::co_spawn(strand, poster.Post(std::move(body)), asio::use_future);
  }

  async::IoThreads io{1};
  std::unique_ptr<Client> client;
  asio::strand<asio::any_io_executor> strand;
  RetryingPoster poster;
};

// How long `future` took to be ready, from `since`; fails the test past `limit`.
Duration ReadyAfter(std::future<Status>& future, std::chrono::steady_clock::time_point since,
                    std::chrono::milliseconds limit = 10s) {
  REQUIRE(future.wait_for(limit) == std::future_status::ready);
  return std::chrono::duration_cast<Duration>(std::chrono::steady_clock::now() - since);
}

TEST_CASE("a body answered with a retryable status is posted again, the delay doubling each time",
          "[net][retrying_poster]") {
  ParticipantServer server;
  server.Script(kPath, {{.status = 503, .body = "busy"}, {.status = 503}, {.status = 200}});
  SystemClock clock;
  Posting p(server, {.attempts = 3, .retry_delay = Duration(50)}, clock);
  const Status posted = p.Start("{\"n\":1}").get();
  CHECK(posted.ok());
  const auto calls = server.CallsTo(kPath);
  REQUIRE(calls.size() == 3);
  for (const auto& call : calls) {
    CHECK(call.method == "POST");
    CHECK(call.body == "{\"n\":1}");
  }
  CHECK(calls[1].received_at - calls[0].answered_at >= 50ms);
  CHECK(calls[2].received_at - calls[1].answered_at >= 100ms);
}

TEST_CASE("an answer that retryable refuses ends the attempts, quoted in the failure",
          "[net][retrying_poster]") {
  ParticipantServer server;
  server.Script(kPath, {{.status = 400, .body = "bad body"}});
  SystemClock clock;
  Posting p(server,
            {.attempts = 3,
             .retry_delay = Duration(1),
             .retryable = [](int status) { return status == 503; }},
            clock);
  const Status posted = p.Start("{}").get();
  CHECK(posted.code() == StatusCode::kUnavailable);
  CHECK(posted.message() == "HTTP 400: bad body");
  CHECK(server.CountCalls(kPath) == 1);
}

TEST_CASE(
    "when the attempts run out, the failure is the last one's, and any status is retried "
    "without a retryable",
    "[net][retrying_poster]") {
  ParticipantServer server;
  server.Script(kPath, {{.status = 400, .body = "first"}, {.status = 500, .body = "last"}});
  SystemClock clock;
  Posting p(server, {.attempts = 2, .retry_delay = Duration(1)}, clock);
  const Status posted = p.Start("{}").get();
  CHECK(posted.message() == "HTTP 500: last");
  CHECK(server.CountCalls(kPath) == 2);
}

TEST_CASE("the headers given go with every attempt", "[net][retrying_poster]") {
  ParticipantServer server;
  server.Script(kPath, {{.status = 502}});
  SystemClock clock;
  Posting p(server, {.retry_delay = Duration(1), .headers = {{"api-key", "k1"}, {"x-tenant", "7"}}},
            clock);
  REQUIRE(p.Start("{}").get().ok());
  const auto calls = server.CallsTo(kPath);
  REQUIRE(calls.size() == 2);
  for (const auto& call : calls) {
    CHECK(call.headers.at("api-key") == "k1");
    CHECK(call.headers.at("x-tenant") == "7");
  }
}

TEST_CASE("after Stop a body gets one attempt, and none once the grace has run out by the clock",
          "[net][retrying_poster]") {
  ParticipantServer server;
  server.Script(kPath, {{.status = 503, .body = ""}});
  testing::FakeClock clock;
  Posting p(server, {.attempts = 3, .retry_delay = Duration(1)}, clock);
  p.poster.Stop(Duration(1000));
  const Status once = p.Start("{}").get();
  CHECK(once.message() == "HTTP 503");
  CHECK(server.CountCalls(kPath) == 1);

  clock.Advance(Duration(1000));
  const Status none = p.Start("{}").get();
  CHECK(none.message() == "not attempted: shutting down");
  CHECK(server.CountCalls(kPath) == 1);
}

TEST_CASE("Stop cuts the attempt in flight when the grace runs out, not at the request's timeout",
          "[net][retrying_poster]") {
  ParticipantServer server;
  server.SetDefault(kPath, ScriptedAnswer{.status = 200, .body = "{}", .held = true});
  SystemClock clock;
  Posting p(server, {.timeout = Duration(60'000), .attempts = 3}, clock);
  std::future<Status> posting = p.Start("{}");
  REQUIRE(server.WaitForHeld(1));

  const auto stopped_at = std::chrono::steady_clock::now();
  p.poster.Stop(Duration(200));
  const Duration took = ReadyAfter(posting, stopped_at);
  CHECK(took >= Duration(200));
  const Status cut = posting.get();
  CHECK(cut.code() == StatusCode::kPending);  // sent: the server may have acted on it
  CHECK_THAT(cut.message(), Contains("cancelled while waiting for 127.0.0.1:"));
  CHECK(server.CountCalls(kPath) == 1);  // and not attempted again
  server.Release();
}

TEST_CASE("an attempt in flight at Stop that is answered within the grace is taken",
          "[net][retrying_poster]") {
  ParticipantServer server;
  server.SetDefault(kPath, ScriptedAnswer{.status = 200, .body = "{}", .held = true});
  SystemClock clock;
  Posting p(server, {.timeout = Duration(60'000)}, clock);
  std::future<Status> posting = p.Start("{}");
  REQUIRE(server.WaitForHeld(1));
  p.poster.Stop(Duration(60'000));  // returns once the attempt in flight has taken it in
  server.Release();
  CHECK(posting.get().ok());
}

TEST_CASE("Stop ends a backoff at once, leaving the last attempt's failure",
          "[net][retrying_poster]") {
  ParticipantServer server;
  server.SetDefault(kPath, ScriptedAnswer{.status = 503, .body = "busy"});
  SystemClock clock;
  Posting p(server, {.attempts = 3, .retry_delay = Duration(3'600'000)}, clock);
  std::future<Status> posting = p.Start("{}");
  REQUIRE(server.WaitForCalls(kPath, 1));  // the next attempt is an hour away
  p.poster.Stop(Duration(60'000));
  ReadyAfter(posting, std::chrono::steady_clock::now());
  CHECK(posting.get().message() == "HTTP 503: busy");
  CHECK(server.CountCalls(kPath) == 1);
}

}  // namespace
}  // namespace settle::net
