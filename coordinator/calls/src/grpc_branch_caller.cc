#include "settle/calls/grpc_branch_caller.h"

#include <cctype>
#include <chrono>
#include <exception>
#include <map>
#include <mutex>
#include <utility>

#include "not_sent.h"
#include "settle/async/await.h"
#include "settle/core/file_text.h"
#include "settle/core/grpc_codes.h"
#include "settle/core/grpc_target.h"
#include "settle/engine/type_rules.h"
#include "settle/grpc_unary/call_signing.h"
#include "settle/grpc_unary/unary_call.h"

namespace settle::calls {
namespace {

engine::BranchOutcome Unknown(std::string detail) {
  return engine::BranchOutcome{BranchResult::kUnknown, 0, std::move(detail)};
}

}  // namespace

GrpcBranchCaller::GrpcBranchCaller(const Clock& clock, GrpcBranchCallerOptions options)
    : clock_(clock), options_(std::move(options)) {
  // settled checked the files when it started (its HTTP client reads them too).
  const auto text_of = [](const std::string& file) {
    if (file.empty()) return std::string();
    Result<std::string> read = ReadFileText(file);
    return read ? std::move(*read) : std::string();
  };
  channels_ = std::make_unique<grpc_unary::ChannelPool>(
      grpc_unary::ChannelTls{.pem_roots = text_of(options_.ca_file),
                             .pem_cert_chain = text_of(options_.client_cert_file),
                             .pem_private_key = text_of(options_.client_key_file)});
}

GrpcBranchCaller::~GrpcBranchCaller() = default;

asio::awaitable<std::vector<engine::BranchOutcome>> GrpcBranchCaller::CallAll(
    std::vector<engine::BranchCall> calls) {
  return CallEach(std::move(calls),
                  [this](engine::BranchCall call) { return Call(std::move(call)); });
}

asio::awaitable<engine::BranchOutcome> GrpcBranchCaller::Call(engine::BranchCall call) {
  const MonoTime start = clock_.Monotonic();
  engine::BranchOutcome outcome;
  try {
    Result<GrpcTarget> target = ParseGrpcTarget(call.url);
    if (!target) {
      co_return Unknown("invalid branch URL '" + call.url + "': " + target.status().message());
    }
    // Checked when the transaction named a gRPC participant, or registered one; rows stored
    // before those checks existed are refused here, and retried as an error.
    if (std::string why = WhyNotSent(call); !why.empty()) co_return Unknown(std::move(why));
    grpc_unary::UnaryRequest request{
        .method = target->method, .message = std::move(call.data), .timeout = call.timeout};
    for (const auto& [name, value] : call.headers) {
      request.metadata.emplace_back(grpc_unary::MetadataKey(name), value);
    }
    grpc_unary::BranchWords words{.gid = call.gid,
                                  .trans_type = std::string(ToString(call.trans_type)),
                                  .branch_id = call.branch_id,
                                  .op = std::string(engine::WireOp(call)),
                                  .dtm = options_.coordinator};
    if (engine::RulesOf(call.trans_type).sends_phase2_url) {
      words.extra.emplace_back("phase2_url", call.url);
    }
    grpc_unary::AddBranchMetadata(request.metadata, words);
    if (options_.signing_key) {
      const Status signed_ =
          grpc_unary::SignUnary(request, *target, *options_.signing_key,
                                ToUnixMillis(clock_.Now()) / 1000, options_.sign_authority);
      if (!signed_.ok()) co_return Unknown("signing the call: " + signed_.message());
    }
    std::shared_ptr<grpc::Channel> channel = channels_->To(*target);
    const grpc_unary::UnaryAnswer answer =
        co_await async::AwaitCallback<grpc_unary::UnaryAnswer>([&channel, &request](auto done) {
          grpc_unary::StartUnary(
              channel, std::move(request),
              [done = std::move(done)](grpc_unary::UnaryAnswer a) mutable { done(std::move(a)); });
        });
    const int code = answer.code;
    outcome.grpc_code = code;
    outcome.result = ClassifyGrpcCode(code);
    if (outcome.result != BranchResult::kSuccess) {
      std::string message = answer.message.substr(0, 200);
      outcome.detail = "gRPC " + GrpcCodeName(code) + (message.empty() ? "" : ": " + message);
      // Retried as any error; the log, last_error and the stuck alert say why.
      // Only a refusal worded as docs/protocol.md §4.9 says ("signature: <reason>") is blamed
      // on the signature; UNAUTHENTICATED for the participant's own reasons is not.
      if (code == static_cast<int>(GrpcCode::kUnauthenticated) && options_.signing_key &&
          answer.message.starts_with("signature:")) {
        outcome.detail = "the participant refuses settled's signature (key " +
                         options_.signing_key->keyid() + "): " + outcome.detail;
      }
    }
  } catch (const std::exception& e) {
    outcome = Unknown(std::string("internal error calling the branch: ") + e.what());
  }
  outcome.elapsed =
      std::chrono::duration_cast<std::chrono::microseconds>(clock_.Monotonic() - start);
  co_return outcome;
}

asio::awaitable<std::vector<engine::BranchOutcome>> SchemeRoutingCaller::CallAll(
    std::vector<engine::BranchCall> calls) {
  std::vector<engine::BranchCall> to_http;
  std::vector<engine::BranchCall> to_grpc;
  std::vector<std::pair<bool, std::size_t>> where;  // (gRPC?, index in its list)
  for (engine::BranchCall& call : calls) {
    const bool grpc = LooksLikeGrpcTarget(call.url);
    std::vector<engine::BranchCall>& list = grpc ? to_grpc : to_http;
    where.emplace_back(grpc, list.size());
    list.push_back(std::move(call));
  }
  std::vector<engine::BranchOutcome> from_http;
  std::vector<engine::BranchOutcome> from_grpc;
  if (to_grpc.empty()) co_return co_await http_.CallAll(std::move(to_http));
  if (to_http.empty()) co_return co_await grpc_.CallAll(std::move(to_grpc));
  std::vector<asio::awaitable<std::vector<engine::BranchOutcome>>> both;
  both.push_back(http_.CallAll(std::move(to_http)));
  both.push_back(grpc_.CallAll(std::move(to_grpc)));
  const asio::any_io_executor executor = co_await asio::this_coro::executor;
  std::vector<std::vector<engine::BranchOutcome>> results =
      co_await async::AwaitAll(executor, std::move(both));
  std::vector<engine::BranchOutcome> outcomes;
  outcomes.reserve(where.size());
  for (const auto& [grpc, index] : where) {
    outcomes.push_back(std::move(results[grpc ? 1 : 0][index]));
  }
  co_return outcomes;
}

}  // namespace settle::calls
