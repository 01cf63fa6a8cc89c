#include "settle/core/url_origin.h"

#include "settle/core/ascii.h"
#include "settle/core/grpc_target.h"
#include "settle/core/url.h"

namespace settle {

std::string UrlOrigin(const std::string& url) {
  if (LooksLikeGrpcTarget(url)) {
    Result<GrpcTarget> target = ParseGrpcTarget(url);
    return target ? AsciiLowercase(target->Origin()) : std::string();
  }
  Result<Url> parsed = ParseUrl(url);
  // A host name's case names the same host.
  return parsed ? AsciiLowercase(parsed->Origin()) : std::string();
}

}  // namespace settle
