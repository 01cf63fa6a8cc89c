#include "workload.h"

#include <nlohmann/json.hpp>
#include <utility>

namespace settle::bench {
namespace {

constexpr Duration kTimeout = std::chrono::seconds(60);
constexpr std::size_t kMaxAnswerBytes = 64 * 1024;

// Per branch (0: A pays, 1: B receives): its id and URL prefix.
constexpr std::string_view kBranchIds[] = {"01", "02"};
constexpr std::string_view kBranchNames[] = {"TransOut", "TransIn"};
constexpr std::string_view kTryPaths[] = {"/api/TransOutTry", "/api/TransInTry"};
constexpr std::string_view kConfirmPaths[] = {"/api/TransOutConfirm", "/api/TransInConfirm"};

// `s` as a JSON string literal.
std::string Quoted(const std::string& s) { return nlohmann::json(s).dump(); }

std::string ParticipantUrl(int port, const std::string& path) {
  return "http://127.0.0.1:" + std::to_string(port) + path;
}

Url LocalUrl(int port) {
  Url url;
  url.host = "127.0.0.1";
  url.port = port;
  url.path_and_query = "/";
  return url;
}

}  // namespace

Workload::Workload(net::Client& client, const Endpoints& endpoints, Mode mode, int client_index)
    : client_(client),
      endpoints_(endpoints),
      mode_(mode),
      client_index_(client_index),
      coordinator_(LocalUrl(endpoints.coordinator_port)),
      participant_{LocalUrl(endpoints.participant_a_port), LocalUrl(endpoints.participant_b_port)} {
  const std::string account = std::to_string(client_index % endpoints.accounts + 1);
  body_out_ = R"({"account_id":")" + account + R"(","amount":1})";
  body_in_ = body_out_;
  // The parts of each transaction's JSON that do not depend on its gid, built once.
  const int a = endpoints.participant_a_port;
  const int b = endpoints.participant_b_port;
  saga_tail_ = std::string(R"(","trans_type":"saga","wait_result":true,"steps":[)") +
               R"({"action":")" + ParticipantUrl(a, "/api/TransOut") + R"(","compensate":")" +
               ParticipantUrl(a, "/api/TransOutCompensate") + R"("},)" + R"({"action":")" +
               ParticipantUrl(b, "/api/TransIn") + R"(","compensate":")" +
               ParticipantUrl(b, "/api/TransInCompensate") + R"("}],"payloads":[)" +
               Quoted(body_out_) + "," + Quoted(body_in_) + "]}";
  const int ports[] = {a, b};
  const std::string* bodies[] = {&body_out_, &body_in_};
  for (int which = 0; which < 2; ++which) {
    const std::string prefix = "/api/" + std::string(kBranchNames[which]);
    registration_tail_[which] = R"(,"branch_id":")" + std::string(kBranchIds[which]) +
                                R"(","data":)" + Quoted(*bodies[which]) + R"(,"confirm":")" +
                                ParticipantUrl(ports[which], prefix + "Confirm") +
                                R"(","cancel":")" +
                                ParticipantUrl(ports[which], prefix + "Cancel") + R"("})";
  }
}

std::string Workload::GidFor(std::uint64_t n) const {
  return "bench-" + endpoints_.run_id + "-" + std::to_string(client_index_) + "-" +
         std::to_string(n);
}

asio::awaitable<Status> Workload::PostParticipant(int which, std::string_view path,
                                                  const std::string& gid,
                                                  std::string_view branch_id, std::string_view op,
                                                  const std::string& body) {
  net::ClientRequest request;
  request.method = "POST";
  request.url = participant_[which];
  request.target.reserve(path.size() + gid.size() + 64);
  request.target += path;
  request.target += "?gid=";
  request.target += gid;
  request.target += mode_ == Mode::kSaga ? "&trans_type=saga" : "&trans_type=tcc";
  request.target += "&branch_id=";
  request.target += branch_id;
  request.target += "&op=";
  request.target += op;
  request.body = body;
  request.timeout = kTimeout;
  request.max_answer_bytes = kMaxAnswerBytes;
  return Post(std::move(request), std::string(path));
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

asio::awaitable<Status> Workload::Post(net::ClientRequest request, std::string what) {
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
  co_return Status::Ok();
}

asio::awaitable<Status> Workload::ThroughCoordinator(std::uint64_t n) {
  const std::string gid = GidFor(n);
  if (mode_ == Mode::kSaga) {
    const std::string submit = R"({"gid":")" + gid + saga_tail_;
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
    s = co_await PostParticipant(which, kTryPaths[which], gid, kBranchIds[which], "try", body);
    if (!s.ok()) co_return s;
  }
  const std::string submit = head + R"(,"wait_result":true})";
  co_return co_await PostCoordinator("/submit", submit);
}

asio::awaitable<Status> Workload::Direct(std::uint64_t n) {
  const std::string gid = GidFor(n);
  Status s;
  if (mode_ == Mode::kSaga) {
    s = co_await PostParticipant(0, "/api/TransOut", gid, "01", "action", body_out_);
    if (!s.ok()) co_return s;
    co_return co_await PostParticipant(1, "/api/TransIn", gid, "02", "action", body_in_);
  }
  s = co_await PostParticipant(0, kTryPaths[0], gid, kBranchIds[0], "try", body_out_);
  if (!s.ok()) co_return s;
  s = co_await PostParticipant(1, kTryPaths[1], gid, kBranchIds[1], "try", body_in_);
  if (!s.ok()) co_return s;
  s = co_await PostParticipant(0, kConfirmPaths[0], gid, kBranchIds[0], "confirm", body_out_);
  if (!s.ok()) co_return s;
  co_return co_await PostParticipant(1, kConfirmPaths[1], gid, kBranchIds[1], "confirm", body_in_);
}

}  // namespace settle::bench
