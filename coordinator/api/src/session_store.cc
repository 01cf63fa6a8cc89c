#include "settle/api/session_store.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <utility>

#include "settle/core/base64.h"

namespace settle::api {
namespace {

constexpr std::size_t kIdBytes = 32;

// The key a session is kept under: the SHA-256 of its id.
std::string KeyOf(std::string_view id) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (EVP_Digest(id.data(), id.size(), digest.data(), &length, EVP_sha256(), nullptr) != 1) {
    return "";  // finds nothing: every real key is 32 bytes long
  }
  return std::string(reinterpret_cast<const char*>(digest.data()), length);
}

// RFC 4648 §5: base64 with '-' and '_', no padding; what a cookie value carries as it is.
std::string Base64Url(std::string_view bytes) {
  std::string text = Base64Encode(bytes);
  while (!text.empty() && text.back() == '=') text.pop_back();
  std::replace(text.begin(), text.end(), '+', '-');
  std::replace(text.begin(), text.end(), '/', '_');
  return text;
}

}  // namespace

SessionStore::SessionStore(const Clock& clock, Options options)
    : clock_(clock), options_{options.lifetime, std::max<std::size_t>(options.max_sessions, 1)} {}

Result<std::string> SessionStore::Create(Caller caller) {
  std::array<unsigned char, kIdBytes> random{};
  if (RAND_bytes(random.data(), static_cast<int>(random.size())) != 1) {
    return Status::Internal("console session: the random generator failed");
  }
  std::string id =
      Base64Url(std::string_view(reinterpret_cast<const char*>(random.data()), random.size()));
  const std::string key = KeyOf(id);
  if (key.empty()) return Status::Internal("console session: SHA-256 failed");
  const MonoTime now = clock_.Monotonic();
  std::lock_guard lock(mutex_);
  std::erase_if(sessions_,
                [&](const auto& entry) { return now - entry.second.created >= options_.lifetime; });
  while (sessions_.size() >= options_.max_sessions) {
    sessions_.erase(std::min_element(
        sessions_.begin(), sessions_.end(),
        [](const auto& a, const auto& b) { return a.second.created < b.second.created; }));
  }
  sessions_[key] = Session{std::move(caller), now};
  return id;
}

std::optional<Caller> SessionStore::Find(std::string_view id) const {
  if (id.empty()) return std::nullopt;
  const std::string key = KeyOf(id);
  const MonoTime now = clock_.Monotonic();
  std::lock_guard lock(mutex_);
  const auto it = sessions_.find(key);
  if (it == sessions_.end() || now - it->second.created >= options_.lifetime) return std::nullopt;
  return it->second.caller;
}

void SessionStore::Remove(std::string_view id) {
  const std::string key = KeyOf(id);
  std::lock_guard lock(mutex_);
  sessions_.erase(key);
}

std::size_t SessionStore::size() const {
  std::lock_guard lock(mutex_);
  return sessions_.size();
}

}  // namespace settle::api
