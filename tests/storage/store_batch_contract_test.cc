// The Store contract for whole batches: atomicity, ordering within a batch, concurrent
// callers, and reads that follow writes.
// These tests run against the store that store_factory.h makes, whatever its implementation.
#include <catch2/catch.hpp>

#include <latch>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "record_builders.h"
#include "settle/storage/store.h"
#include "store_factory.h"
#include "store_test_util.h"

namespace settle::storage::testing {
namespace {

TEST_CASE("a batch whose third operation fails leaves nothing of the first two", "[storage]") {
  TestStore store;
  MustCommit(*store, Batch(InsertGlobal{MakeGlobal("existing")}));

  Status s =
      store->Commit(Batch(InsertGlobal{MakeGlobal("g1")}, InsertBranch{MakeBranch("g1", "01")},
                          UpdateGlobal{MakeGlobal("existing"), GlobalStatus::kAborting},
                          InsertBranch{MakeBranch("g1", "02")}));

  CHECK(s.code() == StatusCode::kConflict);
  CHECK_THAT(s.message(), Catch::Contains("existing"));
  Result<std::optional<Transaction>> loaded = store->Load("g1");
  REQUIRE(loaded);
  CHECK_FALSE(loaded->has_value());
}

TEST_CASE("later operations of a batch see the effects of earlier ones", "[storage]") {
  TestStore store;
  GlobalRecord submitted = MakeGlobal("g1", TransType::kTcc, GlobalStatus::kSubmitted);
  BranchRecord confirmed = MakeBranch("g1", "01");
  confirmed.status = BranchStatus::kSucceed;

  MustCommit(*store, Batch(InsertGlobal{MakeGlobal("g1")}, InsertBranch{MakeBranch("g1", "01")},
                           ExpectGlobalStatus{"g1", {GlobalStatus::kPrepared}},
                           UpdateGlobal{submitted, GlobalStatus::kPrepared},
                           UpdateBranch{confirmed, BranchStatus::kPrepared},
                           ExpectGlobalStatus{"g1", {GlobalStatus::kSubmitted}}));

  const Transaction loaded = MustLoad(*store, "g1");
  CHECK(loaded.global.status == GlobalStatus::kSubmitted);
  CHECK(loaded.branches.at(0).status == BranchStatus::kSucceed);
}

TEST_CASE("an empty batch commits and changes nothing", "[storage]") {
  TestStore store;
  CHECK(store->Commit(WriteBatch()).ok());
  CHECK(MustList(*store, ListQuery{}).transactions.empty());
}

TEST_CASE("a refused batch does not affect batches committed alongside it", "[storage]") {
  TestStore store;
  MustCommit(*store, Batch(InsertGlobal{MakeGlobal("taken")}));
  constexpr int kRounds = 50;
  for (int round = 0; round < kRounds; ++round) {
    const std::string gid = "ok-" + std::to_string(round);
    Status refused;
    Status accepted;
    std::latch start(2);
    std::thread loser([&] {
      start.arrive_and_wait();
      refused = store->Commit(Batch(InsertGlobal{MakeGlobal("lost-" + std::to_string(round))},
                                    InsertGlobal{MakeGlobal("taken")}));
    });
    std::thread winner([&] {
      start.arrive_and_wait();
      accepted =
          store->Commit(Batch(InsertGlobal{MakeGlobal(gid)}, InsertBranch{MakeBranch(gid, "01")}));
    });
    loser.join();
    winner.join();

    CHECK(refused.code() == StatusCode::kAlreadyExists);
    CHECK(accepted.ok());
    CHECK(MustLoad(*store, gid).branches.size() == 1);
    Result<std::optional<Transaction>> lost = store->Load("lost-" + std::to_string(round));
    REQUIRE(lost);
    CHECK_FALSE(lost->has_value());
  }
}

TEST_CASE("concurrent callers each get their own result and everything is stored", "[storage]") {
  TestStore store;
  constexpr int kThreads = 8;
  constexpr int kPerThread = 100;
  std::vector<int> wrong_results(kThreads, 0);
  RunTogether(kThreads, [&](int t) {
    for (int i = 0; i < kPerThread; ++i) {
      const std::string gid = ThreadGid(t, i);
      if (!store->Commit(Batch(InsertGlobal{MakeGlobal(gid)}, InsertBranch{MakeBranch(gid, "01")}))
               .ok()) {
        ++wrong_results[t];
      }
      // Every third gid is inserted again, which must be refused for this caller only.
      if (i % 3 == 0 && store->Commit(Batch(InsertGlobal{MakeGlobal(gid)})).code() !=
                            StatusCode::kAlreadyExists) {
        ++wrong_results[t];
      }
    }
  });

  for (int t = 0; t < kThreads; ++t) CHECK(wrong_results[t] == 0);
  std::set<std::string> listed;
  ListQuery query;
  query.limit = 1000;
  for (;;) {
    const ListPage page = MustList(*store, query);
    for (const GlobalRecord& g : page.transactions) listed.insert(g.gid);
    if (!page.next_position) break;
    query.before_id = page.next_position;
  }
  CHECK(listed.size() == kThreads * kPerThread);
  CHECK(MustLoad(*store, "t3-42").branches.size() == 1);
}

TEST_CASE("a load reflects every commit that returned before it started", "[storage]") {
  TestStore store;
  GlobalRecord g = MakeGlobal("g1");
  MustCommit(*store, Batch(InsertGlobal{g}));
  // Alternating writes and reads on every pooled read connection: a reader that kept an old
  // snapshot would show a stale update_time.
  for (int i = 1; i <= 200; ++i) {
    g.update_time = T0() + std::chrono::milliseconds(i);
    MustCommit(*store, Batch(UpdateGlobal{g, GlobalStatus::kPrepared}));
    REQUIRE(MustLoad(*store, "g1").global.update_time == g.update_time);
    REQUIRE(MustList(*store, ListQuery{}).transactions.at(0).update_time == g.update_time);
  }
}

}  // namespace
}  // namespace settle::storage::testing
