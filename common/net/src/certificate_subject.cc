#include "settle/net/certificate_subject.h"

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>

namespace settle::net {
namespace {

struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct X509Free {
  void operator()(X509* certificate) const { X509_free(certificate); }
};

}  // namespace

std::string CertificateSubject(const x509_st* certificate) {
  if (certificate == nullptr) return {};
  const X509_NAME* name = X509_get_subject_name(certificate);
  std::unique_ptr<BIO, BioFree> out(BIO_new(BIO_s_mem()));
  if (name == nullptr || out == nullptr) return {};
  // The flags of `openssl x509 -nameopt RFC2253`, so that the command shows what we match.
  if (X509_NAME_print_ex(out.get(), name, 0, XN_FLAG_RFC2253) < 0) return {};
  char* data = nullptr;
  const long size = BIO_get_mem_data(out.get(), &data);
  return size > 0 ? std::string(data, static_cast<std::size_t>(size)) : std::string();
}

Result<std::string> CertificateSubjectFromPem(std::string_view pem) {
  std::unique_ptr<BIO, BioFree> in(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (in == nullptr) return Status::Internal("cannot read a PEM certificate: out of memory");
  std::unique_ptr<X509, X509Free> certificate(
      PEM_read_bio_X509(in.get(), nullptr, nullptr, nullptr));
  if (certificate == nullptr) {
    return Status::InvalidArgument("no PEM certificate that parses");
  }
  return CertificateSubject(certificate.get());
}

}  // namespace settle::net
