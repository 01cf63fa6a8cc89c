#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "settle/core/status.h"

namespace settle::telemetry {

// The headers settled sends with every export (a collector's API key, say), as name and value.
using OtlpHeaders = std::vector<std::pair<std::string, std::string>>;

// The headers OTEL_EXPORTER_OTLP_HEADERS lists: "name=value,name2=value2" (values
// percent-decoded, whitespace around each trimmed). InvalidArgument naming the entry that is
// not name=value or would not be a valid header.
Result<OtlpHeaders> ParseOtlpHeaders(std::string_view list);

// The headers of a headers file (--otlp-headers-file), read as a token file is: one
// "name=value" per line, whitespace around the name and the value trimmed, the value taken as
// written (not percent-decoded: a line needs no escaping, and may hold commas); blank lines and
// lines starting with '#' are skipped. InvalidArgument naming the line ("line 3: ...") that is
// not name=value or would not be a valid header, without its value.
Result<OtlpHeaders> ParseOtlpHeaderLines(std::string_view text);

}  // namespace settle::telemetry
