#include "settle/api/request_parser.h"

#include <catch2/catch.hpp>

#include <string>

#include "settle/engine/msg_engine.h"
#include "settle/engine/transaction_types.h"
#include "settle/engine/two_phase_engine.h"

namespace settle::api {
namespace {

// What the HTTP front door hands on, as the coordinator acts on it: the parsed request once
// the engine's rules passed it. The parser's refusals (JSON shapes) and the engine's (values)
// name their field the same way.
template <typename T>
Result<T> Checked(Result<T> parsed, Status (*check)(const T&)) {
  if (parsed) {
    if (Status s = check(*parsed); !s.ok()) return s;
  }
  return parsed;
}
Result<engine::PrepareRequest> Prepare(std::string_view body) {
  return Checked(ParsePrepare(body), &engine::CheckPrepare);
}
Result<engine::SubmitRequest> Submit(std::string_view body) {
  return Checked(ParseSubmit(body), &engine::CheckSubmit);
}
Result<engine::RegisterBranchRequest> Register(std::string_view body) {
  return Checked(ParseRegisterBranch(body), &engine::CheckRegisterBranch);
}
Result<engine::AbortRequest> Abort(std::string_view body) {
  return Checked(ParseAbort(body), &engine::CheckAbort);
}
Result<engine::SubscribeRequest> Subscription(Result<engine::SubscribeRequest> parsed) {
  return Checked(std::move(parsed), &engine::CheckSubscription);
}

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
  auto r = Submit(kSaga);
  REQUIRE(r);
  CHECK(r->gid == "g2");
  CHECK(r->trans_type == TransType::kSaga);
  REQUIRE(r->steps.size() == 2);
  CHECK(r->steps[0].action_url == "http://p/TransOut");
  CHECK(r->steps[1].compensate_url == "http://p/TransInCompensate");
  CHECK(r->payloads[0] == R"({"amount": 30})");
  CHECK(r->payloads[1] == R"({"amount":30})");
}

TEST_CASE("options are read with their protocol meaning", "[parser]") {
  auto r = Submit(R"({"gid":"g","trans_type":"saga","steps":[{"action":"http://p/a"}],
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
  auto python = Prepare(R"({"gid":"g","trans_type":"tcc","custom_data":null,
    "query_prepared":null,"protocol":null,"passthrough_headers":[],"request_timeout":8,
    "retry_interval":0,"timeout_to_fail":0,"wait_result":null,"branch_headers":null})");
  REQUIRE(python);
  CHECK(python->options.request_timeout == std::chrono::seconds(8));
  CHECK_FALSE(python->options.timeout_to_fail);
  // The Node SDK: an unused try URL and a status in registerBranch.
  auto node = Register(R"({"gid":"g","trans_type":"tcc","branch_id":"01",
    "data":"{\"amount\":30}","try":"http://p/try","confirm":"http://p/confirm",
    "cancel":"http://p/cancel","status":"prepared"})");
  REQUIRE(node);
  CHECK(node->data == R"({"amount":30})");
  CHECK(node->confirm_url == "http://p/confirm");
  // The Go SDK: a concurrent saga through custom_data.
  auto go = Submit(R"({"gid":"g","trans_type":"saga","steps":[{"action":"http://p/a",
    "compensate":"http://p/c"},{"action":"http://p/a","compensate":"http://p/c"}],
    "payloads":["",""],"custom_data":"{\"concurrent\":true,\"orders\":{\"1\":[0]}}"})");
  REQUIRE(go);
  CHECK(go->options.concurrent);
  CHECK(go->options.orders.at(1) == std::vector<int>{0});
}

TEST_CASE("the members nothing read are listed, the body's then each step's, nulls left out",
          "[parser][fields]") {
  using Fields = engine::UnreadFields;
  auto saga = Submit(R"({"gid":"g","trans_type":"saga","wait_resutl":true,"protocol":"http",
    "query_prepared":"http://p/q","nothing":null,
    "steps":[{"action":"http://p/a","actoin":"http://p/a"},{"action":"http://p/b","data":"x"}],
    "payloads":["",""]})");
  REQUIRE(saga);
  CHECK(saga->unread_fields ==
        Fields{"protocol", "query_prepared", "wait_resutl", "steps[0].actoin", "steps[1].data"});
  // What one type reads is what another leaves unread: a TCC's prepare reads no steps.
  auto tcc = Prepare(R"({"gid":"g","trans_type":"tcc","steps":[],"retry_limit":1})");
  REQUIRE(tcc);
  CHECK(tcc->unread_fields == Fields{"steps"});
  auto xa = Register(R"({"gid":"g","trans_type":"xa","branch_id":"01","url":"http://p/xa",
    "confirm":"http://p/c","op":"action"})");
  REQUIRE(xa);
  CHECK(xa->unread_fields == Fields{"confirm", "op"});
  auto retry = ParseRetryNow(R"({"gid":"g","gdi":"g"})");
  REQUIRE(retry);
  CHECK(retry->unread_fields == Fields{"gdi"});
  auto topic = ParseDeleteTopic(R"({"topic":"t"})");
  REQUIRE(topic);
  CHECK(topic->unread_fields.empty());
}

TEST_CASE("a host's retry now names its host, and refuses anything else naming the member",
          "[parser][bad-input][retry-now]") {
  auto host = ParseRetryHost(R"({"host":"http://10.0.0.7:8081"})");
  REQUIRE(host);
  CHECK(host->host == "http://10.0.0.7:8081");
  CHECK(host->reason.empty());
  auto with_reason = ParseRetryHost(R"({"host":"http://a:1","reason":"the bank is back"})");
  REQUIRE(with_reason);
  CHECK(with_reason->reason == "the bank is back");
  CHECK(FieldOf(ParseRetryHost(R"({"host":"http://a:1","reason":7})")) == "reason");
  CHECK(FieldOf(ParseRetryHost("{}")) == "host");
  CHECK(FieldOf(ParseRetryHost(R"({"host":null})")) == "host");
  CHECK(FieldOf(ParseRetryHost(R"({"host":""})")) == "host");
  CHECK(FieldOf(ParseRetryHost(R"({"host":["http://a:1"]})")) == "host");
  CHECK(FieldOf(ParseRetryHost(R"({"host":"http://a:1","gid":"g1"})")) == "gid");
  CHECK(FieldOf(ParseRetryHost("[1]")) == "body");
}

TEST_CASE("malformed bodies are refused naming the body", "[parser][bad-input]") {
  CHECK(FieldOf(Prepare("")) == "body");
  CHECK(FieldOf(Prepare("   ")) == "body");
  CHECK(FieldOf(Prepare("{\"gid\":")) == "body");
  CHECK(FieldOf(Prepare("[1,2]")) == "body");
  CHECK(FieldOf(Prepare("\"gid\"")) == "body");
  CHECK(FieldOf(Prepare(std::string(100000, '['))) == "body");
  CHECK(FieldOf(Prepare("{\"gid\":\"g\",\"x\":\"\xff\xfe\"}")) == "body");
}

TEST_CASE("a missing or invalid gid is refused naming gid", "[parser][bad-input]") {
  CHECK(FieldOf(Prepare(R"({"trans_type":"tcc"})")) == "gid");
  CHECK(FieldOf(Prepare(R"({"gid":null,"trans_type":"tcc"})")) == "gid");
  CHECK(FieldOf(Prepare(R"({"gid":"","trans_type":"tcc"})")) == "gid");
  CHECK(FieldOf(Prepare(R"({"gid":42,"trans_type":"tcc"})")) == "gid");
  CHECK(FieldOf(Prepare(R"({"gid":"a b","trans_type":"tcc"})")) == "gid");
  CHECK(FieldOf(Prepare(R"({"gid":"../x","trans_type":"tcc"})")) == "gid");
  CHECK(FieldOf(Prepare(R"({"gid":")" + std::string(129, 'a') + R"(","trans_type":"tcc"})")) ==
        "gid");
}

TEST_CASE("unknown trans_types are refused naming trans_type", "[parser][bad-input]") {
  auto banana = Submit(R"({"gid":"g","trans_type":"banana"})");
  CHECK(FieldOf(banana) == "trans_type");
  CHECK_THAT(banana.status().message(), Catch::Contains("expected tcc, saga, msg, xa or workflow"));
  // A workflow's submit carries req_extra (its checks are the engine's).
  auto workflow = Submit(R"({"gid":"g","trans_type":"workflow","req_extra":{"status":"succeed"}})");
  REQUIRE(workflow);
  CHECK(workflow->req_extra.at("status") == "succeed");
  CHECK(FieldOf(Submit(R"({"gid":"g","trans_type":"workflow","req_extra":{"status":1}})")) ==
        "req_extra.status");
  CHECK(FieldOf(Submit(R"({"gid":"g"})")) == "trans_type");
  CHECK(FieldOf(Submit(R"({"gid":"g","trans_type":7})")) == "trans_type");
  auto saga_prepare = Prepare(R"({"gid":"g","trans_type":"saga"})");
  CHECK(FieldOf(saga_prepare) == "trans_type");
  CHECK_THAT(saga_prepare.status().message(),
             Catch::Contains("prepare applies to tcc, xa and msg transactions only"));
  CHECK(FieldOf(Abort(R"({"gid":"g","trans_type":"saga"})")) == "trans_type");
  auto msg_branch = Register(R"({"gid":"g","trans_type":"msg","branch_id":"01"})");
  CHECK_THAT(msg_branch.status().message(),
             Catch::Contains("registerBranch applies to tcc, xa and workflow transactions only"));
}

const char* kMsg = R"({"gid":"m1","trans_type":"msg",
  "steps":[{"action":"http://loyalty/points"},{"action":"topic://orders"}],
  "payloads":["{\"points\":10}","{}"],
  "query_prepared":"http://shop/query_prepared","custom_data":"{\"delay\":30}"})";

TEST_CASE("a message's prepare and submit carry steps, payloads, query_prepared and delay",
          "[parser][msg]") {
  auto prepare = Prepare(kMsg);
  REQUIRE(prepare);
  CHECK(prepare->trans_type == TransType::kMsg);
  REQUIRE(prepare->steps.size() == 2);
  CHECK(prepare->steps[0].action_url == "http://loyalty/points");
  CHECK(prepare->payloads[0] == R"({"points":10})");
  CHECK(prepare->steps[1].action_url == "topic://orders");
  CHECK(prepare->query_prepared == "http://shop/query_prepared");
  CHECK(prepare->options.delay == std::chrono::seconds(30));

  auto submit = Submit(kMsg);
  REQUIRE(submit);
  CHECK(submit->trans_type == TransType::kMsg);
  CHECK(submit->steps.size() == 2);
  // A message submitted without a prepare needs no query_prepared.
  auto direct = Submit(R"({"gid":"m","trans_type":"msg","steps":[{"action":"http://p/a"}],
    "payloads":[""]})");
  REQUIRE(direct);
  CHECK(direct->query_prepared.empty());
}

TEST_CASE("a message's bad fields are refused naming them", "[parser][msg][bad-input]") {
  const std::string head = R"({"gid":"m","trans_type":"msg",)";
  const std::string qp = R"("query_prepared":"http://shop/qp",)";
  const std::string one = R"("steps":[{"action":"http://p/a"}],"payloads":[""])";
  CHECK(FieldOf(Prepare(head + one + "}")) == "query_prepared");
  CHECK(FieldOf(Prepare(head + R"("query_prepared":"ftp://x",)" + one + "}")) == "query_prepared");
  CHECK(FieldOf(Prepare(head + R"("query_prepared":7,)" + one + "}")) == "query_prepared");
  CHECK(FieldOf(Prepare(head + qp + R"("payloads":[]})")) == "steps");
  CHECK(FieldOf(Prepare(head + qp + R"("steps":[],"payloads":[]})")) == "steps");
  CHECK(FieldOf(Prepare(head + qp + R"("steps":[{}],"payloads":[""]})")) == "steps[0].action");
  CHECK(FieldOf(Prepare(head + qp + R"("steps":[{"action":"topic://"}],"payloads":[""]})")) ==
        "steps[0].action");
  CHECK(FieldOf(Prepare(head + qp + R"("steps":[{"action":"topic://a b"}],"payloads":[""]})")) ==
        "steps[0].action");
  CHECK(FieldOf(Prepare(
            head + qp +
            R"("steps":[{"action":"http://p/a","compensate":"http://p/c"}],"payloads":[""]})")) ==
        "steps[0].compensate");
  CHECK(FieldOf(Prepare(head + qp + R"("steps":[{"action":"http://p/a"}]})")) == "payloads");
  CHECK(FieldOf(Prepare(head + qp + R"("steps":[{"action":"http://p/a"}],"payloads":[1]})")) ==
        "payloads[0]");
  CHECK(FieldOf(Prepare(head + qp + R"("custom_data":"{\"delay\":-1}",)" + one + "}")) ==
        "custom_data.delay");
  CHECK(FieldOf(Prepare(head + qp + R"("custom_data":"{\"delay\":\"soon\"}",)" + one + "}")) ==
        "custom_data.delay");
  CHECK(FieldOf(Prepare(head + qp + R"("custom_data":"later",)" + one + "}")) == "custom_data");
  CHECK(FieldOf(Submit(head + R"("retry_limit":-1,)" + one + "}")) == "retry_limit");
}

TEST_CASE("an XA branch registers its one phase-2 url", "[parser][xa]") {
  auto r = Register(R"({"gid":"x","trans_type":"xa","branch_id":"01","url":"http://db/xa"})");
  REQUIRE(r);
  CHECK(r->trans_type == TransType::kXa);
  CHECK(r->url == "http://db/xa");
  // TCC's members are not an XA's: whatever they hold is ignored.
  CHECK(Register(R"({"gid":"x","trans_type":"xa","branch_id":"01","url":"http://db/xa",
    "confirm":7,"cancel":{}})"));
  CHECK(FieldOf(Register(R"({"gid":"x","trans_type":"xa","branch_id":"01"})")) == "url");
  CHECK(FieldOf(Register(R"({"gid":"x","trans_type":"xa","branch_id":"01","url":"db/xa"})")) ==
        "url");
  auto prepare = Prepare(R"({"gid":"x","trans_type":"xa","timeout_to_fail":5})");
  REQUIRE(prepare);
  CHECK(prepare->trans_type == TransType::kXa);
  auto abort = Abort(R"({"gid":"x","trans_type":"xa"})");
  REQUIRE(abort);
  CHECK(abort->trans_type == TransType::kXa);
}

TEST_CASE("subscriptions name a topic and an http(s) url", "[parser][topics]") {
  QueryParams params{{"topic", "orders"}, {"url", "http://loyalty/points"}, {"remark", "x"}};
  auto r = ParseSubscribeQuery(params);
  REQUIRE(r);
  CHECK(r->topic == "orders");
  CHECK(r->url == "http://loyalty/points");
  CHECK(r->remark == "x");
  CHECK(FieldOf(Subscription(ParseSubscribeQuery({{"url", "http://a/b"}}))) == "topic");
  CHECK(FieldOf(Subscription(ParseSubscribeQuery({{"topic", "a/b"}, {"url", "http://a/b"}}))) ==
        "topic");
  CHECK(FieldOf(Subscription(ParseSubscribeQuery({{"topic", "t"}}))) == "url");
  CHECK(FieldOf(Subscription(ParseSubscribeQuery({{"topic", "t"}, {"url", "mailto:x"}}))) == "url");
  CHECK(FieldOf(Subscription(ParseSubscribeQuery(
            {{"topic", "t"}, {"url", "http://a/b"}, {"remark", std::string(2000, 'r')}}))) ==
        "remark");
  auto body = ParseSubscribeBody(R"({"topic":"t","url":"https://a/b"})");
  REQUIRE(body);
  CHECK(body->url == "https://a/b");
  CHECK(FieldOf(Subscription(ParseSubscribeBody(R"({"topic":"t","url":5})"))) == "url");
  CHECK(FieldOf(ParseDeleteTopic(R"({"topic":""})")) == "topic");
}

TEST_CASE("options of the wrong type are refused naming the option", "[parser][bad-input]") {
  const std::string head = R"({"gid":"g","trans_type":"tcc",)";
  CHECK(FieldOf(Prepare(head + R"("wait_result":"yes"})")) == "wait_result");
  CHECK(FieldOf(Prepare(head + R"("timeout_to_fail":-1})")) == "timeout_to_fail");
  CHECK(FieldOf(Prepare(head + R"("timeout_to_fail":1.5})")) == "timeout_to_fail");
  CHECK(FieldOf(Prepare(head + R"("request_timeout":"8"})")) == "request_timeout");
  CHECK(FieldOf(Prepare(head + R"("retry_interval":1e300})")) == "retry_interval");
  CHECK(FieldOf(Prepare(head + R"("retry_limit":-3})")) == "retry_limit");
  CHECK(FieldOf(Prepare(head + R"("branch_headers":["a"]})")) == "branch_headers");
  CHECK(FieldOf(Prepare(head + R"("branch_headers":{"X":1}})")) == "branch_headers.X");
  CHECK(FieldOf(Prepare(head + R"("branch_headers":{"X":"a\r\nEvil: 1"}})")) == "branch_headers.X");
  CHECK(FieldOf(Prepare(head + R"("branch_headers":{"Bad Name":"v"}})")) == "branch_headers");
  CHECK(FieldOf(Prepare(head + R"("custom_data":{}})")) == "custom_data");
}

TEST_CASE("registerBranch takes https URLs, in any case of the scheme", "[parser]") {
  auto parsed = Register(
      R"({"gid":"g","trans_type":"tcc","branch_id":"01","confirm":"https://bank.example/c",)"
      R"("cancel":"HTTPS://bank.example/x"})");
  REQUIRE(parsed);
  CHECK(parsed->confirm_url == "https://bank.example/c");
  CHECK(parsed->cancel_url == "HTTPS://bank.example/x");
}

TEST_CASE("registerBranch needs a branch id and http(s) URLs", "[parser][bad-input]") {
  const std::string head = R"({"gid":"g","trans_type":"tcc",)";
  CHECK(FieldOf(Register(head + R"("confirm":"http://p/c","cancel":"http://p/x"})")) ==
        "branch_id");
  CHECK(FieldOf(Register(head + R"("branch_id":"0 1","confirm":"http://p/c",
    "cancel":"http://p/x"})")) == "branch_id");
  CHECK(FieldOf(Register(head + R"("branch_id":"01","cancel":"http://p/x"})")) == "confirm");
  CHECK(FieldOf(Register(head + R"("branch_id":"01","confirm":"ftp://p/c",
    "cancel":"http://p/x"})")) == "confirm");
  CHECK(FieldOf(Register(head + R"("branch_id":"01","confirm":"http://p/c",
    "cancel":"ftp://p/x"})")) == "cancel");
  CHECK(FieldOf(Register(head + R"("branch_id":"01","data":{"amount":30},
    "confirm":"http://p/c","cancel":"http://p/x"})")) == "data");
}

TEST_CASE("a saga's steps and payloads must match and hold http URLs", "[parser][bad-input]") {
  const std::string head = R"({"gid":"g","trans_type":"saga",)";
  CHECK(FieldOf(Submit(head + R"("payloads":[]})")) == "steps");
  CHECK(FieldOf(Submit(head + R"("steps":[],"payloads":[]})")) == "steps");
  CHECK(FieldOf(Submit(head + R"("steps":{},"payloads":[]})")) == "steps");
  CHECK(FieldOf(Submit(head + R"("steps":[{"action":"http://p/a"}]})")) == "payloads");
  CHECK(FieldOf(Submit(head + R"("steps":[{"action":"http://p/a"}],"payloads":["",""]})")) ==
        "payloads");
  CHECK(FieldOf(Submit(head + R"("steps":[{"action":"http://p/a"}],"payloads":[{}]})")) ==
        "payloads[0]");
  CHECK(FieldOf(Submit(head + R"("steps":["http://p/a"],"payloads":[""]})")) == "steps[0]");
  CHECK(FieldOf(Submit(head + R"("steps":[{"compensate":"http://p/c"}],"payloads":[""]})")) ==
        "steps[0].action");
  CHECK(FieldOf(Submit(head + R"("steps":[{"action":"http://p/a"},{"action":"p/a"}],
    "payloads":["",""]})")) == "steps[1].action");
  CHECK(FieldOf(Submit(head + R"("steps":[{"action":"http://p/a","compensate":"x"}],
    "payloads":[""]})")) == "steps[0].compensate");
}

TEST_CASE("a saga's orders must name existing steps without cycles", "[parser][bad-input]") {
  auto with_orders = [](const std::string& orders) {
    return Submit(R"({"gid":"g","trans_type":"saga","concurrent":true,
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
  CHECK(FieldOf(ParseListQuery({{"trans_type", "banana"}})) == "trans_type");
  CHECK(ParseListQuery({{"trans_type", "workflow"}})->trans_type == TransType::kWorkflow);
  CHECK(ParseListQuery({{"trans_type", "msg"}})->trans_type == TransType::kMsg);
  CHECK(FieldOf(ParseListQuery({{"limit", "0"}})) == "limit");
  CHECK(FieldOf(ParseListQuery({{"limit", "1001"}})) == "limit");
  CHECK(FieldOf(ParseListQuery({{"limit", "ten"}})) == "limit");
  CHECK(FieldOf(ParseListQuery({{"position", "-1"}})) == "position");
  CHECK(FieldOf(ParseListQuery({{"stuck", "maybe"}})) == "stuck");
}

TEST_CASE("the search of /all reads a gid prefix, a time range and a host, or names the bad one",
          "[parser][bad-input]") {
  auto search = ParseListQuery({{"gid_prefix", "order-"},
                                {"create_time_start", "2026-11-22T10:00:00Z"},
                                {"create_time_end", "1795345200000"},
                                {"host", "HTTP://Bank:8080/api/TransIn?x=1"}});
  REQUIRE(search);
  CHECK(search->gid_prefix == "order-");
  CHECK(search->create_time_start == FromUnixMillis(1'795'341'600'000));
  CHECK(search->create_time_end == FromUnixMillis(1'795'345'200'000));
  CHECK(search->host == "http://bank:8080");
  CHECK(search->Searches());
  CHECK_FALSE(ParseListQuery({{"status", "failed"}})->Searches());

  // DTM's names, in Unix milliseconds; an empty one is absent, as DTM's server takes it.
  auto dtm = ParseListQuery({{"createTimeStart", "1795341600000"}, {"createTimeEnd", ""}});
  REQUIRE(dtm);
  CHECK(dtm->create_time_start == FromUnixMillis(1'795'341'600'000));
  CHECK_FALSE(dtm->create_time_end.has_value());
  // Settle's name wins over DTM's.
  CHECK(ParseListQuery({{"create_time_end", "5"}, {"createTimeEnd", "9"}})->create_time_end ==
        FromUnixMillis(5));

  CHECK(ParseListQuery({{"host", "http://bank"}})->host == "http://bank:80");
  CHECK(ParseListQuery({{"host", "https://[::1]"}})->host == "https://[::1]:443");
  CHECK(ParseListQuery({{"host", "grpc://Bank:50051"}})->host == "grpc://bank:50051");
  CHECK(ParseListQuery({{"host", "bank:50051/busi.Busi/TransIn"}})->host == "grpc://bank:50051");

  // An empty parameter counts as absent, as every other one of /all.
  CHECK_FALSE(
      ParseListQuery({{"gid_prefix", ""}, {"create_time_start", ""}, {"host", ""}})->Searches());
  CHECK(FieldOf(ParseListQuery({{"gid_prefix", "a/b"}})) == "gid_prefix");
  CHECK(FieldOf(ParseListQuery({{"gid_prefix", "a%"}})) == "gid_prefix");
  CHECK(FieldOf(ParseListQuery({{"gid_prefix", std::string(129, 'a')}})) == "gid_prefix");
  CHECK(FieldOf(ParseListQuery({{"create_time_start", "yesterday"}})) == "create_time_start");
  CHECK(FieldOf(ParseListQuery({{"createTimeStart", "-5"}})) == "createTimeStart");
  CHECK(FieldOf(ParseListQuery({{"create_time_end", "2026-11-22"}})) == "create_time_end");
  CHECK(FieldOf(ParseListQuery({{"createTimeEnd", "x"}})) == "createTimeEnd");
  CHECK(FieldOf(ParseListQuery({{"create_time_start", "10"}, {"create_time_end", "9"}})) ==
        "create_time_end");
  for (const char* bad : {"other", "ftp://bank:21", "http://", "http://bank:0", "bank"}) {
    INFO(bad);
    CHECK(FieldOf(ParseListQuery({{"host", bad}})) == "host");
  }
}

}  // namespace
}  // namespace settle::api
