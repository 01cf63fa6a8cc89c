// The settled binary as an operator runs it.
#include <signal.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "eventually.h"
#include "file_text.h"
#include "json_client.h"
#include "participant_server.h"
#include "settled_process.h"
#include "temp_dir.h"

namespace settle {
namespace {

using nlohmann::json;
using testing::ChildProcess;
using testing::JsonClient;
using testing::ReadFile;
using testing::SettledProcess;

TEST_CASE("settled --help explains its options and exits 0", "[process]") {
  testing::TempDir dir;
  ChildProcess help({SettledProcess::BinaryPath(), "--help"}, dir.File("err"));
  CHECK_FALSE(help.WaitForLine("--retry-interval", std::chrono::seconds(10)).empty());
  const int status = help.Wait(std::chrono::seconds(10));
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("settled refuses bad arguments with exit code 2", "[process]") {
  testing::TempDir dir;
  ChildProcess bad({SettledProcess::BinaryPath(), "--retry-interval", "soon"}, dir.File("err"));
  const int status = bad.Wait(std::chrono::seconds(10));
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 2);
  CHECK_THAT(ReadFile(dir.File("err")), Catch::Contains("--retry-interval"));
}

TEST_CASE("settled --version names the build that settle_build_info reports", "[process]") {
  testing::TempDir dir;
  ChildProcess version({SettledProcess::BinaryPath(), "--version"}, dir.File("err"));
  const std::string line = version.WaitForLine("settled ", std::chrono::seconds(10));
  const int status = version.Wait(std::chrono::seconds(10));
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  // settled 0.1.0 (commit 1a2b3c4d5e6f, RelWithDebInfo, GCC 12.2.0)
  CHECK_THAT(line,
             Catch::StartsWith(std::string("settled ") + SETTLE_PROJECT_VERSION + " (commit "));
  const std::size_t commit_at = line.find("(commit ") + 8;
  const std::string commit = line.substr(commit_at, line.find(',') - commit_at);
  CHECK_FALSE(commit.empty());

  SettledProcess settled(dir.File("settle.db"));
  const auto metrics = JsonClient(settled.port()).Get("/api/metrics");
  REQUIRE(metrics.status == 200);
  CHECK_THAT(metrics.body,
             Catch::Contains(std::string("settle_build_info{version=\"") + SETTLE_PROJECT_VERSION +
                             "\",commit=\"" + commit + "\","));
  // Documented alerts are there before any webhook is set.
  CHECK_THAT(metrics.body, Catch::Contains("settle_alerts_total{result=\"sent\"} 0"));
  // And the process's own, under the names Prometheus's dashboards know.
  CHECK_THAT(metrics.body, Catch::Contains("\nprocess_cpu_seconds_total ") &&
                               Catch::Contains("\nprocess_resident_memory_bytes ") &&
                               Catch::Contains("\nprocess_open_fds "));
}

TEST_CASE("settled's startup log says whether authentication and TLS are on", "[process]") {
  testing::TempDir dir;
  {
    SettledProcess open(dir.File("open.db"), {}, 0, dir.File("open.log"));
    REQUIRE(open.Terminate() == 0);
  }
  const std::string open_log = ReadFile(dir.File("open.log"));
  CHECK_THAT(open_log, Catch::Contains("settled " SETTLE_PROJECT_VERSION " (commit "));
  CHECK_THAT(open_log, Catch::Contains("authentication off"));
  CHECK_THAT(open_log, Catch::Contains("TLS off"));

  const std::string config = dir.File("settled.toml");
  std::ofstream(config) << "admin-token = \"admin-token-0123456789\"\nread-token = "
                           "[\"read-token-0123456789\"]\n";
  {
    SettledProcess locked(dir.File("locked.db"), {"--config", config}, 0, dir.File("locked.log"));
    CHECK(JsonClient(locked.port()).Get("/api/settle/all").status == 401);
    REQUIRE(locked.Terminate() == 0);
  }
  CHECK_THAT(ReadFile(dir.File("locked.log")),
             Catch::Contains("authentication on: 2 bearer tokens"));
}

TEST_CASE("a second settled on the same database refuses to start", "[process]") {
  testing::TempDir dir;
  SettledProcess first(dir.File("settle.db"));
  ChildProcess second({SettledProcess::BinaryPath(), "--port", "0", "--grpc-port", "0", "--db",
                       dir.File("settle.db")},
                      dir.File("second.log"));
  const int status = second.Wait(std::chrono::seconds(10));
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  CHECK_THAT(ReadFile(dir.File("second.log")), Catch::Contains("in use"));
}

TEST_CASE("SIGTERM shuts settled down cleanly and a restart finishes the work",
          "[process][shutdown]") {
  testing::TempDir dir;
  testing::ParticipantServer p;
  p.SetDefault("/slow", {200, R"({"dtm_result":"SUCCESS"})", std::chrono::milliseconds(300)});
  const std::string db = dir.File("settle.db");
  SettledProcess settled(db, {"--shutdown-grace", "5s"});
  {
    JsonClient client(settled.port());
    const json saga = {{"gid", "drained"},
                       {"trans_type", "saga"},
                       {"steps", {{{"action", p.Url("/slow")}}, {{"action", p.Url("/slow")}}}},
                       {"payloads", {"{}", "{}"}}};
    REQUIRE(client.PostJson("/api/settle/submit", saga).status == 200);
    REQUIRE(p.WaitForCalls("/slow", 1));  // the second call is now under way
  }
  const int status = settled.Terminate();
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK_THAT(ReadFile(settled.log_path()), Catch::Contains("shutting down"));

  SettledProcess again(db);
  JsonClient client(again.port());
  std::string final_status;
  testing::Eventually(
      [&] {
        final_status = client.Get("/api/settle/query?gid=drained").json["transaction"]["status"];
        return final_status == "succeed";
      },
      std::chrono::seconds(20), std::chrono::milliseconds(20));
  CHECK(final_status == "succeed");
  CHECK(p.CountCalls("/slow") >= 2);
}

}  // namespace
}  // namespace settle
