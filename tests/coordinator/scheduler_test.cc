#include "settle/coordinator/scheduler.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "fake_clock.h"

namespace settle::coordinator {
namespace {

constexpr Duration kSecond{1000};

// Records passes and answers what the test scripts (by default: finished).
class FakeRunner final : public PassRunner {
 public:
  std::function<PassResult(const std::string&, std::stop_token)> answer =
      [](const std::string&, std::stop_token) { return PassResult{}; };

  PassResult RunPass(const std::string& gid, std::optional<storage::Transaction> stored,
                     std::stop_token stop) override {
    {
      std::lock_guard lock(mu_);
      runs_.push_back(gid);
      given_.push_back(stored ? stored->global.gid : "");
      threads_.push_back(std::this_thread::get_id());
      if (++concurrent_ > 1) overlapped_ = true;
    }
    PassResult result = answer(gid, stop);
    std::lock_guard lock(mu_);
    --concurrent_;
    cv_.notify_all();
    return result;
  }

  std::vector<std::string> runs() const {
    std::lock_guard lock(mu_);
    return runs_;
  }
  // Per run: the gid of the stored transaction it was given, or "" when it had to read it.
  std::vector<std::string> given() const {
    std::lock_guard lock(mu_);
    return given_;
  }
  std::vector<std::thread::id> threads() const {
    std::lock_guard lock(mu_);
    return threads_;
  }
  bool overlapped() const { return overlapped_; }
  bool WaitForRuns(std::size_t n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10), [&] { return runs_.size() >= n; });
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> runs_;
  std::vector<std::thread::id> threads_;
  std::vector<std::string> given_;
  int concurrent_ = 0;
  std::atomic<bool> overlapped_{false};
};

// Keeps posted tasks until the test runs them.
class ManualExecutor final : public Executor {
 public:
  void Post(std::function<void()> task) override {
    std::lock_guard lock(mu_);
    tasks_.push_back(std::move(task));
  }
  std::size_t Pending() const {
    std::lock_guard lock(mu_);
    return tasks_.size();
  }
  void RunAll() {
    for (;;) {
      std::function<void()> task;
      {
        std::lock_guard lock(mu_);
        if (tasks_.empty()) return;
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }

 private:
  mutable std::mutex mu_;
  std::deque<std::function<void()>> tasks_;
};

TEST_CASE("a transaction due now is dispatched at once", "[scheduler]") {
  testing::FakeClock clock;
  InlineExecutor executor;
  FakeRunner runner;
  Scheduler scheduler(clock, executor, runner);
  scheduler.Schedule("g1", clock.Now());
  CHECK(runner.runs() == std::vector<std::string>{"g1"});
  CHECK_FALSE(scheduler.DueTime("g1"));  // finished: forgotten
}

TEST_CASE("a transaction due later runs only once its time has come", "[scheduler]") {
  testing::FakeClock clock;
  InlineExecutor executor;
  FakeRunner runner;
  Scheduler scheduler(clock, executor, runner);
  scheduler.Schedule("g1", clock.Now() + 5 * kSecond);
  CHECK(scheduler.RunOnce() == 0);
  clock.Advance(4 * kSecond);
  CHECK(scheduler.RunOnce() == 0);
  clock.Advance(kSecond);
  CHECK(scheduler.RunOnce() == 1);
  CHECK(runner.runs() == std::vector<std::string>{"g1"});
}

TEST_CASE("the earliest requested due time wins", "[scheduler]") {
  testing::FakeClock clock;
  InlineExecutor executor;
  FakeRunner runner;
  Scheduler scheduler(clock, executor, runner);
  const TimePoint t0 = clock.Now();
  scheduler.Schedule("g1", t0 + 10 * kSecond);
  scheduler.Schedule("g1", t0 + 2 * kSecond);
  scheduler.Schedule("g1", t0 + 20 * kSecond);
  CHECK(scheduler.DueTime("g1") == t0 + 2 * kSecond);
  CHECK(scheduler.Scheduled() == 1);
}

TEST_CASE("a pass that leaves work behind is due again when it says", "[scheduler]") {
  testing::FakeClock clock;
  InlineExecutor executor;
  FakeRunner runner;
  int passes = 0;
  runner.answer = [&](const std::string&, std::stop_token) {
    return ++passes == 1 ? PassResult{clock.Now() + 3 * kSecond} : PassResult{};
  };
  Scheduler scheduler(clock, executor, runner);
  const TimePoint t0 = clock.Now();
  scheduler.Schedule("g1", t0);
  CHECK(scheduler.DueTime("g1") == t0 + 3 * kSecond);
  clock.Advance(3 * kSecond);
  CHECK(scheduler.RunOnce() == 1);
  CHECK(runner.runs().size() == 2);
  CHECK_FALSE(scheduler.DueTime("g1"));
}

TEST_CASE("a transaction never has two passes at once; asking during a pass re-arms it",
          "[scheduler]") {
  testing::FakeClock clock;
  ManualExecutor executor;
  FakeRunner runner;
  Scheduler scheduler(clock, executor, runner);
  scheduler.Schedule("g1", clock.Now());
  REQUIRE(executor.Pending() == 1);
  REQUIRE(scheduler.Running() == 1);

  scheduler.Schedule("g1", clock.Now());  // due again while the pass is dispatched
  CHECK(scheduler.RunOnce() == 0);
  CHECK(executor.Pending() == 1);

  executor.RunAll();  // the first pass ends; the request made during it re-arms the gid
  CHECK(scheduler.DueTime("g1") == clock.Now());
  CHECK(scheduler.RunOnce() == 1);
  executor.RunAll();
  CHECK(runner.runs().size() == 2);
  CHECK_FALSE(runner.overlapped());
}

TEST_CASE("RunNow waits for the running pass, then runs one on the calling thread", "[scheduler]") {
  testing::FakeClock clock;
  ManualExecutor executor;
  FakeRunner runner;
  Scheduler scheduler(clock, executor, runner);
  scheduler.Schedule("g1", clock.Now());
  REQUIRE(executor.Pending() == 1);

  std::atomic<bool> ran{false};
  std::thread::id waiter_id;
  std::thread waiter([&] {
    waiter_id = std::this_thread::get_id();
    ran = scheduler.RunNow("g1", std::chrono::seconds(10)).has_value();
  });
  executor.RunAll();  // the dispatched pass ends, which lets RunNow go
  waiter.join();
  CHECK(ran);
  REQUIRE(runner.runs().size() == 2);
  CHECK(runner.threads()[1] == waiter_id);
  CHECK_FALSE(runner.overlapped());
}

TEST_CASE("a claimed gid runs no other pass until the claim is used", "[scheduler]") {
  testing::FakeClock clock;
  InlineExecutor executor;
  FakeRunner runner;
  Scheduler scheduler(clock, executor, runner);
  std::optional<Scheduler::PassClaim> claim = scheduler.Claim("g1", Duration(0));
  REQUIRE(claim);
  scheduler.Schedule("g1", clock.Now());
  CHECK(scheduler.RunOnce() == 0);
  CHECK(runner.runs().empty());
  CHECK_FALSE(scheduler.Claim("g1", Duration(0)));  // one claim at a time

  storage::Transaction stored;
  stored.global.gid = "g1";
  claim->RunHere(stored);
  scheduler.RunOnce();
  // The claimed pass started from the stored transaction; the request made meanwhile runs
  // afterwards and reads it.
  CHECK(runner.runs() == std::vector<std::string>{"g1", "g1"});
  CHECK(runner.given() == std::vector<std::string>{"g1", ""});
}

TEST_CASE("an unused claim leaves the gid due as it was", "[scheduler]") {
  testing::FakeClock clock;
  InlineExecutor executor;
  FakeRunner runner;
  Scheduler scheduler(clock, executor, runner);
  const TimePoint due = clock.Now() + 5 * kSecond;
  scheduler.Schedule("g1", due);
  scheduler.Claim("g1", Duration(0)).reset();
  CHECK(scheduler.DueTime("g1") == due);
  CHECK(runner.runs().empty());
}

TEST_CASE("a claim hands its pass and stored transaction to the executor", "[scheduler]") {
  testing::FakeClock clock;
  ManualExecutor executor;
  FakeRunner runner;
  Scheduler scheduler(clock, executor, runner);
  storage::Transaction stored;
  stored.global.gid = "g1";
  scheduler.Claim("g1", Duration(0))->RunInBackground(stored);
  CHECK(runner.runs().empty());
  CHECK_FALSE(scheduler.Claim("g1", Duration(0)));  // still claimed until the pass ends
  executor.RunAll();
  CHECK(runner.given() == std::vector<std::string>{"g1"});
  CHECK(scheduler.Running() == 0);
}

TEST_CASE("RunNow gives up when the running pass does not end in time", "[scheduler]") {
  testing::FakeClock clock;
  ManualExecutor executor;
  FakeRunner runner;
  Scheduler scheduler(clock, executor, runner);
  scheduler.Schedule("g1", clock.Now());
  CHECK_FALSE(scheduler.RunNow("g1", Duration(20)).has_value());
  executor.RunAll();
  CHECK(runner.runs().size() == 1);
}

TEST_CASE("a pass that throws is retried later instead of being lost", "[scheduler]") {
  testing::FakeClock clock;
  InlineExecutor executor;
  FakeRunner runner;
  runner.answer = [](const std::string&, std::stop_token) -> PassResult {
    throw std::runtime_error("bug");
  };
  Scheduler scheduler(clock, executor, runner);
  scheduler.Schedule("g1", clock.Now());
  REQUIRE(scheduler.DueTime("g1"));
  CHECK(*scheduler.DueTime("g1") > clock.Now());
}

TEST_CASE("stopping asks running passes to return and dispatches nothing more", "[scheduler]") {
  testing::FakeClock clock;
  ManualExecutor executor;
  FakeRunner runner;
  bool saw_stop = false;
  runner.answer = [&](const std::string&, std::stop_token stop) {
    saw_stop = stop.stop_requested();
    return PassResult{clock.Now()};
  };
  Scheduler scheduler(clock, executor, runner);
  scheduler.Schedule("g1", clock.Now());
  scheduler.Stop(Duration(0));
  executor.RunAll();
  CHECK(saw_stop);
  scheduler.Schedule("g2", clock.Now());
  CHECK(scheduler.RunOnce() == 0);
  CHECK(executor.Pending() == 0);
  CHECK(runner.runs() == std::vector<std::string>{"g1"});
}

TEST_CASE("the background timer wakes up for a transaction when it is due", "[scheduler]") {
  SystemClock clock;
  ThreadPoolExecutor executor(2);
  FakeRunner runner;
  Scheduler scheduler(clock, executor, runner);
  scheduler.Start();
  scheduler.Schedule("later", clock.Now() + Duration(300));
  scheduler.Schedule("sooner", clock.Now() + Duration(10));
  REQUIRE(runner.WaitForRuns(2));
  CHECK(runner.runs() == std::vector<std::string>{"sooner", "later"});
  scheduler.Stop(kSecond);
  executor.Join();
}

}  // namespace
}  // namespace settle::coordinator
