#pragma once

#include <spdlog/formatter.h>
#include <spdlog/sinks/sink.h>

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace settle::app {

// A spdlog sink that formats each line on the logging thread and leaves the writing to one
// background thread, which writes everything logged meanwhile with a single write(2): a busy
// coordinator logs thousands of lines per second without a system call or a thread wake-up per
// line, or request threads queueing behind the file. A line is written within about 10 ms;
// flush() (spdlog calls it for warn and above) returns once every earlier line is written;
// the destructor writes the rest. Each message is written as one line: its control bytes (a
// newline a client put in a reason, say) are escaped (EscapeControlBytes), so no value can
// forge a line of its own. A kill -9 can lose the lines
// of the last moment, never the stored state they describe.
//
// Lifetime: `fd` stays open until the sink is destroyed (it does not close it). Thread-safe:
// spdlog calls it from any threads at once.
class BackgroundLogSink final : public spdlog::sinks::sink {
 public:
  explicit BackgroundLogSink(int fd);
  ~BackgroundLogSink() override;

  void log(const spdlog::details::log_msg& msg) override;
  void flush() override;
  void set_pattern(const std::string& pattern) override;
  void set_formatter(std::unique_ptr<spdlog::formatter> formatter) override;

 private:
  void WriteLoop();
  void WriteAll(const std::string& text) const;

  const int fd_;
  std::mutex mu_;
  std::condition_variable work_cv_;     // lines pending, or stopping
  std::condition_variable written_cv_;  // a write finished
  std::unique_ptr<spdlog::formatter> formatter_;
  std::string pending_;
  std::uint64_t logged_ = 0;   // lines appended to pending_ so far
  std::uint64_t written_ = 0;  // of them, lines written
  bool writer_idle_ = false;
  bool flush_wanted_ = false;  // a flush() waits: write without lingering
  bool stopping_ = false;
  std::thread writer_;
};

}  // namespace settle::app
