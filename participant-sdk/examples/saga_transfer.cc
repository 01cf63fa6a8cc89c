// Starting a saga in a few dozen lines: a transfer out of one service and into another,
// compensated in reverse order if a step fails.
// Usage: sdk-saga-transfer COORDINATOR_API SERVICE_URL, e.g.
//   sdk-saga-transfer http://127.0.0.1:36789/api/settle http://127.0.0.1:8081/api
#include <cstdio>
#include <string>

#include "settle/sdk/client.h"
#include "settle/sdk/saga.h"

int main(int argc, char** argv) {
  const bool help = argc > 1 && argv[1] == std::string("--help");
  if (help || argc < 3) {
    std::fprintf(help ? stdout : stderr, "usage: %s COORDINATOR_API SERVICE_URL\n", argv[0]);
    return help ? 0 : 2;
  }
  const std::string service = argv[2];
  auto client = settle::sdk::Client::Create(argv[1]);
  if (!client) return std::fprintf(stderr, "%s\n", client.status().ToString().c_str()), 2;
  auto gid = (*client)->NewGid();
  if (!gid) return std::fprintf(stderr, "%s\n", gid.status().ToString().c_str()), 1;

  settle::sdk::Saga saga(**client, *gid);
  saga.Add(service + "/TransOut", service + "/TransOutCompensate", R"({"amount":30})")
      .Add(service + "/TransIn", service + "/TransInCompensate", R"({"amount":30})");
  saga.options().wait_result = true;  // answer once the saga has run (or been compensated)
  auto outcome = saga.Submit();
  if (!outcome) return std::fprintf(stderr, "%s\n", outcome.status().ToString().c_str()), 1;
  std::printf("gid %s: %s %s\n", gid->c_str(), std::string(ToString(outcome->status)).c_str(),
              outcome->reason.c_str());
  return outcome->status == settle::GlobalStatus::kSucceed ? 0 : 1;
}
