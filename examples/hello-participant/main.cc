// hello-participant: the smallest Settle participant. It answers SUCCESS to every branch call
// (FAILURE, HTTP 409, for the paths given with --fail) and prints each call it receives, so
// you can watch a coordinator drive TCC and saga transactions. It keeps no state: a real
// participant also needs the barrier (see participant-sdk/).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <mutex>
#include <set>
#include <string>

#include "settle/core/stop_signals.h"
#include "settle/sdk/participant.h"

namespace {

std::string Param(const settle::sdk::HttpRequest& request, const std::string& name) {
  auto found = request.params.find(name);
  return found == request.params.end() ? "" : found->second;
}

}  // namespace

int main(int argc, char** argv) {
  std::string host = "127.0.0.1";
  int port = 8081;
  std::set<std::string> failing;
  CLI::App app{"hello-participant: answers SUCCESS to every Settle branch call and prints it"};
  app.add_option("--host", host, "Address to listen on")->capture_default_str();
  app.add_option("--port", port, "Port to listen on (0: any free port)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  app.add_option("--fail", failing, "A path to answer with FAILURE (409); repeatable");
  CLI11_PARSE(app, argc, argv);

  settle::BlockStopSignals();  // before any thread starts; awaited below

  std::mutex print_mu;
  auto answer = [&](const settle::sdk::HttpRequest& req) {
    const bool fail = failing.count(req.path) > 0;
    {
      std::lock_guard lock(print_mu);
      std::printf("%s %s gid=%s branch_id=%s op=%s body=%s -> %s\n", req.method.c_str(),
                  req.path.c_str(), Param(req, "gid").c_str(), Param(req, "branch_id").c_str(),
                  Param(req, "op").c_str(), req.body.c_str(), fail ? "FAILURE" : "SUCCESS");
      std::fflush(stdout);
    }
    return settle::sdk::HttpReply{
        fail ? 409 : 200, fail ? R"({"dtm_result":"FAILURE"})" : R"({"dtm_result":"SUCCESS"})"};
  };
  settle::sdk::Participant participant({.threads = 4, .io_threads = 1});
  participant.OnGet(".*", answer).OnPost(".*", answer);
  const settle::Result<int> bound = participant.Start(host, port);
  if (!bound) {
    std::fprintf(stderr, "cannot listen on %s:%d: %s\n", host.c_str(), port,
                 bound.status().message().c_str());
    return 1;
  }
  std::printf("hello-participant listening on http://%s:%d\n", host.c_str(), *bound);
  std::fflush(stdout);
  settle::WaitForStopSignal();
  participant.Stop();
  return 0;
}
