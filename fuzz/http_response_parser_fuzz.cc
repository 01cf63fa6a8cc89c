// ResponseReader (settle/net/response_reader.h), as the client reads a participant's answer:
// framed by Content-Length, chunked or the end of the connection, interim 1xx answers skipped,
// only a prefix of the body kept. The same bytes are read three times: in one read, cut into
// pieces, and in one read keeping the whole body. The first two must agree on everything; the
// kept body must be the start of the whole one.
//
// Input: [split selector] [mode and limits] [pad adjust] bytes from the peer...
//   mode: bits 0-2 how much of the body is kept, bits 3-4 padding (PadsHead), bit 4 alone
//     (0x10): the bytes are a chunked body, sent after a head that announces one; bits 5-7
//     the head limit.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "settle/net/message.h"
#include "settle/net/response_reader.h"

namespace settle::fuzz {
namespace {

using net::ResponseReader;
using Step = ResponseReader::Step;

// What the client learns from one exchange once the peer has sent everything and closed.
struct Outcome {
  enum Kind { kAnswer, kMalformed, kNothing } kind = kNothing;  // kNothing: closed before a byte
  int status = 0;
  std::string body;
  std::uint64_t body_bytes = 0;
  net::Headers headers;
  bool reusable = false;
  std::string leftover;
  bool operator==(const Outcome&) const = default;
};

bool IsInterim(int status) { return status >= 100 && status < 200 && status != 101; }

void CheckAnswer(const Outcome& a, std::size_t max_head, std::size_t keep) {
  FUZZ_CHECK(a.status >= 0 && a.status <= 999);  // three digits
  FUZZ_CHECK(!IsInterim(a.status));              // "100 Continue" and the like are skipped
  // Only the start of the body is kept; the rest is counted.
  FUZZ_CHECK(a.body.size() <= keep);
  FUZZ_CHECK(a.body_bytes >= a.body.size());
  FUZZ_CHECK(a.body.size() == std::min<std::uint64_t>(keep, a.body_bytes));
  if (a.status == 204 || a.status == 304 || a.status / 100 == 1) FUZZ_CHECK(a.body_bytes == 0);
  // The head limit holds for every field the caller sees, trailers included.
  std::size_t fields = 0;
  for (const auto& [name, value] : a.headers) {
    FUZZ_CHECK(IsValidHeaderName(name));
    FUZZ_CHECK(IsValidHeaderValue(value));
    fields += name.size() + 1 + value.size() + 2;
  }
  FUZZ_CHECK(fields <= max_head);
  // A connection is reused only when nothing more than the answer came on it.
  if (a.reusable) FUZZ_CHECK(a.leftover.empty());
}

// Reads one answer the way the client's Exchange does: Parse, read into prepared room while it
// wants more, Eof when the peer closed. After an answer, the rest of the bytes still arrive
// (a peer sending more than it should), so that every run has seen the same bytes when
// reusable() and leftover() are asked.
Outcome Run(std::string_view stream, std::size_t max_head, std::size_t keep, Splitter split,
            std::size_t room_extra) {
  Outcome out;
  ResponseReader reader(max_head, keep);
  std::size_t at = 0;
  Step step = reader.Parse();
  while (step == Step::kNeedMore) {
    if (at == stream.size()) {
      step = reader.Eof();
      if (step == Step::kNeedMore) {
        FUZZ_CHECK(!reader.got_some());  // only a peer that sent nothing leaves it wanting
        return out;
      }
      break;
    }
    const std::string_view piece = stream.substr(at, split.Next());
    at += piece.size();
    const std::span<char> room = reader.Prepare(piece.size() + room_extra);
    std::copy(piece.begin(), piece.end(), room.begin());
    reader.Commit(piece.size());
    step = reader.Parse();
  }
  FUZZ_CHECK(reader.got_some());
  if (step == Step::kMalformed) {
    FUZZ_CHECK(!reader.problem().empty());
    FUZZ_CHECK(reader.Parse() == Step::kMalformed);  // and stays so
    out.kind = Outcome::kMalformed;
    return out;
  }
  FUZZ_CHECK(step == Step::kResponse);
  reader.Append(stream.substr(at));
  FUZZ_CHECK(reader.Parse() == Step::kResponse);  // a whole answer stays whole
  out.kind = Outcome::kAnswer;
  out.status = reader.status();
  out.body = reader.body();
  out.body_bytes = reader.body_bytes();
  out.headers = reader.headers();
  out.reusable = reader.reusable();
  out.leftover = std::string(reader.leftover());
  CheckAnswer(out, max_head, keep);
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

  static constexpr std::size_t kKeeps[8] = {0, 1, 7, 24, 200, 4096, 64 * 1024, 1 << 20};
  // 64 KiB is what the client reads answers with; the small ones are reached by short inputs.
  static constexpr std::size_t kMaxHeads[8] = {64 * 1024, 64 * 1024, 64 * 1024, 64 * 1024,
                                               64,        128,       256,       1024};
  const std::size_t keep = kKeeps[mode & 7];
  const bool padded = PadsHead(mode);
  const std::size_t max_head = padded ? 64 * 1024 : kMaxHeads[(mode >> 5) & 7];
  std::string stream;
  if ((mode & 0x18) == 0x10) {
    stream = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    stream += input.rest();
  } else if (padded) {
    stream = PadNearLimit(input.rest(), max_head, adjust);
  } else {
    stream = std::string(input.rest());
  }

  const Outcome whole = Run(stream, max_head, keep, Splitter(stream.size() + 1, false), 0);
  const Outcome pieces = Run(stream, max_head, keep, SplitterFor(split, padded ? kPaddedScale : 1),
                             static_cast<std::size_t>(split >> 5) * 5);
  FUZZ_CHECK(whole == pieces);

  // Keeping more of the body changes nothing but how much of it is kept.
  const std::size_t kAll = std::size_t{1} << 30;
  const Outcome all = Run(stream, max_head, kAll, Splitter(stream.size() + 1, false), 0);
  FUZZ_CHECK(all.kind == whole.kind && all.status == whole.status &&
             all.body_bytes == whole.body_bytes && all.headers == whole.headers &&
             all.reusable == whole.reusable && all.leftover == whole.leftover);
  FUZZ_CHECK(all.body.size() == all.body_bytes);
  FUZZ_CHECK(all.body.compare(0, whole.body.size(), whole.body) == 0);
  return 0;
}
