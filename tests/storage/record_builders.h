#pragma once

#include <chrono>
#include <string>
#include <utility>

#include "settle/storage/records.h"
#include "settle/storage/write_batch.h"

// Small builders for the storage tests: records with every field set to something plausible,
// which a test then changes where it matters.
namespace settle::storage::testing {

using namespace std::chrono_literals;

inline TimePoint T0() { return FromUnixMillis(1'800'000'000'000); }

inline GlobalRecord MakeGlobal(std::string gid, TransType type = TransType::kTcc,
                               GlobalStatus status = GlobalStatus::kPrepared) {
  GlobalRecord g;
  g.gid = std::move(gid);
  g.trans_type = type;
  g.status = status;
  g.options.timeout_to_fail = 35s;
  g.options.request_timeout = 3s;
  g.options.retry_interval = 1s;
  g.create_time = T0();
  g.update_time = T0();
  g.next_cron_time = T0() + 35s;
  return g;
}

inline BranchRecord MakeBranch(std::string gid, std::string branch_id,
                               BranchOp op = BranchOp::kConfirm, int seq = 0) {
  BranchRecord b;
  b.gid = std::move(gid);
  b.url = "http://p/" + branch_id + "/" + std::string(ToString(op));
  b.branch_id = std::move(branch_id);
  b.op = op;
  b.seq = seq;
  b.data = R"({"amount":30})";
  b.create_time = T0();
  b.update_time = T0();
  b.next_retry_at = T0();
  return b;
}

inline Subscriber MakeSubscriber(std::string url, std::string remark = "",
                                 TimePoint create_time = T0()) {
  return Subscriber{std::move(url), std::move(remark), create_time};
}

// A running bulk job created (and last updated) at `created_at`, with 3 transactions left
// to walk below id 100.
inline BulkJob MakeJob(std::string id, TimePoint created_at = T0()) {
  BulkJob j;
  j.id = std::move(id);
  j.created_at = created_at;
  j.updated_at = created_at;
  j.actor = "on-call";
  j.action = "retry_now";
  j.filter = R"({"status":"prepared"})";
  j.parameters = "{}";
  j.reason = "participant fixed by hand";
  j.cursor = 100;
  j.matched = 3;
  return j;
}

// A batch of the given operations, in order.
template <typename... Ops>
WriteBatch Batch(Ops... ops) {
  WriteBatch batch;
  (batch.Add(std::move(ops)), ...);
  return batch;
}

}  // namespace settle::storage::testing
