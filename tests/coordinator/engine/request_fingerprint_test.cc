// A repeated prepare or submit must match the request that created the transaction
// (request_fingerprint.h): identical repeats match, and the first field that differs is named.
#include "settle/engine/request_fingerprint.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace settle::engine {
namespace {

SubmitRequest Saga(std::size_t steps) {
  SubmitRequest r;
  r.gid = "s1";
  r.trans_type = TransType::kSaga;
  for (std::size_t i = 0; i < steps; ++i) {
    const std::string n = std::to_string(i);
    r.steps.push_back({"http://p/action" + n, "http://p/compensate" + n});
    r.payloads.push_back("{\"step\":" + n + "}");
  }
  return r;
}

PrepareRequest Message() {
  PrepareRequest r;
  r.gid = "m1";
  r.trans_type = TransType::kMsg;
  r.steps = {{"http://p/a", ""}, {"topic://orders", ""}};
  r.payloads = {"{}", "{\"n\":1}"};
  r.query_prepared = "http://shop/query";
  return r;
}

SubmitRequest SubmitOf(const PrepareRequest& prepare) {
  SubmitRequest r{prepare.gid, TransType::kMsg, prepare.options, prepare.steps, prepare.payloads};
  r.query_prepared = prepare.query_prepared;
  return r;
}

constexpr RepeatRules kMessageSubmit{.query_prepared_optional = true, .custom_data_ignored = true};

// How `repeat` compares with the fingerprint of `original`.
template <typename A, typename B>
Status Compare(const A& original, const B& repeat, RepeatRules rules = {}) {
  return MatchStored(original.gid, FingerprintOf(original), Repeat{FingerprintOf(repeat), rules});
}

TEST_CASE("an identical repeat matches, whatever it asks of the answer", "[fingerprint]") {
  SubmitRequest repeat = Saga(3);
  repeat.options.wait_result = true;  // changes only what this request's answer waits for
  repeat.unread_fields = {"protocol"};
  CHECK(Compare(Saga(3), repeat).ok());
  CHECK(Compare(Message(), Message()).ok());
}

TEST_CASE("a repeat with other steps or payloads is a Conflict naming the first difference",
          "[fingerprint]") {
  SubmitRequest other_step = Saga(3);
  other_step.steps[1].compensate_url = "http://p/elsewhere";
  Status s = Compare(Saga(3), other_step);
  CHECK(s.code() == StatusCode::kConflict);
  CHECK(s.message() ==
        "steps[1]: differs from the request that created gid s1; a repeated request must match "
        "that one, and nothing was changed");

  s = Compare(Saga(3), Saga(2));
  CHECK(s.code() == StatusCode::kConflict);
  CHECK_THAT(s.message(), Catch::StartsWith("steps: 2 here, 3 in the request that created gid s1"));

  SubmitRequest other_payload = Saga(3);
  other_payload.payloads[2] = "{\"step\":2} ";
  CHECK_THAT(Compare(Saga(3), other_payload).message(), Catch::StartsWith("payloads[2]: differs"));

  // Parts that only together make the same text are still told apart.
  SubmitRequest shifted = Saga(1);
  shifted.steps[0] = {"http://p/action0http://p/compensate", "0"};
  CHECK(Compare(Saga(1), shifted).code() == StatusCode::kConflict);
}

TEST_CASE("options that change what the transaction does are compared, with their values",
          "[fingerprint]") {
  PrepareRequest tcc;
  tcc.gid = "t1";
  tcc.options.retry_limit = 1;
  tcc.options.timeout_to_fail = std::chrono::seconds(30);

  PrepareRequest other = tcc;
  other.options.retry_limit = 2;
  CHECK_THAT(Compare(tcc, other).message(),
             Catch::StartsWith("retry_limit: 2 here, 1 in the request that created gid t1"));

  other = tcc;
  other.options.timeout_to_fail.reset();
  CHECK_THAT(Compare(tcc, other).message(),
             Catch::StartsWith("timeout_to_fail: not sent here, 30 in the request"));

  other = tcc;
  other.options.branch_headers["Authorization"] = "Bearer other";
  CHECK_THAT(Compare(tcc, other).message(), Catch::StartsWith("branch_headers: differs"));

  other = tcc;
  other.trans_type = TransType::kXa;
  CHECK_THAT(Compare(tcc, other).message(), Catch::StartsWith("trans_type: xa here, tcc in"));
}

TEST_CASE("a message's repeat compares query_prepared, its submit may leave it out",
          "[fingerprint][msg]") {
  PrepareRequest other = Message();
  other.query_prepared = "http://shop/other";
  CHECK_THAT(Compare(Message(), other).message(), Catch::StartsWith("query_prepared: differs"));

  SubmitRequest submit = SubmitOf(Message());
  CHECK(Compare(Message(), submit, kMessageSubmit).ok());
  submit.query_prepared.clear();
  CHECK(Compare(Message(), submit, kMessageSubmit).ok());
  CHECK_THAT(Compare(Message(), submit).message(),
             Catch::StartsWith("query_prepared: not sent here, but the request that created"));

  submit.steps[1].action_url = "topic://audit";
  CHECK_THAT(Compare(Message(), submit, kMessageSubmit).message(),
             Catch::StartsWith("steps[1]: differs"));
}

TEST_CASE("a message's submit may add custom_data (DTM's SDKs send the delay then)",
          "[fingerprint][msg]") {
  SubmitRequest submit = SubmitOf(Message());
  submit.options.custom_data = R"({"delay":10})";
  submit.options.delay = std::chrono::seconds(10);
  CHECK(Compare(Message(), submit, kMessageSubmit).ok());
  // Anything else is still compared.
  submit.options.retry_interval = std::chrono::seconds(3);
  CHECK_THAT(Compare(Message(), submit, kMessageSubmit).message(),
             Catch::StartsWith("retry_interval: 3 here, not sent in the request"));
  // A saga's custom_data holds its orders: compared.
  SubmitRequest concurrent = Saga(2);
  concurrent.options.custom_data = R"({"concurrent":true,"orders":{"1":[0]}})";
  CHECK_THAT(Compare(Saga(2), concurrent).message(), Catch::StartsWith("custom_data: differs"));
}

TEST_CASE("a transaction stored before fingerprints takes any repeat, as it did", "[fingerprint]") {
  CHECK(MatchStored("s1", "", Repeat{FingerprintOf(Saga(1)), {}}).ok());
}

TEST_CASE("a fingerprint holds no step's text, only digests and small values", "[fingerprint]") {
  SubmitRequest saga = Saga(1);
  saga.payloads[0] = "{\"card\":\"4111111111111111\"}";
  const std::string fingerprint = FingerprintOf(saga);
  CHECK(fingerprint.find("4111") == std::string::npos);
  CHECK(fingerprint.find("http://") == std::string::npos);
  CHECK_THAT(fingerprint, Catch::StartsWith("trans_type=saga\n"));
  CHECK_THAT(fingerprint, Catch::Contains("\nsteps=1\nsteps[0]=#"));
}

}  // namespace
}  // namespace settle::engine
