#pragma once

#include <string>
#include <utility>

#include "settle/core/status.h"
#include "settle/signing/refusal_kind.h"

namespace settle::signing {

// What a verifier decided about a signed call: accepted, or refused with a kind (for counting)
// and a Status (InvalidArgument with the reason, for the answer and the log). A reason never
// holds the words of a verdict (FAILURE, ONGOING, SUCCESS). Test it with ok(), as a Status.
class [[nodiscard]] Verdict {
 public:
  static Verdict Accept() { return Verdict(); }
  static Verdict Refuse(RefusalKind kind, std::string reason) {
    return Verdict(kind, Status::InvalidArgument(std::move(reason)));
  }

  bool ok() const { return status_.ok(); }
  // Why it was refused. REQUIRES: !ok().
  RefusalKind kind() const { return kind_; }
  // OK, or InvalidArgument with the reason.
  const Status& status() const { return status_; }
  const std::string& message() const { return status_.message(); }

 private:
  Verdict() = default;
  Verdict(RefusalKind kind, Status status) : status_(std::move(status)), kind_(kind) {}

  Status status_;
  RefusalKind kind_ = RefusalKind::kUnsigned;  // read only when refused
};

}  // namespace settle::signing
