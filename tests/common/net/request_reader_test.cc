// RequestReader: what a server of the project takes as a request and what it refuses, byte
// for byte (RFC 9112). Every case is fed whole and in pieces of 1 and 7 bytes: framing never
// depends on how the stream was cut.
#include "settle/net/request_reader.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace settle::net {
namespace {

using Catch::Matchers::Contains;

// What a reader made of `bytes`: one line per request ("POST /a {body}"), then how it
// stopped: "need more", or "refused 400: <problem>".
struct Framed {
  std::vector<std::string> requests;
  std::vector<Request> taken;
  std::string end;
  int continues = 0;  // kExpectContinue steps
};

Framed Frame(const std::string& bytes, std::size_t piece, RequestLimits limits = {}) {
  RequestReader reader(limits);
  Framed out;
  std::size_t at = 0;
  for (;;) {
    const RequestReader::Step step = reader.Parse();
    if (step == RequestReader::Step::kRequest) {
      Request request = reader.TakeRequest();
      out.requests.push_back(request.method + " " + request.target + " {" + request.body + "}" +
                             (reader.keep_alive() ? "" : " close"));
      out.taken.push_back(std::move(request));
      continue;
    }
    if (step == RequestReader::Step::kExpectContinue) {
      ++out.continues;
      continue;
    }
    if (step == RequestReader::Step::kRefused) {
      out.end = "refused " + std::to_string(reader.refusal_status()) + ": " + reader.refusal();
      return out;
    }
    if (at >= bytes.size()) {
      out.end = "need more";
      return out;
    }
    reader.Append(std::string_view(bytes).substr(at, piece));
    at += piece;
  }
}

// Frames `bytes` whole and in small pieces, checks that all agree, and returns the result.
Framed FrameEveryWay(const std::string& bytes, RequestLimits limits = {}) {
  const Framed whole = Frame(bytes, bytes.size() + 1, limits);
  for (std::size_t piece : {1, 7}) {
    INFO("in pieces of " << piece);
    const Framed split = Frame(bytes, piece, limits);
    CHECK(split.requests == whole.requests);
    CHECK(split.end == whole.end);
    CHECK(split.continues == whole.continues);
  }
  return whole;
}

const std::string kSmuggled = "GET /smuggled HTTP/1.1\r\nHost: p\r\n\r\n";

struct Refusal {
  const char* why;
  std::string request;
  int status;
  const char* problem;
};

TEST_CASE("an ambiguous, malformed or oversized request is refused and nothing after it is read",
          "[net][request_reader]") {
  const std::string len = std::to_string(kSmuggled.size());
  const std::vector<Refusal> cases = {
      {"Content-Length with Transfer-Encoding",
       "POST /a HTTP/1.1\r\nHost: p\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
       "0\r\n\r\n",
       400, "Transfer-Encoding"},
      {"Transfer-Encoding with Content-Length",
       "POST /a HTTP/1.1\r\nHost: p\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n"
       "0\r\n\r\n",
       400, "Content-Length"},
      {"conflicting Content-Length",
       "POST /a HTTP/1.1\r\nHost: p\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!", 400,
       "Content-Length"},
      {"repeated equal Content-Length",
       "POST /a HTTP/1.1\r\nHost: p\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello", 400,
       "Content-Length: repeated"},
      {"Content-Length as a list",
       "POST /a HTTP/1.1\r\nHost: p\r\nContent-Length: 5, 5\r\n\r\nhello", 400,
       "Content-Length: repeated"},
      {"malformed Content-Length", "POST /a HTTP/1.1\r\nHost: p\r\nContent-Length: 5x\r\n\r\nhello",
       400, "Content-Length"},
      {"negative Content-Length", "POST /a HTTP/1.1\r\nHost: p\r\nContent-Length: -1\r\n\r\n", 400,
       "Content-Length"},
      {"chunked not the final coding",
       "POST /a HTTP/1.1\r\nHost: p\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n", 400,
       "chunked must be the final coding"},
      {"an unknown coding alone", "POST /a HTTP/1.1\r\nHost: p\r\nTransfer-Encoding: gzip\r\n\r\n",
       400, "chunked must be the final coding"},
      {"an empty Transfer-Encoding", "POST /a HTTP/1.1\r\nHost: p\r\nTransfer-Encoding: \r\n\r\n",
       400, "chunked must be the final coding"},
      {"an unknown coding before chunked",
       "POST /a HTTP/1.1\r\nHost: p\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 400,
       "only chunked is supported"},
      {"Transfer-Encoding split over two fields",
       "POST /a HTTP/1.1\r\nHost: p\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: "
       "chunked\r\n\r\n"
       "0\r\n\r\n",
       400, "only chunked is supported"},
      {"chunked twice",
       "POST /a HTTP/1.1\r\nHost: p\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n"
       "\r\n0\r\n\r\n",
       400, "Transfer-Encoding"},
      {"Transfer-Encoding in HTTP/1.0",
       "POST /a HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, "HTTP/1.0"},
      {"a bare LF ending a chunk-size line",
       "POST /a HTTP/1.1\r\nHost: p\r\nTransfer-Encoding: chunked\r\n\r\n5\nhello\r\n0\r\n\r\n",
       400, "body: malformed chunk"},
      {"a chunk size that is not hex",
       "POST /a HTTP/1.1\r\nHost: p\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n",
       400, "body: malformed chunk"},
      {"a chunk size that overflows",
       "POST /a HTTP/1.1\r\nHost: p\r\nTransfer-Encoding: chunked\r\n\r\n"
       "fffffffffffffffffff\r\nhello\r\n0\r\n\r\n",
       400, "body"},
      {"chunk data longer than its size",
       "POST /a HTTP/1.1\r\nHost: p\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhello\r\n0\r\n\r\n",
       400, "body: malformed chunk"},
      {"no Host in HTTP/1.1", "GET /a HTTP/1.1\r\nX-Y: z\r\n\r\n", 400, "Host: missing"},
      {"two Hosts", "GET /a HTTP/1.1\r\nHost: p\r\nHost: q\r\n\r\n", 400, "Host: more than one"},
      {"two Hosts in HTTP/1.0", "GET /a HTTP/1.0\r\nHost: p\r\nHost: q\r\n\r\n", 400,
       "Host: more than one"},
      {"obsolete line folding", "GET /a HTTP/1.1\r\nHost: p\r\nX-Long: a\r\n b\r\n\r\n", 400,
       "obsolete line folding"},
      {"folding with a tab", "GET /a HTTP/1.1\r\nHost: p\r\nX-Long: a\r\n\tb\r\n\r\n", 400,
       "obsolete line folding"},
      {"whitespace before the first field", "GET /a HTTP/1.1\r\n Host: p\r\n\r\n", 400,
       "obsolete line folding"},
      {"whitespace before the colon",
       "POST /a HTTP/1.1\r\nHost: p\r\nContent-Length : " + len + "\r\n\r\n" + kSmuggled, 400,
       "header: malformed field name"},
      {"a tab before the colon",
       "POST /a HTTP/1.1\r\nHost: p\r\nContent-Length\t: " + len + "\r\n\r\n" + kSmuggled, 400,
       "header: malformed field name"},
      {"a name that is not a token",
       "POST /a HTTP/1.1\r\nHost: p\r\nConten;t-Length: " + len + "\r\n\r\n" + kSmuggled, 400,
       "header: malformed field name"},
      {"a bare LF in a value",
       "POST /a HTTP/1.1\r\nHost: p\r\nX-Note: a\nContent-Length: " + len + "\r\n\r\n" + kSmuggled,
       400, "header"},
      {"a bare CR in a value",
       "POST /a HTTP/1.1\r\nHost: p\r\nX-Note: a\rContent-Length: " + len + "\r\n\r\n" + kSmuggled,
       400, ""},
      {"a NUL in a value",
       std::string("GET /a HTTP/1.1\r\nHost: p\r\nX-Note: a") + '\0' + "b\r\n\r\n" + kSmuggled, 400,
       ""},
      {"a control character in a value", "GET /a HTTP/1.1\r\nHost: p\r\nX-Note: bell\x07\r\n\r\n",
       400, ""},
      {"bare LF line endings in the head", "GET /a HTTP/1.1\nHost: p\n\n" + kSmuggled, 400, ""},
      {"a request line without a version", "GET /a\r\nHost: p\r\n\r\n", 400, "request line"},
      {"a request line with two spaces", "GET  /a HTTP/1.1\r\nHost: p\r\n\r\n", 400,
       "request line"},
      {"a method that is not a token", "G(T /a HTTP/1.1\r\nHost: p\r\n\r\n", 400, "request line"},
      {"a version Settle does not serve", "GET /a HTTP/2.0\r\nHost: p\r\n\r\n", 505, "HTTP/1.0"},
      {"not HTTP at all", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 400, ""},
      {"an Expect other than 100-continue",
       "POST /a HTTP/1.1\r\nHost: p\r\nExpect: magic\r\nContent-Length: 1\r\n\r\nx", 417, "Expect"},
  };
  for (const Refusal& c : cases) {
    INFO(c.why);
    const Framed framed = FrameEveryWay(c.request + kSmuggled);
    CHECK(framed.requests.empty());
    CHECK_THAT(framed.end, Contains("refused " + std::to_string(c.status) + ": "));
    CHECK_THAT(framed.end, Contains(c.problem));
  }
}

TEST_CASE("limits on the head, the number of fields and the body are 431 and 413",
          "[net][request_reader]") {
  RequestLimits limits;
  limits.max_head_bytes = 256;
  limits.max_fields = 4;
  limits.max_body_bytes = 10;

  const Framed long_head = FrameEveryWay(
      "GET /a HTTP/1.1\r\nHost: p\r\nX: " + std::string(300, 'a') + "\r\n\r\n", limits);
  CHECK_THAT(long_head.end, Contains("refused 431: head: larger than 256 bytes"));

  const Framed endless_head =
      FrameEveryWay("GET /a HTTP/1.1\r\nX: " + std::string(400, 'a'), limits);
  CHECK_THAT(endless_head.end, Contains("refused 431"));

  std::string fields = "GET /a HTTP/1.1\r\nHost: p\r\n";
  for (int i = 0; i < 4; ++i) fields += "X-" + std::to_string(i) + ": v\r\n";
  CHECK_THAT(FrameEveryWay(fields + "\r\n", limits).end,
             Contains("refused 431: header: more than 4 fields"));

  const Framed big_length =
      FrameEveryWay("POST /a HTTP/1.1\r\nHost: p\r\nContent-Length: 11\r\n\r\n", limits);
  CHECK(big_length.end == "refused 413: body: larger than 10 bytes");  // before the body comes

  const Framed big_chunks = FrameEveryWay(
      "POST /a HTTP/1.1\r\nHost: p\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n"
      "6\r\nghijkl\r\n0\r\n\r\n",
      limits);
  CHECK(big_chunks.end == "refused 413: body: larger than 10 bytes");

  const Framed at_limit =
      FrameEveryWay("POST /a HTTP/1.1\r\nHost: p\r\nContent-Length: 10\r\n\r\n0123456789", limits);
  CHECK(at_limit.requests == std::vector<std::string>{"POST /a {0123456789}"});
}

TEST_CASE("pipelined requests come out one at a time, in order, whatever the framing",
          "[net][request_reader]") {
  const Framed framed = FrameEveryWay(
      "POST /one HTTP/1.1\r\nHost: p\r\nContent-Length: 3\r\n\r\nabc"
      "GET /two?x=1 HTTP/1.1\r\nHost: p\r\n\r\n"
      "POST /three HTTP/1.1\r\nHost: p\r\nTransfer-Encoding: chunked\r\n\r\n"
      "2\r\nde\r\n1\r\nf\r\n0\r\n\r\n"
      "GET /four HTTP/1.1\r\nHost: p\r\nConnection: close\r\n\r\n");
  CHECK(framed.requests == std::vector<std::string>{"POST /one {abc}", "GET /two?x=1 {}",
                                                    "POST /three {def}", "GET /four {} close"});
  CHECK(framed.end == "need more");
}

TEST_CASE("chunked bodies may carry extensions and trailers, trailers are read and dropped",
          "[net][request_reader]") {
  const Framed framed = FrameEveryWay(
      "POST /a HTTP/1.1\r\nHost: p\r\nTransfer-Encoding: Chunked\r\n\r\n"
      "4;name=value;flag\r\nwiki\r\n5 ; q=\"quoted\"\r\npedia\r\n0\r\nX-Checksum: 42\r\n"
      "Host: evil\r\n\r\n");
  REQUIRE(framed.requests == std::vector<std::string>{"POST /a {wikipedia}"});
  // Never merged into the header fields (RFC 9110 section 6.5.1): a trailing Host cannot
  // make a second one.
  CHECK(framed.taken.at(0).Header("x-checksum") == nullptr);
  CHECK(*framed.taken.at(0).Header("host") == "p");
}

TEST_CASE("memory stays bounded: trailers, chunk lines and heads fed a line at a time",
          "[net][request_reader]") {
  RequestLimits limits;
  limits.max_head_bytes = 1024;
  limits.max_fields = 10;
  std::string trailers = "POST /a HTTP/1.1\r\nHost: p\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n";
  for (int i = 0; i < 20; ++i) trailers += "X-" + std::to_string(i) + ": v\r\n";
  CHECK_THAT(FrameEveryWay(trailers + "\r\n", limits).end, Contains("refused 431: trailer"));

  const std::string long_extension =
      "POST /a HTTP/1.1\r\nHost: p\r\nTransfer-Encoding: chunked\r\n\r\n"
      "1;x=" +
      std::string(5000, 'e');
  CHECK_THAT(FrameEveryWay(long_extension, limits).end,
             Contains("refused 400: body: a chunk line or trailer longer than 1024 bytes"));

  std::string many = "GET /a HTTP/1.1\r\nHost: p\r\n";
  for (int i = 0; i < 200; ++i) many += "X: y\r\n";
  CHECK_THAT(FrameEveryWay(many, limits).end, Contains("refused 431: head: larger than 1024"));
}

TEST_CASE("a target that is not a path is refused", "[net][request_reader]") {
  for (const char* line : {"GET * HTTP/1.1", "GET http://p/a HTTP/1.1", "GET abc HTTP/1.1"}) {
    INFO(line);
    CHECK_THAT(FrameEveryWay(std::string(line) + "\r\nHost: p\r\n\r\n").end,
               Contains("refused 400: request line: the target must be a path"));
  }
}

TEST_CASE("every Expect is checked, and Connection: close wins over keep-alive in HTTP/1.0",
          "[net][request_reader]") {
  CHECK_THAT(FrameEveryWay("POST /a HTTP/1.1\r\nHost: p\r\nExpect: 100-continue\r\n"
                           "Expect: magic\r\nContent-Length: 1\r\n\r\nx")
                 .end,
             Contains("refused 417"));
  CHECK(FrameEveryWay("GET /a HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n").requests ==
        std::vector<std::string>{"GET /a {} close"});
}

TEST_CASE("HTTP/1.0 closes unless it asks to be kept alive, a Host is optional there",
          "[net][request_reader]") {
  CHECK(FrameEveryWay("GET /a HTTP/1.0\r\n\r\n").requests ==
        std::vector<std::string>{"GET /a {} close"});
  CHECK(FrameEveryWay("GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").requests ==
        std::vector<std::string>{"GET /a {}"});
}

TEST_CASE("Expect: 100-continue stops once at the head of a request with a body",
          "[net][request_reader]") {
  const Framed framed = FrameEveryWay(
      "POST /a HTTP/1.1\r\nHost: p\r\nExpect: 100-Continue\r\nContent-Length: 2\r\n\r\nok"
      "GET /b HTTP/1.1\r\nHost: p\r\nExpect: 100-continue\r\n\r\n");
  CHECK(framed.continues == 1);  // not for the bodiless GET
  CHECK(framed.requests == std::vector<std::string>{"POST /a {ok}", "GET /b {}"});
}

TEST_CASE("empty lines before a request line are skipped", "[net][request_reader]") {
  CHECK(FrameEveryWay("\r\n\r\nGET /a HTTP/1.1\r\nHost: p\r\n\r\n").requests ==
        std::vector<std::string>{"GET /a {}"});
}

TEST_CASE("a request's fields, query and body are as sent, values are trimmed",
          "[net][request_reader]") {
  const Framed framed = FrameEveryWay(
      "POST /api/settle/submit?gid=a+b&op=%41&flag HTTP/1.1\r\nHost: p:1\r\n"
      "X-Note:  a\tb c \r\nX-Name: caf\xc3\xa9\r\nX-Empty:\r\nContent-Length: 7\r\n\r\n"
      "{\"a\":1}");
  REQUIRE(framed.taken.size() == 1);
  const Request& r = framed.taken[0];
  CHECK(r.method == "POST");
  CHECK(r.path == "/api/settle/submit");
  CHECK(r.params ==
        std::multimap<std::string, std::string>{{"gid", "a b"}, {"op", "A"}, {"flag", ""}});
  CHECK(*r.Header("x-note") == "a\tb c");
  CHECK(*r.Header("X-NAME") == "caf\xc3\xa9");
  CHECK(*r.Header("x-empty") == "");
  CHECK(r.body == "{\"a\":1}");
  CHECK(r.Header("x-missing") == nullptr);
}

TEST_CASE("once refused, a reader takes nothing more", "[net][request_reader]") {
  RequestReader reader;
  reader.Append("GET /a HTTP/1.1\r\n\r\n");
  REQUIRE(reader.Parse() == RequestReader::Step::kRefused);
  reader.Append(kSmuggled);
  CHECK(reader.Parse() == RequestReader::Step::kRefused);
  CHECK(reader.refusal() == "Host: missing");
}

TEST_CASE(
    "with report_heads, each request stops at its checked head, before its body and before "
    "100-continue",
    "[net][request_reader]") {
  RequestReader reader({}, /*report_heads=*/true);
  reader.Append(
      "POST /a?x=1 HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");
  REQUIRE(reader.Parse() == RequestReader::Step::kHead);
  CHECK(reader.head().method == "POST");
  CHECK(reader.head().path == "/a");
  CHECK(reader.head().params.find("x")->second == "1");
  CHECK(*reader.head().Header("Content-Length") == "5");
  CHECK(reader.head().body.empty());
  reader.head().remote_address = "192.0.2.1";  // what a server adds; the request keeps it
  CHECK(reader.Parse() == RequestReader::Step::kExpectContinue);
  CHECK(reader.Parse() == RequestReader::Step::kNeedMore);
  reader.Append("helloGET /b HTTP/1.1\r\nHost: h\r\n\r\n");
  REQUIRE(reader.Parse() == RequestReader::Step::kRequest);
  const Request first = reader.TakeRequest();
  CHECK(first.body == "hello");
  CHECK(first.remote_address == "192.0.2.1");
  REQUIRE(reader.Parse() == RequestReader::Step::kHead);  // the next request's head, once
  CHECK(reader.head().path == "/b");
  REQUIRE(reader.Parse() == RequestReader::Step::kRequest);
  CHECK(reader.TakeRequest().path == "/b");

  // A head refused by the reader itself is refused, not reported.
  RequestReader refusing({}, /*report_heads=*/true);
  refusing.Append("GET /a HTTP/1.1\r\n\r\n");
  CHECK(refusing.Parse() == RequestReader::Step::kRefused);
}

}  // namespace
}  // namespace settle::net
