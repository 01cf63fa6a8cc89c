// ParseHttpUrl (branch URLs from clients) and ParseDuration (command-line durations). Both
// run on every input.
//
// A URL it accepts must be what http_url.h promises, must come back the same when written
// out again from its parts, and the request target the branch caller builds from it must be
// one Settle's own request parser takes, carrying the gid intact.
//
// A duration it accepts must be within ten years, and FormatDuration's spelling of it must
// parse back to it.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "settle/common/duration_text.h"
#include "settle/common/http_request_parser.h"
#include "settle/common/http_url.h"

namespace settle::fuzz {
namespace {

constexpr std::int64_t kTenYearsMillis = 10LL * 365 * 24 * 3600 * 1000;

bool IsPlain(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u > 0x20 && u != 0x7f;
  });
}

void FuzzUrl(std::string_view text, std::string_view gid) {
  const Result<HttpUrl> url = ParseHttpUrl(text);
  if (!url) {
    FUZZ_CHECK(url.status().code() == StatusCode::kInvalidArgument);
    FUZZ_CHECK(!url.status().message().empty());
    return;
  }
  FUZZ_CHECK(text.size() <= kMaxUrlLength);
  FUZZ_CHECK(!url->host.empty());
  FUZZ_CHECK(url->port >= 1 && url->port <= 65535);
  FUZZ_CHECK(!url->path_and_query.empty() && url->path_and_query.front() == '/');
  FUZZ_CHECK(IsPlain(url->host) && IsPlain(url->path_and_query));
  FUZZ_CHECK(url->host.find_first_of("/?#@") == std::string::npos);
  FUZZ_CHECK(url->path_and_query.find('#') == std::string::npos);

  // Written out again (as HostPort in the branch caller writes the Host header), the parts
  // parse to themselves.
  const bool ipv6 = url->host.find(':') != std::string::npos;
  const std::string again = "http://" + (ipv6 ? "[" + url->host + "]" : url->host) + ":" +
                            std::to_string(url->port) + url->path_and_query;
  if (again.size() <= kMaxUrlLength) {
    const Result<HttpUrl> reparsed = ParseHttpUrl(again);
    FUZZ_CHECK(reparsed.ok());
    FUZZ_CHECK(reparsed->host == url->host);
    FUZZ_CHECK(reparsed->port == url->port);
    FUZZ_CHECK(reparsed->path_and_query == url->path_and_query);
  }

  // The target of a branch call (http_branch_caller.cc encodes non-ASCII bytes the same way)
  // is a valid request target whose query still holds the gid byte for byte.
  const std::string target =
      PercentEncodeNonAscii(url->TargetWith({{"gid", gid}, {"op", "confirm"}}));
  const std::string encoded_path = PercentEncodeNonAscii(url->path_and_query);
  FUZZ_CHECK(target.compare(0, encoded_path.size(), encoded_path) == 0);
  const std::string request = "GET " + target + " HTTP/1.1\r\n\r\n";
  HttpRequestParser parser(0);
  std::size_t consumed = 0;
  FUZZ_CHECK(parser.Feed(request, consumed) == HttpRequestParser::State::kDone);
  FUZZ_CHECK(consumed == request.size());
  const auto& params = parser.request().params;
  const auto [first, last] = params.equal_range("gid");
  FUZZ_CHECK(std::any_of(first, last, [&](const auto& p) { return p.second == gid; }));
}

void FuzzDuration(std::string_view text) {
  const Result<Duration> d = ParseDuration(text);
  if (!d) {
    FUZZ_CHECK(d.status().code() == StatusCode::kInvalidArgument);
    return;
  }
  FUZZ_CHECK(d->count() >= 0 && d->count() <= kTenYearsMillis);
  const std::string spelled = FormatDuration(*d);
  const Result<Duration> back = ParseDuration(spelled);
  FUZZ_CHECK(back.ok() && *back == *d);
}

}  // namespace
}  // namespace settle::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace settle::fuzz;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // Some arbitrary bytes for the gid: the last few of the input.
  const std::string_view gid = text.substr(text.size() - std::min<std::size_t>(text.size(), 12));
  FuzzUrl(text, gid);
  FuzzDuration(text);
  return 0;
}
