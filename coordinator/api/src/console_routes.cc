// The routes a person or a probe reaches without DTM's API: /api/ping, /api/metrics, and the
// admin console's pages, its files, its sign-in and sign-out, and whoami (AdminConsole).
#include <optional>
#include <utility>

#include "api_server_impl.h"
#include "settle/metrics/prometheus_text.h"

namespace settle::api {

// Ping, metrics, and the console's pages and sign-in.
void ApiServer::Impl::RegisterConsoleRoutes() {
  AddRoute("GET", "/api/ping", Access::kNone, [](net::Request&) -> asio::awaitable<HttpAnswer> {
    co_return HttpAnswer{200, R"({"msg":"pong"})"};
  });
  AddPage("GET", "/api/metrics", Access::kRead, [this](const net::Request&, const Identified&) {
    return net::Response{200, metrics::PrometheusText::kContentType, MetricsText()};
  });
  // A browser pointed at the coordinator itself lands on the console.
  AddPage("GET", "/", Access::kNone,
          [](const net::Request&, const Identified&) { return AdminConsole::RedirectFromRoot(); });
  // The console's pages check access themselves: without it they answer with the sign-in form.
  AddPage("GET", "/admin", Access::kNone,
          [this](const net::Request& request, const Identified& identified) {
            return console.Page(identified.caller, ConsoleRefusal(request, identified));
          });
  AddPage("GET", "/admin/login.css", Access::kNone, [this](const net::Request&, const Identified&) {
    return console.Asset("/admin/login.css", std::nullopt);
  });
  for (const char* asset : {"/admin/console.js", "/admin/console.css"}) {
    AddPage("GET", asset, Access::kNone,
            [this](const net::Request& request, const Identified& identified) {
              return console.Asset(request.path, ConsoleRefusal(request, identified));
            });
  }
  AddPage("POST", "/admin/login", Access::kNone,
          [this](const net::Request& request, const Identified&) {
            AdminConsole::SignedIn signed_in = console.SignIn(request);
            if (signed_in.refused) {
              const bool empty = *signed_in.refused == RefusalReason::kNoCredentials;
              refusals.Refused(ApiPort::kHttp, request.remote_address, "POST /admin/login",
                               {true,
                                empty ? "the sign-in form had no token"
                                      : "the sign-in form's token is not accepted",
                                *signed_in.refused});
            }
            return std::move(signed_in.response);
          });
  AddPage(
      "POST", "/admin/logout", Access::kNone,
      [this](const net::Request& request, const Identified&) { return console.SignOut(request); });
  AddPage("GET", "/api/admin/whoami", Access::kRead,
          [this](const net::Request&, const Identified& identified) {
            return net::Response{200, kJson,
                                 WhoAmIResponseBody(identified.caller, authentication.enabled())};
          });
}

}  // namespace settle::api
