#include "settle/drive/quota_ledger.h"

#include <algorithm>
#include <set>

namespace settle::drive {

QuotaLedger::QuotaLedger(QuotaLimits limits, const Clock& clock, Duration refresh_interval)
    : limits_(limits), clock_(clock), refresh_interval_(refresh_interval) {}

void QuotaLedger::Reset(const std::vector<storage::CreatorUsage>& usage) {
  std::lock_guard lock(mutex_);
  for (auto& [creator, held] : held_) {
    held.unfinished = 0;
    held.bytes = 0;
  }
  for (const storage::CreatorUsage& u : usage) {
    Held& held = held_[u.creator];
    held.unfinished = u.unfinished;
    held.bytes = u.bytes;
  }
}

std::optional<QuotaKind> QuotaLedger::Exceeds(const Held& held, std::size_t count,
                                              std::size_t bytes) const {
  if (limits_.unfinished > 0 && count > 0 &&
      held.unfinished + held.pending_unfinished + count > limits_.unfinished) {
    return QuotaKind::kUnfinished;
  }
  if (limits_.bytes > 0 && held.bytes + held.pending_bytes + bytes > limits_.bytes) {
    return QuotaKind::kBytes;
  }
  return std::nullopt;
}

QuotaLedger::Admission QuotaLedger::Admit(const std::string& creator, std::size_t count,
                                          std::size_t bytes) {
  std::lock_guard lock(mutex_);
  Held& held = held_[creator];
  if (const std::optional<QuotaKind> kind = Exceeds(held, count, bytes)) {
    const bool read_lately =
        held.refreshed && clock_.Monotonic() - *held.refreshed < refresh_interval_;
    if (!read_lately) return {Admission::Outcome::kReadStore, *kind};
    return {Admission::Outcome::kRefused, *kind};
  }
  held.pending_unfinished += count;
  held.pending_bytes += bytes;
  return {Admission::Outcome::kAdmitted, QuotaKind::kUnfinished};
}

void QuotaLedger::Refresh(const std::string& creator,
                          const std::optional<storage::CreatorUsage>& stored) {
  std::lock_guard lock(mutex_);
  Held& held = held_[creator];
  held.unfinished = stored ? stored->unfinished : 0;
  held.bytes = stored ? stored->bytes : 0;
  held.refreshed = clock_.Monotonic();
}

void QuotaLedger::Settle(const std::string& creator, std::size_t count, std::size_t bytes,
                         bool stored) {
  std::lock_guard lock(mutex_);
  Held& held = held_[creator];
  held.pending_unfinished -= std::min(count, held.pending_unfinished);
  held.pending_bytes -= std::min(bytes, held.pending_bytes);
  if (stored) {
    held.unfinished += count;
    held.bytes += bytes;
  }
}

storage::CreatorUsage QuotaLedger::UsageOf(const std::string& creator) const {
  std::lock_guard lock(mutex_);
  const auto found = held_.find(creator);
  if (found == held_.end()) return {creator, 0, 0};
  const Held& held = found->second;
  return {creator, held.unfinished + held.pending_unfinished, held.bytes + held.pending_bytes};
}

std::size_t QuotaLedger::BytesOf(const storage::GlobalRecord* global,
                                 const std::vector<storage::BranchRecord>& branches) {
  std::size_t bytes = 0;
  // A body the rows share is stored once (storage::InsertBranch), and counted so.
  std::set<const void*> bodies;
  for (const storage::BranchRecord& b : branches) {
    bytes += b.url.size();
    const void* body = b.data.identity();
    if (body == nullptr || bodies.insert(body).second) bytes += b.data.size();
  }
  if (global != nullptr) {
    // The options as stored are these and a few dozen bytes of their encoding.
    const storage::TransOptions& o = global->options;
    for (const auto& [name, value] : o.branch_headers) bytes += name.size() + value.size();
    bytes += o.custom_data.size() + o.request_fingerprint.size();
    // Its span (W3C Trace Context), stored with it: the tracestate may hold 512 bytes.
    const TraceContext& t = global->trace;
    bytes += t.trace_id.size() + t.span_id.size() + t.parent_id.size() + t.state.size();
  }
  return bytes;
}

Status QuotaRefusal(QuotaKind kind, const QuotaLimits& limits) {
  if (kind == QuotaKind::kUnfinished) {
    return Status::ResourceExhausted("quota: this caller holds its --quota-unfinished of " +
                                     std::to_string(limits.unfinished) +
                                     " unfinished transactions; finish some first");
  }
  return Status::ResourceExhausted(
      "quota: this caller's unfinished transactions would hold more "
      "than its --quota-unfinished-bytes of " +
      std::to_string(limits.bytes) + " bytes; finish some first");
}

}  // namespace settle::drive
