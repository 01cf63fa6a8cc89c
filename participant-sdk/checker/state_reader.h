#pragma once

#include <optional>
#include <string>

#include "participant_client.h"
#include "settle/core/status.h"

namespace settle::checker {

// Reads the --state URL: what shows a call's effect, compared byte for byte before and after.
// Without a URL, enabled() is false and nothing is read. `client` must outlive the reader;
// thread-safe as far as the client is.
class StateReader {
 public:
  StateReader(ParticipantClient& client, std::optional<std::string> url);

  bool enabled() const { return url_.has_value(); }

  // Reads the state once before any check, so that a --state URL that cannot work is told
  // apart from a service that breaks a guarantee. Unavailable unless it answers 200; OK when
  // there is no state URL.
  Status Probe() const;

  // One reading: the body of a 200, or `problem` saying why there is none ("could not read the
  // state: HTTP 500: ..."). Unavailable when the URL cannot be reached at all.
  struct Reading {
    std::optional<std::string> body;
    std::string problem;
  };
  Result<Reading> Read() const;

 private:
  ParticipantClient& client_;
  std::optional<std::string> url_;
};

// "before X, after Y", saying where they differ when the shortened texts look the same.
std::string StateDifference(const std::string& before, const std::string& after);

}  // namespace settle::checker
