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

}  // namespace
}  // namespace settle::storage::testing
