#include "options_codec.h"

#include <algorithm>
#include <charconv>
#include <exception>
#include <limits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "settle/core/json_text.h"

namespace settle::storage {
namespace {

using nlohmann::json;

Status Corrupt(std::string_view what) {
  return Status::Internal("stored options are corrupt: " + std::string(what));
}

// The value of `key`, or null when it is absent.
const json& Field(const json& object, const char* key) {
  static const json kNull;
  auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

Status ReadMillis(const json& object, const char* key, Duration* out) {
  const json& v = Field(object, key);
  if (v.is_null()) return Status::Ok();
  if (!v.is_number_integer()) return Corrupt(std::string(key) + " is not an integer");
  *out = Duration(v.get<std::int64_t>());
  return Status::Ok();
}

bool ToInt(const json& v, int* out) {
  if (!v.is_number_integer()) return false;
  const std::int64_t n = v.get<std::int64_t>();
  if (n < std::numeric_limits<int>::min() || n > std::numeric_limits<int>::max()) return false;
  *out = static_cast<int>(n);
  return true;
}

bool ParseIntKey(std::string_view s, int* out) {
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, *out);
  return ec == std::errc() && ptr == end && !s.empty();
}

Status ReadOrders(const json& object, std::map<int, std::vector<int>>* out) {
  const json& v = Field(object, "orders");
  if (v.is_null()) return Status::Ok();
  if (!v.is_object()) return Corrupt("orders is not an object");
  for (const auto& [key, deps] : v.items()) {
    int step = 0;
    if (!ParseIntKey(key, &step)) return Corrupt("orders key '" + key + "' is not an integer");
    if (!deps.is_array()) return Corrupt("orders[" + key + "] is not an array");
    std::vector<int>& list = (*out)[step];
    for (const json& dep : deps) {
      int n = 0;
      if (!ToInt(dep, &n)) return Corrupt("orders[" + key + "] holds a non-integer");
      list.push_back(n);
    }
  }
  return Status::Ok();
}

Status ReadHeaders(const json& object, std::map<std::string, std::string>* out) {
  const json& v = Field(object, "branch_headers");
  if (v.is_null()) return Status::Ok();
  if (!v.is_object()) return Corrupt("branch_headers is not an object");
  for (const auto& [name, value] : v.items()) {
    if (!value.is_string()) return Corrupt("branch_headers[" + name + "] is not a string");
    (*out)[name] = value.get<std::string>();
  }
  return Status::Ok();
}

Result<TransOptions> Decode(std::string_view text) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Corrupt("not JSON");
  if (!j.is_object()) return Corrupt("not a JSON object");
  TransOptions o;
  if (Status s = ReadMillis(j, "timeout_to_fail", &o.timeout_to_fail); !s.ok()) return s;
  if (Status s = ReadMillis(j, "request_timeout", &o.request_timeout); !s.ok()) return s;
  if (Status s = ReadMillis(j, "retry_interval", &o.retry_interval); !s.ok()) return s;
  if (Status s = ReadMillis(j, "delay", &o.delay); !s.ok()) return s;
  if (const json& v = Field(j, "retry_limit"); !v.is_null() && !ToInt(v, &o.retry_limit)) {
    return Corrupt("retry_limit is not an int");
  }
  if (const json& v = Field(j, "concurrent"); !v.is_null()) {
    if (!v.is_boolean()) return Corrupt("concurrent is not a boolean");
    o.concurrent = v.get<bool>();
  }
  if (const json& v = Field(j, "pause_after"); !v.is_null()) {
    int limit = 0;
    if (!ToInt(v, &limit) || limit < 0) return Corrupt("pause_after is not a count");
    o.pause_after = limit;
  }
  if (Status s = ReadOrders(j, &o.orders); !s.ok()) return s;
  if (Status s = ReadHeaders(j, &o.branch_headers); !s.ok()) return s;
  if (const json& v = Field(j, "custom_data"); !v.is_null()) {
    if (!v.is_string()) return Corrupt("custom_data is not a string");
    o.custom_data = v.get<std::string>();
  }
  if (const json& v = Field(j, "request_fingerprint"); !v.is_null()) {
    if (!v.is_string()) return Corrupt("request_fingerprint is not a string");
    o.request_fingerprint = v.get<std::string>();
  }
  if (const json& v = Field(j, "workflow_name"); !v.is_null()) {
    if (!v.is_string()) return Corrupt("workflow_name is not a string");
    o.workflow_name = v.get<std::string>();
  }
  return o;
}

}  // namespace

// Written by hand rather than through a document (a saga's insert built about 60 allocations
// here, docs/benchmarks.md): the members in name order, as nlohmann::json's dump() writes an
// object, so that the text is what it always was.
Result<std::string> EncodeOptions(const TransOptions& options) {
  std::string out;
  out.reserve(256 + options.custom_data.size() + options.request_fingerprint.size());
  const auto refuse = [](const char* field) {
    return Status::InvalidArgument(std::string("options: ") + field +
                                   " is not valid UTF-8 (JSON cannot carry it)");
  };
  out += R"({"branch_headers":{)";
  bool first = true;
  for (const auto& [name, value] : options.branch_headers) {
    if (!first) out += ',';
    first = false;
    if (!AppendJsonString(out, name)) return refuse("a header's name");
    out += ':';
    if (!AppendJsonString(out, value)) return refuse("a header's value");
  }
  out += R"(},"concurrent":)";
  out += options.concurrent ? "true" : "false";
  out += R"(,"custom_data":)";
  if (!AppendJsonString(out, options.custom_data)) return refuse("custom_data");
  out += R"(,"delay":)";
  AppendJsonNumber(out, options.delay.count());
  out += R"(,"orders":{)";
  // An object's members in name order: "10" before "2".
  std::vector<std::pair<std::string, const std::vector<int>*>> orders;
  orders.reserve(options.orders.size());
  for (const auto& [step, deps] : options.orders) orders.emplace_back(std::to_string(step), &deps);
  std::sort(orders.begin(), orders.end());
  first = true;
  for (const auto& [step, deps] : orders) {
    if (!first) out += ',';
    first = false;
    out += '"';
    out += step;
    out += R"(":[)";
    for (std::size_t i = 0; i < deps->size(); ++i) {
      if (i > 0) out += ',';
      AppendJsonNumber(out, (*deps)[i]);
    }
    out += ']';
  }
  out += '}';
  if (options.pause_after) {
    out += R"(,"pause_after":)";
    AppendJsonNumber(out, *options.pause_after);
  }
  if (!options.request_fingerprint.empty()) {
    out += R"(,"request_fingerprint":)";
    if (!AppendJsonString(out, options.request_fingerprint)) return refuse("request_fingerprint");
  }
  out += R"(,"request_timeout":)";
  AppendJsonNumber(out, options.request_timeout.count());
  out += R"(,"retry_interval":)";
  AppendJsonNumber(out, options.retry_interval.count());
  out += R"(,"retry_limit":)";
  AppendJsonNumber(out, options.retry_limit);
  out += R"(,"timeout_to_fail":)";
  AppendJsonNumber(out, options.timeout_to_fail.count());
  if (!options.workflow_name.empty()) {
    out += R"(,"workflow_name":)";
    if (!AppendJsonString(out, options.workflow_name)) return refuse("workflow_name");
  }
  out += '}';
  return out;
}

Result<TransOptions> DecodeOptions(std::string_view json_text) {
  try {
    return Decode(json_text);
  } catch (const std::exception& e) {
    return Corrupt(e.what());
  }
}

}  // namespace settle::storage
