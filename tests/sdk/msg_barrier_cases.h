#pragma once

// The contract of a transactional message's barrier (settle/sdk/msg_barrier.h), written once
// and run against every barrier store (msg_barrier_test.cc: SQLite; postgres_msg_barrier_test.cc:
// PostgreSQL). Races are ordered by events, never by time: one transaction is held open at a
// known point, the other is started, the test waits until the database makes it wait, and
// then lets the first go on. Catch2 assertions run on the test's thread only.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "settle/sdk/barrier.h"
#include "settle/sdk/msg_barrier.h"
#include "wrapped_barrier_store.h"

namespace settle::sdk::test {

// A participant's database for the cases: a barrier on it and a business table `ledger(gid,
// amount)` that the message's local transaction writes to.
class MsgLedger {
 public:
  virtual ~MsgLedger() = default;
  virtual Barrier& barrier() = 0;
  // The business write, on the transaction's own connection (a WrappedBarrierStore's too).
  virtual Status Write(BarrierTransaction& tx, const std::string& gid, int amount) = 0;
  // Committed ledger rows of `gid`.
  virtual int Rows(const std::string& gid) = 0;
  // Before starting a transaction that will have to wait for a held one: a mark for
  // WaitUntilWaiting.
  virtual std::uint64_t WaitMark() = 0;
  // True once a transaction started after `mark` waits for another (polls with a deadline).
  virtual bool WaitUntilWaiting(std::uint64_t mark) = 0;

  // The reason stored in message `gid`'s barrier row; nullopt without a row.
  std::optional<std::string> Reason(const std::string& gid) {
    Result<std::unique_ptr<BarrierTransaction>> tx = barrier().store().Begin();
    REQUIRE(tx);
    Result<std::optional<std::string>> reason = (*tx)->ReasonOf(gid, "00", "msg", "01");
    REQUIRE(reason);
    return *reason;
  }
};

// The threads of a race, joined however the test ends; `release` lets a held one go first.
class RaceThreads {
 public:
  explicit RaceThreads(Signal& release) : release_(release) {}
  ~RaceThreads() {
    release_.Notify();
    for (std::thread& t : threads_) t.join();
  }
  template <typename F>
  void Start(F f) {
    threads_.emplace_back(std::move(f));
  }
  void JoinAll() {
    release_.Notify();
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }

 private:
  Signal& release_;
  std::vector<std::thread> threads_;
};

inline MsgLocalTransaction WriteLedger(MsgLedger& db, const std::string& gid,
                                       std::atomic<bool>* ran = nullptr) {
  return [&db, gid, ran](BarrierTransaction& tx) {
    if (ran != nullptr) *ran = true;
    return db.Write(tx, gid, 30);
  };
}

inline void CheckCommittedLocalTransactionAnswersSuccess(MsgLedger& db) {
  REQUIRE(RunMsgLocalTransaction(db.barrier(), "m-ok", WriteLedger(db, "m-ok")).ok());
  CHECK(db.Rows("m-ok") == 1);
  CHECK(db.Reason("m-ok") == "msg");
  BranchReply first = QueryPrepared(db.barrier(), "m-ok");
  INFO(first.status.ToString());
  CHECK(first.status.ok());
  // Asked again (the coordinator retries a lost answer): the same answer, nothing changed.
  CHECK(QueryPrepared(db.barrier(), "m-ok").status.ok());
  CHECK(db.Reason("m-ok") == "msg");
  CHECK(db.Rows("m-ok") == 1);
}

inline void CheckNoLocalTransactionAnswersFailureForever(MsgLedger& db) {
  BranchReply first = QueryPrepared(db.barrier(), "m-none");
  CHECK(first.status.code() == StatusCode::kConflict);
  CHECK_THAT(first.status.message(), Catch::Contains("m-none"));
  CHECK(db.Reason("m-none") == "rollback");

  // The local transaction, too late: it finds the row, its code never runs, nothing commits.
  std::atomic<bool> ran = false;
  Status late = RunMsgLocalTransaction(db.barrier(), "m-none", WriteLedger(db, "m-none", &ran));
  CHECK(late.code() == StatusCode::kConflict);
  CHECK_THAT(late.message(), Catch::Contains("back-check"));
  CHECK_FALSE(ran);
  CHECK(db.Rows("m-none") == 0);

  CHECK(QueryPrepared(db.barrier(), "m-none").status.code() == StatusCode::kConflict);
  CHECK(db.Reason("m-none") == "rollback");
}

inline void CheckFailedLocalTransactionLeavesNothing(MsgLedger& db) {
  SECTION("the business says no") {
    Status local =
        RunMsgLocalTransaction(db.barrier(), "m-no", [&](BarrierTransaction& tx) -> Status {
          if (Status s = db.Write(tx, "m-no", 30); !s.ok()) return s;
          return Status::Conflict("insufficient funds");
        });
    CHECK(local.code() == StatusCode::kConflict);
    CHECK(local.message() == "insufficient funds");
  }
  SECTION("the business throws") {
    Status local =
        RunMsgLocalTransaction(db.barrier(), "m-no", [&](BarrierTransaction& tx) -> Status {
          if (Status s = db.Write(tx, "m-no", 30); !s.ok()) return s;
          throw std::runtime_error("ledger exploded");
        });
    CHECK(local.code() == StatusCode::kInternal);
    CHECK_THAT(local.message(), Catch::Contains("ledger exploded"));
  }
  // Its writes and the message's row went together: the back-check fails the message.
  CHECK(db.Rows("m-no") == 0);
  CHECK(db.Reason("m-no") == std::nullopt);
  CHECK(QueryPrepared(db.barrier(), "m-no").status.code() == StatusCode::kConflict);
}

inline void CheckSecondLocalTransactionDoesNotRun(MsgLedger& db) {
  REQUIRE(RunMsgLocalTransaction(db.barrier(), "m-twice", WriteLedger(db, "m-twice")).ok());
  std::atomic<bool> ran = false;
  Status again = RunMsgLocalTransaction(db.barrier(), "m-twice", WriteLedger(db, "m-twice", &ran));
  CHECK(again.code() == StatusCode::kAlreadyExists);
  CHECK_FALSE(ran);
  CHECK(db.Rows("m-twice") == 1);
  CHECK(QueryPrepared(db.barrier(), "m-twice").status.ok());
}

inline void CheckInvalidGidIsRefused(MsgLedger& db) {
  std::atomic<bool> ran = false;
  Status local = RunMsgLocalTransaction(db.barrier(), "no spaces", WriteLedger(db, "x", &ran));
  CHECK(local.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(local.message(), Catch::StartsWith("gid: "));
  CHECK_FALSE(ran);
  BranchReply reply = QueryPrepared(db.barrier(), "");
  CHECK(reply.status.code() == StatusCode::kConflict);
  CHECK_THAT(reply.status.message(), Catch::StartsWith("gid: "));
}

// The local transaction holds the row (its writes done, not committed) when the back-check
// arrives: the back-check waits, and answers what the local transaction then does.
inline void CheckBackCheckWaitsForAnOpenLocalTransaction(MsgLedger& db, bool commits) {
  const std::string gid = commits ? "m-slow-commit" : "m-slow-rollback";
  Signal inside, release, answered;
  Status local;
  BranchReply reply;
  RaceThreads threads(release);
  threads.Start([&] {
    local = RunMsgLocalTransaction(db.barrier(), gid, [&](BarrierTransaction& tx) -> Status {
      Status wrote = db.Write(tx, gid, 30);
      inside.Notify();
      if (!release.Wait()) return Status::Internal("never released");
      if (!wrote.ok()) return wrote;
      return commits ? Status::Ok() : Status::Unavailable("the business gave up");
    });
  });
  REQUIRE(inside.Wait());
  const std::uint64_t mark = db.WaitMark();
  threads.Start([&] {
    reply = QueryPrepared(db.barrier(), gid);
    answered.Notify();
  });
  CHECK(db.WaitUntilWaiting(mark));
  CHECK_FALSE(answered.IsSet());
  threads.JoinAll();  // releases the local transaction

  INFO("local: " << local.ToString() << "; back-check: " << reply.status.ToString());
  if (commits) {
    CHECK(local.ok());
    CHECK(reply.status.ok());
    CHECK(db.Rows(gid) == 1);
    CHECK(db.Reason(gid) == "msg");
  } else {
    CHECK(local.code() == StatusCode::kUnavailable);
    CHECK(reply.status.code() == StatusCode::kConflict);
    CHECK(db.Rows(gid) == 0);
    CHECK(db.Reason(gid) == "rollback");
  }
}

// The back-check holds the row (inserted "rollback", not yet committed) when the local
// transaction arrives: the local transaction waits, then finds the row, does not run its code
// and commits nothing; the back-check answers FAILURE.
inline void CheckLocalTransactionAfterTheBackCheckNeverCommits(MsgLedger& db) {
  const std::string gid = "m-late";
  Signal at_commit, release, local_done;
  WrappedBarrierStore held(db.barrier().store(), [&](BarrierTransaction& real) {
    at_commit.Notify();
    release.Wait();
    return real.Commit();
  });
  Barrier held_barrier(held, db.barrier().clock());
  Status local;
  BranchReply reply;
  std::atomic<bool> ran = false;
  RaceThreads threads(release);
  threads.Start([&] { reply = QueryPrepared(held_barrier, gid); });
  REQUIRE(at_commit.Wait());
  const std::uint64_t mark = db.WaitMark();
  threads.Start([&] {
    local = RunMsgLocalTransaction(db.barrier(), gid, WriteLedger(db, gid, &ran));
    local_done.Notify();
  });
  CHECK(db.WaitUntilWaiting(mark));
  CHECK_FALSE(local_done.IsSet());
  threads.JoinAll();  // releases the back-check's commit

  INFO("local: " << local.ToString() << "; back-check: " << reply.status.ToString());
  CHECK(reply.status.code() == StatusCode::kConflict);
  CHECK(local.code() == StatusCode::kConflict);
  CHECK_FALSE(ran);
  CHECK(db.Rows(gid) == 0);
  CHECK(db.Reason(gid) == "rollback");
}

}  // namespace settle::sdk::test
