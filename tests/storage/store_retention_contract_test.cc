// The Store contract for what operators and retention need (store.h, write_batch.h): counting
// unfinished transactions, finding the long finished ones, and deleting them.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "record_builders.h"
#include "settle/storage/store.h"
#include "store_factory.h"
#include "store_test_util.h"

namespace settle::storage::testing {
namespace {

GlobalRecord Finished(std::string gid, GlobalStatus status, TimePoint finished_at) {
  GlobalRecord g = MakeGlobal(std::move(gid), TransType::kSaga, status);
  g.finish_time = finished_at;
  g.next_cron_time.reset();
  return g;
}

std::size_t CountOf(const std::vector<UnfinishedCount>& counts, TransType type,
                    GlobalStatus status) {
  for (const UnfinishedCount& c : counts) {
    if (c.trans_type == type && c.status == status) return c.count;
  }
  return 0;
}

TEST_CASE("unfinished transactions are counted by type and status, with the stuck ones",
          "[storage]") {
  TestStore store;
  GlobalRecord stuck = MakeGlobal("tcc-stuck", TransType::kTcc, GlobalStatus::kSubmitted);
  stuck.stuck = true;
  MustCommit(*store,
             Batch(InsertGlobal{MakeGlobal("tcc-1")}, InsertGlobal{MakeGlobal("tcc-2")},
                   InsertGlobal{stuck},
                   InsertGlobal{MakeGlobal("saga-1", TransType::kSaga, GlobalStatus::kAborting)},
                   InsertGlobal{Finished("saga-done", GlobalStatus::kSucceed, T0())}));

  const std::vector<UnfinishedCount> counts = store->CountUnfinished().value();

  CHECK(CountOf(counts, TransType::kTcc, GlobalStatus::kPrepared) == 2);
  CHECK(CountOf(counts, TransType::kTcc, GlobalStatus::kSubmitted) == 1);
  CHECK(CountOf(counts, TransType::kSaga, GlobalStatus::kAborting) == 1);
  CHECK(CountOf(counts, TransType::kSaga, GlobalStatus::kSucceed) == 0);
  std::size_t stuck_total = 0;
  for (const UnfinishedCount& c : counts) stuck_total += c.stuck;
  CHECK(stuck_total == 1);
}

TEST_CASE(
    "the transactions finished before a cutoff are listed longest finished first, up to "
    "a limit",
    "[storage]") {
  TestStore store;
  MustCommit(
      *store,
      Batch(InsertGlobal{Finished("late", GlobalStatus::kSucceed, T0() + 30s)},
            InsertGlobal{Finished("oldest", GlobalStatus::kFailed, T0())},
            InsertGlobal{Finished("middle", GlobalStatus::kSucceed, T0() + 10s)},
            InsertGlobal{MakeGlobal("unfinished", TransType::kTcc, GlobalStatus::kSubmitted)}));

  CHECK(store->ListFinishedBefore(T0() + 20s, 10).value() ==
        std::vector<std::string>{"oldest", "middle"});
  CHECK(store->ListFinishedBefore(T0() + 20s, 1).value() == std::vector<std::string>{"oldest"});
  CHECK(store->ListFinishedBefore(T0(), 10).value().empty());  // strictly before
}

TEST_CASE("deleting a finished transaction removes it with its branch rows", "[storage]") {
  TestStore store;
  MustCommit(*store, Batch(InsertGlobal{Finished("done", GlobalStatus::kSucceed, T0())},
                           InsertBranch{MakeBranch("done", "01", BranchOp::kAction)},
                           InsertBranch{MakeBranch("done", "01", BranchOp::kCompensate)},
                           InsertGlobal{Finished("kept", GlobalStatus::kFailed, T0())},
                           InsertBranch{MakeBranch("kept", "01", BranchOp::kAction)}));

  MustCommit(*store, Batch(DeleteFinished{"done"}));

  CHECK_FALSE(store->Load("done").value().has_value());
  CHECK(MustLoad(*store, "kept").branches.size() == 1);
  // A gid inserted again after its deletion starts with no branch rows of the old one.
  MustCommit(*store, Batch(InsertGlobal{MakeGlobal("done")}));
  CHECK(MustLoad(*store, "done").branches.empty());
}

TEST_CASE("deleting an unknown gid is a no-op, and an unfinished one is refused", "[storage]") {
  TestStore store;
  MustCommit(*store,
             Batch(InsertGlobal{MakeGlobal("running", TransType::kTcc, GlobalStatus::kSubmitted)},
                   InsertBranch{MakeBranch("running", "01")}));

  CHECK(store->Commit(Batch(DeleteFinished{"never-stored"})).ok());
  const Status refused = store->Commit(Batch(DeleteFinished{"running"}));

  CHECK(refused.code() == StatusCode::kConflict);
  CHECK_THAT(refused.message(), Catch::Contains("running") && Catch::Contains("not finished"));
  CHECK(MustLoad(*store, "running").branches.size() == 1);
}

}  // namespace
}  // namespace settle::storage::testing
