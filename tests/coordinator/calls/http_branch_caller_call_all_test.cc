// HttpBranchCaller::CallAll: order, and calls made at once without a thread each.
#include <atomic>
#include <catch2/catch.hpp>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "participant_server.h"
#include "settle/calls/http_branch_caller.h"
#include "sync_branch_caller.h"

namespace settle::calls {
namespace {

using settle::testing::ParticipantServer;
using settle::testing::ReceivedCall;
using settle::testing::ScriptedAnswer;

engine::BranchCall CallTo(const std::string& url, const std::string& branch_id = "01") {
  engine::BranchCall call;
  call.gid = "gid-1";
  call.branch_id = branch_id;
  call.url = url;
  call.data = "{}";
  return call;
}

// Holds every request until `expected` requests are inside at the same time. Each answers
// SUCCESS once they are all in, or 500 if the others do not arrive in time, so a caller that
// makes its calls one after another fails instead of hanging.
class Gate {
 public:
  explicit Gate(std::size_t expected) : expected_(expected) {}

  ScriptedAnswer Pass() {
    std::unique_lock<std::mutex> lock(mu_);
    ++arrived_;
    all_arrived_.notify_all();
    if (!all_arrived_.wait_for(lock, std::chrono::seconds(10),
                               [this] { return arrived_ >= expected_; })) {
      return {500, "only " + std::to_string(arrived_) + " requests arrived together"};
    }
    return {};
  }

 private:
  const std::size_t expected_;
  std::mutex mu_;
  std::condition_variable all_arrived_;
  std::size_t arrived_ = 0;
};

TEST_CASE("CallAll returns the outcomes in the order of the calls",
          "[coordinator][http_branch_caller]") {
  ParticipantServer participant;
  participant.SetDefault("/failure", {409, R"({"dtm_result":"FAILURE"})"});
  participant.SetDefault("/ongoing", {425, ""});
  participant.SetDefault("/error", {500, "boom"});
  testing::SyncBranchCaller caller;

  const std::vector<engine::BranchOutcome> outcomes = caller.CallAll({
      CallTo(participant.Url("/success")),
      CallTo(participant.Url("/failure")),
      CallTo(participant.Url("/ongoing")),
      CallTo(participant.Url("/error")),
      CallTo("not a url"),
      CallTo(participant.Url("/success")),
  });

  REQUIRE(outcomes.size() == 6);
  CHECK(outcomes[0].result == BranchResult::kSuccess);
  CHECK(outcomes[1].result == BranchResult::kFailure);
  CHECK(outcomes[2].result == BranchResult::kOngoing);
  CHECK(outcomes[3].result == BranchResult::kUnknown);
  CHECK(outcomes[3].detail == "HTTP 500: boom");
  CHECK(outcomes[4].result == BranchResult::kUnknown);
  CHECK(outcomes[4].http_status == 0);
  CHECK(outcomes[5].result == BranchResult::kSuccess);
  CHECK(participant.CountCalls("/success") == 2);
}

TEST_CASE("CallAll makes one call, or none for none", "[coordinator][http_branch_caller]") {
  ParticipantServer participant;
  testing::SyncBranchCaller caller;

  CHECK(caller.CallAll({}).empty());
  const std::vector<engine::BranchOutcome> outcomes =
      caller.CallAll({CallTo(participant.Url("/confirm"))});

  REQUIRE(outcomes.size() == 1);
  CHECK(outcomes[0].result == BranchResult::kSuccess);
  CHECK(participant.CountCalls("/confirm") == 1);
}

TEST_CASE("CallAll makes its calls at the same time, on a single I/O thread",
          "[coordinator][http_branch_caller]") {
  constexpr std::size_t kCalls = 6;
  ParticipantServer participant;
  Gate gate(kCalls);
  participant.SetHandler("/confirm", [&gate](const ReceivedCall&) { return gate.Pass(); });
  testing::SyncBranchCaller caller(/*io_threads=*/1);
  std::vector<engine::BranchCall> calls;
  for (std::size_t i = 0; i < kCalls; ++i) {
    calls.push_back(CallTo(participant.Url("/confirm"), "0" + std::to_string(i + 1)));
    calls.back().timeout = Duration(30'000);  // longer than the gate waits
  }

  const std::vector<engine::BranchOutcome> outcomes = caller.CallAll(calls);

  REQUIRE(outcomes.size() == kCalls);
  for (const engine::BranchOutcome& outcome : outcomes) {
    CHECK(outcome.result == BranchResult::kSuccess);
    CHECK(outcome.detail.empty());
  }
}

TEST_CASE("CallAll may run from many coroutines at once", "[coordinator][http_branch_caller]") {
  constexpr int kThreads = 4;
  constexpr int kCallsPerThread = 5;
  ParticipantServer participant;
  testing::SyncBranchCaller caller;
  std::atomic<int> successes{0};

  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      std::vector<engine::BranchCall> calls(kCallsPerThread, CallTo(participant.Url("/confirm")));
      for (const engine::BranchOutcome& outcome : caller.CallAll(calls)) {
        if (outcome.result == BranchResult::kSuccess) ++successes;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();

  CHECK(successes == kThreads * kCallsPerThread);
  CHECK(participant.CountCalls("/confirm") == kThreads * kCallsPerThread);
}

}  // namespace
}  // namespace settle::calls
