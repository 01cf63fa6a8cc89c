#include "check_runner.h"

#include <cstdio>
#include <random>
#include <utility>

#include "answer.h"
#include "settle/core/grpc_target.h"

namespace settle::checker {
namespace {

constexpr const char* kBranchId = "01";

std::string ExpectedText(BranchResult expected) {
  return expected == BranchResult::kFailure ? "FAILURE (409)" : std::string(ToString(expected));
}

// How a refusal for the signature comes: 401 over HTTP, UNAUTHENTICATED over gRPC.
std::string RefusalText(bool grpc) { return grpc ? "gRPC UNAUTHENTICATED" : "HTTP 401"; }

std::string WrongAnswer(const PlannedCall& call, const Answer& answer, bool grpc) {
  return call.role + " answered " + answer.Describe() + ", expected " +
         (call.refused ? "a refusal for its signature (" + RefusalText(grpc) + ")"
                       : ExpectedText(call.expected));
}

// Whether `answer` is what `call` expects.
bool AsExpected(const PlannedCall& call, const Answer& answer) {
  if (call.refused) {
    constexpr int kUnauthenticated = 16;
    return answer.answered() && (answer.grpc_code >= 0 ? answer.grpc_code == kUnauthenticated
                                                       : answer.http_status == 401);
  }
  return answer.result() == call.expected;
}

}  // namespace

CheckRunner::CheckRunner(ParticipantClient& client, RunSettings settings)
    : client_(client), settings_(std::move(settings)), state_(client, settings_.state_url) {}

std::string CheckRunner::GidFor(std::size_t index) const {
  return settings_.gid_prefix + "-" + std::to_string(index + 1);
}

Status CheckRunner::ProbeState() { return state_.Probe(); }

Result<CheckOutcome> CheckRunner::Run(std::size_t index) {
  const Check& check = settings_.plan.checks[index];
  const std::string gid = GidFor(index);
  std::optional<Status> unreachable;

  // Calls `op`; records an unreachable participant and returns nullopt then.
  auto call = [&](BranchOp op, Signing signing = Signing::kSigned) -> std::optional<Answer> {
    const std::string& url = settings_.urls.at(op);
    Answer answer = client_.CallBranch(
        BranchCall{url, gid, settings_.plan.trans_type, kBranchId, op, settings_.body, signing});
    if (answer.delivery != Answer::Delivery::kUnreachable) return answer;
    unreachable =
        Status::Unavailable("cannot reach the participant at " + url + ": " + answer.error);
    return std::nullopt;
  };
  // Runs `calls` up to the first wrong answer; returns what was wrong, or "" (also when the
  // participant is unreachable: `unreachable` says so).
  auto run_calls = [&](const std::vector<PlannedCall>& calls) -> std::string {
    for (const PlannedCall& planned : calls) {
      std::optional<Answer> answer = call(planned.op, planned.signing);
      if (!answer) return {};
      if (!AsExpected(planned, *answer)) {
        return WrongAnswer(planned, *answer, LooksLikeGrpcTarget(settings_.urls.at(planned.op)));
      }
    }
    return {};
  };
  // Reads the state; nullopt with `problem` (or `unreachable`) set when it cannot be read.
  auto read_state = [&](std::string& problem) -> std::optional<std::string> {
    Result<StateReader::Reading> reading = state_.Read();
    if (!reading) {
      unreachable = reading.status();
      return std::nullopt;
    }
    if (!reading->body) problem = reading->problem;
    return reading->body;
  };

  std::string problem = run_calls(check.setup);
  std::optional<std::string> before;
  std::optional<std::string> after;
  if (problem.empty() && !unreachable) {
    if (state_.enabled()) before = read_state(problem);
    if (problem.empty() && !unreachable) problem = run_calls(check.probe);
    if (before && !unreachable) {
      std::string read_problem;
      after = read_state(read_problem);
      if (problem.empty()) problem = read_problem;
    }
  }
  // Releases what the check reserved, whatever its verdict; the answers are not judged.
  if (!unreachable) {
    for (BranchOp op : check.cleanup) {
      if (!call(op)) break;
    }
  }
  if (unreachable) return *unreachable;

  const std::string answered =
      check.subject +
      (check.probe.back().refused
           ? " was refused (" +
                 RefusalText(LooksLikeGrpcTarget(settings_.urls.at(check.probe.back().op))) + ")"
           : " answered " + std::string(ToString(check.probe.back().expected)));
  const bool changed = before && after && *before != *after;
  CheckOutcome outcome{Verdict::kFail, check.name, {}};
  if (!problem.empty()) {
    outcome.detail = problem;
    if (changed) outcome.detail += "; the state changed: " + StateDifference(*before, *after);
  } else if (!state_.enabled()) {
    outcome.verdict = Verdict::kUnverified;
    outcome.detail = answered + "; whether it " + check.effect + " needs --state";
  } else if (changed) {
    outcome.detail = answered + " but " + check.violation + ": " + StateDifference(*before, *after);
  } else {
    outcome.verdict = Verdict::kPass;
    outcome.detail = answered + " and " + check.effect;
  }
  if (outcome.verdict == Verdict::kFail) outcome.detail += " (gid " + gid + ")";
  return outcome;
}

std::string RandomGidPrefix() {
  std::random_device random;
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", static_cast<unsigned>(random()));
  return std::string("settle-check-") + hex;
}

}  // namespace settle::checker
