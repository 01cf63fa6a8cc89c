// The Store contract for listing: List (filters, order, keyset paging) and ListUnfinished.
// These tests run against the store that store_factory.h makes, whatever its implementation.
#include <catch2/catch.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "record_builders.h"
#include "settle/storage/store.h"
#include "store_factory.h"
#include "store_test_util.h"

namespace settle::storage::testing {
namespace {

// Inserts gids "g0".."g{n-1}" in order, so g{n-1} is the newest.
void InsertMany(Store& store, int n) {
  for (int i = 0; i < n; ++i) {
    MustCommit(store, Batch(InsertGlobal{MakeGlobal("g" + std::to_string(i))}));
  }
}

TEST_CASE("List returns the newest transactions first", "[storage]") {
  TestStore store;
  InsertMany(*store, 3);

  const ListPage page = MustList(*store, ListQuery{});

  CHECK(Gids(page) == std::vector<std::string>{"g2", "g1", "g0"});
  CHECK_FALSE(page.next_position.has_value());
}

TEST_CASE("List filters by status, trans type and stuck, alone and together", "[storage]") {
  TestStore store;
  MustCommit(*store, Batch(InsertGlobal{MakeGlobal("tcc-prepared")}));
  MustCommit(*store, Batch(InsertGlobal{MakeGlobal("saga-submitted", TransType::kSaga,
                                                   GlobalStatus::kSubmitted)}));
  GlobalRecord stuck = MakeGlobal("tcc-submitted-stuck", TransType::kTcc, GlobalStatus::kSubmitted);
  stuck.stuck = true;
  MustCommit(*store, Batch(InsertGlobal{stuck}));
  MustCommit(
      *store,
      Batch(InsertGlobal{MakeGlobal("saga-failed", TransType::kSaga, GlobalStatus::kFailed)}));

  ListQuery by_status;
  by_status.status = GlobalStatus::kSubmitted;
  CHECK(Gids(MustList(*store, by_status)) ==
        std::vector<std::string>{"tcc-submitted-stuck", "saga-submitted"});

  ListQuery by_type;
  by_type.trans_type = TransType::kSaga;
  CHECK(Gids(MustList(*store, by_type)) ==
        std::vector<std::string>{"saga-failed", "saga-submitted"});

  ListQuery only_stuck;
  only_stuck.stuck = true;
  CHECK(Gids(MustList(*store, only_stuck)) == std::vector<std::string>{"tcc-submitted-stuck"});

  ListQuery not_stuck;
  not_stuck.stuck = false;
  CHECK(Gids(MustList(*store, not_stuck)) ==
        std::vector<std::string>{"saga-failed", "saga-submitted", "tcc-prepared"});

  ListQuery combined;
  combined.status = GlobalStatus::kSubmitted;
  combined.trans_type = TransType::kTcc;
  combined.stuck = true;
  CHECK(Gids(MustList(*store, combined)) == std::vector<std::string>{"tcc-submitted-stuck"});

  ListQuery none;
  none.status = GlobalStatus::kAborting;
  CHECK(MustList(*store, none).transactions.empty());
}

TEST_CASE("List pages through every row once with next_position", "[storage]") {
  TestStore store;
  InsertMany(*store, 25);
  ListQuery query;
  query.limit = 7;

  std::vector<std::string> seen;
  std::vector<std::size_t> page_sizes;
  for (;;) {
    const ListPage page = MustList(*store, query);
    page_sizes.push_back(page.transactions.size());
    for (const std::string& gid : Gids(page)) seen.push_back(gid);
    if (!page.next_position) break;
    CHECK(*page.next_position == page.transactions.back().id);
    query.before_id = page.next_position;
  }

  CHECK(page_sizes == std::vector<std::size_t>{7, 7, 7, 4});
  std::vector<std::string> expected;
  for (int i = 24; i >= 0; --i) expected.push_back("g" + std::to_string(i));
  CHECK(seen == expected);
}

TEST_CASE("a full last page has no next_position", "[storage]") {
  TestStore store;
  InsertMany(*store, 6);
  ListQuery query;
  query.limit = 3;

  const ListPage first = MustList(*store, query);
  REQUIRE(first.next_position.has_value());
  query.before_id = first.next_position;
  const ListPage second = MustList(*store, query);

  CHECK(Gids(second) == std::vector<std::string>{"g2", "g1", "g0"});
  CHECK_FALSE(second.next_position.has_value());
}

TEST_CASE("paging with a filter continues within the filter", "[storage]") {
  TestStore store;
  for (int i = 0; i < 10; ++i) {
    const GlobalStatus status = i % 2 == 0 ? GlobalStatus::kSucceed : GlobalStatus::kPrepared;
    MustCommit(*store,
               Batch(InsertGlobal{MakeGlobal("g" + std::to_string(i), TransType::kTcc, status)}));
  }
  ListQuery query;
  query.status = GlobalStatus::kSucceed;
  query.limit = 2;

  std::vector<std::string> seen;
  for (;;) {
    const ListPage page = MustList(*store, query);
    for (const std::string& gid : Gids(page)) seen.push_back(gid);
    if (!page.next_position) break;
    query.before_id = page.next_position;
  }

  CHECK(seen == std::vector<std::string>{"g8", "g6", "g4", "g2", "g0"});
}

TEST_CASE("List refuses a limit outside 1..1000", "[storage]") {
  TestStore store;
  InsertMany(*store, 2);
  ListQuery query;

  query.limit = 0;
  Result<ListPage> zero = store->List(query);
  REQUIRE_FALSE(zero);
  CHECK(zero.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(zero.status().message(), Catch::Contains("limit"));

  query.limit = 1001;
  CHECK(store->List(query).status().code() == StatusCode::kInvalidArgument);

  query.limit = 1000;
  CHECK(MustList(*store, query).transactions.size() == 2);
  query.limit = 1;
  CHECK(MustList(*store, query).transactions.size() == 1);
}

TEST_CASE("ListUnfinished returns exactly the unfinished transactions with their due time",
          "[storage]") {
  TestStore store;
  struct Case {
    const char* gid;
    GlobalStatus status;
    std::optional<TimePoint> next_cron_time;
  };
  const std::vector<Case> cases = {
      {"prepared", GlobalStatus::kPrepared, T0() + 1s},
      {"prepared-no-deadline", GlobalStatus::kPrepared, std::nullopt},
      {"submitted", GlobalStatus::kSubmitted, T0() + 2s},
      {"aborting", GlobalStatus::kAborting, T0() + 3s},
      {"succeed", GlobalStatus::kSucceed, std::nullopt},
      {"failed", GlobalStatus::kFailed, std::nullopt},
  };
  for (const Case& c : cases) {
    GlobalRecord g = MakeGlobal(c.gid, TransType::kSaga, c.status);
    g.next_cron_time = c.next_cron_time;
    MustCommit(*store, Batch(InsertGlobal{g}));
  }

  Result<std::vector<DueEntry>> due = store->ListUnfinished();
  REQUIRE(due);

  std::map<std::string, std::optional<TimePoint>> by_gid;
  for (const DueEntry& e : *due) by_gid[e.gid] = e.next_cron_time;
  CHECK(due->size() == 4);
  CHECK(by_gid == std::map<std::string, std::optional<TimePoint>>{
                      {"prepared", T0() + 1s},
                      {"prepared-no-deadline", std::nullopt},
                      {"submitted", T0() + 2s},
                      {"aborting", T0() + 3s},
                  });
}

}  // namespace
}  // namespace settle::storage::testing
