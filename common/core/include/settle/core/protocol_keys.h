#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// What belongs to the protocol in a branch call, and so never to whoever stored the branch
// (docs/protocol.md §1.4, §3.7, §4.1, §6.1, §10.4): the query keys a coordinator (or an
// initiator, for its own Try and XA action) appends to a branch URL, and the header and metadata
// names it sets or signs itself. A client that could put one of them in a URL or a branch header
// would make a call carry the key twice; participants read the first value, and the
// coordinator's signature would cover what the client chose. The coordinator refuses such a
// request and never sends such a call; the SDK's participant refuses a call that repeats a key.
namespace settle {

// The protocol's query keys: the words of §4.1 and §6.1, `branch_type` (DTM's Node SDK's name
// for the Try's op, which the SDK reads), XA's `phase2_url` and `dtm` (DTM's participants read
// the coordinator's address from it). Lowercase.
inline constexpr std::array<std::string_view, 7> kProtocolQueryKeys = {
    "gid", "trans_type", "branch_id", "op", "branch_type", "phase2_url", "dtm"};

// The protocol key a URL's query names, lowercase as listed above, or nullopt: the first
// parameter whose name, percent-decoded ('+' as a space) and compared without regard to ASCII
// case, is one of kProtocolQueryKeys. The query is what follows the first '?' (up to a '#');
// parameters are split at '&' and at ';' (old Go and some Java stacks split at both), so that
// "?GID=x", "?g%69d=x" and "?a=1;op=confirm" all name a key, and "?gidx=1" does not. A URL
// without a query names none; so does a gRPC target, which has no query.
std::optional<std::string_view> ProtocolKeyInQuery(std::string_view url);

// Whether a branch header `name` (any case) is one settled sets, frames or signs itself over
// HTTP: any dtm-* and settle-* (settled's own fields, present and future), Host,
// Content-Length, Transfer-Encoding, Connection, Content-Type, Content-Digest, Signature-Input,
// Signature, X-Forwarded-Host and Forwarded.
bool IsReservedBranchHeader(std::string_view name);

// Whether a branch header `name` (any case) is reserved when it travels as gRPC metadata: the
// names above, and te, user-agent, grpc-* and ':'-pseudo names, which gRPC sets itself.
bool IsReservedGrpcBranchHeader(std::string_view name);

// The protocol key that a parsed query (names and values decoded, as net::Request::params and
// the SDK see it) holds more than once, lowercase as listed above (the first in that order when
// several are), or nullopt: two parameters whose lowercased names are the same key ("gid" and
// "GID" count as two).
std::optional<std::string_view> RepeatedProtocolKey(
    const std::multimap<std::string, std::string>& params);

// The dtm-* key, lowercased, that gRPC metadata `keys` hold more than once (compared without
// regard to ASCII case), or nullopt.
std::optional<std::string> RepeatedDtmMetadataKey(const std::vector<std::string_view>& keys);

}  // namespace settle
