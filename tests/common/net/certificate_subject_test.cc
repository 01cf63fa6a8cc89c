// CertificateSubject renders a subject exactly as `openssl x509 -nameopt RFC2253` prints it:
// the line an operator copies into a configuration file.
#include "settle/net/certificate_subject.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "file_text.h"
#include "temp_dir.h"
#include "test_ca.h"

namespace settle::net {
namespace {

// What `openssl x509 -noout -subject -nameopt RFC2253` prints after "subject=".
std::string OpensslSubject(const std::string& cert_file) {
  const std::string command =
      "openssl x509 -noout -subject -nameopt RFC2253 -in '" + cert_file + "'";
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) out += buffer;
  REQUIRE(pclose(pipe) == 0);
  const std::string prefix = "subject=";
  REQUIRE(out.rfind(prefix, 0) == 0);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out.substr(prefix.size());
}

TEST_CASE(
    "a certificate's subject is rendered most specific part first, as openssl's RFC2253 "
    "option prints it",
    "[net][tls][mtls]") {
  testing::TempDir dir;
  testing::TestCa ca(dir.path());
  struct Case {
    const char* subject;  // as openssl req -subj takes it
    const char* rendered;
  };
  for (const Case& c :
       {Case{"/O=Shop/CN=order-service", "CN=order-service,O=Shop"},
        Case{"/C=DE/O=Shop\\, Inc./OU=Ops/CN=alice", "CN=alice,OU=Ops,O=Shop\\, Inc.,C=DE"},
        Case{"/CN=settled", "CN=settled"}}) {
    INFO(c.subject);
    const testing::TestCa::Issued cert = ca.IssueClient("c", c.subject);
    Result<std::string> subject = CertificateSubjectFromPem(testing::ReadFile(cert.cert_file));
    REQUIRE(subject);
    CHECK(*subject == c.rendered);
    CHECK(*subject == OpensslSubject(cert.cert_file));
  }
}

TEST_CASE("text without a PEM certificate has no subject", "[net][tls][mtls]") {
  for (const char* text :
       {"", "hello", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"}) {
    INFO(text);
    Result<std::string> subject = CertificateSubjectFromPem(text);
    REQUIRE_FALSE(subject);
    CHECK(subject.status().code() == StatusCode::kInvalidArgument);
  }
  CHECK(CertificateSubject(nullptr).empty());
}

}  // namespace
}  // namespace settle::net
