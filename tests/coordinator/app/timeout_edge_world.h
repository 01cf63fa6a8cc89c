#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace settle::testing {

// The load of the timeout's-edge test: each client runs its TCCs one after another, each
// with a small timeout_to_fail, and registers its branches a seeded, spread time after the
// prepare, so that many registrations land just before, at and just after the timeout.
struct EdgeLoad {
  int clients = 10;
  int tccs_per_client = 30;
  int timeout_to_fail_s = 1;  // protocol.md §3.7: whole seconds
  int min_wait_ms = 800;      // from the prepare to the first registration
  int max_wait_ms = 1200;
  long long amount = 100;
  // No client starts a TCC after this (the count bounds the load, this bounds its time).
  std::chrono::seconds deadline{75};
  // Client c's TCCs are "<gid_prefix>-c<c>-<k>" and move money from account first_account + 2c
  // to account first_account + 2c + 1: two loads run side by side on one bank and one store
  // when they differ in both.
  std::string gid_prefix = "edge";
  int first_account = 1;
};

// The bank's accounts the load needs, and what each holds at the start: client c moves money
// from account 2c+1 to account 2c+2 (with first_account 1), so no two clients share an account.
inline int EdgeAccounts(const EdgeLoad& load) { return 2 * load.clients; }
constexpr long long kEdgeInitialBalance = 1'000'000;

// What a client did for one branch of one TCC: the HTTP status of its registerBranch and of
// its Try call (0: not sent; a Try is called only after a 200 registration).
struct EdgeBranch {
  std::string branch_id;  // "01": TransOut from the client's first account; "02": TransIn
  std::string account;
  int registration = 0;
  int try_call = 0;
};

// What a client did for one TCC, and how it ended it: "submit" when both Tries succeeded,
// else "abort" (with the coordinator's HTTP status: 409 when the timeout came first).
struct EdgeTcc {
  std::string gid;
  int client = 0;
  int wait_ms = 0;
  EdgeBranch branches[2];
  std::string ending;
  int ending_status = 0;
  // When the client sent its prepare, on the test's wall clock, and after it on the steady
  // clock: when the prepare was answered, when the ending was sent, and when the first 409
  // (of a registration, a Try or the ending) came back, -1 if none did. A 409 means that the
  // transaction was no longer prepared when it was answered.
  std::chrono::system_clock::time_point prepare_sent_at;
  int prepare_answered_ms = 0;
  int ending_sent_ms = 0;
  int first_refusal_ms = -1;
};

// Runs `load.clients` threads against settled instances (each request goes to the next
// instance in turn, so a TCC's prepare, registrations and ending usually reach different
// ones) and the bank at `bank_port`, the bank example's TCC transfer by raw HTTP. Returns
// every TCC prepared. Answers outside the protocol's (a 5xx, no answer, a registration
// other than 200 or 409) go to `unexpected`, one line each.
std::vector<EdgeTcc> RunEdgeClients(const EdgeLoad& load, const std::vector<int>& settled_ports,
                                    int bank_port, std::vector<std::string>& unexpected);

// Polls (every 50 ms) until each gid is succeed or failed, or until `deadline`; returns
// each gid's last status seen ("" when a query failed).
std::map<std::string, std::string> WaitForFinalStatuses(
    int settled_port, const std::vector<EdgeTcc>& tccs,
    std::chrono::steady_clock::time_point deadline);
std::map<std::string, std::string> WaitForFinalStatuses(
    int settled_port, const std::vector<std::string>& gids,
    std::chrono::steady_clock::time_point deadline);

// Sagas beside the TCCs: each client submits its sagas one after another, each moving `amount`
// from its first account to its second with the bank example's saga transfer (TransOut, then
// TransIn, each with its compensation), to the settled instances in turn. Client c uses
// accounts first_account + 2c and first_account + 2c + 1.
struct SagaLoad {
  int clients = 2;
  int sagas_per_client = 20;
  int first_account = 1;
  long long amount = 100;
  std::chrono::seconds deadline{30};  // no client submits a saga after this
};

// A saga a client submitted (without wait_result): the HTTP status of its submit.
struct EdgeSaga {
  std::string gid;
  int client = 0;
  int submit_status = 0;
};

// Runs `load.clients` threads submitting sagas; returns every saga whose submit answered
// 200. Other answers go to `unexpected`, one line each.
std::vector<EdgeSaga> RunSagaClients(const SagaLoad& load, const std::vector<int>& settled_ports,
                                     int bank_port, std::vector<std::string>& unexpected);

// The barrier rows of a participant's SQLite file, read as it stands (WAL lets a reader in
// while it runs): gid -> branch_id -> op -> reason. A `try` row whose reason is `try` is a
// Try that took effect; one whose reason is `cancel` was written by an empty rollback.
using BranchBarrier = std::map<std::string, std::string>;
using GidBarrier = std::map<std::string, BranchBarrier>;
std::map<std::string, GidBarrier> ReadBarrier(const std::string& db_path);

struct EdgeAccount {
  long long balance = 0;
  long long frozen = 0;
};
// The bank example's accounts (by id) and its count of pending credits (TransIn Tries not
// yet confirmed or cancelled), from its database file.
std::map<std::string, EdgeAccount> ReadAccounts(const std::string& db_path);
long long CountPendingCredits(const std::string& db_path);

// Every TCC whose effect at the bank contradicts its final status, one line each saying
// what the client did, the status and what the barrier shows:
// - succeed: both branches' Tries took effect and were confirmed, none cancelled;
// - failed: every Try that took effect was cancelled, none confirmed;
// - a branch whose registration was refused has no barrier row (its Try was never called,
//   and the coordinator does not know it);
// - any other status (the transaction never finished) is a breach too.
std::vector<std::string> AtomicityBreaches(const std::vector<EdgeTcc>& tccs,
                                           const std::map<std::string, std::string>& statuses,
                                           const std::map<std::string, GidBarrier>& barrier);

// Every saga whose effect at the bank contradicts its final status, one line each:
// - succeed: both actions took effect, and neither was compensated;
// - failed: every action that took effect was compensated;
// - any other status (the saga never finished) is a breach too.
std::vector<std::string> SagaAtomicityBreaches(const std::vector<EdgeSaga>& sagas,
                                               const std::map<std::string, std::string>& statuses,
                                               const std::map<std::string, GidBarrier>& barrier);

// What the coordinator stores for a gid (its status and branch rows), one line, and the log
// lines of `log_path` that name it: the context printed for a breach.
std::string CoordinatorView(int settled_port, const std::string& gid);
std::vector<std::string> LogLinesAbout(const std::string& log_path, const std::string& gid);

}  // namespace settle::testing
