#include "http_head.h"

#include <algorithm>
#include <cctype>

#include "settle/common/http_header.h"

namespace settle::http_head {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The comma-separated tokens of a header value, trimmed.
std::vector<std::string_view> Tokens(std::string_view value) {
  std::vector<std::string_view> tokens;
  while (!value.empty()) {
    const std::size_t comma = value.find(',');
    tokens.push_back(Trim(value.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return tokens;
}

bool ParseDecimal(std::string_view s, std::uint64_t& out) {
  if (s.empty() || s.size() > 18) return false;
  out = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    out = out * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return true;
}

}  // namespace

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

HeadProgress AppendHead(std::string& head, std::string_view data, std::size_t max_bytes,
                        std::size_t& taken) {
  const std::size_t before = head.size();
  head.append(data);
  // The blank line may straddle reads: look from 3 bytes before this one.
  const std::size_t end = head.find("\r\n\r\n", before < 3 ? 0 : before - 3);
  if (end == std::string::npos) {
    taken = data.size();
    return head.size() > max_bytes ? HeadProgress::kTooLarge : HeadProgress::kIncomplete;
  }
  if (end + 4 > max_bytes) {
    taken = data.size();
    return HeadProgress::kTooLarge;
  }
  head.resize(end + 4);
  taken = end + 4 - before;
  return HeadProgress::kComplete;
}

std::string_view NextLine(std::string_view& rest) {
  const std::size_t eol = rest.find("\r\n");
  const std::string_view line = rest.substr(0, eol);
  rest.remove_prefix(eol == std::string_view::npos ? rest.size() : eol + 2);
  return line;
}

std::string ParseFields(std::string_view rest, Framing& framing, Fields* fields) {
  while (!rest.empty()) {
    const std::string_view line = NextLine(rest);
    if (line.empty()) break;  // the blank line ending the head
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
      return "malformed header line '" + std::string(line.substr(0, 80)) + "'";
    }
    const std::string_view name = line.substr(0, colon);
    const std::string_view value = Trim(line.substr(colon + 1));
    // A name is a token: whitespace before the colon (RFC 9112 §5.1), a folded line or any
    // other byte would let a proxy in front read a different header than this one does, as
    // would a bare CR or LF or a NUL in the value (RFC 9110 §5.5). Both are refused.
    if (!IsValidHeaderName(name) || !IsValidHeaderValue(value)) {
      return "malformed header line '" + std::string(line.substr(0, 80)) + "'";
    }
    if (EqualsIgnoreCase(name, "Content-Length")) {
      std::uint64_t parsed = 0;
      if (!ParseDecimal(value, parsed) || (framing.has_length && parsed != framing.length)) {
        return "invalid Content-Length '" + std::string(value.substr(0, 40)) + "'";
      }
      framing.has_length = true;
      framing.length = parsed;
    } else if (EqualsIgnoreCase(name, "Transfer-Encoding")) {
      const std::vector<std::string_view> codings = Tokens(value);
      framing.chunked = !codings.empty() && EqualsIgnoreCase(codings.back(), "chunked");
      framing.other_coding = !framing.chunked;
    } else if (EqualsIgnoreCase(name, "Connection")) {
      for (std::string_view token : Tokens(value)) {
        if (EqualsIgnoreCase(token, "close")) framing.close = true;
        if (EqualsIgnoreCase(token, "keep-alive")) framing.keep_alive = true;
      }
    } else if (EqualsIgnoreCase(name, "Expect")) {
      framing.expect_continue = EqualsIgnoreCase(value, "100-continue");
    }
    if (fields != nullptr) fields->emplace_back(std::string(name), std::string(value));
  }
  return {};
}

}  // namespace settle::http_head
