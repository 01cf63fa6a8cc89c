#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "settle/core/status.h"
#include "settle/sdk/barrier_store.h"
#include "settle/sdk/cas_outcome.h"

namespace settle::sdk {

// A value bound to a statement's parameter: never spliced into its text. NULL is not a value.
using CasValue = std::variant<std::int64_t, std::string>;

// UPDATE table SET column = value, ..., version_column = version_column + 1
//   WHERE id_column = id AND version_column = expected_version
// Identifiers (table and columns) must match [A-Za-z_][A-Za-z0-9_]*.
struct VersionedUpdate {
  std::string table;
  std::string id_column;
  CasValue id;
  std::string version_column;
  std::int64_t expected_version = 0;
  std::vector<std::pair<std::string, CasValue>> set;  // at least one column
};

// Runs `update` in the caller's local transaction `tx` (begun by a SqliteBarrierStore or a
// PostgresBarrierStore; the caller commits it). When the row matched, kApplied. Otherwise it
// reads the row: none is kNotFound; version expected_version + 1 with every column of `set`
// equal to its value is kAlreadyDone (the update this call repeats has happened); anything
// else is kConflict. Two transactions racing the same update meet on the row's lock (SQLite's
// write lock, PostgreSQL's row lock): the later one sees the earlier one's result.
// InvalidArgument names a bad identifier or an empty `set`; database trouble is its Status.
Result<CasOutcome> UpdateIfVersion(BarrierTransaction& tx, const VersionedUpdate& update);

// UPDATE table SET state_column = to WHERE id_column = id AND state_column IN (from...)
// for a state that only moves forward along `order` (its states, first to last).
struct StateMove {
  std::string table;
  std::string id_column;
  CasValue id;
  std::string state_column;
  std::vector<std::string> order;  // every state, in the order a row goes through them
  std::vector<std::string> from;   // the states `to` may be entered from: each before `to`
  std::string to;
};

// Moves the row's state in `tx` like UpdateIfVersion: kApplied from a state of `from`;
// kAlreadyDone when the row is at `to` or beyond it in `order` (a retry, or a later step came
// first); kConflict from any other state (one before `to` not in `from`, or one not in
// `order`); kNotFound without a row. InvalidArgument names a bad identifier, an empty `from`,
// or a state of `from` or `to` missing from `order` or a `from` not before `to`.
Result<CasOutcome> MoveState(BarrierTransaction& tx, const StateMove& move);

}  // namespace settle::sdk
