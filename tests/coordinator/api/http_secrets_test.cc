// What clients send for their participants (branch bodies, branch_headers values, custom_data)
// is theirs (docs/protocol.md §3.9): a read-only token reads every transaction without them;
// an admin and the creating client see them whole. In-process settled, real sockets.
#include <catch2/catch.hpp>

#include <string>

#include "admin_world.h"
#include "in_process_settled.h"

namespace settle {
namespace {

using nlohmann::json;
using testing::AdminWorld;
using testing::ClientWith;
using testing::InProcessSettled;
using testing::JsonClient;
using testing::JsonResponse;
using testing::kAdminToken;
using testing::kClientToken;

const std::string kSecret = "Bearer participant-secret-0042";
const std::string kBody = R"({"card":"4111-1111-1111-1111","amount":30})";

// A TCC of the client's with a credential for its participants and a card number in a body.
void PrepareWithSecrets(JsonClient& client) {
  REQUIRE(client
              .PostJson("/api/settle/prepare", {{"gid", "paid-1"},
                                                {"trans_type", "tcc"},
                                                {"timeout_to_fail", 600},
                                                {"branch_headers", {{"Authorization", kSecret}}},
                                                {"custom_data", "order 42 for alice"}})
              .status == 200);
  REQUIRE(client
              .PostJson("/api/settle/registerBranch", {{"gid", "paid-1"},
                                                       {"trans_type", "tcc"},
                                                       {"branch_id", "01"},
                                                       {"data", kBody},
                                                       {"confirm", "http://127.0.0.1:9/confirm"},
                                                       {"cancel", "http://127.0.0.1:9/cancel"}})
              .status == 200);
}

TEST_CASE(
    "a read-only token reads every transaction without its bodies, header values and "
    "custom_data",
    "[http][auth][secrets]") {
  AdminWorld world;
  PrepareWithSecrets(world.client);

  const JsonResponse query = world.reader.Get("/api/settle/query?gid=paid-1");
  REQUIRE(query.status == 200);
  const json& options = query.json["transaction"]["options"];
  CHECK(options["branch_headers"] == json{{"Authorization", "(hidden)"}});
  CHECK(options["custom_data"] == "(hidden)");
  CHECK(options["timeout_to_fail"] == 600);  // the rest of the options show
  CHECK(query.json["branches"].size() == 2);
  const JsonResponse all = world.reader.Get("/api/settle/all");
  REQUIRE(all.status == 200);
  CHECK(all.json["transactions"][0]["options"]["branch_headers"]["Authorization"] == "(hidden)");
  // Nothing of them anywhere in what it reads.
  for (const JsonResponse* answer : {&query, &all}) {
    CHECK_THAT(answer->body, !Catch::Contains("participant-secret") &&
                                 !Catch::Contains("4111-1111") && !Catch::Contains("alice"));
  }

  const JsonResponse bodies = world.reader.Get("/api/settle/query?gid=paid-1&payloads=true");
  CHECK(bodies.status == 403);
  CHECK_THAT(bodies.json["message"].get<std::string>(), Catch::StartsWith("payloads: "));
  CHECK_THAT(bodies.body, !Catch::Contains("4111-1111"));
}

TEST_CASE("an admin and the client that created a transaction see its bodies and options whole",
          "[http][auth][secrets]") {
  AdminWorld world;
  PrepareWithSecrets(world.client);

  for (const std::string& token : {kAdminToken, kClientToken}) {
    INFO(token);
    JsonClient reader = ClientWith(world.settled.port(), token);
    const JsonResponse query = reader.Get("/api/settle/query?gid=paid-1&payloads=true");
    REQUIRE(query.status == 200);
    CHECK(query.json["transaction"]["options"]["branch_headers"]["Authorization"] == kSecret);
    CHECK(query.json["transaction"]["options"]["custom_data"] == "order 42 for alice");
    REQUIRE(query.json["branches"].size() == 2);
    for (const json& branch : query.json["branches"]) CHECK(branch["data"] == kBody);
    const JsonResponse all = reader.Get("/api/settle/all");
    REQUIRE(all.status == 200);
    CHECK(all.json["transactions"][0]["options"]["branch_headers"]["Authorization"] == kSecret);
  }
}

TEST_CASE("without authentication every caller sees bodies and options whole", "[http][secrets]") {
  InProcessSettled s;
  JsonClient client(s.port());
  PrepareWithSecrets(client);

  const JsonResponse query = client.Get("/api/settle/query?gid=paid-1&payloads=true");
  REQUIRE(query.status == 200);
  CHECK(query.json["transaction"]["options"]["branch_headers"]["Authorization"] == kSecret);
  CHECK(query.json["branches"][0]["data"] == kBody);
}

}  // namespace
}  // namespace settle
