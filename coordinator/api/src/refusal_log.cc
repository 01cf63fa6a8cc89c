#include "settle/api/refusal_log.h"

#include <spdlog/spdlog.h>

#include <string>

namespace settle::api {
namespace {

constexpr std::string_view kMessagePrefix = "authorization: ";

std::string_view PortName(ApiPort port) { return port == ApiPort::kHttp ? "HTTP API" : "gRPC API"; }

}  // namespace

std::string_view ToString(ApiPort port) { return port == ApiPort::kHttp ? "http" : "grpc"; }

RefusalLog::RefusalLog(const Clock& clock, LogRateLimiter::Options limits)
    : limiter_(clock, kRefusalKinds + std::size(kApiPorts), limits) {}

void RefusalLog::Refused(ApiPort port, std::string_view address, std::string_view action,
                         const Authentication::Refusal& refusal) {
  const std::size_t kind = Kind(port, refusal.reason);
  refused_[kind].fetch_add(1, std::memory_order_relaxed);
  LogRateLimiter::Verdict verdict;
  {
    std::lock_guard lock(mutex_);
    verdict = limiter_.Admit(kind);
  }
  if (verdict.suppressed > 0) LogSuppressed(kind, verdict.suppressed);
  if (!verdict.log) return;
  std::string_view message = refusal.message;
  if (message.starts_with(kMessagePrefix)) message.remove_prefix(kMessagePrefix.size());
  spdlog::warn("{} refused {} from {}: {} reason={}: {}{}", PortName(port), action,
               address.empty() ? "an unknown address" : address, StatusOf(refusal.reason),
               ToString(refusal.reason), message,
               verdict.last ? fmt::format(" (further refusals of this reason on this port are "
                                          "only counted for the next {} s)",
                                          limiter_.options().window.count() / 1000)
                            : std::string());
}

void RefusalLog::HandshakeFailed(ApiPort port, std::string_view address, std::string_view reason) {
  handshake_failures_[static_cast<std::size_t>(port)].fetch_add(1, std::memory_order_relaxed);
  const std::size_t kind = HandshakeKind(port);
  LogRateLimiter::Verdict verdict;
  {
    std::lock_guard lock(mutex_);
    verdict = limiter_.Admit(kind);
  }
  if (verdict.suppressed > 0) LogSuppressed(kind, verdict.suppressed);
  if (!verdict.log) return;
  spdlog::warn("{}: TLS handshake from {} failed: {}{}", PortName(port),
               address.empty() ? "an address gRPC does not name" : address, reason,
               verdict.last ? fmt::format(" (further failed handshakes are only counted for the "
                                          "next {} s)",
                                          limiter_.options().window.count() / 1000)
                            : std::string());
}

void RefusalLog::Flush() {
  std::vector<LogRateLimiter::Ended> ended;
  {
    std::lock_guard lock(mutex_);
    ended = limiter_.TakeEnded();
  }
  for (const LogRateLimiter::Ended& e : ended) LogSuppressed(e.kind, e.suppressed);
}

void RefusalLog::LogSuppressed(std::size_t kind, std::uint64_t suppressed) const {
  const long long seconds = limiter_.options().window.count() / 1000;
  if (kind >= kRefusalKinds) {
    spdlog::warn(
        "{}: {} more failed TLS handshakes in {} s were not logged "
        "(settle_tls_handshake_failures_total counts them all)",
        PortName(kApiPorts[kind - kRefusalKinds]), suppressed, seconds);
    return;
  }
  const ApiPort port = kApiPorts[kind / kReasons];
  const RefusalReason reason = kRefusalReasons[kind % kReasons];
  spdlog::warn(
      "{}: {} more refusals with reason={} in {} s were not logged "
      "(settle_api_refusals_total counts them all)",
      PortName(port), suppressed, ToString(reason), seconds);
}

}  // namespace settle::api
