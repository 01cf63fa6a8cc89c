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

// A transaction with one branch row at `url`, in `status`.
void InsertWithBranch(Store& store, const std::string& gid, const std::string& url,
                      BranchStatus status = BranchStatus::kPrepared) {
  BranchRecord b = MakeBranch(gid, "01");
  b.url = url;
  b.status = status;
  MustCommit(store, Batch(InsertGlobal{MakeGlobal(gid)}, InsertBranch{b}));
}

// Every gid `query` lists, page after page (at most 100 pages).
std::vector<std::string> ListAll(Store& store, ListQuery query) {
  std::vector<std::string> seen;
  for (int pages = 0; pages < 100; ++pages) {
    const ListPage page = MustList(store, query);
    for (const std::string& gid : Gids(page)) seen.push_back(gid);
    if (!page.next_position) return seen;
    query.before_id = page.next_position;
  }
  FAIL("more than 100 pages");
  return seen;
}

TEST_CASE("List by gid prefix keeps the gids that start with it, case and all", "[storage]") {
  TestStore store;
  for (const char* gid : {"order-1", "pay-1", "order-2", "orderly", "ORDER-3", "x-order-4"}) {
    MustCommit(*store, Batch(InsertGlobal{MakeGlobal(gid)}));
  }
  ListQuery query;
  query.gid_prefix = "order-";
  CHECK(Gids(MustList(*store, query)) == std::vector<std::string>{"order-2", "order-1"});
  query.gid_prefix = "order";
  CHECK(Gids(MustList(*store, query)) == std::vector<std::string>{"orderly", "order-2", "order-1"});
  query.gid_prefix = "pay-1";
  CHECK(Gids(MustList(*store, query)) == std::vector<std::string>{"pay-1"});
  query.gid_prefix = "nothing";
  const ListPage none = MustList(*store, query);
  CHECK(none.transactions.empty());
  CHECK_FALSE(none.next_position.has_value());
}

TEST_CASE("List by create time range includes both ends", "[storage]") {
  TestStore store;
  for (int i = 0; i < 4; ++i) {
    GlobalRecord g = MakeGlobal("t" + std::to_string(i));
    g.create_time = T0() + std::chrono::seconds(i);
    MustCommit(*store, Batch(InsertGlobal{g}));
  }
  ListQuery query;
  query.create_time_start = T0() + 1s;
  query.create_time_end = T0() + 2s;
  CHECK(Gids(MustList(*store, query)) == std::vector<std::string>{"t2", "t1"});

  query.create_time_end.reset();
  CHECK(Gids(MustList(*store, query)) == std::vector<std::string>{"t3", "t2", "t1"});

  query.create_time_start.reset();
  query.create_time_end = T0() + 1s - 1ms;
  CHECK(Gids(MustList(*store, query)) == std::vector<std::string>{"t0"});
}

TEST_CASE(
    "List by host finds the transactions with a pending branch on it, however its url is "
    "spelled",
    "[storage]") {
  TestStore store;
  InsertWithBranch(*store, "path", "http://bank:8080/api/TransIn");
  InsertWithBranch(*store, "upper-case-query", "HTTP://Bank:8080?op=x");
  InsertWithBranch(*store, "bare-origin", "http://bank:8080");
  InsertWithBranch(*store, "longer-port", "http://bank:80801/api/TransIn");
  InsertWithBranch(*store, "longer-host", "http://bank:8080.evil/api");
  InsertWithBranch(*store, "done-branch", "http://bank:8080/api/TransIn", BranchStatus::kSucceed);
  InsertWithBranch(*store, "failed-branch", "http://bank:8080/api/TransIn", BranchStatus::kFailed);
  InsertWithBranch(*store, "other-host", "http://other:8080/api/TransIn");
  InsertWithBranch(*store, "https-same-port", "https://bank:8080/api/TransIn");
  InsertWithBranch(*store, "default-port", "http://bank/api/TransIn");
  InsertWithBranch(*store, "explicit-80", "http://bank:80/api/TransIn");
  InsertWithBranch(*store, "tls-default", "https://bank/api/TransIn");
  InsertWithBranch(*store, "grpc-dtm-form", "bank:50051/busi.Busi/TransIn");
  InsertWithBranch(*store, "grpc-scheme", "GRPC://bank:50051/busi.Busi/TransOut");
  InsertWithBranch(*store, "ipv6", "http://[::1]:8080/api/TransIn");
  // A finished transaction makes no call, whatever rows it left prepared.
  for (const GlobalStatus finished : {GlobalStatus::kSucceed, GlobalStatus::kFailed}) {
    const std::string gid = "finished-" + std::string(ToString(finished));
    BranchRecord b = MakeBranch(gid, "02", BranchOp::kAction);
    b.url = "http://bank:8080/api/TransIn";
    MustCommit(*store,
               Batch(InsertGlobal{MakeGlobal(gid, TransType::kSaga, finished)}, InsertBranch{b}));
  }
  // A transaction with a done branch and a pending one on the host is found once.
  BranchRecord done = MakeBranch("two-rows", "01", BranchOp::kAction);
  done.url = "http://bank:8080/a";
  done.status = BranchStatus::kSucceed;
  BranchRecord pending = MakeBranch("two-rows", "01", BranchOp::kCompensate);
  pending.url = "http://bank:8080/c";
  BranchRecord pending2 = MakeBranch("two-rows", "02", BranchOp::kAction);
  pending2.url = "http://bank:8080/a2";
  MustCommit(*store, Batch(InsertGlobal{MakeGlobal("two-rows", TransType::kSaga)},
                           InsertBranch{done}, InsertBranch{pending}, InsertBranch{pending2}));

  ListQuery query;
  query.host = "http://bank:8080";
  CHECK(Gids(MustList(*store, query)) ==
        std::vector<std::string>{"two-rows", "bare-origin", "upper-case-query", "path"});
  query.host = "http://bank:80";
  CHECK(Gids(MustList(*store, query)) == std::vector<std::string>{"explicit-80", "default-port"});
  query.host = "https://bank:443";
  CHECK(Gids(MustList(*store, query)) == std::vector<std::string>{"tls-default"});
  query.host = "https://bank:8080";
  CHECK(Gids(MustList(*store, query)) == std::vector<std::string>{"https-same-port"});
  query.host = "grpc://bank:50051";
  CHECK(Gids(MustList(*store, query)) == std::vector<std::string>{"grpc-scheme", "grpc-dtm-form"});
  query.host = "http://[::1]:8080";
  CHECK(Gids(MustList(*store, query)) == std::vector<std::string>{"ipv6"});
  query.host = "http://nobody:1";
  CHECK(MustList(*store, query).transactions.empty());
}

TEST_CASE("List refuses a host that is not an origin as OriginOf spells it", "[storage]") {
  TestStore store;
  InsertWithBranch(*store, "path", "http://bank:8080/api/TransIn");
  for (const char* host : {"bank:8080", "http://bank", "HTTP://bank:8080", "http://Bank:8080",
                           "http://bank:8080/api", "ftp://bank:21", "", "grpc://bank"}) {
    ListQuery query;
    query.host = host;
    Result<ListPage> page = store->List(query);
    INFO(host);
    REQUIRE_FALSE(page);
    CHECK(page.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(page.status().message(), Catch::StartsWith("host:"));
  }
}

TEST_CASE("a search combines with status, type, stuck, the creator and paging", "[storage]") {
  TestStore store;
  // Newest last: i = 0..29, alternating creators, a third of them on the bank.
  for (int i = 0; i < 30; ++i) {
    const std::string gid = (i % 2 == 0 ? "order-" : "pay-") + std::to_string(i);
    GlobalRecord g = MakeGlobal(gid, i % 3 == 0 ? TransType::kSaga : TransType::kTcc,
                                i % 5 == 0 ? GlobalStatus::kSucceed : GlobalStatus::kSubmitted);
    g.creator = i % 4 == 0 ? "" : (i % 4 == 1 ? "alice" : "bob");
    g.create_time = T0() + std::chrono::seconds(i);
    g.stuck = i % 7 == 0;
    BranchRecord b = MakeBranch(gid, "01");
    b.url = i % 3 == 1 ? "http://bank:8080/x" : "http://shop:9090/y";
    MustCommit(*store, Batch(InsertGlobal{g}, InsertBranch{b}));
  }
  ListQuery query;
  query.limit = 2;
  query.gid_prefix = "order-";
  query.creator = "alice";
  // Even i (order-) with creator alice (i % 4 == 1): none; nobody's (i % 4 == 0) are shown.
  CHECK(ListAll(*store, query) == std::vector<std::string>{"order-28", "order-24", "order-20",
                                                           "order-16", "order-12", "order-8",
                                                           "order-4", "order-0"});
  query.status = GlobalStatus::kSubmitted;
  CHECK(ListAll(*store, query) == std::vector<std::string>{"order-28", "order-24", "order-16",
                                                           "order-12", "order-8", "order-4"});
  query.trans_type = TransType::kSaga;
  CHECK(ListAll(*store, query) == std::vector<std::string>{"order-24", "order-12"});
  query.stuck = false;
  query.create_time_start = T0() + 13s;
  CHECK(ListAll(*store, query) == std::vector<std::string>{"order-24"});

  ListQuery host;
  host.limit = 3;
  host.host = "http://bank:8080";
  host.create_time_end = T0() + 20s;
  host.creator = "bob";
  // i % 3 == 1 and i <= 20, creator bob (i % 4 in 2, 3) or nobody (i % 4 == 0), not finished
  // (i % 5 != 0: order-10 has succeeded).
  CHECK(ListAll(*store, host) ==
        std::vector<std::string>{"pay-19", "order-16", "pay-7", "order-4"});
  host.creator.reset();
  host.gid_prefix = "pay-";
  CHECK(ListAll(*store, host) == std::vector<std::string>{"pay-19", "pay-13", "pay-7", "pay-1"});
}

TEST_CASE("a search reads at most kMaxListScan transactions a page and says where to go on",
          "[storage]") {
  TestStore store;
  WriteBatch old_ones;
  for (int i = 0; i < 10; ++i) old_ones.Add(InsertGlobal{MakeGlobal("old-" + std::to_string(i))});
  MustCommit(*store, old_ones);
  WriteBatch new_ones;
  for (std::size_t i = 0; i < kMaxListScan; ++i) {
    new_ones.Add(InsertGlobal{MakeGlobal("new-" + std::to_string(i))});
  }
  MustCommit(*store, new_ones);

  ListQuery query;
  query.gid_prefix = "old-";
  const ListPage first = MustList(*store, query);
  // It read the newest kMaxListScan, none of them old: an empty page that goes on.
  CHECK(first.transactions.empty());
  REQUIRE(first.next_position.has_value());
  CHECK(*first.next_position == MustLoad(*store, "new-0").global.id);

  query.before_id = first.next_position;
  const ListPage second = MustList(*store, query);
  CHECK(second.transactions.size() == 10);
  CHECK(second.transactions.front().gid == "old-9");
  CHECK_FALSE(second.next_position.has_value());

  // Without a search filter a page is the newest rows, as before.
  ListQuery plain;
  plain.limit = 3;
  CHECK(Gids(MustList(*store, plain)) ==
        std::vector<std::string>{"new-4999", "new-4998", "new-4997"});
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
