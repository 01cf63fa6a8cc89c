// The real settled serving answers of every size over HTTPS (--tls-cert) as it does over
// plain HTTP: /api/metrics (over 16 KiB, what Prometheus scrapes), a message's payloads read
// back by query, /all with a large limit, and request bodies up to --max-body-bytes. (An
// HTTPS answer over 16 KiB once arrived as its head alone: 200, a Content-Length, no body.)
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "byte_pattern.h"
#include "json_client.h"
#include "settled_process.h"
#include "temp_dir.h"
#include "test_ca.h"

namespace settle {
namespace {

using nlohmann::json;
using testing::FirstDifference;
using testing::JsonClient;
using testing::JsonResponse;
using testing::PatternText;
using testing::SettledProcess;

constexpr std::size_t kMaxBody = 1 << 20;  // settled's --max-body-bytes (its default)
constexpr std::size_t kNoDifference = std::string::npos;

// A message prepared (never delivered while the test runs) with one step whose body is
// `payload`: settled stores it byte for byte and shows it to query?payloads=true.
json PreparedMessage(const std::string& gid, const std::string& payload) {
  return {{"gid", gid},
          {"trans_type", "msg"},
          {"timeout_to_fail", 3600},
          {"steps", {{{"action", "http://127.0.0.1:9/never"}}}},
          {"payloads", {payload}},
          {"query_prepared", "http://127.0.0.1:9/never"}};
}

// The prepare of a message whose payload makes the request body exactly `body_size` bytes.
std::string PrepareBodyOfSize(const std::string& gid, std::size_t body_size) {
  const std::size_t frame = PreparedMessage(gid, "").dump().size();
  return PreparedMessage(gid, PatternText(body_size - frame, body_size)).dump();
}

// The `data` of the message's action row, as query?payloads=true shows it.
std::string ActionData(JsonClient& client, const std::string& gid) {
  const JsonResponse answer = client.Get("/api/settle/query?gid=" + gid + "&payloads=true");
  if (answer.status != 200 || !answer.json.is_object()) return "<no answer: " + answer.error + ">";
  for (const json& branch : answer.json["branches"]) {
    if (branch["op"] == "action") return branch["data"].get<std::string>();
  }
  return "<no action row>";
}

const std::string* HeaderOf(const JsonResponse& answer, const std::string& name) {
  for (const auto& [key, value] : answer.headers) {
    if (key.size() == name.size() &&
        std::equal(key.begin(), key.end(), name.begin(),
                   [](char a, char b) { return std::tolower(a) == std::tolower(b); })) {
      return &value;
    }
  }
  return nullptr;
}

// The metric families a Prometheus text answer declares ("# TYPE name kind"), after checking
// that every line is a comment or a sample and that the last one ends.
std::set<std::string> MetricFamilies(const std::string& text) {
  std::set<std::string> families;
  CHECK((!text.empty() && text.back() == '\n'));
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    INFO(line);
    if (line.rfind("# TYPE ", 0) == 0) {
      families.insert(line.substr(7, line.find(' ', 7) - 7));
    } else if (line.rfind('#', 0) != 0) {
      CHECK(line.find(' ') != std::string::npos);  // name{labels} value
    }
  }
  return families;
}

// What one settled serves, kept to compare HTTPS with plain HTTP.
struct Served {
  std::set<std::string> metric_families;
  std::vector<std::string> all_gids;
  std::vector<std::string> payloads;  // by size, as query showed them
};

Served Exercise(bool tls) {
  INFO((tls ? "HTTPS" : "HTTP"));
  testing::TempDir dir;
  testing::TestCa ca(dir.path());
  const testing::TestCa::Issued cert = ca.IssueForLocalhost();
  std::vector<std::string> args;
  if (tls) args = {"--tls-cert", cert.cert_file, "--tls-key", cert.key_file};
  SettledProcess settled(dir.File("settle.db"), args);
  JsonClient client(settled.port(), "127.0.0.1", tls ? ca.ca_file() : "");
  Served served;

  // Payloads of every size around a TLS record, and one whose prepare is the largest body
  // settled takes: each stored and read back whole.
  const std::vector<std::size_t> sizes = {1, 16383, 16384, 16385, 21239, 65536, 300'000};
  for (const std::size_t size : sizes) {
    INFO("payload of " << size << " bytes");
    const std::string payload = PatternText(size, size);
    const std::string gid = "payload-" + std::to_string(size);
    const JsonResponse prepared =
        client.PostJson("/api/settle/prepare", PreparedMessage(gid, payload));
    INFO(prepared.body << prepared.error);
    REQUIRE(prepared.status == 200);
    served.payloads.push_back(ActionData(client, gid));
    CHECK(FirstDifference(served.payloads.back(), payload) == kNoDifference);
  }
  const std::string largest = PrepareBodyOfSize("payload-largest", kMaxBody);
  REQUIRE(largest.size() == kMaxBody);
  const JsonResponse taken = client.Post("/api/settle/prepare", largest);
  REQUIRE(taken.status == 200);
  served.payloads.push_back(ActionData(client, "payload-largest"));
  CHECK(FirstDifference(served.payloads.back(),
                        json::parse(largest)["payloads"][0].get<std::string>()) == kNoDifference);

  // One byte more (or four times the limit) is refused before settled reads the body, and
  // nothing is stored; the client, still sending when the answer comes, reads it.
  for (const std::size_t size : {kMaxBody + 1, 4 * kMaxBody}) {
    INFO("prepare of " << size << " bytes");
    const std::string gid = "payload-over-" + std::to_string(size);
    const JsonResponse refused = client.Post("/api/settle/prepare", PrepareBodyOfSize(gid, size));
    INFO(refused.error);
    CHECK(refused.status == 413);
    CHECK_THAT(refused.body, Catch::Contains("body: larger than " + std::to_string(kMaxBody)));
    const JsonResponse query = client.Get("/api/settle/query?gid=" + gid);
    CHECK(query.status == 200);
    CHECK(query.json == json::parse(R"({"transaction":null,"branches":[],"next_position":""})"));
  }

  // /all with a large limit: every transaction, in an answer well over a TLS record.
  for (int i = 0; i < 60; ++i) {
    const std::string gid = "listed-" + std::to_string(100 + i);
    REQUIRE(client.PostJson("/api/settle/prepare", PreparedMessage(gid, "{}")).status == 200);
  }
  const JsonResponse all = client.Get("/api/settle/all?limit=1000");
  REQUIRE(all.status == 200);
  CHECK(all.body.size() > 16 * 1024);
  REQUIRE(all.json.is_object());
  for (const json& transaction : all.json["transactions"]) {
    served.all_gids.push_back(transaction["gid"].get<std::string>());
  }
  CHECK(served.all_gids.size() == sizes.size() + 1 + 60);

  // /api/metrics, as Prometheus scrapes it: over a TLS record, whole, Content-Length true.
  const JsonResponse metrics = client.Get("/api/metrics");
  REQUIRE(metrics.status == 200);
  REQUIRE(metrics.body.size() > 16 * 1024);
  const std::string* length = HeaderOf(metrics, "Content-Length");
  REQUIRE(length != nullptr);
  CHECK(*length == std::to_string(metrics.body.size()));
  served.metric_families = MetricFamilies(metrics.body);
  CHECK(served.metric_families.count("settle_http_requests_total") == 1);
  return served;
}

TEST_CASE(
    "settled serving HTTPS answers any size whole as over plain HTTP, its metrics, payloads up "
    "to the body limit read back by query and a long list of transactions, and refuses one byte "
    "past the limit with 413",
    "[process][tls][bodies]") {
  const Served https = Exercise(/*tls=*/true);
  const Served http = Exercise(/*tls=*/false);
  CHECK(https.metric_families == http.metric_families);
  CHECK(https.all_gids == http.all_gids);
  REQUIRE(https.payloads.size() == http.payloads.size());
  for (std::size_t i = 0; i < https.payloads.size(); ++i) {
    INFO("payload " << i);
    CHECK(FirstDifference(https.payloads[i], http.payloads[i]) == kNoDifference);
  }
}

}  // namespace
}  // namespace settle
