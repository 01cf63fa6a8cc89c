// Three settled instances on one PostgreSQL database whose wall clocks differ (issue 30): one
// 30 s ahead, one 30 s behind and one right, like the database's. libfaketime sets them apart
// and moves their wall clock only (FAKETIME_DONT_FAKE_MONOTONIC: a faked monotonic clock
// would leave condition_variable::wait_for waiting for ever). Clients spread TCCs to the bank
// example, most submitted well within their timeout_to_fail and a few left past it, and sagas
// between its accounts, over the three. The database's clock decides: no TCC is refused or
// aborted before its timeout_to_fail has passed, each left past it is failed by it, the times
// stored are on the database's clock, and the bank ends atomic, read back from its barrier
// rows, with every account holding what its client's succeeded transfers make it.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bank_process.h"
#include "child_process.h"
#include "file_text.h"
#include "json_client.h"
#include "postgres_test_database.h"
#include "settle/db/pg_connection.h"
#include "settled_process.h"
#include "temp_dir.h"
#include "timeout_edge_world.h"

namespace settle {
namespace {

using testing::BankProcess;
using testing::EdgeLoad;
using testing::EdgeSaga;
using testing::EdgeTcc;
using testing::JsonClient;
using testing::SagaLoad;
using testing::SettledProcess;
using Steady = std::chrono::steady_clock;
using Wall = std::chrono::system_clock;
using std::chrono::milliseconds;

constexpr int kTimeoutToFailS = 4;
constexpr int kTimeoutToFailMs = kTimeoutToFailS * 1000;
// How far a time judged on the database's clock may be off: an instance's measure of its
// offset from the database is only as good as the round trip it took.
constexpr int kToleranceMs = 200;
// A client that ends its TCC this long before the timeout leaves the coordinator ample time to
// take the submit first: its TCC must succeed.
constexpr int kSafeEndingMs = kTimeoutToFailMs - 2000;
// A stored time is on the database's clock when it lies between the moments its request was
// sent and answered, give or take this; a clock 30 s off is far outside it.
constexpr int kStampToleranceMs = 1000;
// Lines printed per kind of failure: before the fix, nearly every TCC is one.
constexpr std::size_t kLinesShown = 15;

// The log lines of the transactions' status changes name their gids, printed for a failure.
const std::vector<std::string> kCommonArgs = {"--lease",     "2s",    "--retry-interval", "100ms",
                                              "--retry-max", "500ms", "--lease-poll",     "200ms",
                                              "--log-level", "info"};

struct Instance {
  // SIGTERM rather than SettledProcess's SIGKILL: libfaketime removes the shared memory and
  // semaphore it made for the process (/dev/shm/faketime_shm_<pid>, sem.faketime_sem_<pid>)
  // only when the process exits, and a stale pair may trouble a later process of that pid.
  ~Instance() {
    if (process != nullptr) process->Terminate();
  }

  std::string name;
  std::string faketime;  // "" for the instance whose clock is right
  std::unique_ptr<SettledProcess> process;
  std::string log_path;
};

// What libfaketime needs in a child's environment to move its wall clock by `offset` ("+30s").
std::vector<std::string> FaketimeEnv(const std::string& offset) {
  if (offset.empty()) return {};
  return {std::string("LD_PRELOAD=") + SETTLE_LIBFAKETIME, "FAKETIME=" + offset,
          "FAKETIME_DONT_FAKE_MONOTONIC=1"};
}

long long WallMillis(Wall::time_point t) {
  return std::chrono::duration_cast<milliseconds>(t.time_since_epoch()).count();
}

// What a child started with `env` reads from its wall clock, minus what the test reads: the
// proof that libfaketime is loaded and moves the clock as asked.
long long ChildClockOffsetMs(const std::vector<std::string>& env, const std::string& stderr_path) {
  const long long before = WallMillis(Wall::now());
  testing::ChildProcess date({"/bin/date", "+%s%3N"}, stderr_path, env);
  const std::string line = date.WaitForLine("", std::chrono::seconds(10));
  const long long after = WallMillis(Wall::now());
  date.Wait(std::chrono::seconds(10));
  INFO("date under " << env.size() << " variables printed '" << line << "'; see " << stderr_path);
  REQUIRE(!line.empty());
  return std::stoll(line) - (before + after) / 2;
}

// The database's clock minus the test's, from the reading with the shortest round trip.
long long DatabaseClockOffsetMs(const std::string& conninfo) {
  Result<std::unique_ptr<db::PgConnection>> connection = db::PgConnection::Open(conninfo);
  REQUIRE(connection.ok());
  long long best_round_trip = -1;
  long long offset = 0;
  for (int i = 0; i < 5; ++i) {
    const long long before = WallMillis(Wall::now());
    Result<db::PgResult> now =
        (*connection)->Query("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint");
    const long long after = WallMillis(Wall::now());
    REQUIRE(now.ok());
    if (best_round_trip < 0 || after - before < best_round_trip) {
      best_round_trip = after - before;
      offset = now->Int(0, 0) - (before + after) / 2;
    }
  }
  return offset;
}

// "2026-11-22T10:00:00.123Z" (FormatTime's RFC 3339) as Unix milliseconds.
std::optional<long long> ParseMillis(const std::string& text) {
  std::tm utc{};
  int millis = 0;
  if (std::sscanf(text.c_str(), "%d-%d-%dT%d:%d:%d.%dZ", &utc.tm_year, &utc.tm_mon, &utc.tm_mday,
                  &utc.tm_hour, &utc.tm_min, &utc.tm_sec, &millis) != 7) {
    return std::nullopt;
  }
  utc.tm_year -= 1900;
  utc.tm_mon -= 1;
  return static_cast<long long>(timegm(&utc)) * 1000 + millis;
}

// A transaction's stored times and why it rolled back, as /api/settle/query shows them.
struct StoredTimes {
  std::optional<long long> create_ms;
  std::optional<long long> rollback_ms;
  std::string rollback_reason;
};

StoredTimes QueryTimes(JsonClient& client, const std::string& gid) {
  StoredTimes times;
  const testing::JsonResponse q = client.Get("/api/settle/query?gid=" + gid);
  if (q.status != 200 || !q.json.is_object() || !q.json["transaction"].is_object()) return times;
  const nlohmann::json& tx = q.json["transaction"];
  if (tx["create_time"].is_string()) times.create_ms = ParseMillis(tx["create_time"]);
  if (tx["rollback_time"].is_string()) times.rollback_ms = ParseMillis(tx["rollback_time"]);
  times.rollback_reason = tx.value("rollback_reason", std::string());
  return times;
}

// Prints the first kLinesShown of `lines`, each with what the coordinator stores for its gid
// (the line's first word) and the instances' log lines about it.
void ShowWithContext(const std::vector<std::string>& lines, int port,
                     const std::vector<Instance>& instances) {
  for (std::size_t i = 0; i < lines.size() && i < kLinesShown; ++i) {
    UNSCOPED_INFO(lines[i]);
    const std::string gid = lines[i].substr(0, lines[i].find(' '));
    UNSCOPED_INFO("  coordinator: " << testing::CoordinatorView(port, gid));
    for (const Instance& instance : instances) {
      for (const std::string& line : testing::LogLinesAbout(instance.log_path, gid)) {
        UNSCOPED_INFO("  log of " << instance.name << ": " << line);
      }
    }
  }
  if (lines.size() > kLinesShown) {
    UNSCOPED_INFO("... and " << lines.size() - kLinesShown << " more");
  }
}

TEST_CASE(
    "three PostgreSQL instances whose wall clocks are a minute apart abort no TCC before its "
    "timeout_to_fail by the database's clock and leave the bank atomic under TCCs and sagas",
    "[postgres][clock-skew]") {
  testing::PostgresTestDatabase database;
  testing::TempDir dir;

  EdgeLoad tcc_load;
  tcc_load.clients = 6;
  tcc_load.tccs_per_client = 12;
  tcc_load.timeout_to_fail_s = kTimeoutToFailS;
  // Waits of up to 1.5 s, every TCC well within its 4 s: a TCC aborted "not submitted within
  // 4000 ms" a second after its prepare fails here, where it would have succeeded.
  tcc_load.min_wait_ms = 100;
  tcc_load.max_wait_ms = 1500;
  tcc_load.deadline = std::chrono::seconds(30);
  // A few TCCs whose client waits a second past the timeout: the timeout still comes, and
  // then only, whichever instance stamped their prepare.
  EdgeLoad late_load = tcc_load;
  late_load.clients = 3;
  late_load.tccs_per_client = 2;
  late_load.min_wait_ms = kTimeoutToFailMs + 1000;
  late_load.max_wait_ms = late_load.min_wait_ms;
  late_load.gid_prefix = "late";
  late_load.first_account = tcc_load.first_account + testing::EdgeAccounts(tcc_load);
  SagaLoad saga_load;
  saga_load.clients = 2;
  saga_load.sagas_per_client = 25;
  saga_load.first_account = late_load.first_account + testing::EdgeAccounts(late_load);
  saga_load.deadline = std::chrono::seconds(30);
  const int accounts = saga_load.first_account - 1 + 2 * saga_load.clients;

  // libfaketime is there and moves a child's wall clock as the instances' will be moved.
  INFO("libfaketime: " << SETTLE_LIBFAKETIME
                       << " (Debian's faketime package, scripts/install-deps)");
  REQUIRE(access(SETTLE_LIBFAKETIME, R_OK) == 0);
  const long long ahead = ChildClockOffsetMs(FaketimeEnv("+30s"), dir.File("date-ahead.err"));
  const long long behind = ChildClockOffsetMs(FaketimeEnv("-30s"), dir.File("date-behind.err"));
  CHECK(ahead > 25'000);
  CHECK(ahead < 35'000);
  CHECK(behind < -25'000);
  CHECK(behind > -35'000);
  const long long database_offset = DatabaseClockOffsetMs(database.conninfo());

  BankProcess bank(dir.File("bank.db"), accounts, testing::kEdgeInitialBalance);
  std::vector<Instance> instances(3);
  instances[0].name = "ahead";
  instances[0].faketime = "+30s";
  instances[1].name = "behind";
  instances[1].faketime = "-30s";
  instances[2].name = "right";
  for (Instance& instance : instances) {
    std::vector<std::string> args = {"--instance-id", instance.name};
    args.insert(args.end(), kCommonArgs.begin(), kCommonArgs.end());
    instance.log_path = dir.File("settled-" + instance.name + ".log");
    instance.process = std::make_unique<SettledProcess>(
        database.conninfo(), args, 0, instance.log_path, FaketimeEnv(instance.faketime));
  }
  std::vector<int> ports;
  for (const Instance& instance : instances) ports.push_back(instance.process->port());
  const int reader_port = instances[2].process->port();

  const Steady::time_point start = Steady::now();
  std::vector<std::string> unexpected;
  std::vector<std::string> late_unexpected;
  std::vector<std::string> saga_unexpected;
  std::vector<EdgeTcc> late;
  std::vector<EdgeSaga> sagas;
  std::thread late_clients(
      [&] { late = testing::RunEdgeClients(late_load, ports, bank.port(), late_unexpected); });
  std::thread saga_clients(
      [&] { sagas = testing::RunSagaClients(saga_load, ports, bank.port(), saga_unexpected); });
  std::vector<EdgeTcc> tccs = testing::RunEdgeClients(tcc_load, ports, bank.port(), unexpected);
  late_clients.join();
  saga_clients.join();
  const std::size_t on_time_count = tccs.size();
  tccs.insert(tccs.end(), late.begin(), late.end());
  unexpected.insert(unexpected.end(), late_unexpected.begin(), late_unexpected.end());
  unexpected.insert(unexpected.end(), saga_unexpected.begin(), saga_unexpected.end());

  const Steady::time_point final_deadline = Steady::now() + std::chrono::seconds(20);
  const auto statuses = testing::WaitForFinalStatuses(reader_port, tccs, final_deadline);
  std::vector<std::string> saga_gids;
  for (const EdgeSaga& saga : sagas) saga_gids.push_back(saga.gid);
  const auto saga_statuses = testing::WaitForFinalStatuses(reader_port, saga_gids, final_deadline);

  // No TCC is refused (409) before its timeout_to_fail has passed since its prepare was sent:
  // the abort the refusal shows came before the refusal, and the prepare after its sending.
  // No TCC ended by its client well before its timeout fails. The times stored are on the
  // database's clock, and a TCC aborted by its timeout was, by the stored times, after it.
  JsonClient reader(reader_port);
  std::vector<std::string> early_refusals;
  std::vector<std::string> failed_in_time;
  std::vector<std::string> stamps_off;
  std::vector<std::string> stored_early_aborts;
  std::vector<std::string> late_not_timed_out;
  int succeeded = 0;
  int failed = 0;
  // The money each TCC client moved, by its first account.
  std::map<int, long long> moved_from;
  for (const EdgeTcc& t : tccs) {
    const std::string& status = statuses.at(t.gid);
    const bool is_late = t.gid.rfind(late_load.gid_prefix + "-", 0) == 0;
    const EdgeLoad& load = is_late ? late_load : tcc_load;
    if (status == "succeed") {
      ++succeeded;
      moved_from[load.first_account + 2 * t.client] += load.amount;
    }
    if (status == "failed") ++failed;
    const StoredTimes stored = QueryTimes(reader, t.gid);
    std::ostringstream about;
    about << " (client waited " << t.wait_ms << " ms, ended it with " << t.ending << " sent at "
          << t.ending_sent_ms << " ms, answered " << t.ending_status << "; rollback_reason '"
          << stored.rollback_reason << "')";

    if (t.first_refusal_ms >= 0 && t.first_refusal_ms < kTimeoutToFailMs - kToleranceMs) {
      early_refusals.push_back(t.gid + " was refused (409) " + std::to_string(t.first_refusal_ms) +
                               " ms after its prepare was sent" + about.str());
    }
    if (t.ending_sent_ms < kSafeEndingMs && !(t.ending == "submit" && status == "succeed")) {
      failed_in_time.push_back(t.gid + " ended " + (status.empty() ? "?" : status) +
                               " though its client ended it " + std::to_string(t.ending_sent_ms) +
                               " ms after sending its prepare" + about.str());
    }
    const long long sent_ms = WallMillis(t.prepare_sent_at) + database_offset;
    const long long answered_ms = sent_ms + t.prepare_answered_ms;
    if (!stored.create_ms || *stored.create_ms < sent_ms - kStampToleranceMs ||
        *stored.create_ms > answered_ms + kStampToleranceMs) {
      stamps_off.push_back(
          t.gid + " has create_time " +
          (stored.create_ms ? std::to_string(*stored.create_ms - sent_ms) + " ms" : "?") +
          " from when its prepare was sent, by the database's clock (answered after " +
          std::to_string(t.prepare_answered_ms) + " ms)" + about.str());
    }
    if (is_late &&
        !(status == "failed" && stored.rollback_reason.rfind("timeout_to_fail", 0) == 0)) {
      late_not_timed_out.push_back(t.gid + " ended " + (status.empty() ? "?" : status) +
                                   ", not failed by its timeout" + about.str());
    }
    if (status == "failed" && stored.rollback_reason.rfind("timeout_to_fail", 0) == 0) {
      if (!stored.create_ms || !stored.rollback_ms ||
          *stored.rollback_ms - *stored.create_ms < kTimeoutToFailMs - kToleranceMs) {
        stored_early_aborts.push_back(
            t.gid + " has rollback_time " +
            (stored.create_ms && stored.rollback_ms
                 ? std::to_string(*stored.rollback_ms - *stored.create_ms) + " ms"
                 : std::string("?")) +
            " after its create_time" + about.str());
      }
    }
  }
  int sagas_succeeded = 0;
  std::map<int, int> sagas_succeeded_by_client;
  for (const EdgeSaga& saga : sagas) {
    if (saga_statuses.at(saga.gid) == "succeed") {
      ++sagas_succeeded;
      ++sagas_succeeded_by_client[saga.client];
    }
  }
  const auto seconds = std::chrono::duration<double>(Steady::now() - start).count();
  WARN(tccs.size() << " TCCs and " << sagas.size() << " sagas in " << seconds << " s: " << succeeded
                   << " TCCs succeed, " << failed << " failed, " << early_refusals.size()
                   << " refused before their timeout; " << sagas_succeeded
                   << " sagas succeed; the database's clock is " << database_offset
                   << " ms from the test's");

  {
    INFO("answers outside the protocol's:");
    for (const std::string& line : unexpected) UNSCOPED_INFO(line);
    CHECK(unexpected.empty());
  }
  // Every client ran its count: the deadlines only bound a failing run.
  CHECK(on_time_count == static_cast<std::size_t>(tcc_load.clients * tcc_load.tccs_per_client));
  CHECK(late.size() == static_cast<std::size_t>(late_load.clients * late_load.tccs_per_client));
  CHECK(sagas.size() == static_cast<std::size_t>(saga_load.clients * saga_load.sagas_per_client));
  {
    INFO(early_refusals.size() << " TCCs were refused before their timeout_to_fail of "
                               << kTimeoutToFailMs << " ms:");
    ShowWithContext(early_refusals, reader_port, instances);
    CHECK(early_refusals.empty());
  }
  {
    INFO(failed_in_time.size() << " TCCs ended by their client within " << kSafeEndingMs
                               << " ms of their prepare did not succeed:");
    ShowWithContext(failed_in_time, reader_port, instances);
    CHECK(failed_in_time.empty());
  }
  {
    INFO(late_not_timed_out.size() << " TCCs whose client came back after their timeout were not "
                                      "failed by it:");
    ShowWithContext(late_not_timed_out, reader_port, instances);
    CHECK(late_not_timed_out.empty());
  }
  {
    INFO(stamps_off.size() << " TCCs have a create_time off the database's clock:");
    ShowWithContext(stamps_off, reader_port, instances);
    CHECK(stamps_off.empty());
  }
  {
    INFO(stored_early_aborts.size() << " TCCs were aborted by their timeout before it, by their "
                                       "stored times:");
    ShowWithContext(stored_early_aborts, reader_port, instances);
    CHECK(stored_early_aborts.empty());
  }

  // Atomicity, as the bank's barrier rows tell it.
  const auto barrier = testing::ReadBarrier(bank.db_path());
  {
    const std::vector<std::string> breaches = testing::AtomicityBreaches(tccs, statuses, barrier);
    INFO(breaches.size() << " of " << tccs.size() << " TCCs broke atomicity:");
    ShowWithContext(breaches, reader_port, instances);
    CHECK(breaches.empty());
  }
  {
    const std::vector<std::string> breaches =
        testing::SagaAtomicityBreaches(sagas, saga_statuses, barrier);
    INFO(breaches.size() << " of " << sagas.size() << " sagas broke atomicity:");
    ShowWithContext(breaches, reader_port, instances);
    CHECK(breaches.empty());
  }

  // Nothing stays reserved, no money is made or lost, and each account holds exactly what its
  // client's succeeded transfers make it.
  const auto balances = testing::ReadAccounts(bank.db_path());
  REQUIRE(balances.size() == static_cast<std::size_t>(accounts));
  auto check_pair = [&](const std::string& who, int from_account, long long moved) {
    const auto& from = balances.at(std::to_string(from_account));
    const auto& to = balances.at(std::to_string(from_account + 1));
    INFO(who << ": accounts " << from_account << " -> " << from_account + 1 << ", " << moved
             << " moved by its succeeded transfers");
    CHECK(from.frozen == 0);
    CHECK(to.frozen == 0);
    CHECK(from.balance == testing::kEdgeInitialBalance - moved);
    CHECK(to.balance == testing::kEdgeInitialBalance + moved);
  };
  for (const EdgeLoad* load : {&tcc_load, &late_load}) {
    for (int c = 0; c < load->clients; ++c) {
      const int from = load->first_account + 2 * c;
      check_pair(load->gid_prefix + " client " + std::to_string(c), from, moved_from[from]);
    }
  }
  for (int c = 0; c < saga_load.clients; ++c) {
    check_pair("saga client " + std::to_string(c), saga_load.first_account + 2 * c,
               saga_load.amount * sagas_succeeded_by_client[c]);
  }
  long long total = 0;
  for (const auto& [id, account] : balances) total += account.balance + account.frozen;
  CHECK(testing::CountPendingCredits(bank.db_path()) == 0);
  CHECK(total == accounts * testing::kEdgeInitialBalance);

  // The instances ahead and behind, beyond --max-clock-skew (5 s), each said so in one line and
  // claimed nothing; the right one never did.
  for (const Instance& instance : instances) {
    const std::string log = testing::ReadFile(instance.log_path);
    const std::string stop = "beyond --max-clock-skew 5000 ms: this instance stops claiming";
    INFO(instance.name);
    const auto first = log.find(stop);
    if (instance.faketime.empty()) {
      CHECK(first == std::string::npos);
    } else {
      CHECK(first != std::string::npos);
      CHECK(log.find(stop, first + 1) == std::string::npos);
    }
  }
}

}  // namespace
}  // namespace settle
