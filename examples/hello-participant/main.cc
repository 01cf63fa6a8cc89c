// hello-participant: the smallest Settle participant. It answers SUCCESS to every branch call
// (FAILURE, HTTP 409, for the paths given with --fail) and prints each call it receives, so
// you can watch a coordinator drive TCC and saga transactions. It keeps no state: a real
// participant also needs the barrier (see participant-sdk/).
#include <httplib.h>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include "settle/common/stop_signals.h"

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

  httplib::Server server;
  server.new_task_queue = [] { return new httplib::ThreadPool(16); };
  server.set_tcp_nodelay(true);
  std::mutex print_mu;
  auto answer = [&](const httplib::Request& req, httplib::Response& res) {
    const bool fail = failing.count(req.path) > 0;
    {
      std::lock_guard lock(print_mu);
      std::printf("%s %s gid=%s branch_id=%s op=%s body=%s -> %s\n", req.method.c_str(),
                  req.path.c_str(), req.get_param_value("gid").c_str(),
                  req.get_param_value("branch_id").c_str(), req.get_param_value("op").c_str(),
                  req.body.c_str(), fail ? "FAILURE" : "SUCCESS");
      std::fflush(stdout);
    }
    res.status = fail ? 409 : 200;
    res.set_content(fail ? R"({"dtm_result":"FAILURE"})" : R"({"dtm_result":"SUCCESS"})",
                    "application/json");
  };
  server.Get(".*", answer);
  server.Post(".*", answer);
  const int bound = port == 0 ? server.bind_to_any_port(host) : port;
  if (bound < 0 || (port != 0 && !server.bind_to_port(host, port))) {
    std::fprintf(stderr, "cannot listen on %s:%d\n", host.c_str(), port);
    return 1;
  }
  std::thread serving([&] { server.listen_after_bind(); });
  std::printf("hello-participant listening on http://%s:%d\n", host.c_str(), bound);
  std::fflush(stdout);
  settle::WaitForStopSignal();
  server.stop();
  serving.join();
  return 0;
}
