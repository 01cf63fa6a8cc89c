// Starting a TCC transaction in a few dozen lines: each CallBranch registers a branch with the
// coordinator and calls its Try; RunTcc then submits, or aborts if anything failed.
// Usage: sdk-tcc-transfer COORDINATOR_API SERVICE_URL AMOUNT, e.g.
//   sdk-tcc-transfer http://127.0.0.1:36789/api/settle http://127.0.0.1:8081/api 30
#include <cstdio>
#include <string>

#include "settle/core/protocol.h"
#include "settle/sdk/client.h"
#include "settle/sdk/tcc.h"

int main(int argc, char** argv) {
  const bool help = argc > 1 && argv[1] == std::string("--help");
  if (help || argc < 4) {
    std::fprintf(help ? stdout : stderr, "usage: %s COORDINATOR_API SERVICE AMOUNT\n", argv[0]);
    return help ? 0 : 2;
  }
  const std::string service = argv[2];
  const std::string body = std::string(R"({"amount":)") + argv[3] + "}";
  auto client = settle::sdk::Client::Create(argv[1]);
  if (!client) return std::fprintf(stderr, "%s\n", client.status().ToString().c_str()), 2;
  auto gid = (*client)->NewGid();
  if (!gid) return std::fprintf(stderr, "%s\n", gid.status().ToString().c_str()), 1;

  settle::sdk::TransOptions options;
  options.wait_result = true;  // answer once every branch is confirmed (or cancelled)
  auto outcome = settle::sdk::RunTcc(**client, *gid, options, [&](settle::sdk::Tcc& tcc) {
    auto reserved = tcc.CallBranch(body, service + "/TransOutTry", service + "/TransOutConfirm",
                                   service + "/TransOutCancel");
    return reserved ? settle::Status::Ok() : reserved.status();  // an error aborts
  });
  if (!outcome) return std::fprintf(stderr, "%s\n", outcome.status().ToString().c_str()), 1;
  std::printf("gid %s: %s %s\n", gid->c_str(), std::string(ToString(outcome->status)).c_str(),
              outcome->reason.c_str());
  return outcome->status == settle::GlobalStatus::kSucceed ? 0 : 1;
}
