#pragma once

#include <optional>
#include <string>

#include "settle/api/access_tokens.h"
#include "settle/api/authentication.h"
#include "settle/api/session_store.h"
#include "settle/net/message.h"

namespace settle::api {

// The admin console's own routes. The console is a static page whose script calls the API
// (/api/settle/all, /query, /resetNextCronTime, /forceStop) with the visitor's session.
//
// Sessions: with tokens configured, /admin without a session shows a sign-in form; posting a
// token that grants read access or more opens a session (SessionStore: an opaque random id ->
// the token's name and level, never the token) and sets the cookie
// "settle_session=<id>; Path=/; HttpOnly; SameSite=Strict[; Secure]; Max-Age=<lifetime>",
// Secure when settled serves HTTPS. The API accepts the session like the Authorization header's
// token (see SessionId). Signing out ends the session. Without tokens the console opens
// directly.
//
// Every page is sent with a Content-Security-Policy that allows only this origin's script and
// style, and is never cached.
//
// Lifetime: `tokens` and `sessions` must outlive it. Thread-safe: read-only once built (the
// sessions are thread-safe).
class AdminConsole {
 public:
  // `certificates`: client certificates are mapped too, so authentication is on even
  // without tokens (a mapped certificate opens the console without signing in). `https`: the
  // cookie is marked Secure.
  AdminConsole(const AccessTokens& tokens, SessionStore& sessions, bool certificates, bool https)
      : tokens_(tokens), sessions_(sessions), certificates_(certificates), https_(https) {}

  // GET /admin: the console, or the sign-in form (with `refusal`'s status, 401 or 403) saying
  // so when the request's console session is unknown or expired.
  net::Response Page(const Caller& caller, std::optional<RefusalReason> refusal) const;
  // GET /admin/console.js and /admin/console.css (read access: `refusal` says why not),
  // /admin/login.css (open).
  net::Response Asset(const std::string& path, std::optional<RefusalReason> refusal) const;
  // POST /admin/login, a form with `token`: 303 to /admin with the session cookie, or the
  // form again (401) saying the token was refused, and why (for the refusals' log).
  struct SignedIn {
    net::Response response;
    std::optional<RefusalReason> refused;
  };
  SignedIn SignIn(const net::Request& request) const;
  // POST /admin/logout: ends the request's session and clears the cookie, 303 to /admin.
  net::Response SignOut(const net::Request& request) const;
  // GET /: 303 to /admin.
  static net::Response RedirectFromRoot();

 private:
  net::Response SignInForm(int status, const std::string& error) const;

  // The cookie's attributes after its value.
  std::string CookieAttributes() const;

  const AccessTokens& tokens_;
  SessionStore& sessions_;
  const bool certificates_;
  const bool https_;
};

// The session id in the request's console session cookie, if it has one (not checked).
std::optional<std::string> SessionId(const net::Request& request);

// GET /api/admin/whoami: {"access":"read|client|admin","name":"<token's name>",
// "authentication":true|false}, so that the console can disable what the session may not do.
std::string WhoAmIResponseBody(const Caller& caller, bool authentication);

}  // namespace settle::api
