// HttpResponseParser, as a keep-alive client reads participants' answers, and the
// HttpChunkedDecoder it shares with the request parser. As for requests, the same bytes are
// parsed in one read and in pieces, and both must agree.
//
// Input: [split selector] [mode and limits] [pad adjust] bytes from the peer...
// Mode bit 0x10 set: the bytes are a chunked body for HttpChunkedDecoder alone.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.h"
#include "settle/common/http_chunked_decoder.h"
#include "settle/common/http_response_parser.h"

namespace settle::fuzz {
namespace {

// ---- the response parser ----

struct Answer {
  int status = 0;
  std::string body;
  bool keep_alive = false;
  bool operator==(const Answer&) const = default;
};

struct Outcome {
  std::vector<Answer> answers;
  std::string error;  // the refusal that ended the connection, or Finish()'s
  bool operator==(const Outcome&) const = default;
};

void CheckAnswer(HttpResponseParser& parser, std::size_t max_body) {
  using State = HttpResponseParser::State;
  FUZZ_CHECK(parser.status() >= 0 && parser.status() <= 999);
  FUZZ_CHECK(parser.status() < 100 || parser.status() >= 200);  // interim answers are skipped
  FUZZ_CHECK(parser.body().size() <= max_body);
  if (parser.status() == 204 || parser.status() == 304) FUZZ_CHECK(parser.body().empty());
  FUZZ_CHECK(parser.Finish() == State::kDone);  // a complete answer stays complete
}

// Reads answers one after another off one connection, a new parser for each (as
// HttpClientConnection::Exchange does), then the peer closes.
Outcome RunAnswers(std::string_view stream, std::size_t max_body, Splitter split) {
  using State = HttpResponseParser::State;
  Outcome out;
  auto parser = std::make_unique<HttpResponseParser>(max_body);
  std::size_t at = 0;
  while (at < stream.size()) {
    std::string_view data = stream.substr(at, split.Next());
    at += data.size();
    while (!data.empty()) {
      std::size_t consumed = 0;
      const State state = parser->Feed(data, consumed);
      FUZZ_CHECK(state == parser->state());
      FUZZ_CHECK(consumed <= data.size());
      FUZZ_CHECK(parser->started());
      if (state == State::kNeedMore) {
        FUZZ_CHECK(consumed == data.size());
        break;
      }
      if (state == State::kError) {
        FUZZ_CHECK(!parser->error().empty());
        out.error = parser->error();
        return out;
      }
      FUZZ_CHECK(consumed > 0);
      CheckAnswer(*parser, max_body);
      out.answers.push_back(Answer{parser->status(), parser->body(), parser->keep_alive()});
      data.remove_prefix(consumed);
      parser = std::make_unique<HttpResponseParser>(max_body);
    }
  }
  const State end = parser->Finish();
  if (end == State::kDone) {
    CheckAnswer(*parser, max_body);
    FUZZ_CHECK(!parser->keep_alive());  // a body that ran to the close ends the connection
    out.answers.push_back(Answer{parser->status(), parser->body(), parser->keep_alive()});
  } else {
    FUZZ_CHECK(end == State::kError && !parser->error().empty());
    out.error = parser->error();
  }
  return out;
}

// ---- the chunked decoder alone ----

struct Decoded {
  HttpChunkedDecoder::State state = HttpChunkedDecoder::State::kNeedMore;
  std::string body;
  std::size_t consumed = 0;
  std::string error;
  bool operator==(const Decoded&) const = default;
};

// Feeds a growing prefix of the stream from the position reached so far, as the request
// parser does when a read holds the head and the start of the body.
Decoded RunDecoder(std::string_view stream, Splitter split) {
  using State = HttpChunkedDecoder::State;
  Decoded out;
  HttpChunkedDecoder decoder;
  std::size_t pos = 0;
  std::size_t visible = 0;
  while (visible < stream.size()) {
    visible = std::min(stream.size(), visible + split.Next());
    const std::size_t before = pos;
    out.state = decoder.Feed(stream.substr(0, visible), pos, out.body);
    FUZZ_CHECK(pos >= before && pos <= visible);
    FUZZ_CHECK(out.body.size() <= pos);  // decoding never makes bytes up
    if (out.state == State::kNeedMore) FUZZ_CHECK(pos == visible);
    if (out.state == State::kError) FUZZ_CHECK(!decoder.error().empty());
    if (out.state != State::kNeedMore) break;
  }
  out.consumed = pos;
  out.error = decoder.error();
  return out;
}

}  // namespace
}  // namespace settle::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace settle::fuzz;
  Input input(data, size);
  const std::uint8_t split = input.Byte();
  const std::uint8_t mode = input.Byte();
  const std::uint8_t adjust = input.Byte();

  if ((mode & 0x10) != 0) {
    const std::string_view stream = input.rest();
    const Decoded whole = RunDecoder(stream, Splitter(stream.size() + 1, false));
    const Decoded pieces = RunDecoder(stream, SplitterFor(split));
    FUZZ_CHECK(whole == pieces);
    return 0;
  }

  static constexpr std::size_t kMaxBodies[8] = {0, 1, 7, 24, 200, 4096, 64 * 1024, 1 << 20};
  const std::size_t max_body = kMaxBodies[mode & 7];
  const bool padded = PadsHead(mode);
  const std::string stream =
      padded ? PadNearLimit(input.rest(), settle::HttpResponseParser::kMaxHeadBytes, adjust)
             : std::string(input.rest());
  const Outcome whole = RunAnswers(stream, max_body, Splitter(stream.size() + 1, false));
  const Outcome pieces =
      RunAnswers(stream, max_body, SplitterFor(split, padded ? kPaddedScale : 1));
  FUZZ_CHECK(whole == pieces);
  return 0;
}
