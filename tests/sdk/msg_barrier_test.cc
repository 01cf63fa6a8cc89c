// A transactional message's barrier (settle/sdk/msg_barrier.h) with the participant's data in
// SQLite: the cases of msg_barrier_cases.h.
#include <catch2/catch.hpp>

#include "msg_barrier_cases.h"
#include "sqlite_msg_ledger.h"

namespace settle::sdk {
namespace {

using namespace settle::sdk::test;

TEST_CASE("msg barrier: a committed local transaction is answered SUCCESS, every time",
          "[barrier][msg]") {
  SqliteLedger db;
  CheckCommittedLocalTransactionAnswersSuccess(db);
}

TEST_CASE("msg barrier: without a local transaction the answer is FAILURE and stays so",
          "[barrier][msg]") {
  SqliteLedger db;
  CheckNoLocalTransactionAnswersFailureForever(db);
}

TEST_CASE("msg barrier: a local transaction that fails rolls back its writes and its row",
          "[barrier][msg]") {
  SqliteLedger db;
  CheckFailedLocalTransactionLeavesNothing(db);
}

TEST_CASE("msg barrier: a second local transaction of one message does not run", "[barrier][msg]") {
  SqliteLedger db;
  CheckSecondLocalTransactionDoesNotRun(db);
}

TEST_CASE("msg barrier: an invalid gid is refused before the database is touched",
          "[barrier][msg]") {
  SqliteLedger db;
  CheckInvalidGidIsRefused(db);
}

TEST_CASE(
    "msg barrier: a back-check during an open local transaction waits and answers SUCCESS "
    "once it commits",
    "[barrier][msg][race]") {
  SqliteLedger db;
  CheckBackCheckWaitsForAnOpenLocalTransaction(db, /*commits=*/true);
}

TEST_CASE(
    "msg barrier: a back-check during an open local transaction waits and answers FAILURE "
    "once it rolls back",
    "[barrier][msg][race]") {
  SqliteLedger db;
  CheckBackCheckWaitsForAnOpenLocalTransaction(db, /*commits=*/false);
}

TEST_CASE("msg barrier: a local transaction arriving during the back-check never commits",
          "[barrier][msg][race]") {
  SqliteLedger db;
  CheckLocalTransactionAfterTheBackCheckNeverCommits(db);
}

}  // namespace
}  // namespace settle::sdk
