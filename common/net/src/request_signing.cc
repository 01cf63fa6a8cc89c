#include "settle/net/request_signing.h"

#include <algorithm>
#include <string>
#include <utility>

#include "settle/core/url.h"
#include "settle/net/message.h"
#include "settle/signing/request_signature.h"

namespace settle::net {

Status SignRequest(ClientRequest& request, const signing::SigningKey& key,
                   std::int64_t created_unix, bool cover_authority, std::string_view tag) {
  // An empty target is the URL's own (Client::Send).
  const std::string target =
      PercentEncodeNonAscii(request.target.empty() ? request.url.path_and_query : request.target);
  const std::size_t question = target.find('?');
  // The authority signed is the one the request is sent to, never one a caller's header names:
  // a Host of its own would let whoever chose the headers pick the participant the signature
  // names (docs/protocol.md §4.9). The request then carries the URL's Host (wire.cc).
  std::erase_if(request.headers, [](const auto& h) { return EqualsIgnoreCase(h.first, "Host"); });
  const signing::SignedRequest signed_request{
      .method = request.method,
      .authority = request.url.HostPort(),
      .path = target.substr(0, question),
      .query = question == std::string::npos ? "" : target.substr(question + 1),
      .body = request.body};
  auto fields = signing::SignRequest(signed_request, key, created_unix, cover_authority, tag);
  if (!fields) return fields.status();
  for (auto& field : *fields) {
    // A header of the same name must not stand beside the signature's.
    std::erase_if(request.headers,
                  [&](const auto& h) { return EqualsIgnoreCase(h.first, field.first); });
    request.headers.push_back(std::move(field));
  }
  return Status::Ok();
}

}  // namespace settle::net
