#include "test_ca.h"

#include <cstdlib>
#include <fstream>
#include <stdexcept>

namespace settle::testing {
namespace {

void Run(const std::string& command) {
  const std::string quiet = command + " >/dev/null 2>&1";
  if (std::system(quiet.c_str()) != 0) throw std::runtime_error("TestCa: failed: " + command);
}

void WriteClientExtensions(const std::string& path) {
  std::ofstream extensions(path);
  extensions << "basicConstraints=CA:FALSE\n"
             << "keyUsage=digitalSignature,keyEncipherment\n"
             << "extendedKeyUsage=clientAuth\n";
}

}  // namespace

TestCa::TestCa(std::string dir, const std::string& name)
    : dir_(std::move(dir)),
      name_(name),
      ca_file_(dir_ + "/" + name + ".pem"),
      ca_key_(dir_ + "/" + name + ".key") {
  Run("openssl req -x509 -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:P-256 -days 2"
      " -subj '/CN=Settle test CA " +
      name + "' -keyout '" + ca_key_ + "' -out '" + ca_file_ +
      "' -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign");
}

TestCa::Issued TestCa::Issue(const std::string& name, const std::string& subject_alt_names) const {
  const std::string base = dir_ + "/" + name_ + "-" + name;
  Issued issued{base + ".pem", base + ".key"};
  {
    std::ofstream extensions(base + ".ext");
    extensions << "subjectAltName=" << subject_alt_names << "\n"
               << "basicConstraints=CA:FALSE\n"
               << "keyUsage=digitalSignature,keyEncipherment\n"
               << "extendedKeyUsage=serverAuth\n";
  }
  Run("openssl req -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:P-256 -subj '/CN=" + name +
      "' -keyout '" + issued.key_file + "' -out '" + base + ".csr'");
  Run("openssl x509 -req -in '" + base + ".csr' -CA '" + ca_file_ + "' -CAkey '" + ca_key_ +
      "' -CAcreateserial -days 2 -extfile '" + base + ".ext' -out '" + issued.cert_file + "'");
  return issued;
}

TestCa::Issued TestCa::IssueClient(const std::string& name, const std::string& subject) const {
  const std::string base = dir_ + "/" + name_ + "-" + name;
  Issued issued{base + ".pem", base + ".key"};
  WriteClientExtensions(base + ".ext");
  Run("openssl req -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:P-256 -subj '" + subject +
      "' -keyout '" + issued.key_file + "' -out '" + base + ".csr'");
  Run("openssl x509 -req -in '" + base + ".csr' -CA '" + ca_file_ + "' -CAkey '" + ca_key_ +
      "' -CAcreateserial -days 2 -extfile '" + base + ".ext' -out '" + issued.cert_file + "'");
  return issued;
}

TestCa::Issued TestCa::IssueExpiredClient(const std::string& name,
                                          const std::string& subject) const {
  const std::string base = dir_ + "/" + name_ + "-" + name;
  Issued issued{base + ".pem", base + ".key"};
  WriteClientExtensions(base + ".ext");
  // `openssl x509 -req` cannot date a certificate in the past; `openssl ca` can, given the
  // few files of a CA's bookkeeping.
  const std::string books = base + "-books";
  Run("mkdir -p '" + books + "'");
  {
    std::ofstream(books + "/index.txt").flush();
    std::ofstream(books + "/serial") << "01\n";
    std::ofstream config(books + "/ca.cnf");
    config << "[ca]\ndefault_ca = test\n"
           << "[test]\ndatabase = " << books << "/index.txt\nnew_certs_dir = " << books
           << "\nserial = " << books << "/serial\ndefault_md = sha256\npolicy = any\n"
           << "unique_subject = no\n"
           << "[any]\ncommonName = supplied\norganizationName = optional\n"
           << "organizationalUnitName = optional\n";
  }
  Run("openssl req -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:P-256 -subj '" + subject +
      "' -keyout '" + issued.key_file + "' -out '" + base + ".csr'");
  Run("openssl ca -batch -notext -preserveDN -config '" + books + "/ca.cnf' -cert '" + ca_file_ +
      "' -keyfile '" + ca_key_ + "' -in '" + base + ".csr' -startdate 20200101000000Z" +
      " -enddate 20200102000000Z -extfile '" + base + ".ext' -out '" + issued.cert_file + "'");
  return issued;
}

}  // namespace settle::testing
