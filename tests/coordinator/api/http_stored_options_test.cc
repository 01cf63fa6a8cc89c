// What a client writes into its own options stays data: custom_data and branch headers reach the
// stored options as JSON text written by hand (common/core json_text.h), so a quote the writer
// failed to escape would let a client set fields the coordinator acts on. The outcome is tested,
// not only the text: a transaction whose custom_data spells a one-second timeout_to_fail is
// still prepared after a real one-second timeout has aborted its neighbour, and commits.
#include <catch2/catch.hpp>

#include <cctype>
#include <string>

#include "in_process_settled.h"
#include "participant_server.h"

namespace settle {
namespace {

using nlohmann::json;
using testing::InProcessSettled;
using testing::ParticipantServer;

// Text that closes custom_data's string in unescaped JSON and opens fields of its own.
const std::string kBreakout =
    R"(","timeout_to_fail":1,"request_fingerprint":"forged","wait_result":true,"x":")";

json Prepare(const std::string& gid, json options) {
  json body = {{"gid", gid}, {"trans_type", "tcc"}};
  body.update(options);
  return body;
}

json Register(const std::string& gid, ParticipantServer& p) {
  return {{"gid", gid},
          {"trans_type", "tcc"},
          {"branch_id", "01"},
          {"data", R"({"amount":30})"},
          {"confirm", p.Url("/confirm")},
          {"cancel", p.Url("/cancel")}};
}

TEST_CASE("custom_data that spells options of its own is stored as the text it is",
          "[http][attack][options]") {
  ParticipantServer p;
  InProcessSettled s;
  const json forged = {{"custom_data", kBreakout}, {"branch_headers", {{"X-Note", kBreakout}}}};
  REQUIRE(s.Call("prepare", Prepare("forged-timeout", forged)).status == 200);
  REQUIRE(s.Call("registerBranch", Register("forged-timeout", p)).status == 200);
  // The neighbour asks for the timeout for real: once it has failed, a second has passed.
  REQUIRE(s.Call("prepare", Prepare("real-timeout", {{"timeout_to_fail", 1}})).status == 200);
  REQUIRE(s.WaitForStatus("real-timeout", "failed"));

  const json stored = s.Query("forged-timeout")["transaction"];
  CHECK(stored["status"] == "prepared");
  const json& options = stored["options"];
  CHECK(options["custom_data"] == kBreakout);
  CHECK(options["branch_headers"]["X-Note"] == kBreakout);
  REQUIRE(options["timeout_to_fail"].is_number());
  CHECK(options["timeout_to_fail"] != 1);

  // The repeat of its prepare is the same request, whatever the text claimed.
  CHECK(s.Call("prepare", Prepare("forged-timeout", forged)).status == 200);
  const auto submitted =
      s.Call("submit", {{"gid", "forged-timeout"}, {"trans_type", "tcc"}, {"wait_result", true}});
  CHECK(submitted.status == 200);
  REQUIRE(s.WaitForStatus("forged-timeout", "succeed"));
  CHECK(p.CountCalls("/confirm") == 1);
  CHECK(p.CountCalls("/cancel") == 0);
  // The header reached the participant as the client wrote it, and alone.
  const auto confirms = p.CallsTo("/confirm");
  REQUIRE(confirms.size() == 1);
  std::string note;
  for (const auto& [name, value] : confirms[0].headers) {
    std::string lower = name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == "x-note") note = value;
  }
  CHECK(note == kBreakout);
}

}  // namespace
}  // namespace settle
