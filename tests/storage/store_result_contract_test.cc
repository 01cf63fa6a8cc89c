// The Store contract for a workflow's result (records.h GlobalRecord::result): written by the
// update that carries one, any bytes, kept by every later update, never by an insert. These
// tests run against the store that store_factory.h makes, whatever its implementation.
#include <catch2/catch.hpp>

#include <string>

#include "record_builders.h"
#include "settle/storage/store.h"
#include "store_factory.h"
#include "store_test_util.h"

namespace settle::storage::testing {
namespace {

using namespace std::string_literals;

// Bytes no text column would keep: a NUL, bytes that are not UTF-8, a newline.
const std::string kResult = "ok\0\xff\xfe\n{\"paid\":100}"s;

GlobalRecord Finished(GlobalRecord g, std::string result) {
  g.status = GlobalStatus::kSucceed;
  g.update_time = T0() + 1s;
  g.finish_time = T0() + 1s;
  g.next_cron_time.reset();
  g.result = std::move(result);
  return g;
}

TEST_CASE("a workflow's result is stored by the update that finishes it, bytes whole",
          "[storage][result]") {
  TestStore store;
  GlobalRecord inserted = MakeGlobal("wf1");
  inserted.result = "not stored by an insert";
  MustCommit(*store, Batch(InsertGlobal{inserted}));
  CHECK(MustLoad(*store, "wf1").global.result.empty());

  const GlobalRecord done = Finished(MustLoad(*store, "wf1").global, kResult);
  MustCommit(*store, Batch(UpdateGlobal{done, GlobalStatus::kPrepared}));
  const GlobalRecord loaded = MustLoad(*store, "wf1").global;
  CHECK(loaded.result == kResult);
  CHECK(loaded.result.size() == kResult.size());
  CHECK(loaded.status == GlobalStatus::kSucceed);
  const ListPage listed = MustList(*store, ListQuery{});
  REQUIRE(listed.transactions.size() == 1);
  CHECK(listed.transactions[0].result == kResult);
}

TEST_CASE("a later update without a result keeps the stored one", "[storage][result]") {
  TestStore store;
  MustCommit(*store, Batch(InsertGlobal{MakeGlobal("wf1")}));
  MustCommit(*store, Batch(UpdateGlobal{Finished(MustLoad(*store, "wf1").global, kResult),
                                        GlobalStatus::kPrepared}));
  GlobalRecord flagged = MustLoad(*store, "wf1").global;
  flagged.result.clear();
  flagged.update_time = T0() + 2s;
  MustCommit(*store, Batch(UpdateGlobal{flagged, GlobalStatus::kSucceed}));
  CHECK(MustLoad(*store, "wf1").global.result == kResult);
  CHECK(MustLoad(*store, "wf1").global.update_time == T0() + 2s);
}

TEST_CASE("an update refused by its expected status writes no result", "[storage][result]") {
  TestStore store;
  MustCommit(*store, Batch(InsertGlobal{MakeGlobal("wf1")}));
  const GlobalRecord done = Finished(MustLoad(*store, "wf1").global, kResult);
  const Status refused = store->Commit(Batch(UpdateGlobal{done, GlobalStatus::kSubmitted}));
  CHECK(refused.code() == StatusCode::kConflict);
  const GlobalRecord stored = MustLoad(*store, "wf1").global;
  CHECK(stored.result.empty());
  CHECK(stored.status == GlobalStatus::kPrepared);
  // Nor for a gid that is not stored.
  GlobalRecord absent = done;
  absent.gid = "wf2";
  CHECK(store->Commit(Batch(UpdateGlobal{absent, GlobalStatus::kPrepared})).code() ==
        StatusCode::kNotFound);
}

TEST_CASE("a workflow's name and its step log's bytes are kept as stored", "[storage][result]") {
  TestStore store;
  GlobalRecord g = MakeGlobal("wf1", TransType::kWorkflow);
  g.options.workflow_name = "transfer";
  BranchRecord resume = MakeBranch("wf1", "00", BranchOp::kResume, -1);
  BranchRecord step = MakeBranch("wf1", "01", BranchOp::kAction);
  step.status = BranchStatus::kSucceed;
  step.data = SharedBytes(kResult);
  BranchRecord business = MakeBranch("wf1", "01", BranchOp::kBusiness);
  business.status = BranchStatus::kFailed;
  business.data = SharedBytes(std::string("no funds"));
  MustCommit(*store, Batch(InsertGlobal{g}, InsertBranch{resume}, InsertBranch{step},
                           InsertBranch{business}));
  const Transaction loaded = MustLoad(*store, "wf1");
  CHECK(loaded.global.trans_type == TransType::kWorkflow);
  CHECK(loaded.global.options.workflow_name == "transfer");
  REQUIRE(loaded.branches.size() == 3);
  CHECK(loaded.branches[0].op == BranchOp::kResume);
  CHECK(loaded.branches[1].op == BranchOp::kAction);
  CHECK(loaded.branches[1].data.str() == kResult);
  CHECK(loaded.branches[1].status == BranchStatus::kSucceed);
  CHECK(loaded.branches[2].op == BranchOp::kBusiness);
  CHECK(loaded.branches[2].status == BranchStatus::kFailed);
}

}  // namespace
}  // namespace settle::storage::testing
