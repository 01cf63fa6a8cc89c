#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace settle::net::detail {

// The bytes of one connection a reader has received and not yet consumed. Consumed bytes are
// dropped once they are most of the buffer, so it does not grow with a long keep-alive
// connection's history.
class ReadBuffer {
 public:
  // Room for up to `n` more bytes; Commit says how many of them were filled.
  std::span<char> Prepare(std::size_t n) {
    if (read_ > 0 && read_ >= bytes_.size() / 2) {
      bytes_.erase(0, read_);
      read_ = 0;
    }
    prepared_ = bytes_.size();
    bytes_.resize(prepared_ + n);
    return {bytes_.data() + prepared_, n};
  }
  void Commit(std::size_t n) {
    bytes_.resize(prepared_ + std::min(n, bytes_.size() - prepared_));
    prepared_ = bytes_.size();
  }
  void Append(std::string_view bytes) {
    std::span<char> room = Prepare(bytes.size());
    std::copy(bytes.begin(), bytes.end(), room.begin());
    Commit(bytes.size());
  }

  std::string_view unread() const { return std::string_view(bytes_).substr(read_); }
  void Consume(std::size_t n) { read_ += n; }

 private:
  std::string bytes_;
  std::size_t read_ = 0;      // bytes consumed
  std::size_t prepared_ = 0;  // bytes_'s size before the last Prepare
};

}  // namespace settle::net::detail
