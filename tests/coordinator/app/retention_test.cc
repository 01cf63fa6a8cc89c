// Retention: finished transactions older than the configured age are deleted in bounded
// batches; unfinished and recent ones are kept.
#include "settle/app/retention.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <thread>

#include "coordinator_harness.h"

namespace settle::app {
namespace {

using testing::CoordinatorHarness;

constexpr Duration kHour{3'600'000};

engine::SubmitRequest Saga(const std::string& gid) {
  engine::SubmitRequest r{gid, TransType::kSaga, {}, {}};
  r.steps.push_back({"http://p/action", "http://p/compensate"});
  r.payloads.push_back(R"({"amount":30})");
  return r;
}

bool Stored(CoordinatorHarness& h, const std::string& gid) {
  auto loaded = h.store().Load(gid);
  REQUIRE(loaded);
  return loaded->has_value();
}

TEST_CASE("transactions finished longer ago than the retention are deleted, in batches",
          "[coordinator][retention]") {
  CoordinatorHarness h;
  for (int i = 0; i < 5; ++i)
    REQUIRE(h.coordinator().Submit(Saga("old-" + std::to_string(i))).ok());
  h.clock().Advance(2 * kHour);
  REQUIRE(h.coordinator().Submit(Saga("recent")).ok());
  REQUIRE(h.coordinator().Prepare({"unfinished", {}}).ok());
  h.clock().Advance(kHour);
  Retention retention(h.store(), h.clock(), {.keep = 2 * kHour, .batch_size = 2});

  CHECK(retention.DeleteBatch().value() == 2);
  CHECK(retention.DeleteBatch().value() == 2);
  CHECK(retention.DeleteBatch().value() == 1);
  CHECK(retention.DeleteBatch().value() == 0);

  CHECK(retention.deleted() == 5);
  for (int i = 0; i < 5; ++i) CHECK_FALSE(Stored(h, "old-" + std::to_string(i)));
  CHECK(Stored(h, "recent"));      // finished one hour ago
  CHECK(Stored(h, "unfinished"));  // created three hours ago, never finished
}

TEST_CASE("the audit trail is kept as long as transactions, then deleted with them",
          "[coordinator][retention][audit]") {
  CoordinatorHarness h;
  storage::AuditEntry entry;
  entry.actor = "on-call";
  entry.action = "retry_host";
  entry.parameters = "{}";
  entry.reason = "old";
  entry.at = h.clock().Now();  // RecordAudit stores the time it is given
  REQUIRE(h.store().Commit(storage::WriteBatch().Add(storage::RecordAudit{entry})).ok());
  h.clock().Advance(3 * kHour);
  entry.reason = "recent";
  entry.at = h.clock().Now();
  REQUIRE(h.store().Commit(storage::WriteBatch().Add(storage::RecordAudit{entry})).ok());
  h.clock().Advance(kHour);
  Retention retention(h.store(), h.clock(), {.keep = 2 * kHour});

  CHECK(retention.DeleteBatch().value() == 0);  // no transaction to delete: the audit's turn

  auto left = h.store().ListAudit(storage::AuditQuery{});
  REQUIRE(left);
  REQUIRE(left->entries.size() == 1);
  CHECK(left->entries[0].reason == "recent");
}

TEST_CASE("retention off deletes nothing", "[coordinator][retention]") {
  CoordinatorHarness h;
  REQUIRE(h.coordinator().Submit(Saga("old")).ok());
  h.clock().Advance(1000 * kHour);
  Retention retention(h.store(), h.clock(), {.keep = Duration(0)});

  CHECK(retention.DeleteBatch().value() == 0);
  retention.Start();  // no thread: nothing to do
  retention.Stop();
  CHECK(Stored(h, "old"));
}

TEST_CASE("a storage failure leaves everything in place and is reported",
          "[coordinator][retention]") {
  CoordinatorHarness h;
  REQUIRE(h.coordinator().Submit(Saga("old")).ok());
  h.clock().Advance(3 * kHour);
  Retention retention(h.faulty_store(), h.clock(), {.keep = kHour});
  h.faulty_store().FailCommits(true);

  CHECK(retention.DeleteBatch().status().code() == StatusCode::kUnavailable);
  CHECK(Stored(h, "old"));
  h.faulty_store().FailCommits(false);
  CHECK(retention.DeleteBatch().value() == 1);
}

TEST_CASE("the background thread deletes the backlog and stops promptly",
          "[coordinator][retention]") {
  CoordinatorHarness h;
  for (int i = 0; i < 7; ++i)
    REQUIRE(h.coordinator().Submit(Saga("old-" + std::to_string(i))).ok());
  h.clock().Advance(3 * kHour);
  Retention retention(
      h.store(), h.clock(),
      {.keep = kHour, .batch_size = 3, .interval = Duration(60'000), .pause = Duration(1)});

  retention.Start();
  for (int i = 0; i < 500 && retention.deleted() < 7; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const auto stop_started = std::chrono::steady_clock::now();
  retention.Stop();  // wakes it from its one-minute wait

  CHECK(retention.deleted() == 7);
  CHECK(std::chrono::steady_clock::now() - stop_started < std::chrono::seconds(5));
}

}  // namespace
}  // namespace settle::app
