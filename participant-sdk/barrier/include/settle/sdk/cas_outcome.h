#pragma once

#include <string_view>

namespace settle::sdk {

// What a compare-and-set update (settle/sdk/version_check.h) found.
enum class CasOutcome {
  kApplied,      // the row matched and this call changed it
  kAlreadyDone,  // the row already holds what this call would write: a retry of a done update
  kConflict,     // someone else changed the row: the caller's view of it is stale
  kNotFound,     // no row has this id
};

std::string_view ToString(CasOutcome outcome);

// The HTTP status a handler answers for `outcome`: 200 for applied and for already done (a
// retry gets the same answer as the first call: it did no harm), 409 for a conflict, 404 for
// an unknown id.
int HttpStatusOf(CasOutcome outcome);

}  // namespace settle::sdk
