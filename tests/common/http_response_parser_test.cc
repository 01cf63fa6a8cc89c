#include "settle/common/http_response_parser.h"

#include <catch2/catch.hpp>

#include <string>

#include "feed_in_pieces.h"

namespace settle {
namespace {

using State = HttpResponseParser::State;
using Catch::Matchers::Contains;

constexpr std::size_t kKeepAll = 1 << 20;

TEST_CASE("an answer framed by Content-Length is read whole, however it arrives", "[common]") {
  const std::string answer =
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\ncontent-length: 24\r\n\r\n"
      R"({"dtm_result":"SUCCESS"})";
  for (std::size_t piece : {answer.size(), std::size_t{1}, std::size_t{7}}) {
    INFO("pieces of " << piece);
    HttpResponseParser parser(kKeepAll);
    std::size_t consumed = 0;

    CHECK(FeedInPieces(parser, answer, piece, consumed) == State::kDone);
    CHECK(consumed == answer.size());
    CHECK(parser.status() == 200);
    CHECK(parser.body() == R"({"dtm_result":"SUCCESS"})");
    CHECK(parser.keep_alive());
  }
}

TEST_CASE("a chunked answer is joined, its extensions and trailers skipped", "[common]") {
  const std::string answer =
      "HTTP/1.1 409 Conflict\r\nTransfer-Encoding: chunked\r\n\r\n"
      "4;ext=1\r\nFAIL\r\nA\r\nURE-123456\r\n0\r\nX-Trailer: t\r\n\r\n";
  for (std::size_t piece : {answer.size(), std::size_t{1}, std::size_t{5}}) {
    INFO("pieces of " << piece);
    HttpResponseParser parser(kKeepAll);
    std::size_t consumed = 0;

    CHECK(FeedInPieces(parser, answer, piece, consumed) == State::kDone);
    CHECK(consumed == answer.size());
    CHECK(parser.status() == 409);
    CHECK(parser.body() == "FAILURE-123456");
    CHECK(parser.keep_alive());
  }
}

TEST_CASE("only the start of a long body is kept, but all of it is consumed", "[common]") {
  const std::string answer =
      "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 1000\r\n\r\n" + std::string(1000, 'x');
  HttpResponseParser parser(10);
  std::size_t consumed = 0;

  CHECK(FeedInPieces(parser, answer, 100, consumed) == State::kDone);
  CHECK(consumed == answer.size());
  CHECK(parser.body() == std::string(10, 'x'));
}

TEST_CASE("bytes after the answer are left unconsumed", "[common]") {
  const std::string answer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200";
  HttpResponseParser parser(kKeepAll);
  std::size_t consumed = 0;

  CHECK(parser.Feed(answer, consumed) == State::kDone);
  CHECK(consumed == answer.size() - std::string("HTTP/1.1 200").size());
}

TEST_CASE("whether the connection may be kept follows the version and Connection", "[common]") {
  struct Case {
    std::string head;
    bool keep_alive;
  };
  for (const Case& c : {Case{"HTTP/1.1 200 OK\r\n", true},
                        Case{"HTTP/1.1 200 OK\r\nConnection: close\r\n", false},
                        Case{"HTTP/1.1 200 OK\r\nConnection: Keep-Alive, CLOSE\r\n", false},
                        Case{"HTTP/1.0 200 OK\r\n", false},
                        Case{"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n", true}}) {
    INFO(c.head);
    HttpResponseParser parser(kKeepAll);
    std::size_t consumed = 0;
    CHECK(parser.Feed(c.head + "Content-Length: 0\r\n\r\n", consumed) == State::kDone);
    CHECK(parser.keep_alive() == c.keep_alive);
  }
}

TEST_CASE("a body without framing runs to the close, which ends the connection", "[common]") {
  HttpResponseParser parser(kKeepAll);
  std::size_t consumed = 0;

  CHECK(parser.Feed("HTTP/1.1 200 OK\r\n\r\nSUCC", consumed) == State::kNeedMore);
  CHECK(parser.Feed("ESS", consumed) == State::kNeedMore);
  CHECK(parser.Finish() == State::kDone);
  CHECK(parser.body() == "SUCCESS");
  CHECK_FALSE(parser.keep_alive());
}

TEST_CASE("interim 1xx answers are skipped; 204 and 304 have no body", "[common]") {
  HttpResponseParser parser(kKeepAll);
  std::size_t consumed = 0;
  const std::string answers =
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n";

  CHECK(parser.Feed(answers, consumed) == State::kDone);
  CHECK(consumed == answers.size());
  CHECK(parser.status() == 204);
  CHECK(parser.body().empty());
}

TEST_CASE("a connection closed early is an error that says how early", "[common]") {
  HttpResponseParser nothing(kKeepAll);
  CHECK(nothing.Finish() == State::kError);
  CHECK_THAT(nothing.error(), Contains("before any answer"));

  HttpResponseParser half(kKeepAll);
  std::size_t consumed = 0;
  half.Feed("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", consumed);
  CHECK(half.Finish() == State::kError);
  CHECK_THAT(half.error(), Contains("before a complete answer"));
}

TEST_CASE("what is not an HTTP/1.x answer is an error naming the fault", "[common]") {
  struct Case {
    std::string bytes;
    std::string error;
  };
  for (const Case& c : {
           Case{"SSH-2.0-OpenSSH\r\n\r\n", "malformed status line"},
           Case{"HTTP/2 200\r\n\r\n", "malformed status line"},
           Case{"HTTP/1.1 20 OK\r\n\r\n", "malformed status line"},
           Case{"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "malformed header line"},
           Case{"HTTP/1.1 200 OK\r\n folded: x\r\n\r\n", "malformed header line"},
           Case{"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "invalid Content-Length"},
           Case{"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n",
                "invalid Content-Length"},
           Case{"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
                "invalid Content-Length"},
           Case{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "invalid chunk size"},
           Case{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n",
                "longer than its size"},
           Case{"HTTP/1.1 200 OK\r\nX: " + std::string(70 * 1024, 'a'), "head is over"},
           Case{"HTTP/1.1 101 Switching Protocols\r\n\r\n", "switched protocols"},
       }) {
    INFO(c.bytes.substr(0, 60));
    HttpResponseParser parser(kKeepAll);
    std::size_t consumed = 0;
    CHECK(FeedInPieces(parser, c.bytes, 1000, consumed) == State::kError);
    CHECK_THAT(parser.error(), Contains(c.error));
  }
}

// Found by fuzz/http_response_parser_fuzz.cc: the limit was checked only while the head was
// incomplete, so a head over it that arrived in one read (or whose last read completed it)
// was taken.
TEST_CASE("a head over the limit is refused however it arrives, even complete in one read",
          "[common]") {
  const std::string answer = "HTTP/1.1 200 OK\r\nX-Big: " +
                             std::string(HttpResponseParser::kMaxHeadBytes, 'a') +
                             "\r\nContent-Length: 2\r\n\r\nok";
  for (std::size_t piece : {answer.size(), std::size_t{16 * 1024}, std::size_t{1000}}) {
    INFO("pieces of " << piece);
    HttpResponseParser parser(kKeepAll);
    std::size_t consumed = 0;

    CHECK(FeedInPieces(parser, answer, piece, consumed) == State::kError);
    CHECK_THAT(parser.error(), Contains("head is over"));
  }
}

// Found by fuzz/http_request_parser_fuzz.cc, in the header parsing the two parsers share.
TEST_CASE("an answer whose header lines are not well-formed is malformed", "[common]") {
  for (const std::string& line : {std::string("Content-Length : 2"),
                                  std::string("X-Note: a\nContent-Length: 2"),
                                  std::string("X-Note: a\rb"), std::string("X-Note: a\0b", 11)}) {
    INFO(line);
    HttpResponseParser parser(kKeepAll);
    std::size_t consumed = 0;

    CHECK(parser.Feed("HTTP/1.1 200 OK\r\n" + line + "\r\n\r\nok", consumed) == State::kError);
    CHECK_THAT(parser.error(), Contains("malformed header line"));
  }
}

}  // namespace
}  // namespace settle
