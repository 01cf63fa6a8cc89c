#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// What the HTTP/1.x request and response parsers share: reading header fields and what they
// say about the message's framing. Internal to settle_common.
namespace settle::http_head {

using Fields = std::vector<std::pair<std::string, std::string>>;

struct Framing {
  bool has_length = false;
  std::uint64_t length = 0;
  bool chunked = false;       // Transfer-Encoding ends with chunked
  bool other_coding = false;  // Transfer-Encoding without chunked last
  bool close = false;         // Connection: close
  bool keep_alive = false;    // Connection: keep-alive
  bool expect_continue = false;
};

bool EqualsIgnoreCase(std::string_view a, std::string_view b);

// The next line of `rest` without its CRLF, which is removed from `rest`.
std::string_view NextLine(std::string_view& rest);

// Reads the header fields of `rest` (a head after its first line) up to the blank line, into
// `framing` and, when given, `fields`. Empty on success, otherwise what is malformed.
std::string ParseFields(std::string_view rest, Framing& framing, Fields* fields);

}  // namespace settle::http_head
