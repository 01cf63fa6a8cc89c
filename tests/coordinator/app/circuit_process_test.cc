// The settled binary while a participant host is down: a few log lines about the host
// instead of one per call, and every saga finished once the host is back.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "eventually.h"
#include "fault_proxy.h"
#include "file_text.h"
#include "json_client.h"
#include "participant_server.h"
#include "settled_process.h"
#include "temp_dir.h"

namespace settle {
namespace {

using nlohmann::json;
using testing::Fault;
using testing::FaultProxy;
using testing::JsonClient;
using testing::ParticipantServer;
using testing::ReadFile;
using testing::SettledProcess;

std::size_t CountOf(const std::string& text, const std::string& what) {
  std::size_t count = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++count;
  }
  return count;
}

TEST_CASE(
    "settled logs a participant host's outage in a few lines, not one per call, and finishes "
    "its sagas once the host is back",
    "[process][circuit]") {
  testing::TempDir dir;
  ParticipantServer participant;
  FaultProxy down(participant.port());
  down.AddRule({"/action", Fault::kDropRequest, 0, -1});
  const std::string host = "http://127.0.0.1:" + std::to_string(down.port());
  SettledProcess settled(dir.File("settle.db"),
                         {"--retry-interval", "50ms", "--retry-max", "200ms", "--circuit-failures",
                          "3", "--circuit-probe-max", "300ms"});
  JsonClient client(settled.port());

  constexpr int kSagas = 20;
  for (int i = 0; i < kSagas; ++i) {
    const json saga = {{"gid", "s" + std::to_string(i)},
                       {"trans_type", "saga"},
                       {"steps", {{{"action", down.Url("/action")}}}},
                       {"payloads", {"{}"}}};
    REQUIRE(client.PostJson("/api/settle/submit", saga).status == 200);
  }
  // The circuit opened, then three probes failed (1 s, then 300 ms apart).
  REQUIRE(
      testing::WaitForFileToContain(settled.log_path(), "circuit for " + host + " open after",
                                    std::chrono::steady_clock::now() + std::chrono::seconds(10)));
  const std::size_t seen_when_open = down.Seen("/action");
  REQUIRE(down.WaitForSeen("/action", seen_when_open + 3 + 1));

  down.ClearRules();
  for (int i = 0; i < kSagas; ++i) {
    const std::string gid = "s" + std::to_string(i);
    std::string status;
    testing::Eventually(
        [&] {
          status = client.Get("/api/settle/query?gid=" + gid).json["transaction"]["status"];
          return status == "succeed";
        },
        std::chrono::seconds(15), std::chrono::milliseconds(20));
    INFO(gid);
    CHECK(status == "succeed");
  }
  REQUIRE(settled.Terminate() == 0);

  const std::string log = ReadFile(settled.log_path());
  CHECK(CountOf(log, "circuit for " + host + " open after 3 consecutive failures") == 1);
  CHECK(CountOf(log, "circuit for " + host + " still open: the probe failed") >= 3);
  CHECK(CountOf(log, "circuit for " + host + " closed after") == 1);
  // One warning per failed call only until the circuit opened (a call still on its way then
  // may add one): the probes and the calls it held back are not logged one by one.
  CHECK(CountOf(log, "op=action outcome=UNKNOWN") <= seen_when_open + 1);
  CHECK(down.Seen("/action") > seen_when_open + 3);
}

}  // namespace
}  // namespace settle
