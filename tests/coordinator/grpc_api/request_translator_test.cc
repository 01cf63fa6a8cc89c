// DTM's gRPC messages become the same typed requests as JSON bodies do, and the engine's
// refusals name the field with the proto's names (request_translator.h, grpc_status.h).
#include "settle/grpc_api/request_translator.h"

#include <catch2/catch.hpp>

#include <string>

#include "settle/engine/msg_engine.h"
#include "settle/engine/request_fields.h"
#include "settle/engine/transaction_types.h"
#include "settle/engine/two_phase_engine.h"
#include "settle/grpc_api/grpc_status.h"

namespace settle::grpc_api {
namespace {

dtmgimp::DtmRequest Saga() {
  dtmgimp::DtmRequest r;
  r.set_gid("s1");
  r.set_transtype("saga");
  r.set_steps(R"([{"action":"http://p/out","compensate":"http://p/outRevert"},)"
              R"({"action":"http://p/in","compensate":"http://p/inRevert"}])");
  r.add_binpayloads(std::string("\x0a\x02\x08\x1e", 4));  // protobuf bytes, kept as they are
  r.add_binpayloads("{}");
  r.mutable_transoptions()->set_retrylimit(3);
  r.mutable_transoptions()->set_timeouttofail(60);
  (*r.mutable_transoptions()->mutable_branchheaders())["Authorization"] = "Bearer t";
  r.set_customeddata(R"({"concurrent":true,"orders":{"1":[0]}})");
  return r;
}

// What a client sees for a request the translator or the engine refused.
std::string Refusal(const Status& s) {
  const grpc::Status g = ToGrpcStatus(s);
  REQUIRE(g.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  return g.error_message();
}

TEST_CASE("a saga's DtmRequest becomes the submit JSON would make", "[grpc][translator]") {
  auto r = ToSubmit(Saga());
  REQUIRE(r);
  CHECK(engine::CheckSubmit(*r).ok());
  CHECK(r->gid == "s1");
  CHECK(r->trans_type == TransType::kSaga);
  REQUIRE(r->steps.size() == 2);
  CHECK(r->steps[1].compensate_url == "http://p/inRevert");
  CHECK(r->payloads.at(0) == std::string("\x0a\x02\x08\x1e", 4));
  CHECK(r->options.retry_limit == 3);
  CHECK(r->options.timeout_to_fail == std::chrono::seconds(60));
  CHECK(r->options.branch_headers.at("Authorization") == "Bearer t");
  CHECK(r->options.concurrent);
  CHECK(r->options.orders.at(1) == std::vector<int>{0});
  CHECK(r->unread_fields.empty());
}

TEST_CASE("what DTM's Go dtmgrpc sends for a TCC is read, its null Steps included",
          "[grpc][translator][compat]") {
  dtmgimp::DtmRequest r;
  r.set_gid("t1");
  r.set_transtype("tcc");
  r.set_steps("null");
  r.mutable_transoptions();  // always sent, zeros
  auto prepare = ToPrepare(r);
  REQUIRE(prepare);
  CHECK(engine::CheckPrepare(*prepare).ok());
  CHECK(prepare->unread_fields.empty());
  CHECK_FALSE(prepare->options.timeout_to_fail);

  dtmgimp::DtmBranchRequest branch;
  branch.set_gid("t1");
  branch.set_transtype("tcc");
  branch.set_branchid("01");
  branch.set_busipayload("\x08\x1e");
  (*branch.mutable_data())["confirm"] = "http://p/confirm";
  (*branch.mutable_data())["cancel"] = "http://p/cancel";
  auto registered = ToRegisterBranch(branch);
  REQUIRE(registered);
  CHECK(registered->confirm_url == "http://p/confirm");
  CHECK(registered->data == "\x08\x1e");
  CHECK(engine::CheckRegisterBranch(*registered).ok());
  branch.set_transtype("xa");
  (*branch.mutable_data())["url"] = "http://p/xa";
  auto xa = ToRegisterBranch(branch);
  REQUIRE(xa);
  CHECK(xa->url == "http://p/xa");
  CHECK(engine::UnknownFields(xa->unread_fields).empty());  // confirm, cancel: DTM's
}

TEST_CASE("bad input is INVALID_ARGUMENT naming the field in the proto's names",
          "[grpc][translator][bad-input]") {
  dtmgimp::DtmRequest r = Saga();
  r.set_transtype("");
  CHECK_THAT(Refusal(ToSubmit(r).status()), Catch::StartsWith("TransType: required"));
  r.set_transtype("banana");
  CHECK_THAT(Refusal(ToSubmit(r).status()), Catch::StartsWith("TransType: unknown"));
  r = Saga();
  r.mutable_transoptions()->set_retryinterval(-1);
  CHECK_THAT(Refusal(ToSubmit(r).status()),
             Catch::StartsWith("TransOptions.RetryInterval: must be a whole number of seconds"));
  r = Saga();
  r.mutable_transoptions()->set_retrylimit(-1);
  CHECK_THAT(Refusal(ToSubmit(r).status()), Catch::StartsWith("TransOptions.RetryLimit:"));
  r = Saga();
  r.set_steps("[{\"action\":");
  CHECK_THAT(Refusal(ToSubmit(r).status()), Catch::StartsWith("Steps: malformed JSON"));
  r.set_steps(R"({"action":"http://p/a"})");
  CHECK_THAT(Refusal(ToSubmit(r).status()), Catch::StartsWith("Steps: must be a JSON array"));
  r.set_steps(std::string(100, '[') + std::string(100, ']'));
  CHECK_THAT(Refusal(ToSubmit(r).status()), Catch::StartsWith("Steps: nested deeper than"));
  r = Saga();
  r.set_customeddata("not json");
  CHECK_THAT(Refusal(ToSubmit(r).status()), Catch::StartsWith("CustomedData: must be a JSON"));

  // The engine's refusals, reworded.
  r = Saga();
  r.add_binpayloads("extra");
  auto three = ToSubmit(r);
  REQUIRE(three);
  CHECK_THAT(Refusal(engine::CheckSubmit(*three)), Catch::StartsWith("BinPayloads: 3 payloads"));
  r = Saga();
  r.set_steps(R"([{"action":"ftp://p/a"},{"action":"http://p/b"}])");
  auto ftp = ToSubmit(r);
  REQUIRE(ftp);
  CHECK_THAT(Refusal(engine::CheckSubmit(*ftp)), Catch::StartsWith("Steps[0].action:"));
  r = Saga();
  r.set_gid("a b");
  CHECK_THAT(Refusal(engine::CheckSubmit(*ToSubmit(r))), Catch::StartsWith("Gid: must be"));

  dtmgimp::DtmBranchRequest branch;
  branch.set_gid("t1");
  branch.set_transtype("tcc");
  CHECK_THAT(Refusal(ToRegisterBranch(branch).status()), Catch::StartsWith("BranchID: required"));
  branch.set_branchid("01");
  (*branch.mutable_data())["confirm"] = "http://p/confirm";
  CHECK_THAT(Refusal(engine::CheckRegisterBranch(*ToRegisterBranch(branch))),
             Catch::StartsWith("Data.cancel:"));
  dtmgimp::DtmTopicRequest topic;
  topic.set_topic("t");
  topic.set_url("mailto:x");
  CHECK_THAT(ToGrpcStatus(engine::CheckSubscription(*ToSubscription(topic)), "URL").error_message(),
             Catch::StartsWith("URL:"));
}

TEST_CASE("field numbers this build does not know and unread step members are listed",
          "[grpc][translator][fields]") {
  dtmgimp::DtmRequest r = Saga();
  r.set_steps(R"([{"action":"http://p/a","actoin":"x"},{"action":"http://p/b"}])");
  r.GetReflection()->MutableUnknownFields(&r)->AddVarint(42, 1);
  dtmgimp::DtmTransOptions* options = r.mutable_transoptions();
  options->GetReflection()->MutableUnknownFields(options)->AddVarint(12, 1);
  auto parsed = ToSubmit(r);
  REQUIRE(parsed);
  CHECK(engine::UnknownFields(parsed->unread_fields) ==
        std::vector<std::string>{"#42", "#12", "steps[0].actoin"});
}

TEST_CASE("statuses map as DTM's clients read them", "[grpc][status]") {
  CHECK(ToGrpcStatus(Status::Ok()).ok());
  CHECK(ToGrpcStatus(Status::Conflict("gid g1 is failed")).error_code() ==
        grpc::StatusCode::ABORTED);
  CHECK(ToGrpcStatus(Status::NotFound("no transaction")).error_code() == grpc::StatusCode::ABORTED);
  CHECK(ToGrpcStatus(Status::Pending("still running")).error_code() ==
        grpc::StatusCode::FAILED_PRECONDITION);
  CHECK(ToGrpcStatus(Status::Unavailable("down")).error_code() == grpc::StatusCode::UNAVAILABLE);
  CHECK(ToGrpcStatus(Status::Internal("bug")).error_code() == grpc::StatusCode::INTERNAL);
  CHECK(InProtoNames("no field here") == "no field here");
  CHECK(InProtoNames("payloads[2]: x") == "BinPayloads[2]: x");
}

}  // namespace
}  // namespace settle::grpc_api
