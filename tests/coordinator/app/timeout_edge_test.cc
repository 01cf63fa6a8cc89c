// Many clients at the edge of timeout_to_fail: each prepares a TCC that times out after one
// second and registers its two bank branches 0.8 to 1.2 s later, so registrations, Tries,
// submits and aborts meet the coordinator's timeout abort from every side. Whatever wins,
// the bank must end atomic: read back from its barrier rows, every failed TCC has each Try
// that took effect cancelled, every succeeded one both Tries confirmed, and no money stays
// frozen or pending. Real processes: settled (one on SQLite, or three on one PostgreSQL
// database) and the bank example's bank-participant on its own SQLite file.
#include <catch2/catch.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bank_process.h"
#ifdef SETTLE_TEST_STORE_POSTGRES
#include "postgres_test_database.h"
#endif
#include "settled_process.h"
#include "temp_dir.h"
#include "timeout_edge_world.h"

namespace settle {
namespace {

using testing::BankProcess;
using testing::EdgeLoad;
using testing::EdgeTcc;
using testing::SettledProcess;
using Steady = std::chrono::steady_clock;

// Info, not warn: a breach is printed with the log lines that name its gid (its status
// changes).
const std::vector<std::string> kRetryArgs = {"--retry-interval", "100ms", "--retry-max", "500ms",
                                             "--log-level",      "info"};

struct Instance {
  std::unique_ptr<SettledProcess> process;
  std::string log_path;
};

// Runs the load against `instances`, waits until every TCC is final, and checks the bank.
void RunAtTheTimeoutsEdge(std::vector<Instance>& instances, BankProcess& bank) {
  const EdgeLoad load;
  std::vector<int> ports;
  for (const Instance& i : instances) ports.push_back(i.process->port());

  const Steady::time_point start = Steady::now();
  std::vector<std::string> unexpected;
  const std::vector<EdgeTcc> tccs = RunEdgeClients(load, ports, bank.port(), unexpected);
  const auto statuses =
      testing::WaitForFinalStatuses(ports[0], tccs, Steady::now() + std::chrono::seconds(45));

  int succeeded = 0;
  int failed = 0;
  int refused_registrations = 0;
  int hanging_tries = 0;
  std::map<int, int> succeeded_by_client;
  for (const EdgeTcc& t : tccs) {
    const std::string& status = statuses.at(t.gid);
    if (status == "succeed") {
      ++succeeded;
      ++succeeded_by_client[t.client];
    }
    if (status == "failed") ++failed;
    for (const auto& branch : t.branches) {
      if (branch.registration == 409) ++refused_registrations;
      if (branch.try_call == 409) ++hanging_tries;
    }
  }
  const auto seconds = std::chrono::duration<double>(Steady::now() - start).count();
  WARN(tccs.size() << " TCCs in " << seconds << " s: " << succeeded << " succeed, " << failed
                   << " failed; " << refused_registrations << " registrations refused (409), "
                   << hanging_tries << " hanging Tries refused by the barrier");

  {
    INFO("answers outside the protocol's:");
    for (const std::string& line : unexpected) UNSCOPED_INFO(line);
    CHECK(unexpected.empty());
  }
  // Every client ran its count: the deadline only bounds a failing run.
  CHECK(tccs.size() == static_cast<std::size_t>(load.clients * load.tccs_per_client));
  // The load met the edge: some TCCs beat the timeout and some did not.
  CHECK(succeeded > 0);
  CHECK(failed > 0);

  // Atomicity, as the participant's barrier tells it.
  const auto barrier = testing::ReadBarrier(bank.db_path());
  const std::vector<std::string> breaches = testing::AtomicityBreaches(tccs, statuses, barrier);
  {
    INFO(breaches.size() << " of " << tccs.size() << " TCCs broke atomicity:");
    for (const std::string& breach : breaches) {
      UNSCOPED_INFO(breach);
      const std::string gid = breach.substr(0, breach.find(' '));
      UNSCOPED_INFO("  coordinator: " << testing::CoordinatorView(ports[0], gid));
      for (const Instance& i : instances) {
        for (const std::string& line : testing::LogLinesAbout(i.log_path, gid)) {
          UNSCOPED_INFO("  log: " << line);
        }
      }
    }
    CHECK(breaches.empty());
  }

  // Nothing stays reserved, no money is made or lost, and each account holds exactly what
  // its client's succeeded transfers make it.
  const auto accounts = testing::ReadAccounts(bank.db_path());
  REQUIRE(accounts.size() == static_cast<std::size_t>(testing::EdgeAccounts(load)));
  long long total = 0;
  for (int c = 0; c < load.clients; ++c) {
    const long long moved = load.amount * succeeded_by_client[c];
    const auto& from = accounts.at(std::to_string(2 * c + 1));
    const auto& to = accounts.at(std::to_string(2 * c + 2));
    INFO("client " << c << ": accounts " << 2 * c + 1 << " -> " << 2 * c + 2 << ", "
                   << succeeded_by_client[c] << " transfers succeeded");
    CHECK(from.frozen == 0);
    CHECK(to.frozen == 0);
    CHECK(from.balance == testing::kEdgeInitialBalance - moved);
    CHECK(to.balance == testing::kEdgeInitialBalance + moved);
    total += from.balance + from.frozen + to.balance + to.frozen;
  }
  CHECK(testing::CountPendingCredits(bank.db_path()) == 0);
  CHECK(total == testing::EdgeAccounts(load) * testing::kEdgeInitialBalance);
}

#ifndef SETTLE_TEST_STORE_POSTGRES

TEST_CASE(
    "many clients registering at the edge of timeout_to_fail on one SQLite settled leave every "
    "failed TCC's applied Tries cancelled, every succeeded one's confirmed and nothing reserved",
    "[timeout-edge]") {
  testing::TempDir dir;
  BankProcess bank(dir.File("bank.db"), testing::EdgeAccounts(EdgeLoad()),
                   testing::kEdgeInitialBalance);
  std::vector<Instance> instances(1);
  instances[0].log_path = dir.File("settle.db.log");
  instances[0].process = std::make_unique<SettledProcess>(dir.File("settle.db"), kRetryArgs);
  RunAtTheTimeoutsEdge(instances, bank);
}

#else

TEST_CASE(
    "many clients registering at the edge of timeout_to_fail on three PostgreSQL instances leave "
    "every failed TCC's applied Tries cancelled, every succeeded one's confirmed and nothing "
    "reserved",
    "[postgres][timeout-edge]") {
  testing::PostgresTestDatabase database;
  testing::TempDir dir;
  BankProcess bank(dir.File("bank.db"), testing::EdgeAccounts(EdgeLoad()),
                   testing::kEdgeInitialBalance);
  constexpr int kInstances = 3;
  std::vector<Instance> instances(kInstances);
  for (int i = 0; i < kInstances; ++i) {
    std::vector<std::string> args = {
        "--instance-id", "i" + std::to_string(i), "--lease", "2s", "--lease-poll", "200ms"};
    args.insert(args.end(), kRetryArgs.begin(), kRetryArgs.end());
    instances[i].log_path = dir.File("settled-" + std::to_string(i) + ".log");
    instances[i].process =
        std::make_unique<SettledProcess>(database.conninfo(), args, 0, instances[i].log_path);
  }
  RunAtTheTimeoutsEdge(instances, bank);
}

#endif

}  // namespace
}  // namespace settle
