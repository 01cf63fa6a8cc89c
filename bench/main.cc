// settle-bench: drives a running settled with concurrent clients (saga with 2 steps, TCC with 2
// branches or workflow with 2 steps, awaited to their end, against empty participants or two
// bank examples in this process, served over HTTP or as gRPC methods), reports throughput and
// latency percentiles of whole global transactions, and optionally runs the same participant
// calls without the coordinator as a baseline and prints the ratio. With --settled-pid it also
// reports settled's CPU time per transaction and its threads, read from /proc.
#include <stdlib.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <vector>

#include "bench_participants.h"
#include "grpc_branch_client.h"
#include "load_runner.h"
#include "process_stats.h"
#include "settle/async/io_threads.h"
#include "settle/core/duration_text.h"
#include "settle/core/url.h"
#include "settle/net/blocking_client.h"
#include "settle/net/client.h"
#include "workload.h"

namespace {

using settle::bench::LatencyRecorder;
using settle::bench::LoadPlan;
using settle::bench::LoadResult;
namespace net = settle::net;
using settle::ParseUrl;
using settle::Url;
namespace async = settle::async;

struct Args {
  std::vector<std::string> coordinators = {"http://127.0.0.1:36789/api/settle"};
  std::string mode = "saga";
  std::string participants = "empty";
  std::string protocol = "http";
  int settled_pid = 0;
  int clients = 16;
  std::string duration = "10s";
  std::string warmup = "1s";
  std::uint64_t count = 0;
  bool baseline = false;
  int rounds = 1;
  bool verify = false;
  bool quiet = false;
  int accounts = 16;
  std::size_t participant_threads = 128;
  std::size_t participant_requests_per_connection = 0;
  double rate = 0;
};

Url LocalUrl(int port, std::string path_and_query) {
  Url url;
  url.host = "127.0.0.1";
  url.port = port;
  url.path_and_query = std::move(path_and_query);
  return url;
}

// GETs `target` from 127.0.0.1:port; the body as JSON, or null unless answered 200.
nlohmann::json GetJson(net::BlockingClient& http, const Url& url, std::string target) {
  net::ClientRequest request;
  request.url = url;
  request.target = std::move(target);
  request.timeout = std::chrono::seconds(30);
  const settle::Result<net::ClientAnswer> answer = http.Send(std::move(request));
  if (!answer || answer->status != 200) return nlohmann::json();
  return nlohmann::json::parse(answer->body, nullptr, false);
}

// Counts the coordinator's transactions with `status` (paging through /all).
std::uint64_t CountWithStatus(net::BlockingClient& http, int port, const std::string& api,
                              const std::string& status) {
  const Url all = LocalUrl(port, api + "/all");
  std::uint64_t count = 0;
  std::string position;
  for (;;) {
    const nlohmann::json body = GetJson(
        http, all, all.TargetWith({{"limit", "1000"}, {"status", status}, {"position", position}}));
    if (!body.is_object() || !body.contains("transactions")) return UINT64_MAX;
    count += body["transactions"].size();
    position = body.value("next_position", "");
    if (position.empty()) return count;
  }
}

// For a coordinator that started empty: every transaction the run started ended succeed.
bool VerifyAllSucceeded(net::BlockingClient& http, int port, const std::string& api,
                        std::uint64_t expected) {
  bool ok = true;
  for (const char* status : {"prepared", "submitted", "aborting", "failed"}) {
    const std::uint64_t n = CountWithStatus(http, port, api, status);
    if (n != 0) {
      std::printf("verify: %llu transactions are %s\n", static_cast<unsigned long long>(n), status);
      ok = false;
    }
  }
  const std::uint64_t succeeded = CountWithStatus(http, port, api, "succeed");
  std::printf("verify: %llu transactions succeed, %llu expected\n",
              static_cast<unsigned long long>(succeeded),
              static_cast<unsigned long long>(expected));
  return ok && succeeded == expected;
}

// For bank participants: every transfer that ended succeed moved exactly 1 from bank A to
// bank B, through the coordinator or directly, and nothing else moved.
bool VerifyBankTotals(net::BlockingClient& http, int port_a, int port_b, int accounts,
                      std::uint64_t moved) {
  const std::int64_t initial = static_cast<std::int64_t>(accounts) * settle::bench::kBankBalance;
  const std::int64_t expected[] = {initial - static_cast<std::int64_t>(moved),
                                   initial + static_cast<std::int64_t>(moved)};
  const int ports[] = {port_a, port_b};
  bool ok = true;
  for (int i = 0; i < 2; ++i) {
    const nlohmann::json body = GetJson(http, LocalUrl(ports[i], "/api/accounts"), "");
    const std::int64_t total = body.is_object() ? body.value("total", std::int64_t{-1}) : -1;
    std::printf("verify: bank %c holds %lld in all, %lld expected\n", "AB"[i],
                static_cast<long long>(total), static_cast<long long>(expected[i]));
    ok = ok && total == expected[i];
  }
  return ok;
}

// What a run did, for --verify.
struct Tally {
  std::uint64_t sent = 0;    // transactions sent through settled, warmup included
  std::uint64_t failed = 0;  // of which did not end succeed
  std::uint64_t moved = 0;   // transfers that ended succeed, with or without the coordinator
};

// --verify: 0 when every transaction ended succeed (and, with banks, moved exactly its amount),
// 1 otherwise, 2 when it cannot check.
int VerifyRun(settle::bench::BenchParticipants::Kind kind,
              const settle::bench::Endpoints& endpoints, int accounts, const Tally& tally) {
  auto http = net::BlockingClient::Create();
  if (!http) {
    std::fprintf(stderr, "settle-bench: %s\n", http.status().ToString().c_str());
    return 2;
  }
  if (tally.failed > 0) {
    std::printf("verify: %llu transactions did not end succeed\n",
                static_cast<unsigned long long>(tally.failed));
  }
  const bool bank = kind == settle::bench::BenchParticipants::Kind::kBank;
  const bool totals_ok =
      !bank || VerifyBankTotals(**http, endpoints.participant_a_port, endpoints.participant_b_port,
                                accounts, tally.moved);
  if (tally.failed > 0 || !totals_ok ||
      !VerifyAllSucceeded(**http, endpoints.coordinator_port, endpoints.api, tally.sent)) {
    return 1;
  }
  std::printf("verify: every transaction the run started ended succeed%s\n",
              bank ? ", and moved exactly its amount" : "");
  return 0;
}

// Reads the command line into `a`: nullopt to go on, otherwise the exit code (0 after --help).
std::optional<int> ParseArgs(int argc, char** argv, Args& a) {
  CLI::App app{"settle-bench: throughput and latency of Settle, with a direct baseline"};
  app.add_option("--coordinator", a.coordinators,
                 "settled's API base on 127.0.0.1; repeat it for several instances sharing one "
                 "database, and the clients are spread over them in turn")
      ->capture_default_str();
  app.add_option("--mode", a.mode,
                 "saga (2 steps settled calls), tcc (2 branches) or workflow (2 steps the "
                 "clients call and record, docs/protocol.md §3.16)")
      ->check(CLI::IsMember({"saga", "tcc", "workflow"}))
      ->capture_default_str();
  app.add_option("--participants", a.participants,
                 "empty (answer SUCCESS) or bank (the bank example: barrier + SQLite writes)")
      ->check(CLI::IsMember({"empty", "bank"}))
      ->capture_default_str();
  app.add_option("--protocol", a.protocol,
                 "How the participants serve their branches: http (branch URLs http://...) or grpc "
                 "(gRPC methods: branch URLs grpc://127.0.0.1:PORT/bench.Bank/TransOut, bank.Bank "
                 "for banks, and the clients' own Try and baseline calls are gRPC calls). The "
                 "clients talk to settled over HTTP either way")
      ->check(CLI::IsMember({"http", "grpc"}))
      ->capture_default_str();
  app.add_option("--settled-pid", a.settled_pid,
                 "settled's process id, on this machine: also report its CPU time (user + "
                 "system) per transaction over the measured slices, the most threads it had "
                 "while they ran and their names, from /proc; and this process's CPU time per "
                 "transaction alike")
      ->check(CLI::PositiveNumber);
  app.add_option("--clients", a.clients, "Concurrent clients")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--duration", a.duration, "How long to measure (e.g. 10s)")->capture_default_str();
  app.add_option("--count", a.count, "Measure this many transactions instead of a duration");
  app.add_option("--warmup", a.warmup, "Unmeasured load first (0s: none)")->capture_default_str();
  app.add_option("--rate", a.rate,
                 "Transactions started per second over all clients (default: as fast as they "
                 "go); latency then counts from when each was due")
      ->check(CLI::PositiveNumber);
  app.add_flag("--baseline", a.baseline,
               "Also run the same participant calls without the coordinator, and print the ratio");
  app.add_option("--rounds", a.rounds,
                 "With --baseline and a duration: alternate the two measurements this many "
                 "times, each for duration/rounds, so that a machine whose speed drifts "
                 "affects both alike")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_flag("--verify", a.verify,
               "Require every transaction to end succeed (for a coordinator that started empty)");
  app.add_flag("--quiet", a.quiet, "No progress lines");
  app.add_option("--accounts", a.accounts, "Bank accounts used (one per client, cycling)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--participant-threads", a.participant_threads, "Threads of each participant")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  app.add_option("--participant-requests-per-connection", a.participant_requests_per_connection,
                 "The participants' HTTP ports close a connection after this many answers, so "
                 "that settled reconnects (0: they keep connections; gRPC ports always keep "
                 "them)")
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return std::nullopt;
}

// The coordinators' URLs: plain http:// on loopback, all with the same API path; nullopt
// otherwise.
std::optional<std::vector<Url>> CoordinatorUrls(const Args& a) {
  if (a.coordinators.empty()) return std::nullopt;
  std::vector<Url> urls;
  for (const std::string& coordinator : a.coordinators) {
    auto url = ParseUrl(coordinator);
    if (!url || url->tls || (url->host != "127.0.0.1" && url->host != "localhost")) {
      return std::nullopt;
    }
    if (!urls.empty() && url->path_and_query != urls[0].path_and_query) return std::nullopt;
    urls.push_back(*url);
  }
  return urls;
}

void PrintHeader(const Args& a, std::size_t coordinators) {
  std::printf(
      "settle-bench: %s, 2 %s, %s participants over %s, %d clients on %zu coordinator%s, %s%s\n",
      a.mode.c_str(), a.mode == "tcc" ? "branches" : "steps", a.participants.c_str(),
      a.protocol == "grpc" ? "gRPC" : "HTTP", a.clients, coordinators, coordinators == 1 ? "" : "s",
      a.count > 0 ? (std::to_string(a.count) + " transactions").c_str() : a.duration.c_str(),
      a.rate > 0 ? (", " + std::to_string(static_cast<long>(a.rate)) + " tx/s offered").c_str()
                 : "");
  std::fflush(stdout);
}

// The clients' side of a run: a workload per client, all coroutines on one I/O thread, and
// the phases they run. Each phase numbers its transactions from its own offset, so gids never
// repeat.
class Runner {
 public:
  // `grpc`: the participants' gRPC methods (null: over HTTP).
  Runner(const Args& a, async::IoThreads& io, net::Client& http,
         const settle::bench::Endpoints& endpoints, const std::vector<Url>& urls,
         const settle::bench::GrpcParticipants* grpc)
      : a_(a), io_(io) {
    const auto mode = a.mode == "tcc"        ? settle::bench::Mode::kTcc
                      : a.mode == "workflow" ? settle::bench::Mode::kWorkflow
                                             : settle::bench::Mode::kSaga;
    for (int c = 0; c < a.clients; ++c) {
      settle::bench::Endpoints mine = endpoints;
      mine.coordinator_port = urls[static_cast<std::size_t>(c) % urls.size()].port;
      workloads_.push_back(std::make_unique<settle::bench::Workload>(http, mine, mode, c, grpc));
    }
  }

  // Unmeasured load: direct (with --baseline) then through settled.
  void Warmup(std::chrono::milliseconds d, Tally& tally) {
    if (a_.baseline) tally.moved += Phase("warmup direct", false, d).summary.count;
    const LoadResult w = Phase("warmup", true, d);
    tally.sent += w.summary.count + w.summary.errors;
    tally.failed += w.summary.errors;
    tally.moved += w.summary.count;
  }

  // The measured phases: with a baseline, direct and through settled alternate in `rounds`
  // slices; each keeps one recorder over its slices. Prints both results and the ratio.
  void Measure(std::chrono::milliseconds duration, Tally& tally) {
    const int rounds = a_.baseline && a_.count == 0 ? a_.rounds : 1;
    const auto slice = std::chrono::milliseconds(duration.count() / rounds);
    LatencyRecorder direct_latencies;
    LatencyRecorder through_latencies;
    double direct_seconds = 0;
    double through_seconds = 0;
    CpuTally cpu;
    std::optional<settle::bench::ThreadCountSampler> threads;
    if (a_.settled_pid > 0) threads.emplace(a_.settled_pid);
    for (int round = 0; round < rounds; ++round) {
      if (a_.baseline) direct_seconds += Slice("direct", false, slice, direct_latencies);
      cpu.Begin(a_.settled_pid);
      through_seconds += Slice("settled", true, slice, through_latencies);
      cpu.End(a_.settled_pid);
    }
    const int most_threads = threads ? threads->Stop() : 0;
    const LoadResult direct{direct_latencies.Summarize(), direct_seconds};
    const LoadResult through{through_latencies.Summarize(), through_seconds};
    if (a_.baseline) {
      tally.moved += direct.summary.count;
      std::printf("%s\n", settle::bench::Describe("direct (no coordinator)", direct).c_str());
      std::fflush(stdout);
    }
    tally.sent += through.summary.count + through.summary.errors;
    tally.failed += through.summary.errors;
    tally.moved += through.summary.count;
    std::printf("%s\n", settle::bench::Describe(a_.mode + " through settled", through).c_str());
    if (a_.baseline && direct.throughput() > 0) {
      std::printf("ratio: %.1f%% of the direct baseline's throughput\n",
                  100.0 * through.throughput() / direct.throughput());
    }
    if (a_.settled_pid > 0) {
      PrintCosts(cpu, through.summary.count + through.summary.errors, most_threads);
    }
  }

 private:
  // CPU seconds of settled and of this process over the slices through settled.
  // settled's also by thread name (a thread that ends within a slice loses its share).
  struct CpuTally {
    double settled = 0;
    double self = 0;
    std::map<std::string, double> by_thread;
    bool ok = true;
    double settled_at = 0;
    double self_at = 0;
    std::map<std::string, double> by_thread_at;
    void Begin(int pid) {
      if (pid <= 0) return;
      const auto s = settle::bench::CpuSeconds(pid);
      const auto me = settle::bench::CpuSeconds(0);
      ok = ok && s && me;
      settled_at = s.value_or(0);
      self_at = me.value_or(0);
      by_thread_at = settle::bench::CpuSecondsByThreadName(pid);
    }
    void End(int pid) {
      if (pid <= 0) return;
      const auto s = settle::bench::CpuSeconds(pid);
      const auto me = settle::bench::CpuSeconds(0);
      ok = ok && s && me;
      settled += s.value_or(0) - settled_at;
      self += me.value_or(0) - self_at;
      for (const auto& [name, seconds] : settle::bench::CpuSecondsByThreadName(pid)) {
        by_thread[name] += seconds - by_thread_at[name];
      }
    }
  };

  // settled's CPU per transaction and its threads, and this process's CPU per transaction.
  void PrintCosts(const CpuTally& cpu, std::uint64_t transactions, int most_threads) {
    if (!cpu.ok || transactions == 0) {
      std::printf("settled: no CPU figures (process %d gone, or no transaction)\n", a_.settled_pid);
      return;
    }
    const double n = static_cast<double>(transactions);
    std::printf(
        "settled: %.0f us CPU per transaction (%.2f s over %llu transactions), "
        "threads %d at most while measuring, %d now: %s\n",
        cpu.settled * 1e6 / n, cpu.settled, static_cast<unsigned long long>(transactions),
        most_threads, settle::bench::ThreadCount(a_.settled_pid).value_or(0),
        settle::bench::DescribeThreadNames(settle::bench::ThreadNames(a_.settled_pid)).c_str());
    std::string split;
    for (const auto& [name, seconds] : cpu.by_thread) {
      if (seconds * 1e6 / n < 0.5) continue;
      char part[128];
      std::snprintf(part, sizeof part, "%s%s %.0f us", split.empty() ? "" : ", ", name.c_str(),
                    seconds * 1e6 / n);
      split += part;
    }
    std::printf("settled: CPU per transaction by thread: %s\n", split.c_str());
    std::printf(
        "settle-bench: %.0f us CPU per transaction (clients and participants, %d "
        "threads now)\n",
        cpu.self * 1e6 / n, settle::bench::ThreadCount(0).value_or(0));
  }

  settle::bench::Operation OperationFrom(bool through_coordinator) {
    const std::uint64_t base = offset_;
    offset_ += 1'000'000'000;
    return [this, through_coordinator, base](int client, std::uint64_t n) {
      settle::bench::Workload& w = *workloads_[static_cast<std::size_t>(client)];
      return through_coordinator ? w.ThroughCoordinator(base + n) : w.Direct(base + n);
    };
  }

  LoadResult Phase(const std::string& label, bool through_coordinator,
                   std::chrono::milliseconds d) {
    LoadPlan plan{a_.clients, d, 0, false, a_.rate};
    return settle::bench::RunLoad(io_.executor(), label, plan, OperationFrom(through_coordinator));
  }

  double Slice(const std::string& label, bool through_coordinator, std::chrono::milliseconds d,
               LatencyRecorder& recorder) {
    LoadPlan plan{a_.clients, d, a_.count, !a_.quiet, a_.rate};
    return settle::bench::RunLoadInto(io_.executor(), label, plan,
                                      OperationFrom(through_coordinator), recorder);
  }

  const Args& a_;
  async::IoThreads& io_;
  std::vector<std::unique_ptr<settle::bench::Workload>> workloads_;
  std::uint64_t offset_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (std::optional<int> exit_code = ParseArgs(argc, argv, a)) return *exit_code;
  const std::optional<std::vector<Url>> urls = CoordinatorUrls(a);
  auto duration = settle::ParseDuration(a.duration);
  auto warmup = settle::ParseDuration(a.warmup);
  if (!urls || !duration || !warmup) {
    std::fprintf(stderr,
                 "settle-bench: --coordinator must be http://127.0.0.1:PORT/api/... (the same "
                 "path for every instance), "
                 "--duration and --warmup durations such as 10s\n");
    return 2;
  }
  // Every client is a coroutine on this one thread, so that the load generator, which shares
  // the machine with what it measures, costs one thread however many clients it runs. They
  // share one HTTP client whose idle pool can hold a connection per client and server: a
  // client has one call in flight at a time, so it keeps one connection to each.
  async::IoThreads io(1, "bench-clients");
  auto http = net::Client::Create(
      net::ClientOptions{.max_idle_per_host = static_cast<std::size_t>(a.clients)});
  if (!http) {
    std::fprintf(stderr, "settle-bench: %s\n", http.status().ToString().c_str());
    return 2;
  }
  io.Start();
  std::string data_dir = (std::filesystem::temp_directory_path() / "settle-bench-XXXXXX").string();
  if (mkdtemp(data_dir.data()) == nullptr) return 2;
  const auto kind = a.participants == "bank" ? settle::bench::BenchParticipants::Kind::kBank
                                             : settle::bench::BenchParticipants::Kind::kEmpty;
  const bool grpc = a.protocol == "grpc";
  auto participants = settle::bench::BenchParticipants::Start(
      kind, data_dir, a.accounts,
      {.threads = a.participant_threads,
       .grpc = grpc,
       .requests_per_connection = a.participant_requests_per_connection});
  if (!participants) {
    std::fprintf(stderr, "settle-bench: %s\n", participants.status().ToString().c_str());
    return 2;
  }
  settle::bench::Endpoints endpoints;
  endpoints.coordinator_port = (*urls)[0].port;
  endpoints.api = (*urls)[0].path_and_query == "/" ? "/api/settle" : (*urls)[0].path_and_query;
  endpoints.participant_a_port = (*participants)->port_a();
  endpoints.participant_b_port = (*participants)->port_b();
  endpoints.accounts = a.accounts;
  endpoints.run_id = std::to_string(std::random_device{}());
  // With gRPC, one channel (one HTTP/2 connection) to each participant for the clients' own
  // calls, as settled keeps one per participant origin.
  std::unique_ptr<settle::bench::GrpcBranchClient> grpc_clients[2];
  settle::bench::GrpcParticipants grpc_participants;
  if (grpc) {
    grpc_participants.service = settle::bench::BenchParticipants::GrpcService(kind);
    grpc_participants.ports[0] = (*participants)->grpc_port_a();
    grpc_participants.ports[1] = (*participants)->grpc_port_b();
    for (int i = 0; i < 2; ++i) {
      grpc_clients[i] =
          std::make_unique<settle::bench::GrpcBranchClient>(grpc_participants.ports[i]);
      grpc_participants.clients[i] = grpc_clients[i].get();
    }
  }

  PrintHeader(a, urls->size());
  Tally tally;  // every transaction sent through settled, warmup included, for --verify
  {
    Runner runner(a, io, **http, endpoints, *urls, grpc ? &grpc_participants : nullptr);
    if (warmup->count() > 0) runner.Warmup(*warmup, tally);
    runner.Measure(*duration, tally);
    // The load is over: the clients' connections close before the participants stop.
    io.Stop();
  }
  http->reset();
  for (auto& client : grpc_clients) client.reset();
  const int exit_code = a.verify ? VerifyRun(kind, endpoints, a.accounts, tally) : 0;
  participants->reset();
  std::filesystem::remove_all(data_dir);
  return exit_code;
}
