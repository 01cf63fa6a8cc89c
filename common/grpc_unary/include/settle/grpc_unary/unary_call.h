#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "settle/core/clock.h"
#include "settle/core/grpc_target.h"

namespace grpc {
class Channel;
}

namespace settle::grpc_unary {

// One unary call of a method that takes and answers bytes, as DTM's gRPC branches do
// (docs/protocol.md §10.4): the request message's bytes in, the status and the answer's bytes
// out. What settled, the SDK's gRPC client, settle-check and the load generator call gRPC
// branches with.
struct UnaryRequest {
  std::string method;                                         // "/package.Service/Method"
  std::vector<std::pair<std::string, std::string>> metadata;  // keys lowercase
  std::string message;
  Duration timeout{0};
};

struct UnaryAnswer {
  int code = 0;          // gRPC's status code (settle/core/grpc_codes.h)
  std::string message;   // the status's message
  std::string response;  // the answer message's bytes, when the code is OK
};

// Starts the call on `channel`; `done` runs once, on one of gRPC's threads, with the answer
// (DEADLINE_EXCEEDED when none came within the timeout).
void StartUnary(const std::shared_ptr<grpc::Channel>& channel, UnaryRequest request,
                std::function<void(UnaryAnswer)> done);

// The same, waiting for the answer.
UnaryAnswer CallUnary(const std::shared_ptr<grpc::Channel>& channel, UnaryRequest request);

// The words of a branch call, as the dtm-* metadata carries them.
struct BranchWords {
  std::string gid;
  std::string trans_type;
  std::string branch_id;
  std::string op;
  std::string dtm;  // the coordinator's address, as DTM sends it
  std::vector<std::pair<std::string, std::string>> extra;  // sent as dtm-<name>: phase2_url
};

// `metadata` plus dtm-gid, dtm-trans_type, dtm-branch_id, dtm-op, dtm-dtm and each extra word.
void AddBranchMetadata(std::vector<std::pair<std::string, std::string>>& metadata,
                       const BranchWords& words);

// `name` lowercased (ASCII): what gRPC metadata keys must be.
std::string MetadataKey(std::string_view name);

// What a channel to a grpcs:// origin trusts and presents, as PEM texts.
struct ChannelTls {
  std::string pem_roots;  // the CAs servers are verified against; empty: the system's store
  // A client certificate chain and its key, presented to servers that ask (mutual TLS);
  // empty: none.
  std::string pem_cert_chain;
  std::string pem_private_key;
};

// One channel per origin (grpc://host:port, grpcs://host:port), made on first use and reused;
// grpcs:// origins verified against `tls.pem_roots` (empty: the system's CA store), with
// `tls`'s client certificate when it has one. With kMaxChannels origins kept, a new one first
// drops the channels no call holds (their connections close), so that calls to many hosts
// leave a bounded number of channels.
// Thread-safe.
class ChannelPool {
 public:
  static constexpr std::size_t kMaxChannels = 1024;

  explicit ChannelPool(ChannelTls tls);
  explicit ChannelPool(std::string pem_roots = "")
      : ChannelPool(ChannelTls{std::move(pem_roots)}) {}
  ~ChannelPool();
  ChannelPool(const ChannelPool&) = delete;
  ChannelPool& operator=(const ChannelPool&) = delete;

  std::shared_ptr<grpc::Channel> To(const GrpcTarget& target);

 private:
  ChannelTls tls_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<grpc::Channel>> by_origin_;
};

}  // namespace settle::grpc_unary
