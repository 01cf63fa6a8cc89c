#pragma once

#include <string>
#include <utility>
#include <vector>

#include "settle/core/status.h"

namespace settle {

struct HttpAnswer {
  int status = 200;
  std::string body;
  // More header lines (name, value), each free of CR and LF.
  std::vector<std::pair<std::string, std::string>> headers = {};
};

// The one place where a Status becomes an HTTP answer, for settled's API (docs/protocol.md
// §1.2) and the SDK's participant server (§6.2) alike:
//
//   OK                                 200 {"dtm_result":"SUCCESS"}
//   InvalidArgument                    400 {"message":...}
//   NotFound, AlreadyExists, Conflict  409 {"dtm_result":"FAILURE","message":...}
//   Pending                            425 {"dtm_result":"ONGOING","message":...}
//   Unavailable                        503 {"message":...}
//   Internal                           500 {"message":...}
//   ResourceExhausted                  429 {"message":...}
//
// Text that is not valid UTF-8 is replaced, so the body is always valid JSON.
HttpAnswer ToHttpAnswer(const Status& status);

// 200 with `json_body` as it is.
HttpAnswer JsonAnswer(std::string json_body);

}  // namespace settle
