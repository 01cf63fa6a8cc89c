#include <boost/asio/ssl/context.hpp>

#include "stream.h"

namespace settle::net {

Result<std::unique_ptr<asio::ssl::context>> ServerTlsContext(const TlsFiles& files) {
  auto context = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server);
  context->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                       asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                       asio::ssl::context::no_tlsv1_1);
  boost::system::error_code ec;
  context->use_certificate_chain_file(files.cert_file, ec);
  if (ec) {
    return Status::InvalidArgument("TLS certificate '" + files.cert_file + "': " + ec.message());
  }
  context->use_private_key_file(files.key_file, asio::ssl::context::pem, ec);
  if (ec) return Status::InvalidArgument("TLS key '" + files.key_file + "': " + ec.message());
  if (SSL_CTX_check_private_key(context->native_handle()) != 1) {
    return Status::InvalidArgument("TLS key '" + files.key_file + "' does not match certificate '" +
                                   files.cert_file + "'");
  }
  return context;
}

Result<std::unique_ptr<asio::ssl::context>> ClientTlsContext(const std::string& ca_file) {
  auto context = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_client);
  context->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                       asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                       asio::ssl::context::no_tlsv1_1);
  boost::system::error_code ec;
  if (ca_file.empty()) {
    context->set_default_verify_paths(ec);
    if (ec) return Status::Unavailable("the system's CA store: " + ec.message());
  } else {
    context->load_verify_file(ca_file, ec);
    if (ec) return Status::InvalidArgument("CA file '" + ca_file + "': " + ec.message());
  }
  context->set_verify_mode(asio::ssl::verify_peer);
  return context;
}

}  // namespace settle::net
