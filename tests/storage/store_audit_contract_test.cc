// The Store contract for the audit trail (write_batch.h RecordAudit, Store::ListAudit): an
// operator's action is stored with the change it audits, or not at all, every byte kept, and
// read back newest first, by transaction, actor or action, page after page. These tests run
// against the store that store_factory.h makes, whatever its implementation.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "record_builders.h"
#include "settle/storage/store.h"
#include "store_factory.h"
#include "store_test_util.h"

namespace settle::storage::testing {
namespace {

AuditEntry Entry(std::string action, std::string gid, std::string actor = "on-call",
                 std::string reason = "participant fixed by hand") {
  AuditEntry e;
  e.at = T0();
  e.actor = std::move(actor);
  e.action = std::move(action);
  e.gid = std::move(gid);
  e.parameters = "{}";
  e.reason = std::move(reason);
  return e;
}

AuditPage MustListAudit(Store& store, const AuditQuery& query) {
  auto page = store.ListAudit(query);
  INFO(page.status().ToString());
  REQUIRE(page);
  return *page;
}

std::vector<std::string> Actions(const AuditPage& page) {
  std::vector<std::string> actions;
  for (const AuditEntry& e : page.entries) actions.push_back(e.action + ":" + e.gid);
  return actions;
}

TEST_CASE("an audit entry is stored with every byte and read back newest first",
          "[storage][audit]") {
  TestStore store;
  AuditEntry odd = Entry("force_stop", "g1", std::string("bin\0ary \xff", 9),
                         "reason\nwith a newline and \xc3\xa9");
  odd.target = "http://10.0.0.7:8081";
  odd.parameters = R"({"url":"http://new:8081"})";
  MustCommit(*store, Batch(InsertGlobal{MakeGlobal("g1")}, RecordAudit{odd}));
  MustCommit(*store, Batch(RecordAudit{Entry("retry_host", "")}));

  const AuditPage page = MustListAudit(*store, AuditQuery{});
  REQUIRE(page.entries.size() == 2);
  CHECK(page.entries[0].action == "retry_host");
  CHECK(page.entries[1].id < page.entries[0].id);
  AuditEntry stored = page.entries[1];
  CHECK(stored.id > 0);
  stored.id = 0;
  CHECK(stored == odd);
  CHECK_FALSE(page.next_position);
}

TEST_CASE("an audit entry whose batch is refused is not stored", "[storage][audit]") {
  TestStore store;
  // Retry now of an unknown gid: its RetryNow is refused, and its audit with it.
  const Status refused =
      store->Commit(Batch(RetryNow{"nobody", T0()}, RecordAudit{Entry("retry_now", "nobody")}));
  CHECK(refused.code() == StatusCode::kNotFound);
  CHECK(MustListAudit(*store, AuditQuery{}).entries.empty());
}

TEST_CASE("audit entries are found by transaction, actor and action, in pages",
          "[storage][audit]") {
  TestStore store;
  for (const char* gid : {"g1", "g2"}) MustCommit(*store, Batch(InsertGlobal{MakeGlobal(gid)}));
  MustCommit(*store, Batch(RecordAudit{Entry("retry_now", "g1", "alice")}));
  MustCommit(*store, Batch(RecordAudit{Entry("retry_now", "g2", "bob")}));
  MustCommit(*store, Batch(RecordAudit{Entry("force_stop", "g1", "bob")}));
  MustCommit(*store, Batch(RecordAudit{Entry("retry_host", "", "alice")}));

  AuditQuery of_g1;
  of_g1.gid = "g1";
  CHECK(Actions(MustListAudit(*store, of_g1)) ==
        std::vector<std::string>{"force_stop:g1", "retry_now:g1"});
  AuditQuery by_bob;
  by_bob.actor = "bob";
  CHECK(Actions(MustListAudit(*store, by_bob)) ==
        std::vector<std::string>{"force_stop:g1", "retry_now:g2"});
  AuditQuery retries;
  retries.action = "retry_now";
  retries.actor = "alice";
  CHECK(Actions(MustListAudit(*store, retries)) == std::vector<std::string>{"retry_now:g1"});
  AuditQuery no_gid;
  no_gid.gid = "";  // host actions have none: a gid filter never finds them
  CHECK(MustListAudit(*store, no_gid).entries.empty());

  // Every entry once, two at a time.
  AuditQuery paged;
  paged.limit = 2;
  std::vector<std::string> seen;
  for (int guard = 0; guard < 10; ++guard) {
    const AuditPage page = MustListAudit(*store, paged);
    for (const std::string& a : Actions(page)) seen.push_back(a);
    if (!page.next_position) break;
    paged.before_id = page.next_position;
  }
  CHECK(seen ==
        std::vector<std::string>{"retry_host:", "force_stop:g1", "retry_now:g2", "retry_now:g1"});
  AuditQuery too_many;
  too_many.limit = 1001;
  const auto refused = store->ListAudit(too_many);
  REQUIRE_FALSE(refused);
  CHECK(refused.status().code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace settle::storage::testing
