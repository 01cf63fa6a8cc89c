// The XA transfer example (examples/xa-transfer) as a user runs it: a real settled, two real
// xa-bank processes, each on a schema of its own on the test PostgreSQL server (which allows
// prepared transactions), and the xa-transfer command. Every wait is for an event (a line
// printed, a status reached), bounded by a deadline.
#include <signal.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "child_process.h"
#include "file_text.h"
#include "final_status.h"
#include "json_client.h"
#include "postgres_test_database.h"
#include "settle/db/pg_connection.h"
#include "settled_process.h"
#include "temp_dir.h"

namespace settle {
namespace {

using nlohmann::json;
using testing::ChildProcess;
using testing::JsonClient;
using testing::PostgresTestDatabase;
using testing::SettledProcess;

constexpr auto kWait = std::chrono::seconds(30);

std::chrono::steady_clock::time_point Deadline() {
  return std::chrono::steady_clock::now() + kWait;
}

// One xa-bank process on its own schema; restartable on the port it got first, since the
// coordinator calls phase 2 at the URL the branch registered.
class Bank {
 public:
  Bank(std::string name, const testing::TempDir& dir, std::vector<std::string> accounts)
      : name_(std::move(name)), log_(dir.File(name_ + ".log")), accounts_(std::move(accounts)) {
    auto reader = db::PgConnection::Open(database_.conninfo());
    REQUIRE(reader);
    reader_ = std::move(reader).value();
  }
  ~Bank() {
    process_.reset();
    // A failed case may leave branches prepared: their locks would keep the schema from being
    // dropped.
    for (const std::string& gid : Prepared()) {
      reader_->Run("ROLLBACK PREPARED '" + gid + "'").IgnoreError();
    }
  }

  void Start(int settled_port) {
    std::vector<std::string> argv = {
        XA_BANK_BINARY,
        "--port",
        std::to_string(port_),
        "--db",
        database_.conninfo(),
        "--coordinator",
        "http://127.0.0.1:" + std::to_string(settled_port) + "/api/settle"};
    for (const std::string& account : accounts_) {
      argv.push_back("--account");
      argv.push_back(account);
    }
    process_ = std::make_unique<ChildProcess>(argv, log_);
    const std::string line = process_->WaitForLine("xa-bank listening on", kWait);
    static const std::regex kLine(R"(xa-bank listening on http://127\.0\.0\.1:(\d+))");
    std::smatch match;
    INFO(name_ << "'s log: " << testing::ReadFile(log_));
    REQUIRE(std::regex_match(line, match, kLine));
    port_ = std::stoi(match[1]);
  }
  void Kill() {
    process_->Signal(SIGKILL);
    process_->Wait(kWait);
  }

  std::string Url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // GET /api/accounts: {"accounts": {"A": 100}, "prepared": [...]}.
  json Accounts() const {
    JsonClient client(port_);
    auto r = client.Get("/api/accounts");
    REQUIRE(r.status == 200);
    return r.json;
  }
  std::int64_t Balance(const std::string& id) const { return Accounts()["accounts"][id]; }

  // The prepared transactions of this bank's branches, as PostgreSQL lists them.
  std::vector<std::string> Prepared() const {
    auto rows = reader_->Query(
        "SELECT p.gid FROM pg_prepared_xacts p"
        " JOIN pg_locks x ON x.locktype = 'transactionid' AND x.transactionid = p.transaction"
        " JOIN pg_locks r ON r.virtualtransaction = x.virtualtransaction"
        " AND r.locktype = 'relation' AND r.relation = 'account'::regclass ORDER BY p.gid");
    REQUIRE(rows);
    std::vector<std::string> names;
    for (int i = 0; i < rows->rows(); ++i) names.push_back(rows->Text(i, 0));
    return names;
  }
  // Whether another session can lock the account's row now (a prepared branch holds it).
  bool RowLocked(const std::string& id) const {
    return !reader_->Run("SELECT balance FROM account WHERE id = '" + id + "' FOR UPDATE NOWAIT")
                .ok();
  }

 private:
  std::string name_;
  std::string log_;
  std::vector<std::string> accounts_;
  PostgresTestDatabase database_;
  std::unique_ptr<db::PgConnection> reader_;
  std::unique_ptr<ChildProcess> process_;
  int port_ = 0;
};

// settled on an SQLite file, and the two banks: A holds account A (100), B account B (0).
struct World {
  testing::TempDir dir;
  std::unique_ptr<SettledProcess> settled;
  Bank a{"bank-a", dir, {"A=100"}};
  Bank b{"bank-b", dir, {"B=0"}};

  World() {
    StartSettled();
    a.Start(settled->port());
    b.Start(settled->port());
  }
  void StartSettled() {
    settled = std::make_unique<SettledProcess>(
        dir.File("settle.db"),
        std::vector<std::string>{"--retry-interval", "100ms", "--retry-max", "400ms", "--log-level",
                                 "warn"},
        0, dir.File("settled.log"));
  }
  std::string Api() const {
    return "http://127.0.0.1:" + std::to_string(settled->port()) + "/api/settle";
  }

  // Starts xa-transfer from A to `to` (an account at bank B).
  std::unique_ptr<ChildProcess> Transfer(std::int64_t amount, const std::string& to = "B",
                                         bool pause = false) {
    std::vector<std::string> argv = {XA_TRANSFER_BINARY,
                                     "--coordinator",
                                     Api(),
                                     "--from-bank",
                                     a.Url(),
                                     "--to-bank",
                                     b.Url(),
                                     "--from",
                                     "A",
                                     "--to",
                                     to,
                                     "--amount",
                                     std::to_string(amount)};
    if (pause) argv.push_back("--pause");
    return std::make_unique<ChildProcess>(argv, dir.File("xa-transfer.log"));
  }
  std::string FinalStatus(const std::string& gid) {
    JsonClient client(settled->port());
    return testing::WaitForFinalStatus(client, gid, Deadline());
  }
};

std::string GidOf(ChildProcess& transfer) {
  const std::string line = transfer.WaitForLine("gid ", kWait);
  REQUIRE(line.rfind("gid ", 0) == 0);
  return line.substr(4);
}

int ExitCode(ChildProcess& process) {
  const int status = process.Wait(kWait);
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

TEST_CASE("an XA transfer prepares both branches, invisible and locked, and submit commits both",
          "[examples][xa][postgres]") {
  World w;
  auto transfer = w.Transfer(30, "B", /*pause=*/true);
  const std::string gid = GidOf(*transfer);
  REQUIRE_FALSE(transfer->WaitForLine("both branches prepared", kWait).empty());

  // Prepared: the changes are in neither bank's committed state, and their rows are locked.
  CHECK(w.a.Balance("A") == 100);
  CHECK(w.b.Balance("B") == 0);
  CHECK(w.a.Accounts()["prepared"] == json::array({"settle-xa/" + gid + "/01"}));
  CHECK(w.b.Accounts()["prepared"] == json::array({"settle-xa/" + gid + "/02"}));
  CHECK(w.a.RowLocked("A"));
  CHECK(w.b.RowLocked("B"));

  transfer->Signal(SIGUSR1);  // go on: submit
  CHECK(transfer->WaitForLine("status ", kWait) == "status succeed");
  CHECK(ExitCode(*transfer) == 0);
  CHECK(w.FinalStatus(gid) == "succeed");
  CHECK(w.a.Balance("A") == 70);
  CHECK(w.b.Balance("B") == 30);
  CHECK(w.a.Prepared().empty());
  CHECK(w.b.Prepared().empty());
  CHECK_FALSE(w.a.RowLocked("A"));
}

TEST_CASE("an XA transfer that a bank refuses changes nothing in either bank",
          "[examples][xa][postgres]") {
  World w;
  SECTION("insufficient funds: the debit is refused by the CHECK, nothing is prepared") {
    auto transfer = w.Transfer(130);
    const std::string gid = GidOf(*transfer);
    CHECK(transfer->WaitForLine("refused", kWait) == "branch 01 (debit A) refused");
    CHECK_THAT(
        transfer->WaitForLine("status ", kWait),
        Catch::StartsWith("status failed") && Catch::Contains("insufficient funds in account A"));
    CHECK(ExitCode(*transfer) == 1);
    CHECK(w.FinalStatus(gid) == "failed");
  }
  SECTION("an unknown account at B: the debit prepared at A is rolled back by the abort") {
    auto transfer = w.Transfer(30, "nobody");
    const std::string gid = GidOf(*transfer);
    CHECK_FALSE(transfer->WaitForLine("branch 01 prepared", kWait).empty());
    CHECK(transfer->WaitForLine("refused", kWait) == "branch 02 (credit nobody) refused");
    CHECK_THAT(transfer->WaitForLine("status ", kWait),
               Catch::StartsWith("status failed") && Catch::Contains("no account nobody"));
    CHECK(ExitCode(*transfer) == 1);
    CHECK(w.FinalStatus(gid) == "failed");
  }
  CHECK(w.a.Balance("A") == 100);
  CHECK(w.b.Balance("B") == 0);
  CHECK(w.a.Prepared().empty());
  CHECK(w.b.Prepared().empty());
  CHECK_FALSE(w.a.RowLocked("A"));
}

TEST_CASE(
    "a committed XA transfer survives kill -9 of its receiving bank before phase 2 and of "
    "settled after submit",
    "[examples][xa][postgres][crash]") {
  World w;
  auto transfer = w.Transfer(30, "B", /*pause=*/true);
  const std::string gid = GidOf(*transfer);
  REQUIRE_FALSE(transfer->WaitForLine("both branches prepared", kWait).empty());

  w.b.Kill();  // its branch stays prepared in PostgreSQL, without the process
  CHECK(w.b.Prepared() == std::vector<std::string>{"settle-xa/" + gid + "/02"});
  transfer->Signal(SIGUSR1);
  // Submitted: A's commit is delivered, B's cannot be yet.
  CHECK(transfer->WaitForLine("status ", kWait).rfind("status submitted", 0) == 0);
  CHECK(ExitCode(*transfer) == 0);

  w.settled->Kill();
  CHECK(w.b.Prepared() == std::vector<std::string>{"settle-xa/" + gid + "/02"});
  w.StartSettled();
  w.b.Start(w.settled->port());  // on its old port: the branch's phase-2 URL
  CHECK(w.FinalStatus(gid) == "succeed");
  CHECK(w.a.Balance("A") == 70);
  CHECK(w.b.Balance("B") == 30);
  CHECK(w.b.Prepared().empty());
}

}  // namespace
}  // namespace settle
