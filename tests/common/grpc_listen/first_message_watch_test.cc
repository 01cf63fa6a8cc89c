#include "settle/grpc_listen/first_message_watch.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <vector>

#include "eventually.h"
#include "fake_clock.h"

namespace settle::grpc_listen {
namespace {

using Refusal = FirstMessageWatch::Refusal;

TEST_CASE("a waiting stream expires at its deadline unless its message came first",
          "[grpc_listen]") {
  testing::FakeClock clock;
  FirstMessageWatch watch(Duration(1000), 100, &clock);
  std::atomic<int> expired_late{0};
  std::atomic<int> expired_on_time{0};
  FirstMessageWatch::Waiting late;
  late.expire = [&] { ++expired_late; };
  FirstMessageWatch::Waiting on_time;
  on_time.expire = [&] { ++expired_on_time; };
  REQUIRE(watch.Arm(late, "ipv4:10.0.0.7:5000") == Refusal::kNone);
  REQUIRE(watch.Arm(on_time, "ipv4:10.0.0.8:5000") == Refusal::kNone);
  CHECK(watch.waiting() == 2);

  clock.Advance(Duration(999));
  CHECK(watch.Disarm(on_time));  // its message came in time: it goes on
  CHECK(watch.waiting() == 1);
  clock.Advance(Duration(1));
  REQUIRE(testing::Eventually([&] { return expired_late.load() == 1; }));
  CHECK_FALSE(watch.Disarm(late));  // too late: the expiry owns the call
  CHECK(expired_on_time.load() == 0);
  CHECK(watch.expired() == 1);
  CHECK(watch.waiting() == 0);
}

TEST_CASE("waiting streams are refused past the budget and past one peer's quarter of it",
          "[grpc_listen]") {
  testing::FakeClock clock;
  FirstMessageWatch watch(Duration(1000), 8, &clock);
  CHECK(watch.max_waiting_per_peer() == 2);
  std::vector<FirstMessageWatch::Waiting> waiting(10);
  for (auto& w : waiting) w.expire = [] {};
  // One address holds two, whatever its port; a third from it is refused.
  CHECK(watch.Arm(waiting[0], "ipv4:10.0.0.7:1") == Refusal::kNone);
  CHECK(watch.Arm(waiting[1], "ipv4:10.0.0.7:2") == Refusal::kNone);
  CHECK(watch.Arm(waiting[2], "ipv4:10.0.0.7:3") == Refusal::kPeerShare);
  // Others fill the budget; the ninth is refused whoever it is.
  CHECK(watch.Arm(waiting[2], "ipv4:10.0.0.8:1") == Refusal::kNone);
  CHECK(watch.Arm(waiting[3], "ipv4:10.0.0.8:2") == Refusal::kNone);
  CHECK(watch.Arm(waiting[4], "ipv6:[::1]:1") == Refusal::kNone);
  CHECK(watch.Arm(waiting[5], "ipv6:[::1]:2") == Refusal::kNone);
  CHECK(watch.Arm(waiting[6], "ipv4:10.0.0.9:1") == Refusal::kNone);
  CHECK(watch.Arm(waiting[7], "ipv4:10.0.0.10:1") == Refusal::kNone);
  CHECK(watch.Arm(waiting[8], "ipv4:10.0.0.11:1") == Refusal::kBudget);
  CHECK(watch.refused() == 2);
  // A message that arrives frees its place, and its peer's.
  CHECK(watch.Disarm(waiting[0]));
  CHECK(watch.Arm(waiting[8], "ipv4:10.0.0.7:4") == Refusal::kNone);
  // At the deadline every one expires, and the places are free again.
  clock.Advance(Duration(1000));
  REQUIRE(testing::Eventually([&] { return watch.waiting() == 0; }));
  CHECK(watch.expired() == 8);
  CHECK(watch.Arm(waiting[9], "ipv4:10.0.0.7:5") == Refusal::kNone);
}

}  // namespace
}  // namespace settle::grpc_listen
