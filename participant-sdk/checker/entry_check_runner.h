#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "answer.h"
#include "check_report.h"
#include "participant_client.h"
#include "settle/core/status.h"
#include "state_reader.h"

namespace settle::checker {

// What a run against an entry point needs.
struct EntrySettings {
  std::string url;                       // the entry point, POSTed to
  std::string body;                      // the request
  std::string other_body;                // another request, sent with a key already used
  bool other_body_derived = false;       // other_body is body plus a space (no --other-body)
  bool key_optional = false;             // the service runs a request without a key by design
  std::size_t concurrency = 8;           // how many duplicates go at once
  std::optional<std::string> state_url;  // without it, effects are UNVERIFIED
  std::string key_prefix;                // check i uses key "<prefix>-<i+1>"
};

// Checks that an HTTP entry point keeps the Idempotency-Key contract (the one IdempotencyGuard
// of settle/sdk/idempotency_guard.h keeps), one check at a time, each with keys of its own:
//
// - missing key: a POST without the header answers 400 and changes nothing (with
//   key_optional: it answers 2xx, as the request runs without a key).
// - invalid key: a key with a space in it answers 400 and changes nothing.
// - repeat: a first POST answers 2xx; the same key and body again gets the same status and
//   the same body, byte for byte, and changes nothing.
// - other body: after a first POST, the same key with other_body answers 422 and changes
//   nothing.
// - concurrent duplicates: `concurrency` POSTs with one key at once each get either the one
//   2xx answer (all the same) or 409 with Retry-After; a repeat after them gets that answer.
//   With a state URL, a single POST with a key of its own first measures one request's
//   effect; the burst and its repeat must change the state by as much (see StateEffect).
//
// Not thread-safe; `client` must outlive the runner.
class EntryCheckRunner {
 public:
  EntryCheckRunner(ParticipantClient& client, EntrySettings settings);

  std::size_t size() const;
  std::string KeyFor(std::size_t index) const;
  // What the summary names.
  SummaryLabels Labels() const;

  // As CheckRunner::ProbeState.
  Status ProbeState() const { return state_.Probe(); }

  // Runs check `index` (< size()) and judges it. Unavailable when the service could not be
  // reached at all: that check then has no verdict.
  Result<CheckOutcome> Run(std::size_t index);

 private:
  // One check whose probe must leave the state as it was: `setup` runs (a first POST), the
  // state is read, `probe` runs, the state is read again. Each returns what was wrong with
  // the answers, or "".
  struct Unchanged {
    std::string name;
    std::string key;  // for a FAIL line; empty: none was sent
    std::function<Result<std::string>()> setup;
    std::function<Result<std::string>()> probe;
    std::string answered;  // what the probe did when right: "a second POST ... got ..."
  };
  Result<CheckOutcome> Judge(const Unchanged& check);

  Result<CheckOutcome> MissingKey();
  Result<CheckOutcome> InvalidKey(std::size_t index);
  Result<CheckOutcome> Repeat(std::size_t index);
  Result<CheckOutcome> OtherBody(std::size_t index);
  Result<CheckOutcome> Concurrent(std::size_t index);
  // The concurrent check's verdict on the state: s0 before the single POST, s1 after it and
  // before the burst, s2 after the burst and its repeat. `answered` says what the answers
  // were. The outcome has no name.
  static CheckOutcome JudgeEffect(const std::string& s0, const std::string& s1,
                                  const std::string& s2, const std::string& answered);

  // POSTs `body` with Idempotency-Key `key` (none when nullopt). Unavailable when the service
  // cannot be reached.
  Result<Answer> Post(const std::string& body, const std::optional<std::string>& key);

  ParticipantClient& client_;
  EntrySettings settings_;
  StateReader state_;
};

}  // namespace settle::checker
