#pragma once

#include <string>

#include "settle/core/status.h"

namespace settle::coordinator {

struct HttpAnswer {
  int status = 200;
  std::string body;
};

// The one place where a Status becomes an HTTP answer (docs/protocol.md §1.2):
// OK 200 {"dtm_result":"SUCCESS"}; InvalidArgument 400; NotFound, AlreadyExists and Conflict
// 409 FAILURE; Pending 425 ONGOING; Unavailable 503; Internal 500. Failures carry "message".
HttpAnswer ToHttpAnswer(const Status& status);

// 200 with `json_body` as it is.
HttpAnswer JsonAnswer(std::string json_body);

}  // namespace settle::coordinator
