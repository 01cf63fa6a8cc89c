#include "http_participant_client.h"

#include <algorithm>
#include <exception>
#include <latch>
#include <optional>
#include <thread>

#include "settle/net/request_signing.h"
#include "settle/signing/request_signature.h"

namespace settle::checker {

HttpParticipantClient::HttpParticipantClient(
    std::vector<std::pair<std::string, std::string>> headers, Duration timeout, CheckerTls tls,
    std::optional<signing::SigningKey> signing_key)
    : headers_(std::move(headers)),
      timeout_(std::max(timeout, Duration(1))),
      tls_(std::move(tls)),
      signing_key_(std::move(signing_key)) {
  auto client = net::BlockingClient::Create({.ca_file = tls_.ca_file,
                                             .client_cert_file = tls_.client_cert_file,
                                             .client_key_file = tls_.client_key_file});
  if (client) {
    client_ = std::move(*client);
  } else {
    client_error_ = client.status().message();
  }
}

Answer HttpParticipantClient::CallBranch(const BranchCall& call) {
  Result<Url> url = ParseUrl(call.url);
  if (!url) {
    return Answer::None(Answer::Delivery::kUnreachable,
                        "invalid URL '" + call.url + "': " + url.status().message());
  }
  const std::string target = url->TargetWith({{"gid", call.gid},
                                              {"trans_type", ToString(call.trans_type)},
                                              {"branch_id", call.branch_id},
                                              {"op", ToString(call.op)}});
  net::ClientRequest request = Request(call.body.empty() ? "GET" : "POST", *url, target, call.body);
  if (signing_key_ && call.signing != Signing::kUnsigned) {
    const SystemClock clock;
    // A Try as settled countersigns it for its initiator (docs/protocol.md §4.9).
    const std::string_view tag = call.op == BranchOp::kTry ? signing::kRegisteredTryTag : "";
    if (Status s =
            net::SignRequest(request, *signing_key_, ToUnixMillis(clock.Now()) / 1000, true, tag);
        !s.ok()) {
      return Answer::None(Answer::Delivery::kUnreachable, "signing the call: " + s.message());
    }
    // The body no longer matches its digest: a correct participant refuses it.
    if (call.signing == Signing::kTampered) request.body += " ";
  }
  return Send(std::move(request));
}

Answer HttpParticipantClient::GetState(const std::string& url) {
  Result<Url> parsed = ParseUrl(url);
  if (!parsed) {
    return Answer::None(Answer::Delivery::kUnreachable,
                        "invalid URL '" + url + "': " + parsed.status().message());
  }
  return Send(Request("GET", *parsed, parsed->path_and_query, ""));
}

Answer HttpParticipantClient::Call(const HttpCall& call) {
  Result<Url> url = ParseUrl(call.url);
  if (!url) {
    return Answer::None(Answer::Delivery::kUnreachable,
                        "invalid URL '" + call.url + "': " + url.status().message());
  }
  return Send(Request(call.method, *url, url->path_and_query, call.body, call.headers));
}

std::vector<Answer> HttpParticipantClient::CallAtOnce(const std::vector<HttpCall>& calls) {
  std::vector<Answer> answers(calls.size());
  std::vector<std::optional<net::ClientRequest>> requests;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    Result<Url> url = ParseUrl(calls[i].url);
    if (!url) {
      answers[i] = Answer::None(Answer::Delivery::kUnreachable,
                                "invalid URL '" + calls[i].url + "': " + url.status().message());
      requests.emplace_back();
      continue;
    }
    requests.emplace_back(
        Request(calls[i].method, *url, url->path_and_query, calls[i].body, calls[i].headers));
  }
  if (client_ != nullptr) client_->CloseIdle();
  // Every thread is ready before any request goes: they leave together, as close to at once
  // as threads can, and the pool has no idle connection to share between them.
  std::latch start(static_cast<std::ptrdiff_t>(calls.size()));
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      if (requests[i]) answers[i] = SendConcurrently(std::move(*requests[i]));
    });
  }
  for (std::thread& t : threads) t.join();
  return answers;
}

net::ClientRequest HttpParticipantClient::Request(const std::string& method, const Url& url,
                                                  const std::string& target,
                                                  const std::string& body,
                                                  const Headers& extra) const {
  net::ClientRequest request;
  request.method = method;
  request.url = url;
  request.target = target;
  // A user header of the same name replaces the default Content-Type.
  request.headers.assign(headers_.begin(), headers_.end());
  request.headers.insert(request.headers.end(), extra.begin(), extra.end());
  request.body = body;
  request.timeout = timeout_;
  request.idempotent = false;
  return request;
}

Answer HttpParticipantClient::Send(net::ClientRequest request) {
  // A fresh connection for every request: nothing of one check leaks into the next.
  if (client_ != nullptr) client_->CloseIdle();
  return SendConcurrently(std::move(request));
}

Answer HttpParticipantClient::SendConcurrently(net::ClientRequest request) {
  if (client_ == nullptr) return Answer::None(Answer::Delivery::kUnreachable, client_error_);
  const bool tls = request.url.tls;
  Result<net::ClientAnswer> answer = client_->Send(std::move(request));
  if (answer) {
    Answer out;
    out.http_status = answer->status;
    out.body = std::move(answer->body);
    out.headers = std::move(answer->headers);
    return out;
  }
  if (answer.status().code() != StatusCode::kUnavailable) {
    return Answer::None(Answer::Delivery::kNoAnswer, answer.status().message());
  }
  std::string reason = answer.status().message();
  // The client says "TLS handshake with host:port failed: <OpenSSL's reason>" for a handshake
  // the participant ended, as one requiring client certificates does (a handshake that timed
  // out says "timed out ... in the TLS handshake").
  if (tls && reason.starts_with("TLS handshake with ")) reason += HandshakeFailureHint(tls_);
  return Answer::None(Answer::Delivery::kUnreachable, std::move(reason));
}

}  // namespace settle::checker
