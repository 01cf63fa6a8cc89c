// The Store contract for single operations (store.h, write_batch.h): what each
// operation stores, and when it is refused.
// These tests run against the store that store_factory.h makes, whatever its implementation.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "record_builders.h"
#include "settle/storage/store.h"
#include "store_factory.h"
#include "store_test_util.h"

namespace settle::storage::testing {
namespace {

GlobalRecord FullyPopulatedGlobal() {
  GlobalRecord g = MakeGlobal("saga-1", TransType::kSaga, GlobalStatus::kAborting);
  g.options.timeout_to_fail = 60s;
  g.options.request_timeout = 8s;
  g.options.retry_interval = 250ms;
  g.options.retry_limit = 7;
  g.options.concurrent = true;
  g.options.orders = {{1, {0}}, {2, {0, 1}}};
  g.options.branch_headers = {{"Authorization", "Bearer t0ken"}, {"X-Tenant", "acme"}};
  g.options.custom_data = R"({"concurrent":true,"orders":{"1":[0],"2":[0,1]}})";
  g.create_time = T0();
  g.update_time = T0() + 5ms;
  g.finish_time = T0() + 6ms;
  g.rollback_time = T0() + 7ms;
  g.rollback_reason = "step 2 answered FAILURE";
  g.next_cron_time = T0() + 8ms;
  g.stuck = true;
  return g;
}

TEST_CASE("a transaction round-trips every field through insert and load", "[storage]") {
  TestStore store;
  const GlobalRecord global = FullyPopulatedGlobal();
  BranchRecord action = MakeBranch("saga-1", "01", BranchOp::kAction, 0);
  action.status = BranchStatus::kFailed;
  action.create_time = T0() + 1ms;
  action.update_time = T0() + 2ms;
  action.attempts = 3;
  action.failures = 2;
  action.last_error = "HTTP 503 from http://p/TransOut";
  action.next_retry_at = T0() + 3ms;
  action.failed_attempts = {{T0() + 1ms, "UNKNOWN: connection refused"},
                            {T0() + 2ms, "FAILURE: HTTP 409: \"no funds\""}};
  const BranchRecord compensate = MakeBranch("saga-1", "01", BranchOp::kCompensate, 0);
  MustCommit(*store, Batch(InsertGlobal{global}, InsertBranch{action}, InsertBranch{compensate}));

  Transaction loaded = MustLoad(*store, "saga-1");

  CHECK(loaded.global.id > 0);
  GlobalRecord expected = global;
  expected.id = loaded.global.id;
  CHECK(loaded.global == expected);
  REQUIRE(loaded.branches.size() == 2);
  CHECK(loaded.branches[0] == action);
  CHECK(loaded.branches[1] == compensate);
}

TEST_CASE("optional times that were absent load as absent", "[storage]") {
  TestStore store;
  GlobalRecord global = MakeGlobal("g1");
  global.finish_time.reset();
  global.rollback_time.reset();
  global.next_cron_time.reset();
  MustCommit(*store, Batch(InsertGlobal{global}));

  const GlobalRecord loaded = MustLoad(*store, "g1").global;

  CHECK_FALSE(loaded.finish_time.has_value());
  CHECK_FALSE(loaded.rollback_time.has_value());
  CHECK_FALSE(loaded.next_cron_time.has_value());
  CHECK(loaded.options == global.options);
}

TEST_CASE("the store assigns increasing ids and ignores the id it is given", "[storage]") {
  TestStore store;
  std::int64_t previous = 0;
  for (int i = 0; i < 5; ++i) {
    GlobalRecord g = MakeGlobal("g" + std::to_string(i));
    g.id = 1000 - i;
    MustCommit(*store, Batch(InsertGlobal{g}));
    const std::int64_t id = MustLoad(*store, g.gid).global.id;
    CHECK(id > previous);
    previous = id;
  }
}

TEST_CASE("loading an unknown gid gives no transaction", "[storage]") {
  TestStore store;
  Result<std::optional<Transaction>> loaded = store->Load("nope");
  REQUIRE(loaded);
  CHECK_FALSE(loaded->has_value());
}

TEST_CASE("branches load ordered by seq, then branch id, then op name", "[storage]") {
  TestStore store;
  MustCommit(*store, Batch(InsertGlobal{MakeGlobal("g1")},
                           InsertBranch{MakeBranch("g1", "02", BranchOp::kConfirm, 1)},
                           InsertBranch{MakeBranch("g1", "01", BranchOp::kConfirm, 1)},
                           InsertBranch{MakeBranch("g1", "03", BranchOp::kConfirm, 0)},
                           InsertBranch{MakeBranch("g1", "01", BranchOp::kCancel, 1)}));

  std::vector<std::string> order;
  for (const BranchRecord& b : MustLoad(*store, "g1").branches) {
    order.push_back(b.branch_id + "/" + std::string(ToString(b.op)));
  }

  CHECK(order == std::vector<std::string>{"03/confirm", "01/cancel", "01/confirm", "02/confirm"});
}

TEST_CASE("branch data round-trips byte for byte, binary and large", "[storage]") {
  TestStore store;
  std::string binary;
  for (int i = 0; i < 256; ++i) binary.push_back(static_cast<char>(i));
  binary += std::string("\0\xff\xfe invalid \xc3\x28 utf-8 \0", 22);
  std::string large(1 << 20, '\0');
  for (std::size_t i = 0; i < large.size(); ++i) large[i] = static_cast<char>((i * 131) % 251);
  BranchRecord small_branch = MakeBranch("g1", "01");
  small_branch.data = binary;
  BranchRecord large_branch = MakeBranch("g1", "02");
  large_branch.data = large;
  BranchRecord empty_branch = MakeBranch("g1", "03");
  empty_branch.data = "";
  MustCommit(*store, Batch(InsertGlobal{MakeGlobal("g1")}, InsertBranch{small_branch},
                           InsertBranch{large_branch}, InsertBranch{empty_branch}));

  const Transaction loaded = MustLoad(*store, "g1");

  REQUIRE(loaded.branches.size() == 3);
  CHECK(loaded.branches[0].data == binary);
  CHECK(loaded.branches[1].data.size() == large.size());
  CHECK(loaded.branches[1].data == large);
  CHECK(loaded.branches[2].data.empty());
}

TEST_CASE("inserting a gid that exists is refused with AlreadyExists and keeps the first",
          "[storage]") {
  TestStore store;
  MustCommit(*store, Batch(InsertGlobal{MakeGlobal("g1")}));
  GlobalRecord again = MakeGlobal("g1", TransType::kSaga, GlobalStatus::kSubmitted);

  Status s = store->Commit(Batch(InsertGlobal{again}));

  CHECK(s.code() == StatusCode::kAlreadyExists);
  CHECK_THAT(s.message(), Catch::Contains("g1"));
  CHECK(MustLoad(*store, "g1").global.trans_type == TransType::kTcc);
}

TEST_CASE("registering the same branch again with the same url is a no-op", "[storage]") {
  TestStore store;
  const BranchRecord first = MakeBranch("g1", "01");
  MustCommit(*store, Batch(InsertGlobal{MakeGlobal("g1")}, InsertBranch{first}));
  BranchRecord again = first;
  again.data = "other body";

  CHECK(store->Commit(Batch(InsertBranch{again})).ok());

  const Transaction loaded = MustLoad(*store, "g1");
  REQUIRE(loaded.branches.size() == 1);
  CHECK(loaded.branches[0] == first);
}

TEST_CASE("registering a branch again with another url is a Conflict naming the branch",
          "[storage]") {
  TestStore store;
  MustCommit(*store, Batch(InsertGlobal{MakeGlobal("g1")}, InsertBranch{MakeBranch("g1", "01")}));
  BranchRecord again = MakeBranch("g1", "01");
  again.url = "http://elsewhere/confirm";

  Status s = store->Commit(Batch(InsertBranch{again}));

  CHECK(s.code() == StatusCode::kConflict);
  CHECK_THAT(s.message(),
             Catch::Contains("g1") && Catch::Contains("01") && Catch::Contains("confirm"));
  CHECK(MustLoad(*store, "g1").branches[0].url == MakeBranch("g1", "01").url);
}

TEST_CASE("a branch of an unknown transaction is refused with NotFound", "[storage]") {
  TestStore store;

  Status s = store->Commit(Batch(InsertBranch{MakeBranch("ghost", "01")}));

  CHECK(s.code() == StatusCode::kNotFound);
  CHECK_THAT(s.message(), Catch::Contains("ghost"));
  Result<std::optional<Transaction>> loaded = store->Load("ghost");
  REQUIRE(loaded);
  CHECK_FALSE(loaded->has_value());
}

TEST_CASE("ExpectGlobalStatus passes for an allowed status and refuses the others", "[storage]") {
  TestStore store;
  MustCommit(*store,
             Batch(InsertGlobal{MakeGlobal("g1", TransType::kTcc, GlobalStatus::kAborting)}));

  CHECK(store
            ->Commit(
                Batch(ExpectGlobalStatus{"g1", {GlobalStatus::kPrepared, GlobalStatus::kAborting}}))
            .ok());

  Status conflict = store->Commit(
      Batch(ExpectGlobalStatus{"g1", {GlobalStatus::kPrepared, GlobalStatus::kSubmitted}}));
  CHECK(conflict.code() == StatusCode::kConflict);
  CHECK_THAT(conflict.message(), Catch::Contains("g1") && Catch::Contains("aborting"));

  Status missing = store->Commit(Batch(ExpectGlobalStatus{"g2", {GlobalStatus::kPrepared}}));
  CHECK(missing.code() == StatusCode::kNotFound);
  CHECK_THAT(missing.message(), Catch::Contains("g2"));
}

TEST_CASE("ExpectGlobalType passes for the stored type only", "[storage]") {
  TestStore store;
  MustCommit(*store,
             Batch(InsertGlobal{MakeGlobal("g1", TransType::kXa, GlobalStatus::kPrepared)}));

  CHECK(store->Commit(Batch(ExpectGlobalType{"g1", TransType::kXa})).ok());

  Status conflict = store->Commit(Batch(ExpectGlobalType{"g1", TransType::kTcc}));
  CHECK(conflict.code() == StatusCode::kConflict);
  CHECK(conflict.message() == "gid g1 is a xa transaction, not tcc");

  Status missing = store->Commit(Batch(ExpectGlobalType{"g2", TransType::kTcc}));
  CHECK(missing.code() == StatusCode::kNotFound);
  CHECK_THAT(missing.message(), Catch::Contains("g2"));
}

TEST_CASE("ExpectBranchCount passes for the stored number of branch rows only", "[storage]") {
  TestStore store;
  MustCommit(*store, Batch(InsertGlobal{MakeGlobal("g1")}, InsertBranch{MakeBranch("g1", "01")},
                           InsertBranch{MakeBranch("g1", "01", BranchOp::kCancel)}));
  MustCommit(*store, Batch(InsertGlobal{MakeGlobal("empty")}));

  CHECK(store->Commit(Batch(ExpectBranchCount{"g1", 2})).ok());
  CHECK(store->Commit(Batch(ExpectBranchCount{"empty", 0})).ok());

  Status conflict = store->Commit(Batch(ExpectBranchCount{"g1", 1}));
  CHECK(conflict.code() == StatusCode::kConflict);
  CHECK_THAT(conflict.message(), Catch::Contains("g1") && Catch::Contains("2 branch rows"));

  Status missing = store->Commit(Batch(ExpectBranchCount{"g2", 0}));
  CHECK(missing.code() == StatusCode::kNotFound);
  CHECK_THAT(missing.message(), Catch::Contains("g2"));
}

TEST_CASE("LimitBranchRows refuses a batch beyond the limit with a refusal of its own",
          "[storage]") {
  TestStore store;
  MustCommit(*store, Batch(InsertGlobal{MakeGlobal("g1")}, InsertBranch{MakeBranch("g1", "01")}));

  // Counting the rows inserted earlier in the batch.
  CHECK(store->Commit(Batch(InsertBranch{MakeBranch("g1", "02")}, LimitBranchRows{"g1", 2})).ok());
  Status beyond =
      store->Commit(Batch(InsertBranch{MakeBranch("g1", "03")}, LimitBranchRows{"g1", 2}));
  // ResourceExhausted, which no other operation answers: the caller tells the limit from any
  // other refusal (write_batch.h).
  CHECK(beyond.code() == StatusCode::kResourceExhausted);
  CHECK_THAT(beyond.message(), Catch::StartsWith("branch_id:") && Catch::Contains("g1") &&
                                   Catch::Contains("3 branch rows") &&
                                   Catch::Contains("2 allowed"));
  CHECK(MustLoad(*store, "g1").branches.size() == 2);  // the refused batch left nothing
  // A refused batch is refused alone: the store goes on.
  CHECK(store->Commit(Batch(ExpectBranchCount{"g1", 2})).ok());

  CHECK(store->Commit(Batch(LimitBranchRows{"g2", 2})).code() == StatusCode::kNotFound);
}

TEST_CASE("UpdateGlobal writes exactly the mutable fields when the status matches", "[storage]") {
  TestStore store;
  const GlobalRecord original = MakeGlobal("g1");
  MustCommit(*store, Batch(InsertGlobal{original}));
  const GlobalRecord stored = MustLoad(*store, "g1").global;

  GlobalRecord update = stored;
  update.status = GlobalStatus::kAborting;
  update.update_time = T0() + 10ms;
  update.finish_time = T0() + 11ms;
  update.rollback_time = T0() + 12ms;
  update.rollback_reason = "timeout";
  update.next_cron_time = T0() + 13ms;
  update.stuck = true;
  // Not mutable: these must keep their stored values.
  update.id = stored.id + 100;
  update.trans_type = TransType::kSaga;
  update.create_time = T0() + 14ms;
  update.options.retry_limit = 99;
  MustCommit(*store, Batch(UpdateGlobal{update, GlobalStatus::kPrepared}));

  GlobalRecord expected = update;
  expected.id = stored.id;
  expected.trans_type = stored.trans_type;
  expected.create_time = stored.create_time;
  expected.options = stored.options;
  CHECK(MustLoad(*store, "g1").global == expected);

  SECTION("and can clear the optional times again") {
    GlobalRecord cleared = expected;
    cleared.status = GlobalStatus::kFailed;
    cleared.finish_time.reset();
    cleared.rollback_time.reset();
    cleared.next_cron_time.reset();
    MustCommit(*store, Batch(UpdateGlobal{cleared, GlobalStatus::kAborting}));
    CHECK(MustLoad(*store, "g1").global == cleared);
  }
}

TEST_CASE("UpdateGlobal on a stale status is a Conflict naming both statuses", "[storage]") {
  TestStore store;
  MustCommit(*store,
             Batch(InsertGlobal{MakeGlobal("g1", TransType::kTcc, GlobalStatus::kAborting)}));
  GlobalRecord update = MakeGlobal("g1", TransType::kTcc, GlobalStatus::kSubmitted);

  Status s = store->Commit(Batch(UpdateGlobal{update, GlobalStatus::kPrepared}));

  CHECK(s.code() == StatusCode::kConflict);
  CHECK(s.message() == "gid g1 is aborting, expected prepared");
  CHECK(MustLoad(*store, "g1").global.status == GlobalStatus::kAborting);
}

TEST_CASE("UpdateGlobal of an unknown gid is NotFound", "[storage]") {
  TestStore store;

  Status s = store->Commit(Batch(UpdateGlobal{MakeGlobal("g1"), GlobalStatus::kPrepared}));

  CHECK(s.code() == StatusCode::kNotFound);
  CHECK_THAT(s.message(), Catch::Contains("g1"));
}

TEST_CASE("UpdateBranch writes exactly the mutable fields when the status matches", "[storage]") {
  TestStore store;
  const BranchRecord original = MakeBranch("g1", "01", BranchOp::kCancel, 4);
  MustCommit(*store, Batch(InsertGlobal{MakeGlobal("g1")}, InsertBranch{original}));

  BranchRecord update = original;
  update.status = BranchStatus::kSucceed;
  update.update_time = T0() + 20ms;
  update.attempts = 5;
  update.failures = 4;
  update.last_error = "connection refused";
  update.next_retry_at = T0() + 21ms;
  update.failed_attempts = {{T0() + 19ms, "connection refused"}};
  // Not mutable: these must keep their stored values.
  update.seq = 9;
  update.url = "http://elsewhere/";
  update.data = "other";
  update.create_time = T0() + 22ms;
  MustCommit(*store, Batch(UpdateBranch{update, BranchStatus::kPrepared}));

  BranchRecord expected = update;
  expected.seq = original.seq;
  expected.url = original.url;
  expected.data = original.data;
  expected.create_time = original.create_time;
  const Transaction loaded = MustLoad(*store, "g1");
  REQUIRE(loaded.branches.size() == 1);
  CHECK(loaded.branches[0] == expected);
}

TEST_CASE("UpdateBranch on a stale status is a Conflict, on an unknown row NotFound", "[storage]") {
  TestStore store;
  BranchRecord branch = MakeBranch("g1", "01");
  branch.status = BranchStatus::kSucceed;
  MustCommit(*store, Batch(InsertGlobal{MakeGlobal("g1")}, InsertBranch{branch}));

  Status stale = store->Commit(Batch(UpdateBranch{branch, BranchStatus::kPrepared}));
  CHECK(stale.code() == StatusCode::kConflict);
  CHECK_THAT(stale.message(), Catch::Contains("g1") && Catch::Contains("01") &&
                                  Catch::Contains("confirm") && Catch::Contains("succeed"));

  BranchRecord other_op = MakeBranch("g1", "01", BranchOp::kCancel);
  Status missing = store->Commit(Batch(UpdateBranch{other_op, BranchStatus::kPrepared}));
  CHECK(missing.code() == StatusCode::kNotFound);
  CHECK_THAT(missing.message(), Catch::Contains("g1") && Catch::Contains("cancel"));
}

TEST_CASE(
    "UpdateBranch as read stores a pass's outcome only if no redirect or Retry now came since "
    "the read",
    "[storage]") {
  TestStore store;
  const BranchRecord read = MakeBranch("g1", "01");  // due at T0
  MustCommit(*store,
             Batch(InsertGlobal{MakeGlobal("g1", TransType::kTcc, GlobalStatus::kSubmitted)},
                   InsertBranch{read}));
  const std::string changed = "was redirected or made due since it was read";

  // Left as read: stored, and two outcomes in one batch each compare with what the one before
  // left.
  BranchRecord failed = read;
  failed.attempts = 1;
  failed.next_retry_at = T0() + 5s;
  BranchRecord again = failed;
  again.attempts = 2;
  again.next_retry_at = T0() + 9s;
  MustCommit(*store, Batch(UpdateBranch{failed, BranchStatus::kPrepared, read.next_retry_at},
                           UpdateBranch{again, BranchStatus::kPrepared, failed.next_retry_at}));
  CHECK(MustLoad(*store, "g1").branches[0].attempts == 2);

  // Redirected since: the outcome from the old url is refused, the redirect kept.
  MustCommit(*store, Batch(RedirectBranch{"g1", "01", BranchOp::kConfirm, "http://new/confirm",
                                          T0() + 6s}));
  BranchRecord from_old_url = again;
  from_old_url.attempts = 3;
  from_old_url.next_retry_at = T0() + 1h;
  Status refused = store->Commit(
      Batch(UpdateBranch{from_old_url, BranchStatus::kPrepared, again.next_retry_at}));
  CHECK(refused.code() == StatusCode::kConflict);
  CHECK_THAT(refused.message(),
             Catch::Contains("01/confirm of gid g1") && Catch::Contains(changed));
  Transaction loaded = MustLoad(*store, "g1");
  CHECK(loaded.branches[0].url == "http://new/confirm");
  CHECK(loaded.branches[0].next_retry_at == T0() + 6s);
  CHECK(loaded.branches[0].attempts == 2);

  // Made due since (Retry now): refused, the row due when the operator said.
  BranchRecord redirected = loaded.branches[0];
  MustCommit(*store, Batch(RetryNow{"g1", T0() + 7s}));
  redirected.attempts = 3;
  redirected.next_retry_at = T0() + 1h;
  refused = store->Commit(Batch(UpdateBranch{redirected, BranchStatus::kPrepared, T0() + 6s}));
  CHECK(refused.code() == StatusCode::kConflict);
  CHECK_THAT(refused.message(), Catch::Contains(changed));
  loaded = MustLoad(*store, "g1");
  CHECK(loaded.branches[0].next_retry_at == T0() + 7s);
  CHECK(loaded.branches[0].attempts == 2);
  // Without the reading (an operator's own update), the status alone is compared.
  MustCommit(*store, Batch(UpdateBranch{redirected, BranchStatus::kPrepared}));
  CHECK(MustLoad(*store, "g1").branches[0].attempts == 3);

  // A stale status and an unknown row are refused as without it.
  const Status stale =
      store->Commit(Batch(UpdateBranch{redirected, BranchStatus::kSucceed, T0() + 1h}));
  CHECK(stale.code() == StatusCode::kConflict);
  CHECK_THAT(stale.message(), Catch::Contains("is prepared, expected succeed"));
  BranchRecord unknown = MakeBranch("g1", "02");
  CHECK(store->Commit(Batch(UpdateBranch{unknown, BranchStatus::kPrepared, T0()})).code() ==
        StatusCode::kNotFound);
}

TEST_CASE("RetryNow makes prepared branches and the transaction due now", "[storage]") {
  TestStore store;
  GlobalRecord global = MakeGlobal("g1", TransType::kTcc, GlobalStatus::kSubmitted);
  global.next_cron_time = T0() + 1h;
  BranchRecord pending = MakeBranch("g1", "01");
  pending.next_retry_at = T0() + 1h;
  BranchRecord done = MakeBranch("g1", "02");
  done.status = BranchStatus::kSucceed;
  done.next_retry_at = T0() + 2h;
  MustCommit(*store, Batch(InsertGlobal{global}, InsertBranch{pending}, InsertBranch{done}));
  const TimePoint now = T0() + 1s;

  MustCommit(*store, Batch(RetryNow{"g1", now}));

  const Transaction loaded = MustLoad(*store, "g1");
  CHECK(loaded.global.next_cron_time == now);
  CHECK(loaded.global.update_time == global.update_time);
  REQUIRE(loaded.branches.size() == 2);
  CHECK(loaded.branches[0].next_retry_at == now);
  CHECK(loaded.branches[1].next_retry_at == T0() + 2h);
}

TEST_CASE("RetryNow of a finished transaction is a Conflict, of an unknown one NotFound",
          "[storage]") {
  TestStore store;
  GlobalRecord finished = MakeGlobal("g1", TransType::kTcc, GlobalStatus::kSucceed);
  finished.next_cron_time.reset();
  MustCommit(*store, Batch(InsertGlobal{finished}));

  Status conflict = store->Commit(Batch(RetryNow{"g1", T0()}));
  CHECK(conflict.code() == StatusCode::kConflict);
  CHECK_THAT(conflict.message(), Catch::Contains("g1"));
  CHECK_FALSE(MustLoad(*store, "g1").global.next_cron_time.has_value());

  CHECK(store->Commit(Batch(RetryNow{"g2", T0()})).code() == StatusCode::kNotFound);
}

}  // namespace
}  // namespace settle::storage::testing
