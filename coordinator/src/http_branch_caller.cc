#include "settle/coordinator/http_branch_caller.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <exception>
#include <string>
#include <string_view>
#include <utility>

#include "client_pool.h"
#include "parallel_for.h"
#include "settle/common/http_client_connection.h"
#include "settle/common/http_header.h"
#include "settle/common/http_url.h"

namespace settle::coordinator {
namespace {

// How much of a participant's answer goes into BranchOutcome::detail.
constexpr std::size_t kDetailBodyBytes = 200;

BranchOutcome Unknown(std::string detail) {
  return BranchOutcome{BranchResult::kUnknown, 0, std::move(detail)};
}

std::string HostPort(const HttpUrl& url) {
  const bool ipv6 = url.host.find(':') != std::string::npos;
  return (ipv6 ? "[" + url.host + "]" : url.host) + ":" + std::to_string(url.port);
}

// The request line is written as given, so bytes that may not appear in it raw are encoded
// here. ParseHttpUrl has already
// rejected spaces and control characters; only non-ASCII bytes remain.
std::string RequestTarget(const HttpUrl& url, const BranchCall& call) {
  return PercentEncodeNonAscii(url.TargetWith({{"gid", call.gid},
                                               {"trans_type", ToString(call.trans_type)},
                                               {"branch_id", call.branch_id},
                                               {"op", ToString(call.op)}}));
}

bool NameIs(std::string_view name, std::string_view expected) {
  return name.size() == expected.size() &&
         std::equal(name.begin(), name.end(), expected.begin(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) ==
                  std::tolower(static_cast<unsigned char>(b));
         });
}

// Message framing and the connection belong to the caller: a branch header could otherwise
// desynchronize a keep-alive connection.
bool IsFramingHeader(std::string_view name) {
  return NameIs(name, "Content-Length") || NameIs(name, "Transfer-Encoding") ||
         NameIs(name, "Connection");
}

// The request line and headers, ending with the blank line: Host, Content-Type:
// application/json and Content-Length, with the branch headers, which may replace Host or
// Content-Type but not the framing. Empty `error` on success, otherwise why the headers cannot
// be sent.
std::string RequestHead(const BranchCall& call, const HttpUrl& url, const std::string& target,
                        std::string& error) {
  std::string head;
  head.reserve(256 + target.size());
  head += call.data.empty() ? "GET " : "POST ";
  head += target;
  head += " HTTP/1.1\r\n";
  bool own_host = true;
  bool own_content_type = true;
  for (const auto& [name, value] : call.headers) {
    if (!IsValidHeaderName(name) || !IsValidHeaderValue(value)) {
      error = "invalid branch header '" + name + "'";
      return {};
    }
    if (IsFramingHeader(name)) continue;
    if (NameIs(name, "Host")) own_host = false;
    if (NameIs(name, "Content-Type")) own_content_type = false;
    head += name;
    head += ": ";
    head += value;
    head += "\r\n";
  }
  if (own_host) head += "Host: " + HostPort(url) + "\r\n";
  if (own_content_type) head += "Content-Type: application/json\r\n";
  if (!call.data.empty()) head += "Content-Length: " + std::to_string(call.data.size()) + "\r\n";
  head += "\r\n";
  return head;
}

// "HTTP 500: <start of body>", on one line whatever the body holds.
std::string HttpDetail(int status, std::string_view body) {
  std::string detail = "HTTP " + std::to_string(status);
  if (body.empty()) return detail;
  detail += ": ";
  for (unsigned char c : body.substr(0, kDetailBodyBytes)) {
    detail += (c < 0x20 || c == 0x7f) ? ' ' : static_cast<char>(c);
  }
  return detail;
}

using Failure = HttpClientConnection::Failure;

BranchOutcome TransportFailure(const HttpClientConnection::Answer& answer, const HttpUrl& url,
                               Duration timeout) {
  const std::string ms = std::to_string(timeout.count()) + " ms";
  switch (answer.failure) {
    case Failure::kResolve:
      return Unknown("cannot resolve host '" + url.host + "': " + answer.detail);
    case Failure::kConnect:
      return Unknown("connection refused or unreachable: " + HostPort(url));
    case Failure::kConnectTimeout:
      return Unknown("timed out after " + ms + " connecting to " + HostPort(url));
    case Failure::kTimeout:
      return Unknown("timed out after " + ms + " waiting for " + HostPort(url));
    case Failure::kWrite:
      return Unknown("connection closed by " + HostPort(url) + " while sending the request");
    case Failure::kClosed:
      return Unknown("connection closed by " + HostPort(url) + " before a complete answer");
    case Failure::kMalformed:
      return Unknown("malformed answer from " + HostPort(url) + ": " + answer.detail);
    case Failure::kNone:
      break;
  }
  return Unknown("connection error (" + HostPort(url) + ")");
}

}  // namespace

HttpBranchCaller::HttpBranchCaller(Executor& executor, HttpBranchCallerOptions options)
    : executor_(executor),
      options_(options),
      pool_(std::make_unique<ClientPool>(options.max_idle_connections_per_host)) {}

HttpBranchCaller::~HttpBranchCaller() = default;

std::vector<BranchOutcome> HttpBranchCaller::CallAll(const std::vector<BranchCall>& calls) {
  std::vector<BranchOutcome> outcomes(calls.size());
  ParallelFor(executor_, calls.size(),
              [this, &calls, &outcomes](std::size_t i) {
                const auto start = std::chrono::steady_clock::now();
                outcomes[i] = Call(calls[i]);
                outcomes[i].elapsed = std::chrono::duration_cast<std::chrono::microseconds>(
                    std::chrono::steady_clock::now() - start);
              });
  return outcomes;
}

BranchOutcome HttpBranchCaller::Call(const BranchCall& call) {
  try {
    Result<HttpUrl> url = ParseHttpUrl(call.url);
    if (!url) return Unknown("invalid branch URL '" + call.url + "': " + url.status().message());
    std::string error;
    const std::string head = RequestHead(call, *url, RequestTarget(*url, call), error);
    if (!error.empty()) return Unknown(std::move(error));
    const Duration timeout = std::max(call.timeout, Duration(1));

    auto exchange = [&](std::unique_ptr<HttpClientConnection>& connection) {
      HttpClientConnection::Answer answer;
      if (connection == nullptr) {
        connection = HttpClientConnection::Connect(url->host, url->port, timeout, answer);
      }
      if (connection != nullptr) {
        answer = connection->Exchange(head, call.data, timeout, options_.max_response_bytes);
      }
      return answer;
    };
    std::unique_ptr<HttpClientConnection> connection = pool_->Take(url->host, url->port);
    const bool reused = connection != nullptr;
    HttpClientConnection::Answer answer = exchange(connection);
    // The participant may have closed a kept-alive connection just as it was reused. The
    // handlers are idempotent, so sending again on a new connection is safe; a timeout is
    // not retried, because the participant did get the request and is merely slow.
    if (reused && (answer.failure == Failure::kWrite || answer.failure == Failure::kClosed)) {
      connection.reset();
      answer = exchange(connection);
    }
    if (answer.failure != Failure::kNone) return TransportFailure(answer, *url, timeout);
    pool_->Return(url->host, url->port, std::move(connection));

    BranchOutcome outcome;
    outcome.http_status = answer.status;
    outcome.result = ClassifyBranchResponse(answer.status, answer.body);
    if (outcome.result != BranchResult::kSuccess) {
      outcome.detail = HttpDetail(answer.status, answer.body);
    }
    return outcome;
  } catch (const std::exception& e) {
    return Unknown(std::string("internal error calling the branch: ") + e.what());
  } catch (...) {
    return Unknown("internal error calling the branch");
  }
}

}  // namespace settle::coordinator
