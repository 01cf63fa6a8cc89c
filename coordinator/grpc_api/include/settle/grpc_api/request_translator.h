#pragma once

#include <string>
#include <string_view>

#include "dtmgimp.pb.h"
#include "settle/core/status.h"
#include "settle/engine/requests.h"
#include "settle/storage/records.h"

// DTM's gRPC messages (proto/dtmgimp.proto) turned into the engine's typed requests, as the
// HTTP door turns JSON into them (docs/protocol.md §10). Pure functions: no I/O, never throw.
// They check what protobuf leaves open: a known TransType, Steps' JSON, CustomedData's JSON,
// numbers in range; every rule about the values is the engine's, checked by the coordinator.
// Their refusals name the field in the protocol's JSON names, as the engine's do, and
// ToGrpcStatus rewords both into the proto's ("TransOptions.RetryLimit: ...").
//
// What protobuf cannot name (a field number this build does not know) and the members of
// Steps' objects nothing read are listed in the request's unread_fields: "#12",
// "steps[0].actoin"; RegisterBranch's Data keys other than the type's are too.
namespace settle::grpc_api {

// A duration in seconds, as DTM's options carry them, at most ten years; 0: not sent.
inline constexpr std::int64_t kMaxSeconds = 10LL * 365 * 24 * 3600;
inline constexpr std::int64_t kMaxRetryLimit = 1'000'000'000;

Result<engine::PrepareRequest> ToPrepare(const dtmgimp::DtmRequest& request);
Result<engine::SubmitRequest> ToSubmit(const dtmgimp::DtmRequest& request);
Result<engine::AbortRequest> ToAbort(const dtmgimp::DtmRequest& request);
Result<engine::RegisterBranchRequest> ToRegisterBranch(const dtmgimp::DtmBranchRequest& request);
// PrepareWorkflow's answer: the transaction (its result in base64, as DTM's Go client decodes
// it) and its step log, each step's data as bytes.
void ToProgressReply(const storage::Transaction& tx, dtmgimp::DtmProgressesReply& reply);
Result<engine::SubscribeRequest> ToSubscription(const dtmgimp::DtmTopicRequest& request);
Result<engine::DeleteTopicRequest> ToDeleteTopic(const dtmgimp::DtmTopicRequest& request);

}  // namespace settle::grpc_api
