#pragma once

// IdempotencyGuard across a real kill -9, written once for every database: a guarded-service
// process (guarded_service_main.cc) is killed with SIGKILL just before or just after the
// guard's commit, and a fresh process on the same database serves the client's retry. A
// GuardCrashDb says which database the processes use.

#include <signal.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "child_process.h"
#include "file_text.h"
#include "json_client.h"
#include "temp_dir.h"

namespace settle::sdk::test {

// The database of the processes: the guarded-service arguments naming it.
class GuardCrashDb {
 public:
  virtual ~GuardCrashDb() = default;
  virtual std::vector<std::string> ServiceArgs() = 0;
};

// A guarded-service process on `db`, started and listening; killed when it goes.
class GuardedServiceProcess {
 public:
  // `lease`: the guard's lease, as --lease takes it. `crash`: "", "before-commit" or
  // "after-commit".
  GuardedServiceProcess(GuardCrashDb& db, const std::string& lease, const std::string& crash = "")
      : stderr_path_(dir_.File("stderr")) {
    std::vector<std::string> argv = {GUARDED_SERVICE_BINARY, "--port", "0", "--lease", lease};
    for (std::string& arg : db.ServiceArgs()) argv.push_back(std::move(arg));
    if (!crash.empty()) argv.insert(argv.end(), {"--crash", crash});
    process_ = std::make_unique<settle::testing::ChildProcess>(argv, stderr_path_);
    const std::string line =
        process_->WaitForLine("guarded-service: listening on", std::chrono::seconds(30));
    if (line.empty()) {
      throw std::runtime_error("guarded-service did not start: " +
                               settle::testing::ReadFile(stderr_path_));
    }
    port_ = std::stoi(line.substr(line.rfind(':') + 1));
  }

  int port() const { return port_; }

  // The line of stdout that contains `text`, once printed; "" if the process ends without it.
  std::string Printed(const std::string& text) {
    return process_->WaitForLine(text, std::chrono::seconds(30));
  }

  // Whether the process ended, within a few seconds, killed by SIGKILL.
  bool DiesOfSigkill() {
    const int status = process_->Wait(std::chrono::seconds(10));
    return status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  }

 private:
  settle::testing::TempDir dir_;
  std::string stderr_path_;
  std::unique_ptr<settle::testing::ChildProcess> process_;
  int port_ = 0;
};

inline constexpr const char* kGuardCrashKey = "order-7";
inline constexpr const char* kGuardCrashOrder = R"({"item": "lamp"})";

// A client of `service` that sends kGuardCrashKey with every request.
inline settle::testing::JsonClient KeyedClient(const GuardedServiceProcess& service) {
  settle::testing::JsonClient client(service.port());
  client.SetHeader("Idempotency-Key", kGuardCrashKey);
  return client;
}

inline int CommittedOrders(const GuardedServiceProcess& service) {
  settle::testing::JsonClient client(service.port());
  const settle::testing::JsonResponse count = client.Get("/orders/count");
  REQUIRE(count.status == 200);
  return count.json["count"].get<int>();
}

// The order's retry, repeated while the service answers 409 (as long as the dead claim's lease
// holds the key), until another answer or `patience` runs out.
struct RetriedOrder {
  settle::testing::JsonResponse answer;  // the first answer that is not 409
  int busy = 0;                          // 409 answers before it, each with Retry-After
  std::chrono::steady_clock::time_point answered_at;
};
inline RetriedOrder RetryOrderWhileBusy(settle::testing::JsonClient& client,
                                        std::chrono::seconds patience) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  RetriedOrder retried;
  for (;;) {
    retried.answer = client.Post("/orders", kGuardCrashOrder);
    retried.answered_at = std::chrono::steady_clock::now();
    if (retried.answer.status != 409 || retried.answered_at > deadline) return retried;
    REQUIRE(retried.answer.headers.count("Retry-After") == 1);
    ++retried.busy;
    // Sooner than Retry-After asks: the test waits for the lease, not for the polling.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// kill -9 in the handler, after its insert and before the guard's commit: the insert is rolled
// back with the process, while the committed claim keeps the key until its lease ends; then
// the retry places the order, once.
inline void AKillBeforeCommitLeavesNoOrderAndTheRetryRunsAfterTheLease(GuardCrashDb& db) {
  const std::chrono::seconds lease(2);
  const std::string lease_text = "2s";
  std::chrono::steady_clock::time_point sent;
  {
    GuardedServiceProcess crashing(db, lease_text, "before-commit");
    settle::testing::JsonClient client = KeyedClient(crashing);
    sent = std::chrono::steady_clock::now();
    CHECK(client.Post("/orders", kGuardCrashOrder).status == 0);  // no answer
    CHECK_FALSE(crashing.Printed("killed before the guard's commit").empty());
    REQUIRE(crashing.DiesOfSigkill());
  }

  GuardedServiceProcess restarted(db, lease_text);
  CHECK(CommittedOrders(restarted) == 0);
  settle::testing::JsonClient client = KeyedClient(restarted);
  const RetriedOrder retried = RetryOrderWhileBusy(client, std::chrono::seconds(30));
  INFO("409 answers before it: " << retried.busy);
  REQUIRE(retried.answer.status == 201);
  CHECK(retried.answer.json["order"].is_number_integer());
  // The claim was taken after `sent`, so its lease ran to at least sent + lease: no 201
  // before then (every earlier answer was a 409, checked above). The guard reads the wall
  // clock in whole milliseconds, hence the small allowance.
  CHECK(retried.answered_at >= sent + lease - std::chrono::milliseconds(20));
  CHECK(CommittedOrders(restarted) == 1);

  const settle::testing::JsonResponse again = client.Post("/orders", kGuardCrashOrder);
  CHECK(again.status == 201);
  CHECK(again.body == retried.answer.body);
  CHECK(CommittedOrders(restarted) == 1);
}

// kill -9 after the guard's commit, before the answer is sent: the order and its answer
// committed together, so the retry gets the answer the client never received, at once, and
// nothing runs again.
inline void AKillAfterCommitKeepsTheOrderAndTheRetryGetsItsAnswer(GuardCrashDb& db) {
  const std::string lease_text = "2s";
  std::string unsent;
  {
    GuardedServiceProcess crashing(db, lease_text, "after-commit");
    settle::testing::JsonClient client = KeyedClient(crashing);
    CHECK(client.Post("/orders", kGuardCrashOrder).status == 0);  // no answer
    const std::string marker = "killed before sending the answer ";
    const std::string line = crashing.Printed(marker);
    REQUIRE_FALSE(line.empty());
    unsent = line.substr(line.find(marker) + marker.size());
    REQUIRE(crashing.DiesOfSigkill());
  }

  GuardedServiceProcess restarted(db, lease_text);
  CHECK(CommittedOrders(restarted) == 1);
  settle::testing::JsonClient client = KeyedClient(restarted);
  const settle::testing::JsonResponse retry = client.Post("/orders", kGuardCrashOrder);
  CHECK(retry.status == 201);
  CHECK(retry.body == unsent);
  CHECK(CommittedOrders(restarted) == 1);

  const settle::testing::JsonResponse again = client.Post("/orders", kGuardCrashOrder);
  CHECK(again.status == 201);
  CHECK(again.body == unsent);
  CHECK(CommittedOrders(restarted) == 1);
}

}  // namespace settle::sdk::test
