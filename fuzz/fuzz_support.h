#pragma once

// What the fuzz targets share: a checked invariant that stops the run (so libFuzzer keeps the
// input as a crash), and a cursor over the input that hands out its leading bytes as knobs.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

// An invariant of the code under test. A violation is a logic bug: libFuzzer reports it as a
// crash ("deadly signal") with the input that caused it.
#define FUZZ_CHECK(condition)                                                                   \
  do {                                                                                          \
    if (!(condition)) {                                                                         \
      std::fprintf(stderr, "FUZZ_CHECK failed at %s:%d: %s\n", __FILE__, __LINE__, #condition); \
      __builtin_trap();                                                                         \
    }                                                                                           \
  } while (false)

namespace settle::fuzz {

// Reads knobs from the front of the input; whatever is left is the payload.
class Input {
 public:
  Input(const std::uint8_t* data, std::size_t size)
      : rest_(reinterpret_cast<const char*>(data), size) {}

  // The next byte, or 0 once the input is used up.
  std::uint8_t Byte() {
    if (rest_.empty()) return 0;
    const auto b = static_cast<std::uint8_t>(rest_.front());
    rest_.remove_prefix(1);
    return b;
  }

  std::string_view rest() const { return rest_; }

 private:
  std::string_view rest_;
};

// How a connection's bytes are cut into reads: a fixed piece size, or (`varying`) pieces that
// cycle through 1..piece, so that every boundary position in a message gets visited.
class Splitter {
 public:
  Splitter(std::size_t piece, bool varying) : piece_(piece == 0 ? 1 : piece), varying_(varying) {}

  std::size_t Next() {
    if (!varying_) return piece_;
    next_ = next_ % piece_ + 1;
    return next_;
  }

 private:
  std::size_t piece_;
  bool varying_;
  std::size_t next_ = 0;
};

// The piece sizes a selector byte picks from: 1 byte at a time up to one large read, each
// multiplied by `scale` (streams of 64 KiB are not worth feeding byte by byte).
inline Splitter SplitterFor(std::uint8_t selector, std::size_t scale = 1) {
  static constexpr std::size_t kPieces[16] = {1,  2,  3,  4,   5,   7,    8,    13,
                                              16, 31, 64, 100, 511, 1024, 4096, 1 << 20};
  return Splitter(kPieces[selector & 15] * scale, (selector & 0x10) != 0);
}

// Whether a limits byte asks for a head padded to near its limit: one input in four.
inline bool PadsHead(std::uint8_t limits) { return (limits & 0x18) == 0x08; }

// An "X-Pad" header line after the first line of `stream` that brings the head to within a few
// hundred bytes of `max_head` (either side, by `adjust`), so that both sides of a parser's
// head limit get explored without inputs of 64 KiB.
inline std::string PadNearLimit(std::string_view stream, std::size_t max_head,
                                std::uint8_t adjust) {
  const std::size_t eol = stream.find("\r\n");
  if (eol == std::string_view::npos) return std::string(stream);
  const std::size_t line = max_head - 256 + adjust;
  std::string padded(stream.substr(0, eol + 2));
  padded += "X-Pad: ";
  padded.append(line - 9, 'a');
  padded += "\r\n";
  padded += stream.substr(eol + 2);
  return padded;
}

// Pieces for a padded stream: large enough to keep the run fast, still cutting the head in
// varying places.
inline constexpr std::size_t kPaddedScale = 509;

}  // namespace settle::fuzz
