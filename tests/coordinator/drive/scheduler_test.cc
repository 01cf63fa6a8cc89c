#include "settle/drive/scheduler.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "fake_clock.h"
#include "settle/async/event.h"
#include "settle/async/io_threads.h"

namespace settle::drive {
namespace {

constexpr Duration kSecond{1000};

// Records passes and answers what the test scripts (by default: finished). A pass of a gid
// in `hold` waits until the test releases it.
class FakeRunner final : public PassRunner {
 public:
  std::function<PassResult(const std::string&, std::stop_token)> answer =
      [](const std::string&, std::stop_token) { return PassResult{}; };
  std::string hold;
  async::Event release;

  asio::awaitable<PassResult> RunPass(std::string gid, std::optional<storage::Transaction> stored,
                                      std::stop_token stop) override {
    {
      std::lock_guard lock(mu_);
      runs_.push_back(gid);
      given_.push_back(stored ? stored->global.gid : "");
      if (++concurrent_ > 1) overlapped_ = true;
    }
    if (gid == hold) co_await release.Wait();
    PassResult result = answer(gid, stop);
    std::lock_guard lock(mu_);
    --concurrent_;
    cv_.notify_all();
    co_return result;
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
  bool overlapped() const { return overlapped_; }
  bool WaitForRuns(std::size_t n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10), [&] { return runs_.size() >= n; });
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> runs_;
  std::vector<std::string> given_;
  int concurrent_ = 0;
  std::atomic<bool> overlapped_{false};
};

// Participant hosts' gates that hold every transaction while `holds` says so.
class FakeGates final : public calls::HostGates {
 public:
  std::vector<std::string> TakeReleased(const std::string&) override { return {}; }
  bool Holds(const std::string&) const override { return holds; }
  std::vector<calls::HostView> Hosts() const override { return {}; }
  std::optional<calls::HeldView> HeldBy(const std::string&) const override { return {}; }
  void RetryNow(const std::string&) override {}
  Result<std::string> RetryHost(const std::string&) override {
    return Status::NotFound("no gates");
  }
  void Forget(const std::string&) override {}

  std::atomic<bool> holds{false};
};

// A scheduler on an io_context that only runs when the test says: a started pass is pending
// until Run(). A held pass stays suspended (Run returns meanwhile).
struct Fixture {
  explicit Fixture(std::size_t max_passes = Scheduler::kDefaultMaxPasses)
      : scheduler(clock, io.get_executor(), runner, max_passes, &gates) {}
  ~Fixture() {
    runner.release.Set();
    Run();
  }
  // Runs every pass started so far as far as it goes (to its end, unless held); returns how
  // many handlers ran.
  std::size_t Run() {
    io.restart();
    return io.poll();
  }

  testing::FakeClock clock;
  asio::io_context io;
  FakeRunner runner;
  FakeGates gates;
  Scheduler scheduler;
};

TEST_CASE("a transaction due now is started at once", "[scheduler]") {
  Fixture f;
  f.scheduler.Schedule("g1", f.clock.Now());
  CHECK(f.scheduler.Running() == 1);
  f.Run();
  CHECK(f.runner.runs() == std::vector<std::string>{"g1"});
  CHECK_FALSE(f.scheduler.DueTime("g1"));  // finished: forgotten
}

TEST_CASE("a transaction due later runs only once its time has come", "[scheduler]") {
  Fixture f;
  f.scheduler.Schedule("g1", f.clock.Now() + 5 * kSecond);
  CHECK(f.scheduler.RunOnce() == 0);
  f.clock.Advance(4 * kSecond);
  CHECK(f.scheduler.RunOnce() == 0);
  f.clock.Advance(kSecond);
  CHECK(f.scheduler.RunOnce() == 1);
  f.Run();
  CHECK(f.runner.runs() == std::vector<std::string>{"g1"});
}

TEST_CASE(
    "a transaction whose pass a host's gate held is not run again when found due in storage, "
    "only when woken",
    "[scheduler]") {
  Fixture f;
  const TimePoint t0 = f.clock.Now();
  int passes = 0;
  f.runner.answer = [&](const std::string&, std::stop_token) {
    PassResult held{t0 + 300 * kSecond};
    held.held = ++passes == 1;
    return held.held ? held : PassResult{};
  };
  f.scheduler.Schedule("g1", t0);
  f.Run();
  REQUIRE(f.runner.runs().size() == 1);
  // The lease's poll finds it due (its stored time is past): nothing runs.
  f.scheduler.ScheduleFound("g1", t0);
  CHECK(f.scheduler.RunOnce() == 0);
  CHECK(f.scheduler.DueTime("g1") == t0 + 300 * kSecond);
  // Its gate wakes it.
  f.scheduler.Schedule("g1", t0);
  f.Run();
  CHECK(f.runner.runs().size() == 2);
  // A transaction not held is scheduled from storage as usual.
  f.scheduler.ScheduleFound("g2", t0);
  f.Run();
  CHECK(f.runner.runs() == std::vector<std::string>{"g1", "g1", "g2"});
}

TEST_CASE(
    "a held transaction whose gate still holds it is not run when its own time comes, only "
    "re-armed, and runs once the gate lets it go",
    "[scheduler]") {
  Fixture f;
  const TimePoint t0 = f.clock.Now();
  f.gates.holds = true;
  f.runner.answer = [&](const std::string&, std::stop_token) {
    PassResult held{f.clock.Now() + 300 * kSecond};
    held.held = true;
    return held;
  };
  f.scheduler.Schedule("g1", t0);
  f.Run();
  REQUIRE(f.runner.runs().size() == 1);
  f.clock.Advance(300 * kSecond);
  CHECK(f.scheduler.RunOnce() == 0);
  CHECK(f.scheduler.DueTime("g1") == t0 + 600 * kSecond);
  // The gate no longer holds it (a wake was lost, say): its own time runs it.
  f.gates.holds = false;
  f.clock.Advance(300 * kSecond);
  CHECK(f.scheduler.RunOnce() == 1);
  f.Run();
  CHECK(f.runner.runs().size() == 2);
}

TEST_CASE("the earliest requested due time wins", "[scheduler]") {
  Fixture f;
  const TimePoint t0 = f.clock.Now();
  f.scheduler.Schedule("g1", t0 + 10 * kSecond);
  f.scheduler.Schedule("g1", t0 + 2 * kSecond);
  f.scheduler.Schedule("g1", t0 + 20 * kSecond);
  CHECK(f.scheduler.DueTime("g1") == t0 + 2 * kSecond);
  CHECK(f.scheduler.Scheduled() == 1);
}

TEST_CASE("a pass that leaves work behind is due again when it says", "[scheduler]") {
  Fixture f;
  int passes = 0;
  f.runner.answer = [&](const std::string&, std::stop_token) {
    return ++passes == 1 ? PassResult{f.clock.Now() + 3 * kSecond} : PassResult{};
  };
  const TimePoint t0 = f.clock.Now();
  f.scheduler.Schedule("g1", t0);
  f.Run();
  CHECK(f.scheduler.DueTime("g1") == t0 + 3 * kSecond);
  f.clock.Advance(3 * kSecond);
  CHECK(f.scheduler.RunOnce() == 1);
  f.Run();
  CHECK(f.runner.runs().size() == 2);
  CHECK_FALSE(f.scheduler.DueTime("g1"));
}

TEST_CASE("a transaction never has two passes at once, asking during a pass re-arms it",
          "[scheduler]") {
  Fixture f;
  f.scheduler.Schedule("g1", f.clock.Now());
  REQUIRE(f.scheduler.Running() == 1);

  f.scheduler.Schedule("g1", f.clock.Now());  // due again while the pass is started
  CHECK(f.scheduler.RunOnce() == 0);

  f.Run();  // the first pass ends; the request made during it re-arms the gid
  CHECK(f.runner.runs().size() == 1);
  CHECK(f.scheduler.DueTime("g1") == f.clock.Now());
  CHECK(f.scheduler.RunOnce() == 1);
  f.Run();
  CHECK(f.runner.runs().size() == 2);
  CHECK_FALSE(f.runner.overlapped());
}

TEST_CASE("at most max_passes passes run at once, the others start as slots free up",
          "[scheduler]") {
  Fixture f(/*max_passes=*/2);
  f.runner.hold = "g1";
  for (const char* gid : {"g1", "g2", "g3"}) f.scheduler.Schedule(gid, f.clock.Now());
  CHECK(f.scheduler.Running() == 2);
  CHECK(f.scheduler.Scheduled() == 1);
  f.Run();                            // g2 ends; g1 holds
  CHECK(f.scheduler.RunOnce() == 1);  // g3 takes the free slot
  f.runner.release.Set();
  f.Run();
  CHECK(f.runner.runs() == std::vector<std::string>{"g1", "g2", "g3"});
}

TEST_CASE("RunNow waits for the running pass without a thread, then runs its own", "[scheduler]") {
  Fixture f;
  f.runner.hold = "g1";
  f.scheduler.Schedule("g1", f.clock.Now());
  std::optional<std::optional<PassResult>> ran;
  asio::co_spawn(f.io, f.scheduler.RunNow("g1", std::chrono::seconds(10)),
                 [&](std::exception_ptr, std::optional<PassResult> r) { ran = std::move(r); });
  f.io.poll();  // both wait: the pass for its release, RunNow for the pass
  CHECK_FALSE(ran);
  CHECK(f.runner.runs().size() == 1);

  f.runner.hold.clear();
  f.runner.release.Set();
  f.Run();
  REQUIRE(ran);
  CHECK(ran->has_value());
  CHECK(f.runner.runs().size() == 2);
  CHECK_FALSE(f.runner.overlapped());
}

TEST_CASE("a claimed gid runs no other pass until the claim is used", "[scheduler]") {
  Fixture f;
  std::optional<Scheduler::PassClaim> claim = f.scheduler.TryClaim("g1");
  REQUIRE(claim);
  f.scheduler.Schedule("g1", f.clock.Now());
  CHECK(f.scheduler.RunOnce() == 0);
  f.Run();
  CHECK(f.runner.runs().empty());
  CHECK_FALSE(f.scheduler.TryClaim("g1"));  // one claim at a time

  storage::Transaction stored;
  stored.global.gid = "g1";
  asio::co_spawn(f.io, claim->RunHere(stored), asio::detached);
  f.Run();
  f.scheduler.RunOnce();
  f.Run();
  // The claimed pass started from the stored transaction; the request made meanwhile runs
  // afterwards and reads it.
  CHECK(f.runner.runs() == std::vector<std::string>{"g1", "g1"});
  CHECK(f.runner.given() == std::vector<std::string>{"g1", ""});
}

TEST_CASE("an unused claim leaves the gid due as it was", "[scheduler]") {
  Fixture f;
  const TimePoint due = f.clock.Now() + 5 * kSecond;
  f.scheduler.Schedule("g1", due);
  f.scheduler.TryClaim("g1").reset();
  CHECK(f.scheduler.DueTime("g1") == due);
  CHECK(f.runner.runs().empty());
}

TEST_CASE("a claim hands its pass and stored transaction to a coroutine of its own",
          "[scheduler]") {
  Fixture f;
  storage::Transaction stored;
  stored.global.gid = "g1";
  f.scheduler.TryClaim("g1")->RunInBackground(stored);
  CHECK(f.runner.runs().empty());
  CHECK_FALSE(f.scheduler.TryClaim("g1"));  // still claimed until the pass ends
  f.Run();
  CHECK(f.runner.given() == std::vector<std::string>{"g1"});
  CHECK(f.scheduler.Running() == 0);
}

TEST_CASE("RunNow gives up when the running pass does not end in time", "[scheduler]") {
  Fixture f;
  f.runner.hold = "g1";
  f.scheduler.Schedule("g1", f.clock.Now());
  std::optional<std::optional<PassResult>> ran;
  asio::co_spawn(f.io, f.scheduler.RunNow("g1", Duration(20)),
                 [&](std::exception_ptr, std::optional<PassResult> r) { ran = std::move(r); });
  while (!ran) f.io.run_one();  // the 20 ms timer is what ends it
  CHECK_FALSE(ran->has_value());
  CHECK(f.runner.runs().size() == 1);
}

TEST_CASE(
    "RunNow's max wait is measured on the clock: once it has passed, a pass found "
    "running again is not waited for",
    "[scheduler]") {
  Fixture f;
  f.runner.hold = "g1";
  f.scheduler.Schedule("g1", f.clock.Now());
  std::optional<std::optional<PassResult>> ran;
  asio::co_spawn(f.io, f.scheduler.RunNow("g1", std::chrono::minutes(1)),
                 [&](std::exception_ptr, std::optional<PassResult> r) { ran = std::move(r); });
  f.io.poll();  // the pass waits for its release, RunNow for the pass
  REQUIRE_FALSE(ran);

  // The pass ends; before RunNow resumes, a request claims the gid and a minute goes by.
  f.runner.release.Set();
  f.io.restart();
  while (f.scheduler.Running() > 0 && f.io.run_one() > 0) {
  }
  REQUIRE(f.scheduler.Running() == 0);
  std::optional<Scheduler::PassClaim> claim = f.scheduler.TryClaim("g1");
  REQUIRE(claim);
  f.clock.Advance(std::chrono::minutes(1));
  f.Run();
  REQUIRE(ran);  // at once, not after another minute's timer
  CHECK_FALSE(ran->has_value());
  CHECK(f.runner.runs().size() == 1);
}

TEST_CASE("a pass that throws is retried later instead of being lost", "[scheduler]") {
  Fixture f;
  f.runner.answer = [](const std::string&, std::stop_token) -> PassResult {
    throw std::runtime_error("bug");
  };
  f.scheduler.Schedule("g1", f.clock.Now());
  f.Run();
  REQUIRE(f.scheduler.DueTime("g1"));
  CHECK(*f.scheduler.DueTime("g1") > f.clock.Now());
}

TEST_CASE("stopping asks running passes to return and starts nothing more", "[scheduler]") {
  Fixture f;
  bool saw_stop = false;
  f.runner.answer = [&](const std::string&, std::stop_token stop) {
    saw_stop = stop.stop_requested();
    return PassResult{f.clock.Now()};
  };
  f.scheduler.Schedule("g1", f.clock.Now());
  f.scheduler.Stop(Duration(0));
  f.Run();
  CHECK(saw_stop);
  f.scheduler.Schedule("g2", f.clock.Now());
  CHECK(f.scheduler.RunOnce() == 0);
  CHECK(f.Run() == 0);
  CHECK(f.runner.runs() == std::vector<std::string>{"g1"});
}

TEST_CASE("the background timer wakes up for a transaction when it is due", "[scheduler]") {
  SystemClock clock;
  async::IoThreads io(2);
  io.Start();
  FakeRunner runner;
  {
    Scheduler scheduler(clock, io.executor(), runner);
    scheduler.Start();
    scheduler.Schedule("later", clock.Now() + Duration(300));
    scheduler.Schedule("sooner", clock.Now() + Duration(10));
    REQUIRE(runner.WaitForRuns(2));
    CHECK(runner.runs() == std::vector<std::string>{"sooner", "later"});
    scheduler.Stop(kSecond);
  }
  io.Stop();
}

}  // namespace
}  // namespace settle::drive
