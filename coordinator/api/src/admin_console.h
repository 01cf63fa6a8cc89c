#pragma once

#include <optional>
#include <string>

#include "settle/api/access_tokens.h"
#include "settle/net/message.h"

namespace settle::api {

// The admin console's own routes. The console is a static page whose script calls the API
// (/api/settle/all, /query, /resetNextCronTime, /forceStop) with the visitor's session.
//
// Sessions: with tokens configured, /admin without a session shows a sign-in form; posting a
// token that grants read access or more sets an HttpOnly, SameSite=Strict cookie holding it,
// which the API accepts like the Authorization header (see SessionToken). Without tokens the
// console opens directly.
//
// Every page is sent with a Content-Security-Policy that allows only this origin's script and
// style, and is never cached.
//
// Lifetime: `tokens` must outlive it. Thread-safe: read-only once built.
class AdminConsole {
 public:
  // `certificates`: client certificates are mapped too, so authentication is on even
  // without tokens (a mapped certificate opens the console without signing in).
  explicit AdminConsole(const AccessTokens& tokens, bool certificates = false)
      : tokens_(tokens), certificates_(certificates) {}

  // GET /admin: the console, or (401) the sign-in form.
  net::Response Page(const Caller& caller) const;
  // GET /admin/console.js and /admin/console.css (read access), /admin/login.css (open).
  net::Response Asset(const std::string& path, Access granted) const;
  // POST /admin/login, a form with `token`: 303 to /admin with the session cookie, or the
  // form again (401) saying the token was refused.
  net::Response SignIn(const net::Request& request) const;
  // POST /admin/logout: clears the cookie, 303 to /admin.
  net::Response SignOut() const;
  // GET /: 303 to /admin.
  static net::Response RedirectFromRoot();

 private:
  net::Response SignInForm(int status, const std::string& error) const;

  const AccessTokens& tokens_;
  const bool certificates_;
};

// The token in the request's console session cookie, if it has one.
std::optional<std::string> SessionToken(const net::Request& request);

// GET /api/admin/whoami: {"access":"read|client|admin","name":"<token's name>",
// "authentication":true|false}, so that the console can disable what the session may not do.
std::string WhoAmIResponseBody(const Caller& caller, bool authentication);

}  // namespace settle::api
