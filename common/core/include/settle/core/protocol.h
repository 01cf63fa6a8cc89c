#pragma once

#include <optional>
#include <string>
#include <string_view>

// The vocabulary of docs/protocol.md (§1.4 identifiers, §2 statuses and ops), shared by the
// coordinator and the participant SDK.
namespace settle {

enum class TransType { kTcc, kSaga };
enum class GlobalStatus { kPrepared, kSubmitted, kAborting, kSucceed, kFailed };
enum class BranchStatus { kPrepared, kSucceed, kFailed };
// kTry and kAction are the calls made before phase 2; the coordinator itself only calls
// confirm/cancel (TCC) and action/compensate (saga).
enum class BranchOp { kTry, kConfirm, kCancel, kAction, kCompensate };

std::string_view ToString(TransType t);
std::string_view ToString(GlobalStatus s);
std::string_view ToString(BranchStatus s);
std::string_view ToString(BranchOp op);

std::optional<TransType> ParseTransType(std::string_view s);
std::optional<GlobalStatus> ParseGlobalStatus(std::string_view s);
std::optional<BranchStatus> ParseBranchStatus(std::string_view s);
std::optional<BranchOp> ParseBranchOp(std::string_view s);

// Trans types DTM knows but Settle does not implement yet: requests naming them get a 400
// "unsupported trans_type" rather than "unknown".
bool IsKnownUnsupportedTransType(std::string_view s);

inline bool IsTerminal(GlobalStatus s) {
  return s == GlobalStatus::kSucceed || s == GlobalStatus::kFailed;
}

inline constexpr std::size_t kMaxGidLength = 128;
inline constexpr std::size_t kMaxBranchIdLength = 128;

// 1..128 characters of [A-Za-z0-9_.:-].
bool IsValidGid(std::string_view gid);
// Branch ids follow the same rule as gids: they travel in query strings and logs.
bool IsValidBranchId(std::string_view branch_id);

// "01", "02", ...: the branch id of saga step `index` (0-based) and of the n-th TCC branch an
// SDK registers.
std::string BranchIdForIndex(std::size_t index);

}  // namespace settle
