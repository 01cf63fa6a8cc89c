#pragma once

#include <string>

namespace settle {

// The participant host a branch URL is on: its origin, lower-case, with its port
// ("http://bank:8080", "https://bank:443", "grpc://bank:50051"), for an http(s) URL or a gRPC
// method in any of its forms (grpc_target.h). Empty if `url` is neither. One host gate, one
// search filter and one redirect per origin.
std::string UrlOrigin(const std::string& url);

}  // namespace settle
