#include "settle/api/access_tokens.h"

#include <cstddef>

#include "settle/core/config_lines.h"

namespace settle::api {
namespace {

constexpr std::size_t kMinTokenLength = 16;
constexpr std::size_t kMaxTokenLength = 4096;

// Visible ASCII only: what an Authorization header carries without quoting.
bool IsTokenText(std::string_view token) {
  for (unsigned char c : token) {
    if (c <= 0x20 || c >= 0x7f) return false;
  }
  return true;
}

// Equal in time that depends only on the lengths, not on where the texts differ.
bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return diff == 0;
}

}  // namespace

std::string_view ToString(Access access) {
  switch (access) {
    case Access::kNone:
      return "none";
    case Access::kRead:
      return "read";
    case Access::kClient:
      return "client";
    case Access::kAdmin:
      return "admin";
  }
  return "none";
}

std::optional<Access> ParseAccess(std::string_view text) {
  for (Access a : {Access::kRead, Access::kClient, Access::kAdmin}) {
    if (text == ToString(a)) return a;
  }
  return std::nullopt;
}

Status AccessTokens::Add(Access level, std::string token, std::string name) {
  if (level == Access::kNone) return Status::InvalidArgument("token: a token must grant access");
  if (token.size() < kMinTokenLength || token.size() > kMaxTokenLength) {
    return Status::InvalidArgument("token: a " + std::string(ToString(level)) +
                                   " token must have 16 to 4096 characters");
  }
  if (!IsTokenText(token)) {
    return Status::InvalidArgument("token: a " + std::string(ToString(level)) +
                                   " token may only hold visible ASCII characters");
  }
  if (name.empty()) {
    std::size_t same_level = 1;
    for (const Token& t : tokens_) same_level += t.level == level ? 1 : 0;
    name = std::string(ToString(level)) + "-token-" + std::to_string(same_level);
  }
  tokens_.push_back(Token{level, std::move(token), std::move(name)});
  return Status::Ok();
}

Status AccessTokens::AddFromText(std::string_view text) {
  return ForEachConfigLine(text, [this](std::string_view line) {
    const std::size_t space = line.find_first_of(" \t");
    const std::optional<Access> level =
        space == std::string_view::npos ? std::nullopt : ParseAccess(line.substr(0, space));
    if (!level) return Status::InvalidArgument("expected \"<read|client|admin> <token>\"");
    // The token runs to the next blank; after it only a "# comment" may follow.
    std::string_view rest = TrimBlanks(line.substr(space + 1));
    const std::size_t blank = rest.find_first_of(" \t");
    const std::string_view token = rest.substr(0, blank);
    const std::string_view after =
        blank == std::string_view::npos ? std::string_view() : TrimBlanks(rest.substr(blank));
    if (!after.empty() && after.front() != '#') {
      return Status::InvalidArgument("a token may not contain blanks");
    }
    const std::string_view name = after.empty() ? after : TrimBlanks(after.substr(1));
    return Add(*level, std::string(token), std::string(name));
  });
}

Access AccessTokens::Grant(const std::string* authorization) const {
  return Identify(authorization).access;
}

Caller AccessTokens::Identify(const std::string* authorization) const {
  if (!enabled()) return Caller{Access::kAdmin, "anonymous"};
  if (authorization == nullptr) return Caller{};
  std::string_view value = TrimBlanks(*authorization);
  constexpr std::string_view kScheme = "bearer ";
  if (value.size() <= kScheme.size()) return Caller{};
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    if ((value[i] | 0x20) != kScheme[i]) return Caller{};
  }
  const std::string_view presented = TrimBlanks(value.substr(kScheme.size()));
  // Every token is compared, so the time taken does not tell which one matched.
  const Token* granted = nullptr;
  for (const Token& token : tokens_) {
    if (ConstantTimeEquals(presented, token.value) &&
        (granted == nullptr || token.level > granted->level)) {
      granted = &token;
    }
  }
  return granted == nullptr ? Caller{} : Caller{granted->level, granted->name};
}

}  // namespace settle::api
