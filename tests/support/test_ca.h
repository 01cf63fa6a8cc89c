#pragma once

#include <string>

namespace settle::testing {

// A throwaway certificate authority made with the `openssl` command in `dir` while the test
// runs, and server certificates it issues: what HTTPS tests trust and serve. Nothing is
// shared between tests or kept afterwards (dir is the test's TempDir).
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

 private:
  std::string dir_;
  std::string name_;
  std::string ca_file_;
  std::string ca_key_;
};

}  // namespace settle::testing
