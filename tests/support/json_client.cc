#include "json_client.h"

#include <stdexcept>

#include "settle/net/blocking_client.h"

namespace settle::testing {

struct JsonClient::Impl {
  std::unique_ptr<net::BlockingClient> client;
  std::string origin;  // "http://127.0.0.1:port"
  net::Headers headers;

  JsonResponse Send(const std::string& method, const std::string& target, std::string body,
                    const std::string& content_type) {
    net::ClientRequest request;
    request.method = method;
    request.url = *ParseUrl(origin);
    request.target = target;  // as given, even when a URL could not hold it
    request.headers = headers;
    if (!content_type.empty()) request.headers.emplace_back("Content-Type", content_type);
    request.body = std::move(body);
    request.timeout = Duration(60'000);
    // Tests count what a server received: a request is sent once, never again on its own.
    request.idempotent = false;
    JsonResponse out;
    Result<net::ClientAnswer> answer = client->Send(std::move(request));
    if (!answer) {
      out.error = answer.status().message();
      return out;
    }
    out.status = answer->status;
    out.body = std::move(answer->body);
    for (const auto& [name, value] : answer->headers) out.headers.emplace(name, value);
    if (const std::string* type = net::FindHeader(answer->headers, "Content-Type")) {
      out.content_type = *type;
    }
    if (const std::string* auth = net::FindHeader(answer->headers, "WWW-Authenticate")) {
      out.www_authenticate = *auth;
    }
    out.json = nlohmann::json::parse(out.body, nullptr, /*allow_exceptions=*/false);
    if (out.json.is_discarded()) out.json = nullptr;
    return out;
  }
};

JsonClient::JsonClient(int port, std::string host, std::string ca_file,
                       std::string client_cert_file, std::string client_key_file)
    : impl_(std::make_unique<Impl>()) {
  auto client = net::BlockingClient::Create({.ca_file = ca_file,
                                             .client_cert_file = std::move(client_cert_file),
                                             .client_key_file = std::move(client_key_file)});
  if (!client) throw std::runtime_error("JsonClient: " + client.status().ToString());
  impl_->client = std::move(*client);
  const bool ipv6 = host.find(':') != std::string::npos;
  impl_->origin = std::string(ca_file.empty() ? "http://" : "https://") +
                  (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}
JsonClient::~JsonClient() = default;
JsonClient::JsonClient(JsonClient&&) noexcept = default;

void JsonClient::SetHeader(const std::string& name, const std::string& value) {
  std::erase_if(impl_->headers,
                [&](const auto& h) { return net::EqualsIgnoreCase(h.first, name); });
  impl_->headers.emplace_back(name, value);
}

JsonResponse JsonClient::Get(const std::string& path_and_query) {
  return impl_->Send("GET", path_and_query, "", "");
}

JsonResponse JsonClient::Post(const std::string& path, const std::string& body) {
  return Post(path, body, "application/json");
}

JsonResponse JsonClient::Post(const std::string& path, const std::string& body,
                              const std::string& content_type) {
  return impl_->Send("POST", path, body, content_type);
}

}  // namespace settle::testing
