// A participant behind a coordinator that appends its keys after a client's own query (one
// older than settled's check) gets each protocol key twice; the SDK's Participant refuses such a
// call with 400, before its signature, the barrier or a handler (docs/protocol.md §6.1): the
// money does not move, and nothing reads as FAILURE.
#include <sqlite3.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <string>

#include "../common/signing/rfc9421_keys.h"
#include "json_client.h"
#include "sdk_bank.h"
#include "settle/core/url.h"
#include "settle/sdk/barrier.h"
#include "settle/sdk/participant.h"
#include "settle/sdk/sqlite_barrier_store.h"
#include "temp_dir.h"

namespace settle::sdk {
namespace {

using testing::JsonClient;
using testing::SdkBank;
using testing::TempDir;

// What a coordinator that appends its own keys after the client's query sends: the client's
// words for the victim's confirm come first.
const std::string kClientQuery = "?gid=VICTIM&trans_type=tcc&branch_id=02&op=confirm";
const std::string kAppended = "&gid=evil-1&trans_type=saga&branch_id=01&op=action";
const std::string kTransfer = R"({"account_id":"2","amount":10})";

int PortOf(const std::string& url) { return ParseUrl(url)->port; }

std::string RepeatMessage(const std::string& key) {
  return key +
         ": more than once in the query string; the coordinator sets it, and a branch URL's own "
         "query may not name it";
}

TEST_CASE("a branch call that repeats a protocol key is a 400 naming it, and no money moves",
          "[sdk][participant][protocol_keys]") {
  TempDir dir;
  SdkBank bank(dir.File("bank.db"), 3, 100);
  JsonClient client(PortOf(bank.Url("/")));
  const auto r = client.Post("/TransIn" + kClientQuery + kAppended, kTransfer);
  CHECK(r.status == 400);
  CHECK(r.json["message"] == RepeatMessage("gid"));
  CHECK_FALSE(r.json.contains("dtm_result"));  // nothing that reads as FAILURE
  CHECK(r.body.find("FAILURE") == std::string::npos);
  for (const std::string query :
       {"?GID=x&gid=g1&trans_type=saga&branch_id=01&op=action",
        "?gid=g1&trans_type=saga&branch_id=01&op=action&Op=compensate",
        "?gid=g1&trans_type=saga&branch_id=01&branch_type=x&branch_type=action&op=action",
        "?gid=g1&trans_type=saga&branch_id=01&op=action&dtm=a&dtm=b",
        "?gid=g1&trans_type=saga&trans%5Ftype=tcc&branch_id=01&op=action"}) {
    INFO(query);
    const auto again = client.Post("/TransIn" + query, kTransfer);
    CHECK(again.status == 400);
    CHECK_THAT(again.json["message"].get<std::string>(),
               Catch::Contains(": more than once in the query string"));
  }
  CHECK(bank.Balance("2") == 100);
  CHECK(bank.Total() == 300);
  CHECK(bank.BarrierRows() == 0);

  // The same transfer with each key once runs: the refusal was the repeat's.
  REQUIRE(client.Post("/TransIn?gid=g2&trans_type=saga&branch_id=01&op=action", kTransfer).status ==
          200);
  CHECK(bank.Balance("2") == 110);
  CHECK(bank.BarrierRows() == 1);
}

TEST_CASE("a repeated key is refused before the signature is checked",
          "[sdk][participant][protocol_keys]") {
  auto verifying = signing::VerifyingKey::FromText(signing::testing::kRfcEd25519Public);
  REQUIRE(verifying);
  ParticipantOptions options;
  options.signed_calls.emplace();
  options.signed_calls->keys.push_back(*verifying);
  TempDir dir;
  SdkBank bank(dir.File("bank.db"), 3, 100, options);
  JsonClient client(PortOf(bank.Url("/")));
  const auto r = client.Post("/TransInConfirm" + kClientQuery + kAppended, kTransfer);
  CHECK(r.status == 400);
  CHECK(r.json["message"] == RepeatMessage("gid"));
  CHECK(bank.participant().signature_refusals() == 0);
  // Without the repeat, the same unsigned call is the signature's to refuse.
  CHECK(client.Post("/TransInConfirm" + kClientQuery, kTransfer).status == 401);
  CHECK(bank.Balance("2") == 100);
  CHECK(bank.BarrierRows() == 0);
}

std::int64_t BarrierRows(SqliteBarrierStore& store) {
  auto tx = store.Begin();
  REQUIRE(tx);
  sqlite3_stmt* stmt = nullptr;
  REQUIRE(sqlite3_prepare_v2(SqliteBarrierStore::Connection(**tx), "SELECT COUNT(*) FROM barrier",
                             -1, &stmt, nullptr) == SQLITE_OK);
  std::int64_t rows = -1;
  if (sqlite3_step(stmt) == SQLITE_ROW) rows = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  return rows;
}

TEST_CASE("an XA call or a back-check that repeats a protocol key is a 400, the barrier untouched",
          "[sdk][participant][protocol_keys]") {
  TempDir dir;
  auto store = SqliteBarrierStore::Open(dir.File("barrier.db"));
  REQUIRE(store);
  SystemClock clock;
  Barrier barrier(**store, clock);
  std::atomic<int> xa_calls{0};
  Participant participant;
  participant.OnXa("/xa", [&](const XaRequest&) {
    ++xa_calls;
    return BranchReply::Success();
  });
  participant.OnQueryPrepared("/qp", barrier);
  auto port = participant.Start("127.0.0.1", 0);
  REQUIRE(port);
  JsonClient client(*port);

  const std::string action = "?gid=x1&trans_type=xa&branch_id=01&op=action&phase2_url=";
  const auto xa = client.Post("/xa" + action + PercentEncode("http://evil/xa") +
                                  "&phase2_url=" + PercentEncode("http://bank/xa"),
                              "{}");
  CHECK(xa.status == 400);
  CHECK(xa.json["message"] == RepeatMessage("phase2_url"));
  CHECK(xa_calls == 0);

  // An unanswered back-check would write the barrier's "rollback" row for the victim's gid.
  const auto qp = client.Get("/qp?gid=VICTIM&trans_type=msg&branch_id=00&op=msg&gid=m1");
  CHECK(qp.status == 400);
  CHECK(qp.json["message"] == RepeatMessage("gid"));
  CHECK(BarrierRows(**store) == 0);

  // Each key once: the back-check answers, and writes its row.
  CHECK(client.Get("/qp?gid=m1&trans_type=msg&branch_id=00&op=msg").status != 400);
  CHECK(BarrierRows(**store) == 1);
  participant.Stop();
}

}  // namespace
}  // namespace settle::sdk
