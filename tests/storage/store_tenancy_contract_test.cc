// The Store contract for ownership and quotas (store.h, write_batch.h): who created a
// transaction or a topic subscription, the checks that refuse another caller's, a caller's List,
// and what each caller's unfinished transactions hold.
// These tests run against the store that store_factory.h makes, whatever its implementation.
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

GlobalRecord Owned(std::string gid, std::string creator,
                   GlobalStatus status = GlobalStatus::kPrepared) {
  GlobalRecord g = MakeGlobal(std::move(gid), TransType::kTcc, status);
  g.creator = std::move(creator);
  if (IsTerminal(status)) {
    g.finish_time = T0();
    g.next_cron_time.reset();
  }
  return g;
}

Subscriber SubscribedBy(std::string url, std::string creator) {
  Subscriber s = MakeSubscriber(std::move(url));
  s.creator = std::move(creator);
  return s;
}

std::vector<CreatorUsage> MustUsage(Store& store, std::optional<std::string> creator) {
  auto usage = store.UnfinishedUsage(creator);
  INFO(usage.status().ToString());
  REQUIRE(usage);
  return *usage;
}

TEST_CASE("a transaction's creator is stored with it, and a caller lists its own and nobody's",
          "[storage][tenancy]") {
  TestStore store;
  MustCommit(*store,
             Batch(InsertGlobal{Owned("a-1", "service-a")}, InsertGlobal{Owned("b-1", "service-b")},
                   InsertGlobal{Owned("old-1", "")},
                   InsertGlobal{Owned("a-2", "service-a", GlobalStatus::kSucceed)}));

  CHECK(MustLoad(*store, "a-1").global.creator == "service-a");
  CHECK(MustLoad(*store, "old-1").global.creator.empty());
  ListQuery mine;
  mine.creator = "service-a";
  CHECK(Gids(MustList(*store, mine)) == std::vector<std::string>{"a-2", "old-1", "a-1"});
  mine.status = GlobalStatus::kPrepared;
  CHECK(Gids(MustList(*store, mine)) == std::vector<std::string>{"old-1", "a-1"});
  ListQuery everyone;
  CHECK(Gids(MustList(*store, everyone)).size() == 4);
  // Paging stays within the caller's.
  ListQuery page;
  page.creator = "service-b";
  page.limit = 1;
  const ListPage first = MustList(*store, page);
  CHECK(Gids(first) == std::vector<std::string>{"old-1"});
  REQUIRE(first.next_position);
  page.before_id = first.next_position;
  CHECK(Gids(MustList(*store, page)) == std::vector<std::string>{"b-1"});
}

TEST_CASE(
    "ExpectCreator refuses another caller's transaction as an unknown gid, and nothing of "
    "the batch is stored",
    "[storage][tenancy]") {
  TestStore store;
  MustCommit(*store,
             Batch(InsertGlobal{Owned("a-1", "service-a")}, InsertGlobal{Owned("old-1", "")}));

  const Status refused = store->Commit(
      Batch(ExpectCreator{"a-1", "service-b"}, InsertBranch{MakeBranch("a-1", "01")}));
  const Status unknown = store->Commit(
      Batch(ExpectCreator{"zz-9", "service-b"}, InsertBranch{MakeBranch("zz-9", "01")}));
  CHECK(refused.code() == StatusCode::kNotFound);
  CHECK(refused.message() == "gid a-1 not found");
  CHECK(unknown.code() == StatusCode::kNotFound);
  CHECK(unknown.message() == "gid zz-9 not found");
  CHECK(MustLoad(*store, "a-1").branches.empty());

  CHECK(
      store->Commit(Batch(ExpectCreator{"a-1", "service-a"}, InsertBranch{MakeBranch("a-1", "01")}))
          .ok());
  CHECK(store
            ->Commit(
                Batch(ExpectCreator{"old-1", "service-b"}, InsertBranch{MakeBranch("old-1", "01")}))
            .ok());
  CHECK(MustLoad(*store, "a-1").branches.size() == 1);
  CHECK(MustLoad(*store, "old-1").branches.size() == 1);
}

TEST_CASE(
    "a topic belongs to the creator of its oldest subscription: ExpectTopicCreator "
    "refuses another caller",
    "[storage][tenancy]") {
  TestStore store;
  MustCommit(*store, Batch(ExpectTopicCreator{"orders", "service-a"},
                           Subscribe{"orders", SubscribedBy("http://a/1", "service-a")}));
  // An admin's subscription (no check) does not make the topic the admin's.
  MustCommit(*store, Batch(Subscribe{"orders", SubscribedBy("http://ops/1", "operators")}));

  const Status refused =
      store->Commit(Batch(ExpectTopicCreator{"orders", "service-b"},
                          Subscribe{"orders", SubscribedBy("http://b/1", "service-b")}));
  CHECK(refused.code() == StatusCode::kConflict);
  CHECK(refused.message() == "topic orders belongs to another client");
  const std::vector<Subscriber> subscribers = MustSubscribers(*store, "orders");
  CHECK(Urls(subscribers) == std::vector<std::string>{"http://a/1", "http://ops/1"});
  CHECK(subscribers[1].creator == "operators");
  const std::vector<Topic> topics = MustListTopics(*store);
  REQUIRE(topics.size() == 1);
  CHECK(topics[0].creator() == "service-a");

  CHECK(store
            ->Commit(Batch(ExpectTopicCreator{"orders", "service-b"},
                           Unsubscribe{"orders", "http://a/1"}))
            .code() == StatusCode::kConflict);
  CHECK(store
            ->Commit(Batch(ExpectTopicCreator{"orders", "service-a"},
                           Unsubscribe{"orders", "http://a/1"}))
            .ok());
  // A topic nobody owns (subscribed before owners) is open to every caller.
  MustCommit(*store, Batch(Subscribe{"legacy", SubscribedBy("http://l/1", "")}));
  CHECK(store
            ->Commit(Batch(ExpectTopicCreator{"legacy", "service-b"},
                           Subscribe{"legacy", SubscribedBy("http://b/2", "service-b")}))
            .ok());
}

TEST_CASE("UnfinishedUsage counts each caller's unfinished transactions and their stored bytes",
          "[storage][tenancy]") {
  TestStore store;
  MustCommit(*store, Batch(InsertGlobal{Owned("a-1", "service-a")}));
  const std::vector<CreatorUsage> alone = MustUsage(*store, "service-a");
  REQUIRE(alone.size() == 1);
  const std::size_t options_bytes = alone[0].bytes;
  CHECK(alone[0].unfinished == 1);
  CHECK(options_bytes > 0);

  BranchRecord branch = MakeBranch("a-1", "01");
  branch.url = "http://a/confirm";
  branch.data = std::string("\0\xff payload", 10);
  MustCommit(*store, Batch(InsertBranch{branch}));
  MustCommit(*store,
             Batch(InsertGlobal{Owned("a-2", "service-a")},
                   InsertGlobal{Owned("a-done", "service-a", GlobalStatus::kFailed)},
                   InsertGlobal{Owned("b-1", "service-b")}, InsertGlobal{Owned("old-1", "")}));

  const std::vector<CreatorUsage> everyone = MustUsage(*store, std::nullopt);
  REQUIRE(everyone.size() == 2);
  CHECK(everyone[0] == CreatorUsage{"service-a", 2, 2 * options_bytes + 16 + 10});
  CHECK(everyone[1] == CreatorUsage{"service-b", 1, options_bytes});
  CHECK(MustUsage(*store, "service-b") == std::vector<CreatorUsage>{everyone[1]});
  CHECK(MustUsage(*store, "service-c").empty());
  CHECK(MustUsage(*store, "").empty());
}

}  // namespace
}  // namespace settle::storage::testing
