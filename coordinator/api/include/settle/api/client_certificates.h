#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "settle/api/access_tokens.h"
#include "settle/core/status.h"

namespace settle::api {

// Who a verified client certificate (mutual TLS) says sent a request: its subject, rendered as
// net::CertificateSubject does ("CN=order-service,O=Shop", RFC 2253, what
// `openssl x509 -noout -subject -nameopt RFC2253` prints), mapped to an access level and a
// name, as a bearer token is. The server has verified the certificate against its client CA
// before anything asks; this only says what the subject may do.
//
// A name is what the audit trail, the logs, /api/admin/whoami and the 403 answers show: the
// comment after the subject in the file, or else the subject's CN (or, without one, the
// whole subject).
//
// Thread-safety: const methods from any thread once configured.
class ClientCertificates {
 public:
  // `subject` in any form openssl prints (RFC 2253, its default "C = US, O = Shop, CN = a",
  // the old "/C=US/O=Shop/CN=a"), kept as a peer's is rendered (net::NormalizeSubject), so
  // that a mapping that could never match is refused here rather than found out at the first
  // request. InvalidArgument naming the part for a subject OpenSSL would not build (an
  // unknown attribute type, a value its type refuses), or one mapped already. An empty `name`
  // gets the default one.
  Status Add(Access level, std::string subject, std::string name = "");

  // Lines of "<read|client|admin> <subject>", optionally followed by "# name"; blank lines
  // and lines starting with '#' are skipped. The subject runs from the first non-blank after
  // the level to the end of the line, or to the first '#' after a blank, trailing blanks
  // dropped; it may hold blanks ("O=Shop Inc"), and a leading "subject=" (as openssl prints
  // it) is dropped. InvalidArgument naming the line for anything else.
  Status AddFromText(std::string_view text);

  bool enabled() const { return !subjects_.empty(); }
  std::size_t size() const { return subjects_.size(); }

  // The caller a certificate with `subject` is; nullopt for a subject not mapped (or empty).
  // Subjects are compared exactly, as rendered.
  std::optional<Caller> Identify(std::string_view subject) const;

 private:
  struct Subject {
    Access level;
    std::string subject;
    std::string name;
  };
  std::vector<Subject> subjects_;
};

// The value of the subject's CN ("order-service" of "CN=order-service,O=Shop"), RFC 2253
// escapes undone; empty when it has none.
std::string CommonName(std::string_view subject);

}  // namespace settle::api
