#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

#include "settle/async/asio.h"

namespace settle::net {

// Ends a Client::Send before its timeout (ClientRequest::cancellation): Cancel stops the
// request where it is (resolving, connecting, in the TLS handshake, sending or waiting for the
// answer) and Send returns at once, Unavailable when nothing was sent and Pending when it was
// (the server may have acted on it), its message saying it was cancelled. A Send given one
// that is cancelled already ends before it connects. Its connection is closed, never pooled.
//
// Held by shared_ptr (Cancel keeps it alive until the Send has taken it in). Thread-safety:
// every method from any thread.
class Cancellation : public std::enable_shared_from_this<Cancellation> {
 public:
  Cancellation() = default;
  Cancellation(const Cancellation&) = delete;
  Cancellation& operator=(const Cancellation&) = delete;

  // Idempotent.
  void Cancel();
  bool cancelled() const;

  // For Client::Send, on the strand it runs on: what Cancel must do to the step under way
  // (close its socket), run on `strand` unless Detach comes first. False, and nothing kept,
  // when Cancel has been called already.
  bool Attach(asio::any_io_executor strand, std::function<void()> cut);
  // On the strand given to Attach, once the step is over: its cut is no longer run.
  void Detach();

 private:
  // On the attached strand: runs the cut of attachment `generation` if it is still attached.
  void RunCut(std::uint64_t generation);

  mutable std::mutex mu_;
  bool cancelled_ = false;         // guarded by mu_
  std::uint64_t attached_ = 0;     // the attachment in place, 0: none; guarded by mu_
  std::uint64_t attachments_ = 0;  // guarded by mu_
  asio::any_io_executor strand_;   // guarded by mu_
  std::function<void()> cut_;      // guarded by mu_
};

}  // namespace settle::net
