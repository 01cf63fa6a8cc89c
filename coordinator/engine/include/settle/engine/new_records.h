#pragma once

#include <string>

#include "settle/core/clock.h"
#include "settle/engine/requests.h"
#include "settle/storage/records.h"

// The rows a new transaction or branch starts with, as every type's home builds them.
namespace settle::engine {

// The options stored with a new transaction: what the client sent, else the defaults. A saga
// has no deadline unless asked; the others wait for their client (TCC, XA) or for its local
// transaction (a prepared message) only prepared_timeout_to_fail.
storage::TransOptions ResolveOptions(const RequestOptions& requested, TransType type,
                                     const TransactionDefaults& defaults);

// A new global row in `status` with resolved options, created and due `now`.
storage::GlobalRecord NewGlobal(const std::string& gid, TransType type, GlobalStatus status,
                                const RequestOptions& options, const TransactionDefaults& defaults,
                                TimePoint now);

// A new branch row, prepared and due `now`. Rows given copies of one `data` share its bytes, in
// memory and in the store (storage::InsertBranch).
storage::BranchRecord NewBranchRow(const std::string& gid, std::string branch_id, BranchOp op,
                                   int seq, std::string url, SharedBytes data, TimePoint now);

}  // namespace settle::engine
