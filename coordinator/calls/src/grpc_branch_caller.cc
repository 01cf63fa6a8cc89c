#include "settle/calls/grpc_branch_caller.h"

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <cctype>
#include <chrono>
#include <exception>
#include <map>
#include <mutex>
#include <utility>

#include "settle/async/await.h"
#include "settle/core/file_text.h"
#include "settle/core/grpc_codes.h"
#include "settle/core/grpc_target.h"

namespace settle::calls {
namespace {

engine::BranchOutcome Unknown(std::string detail) {
  return engine::BranchOutcome{BranchResult::kUnknown, 0, std::move(detail)};
}

std::string Lowercase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

struct GrpcBranchCaller::Channels {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<grpc::Channel>> by_origin;
  std::string roots;  // PEM, read once; empty: the system's
};

GrpcBranchCaller::GrpcBranchCaller(const Clock& clock, GrpcBranchCallerOptions options)
    : clock_(clock), options_(std::move(options)), channels_(std::make_unique<Channels>()) {
  // settled checked the file when it started (its HTTP client reads it too).
  if (!options_.ca_file.empty()) {
    if (Result<std::string> roots = ReadFileText(options_.ca_file)) channels_->roots = *roots;
  }
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
    std::shared_ptr<grpc::Channel> channel;
    {
      std::lock_guard lock(channels_->mu);
      std::shared_ptr<grpc::Channel>& slot = channels_->by_origin[target->Origin()];
      if (slot == nullptr) {
        std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
        if (target->tls) {
          grpc::SslCredentialsOptions tls;
          tls.pem_root_certs = channels_->roots;
          credentials = grpc::SslCredentials(tls);
        }
        slot = grpc::CreateChannel(target->HostPort(), credentials);
      }
      channel = slot;
    }
    // Everything the call needs lives here until its callback has run.
    struct Exchange {
      grpc::ClientContext context;
      grpc::ByteBuffer request;
      grpc::ByteBuffer response;
    };
    auto exchange = std::make_shared<Exchange>();
    exchange->context.set_deadline(gpr_time_add(
        gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(call.timeout.count(), GPR_TIMESPAN)));
    for (const auto& [name, value] : call.headers) {
      // Checked when the transaction named a gRPC participant, or registered one; rows stored
      // before that check existed are refused here, and retried as an error.
      if (!IsGrpcMetadataHeader(name, value)) {
        co_return Unknown("branch header " + name + " cannot be sent as gRPC metadata");
      }
      exchange->context.AddMetadata(Lowercase(name), value);
    }
    exchange->context.AddMetadata("dtm-gid", call.gid);
    exchange->context.AddMetadata("dtm-trans_type", std::string(ToString(call.trans_type)));
    exchange->context.AddMetadata("dtm-branch_id", call.branch_id);
    exchange->context.AddMetadata("dtm-op", std::string(ToString(call.op)));
    exchange->context.AddMetadata("dtm-dtm", options_.coordinator);
    if (call.trans_type == TransType::kXa) {
      exchange->context.AddMetadata("dtm-phase2_url", call.url);
    }
    grpc::Slice slice(call.data);
    exchange->request = grpc::ByteBuffer(&slice, 1);
    grpc::GenericStub stub(channel);
    const grpc::Status status =
        co_await async::AwaitCallback<grpc::Status>([&stub, &exchange, &target](auto done) {
          stub.UnaryCall(
              &exchange->context, target->method, grpc::StubOptions(), &exchange->request,
              &exchange->response,
              [exchange, done = std::move(done)](grpc::Status s) mutable { done(std::move(s)); });
        });
    const int code = static_cast<int>(status.error_code());
    outcome.result = ClassifyGrpcCode(code);
    if (outcome.result != BranchResult::kSuccess) {
      std::string message = status.error_message().substr(0, 200);
      outcome.detail = "gRPC " + GrpcCodeName(code) + (message.empty() ? "" : ": " + message);
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
