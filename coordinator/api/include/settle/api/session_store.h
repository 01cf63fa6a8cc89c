#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "settle/api/access_tokens.h"
#include "settle/core/clock.h"
#include "settle/core/status.h"

namespace settle::api {

// How long a console session lasts, and how many may live at once.
struct SessionStoreOptions {
  Duration lifetime{8 * 3600 * 1000};
  std::size_t max_sessions = 1000;
};

// The admin console's sign-in sessions, in memory: an opaque random id (what the browser's
// cookie holds, never the token) -> the name and access level of the token signed in with.
//
// - An id is 32 bytes from OpenSSL's RAND_bytes, in base64url without padding (43
//   characters). Only its SHA-256 is kept, so that neither a look-up's timing nor a dump of
//   this memory gives a live id away.
// - A session lasts `lifetime` from its creation (on the clock's monotonic reading), then
//   grants nothing; Remove ends it sooner (signing out).
// - At most `max_sessions` live at once: creating one more drops the oldest first.
// - Sessions are lost when settled restarts (every console signs in again). Tokens are read
//   at start only, so a session cannot outlive its token within one run.
//
// Lifetime: `clock` must outlive it. Thread-safe.
class SessionStore {
 public:
  using Options = SessionStoreOptions;

  explicit SessionStore(const Clock& clock, Options options = {});

  // A new session for `caller`; returns its id. Internal if the random generator fails.
  Result<std::string> Create(Caller caller);
  // The caller of session `id`; nullopt when unknown, signed out or expired.
  std::optional<Caller> Find(std::string_view id) const;
  // Ends session `id`; nothing if there is none.
  void Remove(std::string_view id);
  // Live sessions (expired ones may be counted until the next Create drops them).
  std::size_t size() const;

  const Options& options() const { return options_; }

 private:
  struct Session {
    Caller caller;
    MonoTime created;
  };

  const Clock& clock_;
  const Options options_;
  mutable std::mutex mutex_;
  std::map<std::string, Session> sessions_;  // guarded by mutex_; by SHA-256 of the id
};

}  // namespace settle::api
