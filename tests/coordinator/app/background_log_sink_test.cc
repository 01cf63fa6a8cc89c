#include "settle/app/background_log_sink.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "eventually.h"
#include "temp_dir.h"

namespace settle::app {
namespace {

// A logger writing through a BackgroundLogSink into a file of the test's own.
class LogFile {
 public:
  LogFile() : path_(dir_.File("settled.log")) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    REQUIRE(fd_ >= 0);
    sink_ = std::make_shared<BackgroundLogSink>(fd_);
    logger_ = std::make_shared<spdlog::logger>("test", sink_);
    logger_->set_pattern("%l %v");
    logger_->flush_on(spdlog::level::warn);
  }
  ~LogFile() { ::close(fd_); }

  spdlog::logger& logger() { return *logger_; }
  // Destroys the logger and its sink, as settled does before it exits.
  void Close() {
    logger_.reset();
    sink_.reset();
  }
  std::vector<std::string> Lines() const {
    std::ifstream in(path_);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }

 private:
  testing::TempDir dir_;
  std::string path_;
  int fd_ = -1;
  std::shared_ptr<BackgroundLogSink> sink_;
  std::shared_ptr<spdlog::logger> logger_;
};

TEST_CASE("a message with a newline is written as one line, its control bytes escaped",
          "[logging]") {
  LogFile log;
  log.logger().warn("abort reason={}", "x\ninfo FORGED\r\x01");
  log.logger().warn("next");
  log.Close();
  const std::vector<std::string> lines = log.Lines();
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "warning abort reason=x\\ninfo FORGED\\r\\x01");
  CHECK(lines[1] == "warning next");
}

TEST_CASE("every line logged from many threads is written whole and in each thread's order",
          "[logging]") {
  LogFile log;
  constexpr int kThreads = 4;
  constexpr int kLines = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kLines; ++i) log.logger().info("thread={} line={}", t, i);
    });
  }
  for (auto& th : threads) th.join();
  log.Close();

  const std::vector<std::string> lines = log.Lines();
  REQUIRE(lines.size() == kThreads * kLines);
  std::map<int, int> next;  // thread -> the line number expected next
  for (const std::string& line : lines) {
    int t = -1;
    int i = -1;
    REQUIRE(std::sscanf(line.c_str(), "info thread=%d line=%d", &t, &i) == 2);
    CHECK(i == next[t]++);
  }
}

TEST_CASE("a warning is written before the call that logs it returns", "[logging]") {
  LogFile log;
  log.logger().info("before");
  log.logger().warn("something is wrong");
  const std::vector<std::string> lines = log.Lines();
  CHECK(lines == std::vector<std::string>{"info before", "warning something is wrong"});
}

TEST_CASE("a line at info is written soon without a flush, the sink still open", "[logging]") {
  LogFile log;
  log.logger().info("on its own");
  // The writer lingers a few milliseconds for company; the timeout only bounds a failure, and
  // the 1 ms between polls is a poll, not a wait for time.
  testing::Eventually([&] { return !log.Lines().empty(); }, std::chrono::seconds(10),
                      std::chrono::milliseconds(1));
  CHECK(log.Lines() == std::vector<std::string>{"info on its own"});
}

TEST_CASE("closing the sink writes the lines still pending", "[logging]") {
  LogFile log;
  for (int i = 0; i < 100; ++i) log.logger().info("line {}", i);
  log.Close();
  const std::vector<std::string> lines = log.Lines();
  REQUIRE(lines.size() == 100);
  CHECK(lines.back() == "info line 99");
}

}  // namespace
}  // namespace settle::app
