#include "settle/grpc_unary/unary_call.h"

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <future>

#include "settle/core/ascii.h"

namespace settle::grpc_unary {

void StartUnary(const std::shared_ptr<grpc::Channel>& channel, UnaryRequest request,
                std::function<void(UnaryAnswer)> done) {
  // Everything the call needs lives here until its callback has run. `done` is declared
  // first, so that it is destroyed last: what it owns outlives the call's context and stub
  // (CallUnary's waiter learns from that destruction that gRPC is done with the call).
  struct Exchange {
    explicit Exchange(const std::shared_ptr<grpc::Channel>& channel) : stub(channel) {}
    std::function<void(UnaryAnswer)> done;
    grpc::GenericStub stub;
    grpc::ClientContext context;
    grpc::ByteBuffer request;
    grpc::ByteBuffer response;
  };
  auto exchange = std::make_shared<Exchange>(channel);
  exchange->done = std::move(done);
  // A deadline on gRPC's own monotonic clock, which its timers run on.
  exchange->context.set_deadline(gpr_time_add(
      gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(request.timeout.count(), GPR_TIMESPAN)));
  for (const auto& [key, value] : request.metadata) exchange->context.AddMetadata(key, value);
  grpc::Slice slice(request.message);
  exchange->request = grpc::ByteBuffer(&slice, 1);
  exchange->stub.UnaryCall(
      &exchange->context, request.method, grpc::StubOptions(), &exchange->request,
      &exchange->response, [exchange](grpc::Status status) {
        UnaryAnswer answer;
        answer.code = static_cast<int>(status.error_code());
        answer.message = status.error_message();
        std::vector<grpc::Slice> slices;
        if (status.ok() && exchange->response.Dump(&slices).ok()) {
          for (const grpc::Slice& s : slices) {
            answer.response.append(reinterpret_cast<const char*>(s.begin()), s.size());
          }
        }
        exchange->done(std::move(answer));
      });
}

UnaryAnswer CallUnary(const std::shared_ptr<grpc::Channel>& channel, UnaryRequest request) {
  // The answer is handed over when gRPC has destroyed the callback, and with it the exchange
  // and the call's context (the waiter's last copy goes with them), not while the callback
  // still runs: a caller that goes on to tear down channels or end the process then races
  // less of gRPC's own thread finishing the call.
  struct Waiter {
    std::promise<UnaryAnswer> promise;
    UnaryAnswer answer;
    ~Waiter() { promise.set_value(std::move(answer)); }
  };
  auto waiter = std::make_shared<Waiter>();
  std::future<UnaryAnswer> answer = waiter->promise.get_future();
  StartUnary(channel, std::move(request),
             [waiter](UnaryAnswer a) { waiter->answer = std::move(a); });
  waiter.reset();
  return answer.get();
}

void AddBranchMetadata(std::vector<std::pair<std::string, std::string>>& metadata,
                       const BranchWords& words) {
  metadata.emplace_back("dtm-gid", words.gid);
  metadata.emplace_back("dtm-trans_type", words.trans_type);
  metadata.emplace_back("dtm-branch_id", words.branch_id);
  metadata.emplace_back("dtm-op", words.op);
  metadata.emplace_back("dtm-dtm", words.dtm);
  for (const auto& [name, value] : words.extra) metadata.emplace_back("dtm-" + name, value);
}

std::string MetadataKey(std::string_view name) { return AsciiLowercase(name); }

ChannelPool::ChannelPool(ChannelTls tls) : tls_(std::move(tls)) {}

ChannelPool::~ChannelPool() = default;

std::shared_ptr<grpc::Channel> ChannelPool::To(const GrpcTarget& target) {
  std::lock_guard lock(mu_);
  const std::string origin = target.Origin();
  if (by_origin_.size() >= kMaxChannels && !by_origin_.contains(origin)) {
    // Calls to many origins (a participant host each): the channels no call holds now go.
    std::erase_if(by_origin_, [](const auto& entry) { return entry.second.use_count() == 1; });
  }
  std::shared_ptr<grpc::Channel>& slot = by_origin_[origin];
  if (slot == nullptr) {
    std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
    if (target.tls) {
      grpc::SslCredentialsOptions tls;
      tls.pem_root_certs = tls_.pem_roots;
      tls.pem_cert_chain = tls_.pem_cert_chain;
      tls.pem_private_key = tls_.pem_private_key;
      credentials = grpc::SslCredentials(tls);
    }
    slot = grpc::CreateChannel(target.HostPort(), credentials);
  }
  return slot;
}

}  // namespace settle::grpc_unary
