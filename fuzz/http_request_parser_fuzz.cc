// HttpRequestParser over a connection's bytes: pipelined requests, Content-Length and chunked
// bodies, the head and body limits. The same bytes are parsed twice, in one read and cut into
// pieces the way recv might cut them, and both must give the same requests and the same
// refusal. Every request handed to a handler must be well-formed.
//
// Input: [split selector] [limits] [pad adjust] bytes of the connection...

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz_support.h"
#include "settle/common/http_header.h"
#include "settle/common/http_request_parser.h"

namespace settle::fuzz {
namespace {

using State = HttpRequestParser::State;

struct Parsed {
  std::string method;
  std::string target;
  std::string path;
  std::multimap<std::string, std::string> params;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  bool keep_alive = false;
  bool operator==(const Parsed&) const = default;
};

struct Outcome {
  std::vector<Parsed> requests;
  int error_status = 0;  // 0: no refusal
  std::string error;
  bool operator==(const Outcome&) const = default;
};

const std::string* FindHeader(const HttpRequest& request, std::string_view name) {
  return request.Header(name);
}

// What a handler may rely on in a request the parser calls complete.
void CheckRequest(HttpRequestParser& parser, std::size_t max_body) {
  const HttpRequest& r = parser.request();
  FUZZ_CHECK(IsValidHeaderName(r.method));  // a method is a token, as a header name is
  FUZZ_CHECK(!r.target.empty() && r.target.front() == '/');
  FUZZ_CHECK(std::all_of(r.target.begin(), r.target.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u > 0x20 && u != 0x7f;
  }));
  FUZZ_CHECK(r.path == r.target.substr(0, r.target.find('?')));
  FUZZ_CHECK(r.body.size() <= max_body);
  for (const auto& [name, value] : r.headers) {
    // RFC 9112 §5.1: no whitespace between name and colon; RFC 9110 §5.5: no CR, LF or NUL
    // in a value. Either would let a proxy and settled disagree about the message.
    FUZZ_CHECK(IsValidHeaderName(name));
    FUZZ_CHECK(IsValidHeaderValue(value));
  }
  const std::string* length = FindHeader(r, "Content-Length");
  const std::string* coding = FindHeader(r, "Transfer-Encoding");
  if (length != nullptr && coding == nullptr) {
    FUZZ_CHECK(std::stoull(*length) == r.body.size());  // throws (and so fails) if not a number
  }
  // RFC 9112 §6.1: a server MUST close the connection after a request with both.
  if (length != nullptr && coding != nullptr) FUZZ_CHECK(!parser.keep_alive());
}

void CheckRefusal(const HttpRequestParser& parser) {
  const int s = parser.error_status();
  FUZZ_CHECK(s == 400 || s == 413 || s == 431 || s == 501 || s == 505);
  FUZZ_CHECK(!parser.error().empty());
}

Parsed Record(HttpRequestParser& parser) {
  HttpRequest& r = parser.request();
  return Parsed{r.method, r.target, r.path, r.params, r.headers, r.body, parser.keep_alive()};
}

void CheckContinue(HttpRequestParser& parser) {
  if (parser.TakeContinueRequest()) {
    FUZZ_CHECK(!parser.TakeContinueRequest());  // once
    FUZZ_CHECK(FindHeader(parser.request(), "Expect") != nullptr);
  }
}

// Feeds the connection's bytes the way HttpServer::Serve does: each read is fed until the
// parser wants more, a request ends (and the parser is reset for the next), or it refuses.
Outcome Run(std::string_view stream, std::size_t max_body, Splitter split) {
  Outcome out;
  HttpRequestParser parser(max_body);
  std::size_t at = 0;
  while (at < stream.size()) {
    std::string_view data = stream.substr(at, split.Next());
    at += data.size();
    while (!data.empty()) {
      std::size_t consumed = 0;
      const State state = parser.Feed(data, consumed);
      FUZZ_CHECK(state == parser.state());
      FUZZ_CHECK(consumed <= data.size());
      CheckContinue(parser);
      if (state == State::kNeedMore) {
        FUZZ_CHECK(consumed == data.size());  // a parser that wants more takes everything
        break;
      }
      if (state == State::kError) {
        CheckRefusal(parser);
        out.error_status = parser.error_status();
        out.error = parser.error();
        return out;
      }
      FUZZ_CHECK(consumed > 0);  // a request cannot end without a byte of it
      CheckRequest(parser, max_body);
      out.requests.push_back(Record(parser));
      data.remove_prefix(consumed);
      parser.Reset();
      FUZZ_CHECK(parser.state() == State::kNeedMore && !parser.started());
    }
  }
  return out;
}

}  // namespace
}  // namespace settle::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace settle::fuzz;
  Input input(data, size);
  const std::uint8_t split = input.Byte();
  const std::uint8_t limits = input.Byte();
  const std::uint8_t adjust = input.Byte();
  static constexpr std::size_t kMaxBodies[8] = {0, 1, 5, 16, 100, 1024, 64 * 1024, 1 << 20};
  const std::size_t max_body = kMaxBodies[limits & 7];
  const bool padded = PadsHead(limits);
  const std::string stream =
      padded ? PadNearLimit(input.rest(), settle::HttpRequestParser::kMaxHeadBytes, adjust)
             : std::string(input.rest());

  const Outcome whole = Run(stream, max_body, Splitter(stream.size() + 1, false));
  const Outcome pieces = Run(stream, max_body, SplitterFor(split, padded ? kPaddedScale : 1));
  FUZZ_CHECK(whole == pieces);
  return 0;
}
