// RequestReader (settle/net/request_reader.h) over a connection's bytes: Beast's parser plus
// the strict RFC 9112 checks the reader adds, pipelined requests, Content-Length and chunked
// bodies, Expect: 100-continue, and the head, field and body limits. The same bytes are read
// twice, in one read and cut into pieces the way recv might cut them, and both must give the
// same requests, the same 100-continue stops and the same refusal. Every request handed to a
// handler must be one the reader's contract allows.
//
// Input: [split selector] [limits] [pad adjust] bytes of the connection...
//   split selector: bits 0-4 pick the pieces (fuzz_support.h), bits 5-7 how much more room
//     than a piece each read prepares (as a server prepares 16 KiB and gets fewer).
//   limits: bits 0-2 the body limit, bits 3-4 padding (PadsHead), bits 5-6 the head limit,
//     bit 7 a small field limit.

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.h"
#include "settle/net/message.h"
#include "settle/net/request_reader.h"

namespace settle::fuzz {
namespace {

using net::EqualsIgnoreCase;
using net::RequestLimits;
using net::RequestReader;
using Step = RequestReader::Step;

// A request as a handler gets it, with what the reader said about it.
struct Framed {
  std::string method;
  std::string target;
  std::string path;
  std::multimap<std::string, std::string> params;
  net::Headers headers;
  std::string body;
  bool keep_alive = false;
  unsigned version = 0;
  bool continued = false;  // Parse asked for "100 Continue" before this request's body
  bool operator==(const Framed&) const = default;
};

// What a connection's bytes came to. request_reader.h: "the result never depends on how the
// stream was split", so two readings must agree on all of it, the refusal's wording included.
struct Outcome {
  std::vector<Framed> requests;
  int refusal_status = 0;  // 0: not refused
  std::string refusal;
  bool mid_request = false;  // where the bytes ran out, if not refused
  bool operator==(const Outcome&) const = default;
};

// The elements of a comma-separated list field, without surrounding whitespace and without
// empty elements (RFC 9110 section 5.6.1).
std::vector<std::string_view> ListElements(std::string_view value) {
  std::vector<std::string_view> out;
  for (;;) {
    const std::size_t comma = value.find(',');
    std::string_view item = value.substr(0, comma);
    const std::size_t first = item.find_first_not_of(" \t");
    if (first != std::string_view::npos) {
      item = item.substr(first, item.find_last_not_of(" \t") - first + 1);
      out.push_back(item);
    }
    if (comma == std::string_view::npos) return out;
    value.remove_prefix(comma + 1);
  }
}

// Every value of the header `name`, in order.
std::vector<std::string_view> Values(const net::Headers& headers, std::string_view name) {
  std::vector<std::string_view> out;
  for (const auto& [field, value] : headers) {
    if (EqualsIgnoreCase(field, name)) out.push_back(value);
  }
  return out;
}

bool HasToken(const std::vector<std::string_view>& values, std::string_view token) {
  for (std::string_view value : values) {
    for (std::string_view item : ListElements(value)) {
      if (EqualsIgnoreCase(item, token)) return true;
    }
  }
  return false;
}

// Bytes 0x21-0x7e and 0x80-0xff: what Beast takes in a request target. The reader does not
// require origin-form ('/...'), so that is all a handler can rely on.
bool IsTargetByte(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u > 0x20 && u != 0x7f;
}

// What a handler may rely on in a request the reader hands on (request_reader.h).
void CheckRequest(const Framed& r, const RequestLimits& limits) {
  FUZZ_CHECK(IsValidHeaderName(r.method));  // a method is a token, as a header name is
  FUZZ_CHECK(!r.target.empty() && std::all_of(r.target.begin(), r.target.end(), IsTargetByte));
  FUZZ_CHECK(r.path == r.target.substr(0, r.target.find('?')));
  FUZZ_CHECK(r.version == 10 || r.version == 11);

  // RFC 9112 section 5.1: no whitespace between name and colon; RFC 9110 section 5.5: no CR,
  // LF or NUL in a value, and no whitespace around it. Either would let a proxy and settled
  // disagree about the message.
  for (const auto& [name, value] : r.headers) {
    FUZZ_CHECK(IsValidHeaderName(name));
    FUZZ_CHECK(IsValidHeaderValue(value));
    FUZZ_CHECK(value.empty() || (value.front() != ' ' && value.front() != '\t' &&
                                 value.back() != ' ' && value.back() != '\t'));
  }

  // The limits bound what a request costs: the request line and every field a handler sees
  // (trailers are merged into the fields) fit the head limit, and there are no more fields
  // than allowed.
  std::size_t head = r.method.size() + 1 + r.target.size() + 1 + 8 + 2;
  for (const auto& [name, value] : r.headers) head += name.size() + 1 + value.size() + 2;
  FUZZ_CHECK(head <= limits.max_head_bytes);
  FUZZ_CHECK(r.headers.size() <= limits.max_fields);
  FUZZ_CHECK(r.body.size() <= limits.max_body_bytes);

  // Exactly one Host in HTTP/1.1, at most one in HTTP/1.0 (RFC 9112 section 3.2).
  const std::size_t hosts = Values(r.headers, "Host").size();
  FUZZ_CHECK(r.version == 10 ? hosts <= 1 : hosts == 1);

  // The framing is unambiguous: Transfer-Encoding only as exactly "chunked", only in
  // HTTP/1.1 and never with Content-Length; at most one Content-Length, a plain number that
  // is the body's length.
  const std::vector<std::string_view> codings = Values(r.headers, "Transfer-Encoding");
  const std::vector<std::string_view> lengths = Values(r.headers, "Content-Length");
  bool chunked = false;
  if (!codings.empty()) {
    FUZZ_CHECK(r.version == 11);
    FUZZ_CHECK(lengths.empty());
    std::vector<std::string_view> all;
    for (std::string_view value : codings) {
      for (std::string_view item : ListElements(value)) all.push_back(item);
    }
    FUZZ_CHECK(all.size() == 1 && EqualsIgnoreCase(all.front(), "chunked"));
    chunked = true;
  }
  FUZZ_CHECK(lengths.size() <= 1);
  std::uint64_t length = 0;
  if (!lengths.empty()) {
    const std::string_view text = lengths.front();
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), length);
    FUZZ_CHECK(ec == std::errc() && end == text.data() + text.size());
    FUZZ_CHECK(length == r.body.size());
  }
  if (!chunked && lengths.empty()) FUZZ_CHECK(r.body.empty());

  // Expect: only 100-continue (else 417), and the reader stops for it exactly when the
  // client waits for it: HTTP/1.1 with a body to come.
  const std::vector<std::string_view> expects = Values(r.headers, "Expect");
  for (std::string_view value : expects) FUZZ_CHECK(EqualsIgnoreCase(value, "100-continue"));
  const bool body_follows = chunked || length > 0;
  FUZZ_CHECK(r.continued == (!expects.empty() && r.version == 11 && body_follows));

  // "Connection: close" is obeyed.
  if (HasToken(Values(r.headers, "Connection"), "close")) FUZZ_CHECK(!r.keep_alive);
}

// A refused connection is answered and closed: the refusal is one the server can send, and
// the reader takes nothing more, whatever else arrives.
void CheckRefusal(RequestReader& reader, std::string_view rest) {
  const int status = reader.refusal_status();
  FUZZ_CHECK(status == 400 || status == 413 || status == 417 || status == 431 || status == 505);
  FUZZ_CHECK(!reader.refusal().empty());
  const std::string refusal = reader.refusal();
  FUZZ_CHECK(reader.Parse() == Step::kRefused);
  reader.Append(rest);
  reader.Append("GET / HTTP/1.1\r\nHost: p\r\n\r\n");
  FUZZ_CHECK(reader.Parse() == Step::kRefused);
  FUZZ_CHECK(reader.refusal_status() == status && reader.refusal() == refusal);
}

// Reads the connection's bytes the way Server::Serve does: Parse until it wants more, then
// one read into prepared room (`room_extra` bytes more than the read fills), and so on.
Outcome Run(std::string_view stream, const RequestLimits& limits, Splitter split,
            std::size_t room_extra) {
  Outcome out;
  RequestReader reader(limits);
  std::size_t at = 0;
  bool continued = false;
  for (;;) {
    const Step step = reader.Parse();
    if (step == Step::kExpectContinue) {
      FUZZ_CHECK(!continued);  // once per request
      continued = true;
      continue;
    }
    if (step == Step::kRequest) {
      net::Request request = reader.TakeRequest();
      Framed framed;
      framed.method = std::move(request.method);
      framed.target = std::move(request.target);
      framed.path = std::move(request.path);
      framed.params = std::move(request.params);
      framed.headers = std::move(request.headers);
      framed.body = std::move(request.body);
      framed.keep_alive = reader.keep_alive();
      framed.version = reader.version();
      framed.continued = continued;
      CheckRequest(framed, limits);
      out.requests.push_back(std::move(framed));
      continued = false;
      continue;
    }
    if (step == Step::kRefused) {
      out.refusal_status = reader.refusal_status();
      out.refusal = reader.refusal();
      CheckRefusal(reader, stream.substr(at));
      return out;
    }
    FUZZ_CHECK(step == Step::kNeedMore);
    if (at == stream.size()) {
      out.mid_request = reader.mid_request();
      return out;
    }
    const std::string_view piece = stream.substr(at, split.Next());
    at += piece.size();
    const std::span<char> room = reader.Prepare(piece.size() + room_extra);
    FUZZ_CHECK(room.size() == piece.size() + room_extra);
    std::copy(piece.begin(), piece.end(), room.begin());
    reader.Commit(piece.size());
  }
}

}  // namespace
}  // namespace settle::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace settle::fuzz;
  Input input(data, size);
  const std::uint8_t split = input.Byte();
  const std::uint8_t limits_byte = input.Byte();
  const std::uint8_t adjust = input.Byte();

  static constexpr std::size_t kMaxBodies[8] = {0, 1, 5, 16, 100, 1024, 64 * 1024, 1 << 20};
  // Small head limits let a few hundred bytes of input reach them; the default is what
  // settled runs with.
  static constexpr std::size_t kMaxHeads[4] = {16 * 1024, 64, 200, 1024};
  const bool padded = PadsHead(limits_byte);
  settle::net::RequestLimits limits;
  limits.max_body_bytes = kMaxBodies[limits_byte & 7];
  limits.max_head_bytes = padded ? 16 * 1024 : kMaxHeads[(limits_byte >> 5) & 3];
  limits.max_fields = (limits_byte & 0x80) != 0 ? 3 : 100;

  // The connection ends with a blank line. After a partial head Beast parses again only once
  // the line that ends the head is in, so a malformed head that never ends is refused by one
  // read and still awaited by many: a matter of when, not of what. With the head ended, both
  // must have decided.
  std::string stream = padded ? PadNearLimit(input.rest(), limits.max_head_bytes, adjust)
                              : std::string(input.rest());
  stream += "\r\n\r\n";
  const Outcome whole = Run(stream, limits, Splitter(stream.size() + 1, false), 0);
  const Outcome pieces = Run(stream, limits, SplitterFor(split, padded ? kPaddedScale : 1),
                             static_cast<std::size_t>(split >> 5) * 5);
  FUZZ_CHECK(whole == pieces);
  return 0;
}
