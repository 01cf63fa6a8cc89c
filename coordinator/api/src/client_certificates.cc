#include "settle/api/client_certificates.h"

#include "settle/core/config_lines.h"
#include "settle/net/certificate_subject.h"

namespace settle::api {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// The parts of an RFC 2253 name, split at the commas that are not escaped ("O=Shop\, Inc").
std::vector<std::string_view> Parts(std::string_view subject) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i < subject.size(); ++i) {
    if (subject[i] == '\\') {
      ++i;
    } else if (subject[i] == ',' || subject[i] == '+') {
      parts.push_back(subject.substr(start, i - start));
      start = i + 1;
    }
  }
  parts.push_back(subject.substr(start));
  return parts;
}

}  // namespace

std::string CommonName(std::string_view subject) {
  for (std::string_view part : Parts(subject)) {
    if (part.size() < 3 || (part[0] | 0x20) != 'c' || (part[1] | 0x20) != 'n' || part[2] != '=') {
      continue;
    }
    std::string value;
    for (std::size_t i = 3; i < part.size(); ++i) {
      if (part[i] == '\\' && i + 1 < part.size()) ++i;
      value += part[i];
    }
    return value;
  }
  return {};
}

Status ClientCertificates::Add(Access level, std::string subject, std::string name) {
  if (level == Access::kNone) {
    return Status::InvalidArgument("client certificate: a subject must be granted access");
  }
  // Written in any form openssl prints, kept in the one a peer's certificate is rendered in.
  Result<std::string> normal = net::NormalizeSubject(subject);
  if (!normal) {
    return Status::InvalidArgument(
        "client certificate: '" + subject +
        "' is not a subject like \"CN=order-service,O=Shop\": " + normal.status().message());
  }
  subject = std::move(*normal);
  for (const Subject& known : subjects_) {
    if (known.subject == subject) {
      return Status::InvalidArgument("client certificate: '" + subject + "' is mapped twice");
    }
  }
  if (name.empty()) name = CommonName(subject);
  if (name.empty()) name = subject;
  subjects_.push_back(Subject{level, std::move(subject), std::move(name)});
  return Status::Ok();
}

Status ClientCertificates::AddFromText(std::string_view text) {
  return ForEachConfigLine(text, [this](std::string_view line) {
    const std::size_t blank = line.find_first_of(" \t");
    const std::optional<Access> level =
        blank == std::string_view::npos ? std::nullopt : ParseAccess(line.substr(0, blank));
    if (!level) return Status::InvalidArgument("expected \"<read|client|admin> <subject>\"");
    std::string_view subject = TrimBlanks(line.substr(blank));
    std::string_view name;
    for (std::size_t i = 1; i < subject.size(); ++i) {
      if (subject[i] == '#' && IsBlank(subject[i - 1])) {
        name = TrimBlanks(subject.substr(i + 1));
        subject = TrimBlanks(subject.substr(0, i));
        break;
      }
    }
    return Add(*level, std::string(subject), std::string(name));
  });
}

std::optional<Caller> ClientCertificates::Identify(std::string_view subject) const {
  if (subject.empty()) return std::nullopt;
  for (const Subject& known : subjects_) {
    if (known.subject == subject) return Caller{known.level, known.name};
  }
  return std::nullopt;
}

}  // namespace settle::api
