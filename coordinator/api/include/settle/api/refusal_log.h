#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string_view>

#include "settle/api/authentication.h"
#include "settle/core/clock.h"
#include "settle/core/log_rate_limiter.h"

namespace settle::api {

// Where settled answered: its HTTP API's port (HTTP or HTTPS) or its gRPC API's.
enum class ApiPort { kHttp, kGrpc };
inline constexpr ApiPort kApiPorts[] = {ApiPort::kHttp, ApiPort::kGrpc};
std::string_view ToString(ApiPort port);  // "http", "grpc"

// What settled's own APIs refuse, logged and counted (docs/operations.md, "Refusals"): every
// 401 and 403 of the HTTP API, every UNAUTHENTICATED and PERMISSION_DENIED of the gRPC API,
// with the caller's address, the route or method and the reason (the refusal's message names
// a token's name, never a token); and every TLS handshake either port failed, with the peer's
// address (the HTTPS port's) and OpenSSL's reason.
//
// Logged as warnings, at most `limits.lines` lines per window for each (port, reason) and for
// the handshakes (core's LogRateLimiter): the last says that more are only counted, and how
// many were not logged is said once the window has ended, by the next line of that kind or
// by Flush(). The counters count every one.
//
// Lifetime: `clock` must outlive it. Thread-safety: every method from any thread.
class RefusalLog {
 public:
  explicit RefusalLog(const Clock& clock,
                      LogRateLimiter::Options limits = {.lines = 10, .window = Duration(60'000)});

  // `port` refused `action` ("POST /api/settle/submit", "Submit") asked from `address` (the
  // peer's IP address) with `refusal`.
  void Refused(ApiPort port, std::string_view address, std::string_view action,
               const Authentication::Refusal& refusal);
  // A TLS handshake of `port` with `address` failed for `reason`. The gRPC port's come from
  // gRPC's own log (app/grpc_log.h), which does not name the peer: `address` is empty.
  void HandshakeFailed(ApiPort port, std::string_view address, std::string_view reason);
  // Logs how many were not logged in windows that have ended. Every few seconds, so that the
  // count is told even when a flood stopped.
  void Flush();

  std::uint64_t refused(ApiPort port, RefusalReason reason) const {
    return refused_[Kind(port, reason)].load(std::memory_order_relaxed);
  }
  std::uint64_t handshake_failures(ApiPort port) const {
    return handshake_failures_[static_cast<std::size_t>(port)].load(std::memory_order_relaxed);
  }

 private:
  static constexpr std::size_t kReasons = std::size(kRefusalReasons);
  static constexpr std::size_t kRefusalKinds = std::size(kApiPorts) * kReasons;
  // The limiter's last kinds: the handshakes of each port.
  static constexpr std::size_t HandshakeKind(ApiPort port) {
    return kRefusalKinds + static_cast<std::size_t>(port);
  }
  static std::size_t Kind(ApiPort port, RefusalReason reason) {
    return static_cast<std::size_t>(port) * kReasons + static_cast<std::size_t>(reason);
  }
  // The lines that say how many of `kind` were not logged.
  void LogSuppressed(std::size_t kind, std::uint64_t suppressed) const;

  std::mutex mutex_;
  LogRateLimiter limiter_;  // guarded by mutex_
  std::array<std::atomic<std::uint64_t>, kRefusalKinds> refused_{};
  std::array<std::atomic<std::uint64_t>, std::size(kApiPorts)> handshake_failures_{};
};

}  // namespace settle::api
