#pragma once

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "settle/core/status.h"
#include "settle/sdk/participant.h"

namespace settle::notify {

// An unreliable receiver of notifications, and a sink for settled's alert webhook:
// - POST /api/notify, a message's step: answers 503 to the first `fail_first` deliveries of
//   each message, then accepts it (SUCCESS) and prints "receiver: notified ...";
// - POST /alerts, settled's --alert-webhook: prints "receiver: alert <event> gid=<gid> ...";
// - GET /api/received: {"notifications":[{"gid","body","deliveries"}],"alerts":[...]}.
// No barrier: a best-effort notification may arrive twice (a lost answer), and showing it
// twice is acceptable here. Thread-safe.
class Receiver {
 public:
  explicit Receiver(int fail_first) : fail_first_(fail_first) {}
  ~Receiver() { Stop(); }

  // Listens on host:port (0: any free port); returns the port.
  Result<int> Start(const std::string& host, int port);
  void Stop() { participant_.Stop(); }

 private:
  sdk::BranchReply Notify(const sdk::BranchRequest& request);
  sdk::HttpReply Alert(const sdk::HttpRequest& request);
  sdk::HttpReply Received();

  const int fail_first_;
  std::mutex mu_;
  std::map<std::string, int> deliveries_;                           // by gid
  std::vector<std::pair<std::string, std::string>> notifications_;  // gid, body
  std::vector<std::string> alerts_;                                 // their JSON bodies
  // Last: stops before what its handlers use goes.
  sdk::Participant participant_;
};

}  // namespace settle::notify
