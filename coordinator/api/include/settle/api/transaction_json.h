#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "settle/calls/host_gates.h"
#include "settle/drive/database_clock.h"
#include "settle/storage/store.h"

namespace settle::api {

// Response bodies of /query and /all (docs/protocol.md §3.9, §3.10). Times are RFC 3339
// strings or null; durations in options are seconds. Text that came from participants
// (last_error) is emitted as valid UTF-8 whatever bytes it holds.
// With `payloads`, each branch also shows its body: "data", and "data_encoding" "utf-8" (the
// text as it is) or "base64" (bytes that are not UTF-8, such as a protobuf message's).
//
// Every answer also has "next_position": "" when it is complete, else where the next page
// starts (docs/protocol.md §3.9, §3.10, §3.12). The forms with `max_bytes` (--max-answer-bytes)
// stop before the item that would take the answer past it, but always show one item, so that
// paging moves on: at most `max_bytes` or one item's size and the rest of the answer.
// With `gates`, a transaction a participant host's gate holds also has "waiting_on_host":
// {"host","circuit","reason","next_try_at"} (calls::HeldView; next_try_at null unless the
// circuit is open); the member is absent for the others.
//
// What a client put in a transaction's options for its participants is a secret of theirs
// (docs/protocol.md §3.9): with Secrets::kHidden (a read-only caller) each branch_headers
// value and a non-empty custom_data are "(hidden)"; the names, and every other option, show.
enum class Secrets { kShown, kHidden };
// /query from the branch at index `position` (an earlier page's next_position). With `audit`,
// the transaction also has "audit": those entries (audit_json.h), newest first.
std::string QueryResponseBody(const std::optional<storage::Transaction>& tx, bool payloads,
                              std::size_t position, std::size_t max_bytes,
                              const calls::HostGates* gates = nullptr,
                              Secrets secrets = Secrets::kShown,
                              const std::vector<storage::AuditEntry>* audit = nullptr);
std::string QueryResponseBody(const std::optional<storage::Transaction>& tx, bool payloads = false);
// prepareWorkflow's answer (docs/protocol.md §3.16), as DTM's Go client reads it into its
// DtmProgressesReply: {"transaction":{"gid","status","rollback_reason","result"},
// "progresses":[{"branch_id","op","status","bin_data"}],"dtm_result":"SUCCESS"}, the result and
// each step's data in base64 (protobuf's JSON of bytes), the steps in the store's order.
std::string ProgressResponseBody(const storage::Transaction& tx);
// /all: next_position is the page's own (the store's) unless the answer was cut, then the
// position that starts with the first transaction left out.
std::string ListResponseBody(const storage::ListPage& page, std::size_t max_bytes,
                             const calls::HostGates* gates = nullptr,
                             Secrets secrets = Secrets::kShown);
std::string ListResponseBody(const storage::ListPage& page);
// {"topics":[{"name","subscribers":[{"url","remark","create_time"}]}],"next_position":""}, by
// name, from the first name after `after` ("": from the first); next_position is the last name
// shown when more follow.
std::string TopicsResponseBody(const std::vector<storage::Topic>& topics, const std::string& after,
                               std::size_t max_bytes);
std::string TopicsResponseBody(const std::vector<storage::Topic>& topics);
// GET /api/admin/counts: {"unfinished":{"prepared":n,"submitted":n,"aborting":n},"stuck":n},
// every type together, zeros included.
// GET /api/admin/counts: the stored unfinished transactions by status and how many are stuck,
// and the transactions this settled saw finish since it started, by status.
struct FinishedSinceStart {
  std::uint64_t succeed = 0;
  std::uint64_t failed = 0;
};
std::string CountsResponseBody(const std::vector<storage::UnfinishedCount>& counts,
                               FinishedSinceStart finished);
// GET /api/admin/hosts: {"hosts":[{"host","circuit":"closed|open|probing","opens","waiting",
// "in_flight","held_at_cap","releasing","open_for_ms","next_probe_in_ms","oldest_waiting":[gid]}]},
// the gates of the participant hosts (HostGates::Hosts), by host.
std::string HostsResponseBody(const std::vector<calls::HostView>& hosts);

// GET /api/admin/clock: {"reference","measured","offset_ms","error_ms","following_ms",
// "claiming","max_clock_skew_ms"}.
std::string ClockResponseBody(const drive::ClockReading& clock);

}  // namespace settle::api
