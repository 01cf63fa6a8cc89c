#include "settle/signing/signature_base.h"

#include <algorithm>

#include "settle/core/base64.h"
#include "structured_fields.h"

namespace settle::signing {
namespace {

constexpr std::string_view kSignatureParams = "@signature-params";
// RFC 8941 §3.3.1: an Integer has at most 15 digits.
constexpr std::int64_t kMaxInteger = 999'999'999'999'999;

bool IsLowercaseTchar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// A component identifier Settle can name (RFC 9421 §2): a derived component ("@" and
// lowercase letters, digits and '-') or a field name in lowercase (RFC 9110's token). Such a
// name needs no escaping, and may be quoted in a message as it is.
bool IsComponentName(std::string_view name) {
  if (name.empty()) return false;
  if (name[0] == '@') {
    if (name.size() == 1) return false;
    return std::all_of(name.begin() + 1, name.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
    });
  }
  return std::all_of(name.begin(), name.end(), IsLowercaseTchar);
}

bool IsPrintableAscii(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x20 && u <= 0x7e;
  });
}

// A control character (C0 or DEL) would let a value end its line and forge the next one.
bool HasControlCharacter(std::string_view text) {
  return std::any_of(text.begin(), text.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
}

// What SignatureBase and ParseSignatureInput both require of a component list.
Status CheckComponentNames(const std::vector<std::string>& names) {
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    if (!IsComponentName(name)) {
      return Status::InvalidArgument("component " + std::to_string(i + 1) +
                                     " is neither a lowercase field name nor a derived component");
    }
    if (name == kSignatureParams) {
      return Status::InvalidArgument("\"@signature-params\" cannot be a covered component");
    }
    if (std::find(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(i), name) !=
        names.begin() + static_cast<std::ptrdiff_t>(i)) {
      return Status::InvalidArgument("component \"" + name + "\" is listed twice");
    }
  }
  return Status::Ok();
}

}  // namespace

std::string SerializeParams(const SignatureParams& params) {
  std::string out = "(";
  for (std::size_t i = 0; i < params.components.size(); ++i) {
    if (i > 0) out += ' ';
    out += detail::SerializeString(params.components[i]);
  }
  out += ");created=" + std::to_string(params.created);
  out += ";keyid=" + detail::SerializeString(params.keyid);
  if (!params.alg.empty()) out += ";alg=" + detail::SerializeString(params.alg);
  if (!params.tag.empty()) out += ";tag=" + detail::SerializeString(params.tag);
  return out;
}

Result<std::string> SignatureBase(const std::vector<Component>& covered,
                                  const SignatureParams& params) {
  if (covered.size() != params.components.size()) {
    return Status::InvalidArgument(
        "the covered components are not the signature's list: " + std::to_string(covered.size()) +
        " values for " + std::to_string(params.components.size()) + " components");
  }
  if (Status names = CheckComponentNames(params.components); !names.ok()) return names;
  if (!IsPrintableAscii(params.keyid)) {
    return Status::InvalidArgument("keyid holds a character other than printable ASCII");
  }
  if (!IsPrintableAscii(params.alg)) {
    return Status::InvalidArgument("alg holds a character other than printable ASCII");
  }
  if (!IsPrintableAscii(params.tag)) {
    return Status::InvalidArgument("tag holds a character other than printable ASCII");
  }
  if (params.created < -kMaxInteger || params.created > kMaxInteger) {
    return Status::InvalidArgument("created has more than 15 digits");
  }

  std::string base;
  for (std::size_t i = 0; i < covered.size(); ++i) {
    const Component& component = covered[i];
    if (component.name != params.components[i]) {
      return Status::InvalidArgument("covered component " + std::to_string(i + 1) +
                                     " is not the signature's component \"" + params.components[i] +
                                     "\"");
    }
    if (HasControlCharacter(component.value)) {
      return Status::InvalidArgument("the value of \"" + component.name +
                                     "\" holds a control character");
    }
    base += '"';
    base += component.name;
    base += "\": ";
    base += component.value;
    base += '\n';
  }
  base += '"';
  base += kSignatureParams;
  base += "\": ";
  base += SerializeParams(params);
  return base;
}

Result<ParsedInput> ParseSignatureInput(std::string_view field) {
  Result<detail::DictionaryMember> member = detail::ParseSingleMemberDictionary(field);
  if (!member) return member.status();
  if (!member->is_inner_list) {
    return Status::InvalidArgument("member \"" + member->key +
                                   "\" is not an inner list of components");
  }

  ParsedInput parsed;
  parsed.label = member->key;
  for (std::size_t i = 0; i < member->items.size(); ++i) {
    const detail::Item& item = member->items[i];
    if (item.value.type != detail::BareItem::Type::kString) {
      return Status::InvalidArgument("component " + std::to_string(i + 1) + " is " +
                                     std::string(detail::TypeName(item.value.type)) +
                                     ", not a string");
    }
    parsed.params.components.push_back(item.value.text);
  }
  if (Status names = CheckComponentNames(parsed.params.components); !names.ok()) return names;
  for (const detail::Item& item : member->items) {
    if (!item.parameters.empty()) {
      return Status::InvalidArgument("component \"" + item.value.text + "\" has parameter \"" +
                                     item.parameters.front().first +
                                     "\"; component parameters are not supported");
    }
  }

  // The signature base re-serializes the parameters in SerializeParams' order, so another
  // order could not verify: it is refused here, with a reason.
  static constexpr std::string_view kOrder[] = {"created", "keyid", "alg", "tag"};
  std::size_t next = 0;
  bool has_created = false;
  bool has_keyid = false;
  for (const auto& [key, value] : member->list_parameters) {
    const auto known = std::find(std::begin(kOrder), std::end(kOrder), key);
    if (known == std::end(kOrder)) {
      return Status::InvalidArgument("parameter \"" + key +
                                     "\" is not supported (created, keyid, alg and tag are)");
    }
    const auto index = static_cast<std::size_t>(known - std::begin(kOrder));
    if (index < next) {
      return Status::InvalidArgument("parameter \"" + key +
                                     "\" is out of order: created, keyid, alg, tag are expected");
    }
    next = index + 1;
    const detail::BareItem::Type expected =
        key == "created" ? detail::BareItem::Type::kInteger : detail::BareItem::Type::kString;
    if (value.type != expected) {
      return Status::InvalidArgument("parameter \"" + key + "\" is " +
                                     std::string(detail::TypeName(value.type)) + ", not " +
                                     std::string(detail::TypeName(expected)));
    }
    if (key == "created") {
      parsed.params.created = value.integer;
      has_created = true;
    } else if (key == "keyid") {
      parsed.params.keyid = value.text;
      has_keyid = true;
    } else if (key == "alg") {
      if (value.text.empty()) return Status::InvalidArgument("parameter \"alg\" is empty");
      parsed.params.alg = value.text;
    } else {
      if (value.text.empty()) return Status::InvalidArgument("parameter \"tag\" is empty");
      parsed.params.tag = value.text;
    }
  }
  if (!has_created) return Status::InvalidArgument("parameter \"created\" is missing");
  if (!has_keyid) return Status::InvalidArgument("parameter \"keyid\" is missing");
  return parsed;
}

Result<std::string> ParseSignature(std::string_view field, std::string_view label) {
  Result<detail::DictionaryMember> member = detail::ParseSingleMemberDictionary(field);
  if (!member) return member.status();
  if (member->key != label) {
    return Status::InvalidArgument("there is no member \"" + std::string(label) + "\"");
  }
  if (member->is_inner_list || member->item.value.type != detail::BareItem::Type::kByteSequence) {
    return Status::InvalidArgument("member \"" + member->key + "\" is not a byte sequence");
  }
  if (!member->item.parameters.empty()) {
    return Status::InvalidArgument("member \"" + member->key + "\" has parameters");
  }
  return std::move(member->item.value.text);
}

std::string ByteSequence(std::string_view bytes) { return ":" + Base64Encode(bytes) + ":"; }

}  // namespace settle::signing
