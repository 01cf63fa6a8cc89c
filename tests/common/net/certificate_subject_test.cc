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

// What `openssl x509 -noout -subject` prints with `nameopt` ("RFC2253", "oneline": its
// default, "compat": the old slash form), "subject=" and all.
std::string OpensslSubjectLine(const std::string& cert_file, const std::string& nameopt) {
  const std::string command =
      "openssl x509 -noout -subject -nameopt " + nameopt + " -in '" + cert_file + "'";
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) out += buffer;
  REQUIRE(pclose(pipe) == 0);
  REQUIRE(out.rfind("subject=", 0) == 0);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// What `openssl x509 -noout -subject -nameopt RFC2253` prints after "subject=".
std::string OpensslSubject(const std::string& cert_file) {
  return OpensslSubjectLine(cert_file, "RFC2253").substr(std::string("subject=").size());
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

TEST_CASE(
    "a subject copied from any of openssl's forms is rewritten as a peer presenting it is "
    "rendered",
    "[net][tls][mtls]") {
  testing::TempDir dir;
  testing::TestCa ca(dir.path());
  for (const char* subject :
       {"/O=Shop/CN=order-service", "/C=DE/O=Shop\\, Inc./OU=Ops/CN=alice",
        "/C=DE/O=Shop \"Best\" Inc/CN=b+UID=7", "/DC=com/DC=shop/CN=a=b/emailAddress=a@shop.com"}) {
    INFO(subject);
    const testing::TestCa::Issued cert = ca.IssueClient("c", subject);
    const std::string rendered = OpensslSubject(cert.cert_file);
    // What an operator copies: each form openssl prints, "subject=" and all or not.
    for (const char* nameopt : {"RFC2253", "oneline", "compat"}) {
      const std::string line = OpensslSubjectLine(cert.cert_file, nameopt);
      INFO(line);
      Result<std::string> normal = NormalizeSubject(line);
      REQUIRE(normal);
      CHECK(*normal == rendered);
      CHECK(*NormalizeSubject(line.substr(std::string("subject=").size())) == rendered);
    }
  }
  // Attribute types by their long names, dotted OIDs, short names in lower case.
  CHECK(*NormalizeSubject("commonName=a,organizationName=Shop") == "CN=a,O=Shop");
  CHECK(*NormalizeSubject("2.5.4.3=a,o=Shop") == "CN=a,O=Shop");
  CHECK(*NormalizeSubject("CN=a\\2C b,O=Shop") == "CN=a\\, b,O=Shop");
}

TEST_CASE("a subject OpenSSL would not build is refused, naming its part", "[net][tls][mtls]") {
  struct Case {
    const char* written;
    const char* says;
  };
  for (const Case& c :
       {Case{"", "empty"}, Case{"order-service", "order-service"},
        Case{"CN=a,company=Shop", "company is not an attribute type"},
        Case{"CN=a,C=Germany", "not a value of C"}, Case{"CN=#0403616263", "DER"},
        Case{"CN=a,=b", "no attribute type"}, Case{"C = DE, CN = \"a", "no closing"},
        Case{"C = DE, CN = \"a\" b", "goes on after"}, Case{"CN=a\\", "lone"}}) {
    INFO(c.written);
    Result<std::string> normal = NormalizeSubject(c.written);
    REQUIRE_FALSE(normal);
    CHECK(normal.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(normal.status().message(), Catch::Contains(c.says));
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
