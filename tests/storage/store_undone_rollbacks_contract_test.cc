// The Store contract for the repair of what the timeout/registration race left (store.h,
// write_batch.h): a failed TCC or XA with a cancel (rollback) never completed, and not
// force-stopped by an operator, is found, kept from retention until its calls are made, and
// an operator's forceStop is stored so that its undone calls stay undone.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "record_builders.h"
#include "settle/storage/store.h"
#include "store_factory.h"
#include "store_test_util.h"

namespace settle::storage::testing {
namespace {

// A TCC (or XA) that ended failed at `finished_at` with one registered branch whose rollback
// row is still prepared: what the race left.
void StoreFailedWithUndoneRollback(Store& store, const std::string& gid, TimePoint finished_at,
                                   TransType type = TransType::kTcc) {
  GlobalRecord g = MakeGlobal(gid, type, GlobalStatus::kFailed);
  g.finish_time = finished_at;
  g.next_cron_time.reset();
  g.rollback_reason = "timeout_to_fail: not submitted within 1000 ms";
  const bool xa = type == TransType::kXa;
  MustCommit(
      store,
      Batch(InsertGlobal{g},
            InsertBranch{MakeBranch(gid, "01", xa ? BranchOp::kCommit : BranchOp::kConfirm)},
            InsertBranch{MakeBranch(gid, "01", xa ? BranchOp::kRollback : BranchOp::kCancel)}));
}

BranchRecord Succeeded(BranchRecord row) {
  row.status = BranchStatus::kSucceed;
  row.attempts = 1;
  return row;
}

std::vector<std::string> GidsOf(const std::vector<UndoneRollback>& found) {
  std::vector<std::string> gids;
  for (const UndoneRollback& u : found) gids.push_back(u.gid);
  return gids;
}

TEST_CASE("a failed TCC or XA with a rollback never completed is found, in id order",
          "[storage][repair]") {
  TestStore store;
  StoreFailedWithUndoneRollback(*store, "tcc-left", T0());
  StoreFailedWithUndoneRollback(*store, "xa-left", T0(), TransType::kXa);
  // A failed TCC that cancelled its branch, a succeeded one, a saga, an aborting TCC: none.
  StoreFailedWithUndoneRollback(*store, "tcc-cancelled", T0());
  MustCommit(*store,
             Batch(UpdateBranch{Succeeded(MakeBranch("tcc-cancelled", "01", BranchOp::kCancel)),
                                BranchStatus::kPrepared}));
  GlobalRecord aborting = MakeGlobal("tcc-aborting", TransType::kTcc, GlobalStatus::kAborting);
  GlobalRecord saga = MakeGlobal("saga-failed", TransType::kSaga, GlobalStatus::kFailed);
  saga.finish_time = T0();
  MustCommit(*store, Batch(InsertGlobal{aborting},
                           InsertBranch{MakeBranch("tcc-aborting", "01", BranchOp::kCancel)},
                           InsertGlobal{saga},
                           InsertBranch{MakeBranch("saga-failed", "01", BranchOp::kCompensate)}));

  const auto found = store->ListUndoneRollbacks(FromUnixMillis(0), 0, 10).value();
  CHECK(GidsOf(found) == std::vector<std::string>{"tcc-left", "xa-left"});
  // Paged by id, and bounded by when they finished.
  CHECK(GidsOf(store->ListUndoneRollbacks(FromUnixMillis(0), 0, 1).value()) ==
        std::vector<std::string>{"tcc-left"});
  CHECK(GidsOf(store->ListUndoneRollbacks(FromUnixMillis(0), found[0].id, 10).value()) ==
        std::vector<std::string>{"xa-left"});
  CHECK(store->ListUndoneRollbacks(T0() + 1s, 0, 10).value().empty());
  CHECK(store->ListUndoneRollbacks(FromUnixMillis(0), 0, 0).status().code() ==
        StatusCode::kInvalidArgument);
}

TEST_CASE("an operator's forceStop is stored, and what it left undone is not found",
          "[storage][repair]") {
  TestStore store;
  MustCommit(*store, Batch(InsertGlobal{MakeGlobal("stopped")}, InsertGlobal{MakeGlobal("other")},
                           InsertBranch{MakeBranch("stopped", "01", BranchOp::kCancel)}));
  GlobalRecord g = MustLoad(*store, "stopped").global;
  g.status = GlobalStatus::kFailed;
  g.finish_time = T0();
  g.next_cron_time.reset();
  g.force_stopped = true;
  MustCommit(*store, Batch(UpdateGlobal{g, GlobalStatus::kPrepared}));
  // Stored as inserted too (a copy of a transaction, say).
  GlobalRecord inserted = g;
  inserted.gid = "stopped-copy";
  MustCommit(*store, Batch(InsertGlobal{inserted},
                           InsertBranch{MakeBranch("stopped-copy", "01", BranchOp::kCancel)}));

  CHECK(MustLoad(*store, "stopped").global.force_stopped);
  CHECK(MustLoad(*store, "stopped-copy").global.force_stopped);
  CHECK_FALSE(MustLoad(*store, "other").global.force_stopped);
  CHECK(store->ListUndoneRollbacks(FromUnixMillis(0), 0, 10).value().empty());
}

TEST_CASE("retention keeps a failed TCC until its undone rollbacks are made", "[storage][repair]") {
  TestStore store;
  StoreFailedWithUndoneRollback(*store, "left", T0());

  CHECK(store->ListFinishedBefore(T0() + 1s, 10).value().empty());
  const Status refused = store->Commit(Batch(DeleteFinished{"left"}));
  CHECK(refused.code() == StatusCode::kConflict);
  CHECK_THAT(refused.message(), Catch::Contains("cancels still to be made"));
  CHECK(MustLoad(*store, "left").branches.size() == 2);

  MustCommit(*store, Batch(UpdateBranch{Succeeded(MakeBranch("left", "01", BranchOp::kCancel)),
                                        BranchStatus::kPrepared}));
  CHECK(store->ListFinishedBefore(T0() + 1s, 10).value() == std::vector<std::string>{"left"});
  MustCommit(*store, Batch(DeleteFinished{"left"}));
  CHECK_FALSE(store->Load("left").value().has_value());
}

TEST_CASE("a registration's status check and a decision's branch count serialize on the gid",
          "[storage][repair]") {
  TestStore store;
  MustCommit(*store, Batch(InsertGlobal{MakeGlobal("g")}));
  // The decision read no branch; a registration commits first; the decision is refused.
  MustCommit(*store, Batch(ExpectGlobalStatus{"g", {GlobalStatus::kPrepared}},
                           InsertBranch{MakeBranch("g", "01", BranchOp::kCancel)}));
  GlobalRecord aborting = MustLoad(*store, "g").global;
  aborting.status = GlobalStatus::kAborting;
  const Status decided = store->Commit(
      Batch(UpdateGlobal{aborting, GlobalStatus::kPrepared}, ExpectBranchCount{"g", 0}));
  CHECK(decided.code() == StatusCode::kConflict);
  CHECK(MustLoad(*store, "g").global.status == GlobalStatus::kPrepared);
  // Decided with the count it now has; a registration after it is refused.
  MustCommit(*store,
             Batch(UpdateGlobal{aborting, GlobalStatus::kPrepared}, ExpectBranchCount{"g", 1}));
  CHECK(store
            ->Commit(Batch(ExpectGlobalStatus{"g", {GlobalStatus::kPrepared}},
                           InsertBranch{MakeBranch("g", "02", BranchOp::kCancel)}))
            .code() == StatusCode::kConflict);
  CHECK(MustLoad(*store, "g").branches.size() == 1);
}

}  // namespace
}  // namespace settle::storage::testing
