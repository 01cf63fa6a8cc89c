// settle-outage-bench: issue 21's outage at scale (docs/benchmarks.md, "Participant outage at
// scale"). It starts two settled processes of its own, each on a fresh temporary database with
// its log in a file: A, which gets N one-step sagas whose participant is down (a loopback port
// with nothing listening, so every call is refused), and B, which never sees the outage. Then:
//   1. it submits the N sagas to A and waits until A's circuit for the down host is open and
//      all N wait in its gate;
//   2. over a quiet --outage (no other load) it reads A's CPU time from /proc/PID/stat and the
//      growth of A's log file, in all and minute by minute;
//   3. it runs the same healthy load (two-step sagas against empty participants in this
//      process, at --rate) through A and through B, alternating --rounds slices of
//      --load / --rounds each, so that a drifting machine affects both alike, and records
//      each one's latency percentiles;
//   4. it starts a participant on the down port (answers SUCCESS after --participant-delay,
//      counting its calls and the most it handles at once) and waits until all N sagas are
//      finished: the recovery time, the achieved release rate and the participant's peak
//      calls in flight, which must stay within --host-max-in-flight.
// It prints a table and exits 1 when a sanity check fails (the N sagas were not all held, not
// all finished in time, the peak went above the cap, the healthy load had errors), 2 when it
// cannot run.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_participants.h"
#include "load_runner.h"
#include "settle/async/io_threads.h"
#include "settle/core/duration_text.h"
#include "settle/net/blocking_client.h"
#include "settle/net/client.h"
#include "settle/net/server.h"
#include "workload.h"

namespace {

namespace net = settle::net;
namespace async = settle::async;
namespace fs = std::filesystem;
namespace asio = settle::asio;
using settle::Status;
using settle::bench::LatencyRecorder;
using settle::bench::LoadPlan;
using Steady = std::chrono::steady_clock;

double SecondsSince(Steady::time_point t) {
  return std::chrono::duration<double>(Steady::now() - t).count();
}

struct Args {
  std::string settled;  // default: settled next to this program
  std::string settled_args;
  std::uint64_t sagas = 100'000;
  std::string outage = "60s";
  std::string load = "60s";
  double rate = 200;
  int clients = 16;
  int rounds = 6;
  int submit_clients = 64;
  int host_max_in_flight = 128;
  int release_rate = 500;
  std::string participant_delay = "5ms";
  std::string hold_timeout = "0s";
  std::string recovery_timeout = "0s";
  std::string work_dir;
  bool quiet = false;
};

std::optional<int> ParseArgs(int argc, char** argv, Args& a) {
  CLI::App app{
      "settle-outage-bench: settled's cost while N sagas wait for a participant that is down, "
      "the latency of healthy traffic meanwhile (against a second settled without the outage), "
      "and the paced recovery when the participant returns (docs/benchmarks.md)"};
  app.add_option("--settled", a.settled, "The settled binary (default: settled next to this one)");
  app.add_option("--settled-args", a.settled_args,
                 "More settled flags for both instances, one string (e.g. \"--circuit-probe-max "
                 "10s\")");
  app.add_option("--sagas", a.sagas, "One-step sagas submitted against the down participant")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{10'000'000}))
      ->capture_default_str();
  app.add_option("--outage", a.outage,
                 "How long the quiet outage is measured (reported per minute as well)")
      ->capture_default_str();
  app.add_option("--load", a.load, "The healthy load's time on each settled")
      ->capture_default_str();
  app.add_option("--rate", a.rate, "The healthy load: sagas started per second")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--clients", a.clients, "The healthy load's concurrent clients")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--rounds", a.rounds,
                 "Slices the healthy load alternates between the two settled processes")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_option("--submit-clients", a.submit_clients,
                 "Concurrent keep-alive connections that submit the N sagas")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--host-max-in-flight", a.host_max_in_flight,
                 "Passed to settled; the participant's peak calls in flight must stay within it")
      ->check(CLI::Range(1, 1'000'000))
      ->capture_default_str();
  app.add_option("--release-rate", a.release_rate,
                 "Passed to settled as --circuit-release-rate; the achieved rate is compared "
                 "with it")
      ->check(CLI::Range(1, 1'000'000))
      ->capture_default_str();
  app.add_option("--participant-delay", a.participant_delay,
                 "How long the returning participant takes to answer each call")
      ->capture_default_str();
  app.add_option("--hold-timeout", a.hold_timeout,
                 "Bound on waiting for all N to be held (0s: 60 s + 1 ms per saga)")
      ->capture_default_str();
  app.add_option("--recovery-timeout", a.recovery_timeout,
                 "Bound on waiting for all N to finish once the participant is back (0s: 120 s "
                 "+ twice N at --release-rate)")
      ->capture_default_str();
  app.add_option("--work-dir", a.work_dir,
                 "Keep the databases and logs here (default: a temporary directory, removed)");
  app.add_flag("--quiet", a.quiet, "No progress lines");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return std::nullopt;
}

// ---- settled as a child process ----------------------------------------------------------

class Settled {
 public:
  ~Settled() { Stop(); }

  // Starts `binary` with `args` plus --port 0 and a store in `dir`, its output in dir/settled.log;
  // waits (at most 20 s) for it to say where it listens.
  Status Start(const std::string& binary, std::vector<std::string> args, const fs::path& dir) {
    log_ = dir / "settled.log";
    args.insert(args.begin(), {binary, "--port", "0", "--store", (dir / "settle.db").string()});
    const int fd = ::open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return Status::Unavailable("cannot create " + log_.string());
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ < 0) return Status::Unavailable("fork failed");
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // never outlive the benchmark
      if (::getppid() != parent) ::_exit(1);
      const int null = ::open("/dev/null", O_RDONLY);
      ::dup2(null, 0);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      std::vector<char*> argv;
      for (std::string& arg : args) argv.push_back(arg.data());
      argv.push_back(nullptr);
      ::execv(binary.c_str(), argv.data());
      ::_exit(127);
    }
    ::close(fd);
    const std::string marker = "listening on http://";
    for (int i = 0; i < 400; ++i) {
      std::ifstream in(log_);
      std::string line;
      while (std::getline(in, line)) {
        const auto at = line.find(marker);
        if (at == std::string::npos) continue;
        const auto colon = line.find(':', at + marker.size());
        if (colon == std::string::npos) continue;
        port_ = std::atoi(line.c_str() + colon + 1);
        if (port_ > 0) return Status::Ok();
      }
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return Status::Unavailable(binary + " exited at start; see " + log_.string());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return Status::Unavailable(binary + " did not say where it listens within 20 s");
  }

  // SIGTERM, then SIGKILL after 30 s.
  void Stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 300; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  // user + system CPU seconds so far, from /proc/PID/stat (fields 14 and 15).
  double CpuSeconds() const {
    std::ifstream in("/proc/" + std::to_string(pid_) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = stat.rfind(')');
    if (close == std::string::npos) return 0;
    std::istringstream fields(stat.substr(close + 2));  // from field 3, the state
    std::vector<std::string> f;
    for (std::string s; fields >> s;) f.push_back(s);
    if (f.size() < 13) return 0;
    const double ticks = std::stod(f[11]) + std::stod(f[12]);
    return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
  }

  std::uint64_t LogBytes() const {
    std::error_code ec;
    const auto size = fs::file_size(log_, ec);
    return ec ? 0 : size;
  }

  int port() const { return port_; }
  const fs::path& log() const { return log_; }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  fs::path log_;
};

// Spans of a settled's CPU time and log growth, added up over slices.
struct Usage {
  double cpu_seconds = 0;
  std::uint64_t log_bytes = 0;
  double seconds = 0;
  double CpuPercent() const { return seconds > 0 ? 100 * cpu_seconds / seconds : 0; }
  double LogKbPerMinute() const {
    return seconds > 0 ? static_cast<double>(log_bytes) / 1024 * 60 / seconds : 0;
  }
};

class UsageSpan {
 public:
  explicit UsageSpan(const Settled& s)
      : s_(s), cpu_(s.CpuSeconds()), log_(s.LogBytes()), begin_(Steady::now()) {}
  void AddTo(Usage& u) const {
    u.cpu_seconds += s_.CpuSeconds() - cpu_;
    u.log_bytes += s_.LogBytes() - log_;
    u.seconds += SecondsSince(begin_);
  }

 private:
  const Settled& s_;
  double cpu_;
  std::uint64_t log_;
  Steady::time_point begin_;
};

// ---- metrics -------------------------------------------------------------------------------

// The sum of the samples of `name` whose labels contain `label` (Prometheus text), or -1 if
// there is none.
double Sample(const std::string& text, const std::string& name, const std::string& label = "") {
  double sum = 0;
  bool found = false;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.compare(0, name.size(), name) != 0) continue;
    if (line.size() <= name.size() || (line[name.size()] != '{' && line[name.size()] != ' ')) {
      continue;
    }
    const auto space = line.rfind(' ');
    if (!label.empty() && line.substr(0, space).find(label) == std::string::npos) continue;
    sum += std::atof(line.c_str() + space + 1);
    found = true;
  }
  return found ? sum : -1;
}

struct Metrics {
  bool ok = false;
  double unfinished = 0;  // sagas not yet succeed or failed
  double circuit_state = -1;
  double waiting = 0;
  double in_flight = 0;
  double held_at_cap = 0;
  double succeed = 0;
  double failed = 0;
};

Metrics ReadMetrics(net::BlockingClient& http, int port, const std::string& down_host) {
  net::ClientRequest request;
  request.url.host = "127.0.0.1";
  request.url.port = port;
  request.url.path_and_query = "/api/metrics";
  request.timeout = std::chrono::seconds(10);
  Metrics m;
  const settle::Result<net::ClientAnswer> answer = http.Send(std::move(request));
  if (!answer || answer->status != 200) return m;
  const std::string& t = answer->body;
  const std::string host = "host=\"" + down_host + "\"";
  m.ok = true;
  m.unfinished = Sample(t, "settle_transactions_unfinished", "type=\"saga\"");
  m.circuit_state = Sample(t, "settle_circuit_state", host);
  m.waiting = std::max(0.0, Sample(t, "settle_circuit_waiting", host));
  m.in_flight = std::max(0.0, Sample(t, "settle_host_calls_in_flight", host));
  m.held_at_cap = std::max(0.0, Sample(t, "settle_host_held_at_cap_total", host));
  m.succeed = std::max(
      0.0, Sample(t, "settle_transactions_finished_total", "type=\"saga\",status=\"succeed\""));
  m.failed = std::max(
      0.0, Sample(t, "settle_transactions_finished_total", "type=\"saga\",status=\"failed\""));
  return m;
}

// ---- the down participant, once it returns -------------------------------------------------

struct Counters {
  std::atomic<int> in_flight{0};
  std::atomic<int> peak{0};
  std::atomic<std::uint64_t> calls{0};
  std::atomic<std::int64_t> first_call_ns{0};  // steady clock
  std::atomic<std::int64_t> last_call_ns{0};
  std::int64_t origin_ns = 0;  // when the participant came back
  // Calls begun in each second since origin_ns (the first hour).
  std::array<std::atomic<std::uint32_t>, 3600> per_second{};
};

std::int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Steady::now().time_since_epoch())
      .count();
}

asio::awaitable<net::Response> AnswerLater(Counters* c, settle::Duration delay) {
  const std::int64_t now = NowNs();
  std::int64_t none = 0;
  c->first_call_ns.compare_exchange_strong(none, now);
  c->calls.fetch_add(1);
  if (const std::int64_t second = (now - c->origin_ns) / 1'000'000'000;
      second >= 0 && second < static_cast<std::int64_t>(c->per_second.size())) {
    c->per_second[static_cast<std::size_t>(second)].fetch_add(1);
  }
  const int mine = c->in_flight.fetch_add(1) + 1;
  int peak = c->peak.load();
  while (mine > peak && !c->peak.compare_exchange_weak(peak, mine)) {
  }
  if (delay.count() > 0) {
    asio::steady_timer timer(co_await asio::this_coro::executor, delay);
    boost::system::error_code ignored;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
  }
  c->in_flight.fetch_sub(1);
  c->last_call_ns.store(NowNs());
  net::Response response;
  response.body = R"({"dtm_result":"SUCCESS"})";
  co_return response;
}

// Binds a loopback port and lets it go: nothing listens there until the participant returns.
int ReserveDownPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

// ---- the submit of the N sagas -------------------------------------------------------------

asio::awaitable<Status> PostSubmit(net::Client& http, net::ClientRequest request) {
  asio::awaitable<settle::Result<net::ClientAnswer>> sending = http.Send(std::move(request));
  settle::Result<net::ClientAnswer> answer = co_await std::move(sending);
  if (!answer) co_return answer.status();
  if (answer->status != 200) {
    co_return Status::Unavailable("submit: HTTP " + std::to_string(answer->status) + " " +
                                  answer->body.substr(0, 200));
  }
  co_return Status::Ok();
}

std::vector<std::string> SplitWords(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

std::string Ms(double seconds) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f ms", seconds);
  return b;
}

const char* Met(bool ok) { return ok ? "met" : "NOT met"; }

void Fail(bool& ok, const std::string& what) {
  std::printf("sanity check failed: %s\n", what.c_str());
  ok = false;
}

// ---- the phases -----------------------------------------------------------------------------

// What every phase shares: the arguments, the two settled processes (A gets the outage, B is
// the baseline of the healthy load), the down participant's address and the clients.
struct Bench {
  const Args& a;
  Settled& outage_settled;
  Settled& baseline_settled;
  int down_port = 0;
  std::string down_host;
  std::string run_id;
  fs::path work;
  net::BlockingClient& blocking;
  net::Client& http;
  async::IoThreads& io;
  bool ok = true;  // every sanity check passed

  void Fail(const std::string& what) { ::Fail(ok, what); }
};

// Phase 1: the N sagas submitted to A without wait_result, until the circuit is open and every
// one of them waits in the gate.
struct Held {
  settle::bench::LoadResult submitted;
  double submit_seconds = 0;
  double hold_seconds = 0;  // from the first submit until all were held
};

Held SubmitAndHold(Bench& b, settle::Duration hold_timeout) {
  const std::string step = R"("steps":[{"action":")" + b.down_host +
                           R"(/api/TransOut","compensate":")" + b.down_host +
                           R"(/api/TransOutCompensate"}],"payloads":["{\"amount\":1}"]})";
  Held held;
  const Steady::time_point submit_begin = Steady::now();
  held.submitted = settle::bench::RunLoad(
      b.io.executor(), "submit", LoadPlan{b.a.submit_clients, {}, b.a.sagas, !b.a.quiet, 0},
      [&](int, std::uint64_t n) {
        net::ClientRequest request;
        request.method = "POST";
        request.url.host = "127.0.0.1";
        request.url.port = b.outage_settled.port();
        request.url.path_and_query = "/api/settle/submit";
        request.body = R"({"gid":"outage-)" + b.run_id + "-" + std::to_string(n) +
                       R"(","trans_type":"saga",)" + step;
        request.timeout = std::chrono::seconds(60);
        return PostSubmit(b.http, std::move(request));
      });
  held.submit_seconds = SecondsSince(submit_begin);
  std::printf("%s\n", settle::bench::Describe("submitted (down host)", held.submitted).c_str());
  if (held.submitted.summary.errors > 0) b.Fail("some submits failed");

  Metrics m;
  const Steady::time_point hold_begin = Steady::now();
  for (;;) {
    m = ReadMetrics(b.blocking, b.outage_settled.port(), b.down_host);
    const double expected = static_cast<double>(held.submitted.summary.count);
    if (m.ok && m.circuit_state >= 1 && m.unfinished == expected && m.waiting >= expected - 1) {
      break;
    }
    if (Steady::now() - hold_begin > hold_timeout) {
      b.Fail("not all held within " + settle::FormatDuration(hold_timeout));
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  held.hold_seconds = SecondsSince(submit_begin);
  std::printf(
      "held: circuit state %.0f, %.0f waiting, %.0f unfinished, %.1f s after the first "
      "submit\n",
      m.circuit_state, m.waiting, m.unfinished, held.hold_seconds);
  std::fflush(stdout);
  return held;
}

// Phase 2: the quiet outage, nothing but the N held sagas, measured minute by minute.
struct Quiet {
  Usage usage;
  double worst_cpu_percent = 0;  // of its minutes
  double worst_log_kb = 0;       // per minute
  Metrics after;
};

Quiet QuietOutage(Bench& b, settle::Duration outage) {
  Quiet quiet;
  const UsageSpan span(b.outage_settled);
  const Steady::time_point end = Steady::now() + outage;
  for (int minute = 1; Steady::now() < end; ++minute) {
    const UsageSpan window(b.outage_settled);
    std::this_thread::sleep_until(std::min(end, Steady::now() + std::chrono::minutes(1)));
    Usage u;
    window.AddTo(u);
    std::printf("  quiet outage, minute %d: %.2f%% of a core, %.2f KB of log per minute\n", minute,
                u.CpuPercent(), u.LogKbPerMinute());
    std::fflush(stdout);
    quiet.worst_cpu_percent = std::max(quiet.worst_cpu_percent, u.CpuPercent());
    quiet.worst_log_kb = std::max(quiet.worst_log_kb, u.LogKbPerMinute());
  }
  span.AddTo(quiet.usage);
  quiet.after = ReadMetrics(b.blocking, b.outage_settled.port(), b.down_host);
  std::printf("quiet outage: %.2f%% of a core, %.2f KB of log per minute, over %.1f s\n",
              quiet.usage.CpuPercent(), quiet.usage.LogKbPerMinute(), quiet.usage.seconds);
  std::fflush(stdout);
  return quiet;
}

// Phase 3: the healthy load, in slices alternating between A (outage pending) and B (none).
struct Healthy {
  settle::bench::LoadResult a;  // outage pending
  settle::bench::LoadResult b;  // no outage
  Usage loaded_a, loaded_b;
};

settle::Result<Healthy> HealthyLoad(Bench& b, settle::Duration load) {
  auto participants = settle::bench::BenchParticipants::Start(
      settle::bench::BenchParticipants::Kind::kEmpty, (b.work / "participants").string(), 16,
      {.threads = 16});
  if (!participants) return participants.status();
  LatencyRecorder with_outage, without_outage;
  Healthy healthy;
  double seconds_a = 0, seconds_b = 0;
  std::vector<std::unique_ptr<settle::bench::Workload>> workloads[2];
  for (int which = 0; which < 2; ++which) {
    settle::bench::Endpoints e;
    e.coordinator_port = which == 0 ? b.outage_settled.port() : b.baseline_settled.port();
    e.participant_a_port = (*participants)->port_a();
    e.participant_b_port = (*participants)->port_b();
    e.run_id = b.run_id + (which == 0 ? "a" : "b");
    for (int c = 0; c < b.a.clients; ++c) {
      workloads[which].push_back(
          std::make_unique<settle::bench::Workload>(b.http, e, settle::bench::Mode::kSaga, c));
    }
  }
  const auto slice = std::chrono::milliseconds(load.count() / b.a.rounds);
  std::uint64_t offset[2] = {0, 0};
  for (int round = 0; round < b.a.rounds; ++round) {
    for (int k = 0; k < 2; ++k) {
      // B (no outage) first in even rounds, A (outage pending) first in odd ones.
      const bool outage_side = (round + k) % 2 == 1;
      auto& mine = workloads[outage_side ? 0 : 1];
      std::uint64_t& base = offset[outage_side ? 0 : 1];
      const std::uint64_t first = base;
      const settle::bench::Operation op = [&mine, first](int client, std::uint64_t n) {
        return mine[static_cast<std::size_t>(client)]->ThroughCoordinator(first + n);
      };
      const Settled& measured = outage_side ? b.outage_settled : b.baseline_settled;
      const char* label = outage_side ? "healthy, outage pending" : "healthy, no outage";
      const UsageSpan span(measured);
      LatencyRecorder this_slice;
      const double seconds = settle::bench::RunLoadInto(
          b.io.executor(), label, LoadPlan{b.a.clients, slice, 0, !b.a.quiet, b.a.rate}, op,
          this_slice);
      span.AddTo(outage_side ? healthy.loaded_a : healthy.loaded_b);
      (outage_side ? with_outage : without_outage).Add(this_slice);
      const LatencyRecorder::Summary sum = this_slice.Summarize();
      std::printf("  round %d, %s: p50 %.2f ms, p99 %.2f ms, max %.2f ms, errors %llu\n", round + 1,
                  label, sum.p50_ms, sum.p99_ms, sum.max_ms,
                  static_cast<unsigned long long>(sum.errors));
      std::fflush(stdout);
      (outage_side ? seconds_a : seconds_b) += seconds;
      base += 1'000'000'000;
    }
  }
  healthy.a = {with_outage.Summarize(), seconds_a};
  healthy.b = {without_outage.Summarize(), seconds_b};
  std::printf("%s\n%s\n", settle::bench::Describe("healthy, no outage (B)", healthy.b).c_str(),
              settle::bench::Describe("healthy, outage pending (A)", healthy.a).c_str());
  std::fflush(stdout);
  if (healthy.a.summary.errors + healthy.b.summary.errors > 0) {
    b.Fail("the healthy load had errors");
  }
  return healthy;
}

// Phase 4: the participant returns; how long until all N are finished, and how many calls at
// once it sees.
struct Recovery {
  bool finished = false;
  Metrics last;                    // settled's metrics at the end
  double seconds = 0;              // from the return until all finished (or the timeout)
  double first_call = -1;          // seconds from the return to its first call (the probe)
  double closed_after = -1;        // seconds from the return to a poll with the circuit closed
  double release_seconds = 0;      // first to last call
  double most_in_flight_seen = 0;  // settled's own gauge, polled
  int peak = 0;                    // calls at once, as the participant saw them
  std::uint64_t calls = 0;
  std::uint32_t busiest = 0;  // calls in its busiest second
  std::string per_ten;        // calls of every 10 s
};

settle::Result<Recovery> ParticipantReturns(Bench& b, settle::Duration answer_delay,
                                            settle::Duration recovery_timeout) {
  Counters counters;
  async::IoThreads participant_io(2, "down-participant");
  net::Server participant(
      participant_io.context(), net::ServerOptions{},
      [&counters, answer_delay](net::Request&) { return AnswerLater(&counters, answer_delay); });
  participant_io.Start();
  const Steady::time_point back_at = Steady::now();
  counters.origin_ns = NowNs();
  if (auto started = participant.Start("127.0.0.1", b.down_port); !started) {
    return Status::Unavailable("the participant cannot listen on " + std::to_string(b.down_port) +
                               ": " + started.status().ToString());
  }
  Recovery r;
  for (;;) {
    r.last = ReadMetrics(b.blocking, b.outage_settled.port(), b.down_host);
    if (r.last.ok) {
      r.most_in_flight_seen = std::max(r.most_in_flight_seen, r.last.in_flight);
      if (r.closed_after < 0 && r.last.circuit_state == 0) r.closed_after = SecondsSince(back_at);
      if (r.last.unfinished == 0) {
        r.finished = true;
        break;
      }
    }
    if (Steady::now() - back_at > recovery_timeout) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  r.seconds = SecondsSince(back_at);
  if (counters.first_call_ns.load() != 0) {
    r.first_call = static_cast<double>(counters.first_call_ns.load() -
                                       std::chrono::duration_cast<std::chrono::nanoseconds>(
                                           back_at.time_since_epoch())
                                           .count()) /
                   1e9;
  }
  r.release_seconds =
      static_cast<double>(counters.last_call_ns.load() - counters.first_call_ns.load()) / 1e9;
  participant.Stop();
  participant_io.Stop();
  r.peak = counters.peak.load();
  r.calls = counters.calls.load();
  r.per_ten = "participant calls per 10 s since it came back:";
  const auto last = static_cast<std::size_t>(
      std::min<double>(r.seconds + 1, static_cast<double>(counters.per_second.size())));
  std::uint64_t ten = 0;
  for (std::size_t i = 0; i < last; ++i) {
    const std::uint32_t calls = counters.per_second[i].load();
    r.busiest = std::max(r.busiest, calls);
    ten += calls;
    if (i % 10 == 9 || i + 1 == last) {
      r.per_ten += " " + std::to_string(ten);
      ten = 0;
    }
  }
  std::printf("%s\n", r.per_ten.c_str());
  return r;
}

// The table of docs/benchmarks.md, and its targets.
void PrintTable(const Bench& b, const Held& held, const Quiet& quiet, const Healthy& healthy,
                const Recovery& r) {
  const Args& a = b.a;
  const auto n = static_cast<double>(held.submitted.summary.count);
  const double achieved = r.release_seconds > 0 ? n / r.release_seconds : 0;
  // The gate lets a tenth of a second's worth through at once on top of the rate.
  const bool rate_met = achieved >= 0.9 * a.release_rate && achieved <= 1.05 * a.release_rate &&
                        r.busiest <= 1.1 * a.release_rate + 1;
  const double ratio =
      healthy.b.summary.p99_ms > 0 ? healthy.a.summary.p99_ms / healthy.b.summary.p99_ms : 0;
  std::printf("\n| measure | value | target |\n|---|---|---|\n");
  std::printf(
      "| sagas held for the down host | %.0f (submitted in %.1f s, all held %.1f s after "
      "the first submit) | |\n",
      n, held.submit_seconds, held.hold_seconds);
  std::printf(
      "| settled CPU over the quiet outage (%.0f s) | %.2f%% of a core | under 5%%: %s "
      "|\n",
      quiet.usage.seconds, quiet.usage.CpuPercent(), Met(quiet.usage.CpuPercent() < 5));
  std::printf("| settled log over the quiet outage | %.2f KB/min | under 10 KB/min: %s |\n",
              quiet.usage.LogKbPerMinute(), Met(quiet.usage.LogKbPerMinute() < 10));
  std::printf(
      "| the quiet outage's worst minute | %.2f%% of a core; %.2f KB of log per minute "
      "| under 5%% and 10 KB: %s |\n",
      quiet.worst_cpu_percent, quiet.worst_log_kb,
      Met(quiet.worst_cpu_percent < 5 && quiet.worst_log_kb < 10));
  std::printf("| healthy p50 / p99, no outage (B) | %s / %s | |\n",
              Ms(healthy.b.summary.p50_ms).c_str(), Ms(healthy.b.summary.p99_ms).c_str());
  std::printf("| healthy p50 / p99, outage pending (A) | %s / %s | |\n",
              Ms(healthy.a.summary.p50_ms).c_str(), Ms(healthy.a.summary.p99_ms).c_str());
  std::printf("| healthy p99 ratio, outage / none | %.2f | at most 1.25: %s |\n", ratio,
              Met(ratio > 0 && ratio <= 1.25));
  std::printf("| settled CPU under the healthy load, A / B | %.1f%% / %.1f%% of a core | |\n",
              healthy.loaded_a.CpuPercent(), healthy.loaded_b.CpuPercent());
  std::printf("| settled log under the healthy load, A / B | %.1f / %.1f KB/min | |\n",
              healthy.loaded_a.LogKbPerMinute(), healthy.loaded_b.LogKbPerMinute());
  std::printf("| participant back to its first call (the probe) | %.1f s | |\n", r.first_call);
  std::printf("| participant back to circuit closed (metrics, 200 ms polls) | %.1f s | |\n",
              r.closed_after);
  std::printf("| participant back to all %.0f finished | %.1f s | |\n", n, r.seconds);
  std::printf(
      "| release: first to last call | %.1f s, %.0f sagas/s of %d configured; busiest "
      "second %u calls | at the configured rate: %s |\n",
      r.release_seconds, achieved, a.release_rate, r.busiest, Met(rate_met));
  std::printf(
      "| participant calls / peak in flight | %llu / %d (cap %d; settled's gauge "
      "peaked at %.0f) | never above the cap: %s |\n",
      static_cast<unsigned long long>(r.calls), r.peak, a.host_max_in_flight, r.most_in_flight_seen,
      Met(r.peak <= a.host_max_in_flight));
  std::printf("| quiet outage metrics after | circuit %.0f, %.0f waiting | |\n",
              quiet.after.circuit_state, quiet.after.waiting);
}

// The arguments' durations, the timeouts' 0s worked out from --sagas and --release-rate.
struct Durations {
  settle::Duration outage;
  settle::Duration load;
  settle::Duration participant_delay;
  settle::Duration hold_timeout;
  settle::Duration recovery_timeout;
};

// nullopt, said on stderr, when one is not a duration or the outage or the load is not
// positive.
std::optional<Durations> ParseDurations(const Args& a) {
  const auto outage = settle::ParseDuration(a.outage);
  const auto load = settle::ParseDuration(a.load);
  const auto delay = settle::ParseDuration(a.participant_delay);
  auto hold_timeout = settle::ParseDuration(a.hold_timeout);
  auto recovery_timeout = settle::ParseDuration(a.recovery_timeout);
  if (!outage || !load || !delay || !hold_timeout || !recovery_timeout || outage->count() <= 0 ||
      load->count() <= 0) {
    std::fprintf(stderr, "settle-outage-bench: durations are such as 60s, 5ms\n");
    return std::nullopt;
  }
  if (hold_timeout->count() == 0) {
    *hold_timeout = std::chrono::seconds(60) + std::chrono::milliseconds(a.sagas);
  }
  if (recovery_timeout->count() == 0) {
    *recovery_timeout =
        std::chrono::seconds(120) + std::chrono::milliseconds(2000 * a.sagas / a.release_rate);
  }
  return Durations{*outage, *load, *delay, *hold_timeout, *recovery_timeout};
}

// Where the databases, the logs and the participants' files go: --work-dir, made if need be,
// or else a new temporary directory; nullopt when that cannot be made.
std::optional<fs::path> MakeWorkDir(const Args& a) {
  if (!a.work_dir.empty()) {
    fs::create_directories(a.work_dir);
    return fs::path(a.work_dir);
  }
  std::string tmpl = (fs::temp_directory_path() / "settle-outage-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) return std::nullopt;
  return fs::path(tmpl);
}

// Both settled processes, each in its directory under `work`: A gets the outage, B is the
// baseline of the healthy load.
Status StartSettled(const Args& a, const fs::path& work, Settled& outage_settled,
                    Settled& baseline_settled) {
  std::vector<std::string> flags = SplitWords(a.settled_args);
  // Two instances side by side: neither serves gRPC (the default port would be taken twice).
  flags.insert(flags.end(),
               {"--host-max-in-flight", std::to_string(a.host_max_in_flight),
                "--circuit-release-rate", std::to_string(a.release_rate), "--grpc-port", "0"});
  for (auto [s, dir] : {std::pair{&outage_settled, "outage"}, {&baseline_settled, "baseline"}}) {
    if (Status st = s->Start(a.settled, flags, work / dir); !st.ok()) return st;
  }
  return Status::Ok();
}

// The run's first line: what is measured, against which settled and with what load.
void PrintPlan(const Args& a, const std::string& down_host) {
  std::string flag_text = a.settled_args.empty() ? "" : " " + a.settled_args;
  std::printf(
      "settle-outage-bench: %llu one-step sagas against %s (down), settled %s --host-max-in-"
      "flight %d --circuit-release-rate %d%s; healthy load %.0f sagas/s (%d clients), %s on "
      "each settled in %d alternating slices\n",
      static_cast<unsigned long long>(a.sagas), down_host.c_str(), a.settled.c_str(),
      a.host_max_in_flight, a.release_rate, flag_text.c_str(), a.rate, a.clients, a.load.c_str(),
      a.rounds);
  std::fflush(stdout);
}

// The recovery's sanity checks: all N finished in time, none failed, and the participant never
// saw more calls at once than the cap.
void CheckRecovery(Bench& b, const Recovery& r, settle::Duration recovery_timeout) {
  if (!r.finished) {
    b.Fail(std::to_string(static_cast<long long>(r.last.unfinished)) + " sagas unfinished " +
           settle::FormatDuration(recovery_timeout) + " after the participant returned");
  }
  if (r.peak > b.a.host_max_in_flight) {
    b.Fail("the participant saw " + std::to_string(r.peak) + " calls at once, above the cap " +
           std::to_string(b.a.host_max_in_flight));
  }
  if (r.last.failed > 0) b.Fail("some sagas ended failed");
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (std::optional<int> exit_code = ParseArgs(argc, argv, a)) return *exit_code;
  const std::optional<Durations> d = ParseDurations(a);
  if (!d) return 2;
  if (a.settled.empty()) {
    a.settled = (fs::read_symlink("/proc/self/exe").parent_path() / "settled").string();
  }
  const bool own_dir = a.work_dir.empty();
  const std::optional<fs::path> work = MakeWorkDir(a);
  if (!work) return 2;
  struct Cleanup {
    fs::path dir;
    bool remove;
    ~Cleanup() {
      std::error_code ec;
      if (remove) fs::remove_all(dir, ec);
    }
  } cleanup{*work, own_dir};
  fs::create_directories(*work / "outage");
  fs::create_directories(*work / "baseline");
  fs::create_directories(*work / "participants");

  Settled outage_settled, baseline_settled;
  if (Status st = StartSettled(a, *work, outage_settled, baseline_settled); !st.ok()) {
    std::fprintf(stderr, "settle-outage-bench: %s\n", st.ToString().c_str());
    return 2;
  }
  const int down_port = ReserveDownPort();
  if (down_port <= 0) return 2;
  const std::string down_host = "http://127.0.0.1:" + std::to_string(down_port);
  PrintPlan(a, down_host);

  auto blocking = net::BlockingClient::Create();
  async::IoThreads io(1, "outage-clients");
  auto http = net::Client::Create(net::ClientOptions{
      .max_idle_per_host = static_cast<std::size_t>(std::max(a.submit_clients, a.clients))});
  if (!blocking || !http) return 2;
  io.Start();
  Bench bench{a,         outage_settled, baseline_settled,
              down_port, down_host,      std::to_string(std::random_device{}()),
              *work,     **blocking,     **http,
              io};

  const Held held = SubmitAndHold(bench, d->hold_timeout);
  const Quiet quiet = QuietOutage(bench, d->outage);
  const settle::Result<Healthy> healthy = HealthyLoad(bench, d->load);
  if (!healthy) {
    std::fprintf(stderr, "settle-outage-bench: %s\n", healthy.status().ToString().c_str());
    return 2;
  }
  const settle::Result<Recovery> recovery =
      ParticipantReturns(bench, d->participant_delay, d->recovery_timeout);
  if (!recovery) {
    std::fprintf(stderr, "settle-outage-bench: %s\n", recovery.status().ToString().c_str());
    return 2;
  }
  io.Stop();
  http->reset();
  CheckRecovery(bench, *recovery, d->recovery_timeout);

  PrintTable(bench, held, quiet, *healthy, *recovery);
  if (!own_dir) {
    std::printf("logs: %s, %s\n", outage_settled.log().c_str(), baseline_settled.log().c_str());
  }
  std::printf("%s\n", bench.ok ? "sanity: all finished, peak within the cap" : "sanity: FAILED");
  outage_settled.Stop();
  baseline_settled.Stop();
  return bench.ok ? 0 : 1;
}
