#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "settle/common/status.h"
#include "settle/sdk/barrier.h"
#include "settle/sdk/branch_request.h"

namespace settle::sdk {

struct ParticipantOptions {
  // Requests handled at once: each blocks a thread while its handler runs. Idle keep-alive
  // connections hold no thread.
  std::size_t threads = 32;
  std::size_t max_body_bytes = 1 << 20;
  // How long an idle keep-alive connection stays open.
  std::chrono::seconds keep_alive_timeout{5};
};

using BranchHandler = std::function<BranchReply(const BranchRequest&)>;

// A plain HTTP route of the participant's own (balances, health), outside the protocol.
struct HttpRequest {
  std::string method;
  std::string path;
  std::multimap<std::string, std::string> params;
  std::string body;
};
struct HttpReply {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
};
using RouteHandler = std::function<HttpReply(const HttpRequest&)>;

// A participant's HTTP server. Branch routes answer GET and POST; the SDK reads gid,
// trans_type, branch_id and op from the query (400 naming the parameter when one is missing
// or invalid) and turns the handler's BranchReply into the protocol's answer. A handler that
// throws answers 500, which the coordinator retries.
class Participant {
 public:
  explicit Participant(ParticipantOptions options = {});
  ~Participant();  // Stop()

  // A branch URL for any op.
  Participant& OnBranch(const std::string& path, BranchHandler handler);
  // A branch URL for one op: a call with another op is refused with 400.
  Participant& OnTry(const std::string& path, BranchHandler handler);
  Participant& OnConfirm(const std::string& path, BranchHandler handler);
  Participant& OnCancel(const std::string& path, BranchHandler handler);
  Participant& OnAction(const std::string& path, BranchHandler handler);
  Participant& OnCompensate(const std::string& path, BranchHandler handler);

  Participant& OnGet(const std::string& pattern, RouteHandler handler);
  Participant& OnPost(const std::string& pattern, RouteHandler handler);

  // Binds host:port (0: any free port) and serves on background threads; returns the port.
  Result<int> Start(const std::string& host, int port);
  // Stops accepting, lets requests in progress answer, and closes every connection.
  // Idempotent.
  void Stop();

 private:
  Participant& OnOp(const std::string& path, std::optional<BranchOp> op, BranchHandler handler);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A branch handler whose business code runs inside `barrier` (see Barrier::Call).
using GuardedBusiness = std::function<Status(const BranchRequest&, BarrierTransaction&)>;
BranchHandler Guarded(Barrier& barrier, GuardedBusiness business);

}  // namespace settle::sdk
