#include "settle/app/background_log_sink.h"

#include <spdlog/pattern_formatter.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "settle/core/log_text.h"
#include "settle/core/thread_name.h"

namespace settle::app {
namespace {

// Once a line is pending, the writer waits this long for more before writing, so that a busy
// coordinator's lines go out a few hundred per write(2) and its threads are not woken per line;
// unless someone flushes or this much is pending already.
constexpr std::chrono::milliseconds kLinger{10};
constexpr std::size_t kLingerBytes = 64 * 1024;

}  // namespace

BackgroundLogSink::BackgroundLogSink(int fd)
    : fd_(fd), formatter_(std::make_unique<spdlog::pattern_formatter>()) {
  writer_ = std::thread([this] {
    NameThisThread("settle-log");
    WriteLoop();
  });
}

BackgroundLogSink::~BackgroundLogSink() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_one();
  writer_.join();
}

void BackgroundLogSink::log(const spdlog::details::log_msg& msg) {
  spdlog::memory_buf_t line;
  // A message is one line, whatever a value it quotes holds: a newline in a client's reason
  // or a participant's answer is written \n, never as a line of its own.
  const std::string_view payload(msg.payload.data(), msg.payload.size());
  std::string escaped;
  spdlog::details::log_msg one_line = msg;
  if (HasControlBytes(payload)) {
    escaped = EscapeControlBytes(payload);
    one_line.payload = spdlog::string_view_t(escaped.data(), escaped.size());
  }
  std::lock_guard lock(mu_);
  formatter_->format(one_line, line);
  pending_.append(line.data(), line.size());
  ++logged_;
  // Only a waiting writer needs a wake-up; a busy one finds the line when its write is done,
  // and a lingering one when its linger ends, unless enough is pending to write at once.
  if (writer_idle_) {
    writer_idle_ = false;
    work_cv_.notify_one();
  } else if (pending_.size() >= kLingerBytes) {
    work_cv_.notify_one();
  }
}

void BackgroundLogSink::flush() {
  std::unique_lock lock(mu_);
  const std::uint64_t target = logged_;
  if (written_ < target) {
    flush_wanted_ = true;
    writer_idle_ = false;
    work_cv_.notify_one();
  }
  written_cv_.wait(lock, [&] { return written_ >= target; });
}

void BackgroundLogSink::set_pattern(const std::string& pattern) {
  set_formatter(std::make_unique<spdlog::pattern_formatter>(pattern));
}

void BackgroundLogSink::set_formatter(std::unique_ptr<spdlog::formatter> formatter) {
  std::lock_guard lock(mu_);
  formatter_ = std::move(formatter);
}

void BackgroundLogSink::WriteLoop() {
  std::string batch;
  std::unique_lock lock(mu_);
  for (;;) {
    if (pending_.empty()) {
      if (stopping_) return;
      writer_idle_ = true;
      work_cv_.wait(lock, [&] { return !pending_.empty() || stopping_; });
      writer_idle_ = false;
      continue;
    }
    work_cv_.wait_for(lock, kLinger, [&] {
      return stopping_ || flush_wanted_ || pending_.size() >= kLingerBytes;
    });
    flush_wanted_ = false;
    batch.clear();
    batch.swap(pending_);
    const std::uint64_t lines = logged_;
    lock.unlock();
    WriteAll(batch);
    lock.lock();
    written_ = lines;
    written_cv_.notify_all();
  }
}

// A log line that cannot be written (a closed stderr, a full disk) is dropped: logging must
// never stop the coordinator.
void BackgroundLogSink::WriteAll(const std::string& text) const {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace settle::app
