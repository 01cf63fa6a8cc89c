#include "state_reader.h"

#include <utility>

namespace settle::checker {

StateReader::StateReader(ParticipantClient& client, std::optional<std::string> url)
    : client_(client), url_(std::move(url)) {}

Status StateReader::Probe() const {
  if (!url_) return Status::Ok();
  const Answer answer = client_.GetState(*url_);
  if (answer.answered() && answer.http_status == 200) return Status::Ok();
  return Status::Unavailable("--state " + *url_ + ": " + (answer.answered() ? "answered " : "") +
                             answer.Describe() +
                             "; it must answer 200 with a body that shows the calls' effect");
}

Result<StateReader::Reading> StateReader::Read() const {
  const Answer answer = client_.GetState(*url_);
  if (answer.delivery == Answer::Delivery::kUnreachable) {
    return Status::Unavailable("cannot read the state at " + *url_ + ": " + answer.error);
  }
  Reading reading;
  if (!answer.answered() || answer.http_status != 200) {
    reading.problem = "could not read the state: " + answer.Describe();
  } else {
    reading.body = answer.body;
  }
  return reading;
}

std::string StateDifference(const std::string& before, const std::string& after) {
  std::string text = "before " + OneLine(before) + ", after " + OneLine(after);
  if (OneLine(before) == OneLine(after)) {
    std::size_t at = 0;
    while (at < before.size() && at < after.size() && before[at] == after[at]) ++at;
    text += " (they differ from byte " + std::to_string(at) + ")";
  }
  return text;
}

}  // namespace settle::checker
