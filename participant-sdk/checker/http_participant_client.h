#pragma once

#include <string>
#include <utility>
#include <vector>

#include "participant_client.h"
#include "settle/common/clock.h"
#include "settle/common/http_url.h"

namespace settle::checker {

// ParticipantClient over HTTP, calling as protocol.md §4 says: POST with the body (GET when it
// is empty), the URL plus gid, trans_type, branch_id and op, Content-Type: application/json
// plus the extra headers (which may replace it). A new connection per request, so that one
// answer cannot leak into the next. Not thread-safe.
class HttpParticipantClient final : public ParticipantClient {
 public:
  // `headers` go with every request, state reads included; `timeout` bounds connecting,
  // sending and waiting for each answer.
  HttpParticipantClient(std::vector<std::pair<std::string, std::string>> headers, Duration timeout);

  Answer CallBranch(const BranchCall& call) override;
  Answer GetState(const std::string& url) override;

 private:
  Answer Send(const std::string& method, const HttpUrl& url, const std::string& target,
              const std::string& body, bool json);

  std::vector<std::pair<std::string, std::string>> headers_;
  Duration timeout_;
};

}  // namespace settle::checker
