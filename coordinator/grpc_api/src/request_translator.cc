#include "settle/grpc_api/request_translator.h"

#include <google/protobuf/unknown_field_set.h>

#include <type_traits>

#include "settle/api/request_parser.h"
#include "settle/core/base64.h"
#include "settle/engine/type_rules.h"
#include "settle/engine/workflow_engine.h"

namespace settle::grpc_api {
namespace {

Status FieldError(const std::string& path, const std::string& problem) {
  return Status::InvalidArgument(path + ": " + problem);
}

// The field numbers of `message` this build's proto does not know: "#12".
void AddUnknownNumbers(const google::protobuf::Message& message, engine::UnreadFields& unread) {
  const google::protobuf::UnknownFieldSet& unknown =
      message.GetReflection()->GetUnknownFields(message);
  for (int i = 0; i < unknown.field_count(); ++i) {
    const std::string number = "#" + std::to_string(unknown.field(i).number());
    if (std::find(unread.begin(), unread.end(), number) == unread.end()) {
      unread.push_back(number);
    }
  }
}

Status ReadTransType(const std::string& name, TransType& out) {
  if (name.empty()) return FieldError("trans_type", "required");
  if (auto type = ParseTransType(name)) {
    out = *type;
    return Status::Ok();
  }
  return FieldError("trans_type", "unknown trans_type; expected tcc, saga, msg, xa or workflow");
}

Status ReadSeconds(const char* name, std::int64_t seconds, std::optional<Duration>& out) {
  if (seconds < 0 || seconds > kMaxSeconds) {
    return FieldError(name,
                      "must be a whole number of seconds from 0 to " + std::to_string(kMaxSeconds));
  }
  if (seconds > 0) out = std::chrono::seconds(seconds);
  return Status::Ok();
}

Status ReadOptions(const dtmgimp::DtmRequest& request, engine::RequestOptions& options,
                   engine::UnreadFields& unread) {
  const dtmgimp::DtmTransOptions& o = request.transoptions();
  AddUnknownNumbers(o, unread);
  options.wait_result = o.waitresult();
  if (Status s = ReadSeconds("timeout_to_fail", o.timeouttofail(), options.timeout_to_fail);
      !s.ok()) {
    return s;
  }
  if (Status s = ReadSeconds("request_timeout", o.requesttimeout(), options.request_timeout);
      !s.ok()) {
    return s;
  }
  if (Status s = ReadSeconds("retry_interval", o.retryinterval(), options.retry_interval);
      !s.ok()) {
    return s;
  }
  if (o.retrylimit() < 0 || o.retrylimit() > kMaxRetryLimit) {
    return FieldError("retry_limit",
                      "must be a whole number from 0 to " + std::to_string(kMaxRetryLimit));
  }
  options.retry_limit = static_cast<int>(o.retrylimit());
  for (const auto& [name, value] : o.branchheaders()) options.branch_headers.emplace(name, value);
  options.custom_data = request.customeddata();
  return Status::Ok();
}

// What every DtmRequest carries: gid, type, options, and for a saga or a message its steps,
// payloads and custom_data.
template <typename Request>
Status ReadCommon(const dtmgimp::DtmRequest& in, Request& out) {
  AddUnknownNumbers(in, out.unread_fields);
  out.gid = in.gid();
  if (Status s = ReadTransType(in.transtype(), out.trans_type); !s.ok()) return s;
  if (Status s = ReadOptions(in, out.options, out.unread_fields); !s.ok()) return s;
  const engine::TypeRules& rules = engine::RulesOf(out.trans_type);
  // A workflow's submit says how it ended in ReqExtra.
  constexpr bool kSubmit = std::is_same_v<Request, engine::SubmitRequest>;
  if constexpr (kSubmit) {
    if (rules.submit.records_outcome) {
      out.req_extra.insert(in.reqextra().begin(), in.reqextra().end());
    } else if (!in.reqextra().empty()) {
      out.unread_fields.push_back("req_extra");
    }
  } else if (!in.reqextra().empty()) {
    out.unread_fields.push_back("req_extra");
  }
  if (!in.rollbackreason().empty()) out.unread_fields.push_back("rollback_reason");
  if (rules.custom_data.workflow) {
    // prepareWorkflow: custom_data {"name","data"} and the resume callback.
    if (Status s = api::ReadCustomData(out.trans_type, out.options); !s.ok()) return s;
    out.query_prepared = in.queryprepared();
    if (!in.binpayloads().empty()) out.unread_fields.push_back("payloads");
    if (!in.steps().empty() && in.steps() != "null") out.unread_fields.push_back("steps");
    return Status::Ok();
  }
  if (!rules.carries_steps) {
    if (!in.steps().empty() && in.steps() != "null") out.unread_fields.push_back("steps");
    if (!in.binpayloads().empty()) out.unread_fields.push_back("payloads");
    if (!in.queryprepared().empty()) out.unread_fields.push_back("query_prepared");
    return Status::Ok();
  }
  if (Status s = api::ReadCustomData(out.trans_type, out.options); !s.ok()) return s;
  if (Status s = api::ParseStepsJson(in.steps(), out.steps, out.unread_fields); !s.ok()) return s;
  for (const std::string& payload : in.binpayloads()) out.payloads.push_back(payload);
  if (rules.carries_query_prepared) {
    out.query_prepared = in.queryprepared();
  } else if (!in.queryprepared().empty()) {
    out.unread_fields.push_back("query_prepared");
  }
  return Status::Ok();
}

}  // namespace

Result<engine::PrepareRequest> ToPrepare(const dtmgimp::DtmRequest& request) {
  engine::PrepareRequest out;
  if (Status s = ReadCommon(request, out); !s.ok()) return s;
  return out;
}

Result<engine::SubmitRequest> ToSubmit(const dtmgimp::DtmRequest& request) {
  engine::SubmitRequest out;
  if (Status s = ReadCommon(request, out); !s.ok()) return s;
  return out;
}

Result<engine::AbortRequest> ToAbort(const dtmgimp::DtmRequest& request) {
  engine::AbortRequest out;
  AddUnknownNumbers(request, out.unread_fields);
  out.gid = request.gid();
  if (Status s = ReadTransType(request.transtype(), out.trans_type); !s.ok()) return s;
  out.rollback_reason = request.rollbackreason();
  out.wait_result = request.transoptions().waitresult();
  return out;
}

Result<engine::RegisterBranchRequest> ToRegisterBranch(const dtmgimp::DtmBranchRequest& request) {
  engine::RegisterBranchRequest out;
  AddUnknownNumbers(request, out.unread_fields);
  out.gid = request.gid();
  if (Status s = ReadTransType(request.transtype(), out.trans_type); !s.ok()) return s;
  if (request.branchid().empty()) return FieldError("branch_id", "required");
  out.branch_id = request.branchid();
  out.data = request.busipayload();
  const engine::BranchUrls names = engine::RulesOf(out.trans_type).branch_urls;
  if (names == engine::BranchUrls::kStepOutcome) {
    // A workflow's step: Data's "op" and "status", as DTM's client sends them (its Op field
    // when Data has none).
    out.op = request.op();
    for (const auto& [key, value] : request.data()) {
      if (key == "op") {
        out.op = value;
      } else if (key == "status") {
        out.status = value;
      } else {
        out.unread_fields.push_back(key);
      }
    }
    return out;
  }
  if (!request.op().empty()) out.unread_fields.push_back("op");
  // XA's one phase-2 url, TCC's confirm and cancel: the keys of Data, as DTM's clients send
  // them, and TCC's try (for settled's countersignature). Other keys are listed unread by name
  // ("status" is DTM's).
  const bool one_url = engine::RulesOf(out.trans_type).branch_urls == engine::BranchUrls::kOneUrl;
  for (const auto& [key, value] : request.data()) {
    if (one_url && key == "url") {
      out.url = value;
    } else if (!one_url && key == "confirm") {
      out.confirm_url = value;
    } else if (!one_url && key == "cancel") {
      out.cancel_url = value;
    } else if (!one_url && key == "try") {
      out.try_url = value;
    } else {
      out.unread_fields.push_back(key);
    }
  }
  return out;
}

void ToProgressReply(const storage::Transaction& tx, dtmgimp::DtmProgressesReply& reply) {
  dtmgimp::DtmTransaction& transaction = *reply.mutable_transaction();
  transaction.set_gid(tx.global.gid);
  transaction.set_status(std::string(ToString(tx.global.status)));
  transaction.set_rollbackreason(tx.global.rollback_reason);
  transaction.set_result(Base64Encode(tx.global.result));
  for (const storage::BranchRecord* step : engine::StepLogOf(tx)) {
    dtmgimp::DtmProgress& progress = *reply.add_progresses();
    progress.set_status(std::string(ToString(step->status)));
    progress.set_bindata(step->data.str());
    progress.set_branchid(step->branch_id);
    progress.set_op(std::string(ToString(step->op)));
  }
}

Result<engine::SubscribeRequest> ToSubscription(const dtmgimp::DtmTopicRequest& request) {
  engine::SubscribeRequest out{request.topic(), request.url(), request.remark(), {}};
  AddUnknownNumbers(request, out.unread_fields);
  return out;
}

Result<engine::DeleteTopicRequest> ToDeleteTopic(const dtmgimp::DtmTopicRequest& request) {
  engine::DeleteTopicRequest out{request.topic(), {}};
  AddUnknownNumbers(request, out.unread_fields);
  if (!request.url().empty()) out.unread_fields.push_back("url");
  if (!request.remark().empty()) out.unread_fields.push_back("remark");
  return out;
}

}  // namespace settle::grpc_api
