#include "settle/sdk/call_trace.h"

namespace settle::sdk {

TraceContext ReadCallTrace(const std::multimap<std::string, std::string>& fields) {
  return ReadTraceHeaders(fields).value_or(TraceContext{});
}

}  // namespace settle::sdk
