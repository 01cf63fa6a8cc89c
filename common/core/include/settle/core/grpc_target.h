#pragma once

#include <string>
#include <string_view>

#include "settle/core/status.h"

namespace settle {

// A gRPC method a participant serves, as a branch URL names it (docs/protocol.md §10.4):
//   host:port/package.Service/Method          DTM's form, plaintext
//   grpc://host[:port]/package.Service/Method plaintext (port 80 by default)
//   grpcs://host[:port]/package.Service/Method TLS (port 443 by default)
// The scheme in any case; host and port as in an http:// URL (url.h).
struct GrpcTarget {
  bool tls = false;
  std::string host;  // "::1" without brackets
  int port = 80;
  std::string method;  // "/package.Service/Method", as gRPC names it on the wire

  // "host:port", brackets around an IPv6 address: what a channel is opened to.
  std::string HostPort() const;
  // "grpc://host:port" or "grpcs://host:port": one channel, and one host gate, per origin.
  std::string Origin() const;
};

// Whether `url` is meant as a gRPC method: it starts with grpc:// or grpcs://, or has no
// scheme at all (DTM's form).
bool LooksLikeGrpcTarget(std::string_view url);

// InvalidArgument (without a field name) unless `url` is one of the forms above, with a method
// of two non-empty parts of [A-Za-z0-9_.] and no query or fragment.
Result<GrpcTarget> ParseGrpcTarget(std::string_view url);

// A server's address without a method, as a client is pointed at a coordinator:
// grpc://host[:port], grpcs://host[:port] or host:port, optionally with a trailing '/'. The
// target's method is empty. InvalidArgument (without a field name) for anything else.
Result<GrpcTarget> ParseGrpcOrigin(std::string_view url);

// Whether a branch header can travel as gRPC metadata to a gRPC participant: its name,
// lowercased, of [0-9a-z-_.] and not starting with "grpc-" (gRPC's own); its value printable
// ASCII (a "-bin" name's value would be taken as binary: refused too).
bool IsGrpcMetadataHeader(std::string_view name, std::string_view value);

}  // namespace settle
