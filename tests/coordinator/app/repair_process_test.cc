// The real settled binary on a database an earlier build left with a failed TCC whose
// registered branch was never cancelled (the timeout/registration race): at start it makes the
// missing cancel, once, logs it once, and leaves the transaction failed; a TCC an operator
// force-stopped keeps its undone calls undone.
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <string>

#include "eventually.h"
#include "file_text.h"
#include "json_client.h"
#include "participant_server.h"
#include "settle/storage/sqlite_store.h"
#include "settled_process.h"
#include "temp_dir.h"

namespace settle {
namespace {

using nlohmann::json;

// A TCC failed by its timeout with branch 01's Try reserved at `p` and its cancel never made.
void StoreFailedTcc(storage::Store& store, const std::string& gid,
                    const testing::ParticipantServer& p, bool force_stopped) {
  const TimePoint t = FromUnixMillis(1'700'000'000'000);
  storage::GlobalRecord g;
  g.gid = gid;
  g.trans_type = TransType::kTcc;
  g.status = GlobalStatus::kFailed;
  g.options.timeout_to_fail = Duration(1000);
  g.options.request_timeout = Duration(3000);
  g.options.retry_interval = Duration(100);
  g.create_time = g.update_time = t;
  g.finish_time = g.rollback_time = t;
  g.rollback_reason = "timeout_to_fail: not submitted within 1000 ms";
  g.force_stopped = force_stopped;
  storage::WriteBatch batch;
  batch.Add(storage::InsertGlobal{g});
  for (BranchOp op : {BranchOp::kCancel, BranchOp::kConfirm}) {
    storage::BranchRecord row;
    row.gid = gid;
    row.branch_id = "01";
    row.op = op;
    row.url = p.Url(op == BranchOp::kCancel ? "/cancel" : "/confirm");
    row.data = "{}";
    row.create_time = row.update_time = row.next_retry_at = t;
    batch.Add(storage::InsertBranch{row});
  }
  REQUIRE(store.Commit(batch).ok());
}

TEST_CASE("settled makes the cancel an earlier build left undone, once, and the TCC stays failed",
          "[repair]") {
  testing::TempDir dir;
  testing::ParticipantServer p;
  const std::string db = dir.File("settle.db");
  {
    auto store = storage::SqliteStore::Open(db);
    REQUIRE(store);
    StoreFailedTcc(**store, "raced", p, /*force_stopped=*/false);
    StoreFailedTcc(**store, "stopped", p, /*force_stopped=*/true);
  }

  testing::SettledProcess settled(db);

  REQUIRE(p.WaitForCalls("/cancel", 1));
  testing::JsonClient client(settled.port());
  json raced;
  testing::Eventually(
      [&] {
        raced = client.Get("/api/settle/query?gid=raced").json;
        bool cancelled = false;
        for (const auto& b : raced["branches"]) {
          if (b["op"] == "cancel" && b["status"] == "succeed") cancelled = true;
        }
        return cancelled;
      },
      std::chrono::seconds(10), std::chrono::milliseconds(20));
  INFO(raced.dump());
  CHECK(raced["transaction"]["status"] == "failed");
  const auto calls = p.CallsTo("/cancel");
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].query.at("gid") == "raced");
  CHECK(calls[0].query.at("op") == "cancel");
  CHECK(p.CountCalls("/confirm") == 0);

  const std::string log = testing::ReadFile(settled.log_path());
  const std::string line = "gid=raced ended failed with a registered branch never cancelled";
  const auto first = log.find(line);
  CHECK(first != std::string::npos);
  CHECK(log.find(line, first + 1) == std::string::npos);
  CHECK(log.find("gid=stopped ended failed") == std::string::npos);
}

}  // namespace
}  // namespace settle
