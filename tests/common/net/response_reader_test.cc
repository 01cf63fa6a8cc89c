// ResponseReader: how a client of the project frames an answer, fed whole and in pieces.
#include "settle/net/response_reader.h"

#include <catch2/catch.hpp>

#include <string>

namespace settle::net {
namespace {

using Catch::Matchers::Contains;

struct Read {
  std::string outcome;  // "200 {body}", "malformed: <problem>", "need more"
  std::uint64_t body_bytes = 0;
  bool reusable = false;
  std::string leftover;
};

Read ReadAnswer(const std::string& bytes, std::size_t piece, bool eof, std::size_t keep = 1024) {
  ResponseReader reader(4096, keep);
  Read out;
  ResponseReader::Step step = ResponseReader::Step::kNeedMore;
  for (std::size_t at = 0; at < bytes.size() && step == ResponseReader::Step::kNeedMore;
       at += piece) {
    reader.Append(std::string_view(bytes).substr(at, piece));
    step = reader.Parse();
  }
  if (step == ResponseReader::Step::kNeedMore && eof) step = reader.Eof();
  if (step == ResponseReader::Step::kResponse) {
    out.outcome = std::to_string(reader.status()) + " {" + reader.body() + "}";
    out.body_bytes = reader.body_bytes();
    out.reusable = reader.reusable();
    out.leftover = std::string(reader.leftover());
  } else if (step == ResponseReader::Step::kMalformed) {
    out.outcome = "malformed: " + reader.problem();
  } else {
    out.outcome = "need more";
  }
  return out;
}

Read ReadEveryWay(const std::string& bytes, bool eof = false, std::size_t keep = 1024) {
  const Read whole = ReadAnswer(bytes, bytes.size(), eof, keep);
  for (std::size_t piece : {1, 5}) {
    INFO("in pieces of " << piece);
    const Read split = ReadAnswer(bytes, piece, eof, keep);
    CHECK(split.outcome == whole.outcome);
    CHECK(split.reusable == whole.reusable);
  }
  return whole;
}

TEST_CASE("an answer framed by Content-Length leaves the connection reusable",
          "[net][response_reader]") {
  const Read r = ReadEveryWay("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
  CHECK(r.outcome == "200 {hello}");
  CHECK(r.reusable);
}

TEST_CASE("a chunked answer is de-chunked, extensions and trailers included",
          "[net][response_reader]") {
  const Read r = ReadEveryWay(
      "HTTP/1.1 409 Conflict\r\nTransfer-Encoding: chunked\r\n\r\n"
      "8;x=y\r\n{\"dtm_re\r\n10\r\nsult\":\"FAILURE\"}\r\n0\r\nX-T: 1\r\n\r\n");
  CHECK(r.outcome == R"(409 {{"dtm_result":"FAILURE"}})");
  CHECK(r.reusable);
}

TEST_CASE("an answer without a length ends with the connection", "[net][response_reader]") {
  const Read open = ReadEveryWay("HTTP/1.1 200 OK\r\n\r\nuntil the end");
  CHECK(open.outcome == "need more");
  const Read closed = ReadEveryWay("HTTP/1.1 200 OK\r\n\r\nuntil the end", /*eof=*/true);
  CHECK(closed.outcome == "200 {until the end}");
  CHECK_FALSE(closed.reusable);
}

TEST_CASE("interim answers are skipped", "[net][response_reader]") {
  const Read r = ReadEveryWay(
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\n"
      "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
  CHECK(r.outcome == "200 {ok}");
}

TEST_CASE("only the first bytes of a long body are kept, all are counted",
          "[net][response_reader]") {
  const Read r = ReadEveryWay("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789", false, 4);
  CHECK(r.outcome == "200 {0123}");
  CHECK(r.body_bytes == 10);
  CHECK(r.reusable);
}

TEST_CASE("HTTP/1.0 answers and Connection: close end the connection's reuse",
          "[net][response_reader]") {
  CHECK_FALSE(ReadEveryWay("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n").reusable);
  CHECK_FALSE(
      ReadEveryWay("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n").reusable);
}

TEST_CASE("bytes after an answer are kept for whoever reads next and spoil reuse",
          "[net][response_reader]") {
  const Read r = ReadAnswer("HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 200", 1000, false);
  CHECK(r.outcome == "204 {}");
  CHECK(r.leftover == "HTTP/1.1 200");
  CHECK_FALSE(r.reusable);
}

TEST_CASE("malformed and cut-off answers say what is wrong", "[net][response_reader]") {
  CHECK_THAT(ReadEveryWay("SMTP ready\r\n\r\n").outcome, Contains("malformed"));
  CHECK_THAT(ReadEveryWay("HTTP/1.1 2x0 OK\r\n\r\n").outcome, Contains("malformed"));
  CHECK_THAT(ReadEveryWay("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n").outcome,
             Contains("malformed: malformed chunk"));
  CHECK_THAT(ReadEveryWay("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf", true).outcome,
             Contains("malformed"));
  CHECK_THAT(ReadEveryWay("HTTP/1.1 200 OK\r\nContent-Le", true).outcome, Contains("malformed"));
  CHECK_THAT(ReadEveryWay("HTTP/1.1 200 OK\r\nX: " + std::string(5000, 'a') + "\r\n\r\n").outcome,
             Contains("its head is larger than 4096 bytes"));
  CHECK(ReadEveryWay("", true).outcome == "need more");  // nothing at all: closed, not malformed
}

}  // namespace
}  // namespace settle::net
