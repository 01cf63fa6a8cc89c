#include "settle/net/cancellation.h"

#include <utility>

namespace settle::net {

void Cancellation::Cancel() {
  const std::lock_guard lock(mu_);
  if (cancelled_) return;
  cancelled_ = true;
  if (attached_ == 0) return;  // the Send sees the flag before its next step
  // The cut touches a socket that only the Send's strand may touch, and that lives only as
  // long as the step: it runs there, and only if that step is still the one attached.
  asio::post(strand_,
             [self = shared_from_this(), generation = attached_] { self->RunCut(generation); });
}

bool Cancellation::cancelled() const {
  const std::lock_guard lock(mu_);
  return cancelled_;
}

bool Cancellation::Attach(asio::any_io_executor strand, std::function<void()> cut) {
  const std::lock_guard lock(mu_);
  if (cancelled_) return false;
  attached_ = ++attachments_;
  strand_ = std::move(strand);
  cut_ = std::move(cut);
  return true;
}

void Cancellation::Detach() {
  const std::lock_guard lock(mu_);
  attached_ = 0;
  cut_ = nullptr;
}

void Cancellation::RunCut(std::uint64_t generation) {
  std::function<void()> cut;
  {
    const std::lock_guard lock(mu_);
    if (attached_ != generation) return;
    cut = cut_;
  }
  // On the step's strand, so Detach cannot run (nor the step end) until the cut is done.
  cut();
}

}  // namespace settle::net
