#pragma once

#include <string>
#include <vector>

#include "settle/core/status.h"

namespace settle::storage {

// How a store finds the branch rows on one participant host (ListQuery::host) without parsing
// every url: a url is on the host `origin` ("http://bank:8080", lower-case, with its port, as
// calls::OriginOf gives it) exactly when its lower-cased text starts with one of these prefixes
// and the prefix is followed by nothing, '/' or '?'. The prefixes spell the origin each way a
// url may: with the port, without it when it is the scheme's default, and for a plaintext gRPC
// origin in DTM's form without a scheme ("bank:50051/pkg.Service/Method").
// InvalidArgument naming `host` unless `origin` is such an origin.
Result<std::vector<std::string>> HostUrlPrefixes(const std::string& origin);

}  // namespace settle::storage
