#include "settle/sdk/call_trace.h"

#include "settle/core/ascii.h"

namespace settle::sdk {

TraceContext ReadCallTrace(const std::multimap<std::string, std::string>& fields) {
  const std::string* traceparent = nullptr;
  std::string tracestate;
  for (const auto& [name, value] : fields) {
    if (EqualsIgnoreAsciiCase(name, kTraceparentHeader)) {
      // Two are no more trustworthy than none: which one would name the caller's span?
      if (traceparent != nullptr) return {};
      traceparent = &value;
    } else if (EqualsIgnoreAsciiCase(name, kTracestateHeader) && !value.empty()) {
      if (!tracestate.empty()) tracestate += ',';
      tracestate += value;
    }
  }
  if (traceparent == nullptr) return {};
  return ParseTraceparent(*traceparent, tracestate).value_or(TraceContext{});
}

}  // namespace settle::sdk
