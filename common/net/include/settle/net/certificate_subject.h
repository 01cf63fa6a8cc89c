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

}  // namespace settle::net
