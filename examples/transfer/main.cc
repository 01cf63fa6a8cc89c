// transfer: moves money from an account at one bank to an account at another through Settle,
// as a TCC (reserve at the source, then confirm both) or as a saga (debit, then credit; the
// debit is compensated if the credit fails). Prints the gid and the final status.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>

#include "settle/sdk/client.h"
#include "settle/sdk/saga.h"
#include "settle/sdk/tcc.h"

namespace {

struct Args {
  std::string coordinator = "http://127.0.0.1:36789/api/settle";
  std::string from_bank;
  std::string to_bank;
  std::string from;
  std::string to;
  long long amount = 0;
  std::string mode = "tcc";
};

// "http://host:port" alone (no path, or just "/") means the coordinator's canonical API prefix.
std::string ApiBase(const std::string& coordinator) {
  const std::size_t scheme = coordinator.find("://");
  const std::size_t path =
      scheme == std::string::npos ? std::string::npos : coordinator.find('/', scheme + 3);
  if (scheme != std::string::npos &&
      (path == std::string::npos || path + 1 == coordinator.size())) {
    return coordinator + (coordinator.back() == '/' ? "" : "/") + "api/settle";
  }
  return coordinator;
}

// A branch of `bank` named `name`: http://host:port/api/<name> for an HTTP bank,
// host:port/bank.Bank/<name> (or grpc://host:port/bank.Bank/<name>) for a bank serving its
// branches over gRPC (bank-participant --grpc-port).
std::string Branch(const std::string& bank, const std::string& name) {
  const bool http = bank.starts_with("http://") || bank.starts_with("https://");
  return bank + (http ? "/api/" : "/bank.Bank/") + name;
}

std::string Body(const std::string& account, long long amount) {
  return R"({"account_id":")" + account + R"(","amount":)" + std::to_string(amount) + "}";
}

settle::Result<settle::sdk::Outcome> RunTcc(settle::sdk::Client& client, const std::string& gid,
                                            const Args& a) {
  settle::sdk::TransOptions options;
  options.wait_result = true;
  return settle::sdk::RunTcc(client, gid, options, [&](settle::sdk::Tcc& tcc) {
    auto out = tcc.CallBranch(Body(a.from, a.amount), Branch(a.from_bank, "TransOutTry"),
                              Branch(a.from_bank, "TransOutConfirm"),
                              Branch(a.from_bank, "TransOutCancel"));
    if (!out) return out.status();
    auto in =
        tcc.CallBranch(Body(a.to, a.amount), Branch(a.to_bank, "TransInTry"),
                       Branch(a.to_bank, "TransInConfirm"), Branch(a.to_bank, "TransInCancel"));
    return in ? settle::Status::Ok() : in.status();
  });
}

settle::Result<settle::sdk::Outcome> RunSaga(settle::sdk::Client& client, const std::string& gid,
                                             const Args& a) {
  settle::sdk::Saga saga(client, gid);
  saga.Add(Branch(a.from_bank, "TransOut"), Branch(a.from_bank, "TransOutCompensate"),
           Body(a.from, a.amount))
      .Add(Branch(a.to_bank, "TransIn"), Branch(a.to_bank, "TransInCompensate"),
           Body(a.to, a.amount));
  saga.options().wait_result = true;
  return saga.Submit();
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  CLI::App app{"transfer: moves money between two bank-participants through Settle"};
  app.add_option("--coordinator", a.coordinator,
                 "Settle's URL: its API base, or http://host:port for the default base /api/settle")
      ->capture_default_str();
  app.add_option("--from-bank", a.from_bank, "URL of the bank paying, e.g. http://127.0.0.1:8081")
      ->required();
  app.add_option("--to-bank", a.to_bank,
                 "URL of the bank receiving; with --mode saga, either bank may be a gRPC one: "
                 "host:port of its --grpc-port")
      ->required();
  app.add_option("--from", a.from, "Account paying")->required();
  app.add_option("--to", a.to, "Account receiving")->required();
  app.add_option("--amount", a.amount, "Amount, a positive integer")
      ->required()
      ->check(CLI::PositiveNumber);
  app.add_option("--mode", a.mode, "tcc or saga")
      ->check(CLI::IsMember({"tcc", "saga"}))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  for (const std::string* bank : {&a.from_bank, &a.to_bank}) {
    if (a.mode == "tcc" && !bank->starts_with("http")) {
      // A TCC's Try is called by this client, which speaks HTTP to participants.
      return std::fprintf(stderr, "--mode tcc needs HTTP banks; a gRPC bank takes a saga\n"), 2;
    }
  }
  for (std::string* bank : {&a.from_bank, &a.to_bank}) {
    while (!bank->empty() && bank->back() == '/') bank->pop_back();
  }

  auto client = settle::sdk::Client::Create(ApiBase(a.coordinator));
  if (!client) return std::fprintf(stderr, "%s\n", client.status().ToString().c_str()), 2;
  auto gid = (*client)->NewGid();
  if (!gid) return std::fprintf(stderr, "%s\n", gid.status().ToString().c_str()), 2;
  std::printf("gid %s\n", gid->c_str());
  std::fflush(stdout);

  auto outcome = a.mode == "tcc" ? RunTcc(**client, *gid, a) : RunSaga(**client, *gid, a);
  if (!outcome) return std::fprintf(stderr, "%s\n", outcome.status().ToString().c_str()), 2;
  const std::string status(settle::ToString(outcome->status));
  std::printf("status %s%s%s\n", status.c_str(), outcome->reason.empty() ? "" : ": ",
              outcome->reason.c_str());
  return outcome->status == settle::GlobalStatus::kSucceed ? 0 : 1;
}
