#pragma once

#include <string>
#include <string_view>

#include "settle/core/status.h"

// OpenSSL's certificate type (X509 is a typedef of it), declared so that this header does not
// pull OpenSSL into every file that includes it.
struct x509_st;

namespace settle::net {

// A certificate's subject as one line in RFC 2253 form, the most specific part first:
// "CN=order-service,O=Shop". It is exactly what
//   openssl x509 -noout -subject -nameopt RFC2253 -in cert.pem
// prints after "subject=", so an operator copies a subject from that command into a
// configuration file and it matches what a server renders for a peer presenting the
// certificate. Special characters are escaped as RFC 2253 says (a ',' in a value as "\,").
//
// Every place that names a peer by its certificate renders it here: the HTTP server from the
// verified certificate of a TLS connection, the gRPC server from the PEM its auth context
// gives ("x509_pem_cert").
std::string CertificateSubject(const x509_st* certificate);

// The subject of the first certificate in `pem` (PEM text, "-----BEGIN CERTIFICATE-----");
// InvalidArgument when it holds none that parses.
Result<std::string> CertificateSubjectFromPem(std::string_view pem);

// A subject as an operator writes it in a configuration file, rewritten as CertificateSubject
// renders the same name, so that it matches the peers that present it. Taken in each form
// openssl prints:
//   RFC 2253 (-nameopt RFC2253)   CN=order-service,O=Shop\, Inc,C=US
//   openssl's default (oneline)   C = US, O = "Shop, Inc", CN = order-service
//   the old slash form (compat)   /C=US/O=Shop, Inc/CN=order-service
// each after an optional "subject=". Multi-valued parts ("CN=a+UID=b"), escapes ("\,", "\2C")
// and quoted values are understood. InvalidArgument naming the part for anything else: an
// attribute type OpenSSL does not know ("company"; a known one in any case: "cn" is CN), a value
// its type refuses (C=USA), a part without '=', a value written as DER ("#0403...").
Result<std::string> NormalizeSubject(std::string_view written);

}  // namespace settle::net
