#include "settle/core/http_status.h"

#include <nlohmann/json.hpp>

namespace settle {

HttpAnswer ToHttpAnswer(const Status& status) {
  using nlohmann::json;
  json body;
  int code = 200;
  switch (status.code()) {
    case StatusCode::kOk:
      body = {{"dtm_result", "SUCCESS"}};
      break;
    case StatusCode::kInvalidArgument:
      code = 400;
      break;
    case StatusCode::kNotFound:
    case StatusCode::kAlreadyExists:
    case StatusCode::kConflict:
      code = 409;
      body["dtm_result"] = "FAILURE";
      break;
    case StatusCode::kPending:
      code = 425;
      body["dtm_result"] = "ONGOING";
      break;
    case StatusCode::kUnavailable:
      code = 503;
      break;
    case StatusCode::kInternal:
      code = 500;
      break;
    case StatusCode::kResourceExhausted:
      code = 429;
      break;
  }
  if (!status.ok()) body["message"] = status.message();
  return {code, body.dump(-1, ' ', false, json::error_handler_t::replace)};
}

HttpAnswer JsonAnswer(std::string json_body) { return {200, std::move(json_body)}; }

}  // namespace settle
