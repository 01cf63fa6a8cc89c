#include "settle/core/protocol_keys.h"

#include <algorithm>
#include <set>

#include "settle/core/ascii.h"
#include "settle/core/url.h"

namespace settle {
namespace {

// The fields settled writes, frames or signs on every HTTP branch call (docs/protocol.md §4.1,
// §4.9), and the ones a proxy or a participant may read as the call's own authority.
constexpr std::array<std::string_view, 10> kReservedHeaders = {
    "host",           "content-length",  "transfer-encoding", "connection",       "content-type",
    "content-digest", "signature-input", "signature",         "x-forwarded-host", "forwarded"};

// What gRPC sets on a call itself, on top of the HTTP names.
constexpr std::array<std::string_view, 2> kReservedGrpcHeaders = {"te", "user-agent"};

std::optional<std::string_view> AsProtocolKey(std::string_view name) {
  for (std::string_view key : kProtocolQueryKeys) {
    if (EqualsIgnoreAsciiCase(name, key)) return key;
  }
  return std::nullopt;
}

template <std::size_t N>
bool IsOneOf(std::string_view name, const std::array<std::string_view, N>& names) {
  return std::any_of(names.begin(), names.end(),
                     [&](std::string_view n) { return EqualsIgnoreAsciiCase(name, n); });
}

}  // namespace

std::optional<std::string_view> ProtocolKeyInQuery(std::string_view url) {
  const std::size_t question = url.find('?');
  if (question == std::string_view::npos) return std::nullopt;
  std::string_view query = url.substr(question + 1);
  query = query.substr(0, query.find('#'));
  while (!query.empty()) {
    const std::size_t end = query.find_first_of("&;");
    const std::string_view param = query.substr(0, end);
    if (auto key = AsProtocolKey(FormDecode(param.substr(0, param.find('=')))); key) return key;
    if (end == std::string_view::npos) break;
    query.remove_prefix(end + 1);
  }
  return std::nullopt;
}

bool IsReservedBranchHeader(std::string_view name) {
  return StartsWithIgnoreAsciiCase(name, "dtm-") || StartsWithIgnoreAsciiCase(name, "settle-") ||
         IsOneOf(name, kReservedHeaders);
}

bool IsReservedGrpcBranchHeader(std::string_view name) {
  return IsReservedBranchHeader(name) || IsOneOf(name, kReservedGrpcHeaders) ||
         StartsWithIgnoreAsciiCase(name, "grpc-") || name.starts_with(':');
}

std::optional<std::string_view> RepeatedProtocolKey(
    const std::multimap<std::string, std::string>& params) {
  std::array<int, kProtocolQueryKeys.size()> seen{};
  for (const auto& [name, value] : params) {
    const auto key = AsProtocolKey(name);
    if (!key) continue;
    ++seen[std::find(kProtocolQueryKeys.begin(), kProtocolQueryKeys.end(), *key) -
           kProtocolQueryKeys.begin()];
  }
  for (std::size_t i = 0; i < seen.size(); ++i) {
    if (seen[i] > 1) return kProtocolQueryKeys[i];
  }
  return std::nullopt;
}

std::optional<std::string> RepeatedDtmMetadataKey(const std::vector<std::string_view>& keys) {
  std::set<std::string> seen;
  for (std::string_view key : keys) {
    if (!StartsWithIgnoreAsciiCase(key, "dtm-")) continue;
    std::string lower = AsciiLowercase(key);
    if (!seen.insert(lower).second) return lower;
  }
  return std::nullopt;
}

}  // namespace settle
