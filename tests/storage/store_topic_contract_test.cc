// The Store contract for topics (store.h, write_batch.h): who subscribes to what, in which
// order, and when subscribing, unsubscribing or deleting a topic is refused.
// These tests run against the store that store_factory.h makes, whatever its implementation.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "record_builders.h"
#include "settle/storage/store.h"
#include "store_factory.h"
#include "store_test_util.h"

namespace settle::storage::testing {
namespace {

using UrlList = std::vector<std::string>;

TEST_CASE("a new store has no topics, and an unknown topic has no subscribers", "[storage]") {
  TestStore store;

  CHECK(MustListTopics(*store).empty());
  CHECK(MustSubscribers(*store, "orders").empty());
}

TEST_CASE("a topic's subscribers come in the order they subscribed, with every field",
          "[storage]") {
  TestStore store;
  // Later subscribers carry earlier times: the order is the order of subscription, not time.
  const Subscriber first = MakeSubscriber("http://c/notify", "the third service", T0() + 2s);
  const Subscriber second = MakeSubscriber("http://a/notify", "", T0() + 1s);
  const Subscriber third = MakeSubscriber("http://b/notify", std::string("bin\0ary \xc3\xa9", 10));
  MustCommit(*store, Batch(Subscribe{"orders", first}));
  MustCommit(*store, Batch(Subscribe{"orders", second}, Subscribe{"orders", third}));

  CHECK(MustSubscribers(*store, "orders") == std::vector<Subscriber>{first, second, third});
}

TEST_CASE("topics are listed by name, each with its subscribers in subscription order",
          "[storage]") {
  TestStore store;
  MustCommit(*store, Batch(Subscribe{"orders", MakeSubscriber("http://b/1")},
                           Subscribe{"billing", MakeSubscriber("http://a/1")}));
  MustCommit(*store, Batch(Subscribe{"Payments", MakeSubscriber("http://c/1")},
                           Subscribe{"orders", MakeSubscriber("http://a/2")}));
  MustCommit(*store, Batch(Subscribe{"orders", MakeSubscriber("http://c/3")}));

  const std::vector<Topic> topics = MustListTopics(*store);

  // By name, byte for byte: upper case before lower case whatever the database's locale.
  REQUIRE(topics.size() == 3);
  CHECK(topics[0].name == "Payments");
  CHECK(topics[1].name == "billing");
  CHECK(topics[2].name == "orders");
  CHECK(Urls(topics[0].subscribers) == UrlList{"http://c/1"});
  CHECK(Urls(topics[1].subscribers) == UrlList{"http://a/1"});
  CHECK(Urls(topics[2].subscribers) == UrlList{"http://b/1", "http://a/2", "http://c/3"});
  CHECK(topics[2].subscribers == MustSubscribers(*store, "orders"));
}

TEST_CASE("one url may subscribe to several topics", "[storage]") {
  TestStore store;

  MustCommit(*store, Batch(Subscribe{"orders", MakeSubscriber("http://a/notify", "orders")},
                           Subscribe{"billing", MakeSubscriber("http://a/notify", "billing")}));

  CHECK(MustSubscribers(*store, "orders").at(0).remark == "orders");
  CHECK(MustSubscribers(*store, "billing").at(0).remark == "billing");
}

TEST_CASE(
    "subscribing a url that already subscribes is AlreadyExists naming topic and url, and "
    "nothing of its batch is stored",
    "[storage]") {
  TestStore store;
  const Subscriber kept = MakeSubscriber("http://a/notify", "first", T0());
  MustCommit(*store, Batch(Subscribe{"orders", kept}));

  const Status s = store->Commit(
      Batch(Subscribe{"billing", MakeSubscriber("http://b/notify")}, InsertGlobal{MakeGlobal("g1")},
            Subscribe{"orders", MakeSubscriber("http://z/notify")},
            Subscribe{"orders", MakeSubscriber("http://a/notify", "second", T0() + 1s)}));

  CHECK(s.code() == StatusCode::kAlreadyExists);
  CHECK_THAT(s.message(), Catch::Contains("orders") && Catch::Contains("http://a/notify"));
  CHECK(MustSubscribers(*store, "orders") == std::vector<Subscriber>{kept});
  CHECK(MustSubscribers(*store, "billing").empty());
  CHECK_FALSE(store->Load("g1").value().has_value());
  CHECK(MustListTopics(*store).size() == 1);
}

TEST_CASE("subscribing the same url twice in one batch is refused", "[storage]") {
  TestStore store;

  const Status s = store->Commit(Batch(Subscribe{"orders", MakeSubscriber("http://a/notify")},
                                       Subscribe{"orders", MakeSubscriber("http://a/notify")}));

  CHECK(s.code() == StatusCode::kAlreadyExists);
  CHECK(MustListTopics(*store).empty());
}

TEST_CASE("unsubscribing removes that url alone and keeps the others' order", "[storage]") {
  TestStore store;
  MustCommit(*store, Batch(Subscribe{"orders", MakeSubscriber("http://a/1")},
                           Subscribe{"orders", MakeSubscriber("http://b/2")},
                           Subscribe{"orders", MakeSubscriber("http://c/3")},
                           Subscribe{"billing", MakeSubscriber("http://b/2")}));

  MustCommit(*store, Batch(Unsubscribe{"orders", "http://b/2"}));

  CHECK(Urls(MustSubscribers(*store, "orders")) == UrlList{"http://a/1", "http://c/3"});
  CHECK(Urls(MustSubscribers(*store, "billing")) == UrlList{"http://b/2"});
  SECTION("and a url that subscribes again comes after those already there") {
    MustCommit(*store, Batch(Subscribe{"orders", MakeSubscriber("http://b/2")}));
    MustCommit(*store, Batch(Unsubscribe{"orders", "http://a/1"},
                             Subscribe{"orders", MakeSubscriber("http://a/1")}));

    CHECK(Urls(MustSubscribers(*store, "orders")) ==
          UrlList{"http://c/3", "http://b/2", "http://a/1"});
  }
}

TEST_CASE(
    "unsubscribing a url that does not subscribe is NotFound naming topic and url, and nothing "
    "of its batch is stored",
    "[storage]") {
  TestStore store;
  MustCommit(*store, Batch(Subscribe{"orders", MakeSubscriber("http://a/notify")}));

  SECTION("another url of a topic that exists") {
    const Status s = store->Commit(Batch(Subscribe{"orders", MakeSubscriber("http://b/notify")},
                                         Unsubscribe{"orders", "http://c/notify"}));

    CHECK(s.code() == StatusCode::kNotFound);
    CHECK_THAT(s.message(), Catch::Contains("orders") && Catch::Contains("http://c/notify"));
    CHECK(Urls(MustSubscribers(*store, "orders")) == UrlList{"http://a/notify"});
  }
  SECTION("the url of a topic that does not exist") {
    const Status s = store->Commit(
        Batch(Unsubscribe{"orders", "http://a/notify"}, Unsubscribe{"billing", "http://a/notify"}));

    CHECK(s.code() == StatusCode::kNotFound);
    CHECK_THAT(s.message(), Catch::Contains("billing") && Catch::Contains("http://a/notify"));
    CHECK(Urls(MustSubscribers(*store, "orders")) == UrlList{"http://a/notify"});
  }
}

TEST_CASE("a topic whose last subscriber unsubscribes no longer exists", "[storage]") {
  TestStore store;
  MustCommit(*store, Batch(Subscribe{"orders", MakeSubscriber("http://a/1")},
                           Subscribe{"orders", MakeSubscriber("http://b/2")},
                           Subscribe{"billing", MakeSubscriber("http://a/1")}));

  MustCommit(*store,
             Batch(Unsubscribe{"orders", "http://a/1"}, Unsubscribe{"orders", "http://b/2"}));

  const std::vector<Topic> topics = MustListTopics(*store);
  REQUIRE(topics.size() == 1);
  CHECK(topics[0].name == "billing");
  CHECK(MustSubscribers(*store, "orders").empty());
  CHECK(store->Commit(Batch(DeleteTopic{"orders"})).code() == StatusCode::kNotFound);
}

TEST_CASE("deleting a topic removes it with every subscriber and leaves the others", "[storage]") {
  TestStore store;
  MustCommit(*store, Batch(Subscribe{"orders", MakeSubscriber("http://a/1")},
                           Subscribe{"orders", MakeSubscriber("http://b/2")},
                           Subscribe{"billing", MakeSubscriber("http://a/1")}));

  MustCommit(*store, Batch(DeleteTopic{"orders"}));

  CHECK(MustSubscribers(*store, "orders").empty());
  CHECK(Urls(MustSubscribers(*store, "billing")) == UrlList{"http://a/1"});
  REQUIRE(MustListTopics(*store).size() == 1);
  SECTION("and the topic subscribed to again starts afresh") {
    MustCommit(*store, Batch(Subscribe{"orders", MakeSubscriber("http://b/2")}));

    CHECK(Urls(MustSubscribers(*store, "orders")) == UrlList{"http://b/2"});
  }
}

TEST_CASE(
    "deleting a topic that does not exist is NotFound naming it, and nothing of its batch is "
    "stored",
    "[storage]") {
  TestStore store;

  const Status s = store->Commit(Batch(Subscribe{"orders", MakeSubscriber("http://a/1")},
                                       DeleteTopic{"orders"}, DeleteTopic{"orders"}));

  CHECK(s.code() == StatusCode::kNotFound);
  CHECK_THAT(s.message(), Catch::Contains("topic orders"));
  CHECK(MustListTopics(*store).empty());
}

TEST_CASE("retention's deletes leave topics alone", "[storage]") {
  TestStore store;
  GlobalRecord done = MakeGlobal("done", TransType::kSaga, GlobalStatus::kSucceed);
  done.finish_time = T0();
  done.next_cron_time.reset();
  MustCommit(*store,
             Batch(InsertGlobal{done}, InsertBranch{MakeBranch("done", "01", BranchOp::kAction)},
                   Subscribe{"orders", MakeSubscriber("http://p/01/action")}));

  MustCommit(*store, Batch(DeleteFinished{"done"}));

  CHECK_FALSE(store->Load("done").value().has_value());
  CHECK(Urls(MustSubscribers(*store, "orders")) == UrlList{"http://p/01/action"});
}

}  // namespace
}  // namespace settle::storage::testing
