#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "settle/core/branch_result.h"

namespace settle::checker {

// What came back from one request to the participant: an HTTP answer, or a gRPC one for a
// branch that is a gRPC method.
struct Answer {
  enum class Delivery {
    kAnswered,     // an HTTP status and body came back
    kNoAnswer,     // connected, but timed out or the connection closed before an answer
    kUnreachable,  // could not connect at all
  };
  Delivery delivery = Delivery::kAnswered;
  int http_status = 0;
  int grpc_code = -1;  // a gRPC method's status code; -1 for an HTTP answer
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // of the answer, as sent
  std::string error;  // why there is no answer, when delivery is not kAnswered

  // No answer, and why.
  static Answer None(Delivery delivery, std::string error);

  bool answered() const { return delivery == Delivery::kAnswered; }
  BranchResult result() const;
  // As the coordinator classifies it (docs/protocol.md §4.2, §10.4); no answer is kUnknown.
  // For the report, on one line: "SUCCESS", "FAILURE (HTTP 409: {...})", "HTTP 500: ...",
  // "FAILURE (gRPC ABORTED: ...)", "no answer (timed out after 3000 ms waiting for
  // 127.0.0.1:8081)".
  std::string Describe() const;
  // The same without the protocol's reading, for a service's own URLs: "HTTP 201: {...}",
  // "no answer (...)".
  std::string DescribeHttp() const;
  // The first header field named `name` (compared case-insensitively), or nullptr.
  const std::string* Header(std::string_view name) const;
};

// `text` on one line (control characters as spaces), cut to `limit` bytes with "...".
std::string OneLine(const std::string& text, std::size_t limit = 200);

}  // namespace settle::checker
