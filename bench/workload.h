#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "settle/async/asio.h"
#include "settle/core/status.h"
#include "settle/core/url.h"
#include "settle/net/client.h"

namespace settle::bench {

class GrpcBranchClient;

// saga: 2 steps that settled calls. tcc: 2 branches. workflow: DTM's workflow mode
// (docs/protocol.md §3.16), 2 steps that the client calls and records itself.
enum class Mode { kSaga, kTcc, kWorkflow };

struct Endpoints {
  int coordinator_port = 36789;
  std::string api = "/api/settle";  // the coordinator's API prefix
  int participant_a_port = 0;
  int participant_b_port = 0;
  int accounts = 16;
  std::string run_id;  // makes gids unique across runs
};

// Participants served as gRPC methods (BenchParticipants with gRPC): the branch URLs settled
// calls are grpc://127.0.0.1:PORT/<service>/<Name>, and the calls the load generator makes
// itself (a TCC's Try, the direct baseline) go through `clients`, which must outlive the
// Workload.
struct GrpcParticipants {
  std::string service;  // "bench.Bank"
  int ports[2] = {0, 0};
  GrpcBranchClient* clients[2] = {nullptr, nullptr};
};

// The calls of one benchmark transfer (TransOut at participant A, TransIn at B, amount 1), as
// one client makes them: one call after the other, each on a keep-alive connection
// (TCP_NODELAY) that `client` lends it. As a client never has two calls in flight, the
// connections `client` keeps open to each server are at most the number of clients. With
// `grpc`, the participants' branches are gRPC methods: settled gets gRPC branch URLs, and this
// client's own participant calls are gRPC calls; it still talks to settled over HTTP.
//
// Thread-safety: the calls of one Workload are awaited one at a time (one per benchmark
// client); `client` is shared and must outlive the Workload.
class Workload {
 public:
  Workload(net::Client& client, const Endpoints& endpoints, Mode mode, int client_index,
           const GrpcParticipants* grpc = nullptr);

  // One global transaction through the coordinator, awaited to its end (a saga's and a TCC's
  // submit with wait_result), so that the latency is the whole transaction's. Saga: one
  // submit. TCC: prepare, then per branch registerBranch and its Try, then submit. Workflow, as
  // the SDK's Workflows runs one whose two steps call URLs: prepareWorkflow, then per step its
  // action call and the registerBranch that records it (succeed, the answer's body as the
  // step's output), then the submit that records its end (a 200: stored succeed). OK only if
  // it ended succeed.
  asio::awaitable<Status> ThroughCoordinator(std::uint64_t n);

  // The same participant calls without a coordinator: saga and workflow, both actions; TCC,
  // both Trys and both Confirms.
  asio::awaitable<Status> Direct(std::uint64_t n);

  std::string GidFor(std::uint64_t n) const;

 private:
  // These build the request at once (copying what they need) and return the awaitable that
  // sends it: nothing it runs refers to their arguments, except `answer_body`, which must
  // outlive the awaitable.
  // Branch `name` (TransOutTry, ...) of participant `which`, over HTTP (POST /api/<name>) or
  // gRPC. With `answer_body`, an HTTP call's answer body is stored there (a gRPC call's answer
  // message is not read, as settled does not read it: `*answer_body` stays as it was).
  asio::awaitable<Status> CallParticipant(int which, std::string_view name, const std::string& gid,
                                          std::string_view branch_id, std::string_view op,
                                          const std::string& body,
                                          std::string* answer_body = nullptr);
  // The URL settled calls branch `name` of participant `which` at.
  std::string BranchUrl(int which, std::string_view name) const;
  asio::awaitable<Status> PostCoordinator(std::string_view route, const std::string& body);
  // POSTs the request; OK on a 200, its body then stored in `*answer_body` if not null.
  // Errors start with `what` (the route or branch path).
  asio::awaitable<Status> Post(net::ClientRequest request, std::string what,
                               std::string* answer_body = nullptr);

  net::Client& client_;
  Endpoints endpoints_;
  Mode mode_;
  int client_index_;
  std::optional<GrpcParticipants> grpc_;
  Url coordinator_;
  Url participant_[2];
  std::string body_out_;
  std::string body_in_;
  // What follows the gid in a saga's submit: its steps and payloads.
  std::string saga_tail_;
  // What follows the TCC head in each branch's registerBranch: id, data, confirm and cancel.
  std::string registration_tail_[2];
  // What follows the workflow head in its prepareWorkflow: its name and input (custom_data),
  // and its resume URL, which nothing serves: a benchmark's workflow ends in its own run, well
  // before settled's first resume (retry_interval after its prepare or its last record).
  std::string workflow_tail_;
};

}  // namespace settle::bench
