// settled's log as a log pipeline reads it: --log-format json line by line, times in UTC, the
// fields of each line as members, and a branch's stale error gone once it succeeds.
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "eventually.h"
#include "file_text.h"
#include "json_client.h"
#include "participant_server.h"
#include "settled_process.h"
#include "temp_dir.h"

namespace settle {
namespace {

using nlohmann::json;
using testing::JsonClient;
using testing::ReadFile;
using testing::SettledProcess;

// Every line of `path`, each parsed as JSON (the test fails on one that does not parse).
std::vector<json> JsonLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<json> lines;
  for (std::string line; std::getline(in, line);) {
    INFO(line);
    json parsed;
    REQUIRE_NOTHROW(parsed = json::parse(line));
    REQUIRE(parsed.is_object());
    lines.push_back(std::move(parsed));
  }
  return lines;
}

bool IsUtcTime(const json& time) {
  // 2026-11-28T10:12:24.601Z
  if (!time.is_string()) return false;
  const std::string t = time;
  return t.size() == 24 && t[4] == '-' && t[10] == 'T' && t[19] == '.' && t.back() == 'Z';
}

TEST_CASE(
    "with --log-format json every line is one object a pipeline reads: UTC time, level, "
    "message, and the line's fields",
    "[process][logging]") {
  testing::TempDir dir;
  testing::ParticipantServer p;
  p.SetDefault("/ok", {200, R"({"dtm_result":"SUCCESS"})"});
  // The second step fails once, then succeeds: its last_error is cleared by the success.
  p.Script("/flaky", {{.status = 500, .body = "down for a moment"}});
  const std::string log = dir.File("settled.log");
  {
    SettledProcess settled(dir.File("settle.db"),
                           {"--log-format", "json", "--retry-interval", "50ms"}, 0, log);
    JsonClient client(settled.port());
    const json saga = {{"gid", "order-7"},
                       {"trans_type", "saga"},
                       {"steps",
                        {{{"action", p.Url("/ok")}, {"compensate", p.Url("/ok")}},
                         {{"action", p.Url("/flaky")}, {"compensate", p.Url("/ok")}}}},
                       {"payloads", {"{}", "{}"}}};
    REQUIRE(client.PostJson("/api/settle/submit", saga).status == 200);
    json tx;
    REQUIRE(testing::Eventually(
        [&] {
          tx = client.Get("/api/settle/query?gid=order-7").json;
          return tx["transaction"]["status"] == "succeed";
        },
        std::chrono::seconds(20), std::chrono::milliseconds(20)));
    for (const json& branch : tx["branches"]) {
      INFO(branch.dump());
      CHECK(branch["last_error"].get<std::string>().empty());
    }
    REQUIRE(settled.Terminate() == 0);
  }
  const std::vector<json> lines = JsonLines(log);
  REQUIRE(lines.size() > 5);
  for (const json& line : lines) {
    INFO(line.dump());
    CHECK(IsUtcTime(line["time"]));
    CHECK(line["level"].is_string());
    CHECK(line["message"].is_string());
  }
  // What a pipeline filters on: the gid, and the line's fields typed.
  std::vector<json> about;
  for (const json& line : lines) {
    if (line.value("gid", "") == "order-7") about.push_back(line);
  }
  REQUIRE_FALSE(about.empty());
  const auto submitted = std::find_if(about.begin(), about.end(), [](const json& l) {
    return l["message"].get<std::string>().find("submitted") != std::string::npos;
  });
  REQUIRE(submitted != about.end());
  CHECK((*submitted)["trans_type"] == "saga");
  CHECK((*submitted)["steps"] == 2);  // two steps, four rows
  CHECK((*submitted)["level"] == "info");
  const auto failed_call = std::find_if(about.begin(), about.end(), [](const json& l) {
    return l.value("outcome", "") == "UNKNOWN";
  });
  REQUIRE(failed_call != about.end());
  CHECK((*failed_call)["level"] == "warning");
  CHECK((*failed_call)["branch"] == "02");
  CHECK((*failed_call)["attempts"] == 1);
  CHECK_THAT((*failed_call)["error"].get<std::string>(), Catch::Contains("HTTP 500"));
}

TEST_CASE("the text log writes its times in UTC with a Z", "[process][logging]") {
  testing::TempDir dir;
  {
    SettledProcess settled(dir.File("settle.db"), {}, 0, dir.File("settled.log"));
    REQUIRE(settled.Terminate() == 0);
  }
  const std::string text = ReadFile(dir.File("settled.log"));
  REQUIRE_FALSE(text.empty());
  // "2026-11-28T10:12:24.601Z info settled 0.1.0 ... starting"
  CHECK(text.size() > 25);
  CHECK(text[23] == 'Z');
  CHECK(text[24] == ' ');
}

}  // namespace
}  // namespace settle
