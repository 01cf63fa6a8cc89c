#include "settle/net/certificate_subject.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <vector>

#include "settle/core/ascii.h"

namespace settle::net {
namespace {

struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct X509Free {
  void operator()(X509* certificate) const { X509_free(certificate); }
};
struct NameFree {
  void operator()(X509_NAME* name) const { X509_NAME_free(name); }
};

std::string Print(const X509_NAME* name) {
  std::unique_ptr<BIO, BioFree> out(BIO_new(BIO_s_mem()));
  if (name == nullptr || out == nullptr) return {};
  // The flags of `openssl x509 -nameopt RFC2253`, so that the command shows what we match.
  if (X509_NAME_print_ex(out.get(), name, 0, XN_FLAG_RFC2253) < 0) return {};
  char* data = nullptr;
  const long size = BIO_get_mem_data(out.get(), &data);
  return size > 0 ? std::string(data, static_cast<std::size_t>(size)) : std::string();
}

// The forms openssl prints a subject in (NormalizeSubject).
enum class SubjectForm {
  kRfc2253,  // CN=a,O=b: most specific first, escapes
  kOneline,  // O = b, CN = a: least specific first, special values quoted
  kSlash,    // /O=b/CN=a: least specific first, nothing escaped
};

struct Part {
  std::string type;
  std::string value;
  std::string written;  // as written, for messages
};
using Rdn = std::vector<Part>;

// Reads the parts of a subject written in `form`, in the order written.
class SubjectReader {
 public:
  SubjectReader(std::string_view text, SubjectForm form)
      : text_(text), separator_(form == SubjectForm::kSlash ? '/' : ',') {
    if (form == SubjectForm::kSlash) at_ = 1;  // the leading '/'
  }

  Result<std::vector<Rdn>> ReadAll() {
    std::vector<Rdn> rdns(1);
    while (true) {
      Result<Part> part = ReadPart();
      if (!part) return part.status();
      rdns.back().push_back(std::move(*part));
      if (at_ >= text_.size()) return rdns;
      if (text_[at_++] == separator_) rdns.emplace_back();  // else '+': the same RDN
    }
  }

 private:
  void SkipBlanks() {
    while (at_ < text_.size() && text_[at_] == ' ') ++at_;
  }
  bool AtEndOfPart() const {
    return at_ >= text_.size() || text_[at_] == separator_ || text_[at_] == '+';
  }

  Result<Part> ReadPart() {
    const std::size_t start = at_;
    Part part;
    SkipBlanks();
    while (at_ < text_.size() && text_[at_] != '=' && !AtEndOfPart()) part.type += text_[at_++];
    while (!part.type.empty() && part.type.back() == ' ') part.type.pop_back();
    if (at_ >= text_.size() || text_[at_] != '=') {
      return Status::InvalidArgument("'" + std::string(text_.substr(start, at_ - start)) +
                                     "' is not a part like \"CN=order-service\"");
    }
    if (part.type.empty()) {
      return Status::InvalidArgument("a part has no attribute type before its '='");
    }
    ++at_;
    SkipBlanks();
    if (at_ < text_.size() && text_[at_] == '#') {
      return Status::InvalidArgument("the value of " + part.type +
                                     " is written as DER (#...): write it as text");
    }
    Status read = at_ < text_.size() && text_[at_] == '"' ? ReadQuoted(part) : ReadPlain(part);
    if (!read.ok()) return read;
    part.written = std::string(text_.substr(start, at_ - start));
    return part;
  }

  // A backslash and what it escapes: a special character, or two hex digits (a byte).
  Status ReadEscape(std::string& value) {
    ++at_;
    if (at_ >= text_.size()) return Status::InvalidArgument("a value ends with a lone '\\'");
    if (at_ + 1 < text_.size() && HexDigitValue(text_[at_]) >= 0 &&
        HexDigitValue(text_[at_ + 1]) >= 0) {
      value += static_cast<char>(HexDigitValue(text_[at_]) * 16 + HexDigitValue(text_[at_ + 1]));
      at_ += 2;
    } else {
      value += text_[at_++];
    }
    return Status::Ok();
  }

  Status ReadPlain(Part& part) {
    std::size_t kept = 0;  // the value's length up to its last escaped or non-blank byte
    while (!AtEndOfPart()) {
      if (text_[at_] == '\\' && separator_ != '/') {
        if (Status s = ReadEscape(part.value); !s.ok()) return s;
        kept = part.value.size();
      } else {
        part.value += text_[at_++];
        if (part.value.back() != ' ') kept = part.value.size();
      }
    }
    part.value.resize(kept);
    return Status::Ok();
  }

  Status ReadQuoted(Part& part) {
    ++at_;
    while (at_ < text_.size() && text_[at_] != '"') {
      if (text_[at_] == '\\') {
        if (Status s = ReadEscape(part.value); !s.ok()) return s;
      } else {
        part.value += text_[at_++];
      }
    }
    if (at_ >= text_.size()) {
      return Status::InvalidArgument("the value of " + part.type + " has no closing '\"'");
    }
    ++at_;
    SkipBlanks();
    if (!AtEndOfPart()) {
      return Status::InvalidArgument("the value of " + part.type +
                                     " goes on after its closing '\"'");
    }
    return Status::Ok();
  }

  std::string_view text_;
  char separator_;
  std::size_t at_ = 0;
};

SubjectForm FormOf(std::string_view text) {
  if (!text.empty() && text.front() == '/') return SubjectForm::kSlash;
  const std::size_t equals = text.find('=');
  // openssl's default puts blanks around '=': "C = US".
  if (equals != std::string_view::npos && equals > 0 && text[equals - 1] == ' ') {
    return SubjectForm::kOneline;
  }
  return SubjectForm::kRfc2253;
}

// The NID of an attribute type as written: a short or long name, or a dotted OID; a short
// name in any case ("cn").
int AttributeNid(const std::string& type) {
  int nid = OBJ_txt2nid(type.c_str());
  if (nid != NID_undef) return nid;
  std::string upper = type;
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return OBJ_sn2nid(upper.c_str());
}

std::string OpensslReason() {
  const unsigned long error = ERR_get_error();
  ERR_clear_error();
  const char* reason = error == 0 ? nullptr : ERR_reason_error_string(error);
  return reason != nullptr ? reason : "refused";
}

}  // namespace

std::string CertificateSubject(const x509_st* certificate) {
  if (certificate == nullptr) return {};
  return Print(X509_get_subject_name(certificate));
}

Result<std::string> NormalizeSubject(std::string_view written) {
  constexpr std::string_view kPrefix = "subject=";
  if (written.substr(0, kPrefix.size()) == kPrefix) written.remove_prefix(kPrefix.size());
  while (!written.empty() && written.front() == ' ') written.remove_prefix(1);
  while (!written.empty() && written.back() == ' ') written.remove_suffix(1);
  if (written.empty()) return Status::InvalidArgument("an empty subject");
  const SubjectForm form = FormOf(written);
  Result<std::vector<Rdn>> rdns = SubjectReader(written, form).ReadAll();
  if (!rdns) return rdns.status();
  // A certificate holds its name least specific first; RFC 2253 writes it backwards, the
  // parts of a multi-valued RDN too ("UID=7+CN=b" of "CN = b + UID = 7").
  if (form == SubjectForm::kRfc2253) {
    std::reverse(rdns->begin(), rdns->end());
    for (Rdn& rdn : *rdns) std::reverse(rdn.begin(), rdn.end());
  }
  std::unique_ptr<X509_NAME, NameFree> name(X509_NAME_new());
  if (name == nullptr) return Status::Internal("cannot build a subject: out of memory");
  for (const Rdn& rdn : *rdns) {
    for (std::size_t i = 0; i < rdn.size(); ++i) {
      const Part& part = rdn[i];
      const int nid = AttributeNid(part.type);
      if (nid == NID_undef) {
        return Status::InvalidArgument(
            "'" + part.written + "': " + part.type +
            " is not an attribute type OpenSSL knows (CN, O, OU, C, ST, L, DC, UID, "
            "emailAddress, serialNumber, or a dotted OID)");
      }
      const auto* bytes = reinterpret_cast<const unsigned char*>(part.value.data());
      if (X509_NAME_add_entry_by_NID(name.get(), nid, MBSTRING_UTF8, bytes,
                                     static_cast<int>(part.value.size()), -1,
                                     i == 0 ? 0 : -1) != 1) {
        return Status::InvalidArgument("'" + part.written + "': not a value of " + part.type +
                                       " (" + OpensslReason() + ")");
      }
    }
  }
  std::string normal = Print(name.get());
  if (normal.empty()) return Status::InvalidArgument("a subject OpenSSL cannot print");
  return normal;
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
