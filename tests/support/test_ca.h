#pragma once

#include <string>

namespace settle::testing {

// A throwaway certificate authority made with the `openssl` command in `dir` while the test
// runs, and the server and client certificates it issues: what HTTPS tests trust, serve and
// present. Nothing is shared between tests or kept afterwards (dir is the test's TempDir).
// Two TestCa in one dir need different names; a certificate from one is "from another CA"
// to a server that trusts only the other.
class TestCa {
 public:
  // Throws std::runtime_error if openssl fails.
  explicit TestCa(std::string dir, const std::string& name = "ca");

  const std::string& ca_file() const { return ca_file_; }  // the CA's certificate (PEM)

  struct Issued {
    std::string cert_file;
    std::string key_file;
  };
  // A server certificate for `subject_alt_names` ("DNS:localhost,IP:127.0.0.1"), valid for
  // two days from now.
  Issued Issue(const std::string& name, const std::string& subject_alt_names) const;
  // The usual one: localhost, 127.0.0.1 and ::1.
  Issued IssueForLocalhost() const {
    return Issue("localhost", "DNS:localhost,IP:127.0.0.1,IP:::1");
  }

  // A client certificate (extendedKeyUsage clientAuth) for `subject`, in the form of
  // `openssl req -subj`, least specific part first: "/O=Shop/CN=order-service" is the subject
  // "CN=order-service,O=Shop" (RFC 2253, what servers match). Valid for two days from now.
  // `name` names the files.
  Issued IssueClient(const std::string& name, const std::string& subject) const;
  // The same, valid only for a day in 2020: expired.
  Issued IssueExpiredClient(const std::string& name, const std::string& subject) const;

 private:
  std::string dir_;
  std::string name_;
  std::string ca_file_;
  std::string ca_key_;
};

}  // namespace settle::testing
