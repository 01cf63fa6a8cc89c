#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace settle {

// Feeds `bytes` to an incremental HTTP parser (HttpRequestParser, HttpResponseParser) in
// pieces of `piece` bytes, the way recv might cut them, until it stops wanting more. Returns
// its last state; `consumed_total` is how many bytes it took.
template <typename Parser>
typename Parser::State FeedInPieces(Parser& parser, const std::string& bytes, std::size_t piece,
                                    std::size_t& consumed_total) {
  consumed_total = 0;
  auto state = Parser::State::kNeedMore;
  for (std::size_t at = 0; at < bytes.size() && state == Parser::State::kNeedMore; at += piece) {
    std::size_t consumed = 0;
    state = parser.Feed(std::string_view(bytes).substr(at, piece), consumed);
    consumed_total += consumed;
  }
  return state;
}

}  // namespace settle
