#include "http_participant_client.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <exception>

#include "settle/common/http_url.h"

namespace settle::checker {
namespace {

Answer NoAnswer(Answer::Delivery delivery, std::string error) {
  Answer answer;
  answer.delivery = delivery;
  answer.error = std::move(error);
  return answer;
}

std::string HostPort(const HttpUrl& url) {
  const bool ipv6 = url.host.find(':') != std::string::npos;
  return (ipv6 ? "[" + url.host + "]" : url.host) + ":" + std::to_string(url.port);
}

}  // namespace

HttpParticipantClient::HttpParticipantClient(
    std::vector<std::pair<std::string, std::string>> headers, Duration timeout)
    : headers_(std::move(headers)), timeout_(std::max(timeout, Duration(1))) {}

Answer HttpParticipantClient::CallBranch(const BranchCall& call) {
  Result<HttpUrl> url = ParseHttpUrl(call.url);
  if (!url) {
    return NoAnswer(Answer::Delivery::kUnreachable,
                    "invalid URL '" + call.url + "': " + url.status().message());
  }
  // As the coordinator does: httplib's own encoding is off, so only non-ASCII bytes of the
  // user's URL need encoding; TargetWith encodes the parameter values.
  const std::string target =
      PercentEncodeNonAscii(url->TargetWith({{"gid", call.gid},
                                             {"trans_type", ToString(call.trans_type)},
                                             {"branch_id", call.branch_id},
                                             {"op", ToString(call.op)}}));
  return Send(call.body.empty() ? "GET" : "POST", *url, target, call.body, /*json=*/true);
}

Answer HttpParticipantClient::GetState(const std::string& url) {
  Result<HttpUrl> parsed = ParseHttpUrl(url);
  if (!parsed) {
    return NoAnswer(Answer::Delivery::kUnreachable,
                    "invalid URL '" + url + "': " + parsed.status().message());
  }
  return Send("GET", *parsed, PercentEncodeNonAscii(parsed->path_and_query), "", /*json=*/false);
}

Answer HttpParticipantClient::Send(const std::string& method, const HttpUrl& url,
                                   const std::string& target, const std::string& body, bool json) {
  try {
    httplib::Client client(url.host, url.port);
    client.set_keep_alive(false);
    client.set_url_encode(false);
    client.set_connection_timeout(timeout_);
    client.set_read_timeout(timeout_);
    client.set_write_timeout(timeout_);

    httplib::Request request;
    request.method = method;
    request.path = target;
    if (json) request.headers.emplace("Content-Type", "application/json");
    for (const auto& [name, value] : headers_) {
      request.headers.erase(name);  // a user header replaces a default of the same name
      request.headers.emplace(name, value);
    }
    request.body = body;

    httplib::Response response;
    httplib::Error error = httplib::Error::Success;
    // httplib reports a read that timed out and a connection closed by the peer both as
    // Error::Read; only the time spent tells them apart. steady_clock measures I/O here.
    const auto start = std::chrono::steady_clock::now();
    if (client.send(request, response, error)) {
      Answer answer;
      answer.http_status = response.status;
      answer.body = std::move(response.body);
      return answer;
    }
    const auto elapsed = std::chrono::steady_clock::now() - start;
    const std::string where = HostPort(url);
    const std::string ms = std::to_string(timeout_.count()) + " ms";
    switch (error) {
      case httplib::Error::Connection:
        return NoAnswer(Answer::Delivery::kUnreachable,
                        "cannot connect to " + where + " (refused, unreachable or unresolvable)");
      case httplib::Error::ConnectionTimeout:
        return NoAnswer(Answer::Delivery::kUnreachable,
                        "timed out after " + ms + " connecting to " + where);
      case httplib::Error::Read:
      case httplib::Error::Write:
        if (elapsed >= timeout_) {
          return NoAnswer(Answer::Delivery::kNoAnswer,
                          "timed out after " + ms + " waiting for " + where);
        }
        return NoAnswer(Answer::Delivery::kNoAnswer,
                        "connection closed by " + where + " before a complete answer");
      default:
        return NoAnswer(Answer::Delivery::kNoAnswer,
                        "connection error with " + where + ": " + httplib::to_string(error));
    }
  } catch (const std::exception& e) {
    return NoAnswer(Answer::Delivery::kNoAnswer, std::string("internal error: ") + e.what());
  }
}

}  // namespace settle::checker
