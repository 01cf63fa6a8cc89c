#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "settle/net/message.h"

namespace settle::net {

// Routes by exact path, then method. A known path asked with another method is told which
// methods it has (405 with Allow), an unknown one is a 404: every server of the project
// answers both the same way.
//
// Not thread-safe while routes are added: fill it before serving; Find is then safe from any
// threads at once (it only reads). A found Route is a pointer into the table, valid while the
// table lives and no route is added.
template <typename Route>
class RouteTable {
 public:
  void Add(std::string method, std::string path, Route route) {
    routes_[std::move(path)].insert_or_assign(std::move(method), std::move(route));
  }

  struct Found {
    const Route* route = nullptr;  // null: no route for this method
    std::string allow;             // when null: the path's methods ("GET, POST"), or "" (404)
  };

  Found Find(std::string_view method, std::string_view path) const {
    auto by_path = routes_.find(path);
    if (by_path == routes_.end()) return {};
    auto by_method = by_path->second.find(method);
    if (by_method != by_path->second.end()) return {&by_method->second, {}};
    Found found;
    for (const auto& [known, route] : by_path->second) {
      found.allow += found.allow.empty() ? known : ", " + known;
    }
    return found;
  }

 private:
  std::map<std::string, std::map<std::string, Route, std::less<>>, std::less<>> routes_;
};

// The answer to a request no route takes: 404, or 405 with Allow when `allow` is not empty.
inline Response NoRoute(const Request& request, const std::string& allow) {
  if (allow.empty()) {
    return Response{404, "application/json",
                    MessageBody("no route for " + request.method + " " + request.path)};
  }
  return Response{
      405,
      "application/json",
      MessageBody(request.method + " " + request.path + ": method not allowed (" + allow + ")"),
      {{"Allow", allow}}};
}

}  // namespace settle::net
