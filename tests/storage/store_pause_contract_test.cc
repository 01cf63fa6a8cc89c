// The Store contract for pause and resume (write_batch.h PauseGlobal, ResumeGlobal;
// GlobalRecord::paused): a pause is stored beside the status with who, when and why, survives
// every other write to the transaction, keeps it out of the unfinished ones to resume, lists it
// among the parked ones, and a resume makes its pending calls due. These tests run against the
// store that store_factory.h makes, whatever its implementation.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "record_builders.h"
#include "settle/storage/store.h"
#include "store_factory.h"
#include "store_test_util.h"

namespace settle::storage::testing {
namespace {

using namespace std::chrono_literals;

Pause OperatorsPause() {
  return Pause{T0() + 5s, std::string("on-call \xff", 9), "ledger bug, ticket OPS-9\nby hand"};
}

std::vector<std::string> UnfinishedGids(Store& store) {
  auto unfinished = store.ListUnfinished();
  INFO(unfinished.status().ToString());
  REQUIRE(unfinished);
  std::vector<std::string> gids;
  for (const DueEntry& e : *unfinished) gids.push_back(e.gid);
  return gids;
}

TEST_CASE("a pause is stored beside the status with who paused it, when and why",
          "[storage][pause]") {
  TestStore store;
  MustCommit(*store,
             Batch(InsertGlobal{MakeGlobal("g1", TransType::kSaga, GlobalStatus::kSubmitted)},
                   InsertBranch{MakeBranch("g1", "01", BranchOp::kAction, 1)}));
  CHECK_FALSE(MustLoad(*store, "g1").global.paused);
  MustCommit(*store, Batch(PauseGlobal{"g1", OperatorsPause()}));

  const Transaction tx = MustLoad(*store, "g1");
  REQUIRE(tx.global.paused);
  CHECK(*tx.global.paused == OperatorsPause());
  CHECK(tx.global.status == GlobalStatus::kSubmitted);
  // Read the same way by a list.
  const ListPage page = MustList(*store, ListQuery{});
  REQUIRE(page.transactions.size() == 1);
  CHECK(page.transactions[0].paused == tx.global.paused);
}

TEST_CASE("a pass's writes leave the pause as it is", "[storage][pause]") {
  TestStore store;
  GlobalRecord g = MakeGlobal("g1", TransType::kSaga, GlobalStatus::kSubmitted);
  MustCommit(*store,
             Batch(InsertGlobal{g}, InsertBranch{MakeBranch("g1", "01", BranchOp::kAction, 1)}));
  MustCommit(*store, Batch(PauseGlobal{"g1", OperatorsPause()}));
  // A pass that read the transaction before the pause records a failed call and its next
  // due time: its record has no pause, and the stored one stays.
  BranchRecord failed = MakeBranch("g1", "01", BranchOp::kAction, 1);
  failed.failures = 1;
  failed.attempts = 1;
  g.next_cron_time = T0() + 10s;
  g.update_time = T0() + 6s;
  MustCommit(*store, Batch(UpdateBranch{failed, BranchStatus::kPrepared},
                           UpdateGlobal{g, GlobalStatus::kSubmitted}));
  const Transaction tx = MustLoad(*store, "g1");
  CHECK(tx.global.paused == OperatorsPause());
  CHECK(tx.branches[0].failures == 1);
}

TEST_CASE("pausing an unknown, finished or paused transaction is refused and changes nothing",
          "[storage][pause]") {
  TestStore store;
  MustCommit(*store,
             Batch(InsertGlobal{MakeGlobal("done", TransType::kSaga, GlobalStatus::kSucceed)},
                   InsertGlobal{MakeGlobal("g1")}));
  CHECK(store->Commit(Batch(PauseGlobal{"nobody", OperatorsPause()})).code() ==
        StatusCode::kNotFound);
  const Status finished = store->Commit(Batch(PauseGlobal{"done", OperatorsPause()}));
  CHECK(finished.code() == StatusCode::kConflict);
  CHECK_THAT(finished.message(), Catch::Contains("already finished"));
  CHECK_FALSE(MustLoad(*store, "done").global.paused);

  MustCommit(*store, Batch(PauseGlobal{"g1", OperatorsPause()}));
  Pause other = OperatorsPause();
  other.by = "someone else";
  const Status again = store->Commit(Batch(PauseGlobal{"g1", other}));
  CHECK(again.code() == StatusCode::kConflict);
  CHECK_THAT(again.message(), Catch::Contains("already paused"));
  // The policy's pause keeps the operator's, and its batch goes on.
  MustCommit(*store, Batch(PauseGlobal{"g1", other, true},
                           InsertBranch{MakeBranch("g1", "01", BranchOp::kConfirm)}));
  const Transaction tx = MustLoad(*store, "g1");
  CHECK(tx.global.paused == OperatorsPause());
  CHECK(tx.branches.size() == 1);
}

TEST_CASE("a paused transaction is not resumed at start and is listed among the parked ones",
          "[storage][pause]") {
  TestStore store;
  for (const char* gid : {"g1", "g2", "g3"})
    MustCommit(*store, Batch(InsertGlobal{MakeGlobal(gid)}));
  MustCommit(*store, Batch(PauseGlobal{"g2", OperatorsPause()}));
  CHECK(UnfinishedGids(*store) == std::vector<std::string>{"g1", "g3"});

  ListQuery parked;
  parked.paused = true;
  CHECK(Gids(MustList(*store, parked)) == std::vector<std::string>{"g2"});
  ListQuery running;
  running.paused = false;
  CHECK(Gids(MustList(*store, running)) == std::vector<std::string>{"g3", "g1"});
  // With the other filters.
  parked.status = GlobalStatus::kPrepared;
  CHECK(Gids(MustList(*store, parked)) == std::vector<std::string>{"g2"});
  parked.status = GlobalStatus::kSubmitted;
  CHECK(Gids(MustList(*store, parked)).empty());
}

TEST_CASE("a resume clears the pause and makes every pending call due at once",
          "[storage][pause]") {
  TestStore store;
  BranchRecord pending = MakeBranch("g1", "01", BranchOp::kAction, 1);
  pending.next_retry_at = T0() + 1h;
  BranchRecord done = MakeBranch("g1", "01", BranchOp::kCompensate, 1);
  done.status = BranchStatus::kSucceed;
  done.next_retry_at = T0() + 2h;
  MustCommit(*store,
             Batch(InsertGlobal{MakeGlobal("g1", TransType::kSaga, GlobalStatus::kSubmitted)},
                   InsertBranch{pending}, InsertBranch{done}));
  MustCommit(*store, Batch(PauseGlobal{"g1", OperatorsPause()}));
  MustCommit(*store, Batch(ResumeGlobal{"g1", T0() + 30s}));

  const Transaction tx = MustLoad(*store, "g1");
  CHECK_FALSE(tx.global.paused);
  CHECK(tx.global.next_cron_time == T0() + 30s);
  const auto row = [&tx](BranchOp op) {
    return *std::find_if(tx.branches.begin(), tx.branches.end(),
                         [op](const BranchRecord& b) { return b.op == op; });
  };
  CHECK(row(BranchOp::kAction).next_retry_at == T0() + 30s);
  CHECK(row(BranchOp::kCompensate).next_retry_at == T0() + 2h);
  CHECK(UnfinishedGids(*store) == std::vector<std::string>{"g1"});
}

TEST_CASE("resuming an unknown, finished or running transaction is refused and changes nothing",
          "[storage][pause]") {
  TestStore store;
  MustCommit(*store, Batch(InsertGlobal{MakeGlobal("g1")}));
  CHECK(store->Commit(Batch(ResumeGlobal{"nobody", T0()})).code() == StatusCode::kNotFound);
  const Status running = store->Commit(Batch(ResumeGlobal{"g1", T0() + 1s}));
  CHECK(running.code() == StatusCode::kConflict);
  CHECK_THAT(running.message(), Catch::Contains("not paused"));
  CHECK(MustLoad(*store, "g1").global.next_cron_time == T0() + 35s);

  // Finished while paused (a call in flight ended it): it keeps the pause, and no resume.
  MustCommit(*store, Batch(PauseGlobal{"g1", OperatorsPause()}));
  GlobalRecord finished = MustLoad(*store, "g1").global;
  finished.status = GlobalStatus::kFailed;
  finished.finish_time = T0() + 7s;
  finished.next_cron_time.reset();
  MustCommit(*store, Batch(UpdateGlobal{finished, GlobalStatus::kPrepared}));
  const Status after = store->Commit(Batch(ResumeGlobal{"g1", T0() + 8s}));
  CHECK(after.code() == StatusCode::kConflict);
  CHECK_THAT(after.message(), Catch::Contains("already finished"));
  ListQuery parked;
  parked.paused = true;
  CHECK(Gids(MustList(*store, parked)).empty());
}

TEST_CASE("a redirect changes a pending row's url and makes it due, its body kept",
          "[storage][redirect]") {
  TestStore store;
  BranchRecord confirm = MakeBranch("g1", "01", BranchOp::kConfirm);
  BranchRecord cancel = MakeBranch("g1", "01", BranchOp::kCancel);
  cancel.data = confirm.data;  // one body, stored once
  confirm.next_retry_at = T0() + 1h;
  MustCommit(*store,
             Batch(InsertGlobal{MakeGlobal("g1", TransType::kTcc, GlobalStatus::kSubmitted)},
                   InsertBranch{confirm}, InsertBranch{cancel}));
  MustCommit(*store, Batch(RedirectBranch{"g1", "01", BranchOp::kConfirm, "http://new:9090/confirm",
                                          T0() + 2s}));
  const Transaction tx = MustLoad(*store, "g1");
  for (const BranchRecord& b : tx.branches) {
    CHECK(b.data == R"({"amount":30})");
    if (b.op == BranchOp::kConfirm) {
      CHECK(b.url == "http://new:9090/confirm");
      CHECK(b.next_retry_at == T0() + 2s);
    } else {
      CHECK(b.url == "http://p/01/cancel");
    }
  }
}

TEST_CASE("a redirect of an unknown or finished row is refused and changes nothing",
          "[storage][redirect]") {
  TestStore store;
  BranchRecord done = MakeBranch("g1", "01", BranchOp::kConfirm);
  done.status = BranchStatus::kSucceed;
  MustCommit(*store,
             Batch(InsertGlobal{MakeGlobal("g1", TransType::kTcc, GlobalStatus::kSubmitted)},
                   InsertBranch{done}));
  const Status unknown =
      store->Commit(Batch(RedirectBranch{"g1", "02", BranchOp::kConfirm, "http://n/c", T0()}));
  CHECK(unknown.code() == StatusCode::kNotFound);
  CHECK_THAT(unknown.message(), Catch::Contains("branch 02 (confirm) of gid g1"));
  CHECK(store->Commit(Batch(RedirectBranch{"nobody", "01", BranchOp::kConfirm, "http://n/c", T0()}))
            .code() == StatusCode::kNotFound);
  const Status finished =
      store->Commit(Batch(RedirectBranch{"g1", "01", BranchOp::kConfirm, "http://n/c", T0()}));
  CHECK(finished.code() == StatusCode::kConflict);
  CHECK_THAT(finished.message(), Catch::Contains("is succeed, not pending"));
  CHECK(MustLoad(*store, "g1").branches[0].url == "http://p/01/confirm");
}

}  // namespace
}  // namespace settle::storage::testing
