#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace settle {

// Immutable bytes that copies share instead of duplicating: a branch's body, which every
// delivery of a message to a topic's subscribers carries, is one allocation however many rows
// name it. A copy is a reference count; the bytes never change once made, so sharing them
// across threads needs no lock.
//
// It converts implicitly from and to std::string so that it reads like one; SharesWith tells
// whether two values are one allocation (what a store uses to keep shared bytes once).
class SharedBytes {
 public:
  SharedBytes() = default;
  SharedBytes(std::string bytes)  // NOLINT: implicit, a body is made from its bytes
      : bytes_(bytes.empty() ? nullptr : std::make_shared<const std::string>(std::move(bytes))) {}
  SharedBytes(const char* bytes) : SharedBytes(std::string(bytes)) {}  // NOLINT: as above
  explicit SharedBytes(std::string_view bytes) : SharedBytes(std::string(bytes)) {}

  const std::string& str() const { return bytes_ ? *bytes_ : Empty(); }
  operator const std::string&() const { return str(); }  // NOLINT: reads as a string
  std::string_view view() const { return str(); }
  std::size_t size() const { return str().size(); }
  bool empty() const { return str().empty(); }

  // True if both are the same non-empty allocation (copies of one value), not merely equal.
  bool SharesWith(const SharedBytes& other) const {
    return bytes_ != nullptr && bytes_ == other.bytes_;
  }
  // The allocation's identity (nullptr when empty): a key for finding copies of one value.
  const void* identity() const { return bytes_.get(); }

  friend bool operator==(const SharedBytes& a, const SharedBytes& b) {
    return a.bytes_ == b.bytes_ || a.str() == b.str();
  }

 private:
  static const std::string& Empty() {
    static const std::string empty;
    return empty;
  }

  std::shared_ptr<const std::string> bytes_;
};

}  // namespace settle
