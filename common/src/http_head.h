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

enum class HeadProgress { kIncomplete, kComplete, kTooLarge };

// Appends `data` to `head` until the blank line that ends a head; `taken` says how many bytes
// of `data` that took (all of it unless the head completed). kTooLarge once the head, complete
// or not, is over `max_bytes`, however its bytes arrived; `head` then holds them all.
HeadProgress AppendHead(std::string& head, std::string_view data, std::size_t max_bytes,
                        std::size_t& taken);

// The next line of `rest` without its CRLF, which is removed from `rest`.
std::string_view NextLine(std::string_view& rest);

// Reads the header fields of `rest` (a head after its first line) up to the blank line, into
// `framing` and, when given, `fields`. Empty on success, otherwise what is malformed.
std::string ParseFields(std::string_view rest, Framing& framing, Fields* fields);

}  // namespace settle::http_head
