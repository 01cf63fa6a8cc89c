#include "pg_group_applier.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <utility>

#include "failed_attempts_codec.h"
#include "options_codec.h"
#include "trace_codec.h"

namespace settle::storage {
namespace {

using nlohmann::json;

constexpr std::string_view kApplyGroup = "SELECT settle_apply_group($1::jsonb)";
constexpr int kDeadlockRetries = 3;

std::string Hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(bytes.size() * 2);
  for (char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    hex.push_back(kDigits[b >> 4]);
    hex.push_back(kDigits[b & 0xf]);
  }
  return hex;
}

json Millis(const std::optional<TimePoint>& t) {
  if (!t) return nullptr;
  return ToUnixMillis(*t);
}

// A text column's value: PostgreSQL text holds no NUL byte (invalid UTF-8 is caught when the
// batch is serialized).
Status CheckText(std::string_view field, const std::string& value) {
  if (value.find('\0') == std::string::npos) return Status::Ok();
  return Status::InvalidArgument(std::string(field) + ": contains a NUL byte");
}

// The fields of a global row that UpdateGlobal writes, as 'igt' and 'ug' carry them.
json GlobalState(const GlobalRecord& g) {
  return json{{"gid", g.gid},
              {"st", ToString(g.status)},
              {"ut", ToUnixMillis(g.update_time)},
              {"ft", Millis(g.finish_time)},
              {"rt", Millis(g.rollback_time)},
              {"rr", Hex(g.rollback_reason)},
              {"nc", Millis(g.next_cron_time)},
              {"sk", g.stuck ? 1 : 0},
              {"fs", g.force_stopped ? 1 : 0}};
}

// The key and the fields of a branch row that UpdateBranch writes, as 'ib' and 'ub' carry them.
json BranchState(const BranchRecord& b) {
  return json{{"gid", b.gid},
              {"bid", b.branch_id},
              {"op", ToString(b.op)},
              {"st", ToString(b.status)},
              {"ut", ToUnixMillis(b.update_time)},
              {"at", b.attempts},
              {"fl", b.failures},
              {"le", Hex(b.last_error)},
              {"nr", ToUnixMillis(b.next_retry_at)},
              {"fa", Hex(EncodeFailedAttempts(b.failed_attempts))}};
}

Result<json> Encode(const InsertGlobal& op) {
  const GlobalRecord& g = op.record;
  if (Status s = CheckText("gid", g.gid); !s.ok()) return s;
  Result<std::string> options = EncodeOptions(g.options);
  if (!options) {
    return Status(options.status().code(), "gid " + g.gid + ": " + options.status().message());
  }
  if (Status s = CheckText("creator", g.creator); !s.ok()) return s;
  TraceColumns trace = EncodeTrace(g.trace);  // printable ASCII: no check
  json encoded = GlobalState(g);
  // Schema version 12: the row in one INSERT, its creator and span included ('ig' wrote the
  // creator with a second statement).
  encoded["t"] = "igt";
  encoded["tt"] = ToString(g.trans_type);
  encoded["opt"] = Hex(*options);
  encoded["ct"] = ToUnixMillis(g.create_time);
  if (!g.creator.empty()) encoded["cr"] = g.creator;
  if (!trace.trace.empty()) {
    encoded["tr"] = std::move(trace.trace);
    encoded["tp"] = std::move(trace.parent);
    encoded["ts"] = std::move(trace.state);
  }
  return encoded;
}

Result<json> Encode(const InsertBranch& op) {
  const BranchRecord& b = op.record;
  for (const auto& [field, value] :
       {std::pair{"gid", &b.gid}, {"branch_id", &b.branch_id}, {"url", &b.url}}) {
    if (Status s = CheckText(field, *value); !s.ok()) return s;
  }
  json encoded = BranchState(b);
  encoded["t"] = "ib";
  encoded["seq"] = b.seq;
  encoded["url"] = b.url;
  encoded["ct"] = ToUnixMillis(b.create_time);
  if (op.body_of) {  // schema version 7: stored once, with the row named
    encoded["data"] = "";
    encoded["bo"] = op.body_of->branch_id;
    encoded["bop"] = ToString(op.body_of->op);
    encoded["bl"] = b.data.size();
  } else {
    encoded["data"] = Hex(b.data.view());
  }
  return encoded;
}

Result<json> Encode(const ExpectGlobalStatus& op) {
  if (Status s = CheckText("gid", op.gid); !s.ok()) return s;
  json allowed = json::array();
  std::string expected;
  for (GlobalStatus status : op.allowed) {
    allowed.push_back(ToString(status));
    if (!expected.empty()) expected += " or ";
    expected += ToString(status);
  }
  return json{{"t", "eg"},
              {"gid", op.gid},
              {"allowed", std::move(allowed)},
              {"expected", expected.empty() ? "no status" : expected}};
}

Result<json> Encode(const ExpectGlobalType& op) {
  if (Status s = CheckText("gid", op.gid); !s.ok()) return s;
  return json{{"t", "et"}, {"gid", op.gid}, {"tt", ToString(op.trans_type)}};
}

Result<json> Encode(const ExpectBranchCount& op) {
  if (Status s = CheckText("gid", op.gid); !s.ok()) return s;
  return json{{"t", "ec"}, {"gid", op.gid}, {"n", op.count}};
}

Result<json> Encode(const LimitBranchRows& op) {
  if (Status s = CheckText("gid", op.gid); !s.ok()) return s;
  return json{{"t", "lr"}, {"gid", op.gid}, {"max", op.max_rows}};
}

Result<json> Encode(const UpdateGlobal& op) {
  const GlobalRecord& g = op.record;
  if (Status s = CheckText("gid", g.gid); !s.ok()) return s;
  json encoded = GlobalState(g);
  encoded["t"] = "ug";
  encoded["expected"] = ToString(op.expected);
  // Schema version 13: with a workflow's result, 'ugr' ('ug', then the result).
  if (!g.result.empty()) {
    encoded["t"] = "ugr";
    encoded["res"] = Hex(g.result);
  }
  return encoded;
}

Result<json> Encode(const UpdateBranch& op) {
  const BranchRecord& b = op.record;
  for (const auto& [field, value] : {std::pair{"gid", &b.gid}, {"branch_id", &b.branch_id}}) {
    if (Status s = CheckText(field, *value); !s.ok()) return s;
  }
  json encoded = BranchState(b);
  encoded["t"] = "ub";
  encoded["expected"] = ToString(op.expected);
  // Schema version 14: as read ('ubr': the row's url and next_retry_at compared, then 'ub').
  if (op.read_next_retry_at) {
    if (Status s = CheckText("url", b.url); !s.ok()) return s;
    encoded["t"] = "ubr";
    encoded["url"] = b.url;
    encoded["rnr"] = ToUnixMillis(*op.read_next_retry_at);
  }
  return encoded;
}

Result<json> Encode(const RetryNow& op) {
  if (Status s = CheckText("gid", op.gid); !s.ok()) return s;
  return json{{"t", "rn"}, {"gid", op.gid}, {"at", ToUnixMillis(op.at)}};
}

// The audit trail (schema version 8): texts as hex, since they hold whatever bytes were sent.
Result<json> Encode(const RecordAudit& op) {
  const AuditEntry& e = op.entry;
  if (Status s = CheckText("gid", e.gid); !s.ok()) return s;
  if (Status s = CheckText("action", e.action); !s.ok()) return s;
  return json{
      {"t", "au"},    {"at", ToUnixMillis(e.at)}, {"ac", Hex(e.actor)},      {"act", e.action},
      {"gid", e.gid}, {"tg", Hex(e.target)},      {"pm", Hex(e.parameters)}, {"rs", Hex(e.reason)}};
}

Result<json> Encode(const DeleteAuditBefore& op) {
  return json{{"t", "ad"}, {"cutoff", ToUnixMillis(op.cutoff)}};
}

// Pause and resume (schema version 9): settle_op_pa and settle_op_re.
Result<json> Encode(const PauseGlobal& op) {
  if (Status s = CheckText("gid", op.gid); !s.ok()) return s;
  return json{{"t", "pa"},
              {"gid", op.gid},
              {"at", ToUnixMillis(op.pause.at)},
              {"by", Hex(op.pause.by)},
              {"rs", Hex(op.pause.reason)},
              {"keep", op.keep_existing}};
}

// An operator's redirect (schema version 10): settle_op_rd.
Result<json> Encode(const RedirectBranch& op) {
  for (const auto& [field, value] :
       {std::pair{"gid", &op.gid}, {"branch_id", &op.branch_id}, {"url", &op.url}}) {
    if (Status s = CheckText(field, *value); !s.ok()) return s;
  }
  return json{{"t", "rd"},           {"gid", op.gid},
              {"bid", op.branch_id}, {"op", ToString(op.op)},
              {"url", op.url},       {"at", ToUnixMillis(op.at)}};
}

// Bulk jobs (schema version 11): settle_op_ij, _aj, _cj and _dj; texts as hex, as the audit
// trail's.
Result<json> Encode(const InsertJob& op) {
  const BulkJob& j = op.job;
  if (Status s = CheckText("id", j.id); !s.ok()) return s;
  if (Status s = CheckText("action", j.action); !s.ok()) return s;
  return json{{"t", "ij"},
              {"id", j.id},
              {"ca", ToUnixMillis(j.created_at)},
              {"ua", ToUnixMillis(j.updated_at)},
              {"ac", Hex(j.actor)},
              {"act", j.action},
              {"fl", Hex(j.filter)},
              {"pm", Hex(j.parameters)},
              {"rs", Hex(j.reason)},
              {"cur", j.cursor},
              {"mt", j.matched},
              {"acd", j.acted},
              {"sk", j.skipped},
              {"ls", Hex(j.last_skip)},
              {"st", ToString(j.state)}};
}

Result<json> Encode(const AdvanceJob& op) {
  if (Status s = CheckText("id", op.id); !s.ok()) return s;
  return json{{"t", "aj"},
              {"id", op.id},
              {"exp", op.expected_cursor},
              {"cur", op.cursor},
              {"acd", op.acted},
              {"sk", op.skipped},
              {"ls", Hex(op.last_skip)},
              {"st", ToString(op.state)},
              {"at", ToUnixMillis(op.at)}};
}

Result<json> Encode(const CancelJob& op) {
  if (Status s = CheckText("id", op.id); !s.ok()) return s;
  return json{{"t", "cj"}, {"id", op.id}, {"at", ToUnixMillis(op.at)}};
}

Result<json> Encode(const DeleteJobsBefore& op) {
  return json{{"t", "dj"}, {"cutoff", ToUnixMillis(op.cutoff)}};
}

Result<json> Encode(const ResumeGlobal& op) {
  if (Status s = CheckText("gid", op.gid); !s.ok()) return s;
  return json{{"t", "re"}, {"gid", op.gid}, {"at", ToUnixMillis(op.at)}};
}

Result<json> Encode(const DeleteFinished& op) {
  if (Status s = CheckText("gid", op.gid); !s.ok()) return s;
  return json{{"t", "df"}, {"gid", op.gid}};
}

// Topic operations go to settle_apply_topic_op (schema version 4).
Result<json> Encode(const Subscribe& op) {
  const Subscriber& sub = op.subscriber;
  for (const auto& [field, value] : {std::pair{"topic", &op.topic}, {"url", &sub.url}}) {
    if (Status s = CheckText(field, *value); !s.ok()) return s;
  }
  if (Status s = CheckText("creator", sub.creator); !s.ok()) return s;
  json encoded = json{{"t", "su"},
                      {"topic", op.topic},
                      {"url", sub.url},
                      {"rm", Hex(sub.remark)},
                      {"ct", ToUnixMillis(sub.create_time)}};
  if (!sub.creator.empty()) encoded["cr"] = sub.creator;  // schema version 6
  return encoded;
}

// Ownership checks go to settle_expect_creator (schema version 6).
Result<json> Encode(const ExpectCreator& op) {
  for (const auto& [field, value] : {std::pair{"gid", &op.gid}, {"creator", &op.creator}}) {
    if (Status s = CheckText(field, *value); !s.ok()) return s;
  }
  return json{{"t", "xc"}, {"gid", op.gid}, {"cr", op.creator}};
}

Result<json> Encode(const ExpectTopicCreator& op) {
  for (const auto& [field, value] : {std::pair{"topic", &op.topic}, {"creator", &op.creator}}) {
    if (Status s = CheckText(field, *value); !s.ok()) return s;
  }
  return json{{"t", "xt"}, {"topic", op.topic}, {"cr", op.creator}};
}

Result<json> Encode(const Unsubscribe& op) {
  for (const auto& [field, value] : {std::pair{"topic", &op.topic}, {"url", &op.url}}) {
    if (Status s = CheckText(field, *value); !s.ok()) return s;
  }
  return json{{"t", "us"}, {"topic", op.topic}, {"url", op.url}};
}

Result<json> Encode(const DeleteTopic& op) {
  if (Status s = CheckText("topic", op.topic); !s.ok()) return s;
  return json{{"t", "dt"}, {"topic", op.topic}};
}

// A refusal as settle_apply_group reports it: [sqlstate, message].
Status Refusal(const json& refusal) {
  const std::string sqlstate = refusal.at(0).get<std::string>();
  std::string message = refusal.at(1).get<std::string>();
  if (sqlstate == "SE404") return Status::NotFound(std::move(message));
  if (sqlstate == "SE409") return Status::Conflict(std::move(message));
  if (sqlstate == "SE410") return Status::AlreadyExists(std::move(message));
  // SE400 is raised by the branch-row limit ('lr') alone: its own refusal (write_batch.h).
  if (sqlstate == "SE400") return Status::ResourceExhausted(std::move(message));
  return Status::InvalidArgument("postgresql: " + message);  // a data exception (class 22)
}

GroupResult FailGroup(std::size_t size, const Status& cause) {
  GroupResult result;
  result.statuses.assign(size, Status::Unavailable(cause.message()));
  return result;
}

}  // namespace

Result<std::string> PgGroupApplier::EncodeBatch(const WriteBatch& batch) {
  json ops = json::array();
  for (const WriteOp& op : batch.ops()) {
    Result<json> encoded = std::visit([](const auto& o) { return Encode(o); }, op);
    if (!encoded) return encoded.status();
    ops.push_back(std::move(encoded).value());
  }
  try {
    return ops.dump();
  } catch (const json::type_error& e) {
    // dump() refuses strings that are not valid UTF-8, which PostgreSQL text cannot hold.
    return Status::InvalidArgument(
        std::string("a gid, branch id, topic or url is not valid UTF-8 (") + e.what() + ")");
  }
}

GroupResult PgGroupApplier::ApplyGroup(std::span<const WriteBatch* const> batches) {
  // A statement lost with its connection may have left nothing open, but be sure.
  if (connection_.InTransaction()) connection_.Run("ROLLBACK").IgnoreError();
  std::vector<Status> refused(batches.size());
  std::string group = "[";
  for (std::size_t i = 0; i < batches.size(); ++i) {
    Result<std::string> encoded = EncodeBatch(*batches[i]);
    if (!encoded) refused[i] = encoded.status();
    if (i > 0) group += ',';
    group += encoded ? *encoded : "[]";  // a batch refused here applies nothing
  }
  group += ']';

  // A group that locks global rows in another order than a concurrent one (two instances, each
  // registering a branch of one transaction and deciding another) may be chosen by the server
  // to break the deadlock: nothing of it took effect, and it runs again.
  std::optional<Result<db::PgResult>> applied;
  for (int attempt = 0; attempt <= kDeadlockRetries; ++attempt) {
    applied.emplace(connection_.Query(kApplyGroup, db::PgParams().Text(group)));
    if (*applied || !connection_.LastFailureRetryable()) break;
  }
  if (!*applied) return FailGroup(batches.size(), applied->status());
  GroupResult result;
  try {
    const json outcomes = json::parse((*applied)->Text(0, 0));
    if (!outcomes.is_array() || outcomes.size() != batches.size()) {
      return FailGroup(
          batches.size(),
          Status::Internal("settle_apply_group answered " + std::to_string(outcomes.size()) +
                           " results for " + std::to_string(batches.size()) + " batches"));
    }
    result.statuses.reserve(batches.size());
    for (std::size_t i = 0; i < batches.size(); ++i) {
      if (!refused[i].ok()) {
        result.statuses.push_back(std::move(refused[i]));
      } else if (outcomes[i].is_null()) {
        result.statuses.push_back(Status::Ok());
      } else {
        result.statuses.push_back(Refusal(outcomes[i]));
      }
    }
  } catch (const std::exception& e) {
    // Committed, but the answer is unreadable: a bug, not a storage failure.
    return FailGroup(
        batches.size(),
        Status::Internal(std::string("reading settle_apply_group's answer: ") + e.what()));
  }
  result.committed = true;
  return result;
}

}  // namespace settle::storage
