#include "timeout_edge_world.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "bank_process.h"
#include "eventually.h"
#include "file_text.h"
#include "final_status.h"
#include "json_client.h"

namespace settle::testing {
namespace {

using nlohmann::json;
using Steady = std::chrono::steady_clock;

std::string TransferBody(const std::string& account, long long amount) {
  return json{{"account_id", account}, {"amount", amount}}.dump();
}

// The bank example's TCC transfer (examples/bank): TransOut on the first account, TransIn on
// the second.
constexpr const char* kBranchPath[2] = {"/api/TransOut", "/api/TransIn"};

std::string Answer(const JsonResponse& r) {
  return std::to_string(r.status) + " " + r.body.substr(0, 200);
}

int MillisSince(Steady::time_point start) {
  return static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(Steady::now() - start).count());
}

// One client: its own connections (JsonClient is not thread-safe) and its own seeded RNG, so
// that the waits of a run are the same from run to run.
class EdgeClient {
 public:
  EdgeClient(int index, const EdgeLoad& load, const std::vector<int>& settled_ports, int bank_port)
      : index_(index), load_(load), next_(index), bank_(bank_port), rng_(20'290u + index) {
    for (int port : settled_ports) settled_.emplace_back(port);
    bank_url_ = "http://127.0.0.1:" + std::to_string(bank_port);
  }

  void Run(Steady::time_point deadline) {
    for (int k = 0; k < load_.tccs_per_client && Steady::now() < deadline; ++k) RunOne(k);
  }

  std::vector<EdgeTcc> tccs;
  std::vector<std::string> unexpected;

 private:
  JsonClient& NextInstance() { return settled_[next_++ % settled_.size()]; }

  void RunOne(int k) {
    EdgeTcc t;
    t.gid = load_.gid_prefix + "-c" + std::to_string(index_) + "-" + std::to_string(k);
    t.client = index_;
    // A modulo rather than a std:: distribution: the same waits on every standard library.
    const int spread = load_.max_wait_ms - load_.min_wait_ms + 1;
    t.wait_ms = load_.min_wait_ms + static_cast<int>(rng_() % static_cast<unsigned>(spread));
    const int from = load_.first_account + 2 * index_;
    const std::string accounts[2] = {std::to_string(from), std::to_string(from + 1)};

    const Steady::time_point start = Steady::now();
    t.prepare_sent_at = std::chrono::system_clock::now();
    const JsonResponse prepared = NextInstance().PostJson(
        "/api/settle/prepare",
        json{{"gid", t.gid}, {"trans_type", "tcc"}, {"timeout_to_fail", load_.timeout_to_fail_s}});
    if (prepared.status != 200) {
      unexpected.push_back(t.gid + ": prepare answered " + Answer(prepared));
      return;
    }
    t.prepare_answered_ms = MillisSince(start);
    // The subject of the test is timing: the registrations are meant to meet the timeout.
    std::this_thread::sleep_until(start + std::chrono::milliseconds(t.wait_ms));

    bool all_tried = true;
    for (int b = 0; b < 2 && all_tried; ++b) {
      EdgeBranch& branch = t.branches[b];
      branch.branch_id = b == 0 ? "01" : "02";
      branch.account = accounts[b];
      const std::string body = TransferBody(branch.account, load_.amount);
      const std::string path = kBranchPath[b];
      const JsonResponse registered = NextInstance().PostJson(
          "/api/settle/registerBranch", json{{"gid", t.gid},
                                             {"trans_type", "tcc"},
                                             {"branch_id", branch.branch_id},
                                             {"data", body},
                                             {"confirm", bank_url_ + path + "Confirm"},
                                             {"cancel", bank_url_ + path + "Cancel"}});
      branch.registration = registered.status;
      if (registered.status == 409) NoteRefusal(t, start);
      if (registered.status != 200) {
        // 409: the transaction is no longer prepared (the timeout came first); its Try must
        // not be called, since nothing would ever cancel it.
        if (registered.status != 409) {
          unexpected.push_back(t.gid + ": registerBranch " + branch.branch_id + " answered " +
                               Answer(registered));
        }
        all_tried = false;
        break;
      }
      const JsonResponse tried = bank_.Post(
          path + "Try?gid=" + t.gid + "&trans_type=tcc&branch_id=" + branch.branch_id + "&op=try",
          body);
      branch.try_call = tried.status;
      if (tried.status == 409) NoteRefusal(t, start);
      if (tried.status != 200) {
        // 409: a hanging Try (its cancel came first); anything else is not the bank's way.
        if (tried.status != 409) {
          unexpected.push_back(t.gid + ": Try " + branch.branch_id + " answered " + Answer(tried));
        }
        all_tried = false;
      }
    }

    t.ending = all_tried ? "submit" : "abort";
    t.ending_sent_ms = MillisSince(start);
    const JsonResponse ended = NextInstance().PostJson("/api/settle/" + t.ending,
                                                       json{{"gid", t.gid}, {"trans_type", "tcc"}});
    t.ending_status = ended.status;
    if (ended.status == 409) NoteRefusal(t, start);
    if (ended.status != 200 && ended.status != 409) {
      unexpected.push_back(t.gid + ": " + t.ending + " answered " + Answer(ended));
    }
    tccs.push_back(std::move(t));
  }

  static void NoteRefusal(EdgeTcc& t, Steady::time_point start) {
    if (t.first_refusal_ms < 0) t.first_refusal_ms = MillisSince(start);
  }

  int index_;
  const EdgeLoad& load_;
  std::vector<JsonClient> settled_;
  std::size_t next_ = 0;
  JsonClient bank_;
  std::string bank_url_;
  std::mt19937 rng_;
};

// One saga client: like EdgeClient, its own connections.
class SagaClient {
 public:
  SagaClient(int index, const SagaLoad& load, const std::vector<int>& settled_ports, int bank_port)
      : index_(index), load_(load), next_(index) {
    for (int port : settled_ports) settled_.emplace_back(port);
    bank_url_ = "http://127.0.0.1:" + std::to_string(bank_port);
  }

  void Run(Steady::time_point deadline) {
    for (int k = 0; k < load_.sagas_per_client && Steady::now() < deadline; ++k) RunOne(k);
  }

  std::vector<EdgeSaga> sagas;
  std::vector<std::string> unexpected;

 private:
  void RunOne(int k) {
    EdgeSaga saga;
    saga.gid = "saga-c" + std::to_string(index_) + "-" + std::to_string(k);
    saga.client = index_;
    const int from = load_.first_account + 2 * index_;
    const json steps = json::array({{{"action", bank_url_ + "/api/TransOut"},
                                     {"compensate", bank_url_ + "/api/TransOutCompensate"}},
                                    {{"action", bank_url_ + "/api/TransIn"},
                                     {"compensate", bank_url_ + "/api/TransInCompensate"}}});
    const json payloads = json::array({TransferBody(std::to_string(from), load_.amount),
                                       TransferBody(std::to_string(from + 1), load_.amount)});
    const JsonResponse submitted = settled_[next_++ % settled_.size()].PostJson(
        "/api/settle/submit",
        json{{"gid", saga.gid}, {"trans_type", "saga"}, {"steps", steps}, {"payloads", payloads}});
    saga.submit_status = submitted.status;
    if (submitted.status != 200) {
      unexpected.push_back(saga.gid + ": submit answered " + Answer(submitted));
      return;
    }
    sagas.push_back(std::move(saga));
  }

  int index_;
  const SagaLoad& load_;
  std::vector<JsonClient> settled_;
  std::size_t next_ = 0;
  std::string bank_url_;
};

std::string Describe(const BranchBarrier& rows) {
  if (rows.empty()) return "no barrier row";
  std::string out;
  for (const auto& [op, reason] : rows) {
    out += (out.empty() ? "" : ", ") + op + "(reason " + reason + ")";
  }
  return out;
}

bool Has(const BranchBarrier& rows, const std::string& op) { return rows.count(op) > 0; }

// A Try or action that ran: its row's reason is the op itself (a cancel or compensation that
// came first writes it with its own op as the reason).
bool TookEffect(const BranchBarrier& rows, const std::string& op) {
  const auto found = rows.find(op);
  return found != rows.end() && found->second == op;
}

bool TryTookEffect(const BranchBarrier& rows) { return TookEffect(rows, "try"); }

}  // namespace

namespace {

// Runs `load.clients` clients of type `Client` on a thread each until the load's deadline and
// gathers what each recorded in its `outcomes` member, and what surprised it.
template <typename Client, typename Load, typename Outcome>
std::vector<Outcome> RunClients(const Load& load, const std::vector<int>& settled_ports,
                                int bank_port, std::vector<std::string>& unexpected,
                                std::vector<Outcome> Client::*outcomes) {
  std::vector<std::unique_ptr<Client>> clients;
  for (int c = 0; c < load.clients; ++c) {
    clients.push_back(std::make_unique<Client>(c, load, settled_ports, bank_port));
  }
  const Steady::time_point deadline = Steady::now() + load.deadline;
  std::vector<std::thread> threads;
  for (auto& client : clients) {
    threads.emplace_back([&client, deadline] { client->Run(deadline); });
  }
  for (std::thread& t : threads) t.join();
  std::vector<Outcome> all;
  for (auto& client : clients) {
    const std::vector<Outcome>& mine = (*client).*outcomes;
    all.insert(all.end(), mine.begin(), mine.end());
    unexpected.insert(unexpected.end(), client->unexpected.begin(), client->unexpected.end());
  }
  return all;
}

}  // namespace

std::vector<EdgeTcc> RunEdgeClients(const EdgeLoad& load, const std::vector<int>& settled_ports,
                                    int bank_port, std::vector<std::string>& unexpected) {
  return RunClients(load, settled_ports, bank_port, unexpected, &EdgeClient::tccs);
}

std::vector<EdgeSaga> RunSagaClients(const SagaLoad& load, const std::vector<int>& settled_ports,
                                     int bank_port, std::vector<std::string>& unexpected) {
  return RunClients(load, settled_ports, bank_port, unexpected, &SagaClient::sagas);
}

std::map<std::string, std::string> WaitForFinalStatuses(int settled_port,
                                                        const std::vector<EdgeTcc>& tccs,
                                                        Steady::time_point deadline) {
  std::vector<std::string> gids;
  for (const EdgeTcc& t : tccs) gids.push_back(t.gid);
  return WaitForFinalStatuses(settled_port, gids, deadline);
}

std::map<std::string, std::string> WaitForFinalStatuses(int settled_port,
                                                        const std::vector<std::string>& gids,
                                                        Steady::time_point deadline) {
  JsonClient reader(settled_port);
  std::map<std::string, std::string> statuses;
  for (const std::string& gid : gids) statuses[gid] = "";
  Eventually(
      [&] {
        bool all_final = true;
        for (auto& [gid, status] : statuses) {
          if (status == "succeed" || status == "failed") continue;
          status = StatusOf(reader, gid);
          if (status != "succeed" && status != "failed") all_final = false;
        }
        return all_final;
      },
      std::chrono::ceil<std::chrono::milliseconds>(deadline - Steady::now()),
      std::chrono::milliseconds(50));
  return statuses;
}

std::map<std::string, GidBarrier> ReadBarrier(const std::string& db_path) {
  std::map<std::string, GidBarrier> barrier;
  for (const auto& row : QueryBankDb(db_path, "SELECT gid, branch_id, op, reason FROM barrier")) {
    barrier[row[0]][row[1]][row[2]] = row[3];
  }
  return barrier;
}

std::map<std::string, EdgeAccount> ReadAccounts(const std::string& db_path) {
  std::map<std::string, EdgeAccount> accounts;
  for (const auto& row : QueryBankDb(db_path, "SELECT account_id, balance, frozen FROM account")) {
    accounts[row[0]] = {std::stoll(row[1]), std::stoll(row[2])};
  }
  return accounts;
}

long long CountPendingCredits(const std::string& db_path) {
  const auto rows = QueryBankDb(db_path, "SELECT COUNT(*) FROM pending_credit");
  return rows.empty() ? -1 : std::stoll(rows[0][0]);
}

std::vector<std::string> AtomicityBreaches(const std::vector<EdgeTcc>& tccs,
                                           const std::map<std::string, std::string>& statuses,
                                           const std::map<std::string, GidBarrier>& barrier) {
  std::vector<std::string> breaches;
  for (const EdgeTcc& t : tccs) {
    const auto status_found = statuses.find(t.gid);
    const std::string status = status_found == statuses.end() ? "" : status_found->second;
    const auto barrier_found = barrier.find(t.gid);
    const GidBarrier none;
    const GidBarrier& rows = barrier_found == barrier.end() ? none : barrier_found->second;

    std::vector<std::string> wrongs;
    if (status != "succeed" && status != "failed") {
      wrongs.push_back("never finished");
    }
    if (status == "succeed" && t.ending != "submit") {
      wrongs.push_back("succeeded though its client aborted it");
    }
    for (const EdgeBranch& branch : t.branches) {
      if (branch.branch_id.empty()) continue;  // not reached
      const auto found = rows.find(branch.branch_id);
      const BranchBarrier branch_rows = found == rows.end() ? BranchBarrier() : found->second;
      const std::string id = "branch " + branch.branch_id;
      if (branch.registration != 200) {
        // (Another answer than 409 is reported as unexpected: it may or may not be stored.)
        if (branch.registration == 409 && !branch_rows.empty()) {
          wrongs.push_back(id + " was refused but has barrier rows");
        }
        continue;
      }
      if (status == "succeed" && !(TryTookEffect(branch_rows) && Has(branch_rows, "confirm") &&
                                   !Has(branch_rows, "cancel"))) {
        wrongs.push_back(id + " is not confirmed after its Try");
      }
      if (status == "failed" && TryTookEffect(branch_rows) &&
          !(Has(branch_rows, "cancel") && !Has(branch_rows, "confirm"))) {
        wrongs.push_back(id + "'s Try took effect and was never cancelled");
      }
    }
    // A branch at the bank that the client never registered cannot happen; its rows would
    // show here as an unknown branch.
    for (const auto& [branch_id, branch_rows] : rows) {
      if (branch_id != t.branches[0].branch_id && branch_id != t.branches[1].branch_id) {
        wrongs.push_back("branch " + branch_id + " at the bank was never registered");
      }
    }
    if (wrongs.empty()) continue;

    std::ostringstream line;
    line << t.gid << " ended " << (status.empty() ? "?" : status) << " (client waited " << t.wait_ms
         << " ms, then " << t.ending << " answered " << t.ending_status << "):";
    for (const std::string& wrong : wrongs) line << " " << wrong << ";";
    line << " client saw";
    for (const EdgeBranch& branch : t.branches) {
      if (branch.branch_id.empty()) continue;
      line << " [" << branch.branch_id << " registerBranch " << branch.registration << ", Try "
           << branch.try_call << "]";
    }
    line << "; barrier shows";
    for (const EdgeBranch& branch : t.branches) {
      if (branch.branch_id.empty()) continue;
      const auto found = rows.find(branch.branch_id);
      line << " [" << branch.branch_id << ": "
           << Describe(found == rows.end() ? BranchBarrier() : found->second) << "]";
    }
    breaches.push_back(line.str());
  }
  return breaches;
}

std::vector<std::string> SagaAtomicityBreaches(const std::vector<EdgeSaga>& sagas,
                                               const std::map<std::string, std::string>& statuses,
                                               const std::map<std::string, GidBarrier>& barrier) {
  std::vector<std::string> breaches;
  for (const EdgeSaga& saga : sagas) {
    const auto status_found = statuses.find(saga.gid);
    const std::string status = status_found == statuses.end() ? "" : status_found->second;
    const auto barrier_found = barrier.find(saga.gid);
    const GidBarrier none;
    const GidBarrier& rows = barrier_found == barrier.end() ? none : barrier_found->second;

    std::vector<std::string> wrongs;
    if (status != "succeed" && status != "failed") wrongs.push_back("never finished");
    for (const char* branch_id : {"01", "02"}) {
      const auto found = rows.find(branch_id);
      const BranchBarrier branch_rows = found == rows.end() ? BranchBarrier() : found->second;
      const std::string id = std::string("step ") + branch_id;
      if (status == "succeed" &&
          !(TookEffect(branch_rows, "action") && !Has(branch_rows, "compensate"))) {
        wrongs.push_back(id + "'s action did not take effect, or was compensated");
      }
      if (status == "failed" && TookEffect(branch_rows, "action") &&
          !Has(branch_rows, "compensate")) {
        wrongs.push_back(id + "'s action took effect and was never compensated");
      }
    }
    for (const auto& [branch_id, branch_rows] : rows) {
      if (branch_id != "01" && branch_id != "02") {
        wrongs.push_back("branch " + branch_id + " at the bank is not one of its steps");
      }
    }
    if (wrongs.empty()) continue;

    std::ostringstream line;
    line << saga.gid << " ended " << (status.empty() ? "?" : status) << ":";
    for (const std::string& wrong : wrongs) line << " " << wrong << ";";
    line << " barrier shows";
    for (const char* branch_id : {"01", "02"}) {
      const auto found = rows.find(branch_id);
      line << " [" << branch_id << ": "
           << Describe(found == rows.end() ? BranchBarrier() : found->second) << "]";
    }
    breaches.push_back(line.str());
  }
  return breaches;
}

std::string CoordinatorView(int settled_port, const std::string& gid) {
  JsonClient reader(settled_port);
  const JsonResponse q = reader.Get("/api/settle/query?gid=" + gid);
  if (q.status != 200 || !q.json.is_object() || !q.json["transaction"].is_object()) {
    return "query answered " + Answer(q);
  }
  const json& tx = q.json["transaction"];
  std::string out = "status " + tx.value("status", std::string("?")) + ", rollback_reason '" +
                    tx.value("rollback_reason", std::string()) + "', branches:";
  for (const json& b : q.json["branches"]) {
    out += " " + b.value("branch_id", std::string("?")) + "/" + b.value("op", std::string("?")) +
           "=" + b.value("status", std::string("?"));
  }
  return out;
}

std::vector<std::string> LogLinesAbout(const std::string& log_path, const std::string& gid) {
  std::vector<std::string> lines;
  std::istringstream text(ReadFile(log_path));
  const std::string needle = "gid=" + gid + " ";
  for (std::string line; std::getline(text, line);) {
    if (line.find(needle) != std::string::npos) lines.push_back(line);
  }
  return lines;
}

}  // namespace settle::testing
