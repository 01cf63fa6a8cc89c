#include "sender.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <thread>

#include "settle/core/clock.h"
#include "settle/sdk/client.h"
#include "settle/sdk/msg.h"

namespace settle::notify {
namespace {

int Fail(const std::string& what, const Status& status, int exit_code) {
  std::fprintf(stderr, "notify send: %s: %s\n", what.c_str(), status.ToString().c_str());
  return exit_code;
}

}  // namespace

int Send(const SendOptions& options) {
  auto client = sdk::Client::Create(options.coordinator);
  if (!client) return Fail("--coordinator", client.status(), 2);
  std::string gid = options.gid;
  if (gid.empty()) {
    auto fresh = (*client)->NewGid();
    if (!fresh) return Fail("cannot reach " + options.coordinator, fresh.status(), 2);
    gid = *fresh;
  }

  sdk::Msg msg(**client, gid);
  msg.Add(options.to, nlohmann::json{{"text", options.text}}.dump());
  msg.options().retry_limit = options.retry_limit;  // then failed, and settled alerts
  msg.options().retry_interval = options.retry_interval;
  auto submitted = msg.Submit();
  if (!submitted) return Fail("submitting " + gid, submitted.status(), 2);
  std::printf("notification %s: submitted (retry_limit %d)\n", gid.c_str(), options.retry_limit);
  std::fflush(stdout);
  if (options.wait.count() == 0) return 0;

  // Watch the outcome: a person at a terminal wants to see it; a service would not wait.
  SystemClock clock;
  const MonoTime deadline = clock.Monotonic() + options.wait;
  std::string status = "submitted";
  while (clock.Monotonic() < deadline) {
    auto info = (*client)->Query(gid);
    if (info && *info) {
      status = ToString((*info)->status);
      if ((*info)->status == GlobalStatus::kSucceed) {
        std::printf("notification %s: succeed\n", gid.c_str());
        return 0;
      }
      if ((*info)->status == GlobalStatus::kFailed) {
        std::printf("notification %s: failed: %s\n", gid.c_str(), (*info)->rollback_reason.c_str());
        return 1;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::printf("notification %s: still %s after %llds\n", gid.c_str(), status.c_str(),
              static_cast<long long>(options.wait.count()));
  return 1;
}

}  // namespace settle::notify
