#include "settle/api/requester.h"

namespace settle::api {

engine::Requester RequesterOf(const Caller& caller, bool authentication_enabled) {
  if (!authentication_enabled) return {};
  return {.name = caller.name, .own_only = caller.access == Access::kClient};
}

}  // namespace settle::api
