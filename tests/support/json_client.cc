#include "json_client.h"

#include <httplib.h>

namespace settle::testing {

struct JsonClient::Impl {
  Impl(const std::string& host, int port) : client(host, port) {
    client.set_keep_alive(true);
    client.set_tcp_nodelay(true);
    client.set_connection_timeout(std::chrono::seconds(5));
    client.set_read_timeout(std::chrono::seconds(60));
    client.set_write_timeout(std::chrono::seconds(10));
  }
  httplib::Client client;
  httplib::Headers headers;
};

namespace {

JsonResponse ToResponse(const httplib::Result& result) {
  JsonResponse out;
  if (!result) return out;
  out.status = result->status;
  out.body = result->body;
  out.content_type = result->get_header_value("Content-Type");
  out.www_authenticate = result->get_header_value("WWW-Authenticate");
  for (const auto& [name, value] : result->headers) out.headers.emplace(name, value);
  out.json = nlohmann::json::parse(out.body, nullptr, /*allow_exceptions=*/false);
  if (out.json.is_discarded()) out.json = nullptr;
  return out;
}

}  // namespace

JsonClient::JsonClient(int port, std::string host) : impl_(std::make_unique<Impl>(host, port)) {}
JsonClient::~JsonClient() = default;
JsonClient::JsonClient(JsonClient&&) noexcept = default;

void JsonClient::SetHeader(const std::string& name, const std::string& value) {
  impl_->headers.erase(name);
  impl_->headers.emplace(name, value);
}

JsonResponse JsonClient::Get(const std::string& path_and_query) {
  return ToResponse(impl_->client.Get(path_and_query, impl_->headers));
}

JsonResponse JsonClient::Post(const std::string& path, const std::string& body) {
  return Post(path, body, "application/json");
}

JsonResponse JsonClient::Post(const std::string& path, const std::string& body,
                              const std::string& content_type) {
  return ToResponse(impl_->client.Post(path, impl_->headers, body, content_type));
}

}  // namespace settle::testing
