#include "settle/sdk/trans_options.h"

#include "settle/core/trace_context.h"

namespace settle::sdk {

std::vector<std::pair<std::string, std::string>> TraceFields(std::string_view traceparent,
                                                             std::string_view tracestate) {
  if (traceparent.empty()) return {};
  const std::optional<TraceContext> trace = ParseTraceparent(traceparent, tracestate);
  if (!trace) return {};
  // Written again from what was read rather than passed on as given: a later version's
  // trailing fields are not checked, and could hold bytes no header may carry.
  std::vector<std::pair<std::string, std::string>> fields = {
      {std::string(kTraceparentHeader), trace->Traceparent()}};
  if (!trace->state.empty()) fields.emplace_back(kTracestateHeader, trace->state);
  return fields;
}

}  // namespace settle::sdk
