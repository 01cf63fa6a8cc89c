#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "settle/core/status.h"

namespace settle::signing::detail {

// The part of RFC 8941 (Structured Field Values for HTTP) that Signature-Input and Signature
// use: a Dictionary, its members' Inner Lists and Items, and their Parameters. Decimals, and
// RFC 9651's Dates and Display Strings, are refused.

// A bare item (RFC 8941 §3.3).
struct BareItem {
  enum class Type { kInteger, kString, kToken, kByteSequence, kBoolean };
  Type type = Type::kBoolean;
  std::int64_t integer = 0;
  std::string text;  // a String's or a Token's characters, a Byte Sequence's decoded bytes
  bool boolean = true;
};

// "an integer", "a string", ... for messages.
std::string_view TypeName(BareItem::Type type);

// Parameters in the order they appear (RFC 8941 §3.1.2); a key appears at most once.
using Parameters = std::vector<std::pair<std::string, BareItem>>;

struct Item {
  BareItem value;
  Parameters parameters;
};

// A Dictionary's member (RFC 8941 §3.2): an Item, or an Inner List with its own parameters.
struct DictionaryMember {
  std::string key;
  bool is_inner_list = false;
  Item item;                // when !is_inner_list
  std::vector<Item> items;  // when is_inner_list
  Parameters list_parameters;
};

// Parses a Dictionary field value (RFC 8941 §4.2.2) that has exactly one member.
// InvalidArgument naming what is wrong and where, without quoting the field: malformed syntax,
// a key given twice among one set of parameters (RFC 8941 would keep the last one; a signature
// must mean one thing), an empty field, or several members.
Result<DictionaryMember> ParseSingleMemberDictionary(std::string_view field);

// Whether `key` is an RFC 8941 key: ( lcalpha / "*" ) *( lcalpha / DIGIT / "_" / "-" / "." /
// "*" ).
bool IsKey(std::string_view key);

// `text` as an RFC 8941 String: in double quotes, with '"' and '\' escaped. The caller makes
// sure that it holds only printable ASCII (0x20 to 0x7E).
std::string SerializeString(std::string_view text);

}  // namespace settle::signing::detail
