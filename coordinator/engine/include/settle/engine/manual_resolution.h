#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "settle/core/clock.h"
#include "settle/core/status.h"
#include "settle/storage/records.h"

namespace settle::engine {

// What an operator says a pending call did, when the participant's team applied it by hand
// (docs/operations.md, "Resolving a branch by hand"): the transaction then goes on as if the
// participant had answered so.
enum class ResolvedAs { kSucceed, kFailed };

std::optional<ResolvedAs> ParseResolvedAs(std::string_view text);  // "succeed", "failed"
std::string_view ToString(ResolvedAs as);

// Whether an operator may resolve row `row` of `tx` as `as` at `now`: OK, or why not.
//   - Conflict when the transaction is finished or the row is not pending. Pending: a call the
//     coordinator is making now (Decide would call it) or retrying (it was called and did not
//     succeed). A row it has not reached (a later saga step, a compensate while the saga goes
//     forward, a TCC's confirm before its submit) is not: marking it would skip a call the
//     transaction may still need;
//   - InvalidArgument naming "op" for a call that is not the coordinator's to make (a TCC's
//     Try, a message's back-check), and naming "outcome" for `failed` on anything but a saga's
//     action: a confirm, cancel, compensate, delivery, commit or rollback that fails is
//     retried by design, so it can only be marked done.
Status CheckResolution(const storage::Transaction& tx, std::size_t row, ResolvedAs as,
                       TimePoint now);

// The row as the participant's answer would have left it: succeed or failed, updated `now`;
// its counts and last error stay as they were (the audit trail says who resolved it).
void ApplyResolution(storage::BranchRecord& row, ResolvedAs as, TimePoint now);

}  // namespace settle::engine
