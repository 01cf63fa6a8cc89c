#include "checker_tls.h"

namespace settle::checker {

std::string HandshakeFailureHint(const CheckerTls& tls) {
  if (tls.client_cert_file.empty()) {
    return " (the participant may require a client certificate: give one with "
           "--tls-client-cert and --tls-client-key)";
  }
  return " (the participant may not accept the client certificate " + tls.client_cert_file +
         ": another CA's, or expired)";
}

}  // namespace settle::checker
