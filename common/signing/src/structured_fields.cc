#include "structured_fields.h"

#include <optional>

#include "settle/core/base64.h"

namespace settle::signing::detail {
namespace {

bool IsLcAlpha(char c) { return c >= 'a' && c <= 'z'; }
bool IsAlpha(char c) { return IsLcAlpha(c) || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// RFC 9110's tchar.
bool IsTchar(char c) {
  if (IsAlpha(c) || IsDigit(c)) return true;
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~':
      return true;
    default:
      return false;
  }
}

bool IsKeyChar(char c) {
  return IsLcAlpha(c) || IsDigit(c) || c == '_' || c == '-' || c == '.' || c == '*';
}

// A recursive-descent reader of RFC 8941 §4.2's algorithms over one field value. Each Parse*
// starts at the current character and leaves the position after what it read.
class Parser {
 public:
  explicit Parser(std::string_view input) : input_(input) {}

  Result<DictionaryMember> SingleMemberDictionary() {
    // §4.2: leading SP is discarded; trailing OWS is discarded after the member (§4.2.2).
    SkipSp();
    if (AtEnd()) return Status::InvalidArgument("the field is empty");
    DictionaryMember member;
    Result<std::string> key = Key();
    if (!key) return key.status();
    member.key = std::move(*key);
    if (Peek() == '=') {
      ++pos_;
      if (Peek() == '(') {
        member.is_inner_list = true;
        Status status = InnerList(member.items, member.list_parameters);
        if (!status.ok()) return status;
      } else {
        Result<Item> item = ParseItem();
        if (!item) return item.status();
        member.item = std::move(*item);
      }
    } else {
      // A key without a value is the Boolean true, with parameters.
      Result<Parameters> parameters = ParseParameters();
      if (!parameters) return parameters.status();
      member.item.parameters = std::move(*parameters);
    }
    SkipOws();
    if (AtEnd()) return member;
    if (Peek() == ',') {
      return Status::InvalidArgument("the field has several members; one is expected");
    }
    return Fail("expected ',' or the end of the field");
  }

 private:
  bool AtEnd() const { return pos_ >= input_.size(); }
  char Peek() const { return AtEnd() ? '\0' : input_[pos_]; }
  void SkipSp() {
    while (Peek() == ' ') ++pos_;
  }
  void SkipOws() {
    while (Peek() == ' ' || Peek() == '\t') ++pos_;
  }

  Status Fail(std::string_view what) const {
    if (AtEnd()) return Status::InvalidArgument(std::string(what) + " at the end of the field");
    return Status::InvalidArgument(std::string(what) + " at character " + std::to_string(pos_ + 1));
  }

  // §4.2.3.3
  Result<std::string> Key() {
    if (!IsLcAlpha(Peek()) && Peek() != '*') {
      return Fail("expected a key (a lowercase letter or '*')");
    }
    const std::size_t start = pos_;
    while (!AtEnd() && IsKeyChar(Peek())) ++pos_;
    return std::string(input_.substr(start, pos_ - start));
  }

  // §4.2.1.2: "(" *SP [ item *( 1*SP item ) *SP ] ")" parameters
  Status InnerList(std::vector<Item>& items, Parameters& parameters) {
    ++pos_;  // '('
    while (true) {
      SkipSp();
      if (AtEnd()) return Fail("expected ')' to close the inner list");
      if (Peek() == ')') {
        ++pos_;
        Result<Parameters> list_parameters = ParseParameters();
        if (!list_parameters) return list_parameters.status();
        parameters = std::move(*list_parameters);
        return Status::Ok();
      }
      Result<Item> item = ParseItem();
      if (!item) return item.status();
      items.push_back(std::move(*item));
      if (AtEnd()) return Fail("expected ')' to close the inner list");
      if (Peek() != ' ' && Peek() != ')') {
        return Fail("expected a space or ')' after an inner list's item");
      }
    }
  }

  // §4.2.3
  Result<Item> ParseItem() {
    Item item;
    Result<BareItem> value = ParseBareItem();
    if (!value) return value.status();
    item.value = std::move(*value);
    Result<Parameters> parameters = ParseParameters();
    if (!parameters) return parameters.status();
    item.parameters = std::move(*parameters);
    return item;
  }

  // §4.2.3.2: *( ";" *SP key [ "=" bare-item ] )
  Result<Parameters> ParseParameters() {
    Parameters parameters;
    while (Peek() == ';') {
      ++pos_;
      SkipSp();
      Result<std::string> key = Key();
      if (!key) return key.status();
      BareItem value;  // true when no value follows
      if (Peek() == '=') {
        ++pos_;
        Result<BareItem> bare = ParseBareItem();
        if (!bare) return bare.status();
        value = std::move(*bare);
      }
      for (const auto& [existing, unused] : parameters) {
        if (existing == *key) {
          return Status::InvalidArgument("parameter \"" + *key + "\" is given twice");
        }
      }
      parameters.emplace_back(std::move(*key), std::move(value));
    }
    return parameters;
  }

  // §4.2.3.1
  Result<BareItem> ParseBareItem() {
    const char c = Peek();
    if (c == '-' || IsDigit(c)) return ParseInteger();
    if (c == '"') return ParseString();
    if (c == '*' || IsAlpha(c)) return ParseToken();
    if (c == ':') return ParseByteSequence();
    if (c == '?') return ParseBoolean();
    return Fail("expected an item (an integer, a string, a token, bytes or a boolean)");
  }

  // §4.2.4, without decimals: ["-"] 1*15DIGIT
  Result<BareItem> ParseInteger() {
    BareItem item;
    item.type = BareItem::Type::kInteger;
    bool negative = false;
    if (Peek() == '-') {
      negative = true;
      ++pos_;
    }
    if (!IsDigit(Peek())) return Fail("expected a digit");
    std::int64_t value = 0;
    int digits = 0;
    while (IsDigit(Peek())) {
      if (++digits > 15) return Fail("an integer has at most 15 digits");
      value = value * 10 + (Peek() - '0');
      ++pos_;
    }
    if (Peek() == '.') return Fail("a decimal is not expected");
    item.integer = negative ? -value : value;
    return item;
  }

  // §4.2.5: DQUOTE *( unescaped / "\" ( DQUOTE / "\" ) ) DQUOTE
  Result<BareItem> ParseString() {
    BareItem item;
    item.type = BareItem::Type::kString;
    ++pos_;  // '"'
    while (!AtEnd()) {
      const auto c = static_cast<unsigned char>(input_[pos_]);
      if (c == '\\') {
        ++pos_;
        if (Peek() != '"' && Peek() != '\\') {
          return Fail("a string may escape only '\"' and '\\'");
        }
        item.text += Peek();
        ++pos_;
      } else if (c == '"') {
        ++pos_;
        return item;
      } else if (c < 0x20 || c > 0x7e) {
        return Fail("a string holds only printable ASCII");
      } else {
        item.text += static_cast<char>(c);
        ++pos_;
      }
    }
    return Fail("expected '\"' to close the string");
  }

  // §4.2.6: ( ALPHA / "*" ) *( tchar / ":" / "/" )
  Result<BareItem> ParseToken() {
    BareItem item;
    item.type = BareItem::Type::kToken;
    const std::size_t start = pos_;
    ++pos_;
    while (!AtEnd() && (IsTchar(Peek()) || Peek() == ':' || Peek() == '/')) ++pos_;
    item.text = std::string(input_.substr(start, pos_ - start));
    return item;
  }

  // §4.2.7: ":" *( base64 ) ":"
  Result<BareItem> ParseByteSequence() {
    BareItem item;
    item.type = BareItem::Type::kByteSequence;
    ++pos_;  // ':'
    const std::size_t start = pos_;
    while (!AtEnd() && Peek() != ':') {
      if (!IsBase64Char(Peek())) return Fail("a byte sequence holds only base64");
      ++pos_;
    }
    if (AtEnd()) return Fail("expected ':' to close the byte sequence");
    std::optional<std::string> bytes = Base64Decode(input_.substr(start, pos_ - start));
    if (!bytes) return Fail("the byte sequence is not valid base64");
    ++pos_;  // ':'
    item.text = std::move(*bytes);
    return item;
  }

  // §4.2.8: "?" ( "0" / "1" )
  Result<BareItem> ParseBoolean() {
    BareItem item;
    item.type = BareItem::Type::kBoolean;
    ++pos_;  // '?'
    if (Peek() != '0' && Peek() != '1') return Fail("expected '0' or '1' after '?'");
    item.boolean = Peek() == '1';
    ++pos_;
    return item;
  }

  std::string_view input_;
  std::size_t pos_ = 0;
};

}  // namespace

std::string_view TypeName(BareItem::Type type) {
  switch (type) {
    case BareItem::Type::kInteger:
      return "an integer";
    case BareItem::Type::kString:
      return "a string";
    case BareItem::Type::kToken:
      return "a token";
    case BareItem::Type::kByteSequence:
      return "a byte sequence";
    case BareItem::Type::kBoolean:
      return "a boolean";
  }
  return "an item";
}

Result<DictionaryMember> ParseSingleMemberDictionary(std::string_view field) {
  return Parser(field).SingleMemberDictionary();
}

bool IsKey(std::string_view key) {
  if (key.empty() || (!IsLcAlpha(key[0]) && key[0] != '*')) return false;
  for (char c : key) {
    if (!IsKeyChar(c)) return false;
  }
  return true;
}

std::string SerializeString(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
  return out;
}

}  // namespace settle::signing::detail
