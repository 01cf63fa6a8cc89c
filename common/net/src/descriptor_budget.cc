#include "settle/net/descriptor_budget.h"

#include <sys/resource.h>

#include <algorithm>
#include <limits>
#include <utility>

namespace settle::net {
namespace {

std::string Describe(const ConnectionCap& cap) {
  return cap.flag + " " + std::to_string(cap.value);
}

}  // namespace

std::size_t DescriptorReserve(std::size_t limit) {
  return std::max(kMinDescriptorReserve, limit / 4);
}

Result<DescriptorBudget> FitConnections(std::size_t limit, const ConnectionCap& first,
                                        const ConnectionCap& second) {
  DescriptorBudget budget{.limit = limit,
                          .reserve = DescriptorReserve(limit),
                          .first = first.value,
                          .second = second.value};
  const std::size_t room = limit > budget.reserve ? limit - budget.reserve : 0;
  const std::string why = "the descriptor limit " + std::to_string(limit) +
                          " (RLIMIT_NOFILE, raised to its hard limit) less " +
                          std::to_string(budget.reserve) +
                          " kept for files, outgoing calls and logs leaves " +
                          std::to_string(room) + " for client connections";
  if (first.value + second.value <= room) return budget;

  std::size_t given = 0;
  std::string given_flags;
  std::size_t open = 0;  // the caps that may be lowered, summed
  for (const ConnectionCap* cap : {&first, &second}) {
    if (cap->value == 0) continue;
    if (cap->given) {
      given += cap->value;
      given_flags += (given_flags.empty() ? "" : " and ") + Describe(*cap);
    } else {
      open += cap->value;
    }
  }
  const std::size_t left = given <= room ? room - given : 0;
  const std::size_t needed = open == 0 ? 0
                                       : (first.value > 0 && !first.given ? 1 : 0) +
                                             (second.value > 0 && !second.given ? 1 : 0);
  if (given > room || left < needed) {
    return Status::InvalidArgument(
        (given_flags.empty() ? std::string("the client connections") : given_flags) +
        " do not fit: " + why +
        "; lower them, or raise the limit (ulimit -n, systemd's LimitNOFILE)");
  }
  for (auto [cap, fitted] :
       {std::pair{&first, &budget.first}, std::pair{&second, &budget.second}}) {
    if (cap->value == 0 || cap->given) continue;
    *fitted = std::max<std::size_t>(1, cap->value * left / open);
    budget.lowered.push_back(cap->flag + " lowered from " + std::to_string(cap->value) + " to " +
                             std::to_string(*fitted) + ": " + why +
                             (given_flags.empty() ? "" : ", with " + given_flags));
  }
  return budget;
}

std::size_t RaiseDescriptorLimit() {
  rlimit limits{};
  if (getrlimit(RLIMIT_NOFILE, &limits) != 0) return 1024;
  if (limits.rlim_cur < limits.rlim_max) {
    rlimit raised = limits;
    raised.rlim_cur = limits.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limits = raised;
  }
  if (limits.rlim_cur == RLIM_INFINITY ||
      limits.rlim_cur > std::numeric_limits<std::size_t>::max() / 2) {
    return std::numeric_limits<std::size_t>::max() / 2;
  }
  return static_cast<std::size_t>(limits.rlim_cur);
}

}  // namespace settle::net
