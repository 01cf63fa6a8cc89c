#include "http_participant_client.h"

#include <algorithm>
#include <exception>

namespace settle::checker {
namespace {

Answer NoAnswer(Answer::Delivery delivery, std::string error) {
  Answer answer;
  answer.delivery = delivery;
  answer.error = std::move(error);
  return answer;
}

}  // namespace

HttpParticipantClient::HttpParticipantClient(
    std::vector<std::pair<std::string, std::string>> headers, Duration timeout, std::string ca_file)
    : headers_(std::move(headers)), timeout_(std::max(timeout, Duration(1))) {
  auto client = net::BlockingClient::Create({.ca_file = std::move(ca_file)});
  if (client) {
    client_ = std::move(*client);
  } else {
    client_error_ = client.status().message();
  }
}

Answer HttpParticipantClient::CallBranch(const BranchCall& call) {
  Result<net::Url> url = net::ParseUrl(call.url);
  if (!url) {
    return NoAnswer(Answer::Delivery::kUnreachable,
                    "invalid URL '" + call.url + "': " + url.status().message());
  }
  const std::string target = url->TargetWith({{"gid", call.gid},
                                              {"trans_type", ToString(call.trans_type)},
                                              {"branch_id", call.branch_id},
                                              {"op", ToString(call.op)}});
  return Send(call.body.empty() ? "GET" : "POST", *url, target, call.body);
}

Answer HttpParticipantClient::GetState(const std::string& url) {
  Result<net::Url> parsed = net::ParseUrl(url);
  if (!parsed) {
    return NoAnswer(Answer::Delivery::kUnreachable,
                    "invalid URL '" + url + "': " + parsed.status().message());
  }
  return Send("GET", *parsed, parsed->path_and_query, "");
}

Answer HttpParticipantClient::Send(const std::string& method, const net::Url& url,
                                   const std::string& target, const std::string& body) {
  if (client_ == nullptr) return NoAnswer(Answer::Delivery::kUnreachable, client_error_);
  // A fresh connection for every request: nothing of one check leaks into the next.
  client_->CloseIdle();
  net::ClientRequest request;
  request.method = method;
  request.url = url;
  request.target = target;
  // A user header of the same name replaces the default Content-Type.
  request.headers.assign(headers_.begin(), headers_.end());
  request.body = body;
  request.timeout = timeout_;
  request.idempotent = false;
  Result<net::ClientAnswer> answer = client_->Send(std::move(request));
  if (answer) {
    Answer out;
    out.http_status = answer->status;
    out.body = std::move(answer->body);
    return out;
  }
  const Answer::Delivery delivery = answer.status().code() == StatusCode::kUnavailable
                                        ? Answer::Delivery::kUnreachable
                                        : Answer::Delivery::kNoAnswer;
  return NoAnswer(delivery, answer.status().message());
}

}  // namespace settle::checker
