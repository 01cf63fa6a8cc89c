// The Store contract for bodies that several branch rows carry (write_batch.h InsertBranch): a
// message's deliveries to a topic's subscribers, a saga step's action and compensate, a TCC
// branch's confirm and cancel. Rows inserted in one batch with one body keep it once; each
// still reads it whole. These tests run against the store that store_factory.h makes.
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include "record_builders.h"
#include "settle/storage/store.h"
#include "store_factory.h"
#include "store_test_util.h"

namespace settle::storage::testing {
namespace {

// Bytes no text type would keep: NUL, invalid UTF-8, and enough of them to matter.
std::string BinaryBody(std::size_t size) {
  std::string body(size, '\0');
  for (std::size_t i = 0; i < size; ++i) body[i] = static_cast<char>((i * 131 + 7) % 256);
  return body;
}

GlobalRecord Message(std::string gid, std::string creator) {
  GlobalRecord g = MakeGlobal(std::move(gid), TransType::kMsg, GlobalStatus::kSubmitted);
  g.creator = std::move(creator);
  return g;
}

// A delivery row of step 1 ("02") to subscriber `j`, carrying `body`.
BranchRecord Delivery(const std::string& gid, int j, const SharedBytes& body) {
  BranchRecord b = MakeBranch(gid, "02-" + std::to_string(10 + j), BranchOp::kAction, 1);
  b.url = "http://subscriber-" + std::to_string(10 + j) + "/notify";
  b.data = body;
  return b;
}

std::size_t MustUsageBytes(Store& store, const std::string& creator) {
  auto usage = store.UnfinishedUsage(creator);
  INFO(usage.status().ToString());
  REQUIRE(usage);
  REQUIRE(usage->size() == 1);
  return usage->front().bytes;
}

std::size_t UrlBytes(const std::vector<BranchRecord>& rows) {
  std::size_t bytes = 0;
  for (const BranchRecord& row : rows) bytes += row.url.size();
  return bytes;
}

TEST_CASE("rows inserted in one batch with one body keep it once, and each reads it whole",
          "[storage][shared-body]") {
  TestStore store;
  MustCommit(*store, Batch(InsertGlobal{Message("m-1", "svc")}));
  const std::size_t options_bytes = MustUsageBytes(*store, "svc");
  const SharedBytes body(BinaryBody(64 * 1024));
  std::vector<BranchRecord> rows;
  WriteBatch batch;
  for (int j = 0; j < 40; ++j) {
    rows.push_back(Delivery("m-1", j, body));
    batch.Add(InsertBranch{rows.back()});
  }
  MustCommit(*store, batch);

  const Transaction loaded = MustLoad(*store, "m-1");
  REQUIRE(loaded.branches.size() == rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    INFO("row " << i);
    CHECK(loaded.branches[i] == rows[i]);
    // One allocation in memory too, whoever reads it.
    CHECK(loaded.branches[i].data.SharesWith(loaded.branches[0].data));
  }
  // Stored once: the usage a quota counts holds the body once, beside every row's url.
  CHECK(MustUsageBytes(*store, "svc") == options_bytes + UrlBytes(rows) + body.size());
}

TEST_CASE("each of many shared bodies goes to its own rows: a TCC's branches, batch by batch",
          "[storage][shared-body]") {
  TestStore store;
  MustCommit(*store, Batch(InsertGlobal{MakeGlobal("t-1")}));
  std::vector<BranchRecord> rows;
  for (int i = 0; i < 12; ++i) {
    // A registration: its cancel and confirm rows share the branch's body.
    const std::string id = std::to_string(10 + i);
    const SharedBytes body(id + ":" + BinaryBody(100 + 17 * i));
    BranchRecord cancel = MakeBranch("t-1", id, BranchOp::kCancel);
    BranchRecord confirm = MakeBranch("t-1", id, BranchOp::kConfirm);
    cancel.data = body;
    confirm.data = body;
    MustCommit(*store, Batch(InsertBranch{cancel}, InsertBranch{confirm}));
    rows.push_back(cancel);
    rows.push_back(confirm);
  }

  const Transaction loaded = MustLoad(*store, "t-1");
  REQUIRE(loaded.branches.size() == rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    INFO("row " << i << ", branch " << rows[i].branch_id);
    CHECK(loaded.branches[i] == rows[i]);
  }
}

TEST_CASE("equal bodies that are not one are each stored, and an empty body is no one's",
          "[storage][shared-body]") {
  TestStore store;
  MustCommit(*store, Batch(InsertGlobal{Message("m-1", "svc")}));
  const std::size_t options_bytes = MustUsageBytes(*store, "svc");
  const std::string bytes = BinaryBody(1000);
  std::vector<BranchRecord> rows = {
      Delivery("m-1", 0, SharedBytes(bytes)), Delivery("m-1", 1, SharedBytes(bytes)),
      Delivery("m-1", 2, SharedBytes()), Delivery("m-1", 3, SharedBytes())};
  MustCommit(*store, Batch(InsertBranch{rows[0]}, InsertBranch{rows[1]}, InsertBranch{rows[2]},
                           InsertBranch{rows[3]}));

  CHECK(MustLoad(*store, "m-1").branches == rows);
  CHECK(MustUsageBytes(*store, "svc") == options_bytes + UrlBytes(rows) + 2 * bytes.size());
}

TEST_CASE("one body given to two transactions in one batch is kept by each",
          "[storage][shared-body]") {
  TestStore store;
  const SharedBytes body(BinaryBody(5000));
  MustCommit(*store,
             Batch(InsertGlobal{Message("m-1", "svc")}, InsertGlobal{Message("m-2", "svc")},
                   InsertBranch{Delivery("m-1", 0, body)}, InsertBranch{Delivery("m-2", 0, body)},
                   InsertBranch{Delivery("m-2", 1, body)}));

  // Deleting the first leaves the second whole: it never referred to the other's rows.
  GlobalRecord finished = Message("m-1", "svc");
  finished.status = GlobalStatus::kSucceed;
  finished.finish_time = T0();
  MustCommit(*store,
             Batch(UpdateGlobal{finished, GlobalStatus::kSubmitted}, DeleteFinished{"m-1"}));
  CHECK_FALSE(store->Load("m-1")->has_value());
  const Transaction second = MustLoad(*store, "m-2");
  REQUIRE(second.branches.size() == 2);
  CHECK(second.branches[0].data == body);
  CHECK(second.branches[1].data == body);
}

TEST_CASE("a row cannot share the body of a row stored earlier with other bytes",
          "[storage][shared-body]") {
  TestStore store;
  BranchRecord holder = Delivery("m-1", 0, SharedBytes(std::string("first")));
  MustCommit(*store, Batch(InsertGlobal{Message("m-1", "svc")}, InsertBranch{holder}));

  // The same holder again (a no-op: it is there with this url) with a body of another length,
  // and a new row given that body: the new row would read "first". Refused, nothing kept.
  const SharedBytes other(BinaryBody(300));
  BranchRecord again = holder;
  again.data = other;
  const Status refused =
      store->Commit(Batch(InsertBranch{again}, InsertBranch{Delivery("m-1", 1, other)}));

  INFO(refused.ToString());
  CHECK(refused.code() == StatusCode::kConflict);
  CHECK(refused.message().find("shares the body of branch 02-10/action") != std::string::npos);
  CHECK(MustLoad(*store, "m-1").branches == std::vector<BranchRecord>{holder});
}

}  // namespace
}  // namespace settle::storage::testing
