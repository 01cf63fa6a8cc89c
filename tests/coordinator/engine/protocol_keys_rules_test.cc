// Every URL a request stores, and every branch header, is checked against the protocol's keys
// by the engine, whatever front door the request came through (protocol_keys.h,
// request_rules.h).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "settle/engine/msg_engine.h"
#include "settle/engine/transaction_types.h"
#include "settle/engine/two_phase_engine.h"

namespace settle::engine {
namespace {

using Catch::Matchers::Equals;

constexpr const char* kVictim = "?gid=VICTIM&trans_type=tcc&branch_id=02&op=confirm";

SubmitRequest Saga(const std::string& action, const std::string& compensate) {
  SubmitRequest r;
  r.gid = "s1";
  r.trans_type = TransType::kSaga;
  r.steps.push_back({"http://bank/ok", "http://bank/ok-undo"});
  r.steps.push_back({action, compensate});
  r.payloads = {"{}", "{}"};
  return r;
}

SubmitRequest Message(const std::string& action, const std::string& query_prepared) {
  SubmitRequest r;
  r.gid = "m1";
  r.trans_type = TransType::kMsg;
  r.steps.push_back({action, ""});
  r.payloads = {"{}"};
  r.query_prepared = query_prepared;
  return r;
}

PrepareRequest PreparedMessage(const std::string& action, const std::string& query_prepared) {
  PrepareRequest r;
  r.gid = "m1";
  r.trans_type = TransType::kMsg;
  r.steps.push_back({action, ""});
  r.payloads = {"{}"};
  r.query_prepared = query_prepared;
  return r;
}

RegisterBranchRequest Tcc(const std::string& confirm, const std::string& cancel) {
  RegisterBranchRequest r;
  r.gid = "t1";
  r.branch_id = "01";
  r.trans_type = TransType::kTcc;
  r.confirm_url = confirm;
  r.cancel_url = cancel;
  return r;
}

RegisterBranchRequest Xa(const std::string& url) {
  RegisterBranchRequest r;
  r.gid = "x1";
  r.branch_id = "01";
  r.trans_type = TransType::kXa;
  r.url = url;
  return r;
}

TEST_CASE("a saga step whose URL's query names a protocol key is refused, naming field and key",
          "[engine][protocol_keys]") {
  CHECK(CheckSubmit(Saga("http://bank/TransIn?account=2", "http://bank/Undo?gidx=1")).ok());
  CHECK_THAT(
      CheckSubmit(Saga(std::string("http://bank/api/TransInConfirm") + kVictim, "")).message(),
      Equals("steps[1].action: the query names \"gid\", which settled sets itself "
             "(protocol.md §4.1)"));
  const Status compensate = CheckSubmit(Saga("http://bank/in", "http://bank/undo?a=1;OP=cancel"));
  CHECK(compensate.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(compensate.message(), Equals("steps[1].compensate: the query names \"op\", which "
                                          "settled sets itself (protocol.md §4.1)"));
  CHECK_THAT(CheckSubmit(Saga("http://bank/in?tr%61ns_type=saga", "")).message(),
             Catch::StartsWith("steps[1].action: the query names \"trans_type\""));
}

TEST_CASE("a message's steps and query_prepared may not name a protocol key, at prepare or submit",
          "[engine][protocol_keys]") {
  CHECK(CheckSubmit(Message("http://bank/in", "http://bank/qp")).ok());
  CHECK_THAT(CheckSubmit(Message("http://bank/in?branch_id=01", "")).message(),
             Catch::StartsWith("steps[0].action: the query names \"branch_id\""));
  CHECK_THAT(CheckSubmit(Message("http://bank/in", "http://bank/qp?gid=other")).message(),
             Catch::StartsWith("query_prepared: the query names \"gid\""));
  CHECK(CheckPrepare(PreparedMessage("http://bank/in", "http://bank/qp")).ok());
  CHECK_THAT(
      CheckPrepare(PreparedMessage("http://bank/in?dtm=http://evil/", "http://bank/qp")).message(),
      Catch::StartsWith("steps[0].action: the query names \"dtm\""));
  CHECK_THAT(CheckPrepare(PreparedMessage("http://bank/in", "http://bank/qp?Op=msg")).message(),
             Catch::StartsWith("query_prepared: the query names \"op\""));
}

TEST_CASE("a TCC's confirm and cancel and an XA's url may not name a protocol key",
          "[engine][protocol_keys]") {
  CHECK(CheckRegisterBranch(Tcc("http://bank/c?x=1", "http://bank/k")).ok());
  CHECK_THAT(
      CheckRegisterBranch(Tcc(std::string("http://bank/c") + kVictim, "http://bank/k")).message(),
      Catch::StartsWith("confirm: the query names \"gid\""));
  CHECK_THAT(
      CheckRegisterBranch(Tcc("http://bank/c", "http://bank/k?branch_type=confirm")).message(),
      Catch::StartsWith("cancel: the query names \"branch_type\""));
  CHECK(CheckRegisterBranch(Xa("http://bank/xa")).ok());
  CHECK_THAT(CheckRegisterBranch(Xa("http://bank/xa?phase2_url=http://evil/")).message(),
             Catch::StartsWith("url: the query names \"phase2_url\""));
}

TEST_CASE("a topic's subscriber URL may not name a protocol key", "[engine][protocol_keys]") {
  SubscribeRequest r{.topic = "orders", .url = "http://bank/in?tenant=1"};
  CHECK(CheckSubscription(r).ok());
  r.url = "http://bank/in?GID=x";
  CHECK_THAT(CheckSubscription(r).message(),
             Equals("url: the query names \"gid\", which settled sets itself (protocol.md §4.1)"));
  // A subscriber stored before the check can still be removed; the address is still checked.
  CHECK(CheckUnsubscription(r).ok());
  r.url = "ftp://bank/in?gid=1";
  CHECK_THAT(CheckUnsubscription(r).message(), Catch::StartsWith("url: must be an http"));
}

TEST_CASE("branch headers may not name what settled sets or signs itself",
          "[engine][protocol_keys]") {
  for (const std::string name :
       {"dtm-gid", "DTM-OP", "Host", "content-length", "Transfer-Encoding", "Connection",
        "Content-Type", "Content-Digest", "Signature-Input", "Signature", "X-Forwarded-Host",
        "Forwarded", "Settle-Countersignature"}) {
    INFO(name);
    SubmitRequest saga = Saga("http://bank/in", "");
    saga.options.branch_headers[name] = "v";
    const Status s = CheckSubmit(saga);
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK_THAT(s.message(),
               Catch::StartsWith("branch_headers." + name + ": a header settled sets itself"));
    PrepareRequest tcc{.gid = "t1", .trans_type = TransType::kTcc};
    tcc.options.branch_headers[name] = "v";
    CHECK_THAT(CheckPrepare(tcc).message(), Catch::StartsWith("branch_headers." + name + ":"));
  }
  SubmitRequest fine = Saga("http://bank/in", "");
  fine.options.branch_headers = {
      {"Authorization", "Bearer t"}, {"X-Tenant", "acme"}, {"User-Agent", "me"}, {"te", "x"}};
  CHECK(CheckSubmit(fine).ok());
}

TEST_CASE("to gRPC participants, te and user-agent are reserved too", "[engine][protocol_keys]") {
  for (const std::string name : {"te", "user-agent", "User-Agent"}) {
    INFO(name);
    SubmitRequest saga = Saga("127.0.0.1:50051/bank.Bank/TransIn", "");
    saga.options.branch_headers[name] = "v";
    CHECK_THAT(CheckSubmit(saga).message(),
               Catch::StartsWith("branch_headers." + name + ": metadata gRPC or settled sets"));
  }
  SubmitRequest dtm = Saga("127.0.0.1:50051/bank.Bank/TransIn", "");
  dtm.options.branch_headers["dtm-op"] = "confirm";
  CHECK_THAT(CheckSubmit(dtm).message(), Catch::StartsWith("branch_headers.dtm-op: a header"));
}

}  // namespace
}  // namespace settle::engine
