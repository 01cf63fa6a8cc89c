#include "settle/coordinator/http_branch_caller.h"

#include <httplib.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <exception>
#include <string>
#include <string_view>
#include <utility>

#include "client_pool.h"
#include "parallel_for.h"
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

// httplib's request line is written as given (its own encoding is off, see ClientPool), so
// bytes that may not appear in a request line raw are encoded here. ParseHttpUrl has already
// rejected spaces and control characters; only non-ASCII bytes remain.
std::string RequestTarget(const HttpUrl& url, const BranchCall& call) {
  return PercentEncodeNonAscii(url.TargetWith({{"gid", call.gid},
                                               {"trans_type", ToString(call.trans_type)},
                                               {"branch_id", call.branch_id},
                                               {"op", ToString(call.op)}}));
}

// Message framing and the connection belong to the caller: a branch header could otherwise
// desynchronize a keep-alive connection.
bool IsFramingHeader(std::string_view name) {
  auto equals = [name](std::string_view other) {
    return name.size() == other.size() &&
           std::equal(name.begin(), name.end(), other.begin(), [](char a, char b) {
             return std::tolower(static_cast<unsigned char>(a)) ==
                    std::tolower(static_cast<unsigned char>(b));
           });
  };
  return equals("Content-Length") || equals("Transfer-Encoding") || equals("Connection");
}

// Content-Type: application/json plus the branch headers; a branch header replaces a default
// of the same name (httplib::Headers compares names case-insensitively). Empty on success,
// otherwise why the headers cannot be sent.
std::string BuildHeaders(const BranchCall& call, httplib::Headers& headers) {
  headers = {{"Content-Type", "application/json"}};
  for (const auto& [name, value] : call.headers) {
    if (!IsValidHeaderName(name) || !IsValidHeaderValue(value))
      return "invalid branch header '" + name + "'";
    if (IsFramingHeader(name)) continue;
    headers.erase(name);
    headers.emplace(name, value);
  }
  return {};
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

// httplib reports every failed connect as Error::Connection and does not keep errno, so the
// only distinction worth a second look is a host name that does not resolve.
std::string ConnectFailureDetail(const HttpUrl& url) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* addresses = nullptr;
  const int rc =
      getaddrinfo(url.host.c_str(), std::to_string(url.port).c_str(), &hints, &addresses);
  if (rc != 0) return "cannot resolve host '" + url.host + "': " + gai_strerror(rc);
  freeaddrinfo(addresses);
  return "connection refused or unreachable: " + HostPort(url);
}

// One request and its answer on one client.
struct Exchange {
  httplib::Error error = httplib::Error::Success;
  bool timed_out = false;
  int status = 0;
  std::string body;  // at most max_response_bytes of it
};

Exchange Send(httplib::Client& client, const std::string& target, const BranchCall& call,
              const httplib::Headers& headers, std::size_t max_response_bytes) {
  const Duration timeout = std::max(call.timeout, Duration(1));
  client.set_connection_timeout(timeout);
  client.set_write_timeout(timeout);
  client.set_read_timeout(timeout);

  httplib::Request request;
  request.method = call.data.empty() ? "GET" : "POST";
  request.path = target;
  request.headers = headers;
  request.body = call.data;
  Exchange exchange;
  // The whole body is read even past the limit, so that the connection stays usable for the
  // next request; only the start of it is kept.
  request.content_receiver = [&exchange, max_response_bytes](const char* data, std::size_t size,
                                                             std::uint64_t, std::uint64_t) {
    const std::size_t room = max_response_bytes - exchange.body.size();
    exchange.body.append(data, std::min(size, room));
    return true;
  };

  httplib::Response response;
  // httplib reports a read that timed out and a connection the peer closed both as
  // Error::Read; only the time spent tells them apart. steady_clock measures I/O here, not
  // business time, so it does not go through settle::Clock.
  const auto start = std::chrono::steady_clock::now();
  if (client.send(request, response, exchange.error)) {
    exchange.error = httplib::Error::Success;
    exchange.status = response.status;
    return exchange;
  }
  const auto elapsed = std::chrono::steady_clock::now() - start;
  exchange.timed_out =
      exchange.error == httplib::Error::ConnectionTimeout ||
      ((exchange.error == httplib::Error::Read || exchange.error == httplib::Error::Write) &&
       elapsed >= timeout);
  if (exchange.error == httplib::Error::Success) exchange.error = httplib::Error::Unknown;
  return exchange;
}

BranchOutcome TransportFailure(const Exchange& exchange, const HttpUrl& url,
                               const BranchCall& call) {
  const std::string ms = std::to_string(std::max(call.timeout, Duration(1)).count()) + " ms";
  if (exchange.timed_out) {
    const bool connecting = exchange.error == httplib::Error::ConnectionTimeout;
    return Unknown("timed out after " + ms + (connecting ? " connecting to " : " waiting for ") +
                   HostPort(url));
  }
  switch (exchange.error) {
    case httplib::Error::Connection:
      return Unknown(ConnectFailureDetail(url));
    case httplib::Error::Read:
      return Unknown("connection closed by " + HostPort(url) + " before a complete answer");
    case httplib::Error::Write:
      return Unknown("connection closed by " + HostPort(url) + " while sending the request");
    default:
      return Unknown("connection error: " + httplib::to_string(exchange.error) + " (" +
                     HostPort(url) + ")");
  }
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
              [this, &calls, &outcomes](std::size_t i) { outcomes[i] = Call(calls[i]); });
  return outcomes;
}

BranchOutcome HttpBranchCaller::Call(const BranchCall& call) {
  try {
    Result<HttpUrl> url = ParseHttpUrl(call.url);
    if (!url) return Unknown("invalid branch URL '" + call.url + "': " + url.status().message());
    httplib::Headers headers;
    if (std::string error = BuildHeaders(call, headers); !error.empty()) {
      return Unknown(std::move(error));
    }
    const std::string target = RequestTarget(*url, call);

    ClientPool::Lease lease = pool_->Acquire(url->host, url->port);
    Exchange exchange = Send(*lease.client, target, call, headers, options_.max_response_bytes);
    // The participant may have closed a kept-alive connection just as it was reused. The
    // handlers are idempotent, so sending again on a new connection is safe; a timeout is
    // not retried, because the participant did get the request and is merely slow.
    if (exchange.error != httplib::Error::Success && !exchange.timed_out && lease.reused) {
      lease.client = ClientPool::NewClient(url->host, url->port);
      exchange = Send(*lease.client, target, call, headers, options_.max_response_bytes);
    }
    if (exchange.error != httplib::Error::Success) return TransportFailure(exchange, *url, call);
    pool_->Release(url->host, url->port, std::move(lease.client));

    BranchOutcome outcome;
    outcome.http_status = exchange.status;
    outcome.result = ClassifyBranchResponse(exchange.status, exchange.body);
    if (outcome.result != BranchResult::kSuccess) {
      outcome.detail = HttpDetail(exchange.status, exchange.body);
    }
    return outcome;
  } catch (const std::exception& e) {
    return Unknown(std::string("internal error calling the branch: ") + e.what());
  } catch (...) {
    return Unknown("internal error calling the branch");
  }
}

}  // namespace settle::coordinator
