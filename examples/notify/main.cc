// notify: best-effort notification with a transactional message. "notify send" submits a
// message of one step with retry_limit; settled delivers it, retrying with backoff, until the
// receiver accepts it or retry_limit deliveries have failed: then the message ends failed, with
// the reason in /api/settle/query, and settled POSTs a transaction_gave_up alert to its
// --alert-webhook. "notify receive" is an unreliable receiver (--fail-first N) and also serves
// as that webhook's sink (/alerts).
//
//   notify receive --port 8084 --fail-first 2
//   settled --retry-interval 200ms --alert-webhook http://127.0.0.1:8084/alerts ...
//   notify send --coordinator http://127.0.0.1:36789/api/settle
//     --to http://127.0.0.1:8084/api/notify --text hello --retry-limit 5 --wait 30
//
// Exit codes: receive 0 on SIGTERM/SIGINT, 1 when it cannot start; send as sender.h says;
// 2 for bad arguments.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "receiver.h"
#include "sender.h"
#include "settle/core/stop_signals.h"

using namespace settle::notify;

int main(int argc, char** argv) {
  CLI::App app{"notify: best-effort notification, delivered with retries or given up"};
  app.require_subcommand(1);

  SendOptions send;
  int retry_interval = 0;
  int wait = 0;
  CLI::App* send_mode = app.add_subcommand("send", "Submit one notification");
  send_mode
      ->add_option("--coordinator", send.coordinator,
                   "settled's API base, e.g. http://127.0.0.1:36789/api/settle")
      ->required();
  send_mode->add_option("--to", send.to, "The receiver's URL")->required();
  send_mode->add_option("--text", send.text, "What to say")->required();
  send_mode->add_option("--gid", send.gid, "The message's gid (default: a new one)");
  send_mode->add_option("--retry-limit", send.retry_limit, "Deliveries before giving up")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  send_mode
      ->add_option("--retry-interval", retry_interval,
                   "Seconds before the first retry (default: settled's --retry-interval)")
      ->check(CLI::Range(1, 3600));
  send_mode->add_option("--wait", wait, "Seconds to watch for the outcome (0: do not wait)")
      ->check(CLI::Range(0, 3600))
      ->capture_default_str();

  int fail_first = 0;
  std::string host = "127.0.0.1";
  int port = 0;
  CLI::App* receive_mode = app.add_subcommand("receive", "Serve as an unreliable receiver");
  receive_mode->add_option("--port", port, "Port to listen on (0: any free port)")
      ->required()
      ->check(CLI::Range(0, 65535));
  receive_mode->add_option("--host", host, "Address to listen on")->capture_default_str();
  receive_mode
      ->add_option("--fail-first", fail_first,
                   "Refuse (503) the first N deliveries of each message")
      ->check(CLI::Range(0, 1'000'000))
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  if (*send_mode) {
    if (retry_interval > 0) send.retry_interval = std::chrono::seconds(retry_interval);
    send.wait = std::chrono::seconds(wait);
    return Send(send);
  }
  settle::BlockStopSignals();  // before any thread starts
  Receiver receiver(fail_first);
  auto bound = receiver.Start(host, port);
  if (!bound) return std::fprintf(stderr, "%s\n", bound.status().ToString().c_str()), 1;
  std::printf("notify receive listening on http://%s:%d\n", host.c_str(), *bound);
  std::fflush(stdout);
  settle::WaitForStopSignal();
  receiver.Stop();
  return 0;
}
