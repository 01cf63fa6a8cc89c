#include "workload.h"

#include <nlohmann/json.hpp>
#include <utility>

#include "grpc_branch_client.h"
#include "settle/core/base64.h"

namespace settle::bench {
namespace {

constexpr Duration kTimeout = std::chrono::seconds(60);
constexpr std::size_t kMaxAnswerBytes = 64 * 1024;

// Per branch (0: A pays, 1: B receives): its id and the stem of its names (TransOutTry, ...).
constexpr std::string_view kBranchIds[] = {"01", "02"};
constexpr std::string_view kBranchNames[] = {"TransOut", "TransIn"};
constexpr std::string_view kTryNames[] = {"TransOutTry", "TransInTry"};
constexpr std::string_view kConfirmNames[] = {"TransOutConfirm", "TransInConfirm"};

// `s` as a JSON string literal.
std::string Quoted(const std::string& s) { return nlohmann::json(s).dump(); }

// The trans_type the load generator's own participant calls carry.
std::string_view TransTypeOf(Mode mode) {
  switch (mode) {
    case Mode::kSaga:
      return "saga";
    case Mode::kWorkflow:
      return "workflow";
    case Mode::kTcc:
      break;
  }
  return "tcc";
}

Url LocalUrl(int port) {
  Url url;
  url.host = "127.0.0.1";
  url.port = port;
  url.path_and_query = "/";
  return url;
}

}  // namespace

Workload::Workload(net::Client& client, const Endpoints& endpoints, Mode mode, int client_index,
                   const GrpcParticipants* grpc)
    : client_(client),
      endpoints_(endpoints),
      mode_(mode),
      client_index_(client_index),
      grpc_(grpc != nullptr ? std::optional<GrpcParticipants>(*grpc) : std::nullopt),
      coordinator_(LocalUrl(endpoints.coordinator_port)),
      participant_{LocalUrl(endpoints.participant_a_port), LocalUrl(endpoints.participant_b_port)} {
  const std::string account = std::to_string(client_index % endpoints.accounts + 1);
  body_out_ = R"({"account_id":")" + account + R"(","amount":1})";
  body_in_ = body_out_;
  // The parts of each transaction's JSON that do not depend on its gid, built once.
  saga_tail_ = std::string(R"(","trans_type":"saga","wait_result":true,"steps":[)") +
               R"({"action":")" + BranchUrl(0, "TransOut") + R"(","compensate":")" +
               BranchUrl(0, "TransOutCompensate") + R"("},)" + R"({"action":")" +
               BranchUrl(1, "TransIn") + R"(","compensate":")" + BranchUrl(1, "TransInCompensate") +
               R"("}],"payloads":[)" + Quoted(body_out_) + "," + Quoted(body_in_) + "]}";
  const std::string* bodies[] = {&body_out_, &body_in_};
  for (int which = 0; which < 2; ++which) {
    const std::string name(kBranchNames[which]);
    // The Try's URL too, as the SDK's initiators register it: a settled that signs answers
    // with its countersignature of the Try (docs/protocol.md §4.9), which is part of what is
    // measured (the participants here do not check it).
    registration_tail_[which] = R"(,"branch_id":")" + std::string(kBranchIds[which]) +
                                R"(","data":)" + Quoted(*bodies[which]) + R"(,"try":")" +
                                BranchUrl(which, kTryNames[which]) + R"(","confirm":")" +
                                BranchUrl(which, name + "Confirm") + R"(","cancel":")" +
                                BranchUrl(which, name + "Cancel") + R"("})";
  }
  // custom_data as the SDK's Workflows::Run sends it: the name, and the input in base64.
  const std::string custom_data =
      nlohmann::json{{"name", "transfer"}, {"data", Base64Encode(body_out_)}}.dump();
  workflow_tail_ = R"(,"custom_data":)" + Quoted(custom_data) + R"(,"query_prepared":")" +
                   BranchUrl(0, "TransferResume") + R"("})";
}

std::string Workload::BranchUrl(int which, std::string_view name) const {
  if (grpc_) {
    return "grpc://127.0.0.1:" + std::to_string(grpc_->ports[which]) + "/" + grpc_->service + "/" +
           std::string(name);
  }
  const int port = which == 0 ? endpoints_.participant_a_port : endpoints_.participant_b_port;
  return "http://127.0.0.1:" + std::to_string(port) + "/api/" + std::string(name);
}

std::string Workload::GidFor(std::uint64_t n) const {
  return "bench-" + endpoints_.run_id + "-" + std::to_string(client_index_) + "-" +
         std::to_string(n);
}

asio::awaitable<Status> Workload::CallParticipant(int which, std::string_view name,
                                                  const std::string& gid,
                                                  std::string_view branch_id, std::string_view op,
                                                  const std::string& body,
                                                  std::string* answer_body) {
  const std::string_view trans_type = TransTypeOf(mode_);
  if (grpc_) {
    const std::string method = "/" + grpc_->service + "/" + std::string(name);
    return grpc_->clients[which]->Call(method, gid, trans_type, branch_id, op, body, kTimeout);
  }
  net::ClientRequest request;
  request.method = "POST";
  request.url = participant_[which];
  request.target.reserve(name.size() + gid.size() + 64);
  request.target += "/api/";
  request.target += name;
  request.target += "?gid=";
  request.target += gid;
  request.target += "&trans_type=";
  request.target += trans_type;
  request.target += "&branch_id=";
  request.target += branch_id;
  request.target += "&op=";
  request.target += op;
  request.body = body;
  request.timeout = kTimeout;
  request.max_answer_bytes = kMaxAnswerBytes;
  return Post(std::move(request), "/api/" + std::string(name), answer_body);
}

asio::awaitable<Status> Workload::PostCoordinator(std::string_view route, const std::string& body) {
  net::ClientRequest request;
  request.method = "POST";
  request.url = coordinator_;
  request.target = endpoints_.api;
  request.target += route;
  request.body = body;
  request.timeout = kTimeout;
  request.max_answer_bytes = kMaxAnswerBytes;
  return Post(std::move(request), std::string(route));
}

asio::awaitable<Status> Workload::Post(net::ClientRequest request, std::string what,
                                       std::string* answer_body) {
  // A kept-alive connection the server closed while it was idle (its keep-alive timeout, e.g.
  // while the direct baseline ran) fails before any answer; the client then sends again on a
  // new one (requests are idempotent by default): each call carries its gid, and the
  // coordinator and the participants' barrier take a repeat as the same call.
  // Started in a statement of its own: GCC 12 mishandles temporaries with destructors (here
  // the by-value request) that live across a suspension inside a co_await expression.
  asio::awaitable<Result<net::ClientAnswer>> sending = client_.Send(std::move(request));
  Result<net::ClientAnswer> answer = co_await std::move(sending);
  if (!answer) {
    // The client's code says whether the request may have arrived (Pending) or not.
    co_return Status(answer.status().code(), what + ": " + answer.status().message());
  }
  if (answer->status != 200) {
    co_return Status::Unavailable(what + ": HTTP " + std::to_string(answer->status) + " " +
                                  answer->body.substr(0, 200));
  }
  if (answer_body != nullptr) *answer_body = std::move(answer->body);
  co_return Status::Ok();
}

asio::awaitable<Status> Workload::ThroughCoordinator(std::uint64_t n) {
  const std::string gid = GidFor(n);
  if (mode_ == Mode::kSaga) {
    const std::string submit = R"({"gid":")" + gid + saga_tail_;
    co_return co_await PostCoordinator("/submit", submit);
  }
  if (mode_ == Mode::kWorkflow) {
    const std::string head = R"({"gid":")" + gid + R"(","trans_type":"workflow")";
    const std::string prepare = head + workflow_tail_;
    Status s = co_await PostCoordinator("/prepareWorkflow", prepare);
    if (!s.ok()) co_return s;
    for (int which = 0; which < 2; ++which) {
      const std::string& body = which == 0 ? body_out_ : body_in_;
      std::string output;
      s = co_await CallParticipant(which, kBranchNames[which], gid, kBranchIds[which], "action",
                                   body, &output);
      if (!s.ok()) co_return s;
      // The step's output as the SDK records it: "<step name>:<base64 of its bytes>".
      const std::string record = head + R"(,"branch_id":")" + std::string(kBranchIds[which]) +
                                 R"(","op":"action","status":"succeed","data":")" +
                                 std::string(kBranchNames[which]) + ":" + Base64Encode(output) +
                                 R"("})";
      s = co_await PostCoordinator("/registerBranch", record);
      if (!s.ok()) co_return s;
    }
    const std::string submit =
        head + R"(,"req_extra":{"status":"succeed","rollback_reason":"","result":""}})";
    co_return co_await PostCoordinator("/submit", submit);
  }
  const std::string head = R"({"gid":")" + gid + R"(","trans_type":"tcc")";
  const std::string prepare = head + "}";
  Status s = co_await PostCoordinator("/prepare", prepare);
  if (!s.ok()) co_return s;
  for (int which = 0; which < 2; ++which) {
    const std::string registration = head + registration_tail_[which];
    s = co_await PostCoordinator("/registerBranch", registration);
    if (!s.ok()) co_return s;
    const std::string& body = which == 0 ? body_out_ : body_in_;
    s = co_await CallParticipant(which, kTryNames[which], gid, kBranchIds[which], "try", body);
    if (!s.ok()) co_return s;
  }
  const std::string submit = head + R"(,"wait_result":true})";
  co_return co_await PostCoordinator("/submit", submit);
}

asio::awaitable<Status> Workload::Direct(std::uint64_t n) {
  const std::string gid = GidFor(n);
  Status s;
  if (mode_ != Mode::kTcc) {
    s = co_await CallParticipant(0, kBranchNames[0], gid, kBranchIds[0], "action", body_out_);
    if (!s.ok()) co_return s;
    co_return co_await CallParticipant(1, kBranchNames[1], gid, kBranchIds[1], "action", body_in_);
  }
  s = co_await CallParticipant(0, kTryNames[0], gid, kBranchIds[0], "try", body_out_);
  if (!s.ok()) co_return s;
  s = co_await CallParticipant(1, kTryNames[1], gid, kBranchIds[1], "try", body_in_);
  if (!s.ok()) co_return s;
  s = co_await CallParticipant(0, kConfirmNames[0], gid, kBranchIds[0], "confirm", body_out_);
  if (!s.ok()) co_return s;
  co_return co_await CallParticipant(1, kConfirmNames[1], gid, kBranchIds[1], "confirm", body_in_);
}

}  // namespace settle::bench
