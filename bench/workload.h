#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "settle/common/status.h"

namespace settle::bench {

enum class Mode { kSaga, kTcc };

struct Endpoints {
  int coordinator_port = 36789;
  std::string api = "/api/settle";  // the coordinator's API prefix
  int participant_a_port = 0;
  int participant_b_port = 0;
  int accounts = 16;
  std::string run_id;  // makes gids unique across runs
};

// The calls of one benchmark transfer (TransOut at participant A, TransIn at B, amount 1), on
// one client's own keep-alive connections (TCP_NODELAY). Not thread-safe: one per client.
class Workload {
 public:
  Workload(const Endpoints& endpoints, Mode mode, int client);
  ~Workload();

  // One global transaction through the coordinator, answered with wait_result, so that the
  // latency is the whole transaction's. Saga: one submit. TCC: prepare, then per branch
  // registerBranch and its Try, then submit. OK only if it ended succeed.
  Status ThroughCoordinator(std::uint64_t n);

  // The same participant calls without a coordinator: saga, both actions; TCC, both Trys and
  // both Confirms.
  Status Direct(std::uint64_t n);

  std::string GidFor(std::uint64_t n) const;

 private:
  class Connection;
  struct Connections;
  Status PostParticipant(int which, const std::string& path, const std::string& gid,
                         const std::string& branch_id, const char* op, const std::string& body);
  Status PostCoordinator(const std::string& route, const std::string& body);

  Endpoints endpoints_;
  Mode mode_;
  int client_;
  std::string body_out_;
  std::string body_in_;
  std::unique_ptr<Connections> connections_;
};

}  // namespace settle::bench
