#include "settle/sdk/cas_outcome.h"

namespace settle::sdk {

std::string_view ToString(CasOutcome outcome) {
  switch (outcome) {
    case CasOutcome::kApplied:
      return "applied";
    case CasOutcome::kAlreadyDone:
      return "already done";
    case CasOutcome::kConflict:
      return "conflict";
    case CasOutcome::kNotFound:
      return "not found";
  }
  return "unknown";
}

int HttpStatusOf(CasOutcome outcome) {
  switch (outcome) {
    case CasOutcome::kApplied:
    case CasOutcome::kAlreadyDone:
      return 200;
    case CasOutcome::kConflict:
      return 409;
    case CasOutcome::kNotFound:
      return 404;
  }
  return 500;
}

}  // namespace settle::sdk
