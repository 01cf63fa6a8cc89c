#include "settle/common/http_request_parser.h"

#include <catch2/catch.hpp>

#include <string>

#include "feed_in_pieces.h"

namespace settle {
namespace {

using State = HttpRequestParser::State;
using Catch::Matchers::Contains;

constexpr std::size_t kMaxBody = 1 << 20;

TEST_CASE("a request with a Content-Length body is read whole, however it arrives",
          "[common][http_request_parser]") {
  const std::string request =
      "POST /api/settle/submit?x=a+b HTTP/1.1\r\nHost: p\r\nContent-Length: 7\r\n\r\n{\"a\":1}";
  for (std::size_t piece : {request.size(), std::size_t{1}, std::size_t{5}}) {
    INFO("pieces of " << piece);
    HttpRequestParser parser(kMaxBody);
    std::size_t consumed = 0;

    CHECK(FeedInPieces(parser, request, piece, consumed) == State::kDone);
    CHECK(consumed == request.size());
    CHECK(parser.request().method == "POST");
    CHECK(parser.request().path == "/api/settle/submit");
    CHECK(parser.request().params.find("x")->second == "a b");
    CHECK(parser.request().body == "{\"a\":1}");
    CHECK(parser.keep_alive());
  }
}

// Found by fuzz/http_request_parser_fuzz.cc. A proxy in front of settled that reads these
// lines differently (or repairs them) sees another body length than settled does, and the
// bytes one of them takes for a body the other serves as the next request.
TEST_CASE("a header line a proxy could read differently is refused, not skipped",
          "[common][http_request_parser]") {
  const std::string smuggled = "GET /smuggled HTTP/1.1\r\n\r\n";
  const std::string length = std::to_string(smuggled.size());
  for (const std::string& line : {
           "Content-Length : " + length,         // whitespace before the colon
           "Content-Length\t: " + length,
           "Conten;ext=1t-Length: " + length,    // a name that is not a token
           "X-Note: a\nContent-Length: " + length,  // a bare LF in a value
           "X-Note: a\rContent-Length: " + length,  // a bare CR
           "X-Note: a" + std::string(1, '\0') + "b",  // a NUL
           std::string("X-Note: bell\x07"),          // another control character
       }) {
    INFO(line);
    HttpRequestParser parser(kMaxBody);
    const std::string request = "POST /a HTTP/1.1\r\n" + line + "\r\n\r\n" + smuggled;
    std::size_t consumed = 0;

    CHECK(parser.Feed(request, consumed) == State::kError);
    CHECK(parser.error_status() == 400);
    CHECK_THAT(parser.error(), Contains("malformed header line"));
  }
}

TEST_CASE("header values keep tabs, inner spaces and non-ASCII bytes, trimmed at the ends",
          "[common][http_request_parser]") {
  HttpRequestParser parser(kMaxBody);
  const std::string request =
      "GET / HTTP/1.1\r\nX-Note:  a\tb c \r\nX-Name: caf\xc3\xa9\r\nX-Empty:\r\n\r\n";
  std::size_t consumed = 0;

  REQUIRE(parser.Feed(request, consumed) == State::kDone);
  CHECK(*parser.request().Header("x-note") == "a\tb c");
  CHECK(*parser.request().Header("X-Name") == "caf\xc3\xa9");
  CHECK(parser.request().Header("X-Empty")->empty());
}

}  // namespace
}  // namespace settle
