// xa-bank: a bank service whose accounts live in PostgreSQL, taking part in XA transfers
// through Settle (xa_bank.h). Run it twice, each with a database (or schema) of its own, and
// move money between them with xa-transfer. The server needs max_prepared_transactions > 0.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "settle/core/stop_signals.h"
#include "xa_bank.h"

int main(int argc, char** argv) {
  settle::xa_bank::XaBankOptions options;
  options.coordinator = "http://127.0.0.1:36789/api/settle";
  std::string host = "127.0.0.1";
  int port = 8081;
  std::vector<std::string> accounts;
  CLI::App app{"xa-bank: a PostgreSQL-backed bank taking part in Settle's XA transfers"};
  app.add_option("--port", port, "Port to listen on (0: any free port)")
      ->required()
      ->check(CLI::Range(0, 65535));
  app.add_option("--db", options.conninfo,
                 "The bank's PostgreSQL database, e.g. postgresql://bank@127.0.0.1/bank_a")
      ->required();
  app.add_option("--coordinator", options.coordinator,
                 "Settle's API base, where this bank registers its prepared branches")
      ->capture_default_str();
  app.add_option("--account", accounts,
                 "ID=BALANCE: an account created if missing (repeatable), e.g. --account A=100");
  app.add_option("--host", host, "Address to listen on")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  for (const std::string& account : accounts) {
    const std::size_t eq = account.find('=');
    try {
      std::size_t used = 0;
      const std::string balance = eq == std::string::npos ? "" : account.substr(eq + 1);
      options.accounts[account.substr(0, eq)] = std::stoll(balance, &used);
      if (used != balance.size()) throw std::invalid_argument(balance);
    } catch (const std::exception&) {
      return std::fprintf(stderr, "--account %s: expected ID=BALANCE\n", account.c_str()), 2;
    }
  }

  settle::BlockStopSignals();  // before any thread starts

  auto bank = settle::xa_bank::XaBank::Open(options);
  if (!bank) return std::fprintf(stderr, "%s\n", bank.status().ToString().c_str()), 1;
  auto bound = (*bank)->Start(host, port);
  if (!bound) return std::fprintf(stderr, "%s\n", bound.status().ToString().c_str()), 1;
  std::printf("xa-bank listening on http://%s:%d\n", host.c_str(), *bound);
  std::fflush(stdout);

  settle::WaitForStopSignal();
  (*bank)->Stop();
  return 0;
}
