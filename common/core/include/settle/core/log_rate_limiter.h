#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "settle/core/clock.h"

namespace settle {

// Decides which events of a stream get a log line, so that a flood of them (refused requests,
// failed handshakes) can neither fill the disk nor slow the process down with writes. Events
// are of `kinds` kinds (0 to kinds - 1, e.g. a refusal's reason), each limited on its own:
//
// - A kind's window opens at its first event and lasts `window` (on the clock's monotonic
//   reading). Its first `lines` events are logged; the last of them is marked `last`, so that
//   its line can say that more are only counted. Those after it are suppressed: counted, not
//   logged.
// - How many were suppressed is reported once, when the window has ended: by the next event of
//   that kind (Verdict::suppressed, to be said before its own line), or by TakeEnded(), which a
//   caller runs every so often so that the count is told even when the flood stopped.
//
// At most `lines` + 1 lines per kind per window, whatever the rate. Pure: no I/O, time only
// from `clock`.
//
// Lifetime: `clock` must outlive it. Thread-safety: REQUIRES external synchronization.
class LogRateLimiter {
 public:
  struct Options {
    std::size_t lines = 10;  // at least 1
    Duration window{60'000};
  };

  LogRateLimiter(const Clock& clock, std::size_t kinds, Options options);

  struct Verdict {
    bool log = false;   // write this event's line
    bool last = false;  // with log: the window's last line; later events are only counted
    // Events of this kind not logged in its window that has just ended, not reported yet:
    // say so (before this event's line, if it is logged).
    std::uint64_t suppressed = 0;
  };
  // An event of `kind` (< kinds) happened now.
  Verdict Admit(std::size_t kind);

  struct Ended {
    std::size_t kind;
    std::uint64_t suppressed;  // > 0
  };
  // The kinds whose window has ended with events suppressed and not reported yet; each is
  // reported once, here or by the next Admit of its kind.
  std::vector<Ended> TakeEnded();

  const Options& options() const { return options_; }

 private:
  struct Window {
    bool open = false;
    MonoTime opened{0};
    std::uint64_t logged = 0;
    std::uint64_t suppressed = 0;
  };

  // Closes `window` if it has lasted its time; returns what it suppressed.
  std::uint64_t CloseIfEnded(Window& window, MonoTime now) const;

  const Clock& clock_;
  const Options options_;
  std::vector<Window> windows_;
};

}  // namespace settle
