// When the participant's own database fails, the barrier answers 500 so that the coordinator
// calls again later; it never turns a storage problem into a FAILURE (409) or an ONGOING.
#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "fake_clock.h"
#include "settle/sdk/barrier.h"

namespace settle::sdk {
namespace {

using settle::testing::FakeClock;
using Key = std::tuple<std::string, std::string, std::string, std::string>;

// An in-memory store whose steps can be told to fail. Transactions buffer their inserts and
// apply them on Commit.
class ScriptedStore final : public BarrierStore {
 public:
  Status begin_fails = Status::Ok();
  Status insert_fails = Status::Ok();
  Status reason_fails = Status::Ok();
  Status commit_fails = Status::Ok();
  std::map<Key, std::string> committed;  // key -> reason

  Result<std::unique_ptr<BarrierTransaction>> Begin() override {
    if (!begin_fails.ok()) return begin_fails;
    return std::unique_ptr<BarrierTransaction>(new Tx(*this));
  }
  Result<std::size_t> DeleteCreatedBefore(TimePoint, std::size_t) override {
    return std::size_t{0};
  }

 private:
  class Tx final : public BarrierTransaction {
   public:
    explicit Tx(ScriptedStore& store) : store_(store) {}
    Result<bool> InsertIfAbsent(const BarrierRow& row) override {
      if (!store_.insert_fails.ok()) return store_.insert_fails;
      Key key{row.gid, row.branch_id, row.op, row.barrier_id};
      if (store_.committed.contains(key) || pending_.contains(key)) return false;
      pending_[key] = row.reason;
      return true;
    }
    Result<std::optional<std::string>> ReasonOf(const std::string& gid,
                                                const std::string& branch_id, const std::string& op,
                                                const std::string& barrier_id) override {
      if (!store_.reason_fails.ok()) return store_.reason_fails;
      Key key{gid, branch_id, op, barrier_id};
      if (auto it = pending_.find(key); it != pending_.end()) return {it->second};
      if (auto it = store_.committed.find(key); it != store_.committed.end()) return {it->second};
      return std::optional<std::string>();
    }
    Status Commit() override {
      if (!store_.commit_fails.ok()) return store_.commit_fails;
      store_.committed.merge(pending_);
      return Status::Ok();
    }
    void Rollback() override { pending_.clear(); }

   private:
    ScriptedStore& store_;
    std::map<Key, std::string> pending_;
  };
};

BranchRequest Request(BranchOp op) {
  BranchRequest request;
  request.gid = "g1";
  request.branch_id = "01";
  request.op = op;
  return request;
}

struct Fixture {
  ScriptedStore store;
  FakeClock clock;
  Barrier barrier{store, clock};
  int runs = 0;
  Barrier::Business business = [this](BarrierTransaction&) {
    ++runs;
    return Status::Ok();
  };
};

TEST_CASE("a store that cannot begin answers 500 and runs no business", "[barrier]") {
  Fixture f;
  f.store.begin_fails = Status::Unavailable("disk gone");
  BarrierResult r = f.barrier.Call(Request(BranchOp::kTry), f.business);
  CHECK(r.reply.status.code() == StatusCode::kUnavailable);
  CHECK_THAT(r.reply.status.message(), Catch::Contains("disk gone"));
  CHECK(f.runs == 0);
}

TEST_CASE("a store that cannot insert or read the barrier rows answers 500", "[barrier]") {
  Fixture f;
  SECTION("insert") {
    f.store.insert_fails = Status::Unavailable("locked");
    CHECK(f.barrier.Call(Request(BranchOp::kCancel), f.business).reply.status.code() ==
          StatusCode::kUnavailable);
  }
  SECTION("reading the reason of an existing row") {
    REQUIRE(f.barrier.Call(Request(BranchOp::kConfirm), f.business).reply.status.ok());
    f.store.reason_fails = Status::Unavailable("locked");
    CHECK(f.barrier.Call(Request(BranchOp::kConfirm), f.business).reply.status.code() ==
          StatusCode::kUnavailable);
    CHECK(f.runs == 1);
  }
}

TEST_CASE("a failed commit answers 500 and leaves the call to be retried", "[barrier]") {
  Fixture f;
  f.store.commit_fails = Status::Unavailable("fsync failed");
  SECTION("after the business ran") {
    BarrierResult r = f.barrier.Call(Request(BranchOp::kConfirm), f.business);
    CHECK(r.seen == BarrierCase::kFirstCall);
    CHECK(r.reply.status.code() == StatusCode::kUnavailable);
    CHECK(f.store.committed.empty());
  }
  SECTION("of an empty rollback") {
    BarrierResult r = f.barrier.Call(Request(BranchOp::kCancel), f.business);
    CHECK(r.seen == BarrierCase::kEmptyRollback);
    CHECK(r.reply.status.code() == StatusCode::kUnavailable);
    CHECK(f.runs == 0);
  }
  f.store.commit_fails = Status::Ok();
  CHECK(f.barrier.Call(Request(BranchOp::kConfirm), f.business).reply.status.ok());
}

TEST_CASE("a store error is a 500 even when the store names it Conflict or Pending", "[barrier]") {
  Fixture f;
  f.store.begin_fails = GENERATE(Status::Conflict("odd"), Status::Pending("odd"));
  CHECK(f.barrier.Call(Request(BranchOp::kAction), f.business).reply.status.code() ==
        StatusCode::kUnavailable);
}

}  // namespace
}  // namespace settle::sdk
