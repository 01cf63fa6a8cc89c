#include "settle/api/request_parser.h"

#include <catch2/catch.hpp>

#include <string>

namespace settle::coordinator {
namespace {

// The field a 400 names: the message up to the first ':'.
std::string FieldOf(const Status& s) {
  REQUIRE(s.code() == StatusCode::kInvalidArgument);
  return s.message().substr(0, s.message().find(':'));
}

template <typename T>
std::string FieldOf(const Result<T>& r) {
  REQUIRE_FALSE(r);
  return FieldOf(r.status());
}

const char* kSaga = R"({"gid":"g2","trans_type":"saga",
  "steps":[{"action":"http://p/TransOut","compensate":"http://p/TransOutCompensate"},
           {"action":"http://p/TransIn","compensate":"http://p/TransInCompensate"}],
  "payloads":["{\"amount\": 30}","{\"amount\":30}"]})";

TEST_CASE("a saga submit carries its steps and payloads verbatim", "[parser]") {
  auto r = ParseSubmit(kSaga);
  REQUIRE(r);
  CHECK(r->gid == "g2");
  CHECK(r->trans_type == TransType::kSaga);
  REQUIRE(r->steps.size() == 2);
  CHECK(r->steps[0].action_url == "http://p/TransOut");
  CHECK(r->steps[1].compensate_url == "http://p/TransInCompensate");
  CHECK(r->steps[0].payload == R"({"amount": 30})");
  CHECK(r->steps[1].payload == R"({"amount":30})");
}

TEST_CASE("options are read with their protocol meaning", "[parser]") {
  auto r = ParseSubmit(R"({"gid":"g","trans_type":"saga","steps":[{"action":"http://p/a"}],
    "payloads":[""],"wait_result":true,"timeout_to_fail":60,"request_timeout":8,
    "retry_interval":0,"retry_limit":5,"branch_headers":{"Authorization":"Bearer t"},
    "custom_data":"{\"concurrent\":true,\"orders\":{}}"})");
  REQUIRE(r);
  CHECK(r->options.wait_result);
  CHECK(r->options.timeout_to_fail == std::chrono::seconds(60));
  CHECK(r->options.request_timeout == std::chrono::seconds(8));
  CHECK_FALSE(r->options.retry_interval);  // 0 means the default
  CHECK(r->options.retry_limit == 5);
  CHECK(r->options.branch_headers.at("Authorization") == "Bearer t");
  CHECK(r->options.concurrent);
  CHECK(r->steps[0].compensate_url.empty());
}

TEST_CASE("what DTM client SDKs really send is accepted", "[parser][compat]") {
  // The Python SDK: nulls, an empty passthrough_headers list and zeros.
  auto python = ParsePrepare(R"({"gid":"g","trans_type":"tcc","custom_data":null,
    "query_prepared":null,"protocol":null,"passthrough_headers":[],"request_timeout":8,
    "retry_interval":0,"timeout_to_fail":0,"wait_result":null,"branch_headers":null})");
  REQUIRE(python);
  CHECK(python->options.request_timeout == std::chrono::seconds(8));
  CHECK_FALSE(python->options.timeout_to_fail);
  // The Node SDK: an unused try URL and a status in registerBranch.
  auto node = ParseRegisterBranch(R"({"gid":"g","trans_type":"tcc","branch_id":"01",
    "data":"{\"amount\":30}","try":"http://p/try","confirm":"http://p/confirm",
    "cancel":"http://p/cancel","status":"prepared"})");
  REQUIRE(node);
  CHECK(node->data == R"({"amount":30})");
  CHECK(node->confirm_url == "http://p/confirm");
  // The Go SDK: a concurrent saga through custom_data.
  auto go = ParseSubmit(R"({"gid":"g","trans_type":"saga","steps":[{"action":"http://p/a",
    "compensate":"http://p/c"},{"action":"http://p/a","compensate":"http://p/c"}],
    "payloads":["",""],"custom_data":"{\"concurrent\":true,\"orders\":{\"1\":[0]}}"})");
  REQUIRE(go);
  CHECK(go->options.concurrent);
  CHECK(go->options.orders.at(1) == std::vector<int>{0});
}

TEST_CASE("malformed bodies are refused naming the body", "[parser][bad-input]") {
  CHECK(FieldOf(ParsePrepare("")) == "body");
  CHECK(FieldOf(ParsePrepare("   ")) == "body");
  CHECK(FieldOf(ParsePrepare("{\"gid\":")) == "body");
  CHECK(FieldOf(ParsePrepare("[1,2]")) == "body");
  CHECK(FieldOf(ParsePrepare("\"gid\"")) == "body");
  CHECK(FieldOf(ParsePrepare(std::string(100000, '['))) == "body");
  CHECK(FieldOf(ParsePrepare("{\"gid\":\"g\",\"x\":\"\xff\xfe\"}")) == "body");
}

TEST_CASE("a missing or invalid gid is refused naming gid", "[parser][bad-input]") {
  CHECK(FieldOf(ParsePrepare(R"({"trans_type":"tcc"})")) == "gid");
  CHECK(FieldOf(ParsePrepare(R"({"gid":null,"trans_type":"tcc"})")) == "gid");
  CHECK(FieldOf(ParsePrepare(R"({"gid":"","trans_type":"tcc"})")) == "gid");
  CHECK(FieldOf(ParsePrepare(R"({"gid":42,"trans_type":"tcc"})")) == "gid");
  CHECK(FieldOf(ParsePrepare(R"({"gid":"a b","trans_type":"tcc"})")) == "gid");
  CHECK(FieldOf(ParsePrepare(R"({"gid":"../x","trans_type":"tcc"})")) == "gid");
  CHECK(FieldOf(ParsePrepare(R"({"gid":")" + std::string(129, 'a') + R"(","trans_type":"tcc"})")) ==
        "gid");
}

TEST_CASE("unknown and unsupported trans_types are refused naming trans_type",
          "[parser][bad-input]") {
  auto msg = ParseSubmit(R"({"gid":"g","trans_type":"msg"})");
  CHECK(FieldOf(msg) == "trans_type");
  CHECK_THAT(msg.status().message(), Catch::Contains("unsupported trans_type"));
  CHECK(FieldOf(ParseSubmit(R"({"gid":"g","trans_type":"xa"})")) == "trans_type");
  CHECK(FieldOf(ParseSubmit(R"({"gid":"g","trans_type":"workflow"})")) == "trans_type");
  CHECK(FieldOf(ParseSubmit(R"({"gid":"g","trans_type":"banana"})")) == "trans_type");
  CHECK(FieldOf(ParseSubmit(R"({"gid":"g"})")) == "trans_type");
  CHECK(FieldOf(ParseSubmit(R"({"gid":"g","trans_type":7})")) == "trans_type");
  CHECK(FieldOf(ParsePrepare(R"({"gid":"g","trans_type":"saga"})")) == "trans_type");
  CHECK(FieldOf(ParseAbort(R"({"gid":"g","trans_type":"saga"})")) == "trans_type");
}

TEST_CASE("options of the wrong type are refused naming the option", "[parser][bad-input]") {
  const std::string head = R"({"gid":"g","trans_type":"tcc",)";
  CHECK(FieldOf(ParsePrepare(head + R"("wait_result":"yes"})")) == "wait_result");
  CHECK(FieldOf(ParsePrepare(head + R"("timeout_to_fail":-1})")) == "timeout_to_fail");
  CHECK(FieldOf(ParsePrepare(head + R"("timeout_to_fail":1.5})")) == "timeout_to_fail");
  CHECK(FieldOf(ParsePrepare(head + R"("request_timeout":"8"})")) == "request_timeout");
  CHECK(FieldOf(ParsePrepare(head + R"("retry_interval":1e300})")) == "retry_interval");
  CHECK(FieldOf(ParsePrepare(head + R"("retry_limit":-3})")) == "retry_limit");
  CHECK(FieldOf(ParsePrepare(head + R"("branch_headers":["a"]})")) == "branch_headers");
  CHECK(FieldOf(ParsePrepare(head + R"("branch_headers":{"X":1}})")) == "branch_headers.X");
  CHECK(FieldOf(ParsePrepare(head + R"("branch_headers":{"X":"a\r\nEvil: 1"}})")) ==
        "branch_headers.X");
  CHECK(FieldOf(ParsePrepare(head + R"("branch_headers":{"Bad Name":"v"}})")) == "branch_headers");
  CHECK(FieldOf(ParsePrepare(head + R"("custom_data":{}})")) == "custom_data");
}

TEST_CASE("registerBranch takes https URLs, in any case of the scheme", "[parser]") {
  auto parsed = ParseRegisterBranch(
      R"({"gid":"g","trans_type":"tcc","branch_id":"01","confirm":"https://bank.example/c",)"
      R"("cancel":"HTTPS://bank.example/x"})");
  REQUIRE(parsed);
  CHECK(parsed->confirm_url == "https://bank.example/c");
  CHECK(parsed->cancel_url == "HTTPS://bank.example/x");
}

TEST_CASE("registerBranch needs a branch id and http(s) URLs", "[parser][bad-input]") {
  const std::string head = R"({"gid":"g","trans_type":"tcc",)";
  CHECK(FieldOf(ParseRegisterBranch(head + R"("confirm":"http://p/c","cancel":"http://p/x"})")) ==
        "branch_id");
  CHECK(FieldOf(ParseRegisterBranch(head + R"("branch_id":"0 1","confirm":"http://p/c",
    "cancel":"http://p/x"})")) == "branch_id");
  CHECK(FieldOf(ParseRegisterBranch(head + R"("branch_id":"01","cancel":"http://p/x"})")) ==
        "confirm");
  CHECK(FieldOf(ParseRegisterBranch(head + R"("branch_id":"01","confirm":"ftp://p/c",
    "cancel":"http://p/x"})")) == "confirm");
  CHECK(FieldOf(ParseRegisterBranch(head + R"("branch_id":"01","confirm":"http://p/c",
    "cancel":"ftp://p/x"})")) == "cancel");
  CHECK(FieldOf(ParseRegisterBranch(head + R"("branch_id":"01","data":{"amount":30},
    "confirm":"http://p/c","cancel":"http://p/x"})")) == "data");
}

TEST_CASE("a saga's steps and payloads must match and hold http URLs", "[parser][bad-input]") {
  const std::string head = R"({"gid":"g","trans_type":"saga",)";
  CHECK(FieldOf(ParseSubmit(head + R"("payloads":[]})")) == "steps");
  CHECK(FieldOf(ParseSubmit(head + R"("steps":[],"payloads":[]})")) == "steps");
  CHECK(FieldOf(ParseSubmit(head + R"("steps":{},"payloads":[]})")) == "steps");
  CHECK(FieldOf(ParseSubmit(head + R"("steps":[{"action":"http://p/a"}]})")) == "payloads");
  CHECK(FieldOf(ParseSubmit(head + R"("steps":[{"action":"http://p/a"}],"payloads":["",""]})")) ==
        "payloads");
  CHECK(FieldOf(ParseSubmit(head + R"("steps":[{"action":"http://p/a"}],"payloads":[{}]})")) ==
        "payloads[0]");
  CHECK(FieldOf(ParseSubmit(head + R"("steps":["http://p/a"],"payloads":[""]})")) == "steps[0]");
  CHECK(FieldOf(ParseSubmit(head + R"("steps":[{"compensate":"http://p/c"}],"payloads":[""]})")) ==
        "steps[0].action");
  CHECK(FieldOf(ParseSubmit(head + R"("steps":[{"action":"http://p/a"},{"action":"p/a"}],
    "payloads":["",""]})")) == "steps[1].action");
  CHECK(FieldOf(ParseSubmit(head + R"("steps":[{"action":"http://p/a","compensate":"x"}],
    "payloads":[""]})")) == "steps[0].compensate");
}

TEST_CASE("a saga's orders must name existing steps without cycles", "[parser][bad-input]") {
  auto with_orders = [](const std::string& orders) {
    return ParseSubmit(R"({"gid":"g","trans_type":"saga","concurrent":true,
      "steps":[{"action":"http://p/a"},{"action":"http://p/a"},{"action":"http://p/a"}],
      "payloads":["","",""],"custom_data":")" +
                       orders + R"("})");
  };
  REQUIRE(with_orders(R"({\"orders\":{\"2\":[0,1]}})"));
  CHECK(FieldOf(with_orders(R"({\"orders\":{\"5\":[0]}})")) == "custom_data.orders.5");
  CHECK(FieldOf(with_orders(R"({\"orders\":{\"1\":[7]}})")) == "custom_data.orders.1");
  CHECK(FieldOf(with_orders(R"({\"orders\":{\"1\":[1]}})")) == "custom_data.orders.1");
  CHECK(FieldOf(with_orders(R"({\"orders\":{\"0\":[1],\"1\":[0]}})")) == "custom_data.orders");
  CHECK(FieldOf(with_orders(R"({\"orders\":{\"x\":[0]}})")) == "custom_data.orders.x");
  CHECK(FieldOf(with_orders(R"({\"orders\":[1]})")) == "custom_data.orders");
  CHECK(FieldOf(with_orders(R"(not json)")) == "custom_data");
}

TEST_CASE("query strings are checked like bodies", "[parser][bad-input]") {
  CHECK(ParseQueryGid({{"gid", "g1"}}).value() == "g1");
  CHECK(FieldOf(ParseQueryGid({})) == "gid");
  CHECK(FieldOf(ParseQueryGid({{"gid", "a/b"}})) == "gid");

  auto all = ParseListQuery({{"status", "submitted"}, {"limit", "5"}, {"position", "42"}});
  REQUIRE(all);
  CHECK(all->status == GlobalStatus::kSubmitted);
  CHECK(all->limit == 5);
  CHECK(all->before_id == 42);
  CHECK(ParseListQuery({})->limit == 100);
  CHECK(FieldOf(ParseListQuery({{"status", "done"}})) == "status");
  CHECK(FieldOf(ParseListQuery({{"trans_type", "msg"}})) == "trans_type");
  CHECK(FieldOf(ParseListQuery({{"limit", "0"}})) == "limit");
  CHECK(FieldOf(ParseListQuery({{"limit", "1001"}})) == "limit");
  CHECK(FieldOf(ParseListQuery({{"limit", "ten"}})) == "limit");
  CHECK(FieldOf(ParseListQuery({{"position", "-1"}})) == "position");
  CHECK(FieldOf(ParseListQuery({{"stuck", "maybe"}})) == "stuck");
}

}  // namespace
}  // namespace settle::coordinator
