#pragma once

#include <optional>
#include <string>
#include <vector>

#include "settle/core/status.h"
#include "settle/storage/records.h"
#include "settle/storage/write_batch.h"

namespace settle::storage {

// The holder a stored branch row names for its body (schema version 8 in SQLite, 7 in
// PostgreSQL; write_batch.h InsertBranch): none when `branch_id` is empty, the row holding its
// own body.
std::optional<BodyHolder> StoredBodyHolder(std::string branch_id, const std::string& op);

// Gives every row of a transaction that shares a body (`holders[i]` set) the bytes of the row it
// names, one allocation for them all. `holders` runs beside `branches`. A holder that is not
// among the rows, or that itself shares another's body, is a corrupt transaction (Internal).
Status ShareBodies(const std::string& gid, std::vector<BranchRecord>& branches,
                   const std::vector<std::optional<BodyHolder>>& holders);

}  // namespace settle::storage
