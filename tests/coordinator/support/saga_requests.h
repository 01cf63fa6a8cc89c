#pragma once

#include <string>

#include "settle/engine/requests.h"

namespace settle::testing {

// A saga submit of `steps` steps, each calling http://p/action and compensated by
// http://p/compensate with the body {"amount":30}, as the driver tests send it.
inline engine::SubmitRequest Saga(const std::string& gid, int steps,
                                  engine::RequestOptions options = {}) {
  engine::SubmitRequest r{gid, TransType::kSaga, options, {}};
  for (int i = 0; i < steps; ++i) {
    r.steps.push_back({"http://p/action", "http://p/compensate"});
    r.payloads.push_back(R"({"amount":30})");
  }
  return r;
}

}  // namespace settle::testing
