#pragma once

#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

namespace settle::testing {

struct JsonResponse {
  int status = 0;     // 0: no HTTP answer
  std::string error;  // why not, when status is 0 ("TLS handshake with ... failed: ...")
  std::string body;
  std::string content_type;
  std::string www_authenticate;
  std::multimap<std::string, std::string> headers;  // every header of the answer
  nlohmann::json json;                              // parsed body; null when it is not JSON
};

// A keep-alive HTTP client for talking to settled or a participant on 127.0.0.1 (on the net
// room's client). With a CA file, it speaks HTTPS and trusts that CA; with a client
// certificate and key too, it presents them to a server that asks (mutual TLS). Not
// thread-safe: give each thread its own.
class JsonClient {
 public:
  explicit JsonClient(int port, std::string host = "127.0.0.1", std::string ca_file = "",
                      std::string client_cert_file = "", std::string client_key_file = "");
  ~JsonClient();
  JsonClient(JsonClient&&) noexcept;

  // Sent with every later request (an Authorization header, say).
  void SetHeader(const std::string& name, const std::string& value);

  JsonResponse Get(const std::string& path_and_query);
  JsonResponse Post(const std::string& path, const std::string& body);
  // POST with a body of another content type (a form, say).
  JsonResponse Post(const std::string& path, const std::string& body,
                    const std::string& content_type);
  JsonResponse PostJson(const std::string& path, const nlohmann::json& body) {
    return Post(path, body.dump());
  }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A client whose every request carries "Authorization: Bearer <token>" (no header for an empty
// token): a caller of settled's API with that token.
inline JsonClient ClientWith(int port, const std::string& token) {
  JsonClient client(port);
  if (!token.empty()) client.SetHeader("Authorization", "Bearer " + token);
  return client;
}

}  // namespace settle::testing
