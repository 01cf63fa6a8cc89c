#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <boost/asio/ssl/context.hpp>

#include "stream.h"

namespace settle::net {
namespace {

constexpr auto kOptions = asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                          asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                          asio::ssl::context::no_tlsv1_1;

// A certificate chain and the key that goes with it, each named when it cannot be used.
Status UseCertificate(asio::ssl::context& context, const std::string& cert_file,
                      const std::string& key_file) {
  boost::system::error_code ec;
  context.use_certificate_chain_file(cert_file, ec);
  if (ec) return Status::InvalidArgument("TLS certificate '" + cert_file + "': " + ec.message());
  context.use_private_key_file(key_file, asio::ssl::context::pem, ec);
  // OpenSSL checks the key against the certificate as it loads it ("key values mismatch").
  if (ec && ec.category() == asio::error::get_ssl_category() &&
      ERR_GET_REASON(static_cast<unsigned long>(ec.value())) == X509_R_KEY_VALUES_MISMATCH) {
    return Status::InvalidArgument("TLS key '" + key_file + "' does not match certificate '" +
                                   cert_file + "'");
  }
  if (ec) return Status::InvalidArgument("TLS key '" + key_file + "': " + ec.message());
  if (SSL_CTX_check_private_key(context.native_handle()) != 1) {
    return Status::InvalidArgument("TLS key '" + key_file + "' does not match certificate '" +
                                   cert_file + "'");
  }
  return Status::Ok();
}

// Asks clients for a certificate issued by a CA in `ca_file` and verifies it in the handshake.
Status AskForClientCertificates(asio::ssl::context& context, const std::string& ca_file,
                                bool required) {
  boost::system::error_code ec;
  context.load_verify_file(ca_file, ec);
  if (ec) return Status::InvalidArgument("client CA file '" + ca_file + "': " + ec.message());
  // The CA names sent in the certificate request, so a client holding several certificates
  // can pick the right one.
  STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(ca_file.c_str());
  if (names == nullptr) {
    return Status::InvalidArgument("client CA file '" + ca_file + "': no CA certificate in it");
  }
  SSL_CTX_set_client_CA_list(context.native_handle(), names);
  // Resuming a session skips the certificate request; OpenSSL refuses to resume one on a
  // verifying server without a session id context, failing the handshake instead.
  static constexpr unsigned char kSessionContext[] = "settle";
  SSL_CTX_set_session_id_context(context.native_handle(), kSessionContext,
                                 sizeof(kSessionContext) - 1);
  context.set_verify_mode(asio::ssl::verify_peer | asio::ssl::verify_client_once |
                          (required ? asio::ssl::verify_fail_if_no_peer_cert : 0));
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<asio::ssl::context>> ServerTlsContext(const TlsFiles& files) {
  auto context = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server);
  context->set_options(kOptions);
  if (Status used = UseCertificate(*context, files.cert_file, files.key_file); !used.ok()) {
    return used;
  }
  if (!files.client_ca_file.empty()) {
    Status asked =
        AskForClientCertificates(*context, files.client_ca_file, files.require_client_certificate);
    if (!asked.ok()) return asked;
  }
  return context;
}

Result<std::unique_ptr<asio::ssl::context>> ClientTlsContext(const ClientOptions& options) {
  auto context = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_client);
  context->set_options(kOptions);
  boost::system::error_code ec;
  if (options.ca_file.empty()) {
    context->set_default_verify_paths(ec);
    if (ec) return Status::Unavailable("the system's CA store: " + ec.message());
  } else {
    context->load_verify_file(options.ca_file, ec);
    if (ec) return Status::InvalidArgument("CA file '" + options.ca_file + "': " + ec.message());
  }
  if (options.client_cert_file.empty() != options.client_key_file.empty()) {
    return Status::InvalidArgument(
        "a client certificate needs both its certificate and its key file (given: '" +
        options.client_cert_file + "', '" + options.client_key_file + "')");
  }
  if (!options.client_cert_file.empty()) {
    Status used = UseCertificate(*context, options.client_cert_file, options.client_key_file);
    if (!used.ok()) return used;
  }
  context->set_verify_mode(asio::ssl::verify_peer);
  return context;
}

}  // namespace settle::net
