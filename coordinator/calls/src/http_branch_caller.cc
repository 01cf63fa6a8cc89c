#include "settle/calls/http_branch_caller.h"

#include <chrono>
#include <exception>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "not_sent.h"
#include "settle/async/await.h"
#include "settle/core/url.h"
#include "settle/engine/type_rules.h"
#include "settle/net/message.h"
#include "settle/net/request_signing.h"

namespace settle::calls {
namespace {

// Whether a 401's body refuses the signature, as docs/protocol.md §4.9 words a refusal:
// {"message":"signature: <reason>"}. A 401 for another reason (the participant's own
// authentication of the branch headers, say) is not blamed on the signature.
bool IsSignatureRefusal(const std::string& body) {
  const nlohmann::json answer = nlohmann::json::parse(body, nullptr, false);
  if (!answer.is_object()) return false;
  const auto message = answer.find("message");
  return message != answer.end() && message->is_string() &&
         message->get_ref<const std::string&>().starts_with("signature:");
}

engine::BranchOutcome Unknown(std::string detail) {
  return engine::BranchOutcome{BranchResult::kUnknown, 0, std::move(detail)};
}

}  // namespace

HttpBranchCaller::HttpBranchCaller(net::Client& client, const Clock& clock,
                                   HttpBranchCallerOptions options)
    : client_(client), clock_(clock), options_(options) {}

asio::awaitable<std::vector<engine::BranchOutcome>> HttpBranchCaller::CallAll(
    std::vector<engine::BranchCall> calls) {
  return CallEach(std::move(calls),
                  [this](engine::BranchCall call) { return Call(std::move(call)); });
}

asio::awaitable<engine::BranchOutcome> HttpBranchCaller::Call(engine::BranchCall call) {
  const MonoTime start = clock_.Monotonic();
  engine::BranchOutcome outcome;
  try {
    Result<Url> url = ParseUrl(call.url);
    if (!url) {
      co_return Unknown("invalid branch URL '" + call.url + "': " + url.status().message());
    }
    if (std::string why = WhyNotSent(call); !why.empty()) co_return Unknown(std::move(why));
    net::ClientRequest request;
    // A call without a body is a GET, but where the type always posts (XA's phase 2, as DTM
    // calls it: its participants serve POST only).
    const bool posts = !call.data.empty() || engine::RulesOf(call.trans_type).posts_always;
    request.method = posts ? "POST" : "GET";
    request.target = url->TargetWith({{"gid", call.gid},
                                      {"trans_type", ToString(call.trans_type)},
                                      {"branch_id", call.branch_id},
                                      {"op", engine::WireOp(call)}});
    request.url = std::move(*url);
    request.headers.assign(call.headers.begin(), call.headers.end());
    request.body = std::move(call.data);
    if (options_.signing_key) {
      const Status signed_ =
          net::SignRequest(request, *options_.signing_key, ToUnixMillis(clock_.Now()) / 1000,
                           options_.sign_authority);
      if (!signed_.ok()) co_return Unknown("signing the call: " + signed_.message());
    }
    request.timeout = call.timeout;
    request.max_answer_bytes = options_.max_response_bytes;
    Result<net::ClientAnswer> answer = co_await client_.Send(std::move(request));
    if (!answer) {
      outcome = Unknown(answer.status().code() == StatusCode::kInvalidArgument
                            ? "invalid branch " + answer.status().message()
                            : answer.status().message());
    } else {
      outcome.http_status = answer->status;
      outcome.result = ClassifyBranchResponse(answer->status, answer->body);
      if (outcome.result != BranchResult::kSuccess) {
        outcome.detail = net::DescribeAnswer(answer->status, answer->body);
        // Retried as any error; the log, last_error and the stuck alert say why.
        if (answer->status == 401 && options_.signing_key && IsSignatureRefusal(answer->body)) {
          outcome.detail = "the participant refuses settled's signature (key " +
                           options_.signing_key->keyid() + "): " + outcome.detail;
        }
      }
    }
  } catch (const std::exception& e) {
    outcome = Unknown(std::string("internal error calling the branch: ") + e.what());
  }
  outcome.elapsed =
      std::chrono::duration_cast<std::chrono::microseconds>(clock_.Monotonic() - start);
  co_return outcome;
}

}  // namespace settle::calls
