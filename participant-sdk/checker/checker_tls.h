#pragma once

#include <string>

namespace settle::checker {

// What settle-check trusts and presents over TLS, to https:// and grpcs:// participants (their
// state URLs and entry points included): --ca-file, --tls-client-cert and --tls-client-key.
struct CheckerTls {
  std::string ca_file;  // PEM CAs the participant is verified against; empty: the system's store
  // A certificate chain and its key (PEM), presented to a participant that asks for one
  // (mutual TLS); empty: none. Both or neither.
  std::string client_cert_file;
  std::string client_key_file;
};

// Why a TLS handshake may have failed, as a participant requiring client certificates ends it:
// with no certificate presented, that it may require one (and the flags that give it); with
// one, that it may not accept that one. Appended to "TLS handshake with host:port failed: ...",
// the reason a participant is unreachable.
std::string HandshakeFailureHint(const CheckerTls& tls);

}  // namespace settle::checker
