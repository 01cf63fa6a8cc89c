#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "settle/core/protocol.h"
#include "settle/storage/records.h"

namespace settle::testing {

// The moment engine and driver tests start at, and a second.
inline const TimePoint kT0 = FromUnixMillis(1'800'000'000'000);
inline constexpr Duration kSecond{1000};

// Builds stored-looking transactions for engine and driver tests: every branch row prepared,
// due at `created`, with URLs http://p/<op><branch_id>.
class TransactionBuilder {
 public:
  TransactionBuilder(TransType type, GlobalStatus status, TimePoint created) {
    tx_.global.gid = "g1";
    tx_.global.trans_type = type;
    tx_.global.status = status;
    tx_.global.create_time = created;
    tx_.global.update_time = created;
    tx_.global.next_cron_time = created;
    tx_.global.options.request_timeout = Duration(3000);
    tx_.global.options.retry_interval = Duration(1000);
    created_ = created;
  }

  static TransactionBuilder Tcc(GlobalStatus status, TimePoint created) {
    return TransactionBuilder(TransType::kTcc, status, created);
  }
  static TransactionBuilder Saga(GlobalStatus status, TimePoint created) {
    return TransactionBuilder(TransType::kSaga, status, created);
  }

  static TransactionBuilder Msg(GlobalStatus status, TimePoint created) {
    return TransactionBuilder(TransType::kMsg, status, created);
  }
  static TransactionBuilder Xa(GlobalStatus status, TimePoint created) {
    return TransactionBuilder(TransType::kXa, status, created);
  }

  TransactionBuilder& Gid(std::string gid) {
    tx_.global.gid = gid;
    for (auto& b : tx_.branches) b.gid = gid;
    return *this;
  }
  TransactionBuilder& TimeoutToFail(Duration d) {
    tx_.global.options.timeout_to_fail = d;
    return *this;
  }
  TransactionBuilder& RetryLimit(int n) {
    tx_.global.options.retry_limit = n;
    return *this;
  }
  TransactionBuilder& Concurrent(std::map<int, std::vector<int>> orders = {}) {
    tx_.global.options.concurrent = true;
    tx_.global.options.orders = std::move(orders);
    return *this;
  }
  // A TCC branch: a cancel row and a confirm row.
  TransactionBuilder& TccBranch(const std::string& branch_id) {
    Row(branch_id, BranchOp::kCancel, 0);
    Row(branch_id, BranchOp::kConfirm, 0);
    return *this;
  }
  // `count` saga steps: an action and a compensate row each.
  TransactionBuilder& SagaSteps(int count) {
    for (int i = 0; i < count; ++i) {
      Row(BranchIdForIndex(static_cast<std::size_t>(i)), BranchOp::kAction, i);
      Row(BranchIdForIndex(static_cast<std::size_t>(i)), BranchOp::kCompensate, i);
    }
    return *this;
  }

  // An XA branch: a rollback row and a commit row, at one URL.
  TransactionBuilder& XaBranch(const std::string& branch_id) {
    Row(branch_id, BranchOp::kRollback, 0);
    Row(branch_id, BranchOp::kCommit, 0);
    return *this;
  }
  // A message's back-check row (branch 00, op msg), as a prepare stores it.
  TransactionBuilder& BackCheck() {
    Row("00", BranchOp::kMsg, -1);
    return *this;
  }
  // Message step `index` delivered to `receivers` rows: branch "01" for one, "01-01",
  // "01-02", ... for a topic's subscribers.
  TransactionBuilder& MsgStep(int index, int receivers = 1) {
    const std::string id = BranchIdForIndex(static_cast<std::size_t>(index));
    if (receivers == 1) {
      Row(id, BranchOp::kAction, index);
      return *this;
    }
    for (int r = 0; r < receivers; ++r) {
      Row(id + "-" + BranchIdForIndex(static_cast<std::size_t>(r)), BranchOp::kAction, index);
    }
    return *this;
  }
  TransactionBuilder& Delay(Duration d) {
    tx_.global.options.delay = d;
    return *this;
  }

  storage::Transaction Build() const { return tx_; }

 private:
  void Row(const std::string& branch_id, BranchOp op, int seq) {
    storage::BranchRecord b;
    b.gid = tx_.global.gid;
    b.branch_id = branch_id;
    b.op = op;
    b.seq = seq;
    b.url = "http://p/" + std::string(ToString(op)) + branch_id;
    b.data = R"({"amount":30})";
    b.create_time = created_;
    b.update_time = created_;
    b.next_retry_at = created_;
    tx_.branches.push_back(b);
  }

  storage::Transaction tx_;
  TimePoint created_;
};

// The row of (branch_id, op) in tx; the test fails loudly if it is missing.
inline storage::BranchRecord& RowOf(storage::Transaction& tx, const std::string& branch_id,
                                    BranchOp op) {
  for (auto& b : tx.branches) {
    if (b.branch_id == branch_id && b.op == op) return b;
  }
  throw std::logic_error("no row " + branch_id + " " + std::string(ToString(op)));
}

}  // namespace settle::testing
