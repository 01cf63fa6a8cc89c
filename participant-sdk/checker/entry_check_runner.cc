#include "entry_check_runner.h"

#include <utility>
#include <vector>

#include "state_effect.h"

namespace settle::checker {
namespace {

constexpr const char* kKeyHeader = "Idempotency-Key";

enum Index : std::size_t { kMissingKey, kInvalidKey, kRepeat, kOtherBody, kConcurrent, kCount };

bool Succeeded(const Answer& answer) {
  return answer.answered() && answer.http_status >= 200 && answer.http_status < 300;
}

bool SameAnswer(const Answer& a, const Answer& b) {
  return a.answered() && b.answered() && a.http_status == b.http_status && a.body == b.body;
}

// "HTTP 201": the status alone, where the body is known to be the same.
std::string StatusText(const Answer& answer) {
  return "HTTP " + std::to_string(answer.http_status);
}

// "" when `answer` has status `expected`; otherwise what `who` answered instead.
std::string Expect(const std::string& who, const Answer& answer, int expected) {
  if (answer.answered() && answer.http_status == expected) return {};
  return who + " answered " + answer.DescribeHttp() + ", expected " + std::to_string(expected);
}

std::string ExpectSuccess(const std::string& who, const Answer& answer) {
  if (Succeeded(answer)) return {};
  return who + " answered " + answer.DescribeHttp() + ", expected 2xx";
}

// What the answers to simultaneous duplicates say.
struct Burst {
  std::string problem;            // the first thing wrong, or ""
  std::optional<Answer> success;  // the one 2xx answer
  std::size_t successes = 0;
  std::size_t conflicts = 0;  // 409s with Retry-After
};

// Every answer must be the one 2xx answer (the same status and body) or a 409 with
// Retry-After, and one at least the 2xx.
Burst JudgeBurst(const std::vector<Answer>& answers) {
  Burst burst;
  for (const Answer& answer : answers) {
    if (Succeeded(answer)) {
      ++burst.successes;
      if (!burst.success) {
        burst.success = answer;
      } else if (!SameAnswer(answer, *burst.success)) {
        burst.problem = "two of the simultaneous POSTs with one key answered differently: " +
                        burst.success->DescribeHttp() + " and " + answer.DescribeHttp();
        return burst;
      }
    } else if (answer.answered() && answer.http_status == 409) {
      ++burst.conflicts;
      if (answer.Header("Retry-After") == nullptr) {
        burst.problem = "a simultaneous POST answered 409 without Retry-After";
        return burst;
      }
    } else {
      burst.problem = "a simultaneous POST answered " + answer.DescribeHttp() +
                      ", expected the one 2xx answer or 409 with Retry-After";
      return burst;
    }
  }
  if (!burst.success) {
    burst.problem =
        "none of the " + std::to_string(answers.size()) + " simultaneous POSTs answered 2xx";
  }
  return burst;
}

// A key that no guard accepts: visible ASCII only, and a space is not visible.
std::string InvalidKeyFrom(const std::string& key) { return key + " invalid"; }

}  // namespace

EntryCheckRunner::EntryCheckRunner(ParticipantClient& client, EntrySettings settings)
    : client_(client), settings_(std::move(settings)), state_(client, settings_.state_url) {}

std::size_t EntryCheckRunner::size() const { return kCount; }

std::string EntryCheckRunner::KeyFor(std::size_t index) const {
  return settings_.key_prefix + "-" + std::to_string(index + 1);
}

SummaryLabels EntryCheckRunner::Labels() const {
  return {"entry point", "keys " + KeyFor(0) + " to " + KeyFor(size() - 1),
          state_.enabled() ? "" : "whether a request was applied once or not at all"};
}

Result<CheckOutcome> EntryCheckRunner::Run(std::size_t index) {
  switch (index) {
    case kMissingKey:
      return MissingKey();
    case kInvalidKey:
      return InvalidKey(index);
    case kRepeat:
      return Repeat(index);
    case kOtherBody:
      return OtherBody(index);
    default:
      return Concurrent(index);
  }
}

Result<Answer> EntryCheckRunner::Post(const std::string& body,
                                      const std::optional<std::string>& key) {
  HttpCall call{"POST", settings_.url, {}, body};
  if (key) call.headers.emplace_back(kKeyHeader, *key);
  Answer answer = client_.Call(call);
  if (answer.delivery == Answer::Delivery::kUnreachable) {
    return Status::Unavailable("cannot reach the entry point at " + settings_.url + ": " +
                               answer.error);
  }
  return answer;
}

Result<CheckOutcome> EntryCheckRunner::Judge(const Unchanged& check) {
  std::string problem;
  if (check.setup) {
    Result<std::string> wrong = check.setup();
    if (!wrong) return wrong.status();
    problem = *wrong;
  }
  std::optional<std::string> before;
  std::optional<std::string> after;
  if (problem.empty() && state_.enabled()) {
    Result<StateReader::Reading> reading = state_.Read();
    if (!reading) return reading.status();
    before = reading->body;
    problem = reading->problem;
  }
  if (problem.empty()) {
    Result<std::string> wrong = check.probe();
    if (!wrong) return wrong.status();
    problem = *wrong;
    if (before) {
      Result<StateReader::Reading> reading = state_.Read();
      if (!reading) return reading.status();
      after = reading->body;
      if (problem.empty()) problem = reading->problem;
    }
  }

  const bool changed = before && after && *before != *after;
  CheckOutcome outcome{Verdict::kFail, check.name, {}};
  if (!problem.empty()) {
    outcome.detail = problem;
    if (changed) outcome.detail += "; the state changed: " + StateDifference(*before, *after);
  } else if (!state_.enabled()) {
    outcome.verdict = Verdict::kUnverified;
    outcome.detail = check.answered + "; whether it changed nothing needs --state";
  } else if (changed) {
    outcome.detail = check.answered + " but changed the state: " + StateDifference(*before, *after);
  } else {
    outcome.verdict = Verdict::kPass;
    outcome.detail = check.answered + " and changed nothing";
  }
  if (outcome.verdict == Verdict::kFail && !check.key.empty()) {
    outcome.detail += " (key " + check.key + ")";
  }
  return outcome;
}

Result<CheckOutcome> EntryCheckRunner::MissingKey() {
  const std::string who = "a POST without " + std::string(kKeyHeader);
  if (settings_.key_optional) {
    // The request runs unguarded by design: it must work, and its effect is the service's.
    Result<Answer> answer = Post(settings_.body, std::nullopt);
    if (!answer) return answer.status();
    if (Succeeded(*answer)) {
      return CheckOutcome{Verdict::kPass, "missing key",
                          who + " answered " + StatusText(*answer) + " (--key-optional)"};
    }
    return CheckOutcome{Verdict::kFail, "missing key",
                        ExpectSuccess(who, *answer) + " (the key is optional: --key-optional)"};
  }
  return Judge({"missing key",
                "",
                {},
                [this, who]() -> Result<std::string> {
                  Result<Answer> answer = Post(settings_.body, std::nullopt);
                  if (!answer) return answer.status();
                  std::string wrong = Expect(who, *answer, 400);
                  if (!wrong.empty() && Succeeded(*answer)) {
                    wrong +=
                        ": it ran without a key (if the key is optional by design, run with "
                        "--key-optional)";
                  }
                  return wrong;
                },
                who + " answered HTTP 400"});
}

Result<CheckOutcome> EntryCheckRunner::InvalidKey(std::size_t index) {
  const std::string key = InvalidKeyFrom(KeyFor(index));
  const std::string who = "a POST with the invalid " + std::string(kKeyHeader) + " '" + key + "'";
  return Judge({"invalid key",
                key,
                {},
                [this, key, who]() -> Result<std::string> {
                  Result<Answer> answer = Post(settings_.body, key);
                  if (!answer) return answer.status();
                  return Expect(who, *answer, 400);
                },
                who + " answered HTTP 400"});
}

Result<CheckOutcome> EntryCheckRunner::Repeat(std::size_t index) {
  const std::string key = KeyFor(index);
  Answer first;  // Judge runs both steps before it returns
  return Judge({"repeat", key,
                [this, key, &first]() -> Result<std::string> {
                  Result<Answer> answer = Post(settings_.body, key);
                  if (!answer) return answer.status();
                  first = *answer;
                  return ExpectSuccess("the first POST", *answer);
                },
                [this, key, &first]() -> Result<std::string> {
                  Result<Answer> answer = Post(settings_.body, key);
                  if (!answer) return answer.status();
                  if (SameAnswer(*answer, first)) return std::string();
                  return "the second POST with the same key and body answered " +
                         answer->DescribeHttp() + ", expected the first's answer " +
                         first.DescribeHttp() + " byte for byte";
                },
                "a second POST with the same key and body got the first's answer"});
}

Result<CheckOutcome> EntryCheckRunner::OtherBody(std::size_t index) {
  const std::string key = KeyFor(index);
  const std::string who = "the same key with another body";
  return Judge({"other body", key,
                [this, key]() -> Result<std::string> {
                  Result<Answer> answer = Post(settings_.body, key);
                  if (!answer) return answer.status();
                  return ExpectSuccess("the first POST", *answer);
                },
                [this, key, who]() -> Result<std::string> {
                  Result<Answer> answer = Post(settings_.other_body, key);
                  if (!answer) return answer.status();
                  std::string wrong = Expect(who, *answer, 422);
                  if (!wrong.empty() && settings_.other_body_derived && Succeeded(*answer)) {
                    wrong +=
                        " (the other body is --body with a space appended; a service that "
                        "compares parsed JSON needs --other-body)";
                  }
                  return wrong;
                },
                who + " answered HTTP 422"});
}

Result<CheckOutcome> EntryCheckRunner::Concurrent(std::size_t index) {
  const std::string key = KeyFor(index);
  const std::string name = "concurrent duplicates";
  auto fail = [&](std::string detail) {
    return CheckOutcome{Verdict::kFail, name, std::move(detail) + " (key " + key + ")"};
  };

  // One request's effect, measured with a key of its own.
  std::optional<std::string> s0;
  std::optional<std::string> s1;
  if (state_.enabled()) {
    Result<StateReader::Reading> reading = state_.Read();
    if (!reading) return reading.status();
    if (!reading->body) return fail(reading->problem);
    s0 = reading->body;
    Result<Answer> single = Post(settings_.body, key + "-single");
    if (!single) return single.status();
    const std::string wrong = ExpectSuccess("the single POST that measures one request", *single);
    if (!wrong.empty()) return fail(wrong);
    reading = state_.Read();
    if (!reading) return reading.status();
    if (!reading->body) return fail(reading->problem);
    s1 = reading->body;
  }

  const std::size_t n = settings_.concurrency;
  const std::vector<Answer> answers = client_.CallAtOnce(std::vector<HttpCall>(
      n, HttpCall{"POST", settings_.url, {{kKeyHeader, key}}, settings_.body}));
  for (const Answer& answer : answers) {
    if (answer.delivery == Answer::Delivery::kUnreachable) {
      return Status::Unavailable("cannot reach the entry point at " + settings_.url + ": " +
                                 answer.error);
    }
  }
  Burst burst = JudgeBurst(answers);
  std::string& problem = burst.problem;
  // The repeat after the burst, whatever it answered: the state is read after it either way.
  Result<Answer> repeat = Post(settings_.body, key);
  if (!repeat) return repeat.status();
  if (problem.empty() && !SameAnswer(*repeat, *burst.success)) {
    problem = "the repeat after them answered " + repeat->DescribeHttp() + ", expected " +
              burst.success->DescribeHttp();
  }
  std::optional<std::string> s2;
  if (state_.enabled()) {
    Result<StateReader::Reading> reading = state_.Read();
    if (!reading) return reading.status();
    if (!reading->body && problem.empty()) problem = reading->problem;
    s2 = reading->body;
  }
  if (!problem.empty()) return fail(problem);

  const std::string answered = "of " + std::to_string(n) + " simultaneous POSTs with one key, " +
                               std::to_string(burst.successes) + " answered " +
                               StatusText(*burst.success) + " and " +
                               std::to_string(burst.conflicts) +
                               " answered 409 with Retry-After; a repeat after them got the "
                               "same answer";
  if (!state_.enabled()) {
    return CheckOutcome{Verdict::kUnverified, name,
                        answered + "; whether they were applied once needs --state"};
  }
  CheckOutcome outcome = JudgeEffect(*s0, *s1, *s2, answered);
  outcome.name = name;
  if (outcome.verdict == Verdict::kFail) outcome.detail += " (key " + key + ")";
  return outcome;
}

CheckOutcome EntryCheckRunner::JudgeEffect(const std::string& s0, const std::string& s1,
                                           const std::string& s2, const std::string& answered) {
  // Comparing the bodies byte for byte cannot work here: the burst comes after one request,
  // so even a correct service shows another state. Their effects are compared instead.
  std::string why;
  const std::optional<StateEffect> one = StateEffect::Between(s0, s1, why);
  const std::optional<StateEffect> all = one ? StateEffect::Between(s1, s2, why) : std::nullopt;
  if (!one || !all) {
    // Applied not at all can still be seen.
    if (s1 == s2 && s0 != s1) {
      return {Verdict::kFail,
              {},
              answered + " but they left the state as it was, and one request changes it"};
    }
    return {Verdict::kUnverified,
            {},
            answered + "; --state cannot show how often they were applied: " + why};
  }
  if (one->none()) {
    if (!all->none()) {
      return {Verdict::kFail,
              {},
              answered + " but they changed the state by " + all->ToString() +
                  ", and one request leaves it as it was"};
    }
    return {Verdict::kUnverified,
            {},
            answered +
                "; one request leaves --state as it was, so it cannot show how often "
                "they were applied"};
  }
  if (!(*one == *all)) {
    return {Verdict::kFail,
            {},
            answered + " but they changed the state by " + all->ToString() +
                ", and one request changes it by " + one->ToString()};
  }
  return {Verdict::kPass,
          {},
          answered + ", and together they changed the state as one request does (" +
              one->ToString() + ")"};
}

}  // namespace settle::checker
