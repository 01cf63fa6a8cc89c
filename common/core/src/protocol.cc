#include "settle/core/protocol.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <utility>

#include "settle/core/ascii.h"

namespace settle {
namespace {

template <typename E, std::size_t N>
std::optional<E> Lookup(const std::array<std::pair<E, std::string_view>, N>& table,
                        std::string_view s) {
  for (const auto& [value, name] : table) {
    if (name == s) return value;
  }
  return std::nullopt;
}

template <typename E, std::size_t N>
std::string_view NameOf(const std::array<std::pair<E, std::string_view>, N>& table, E e) {
  for (const auto& [value, name] : table) {
    if (value == e) return name;
  }
  return "?";
}

constexpr std::array<std::pair<TransType, std::string_view>, kTransTypeCount> kTransTypes{{
    {TransType::kTcc, "tcc"},
    {TransType::kSaga, "saga"},
    {TransType::kMsg, "msg"},
    {TransType::kXa, "xa"},
    {TransType::kWorkflow, "workflow"},
}};
constexpr std::array<std::pair<GlobalStatus, std::string_view>, 5> kGlobalStatuses{{
    {GlobalStatus::kPrepared, "prepared"},
    {GlobalStatus::kSubmitted, "submitted"},
    {GlobalStatus::kAborting, "aborting"},
    {GlobalStatus::kSucceed, "succeed"},
    {GlobalStatus::kFailed, "failed"},
}};
constexpr std::array<std::pair<BranchStatus, std::string_view>, 3> kBranchStatuses{{
    {BranchStatus::kPrepared, "prepared"},
    {BranchStatus::kSucceed, "succeed"},
    {BranchStatus::kFailed, "failed"},
}};
constexpr std::array<std::pair<BranchOp, std::string_view>, kBranchOpCount> kBranchOps{{
    {BranchOp::kTry, "try"},
    {BranchOp::kConfirm, "confirm"},
    {BranchOp::kCancel, "cancel"},
    {BranchOp::kAction, "action"},
    {BranchOp::kCompensate, "compensate"},
    {BranchOp::kMsg, "msg"},
    {BranchOp::kCommit, "commit"},
    {BranchOp::kRollback, "rollback"},
    {BranchOp::kBusiness, "business"},
    {BranchOp::kResume, "resume"},
}};

bool IsIdentifier(std::string_view s, std::size_t max_length) {
  if (s.empty() || s.size() > max_length) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == ':' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::string_view ToString(TransType t) { return NameOf(kTransTypes, t); }
std::string_view ToString(GlobalStatus s) { return NameOf(kGlobalStatuses, s); }
std::string_view ToString(BranchStatus s) { return NameOf(kBranchStatuses, s); }
std::string_view ToString(BranchOp op) { return NameOf(kBranchOps, op); }

std::optional<TransType> ParseTransType(std::string_view s) { return Lookup(kTransTypes, s); }
std::optional<GlobalStatus> ParseGlobalStatus(std::string_view s) {
  return Lookup(kGlobalStatuses, s);
}
std::optional<BranchStatus> ParseBranchStatus(std::string_view s) {
  return Lookup(kBranchStatuses, s);
}
std::optional<BranchOp> ParseBranchOp(std::string_view s) { return Lookup(kBranchOps, s); }

bool IsValidGid(std::string_view gid) { return IsIdentifier(gid, kMaxGidLength); }
bool IsValidBranchId(std::string_view branch_id) {
  return IsIdentifier(branch_id, kMaxBranchIdLength);
}

bool IsValidTopic(std::string_view topic) { return IsIdentifier(topic, kMaxGidLength); }

Status CheckWorkflowName(std::string_view name) {
  if (name.empty()) return Status::InvalidArgument("required: the workflow's name");
  const bool printable =
      std::all_of(name.begin(), name.end(), [](char c) { return c >= 0x20 && c <= 0x7e; });
  if (name.size() > kMaxWorkflowNameLength || !printable) {
    return Status::InvalidArgument("must be 1 to " + std::to_string(kMaxWorkflowNameLength) +
                                   " printable ASCII characters");
  }
  if (IsBranchOpName(name)) {
    std::string ops;
    for (std::size_t i = 0; i < kBranchOps.size(); ++i) {
      if (i > 0) ops += i + 1 < kBranchOps.size() ? ", " : " or ";
      ops += kBranchOps[i].second;
    }
    return Status::InvalidArgument("must not be a branch op (" + ops +
                                   ", in any case): the resume call carries the workflow's name "
                                   "as its op");
  }
  return Status::Ok();
}

bool IsBranchOpName(std::string_view name) {
  return ParseBranchOp(AsciiLowercase(name)).has_value();
}

std::string BranchIdForIndex(std::size_t index) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%02zu", index + 1);
  return buf;
}

}  // namespace settle
