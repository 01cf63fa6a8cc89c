#include "settle/app/alert_budget.h"

namespace settle::app {

bool AlertBudget::Admit(const std::string& creator, TimePoint now, std::size_t& held_back) {
  held_back = 0;
  if (per_window_ == 0) return true;
  auto [it, first] = creators_.try_emplace(creator, Window{now});
  Window& w = it->second;
  if (!first && (now >= w.start + window_ || now < w.start)) {
    w.start = now;
    w.sent = 0;
  }
  if (w.sent >= per_window_) {
    ++w.held_back;
    return false;
  }
  ++w.sent;
  held_back = w.held_back;
  w.held_back = 0;
  return true;
}

}  // namespace settle::app
