#include "admin_console.h"

#include <chrono>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "admin_assets.h"
#include "settle/core/url.h"

namespace settle::api {
namespace {

constexpr std::string_view kCookieName = "settle_session";

using Headers = std::vector<std::pair<std::string, std::string>>;

Headers PageHeaders() {
  return {{"Content-Security-Policy",
           "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
           "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"},
          {"X-Content-Type-Options", "nosniff"},
          {"Referrer-Policy", "no-referrer"},
          {"Cache-Control", "no-store"}};
}

net::Response Page(int status, std::string content_type, std::string body) {
  return net::Response{status, std::move(content_type), std::move(body), PageHeaders()};
}

net::Response RedirectToConsole(std::string cookie) {
  net::Response response = Page(303, "text/plain; charset=utf-8", "See /admin\n");
  response.headers.emplace_back("Location", "/admin");
  if (!cookie.empty()) response.headers.emplace_back("Set-Cookie", std::move(cookie));
  return response;
}

std::string Replace(std::string_view text, std::string_view placeholder, const std::string& value) {
  std::string out(text);
  const std::size_t at = out.find(placeholder);
  if (at != std::string::npos) out.replace(at, placeholder.size(), value);
  return out;
}

// The value of `name` in a Cookie header ("a=1; b=2").
std::optional<std::string> CookieValue(std::string_view header, std::string_view name) {
  while (!header.empty()) {
    const std::size_t end = header.find(';');
    std::string_view pair = header.substr(0, end);
    header.remove_prefix(end == std::string_view::npos ? header.size() : end + 1);
    while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
    const std::size_t eq = pair.find('=');
    if (eq != std::string_view::npos && pair.substr(0, eq) == name) {
      return std::string(pair.substr(eq + 1));
    }
  }
  return std::nullopt;
}

std::string FormValue(const std::string& body, const std::string& name) {
  const auto params = net::ParseQueryString(body);
  const auto it = params.find(name);
  return it == params.end() ? std::string() : it->second;
}

}  // namespace

std::optional<std::string> SessionId(const net::Request& request) {
  const std::string* cookie = request.Header("Cookie");
  if (cookie == nullptr) return std::nullopt;
  std::optional<std::string> value = CookieValue(*cookie, kCookieName);
  if (!value || value->empty()) return std::nullopt;
  return value;
}

net::Response AdminConsole::Page(const Caller& caller, std::optional<RefusalReason> refusal) const {
  if (caller.access < Access::kRead) {
    return SignInForm(refusal ? StatusOf(*refusal) : 401,
                      refusal == RefusalReason::kStaleSession
                          ? "Your console session is unknown or expired: sign in again."
                          : "");
  }
  // The page is HTML and the name comes from the token file: only a placeholder is filled in
  // here; the script shows the name (from whoami) as text.
  const std::string access =
      tokens_.enabled() || certificates_
          ? "signed in with " + std::string(ToString(caller.access)) + " access"
          : "authentication is off";
  return api::Page(200, "text/html; charset=utf-8",
                   Replace(admin_assets::kConsoleHtml, "<!--ACCESS-->", access));
}

net::Response AdminConsole::RedirectFromRoot() { return RedirectToConsole(""); }

std::string WhoAmIResponseBody(const Caller& caller, bool authentication) {
  const nlohmann::json body = {{"access", ToString(caller.access)},
                               {"name", caller.name},
                               {"authentication", authentication}};
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

net::Response AdminConsole::Asset(const std::string& path,
                                  std::optional<RefusalReason> refusal) const {
  if (path == "/admin/login.css") {
    return api::Page(200, "text/css; charset=utf-8", std::string(admin_assets::kLoginCss));
  }
  if (refusal) {
    return api::Page(StatusOf(*refusal), "text/plain; charset=utf-8", "sign in at /admin\n");
  }
  if (path == "/admin/console.js") {
    return api::Page(200, "text/javascript; charset=utf-8", std::string(admin_assets::kConsoleJs));
  }
  return api::Page(200, "text/css; charset=utf-8", std::string(admin_assets::kConsoleCss));
}

net::Response AdminConsole::SignInForm(int status, const std::string& error) const {
  // `error` is one of this file's own sentences: nothing the visitor sent is echoed.
  return api::Page(status, "text/html; charset=utf-8",
                   Replace(admin_assets::kLoginHtml, "<!--ERROR-->", error));
}

std::string AdminConsole::CookieAttributes() const {
  return std::string("; Path=/; HttpOnly; SameSite=Strict") + (https_ ? "; Secure" : "");
}

AdminConsole::SignedIn AdminConsole::SignIn(const net::Request& request) const {
  const std::string token = FormValue(request.body, "token");
  const RefusalReason refused =
      token.empty() ? RefusalReason::kNoCredentials : RefusalReason::kUnknownToken;
  if (!tokens_.enabled()) {
    // Without tokens every token would be "granted" (authentication off, or judged by client
    // certificates alone): nothing to sign in with.
    return {SignInForm(401, certificates_ ? "Sign-in takes tokens, and settled has none: open "
                                            "the console with a client certificate that is "
                                            "mapped."
                                          : "Authentication is off: open the console directly."),
            refused};
  }
  const std::string header = "Bearer " + token;
  const Caller caller = tokens_.Identify(&header);
  if (token.empty() || caller.access < Access::kRead) {
    return {SignInForm(401, "That token is not accepted."), refused};
  }
  Result<std::string> id = sessions_.Create(caller);
  if (!id) return {SignInForm(503, "No session could be opened; try again."), std::nullopt};
  const long long max_age =
      std::chrono::duration_cast<std::chrono::seconds>(sessions_.options().lifetime).count();
  return {RedirectToConsole(std::string(kCookieName) + "=" + *id + CookieAttributes() +
                            "; Max-Age=" + std::to_string(max_age)),
          std::nullopt};
}

net::Response AdminConsole::SignOut(const net::Request& request) const {
  if (const std::optional<std::string> id = SessionId(request)) sessions_.Remove(*id);
  return RedirectToConsole(std::string(kCookieName) + "=" + CookieAttributes() + "; Max-Age=0");
}

}  // namespace settle::api
