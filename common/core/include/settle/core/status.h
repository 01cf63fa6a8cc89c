#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace settle {

// What went wrong, in the coordinator's vocabulary. Each code has exactly one HTTP mapping
// (common/http_status.h); library code never speaks HTTP.
enum class StatusCode {
  kOk,
  kInvalidArgument,    // the request is malformed; the message names the field
  kNotFound,           // the named thing does not exist
  kAlreadyExists,      // an insert found the key taken
  kConflict,           // well-formed but not allowed in the current state
  kPending,            // accepted, but the outcome is not known yet
  kUnavailable,        // storage or a peer is unavailable, or the process is shutting down
  kInternal,           // a bug
  kResourceExhausted,  // a limit of the caller's is reached (a quota); the message names it
};

std::string_view StatusCodeName(StatusCode code);

// A cheap value: OK carries no message. Functions that can fail return Status or Result<T>;
// exceptions from third-party libraries are caught at the edge and turned into a Status.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }
  static Status InvalidArgument(std::string m) {
    return {StatusCode::kInvalidArgument, std::move(m)};
  }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
  static Status Conflict(std::string m) { return {StatusCode::kConflict, std::move(m)}; }
  static Status Pending(std::string m) { return {StatusCode::kPending, std::move(m)}; }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
  static Status ResourceExhausted(std::string m) {
    return {StatusCode::kResourceExhausted, std::move(m)};
  }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "Conflict: gid g1 is aborting", or "OK".
  std::string ToString() const;

  // Explicitly drops a status whose failure the caller has decided not to act on.
  void IgnoreError() const {}

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// A value or the Status that explains its absence. Test it with `if (result)` or ok().
template <typename T>
class [[nodiscard]] Result {
 public:
  // Empty, with an Internal status: what a coroutine's completion gets when it threw.
  Result() = default;
  Result(T value) : value_(std::move(value)) {}          // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {}  // NOLINT: must not be OK

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }

  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  std::optional<T> value_;
  Status status_ = Status::Internal("Result holds no value");
};

}  // namespace settle
