#include "fault_proxy_wire.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/asio/buffer.hpp>

namespace settle::testing::fault_proxy {
namespace {

using boost::asio::ip::tcp;

// A chunk-size line or trailer line longer than this is not a real client's or server's.
constexpr std::size_t kMaxLineBytes = 4096;
// Chunk lines around tiny chunks could multiply the wire size of a body within the body limit.
constexpr std::size_t kMaxChunkedWireBytes = 2 * kMaxBodyBytes;
constexpr std::size_t kNoValue = static_cast<std::size_t>(-1);

bool IsTokenChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) ||
         (c != '\0' && std::strchr("!#$%&'*+-.^_`|~", c) != nullptr);
}

bool IsToken(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), IsTokenChar);
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Parses digits (decimal or hex); kNoValue when there are none or others. Values too large to
// matter saturate at kNoValue - 1, which every caller refuses as too large.
std::size_t ParseNumber(std::string_view text, int base) {
  if (text.empty()) return kNoValue;
  std::size_t value = 0;
  for (char c : text) {
    int digit = -1;
    if (c >= '0' && c <= '9') digit = c - '0';
    if (base == 16 && c >= 'a' && c <= 'f') digit = c - 'a' + 10;
    if (base == 16 && c >= 'A' && c <= 'F') digit = c - 'A' + 10;
    if (digit < 0) return kNoValue;
    value = value < (kNoValue - 1) / 32 ? value * base + digit : kNoValue - 1;
  }
  return value;
}

// "HTTP/1.0" -> 0, "HTTP/1.1" -> 1, anything else -> -1.
int MinorVersion(std::string_view version) {
  if (version == "HTTP/1.1") return 1;
  if (version == "HTTP/1.0") return 0;
  return -1;
}

struct RequestLine {
  std::string method;
  std::string target;
  int minor = -1;
};

bool ParseRequestLine(std::string_view line, RequestLine& out) {
  std::size_t first = line.find(' ');
  if (first == std::string_view::npos) return false;
  std::size_t second = line.find(' ', first + 1);
  if (second == std::string_view::npos || line.find(' ', second + 1) != std::string_view::npos) {
    return false;
  }
  std::string_view method = line.substr(0, first);
  std::string_view target = line.substr(first + 1, second - first - 1);
  bool target_ok = !target.empty() && target.front() == '/' &&
                   std::none_of(target.begin(), target.end(), [](char c) {
                     return std::iscntrl(static_cast<unsigned char>(c)) != 0;
                   });
  out.minor = MinorVersion(line.substr(second + 1));
  if (!IsToken(method) || !target_ok || out.minor < 0) return false;
  out.method = method;
  out.target = target;
  return true;
}

struct StatusLine {
  int status = 0;
  int minor = -1;
};

bool ParseStatusLine(std::string_view line, StatusLine& out) {
  // "HTTP/1.1 200 OK"; the reason phrase may be empty or missing.
  if (line.size() < 12 || (line.size() > 12 && line[12] != ' ') || line[8] != ' ') return false;
  out.minor = MinorVersion(line.substr(0, 8));
  std::size_t status = ParseNumber(line.substr(9, 3), 10);
  if (out.minor < 0 || status < 100 || status > 599) return false;
  out.status = static_cast<int>(status);
  return true;
}

bool FirstLineValid(std::string_view line, bool request) {
  if (request) {
    RequestLine parsed;
    return ParseRequestLine(line, parsed);
  }
  StatusLine parsed;
  return ParseStatusLine(line, parsed);
}

// What the headers say about the message's framing and the connection.
struct Framing {
  std::size_t content_length = kNoValue;  // kNoValue: no Content-Length
  bool has_transfer_encoding = false;
  bool chunked = false;  // the last transfer coding is chunked
  bool connection_close = false;
  bool connection_keep_alive = false;
  bool expects_continue = false;
};

// Splits `head` (ending in the blank line) into lines; false when a line is not a header field.
bool ParseHeaders(std::string_view head, std::string_view& first_line, Framing& framing) {
  std::size_t end = head.find("\r\n");
  first_line = head.substr(0, end);
  std::size_t pos = end + 2;
  while (true) {
    end = head.find("\r\n", pos);
    if (end == std::string_view::npos) return false;
    if (end == pos) return true;
    std::string_view line = head.substr(pos, end - pos);
    pos = end + 2;
    // A bare CR or LF would let the two sides disagree on where the head ends; a leading space
    // (obsolete line folding) leaves the colon test failing through IsToken.
    if (line.find_first_of("\r\n") != std::string_view::npos) return false;
    std::size_t colon = line.find(':');
    if (colon == std::string_view::npos || !IsToken(line.substr(0, colon))) return false;
    std::string name = Lower(line.substr(0, colon));
    std::string_view value = Trim(line.substr(colon + 1));
    if (name == "content-length") {
      std::size_t length = ParseNumber(value, 10);
      if (length == kNoValue) return false;
      if (framing.content_length != kNoValue && framing.content_length != length) return false;
      framing.content_length = length;
    } else if (name == "transfer-encoding") {
      framing.has_transfer_encoding = true;
      std::string codings = Lower(value);
      std::size_t comma = codings.rfind(',');
      framing.chunked =
          Trim(comma == std::string::npos ? codings : codings.substr(comma + 1)) == "chunked";
    } else if (name == "connection") {
      std::string tokens = Lower(value);
      std::size_t start = 0;
      while (start <= tokens.size()) {
        std::size_t comma = std::min(tokens.find(',', start), tokens.size());
        std::string_view token = Trim(std::string_view(tokens).substr(start, comma - start));
        framing.connection_close |= token == "close";
        framing.connection_keep_alive |= token == "keep-alive";
        start = comma + 1;
      }
    } else if (name == "expect") {
      framing.expects_continue = Lower(value) == "100-continue";
    }
  }
}

bool KeepsAlive(int minor, const Framing& framing) {
  if (framing.connection_close) return false;
  return minor == 1 || framing.connection_keep_alive;
}

}  // namespace

ReadStatus WireReader::ReadRequestHead(tcp::socket& socket, Request& request) {
  request = Request{};
  ReadStatus status = ReadHead(socket, FirstLine::kRequest, request.head);
  if (status != ReadStatus::kOk) return status;
  std::string_view first_line;
  Framing framing;
  RequestLine line;
  if (!ParseHeaders(request.head, first_line, framing) || !ParseRequestLine(first_line, line)) {
    return ReadStatus::kMalformed;
  }
  // Nothing in Settle sends chunked requests; refusing them keeps requests simple to forward.
  if (framing.has_transfer_encoding) return ReadStatus::kMalformed;
  if (framing.content_length != kNoValue && framing.content_length > kMaxBodyBytes) {
    return ReadStatus::kTooLarge;
  }
  request.method = line.method;
  request.path = line.target.substr(0, line.target.find('?'));
  request.content_length = framing.content_length == kNoValue ? 0 : framing.content_length;
  request.keep_alive = KeepsAlive(line.minor, framing);
  request.expects_continue = framing.expects_continue && line.minor == 1;
  return ReadStatus::kOk;
}

ReadStatus WireReader::ReadRequestBody(tcp::socket& socket, Request& request) {
  return ReadExactly(socket, request.content_length, request.body);
}

ReadStatus WireReader::ReadResponse(tcp::socket& socket, bool head_request, Response& response) {
  bool skipped_interim = false;
  while (true) {
    response = Response{};
    ReadStatus status = ReadHead(socket, FirstLine::kStatus, response.head);
    if (status == ReadStatus::kClosed && skipped_interim) return ReadStatus::kBroken;
    if (status != ReadStatus::kOk) return status;
    std::string_view first_line;
    Framing framing;
    StatusLine line;
    if (!ParseHeaders(response.head, first_line, framing) || !ParseStatusLine(first_line, line)) {
      return ReadStatus::kMalformed;
    }
    if (line.status == 101) return ReadStatus::kMalformed;  // no protocol switches through here
    if (line.status < 200) {
      skipped_interim = true;
      continue;
    }
    response.status = line.status;
    response.keep_alive = KeepsAlive(line.minor, framing);
    if (head_request || line.status == 204 || line.status == 304) {
      status = ReadStatus::kOk;
    } else if (framing.chunked) {
      response.cut_detectable = true;
      status = ReadChunked(socket, response.body);
    } else if (!framing.has_transfer_encoding && framing.content_length != kNoValue) {
      if (framing.content_length > kMaxBodyBytes) return ReadStatus::kTooLarge;
      response.cut_detectable = framing.content_length > 0;
      status = ReadExactly(socket, framing.content_length, response.body);
    } else {
      response.keep_alive = false;
      status = ReadUntilClose(socket, response.body);
    }
    return status;
  }
}

ReadStatus WireReader::ReadHead(tcp::socket& socket, FirstLine kind, std::string& head) {
  bool first_line_checked = false;
  while (true) {
    // Checking the first line as soon as it is complete answers garbage at once, instead of
    // waiting for a blank line that may never come.
    if (!first_line_checked) {
      std::size_t newline = buffer_.find('\n');
      if (newline != std::string::npos) {
        if (newline == 0 || buffer_[newline - 1] != '\r' ||
            !FirstLineValid(std::string_view(buffer_).substr(0, newline - 1),
                            kind == FirstLine::kRequest)) {
          return ReadStatus::kMalformed;
        }
        first_line_checked = true;
      }
    }
    std::size_t end = buffer_.find("\r\n\r\n");
    if (end != std::string::npos) {
      if (end + 4 > kMaxHeadBytes) return ReadStatus::kTooLarge;
      head = buffer_.substr(0, end + 4);
      buffer_.erase(0, end + 4);
      return ReadStatus::kOk;
    }
    if (buffer_.size() >= kMaxHeadBytes) return ReadStatus::kTooLarge;
    if (!Fill(socket)) return buffer_.empty() ? ReadStatus::kClosed : ReadStatus::kBroken;
  }
}

ReadStatus WireReader::ReadExactly(tcp::socket& socket, std::size_t count, std::string& out) {
  while (buffer_.size() < count) {
    if (!Fill(socket)) return ReadStatus::kBroken;
  }
  out.append(buffer_, 0, count);
  buffer_.erase(0, count);
  return ReadStatus::kOk;
}

ReadStatus WireReader::ReadLine(tcp::socket& socket, std::string& out, std::size_t limit) {
  while (true) {
    std::size_t end = buffer_.find("\r\n");
    if (end != std::string::npos) {
      if (end > limit) return ReadStatus::kTooLarge;
      out = buffer_.substr(0, end);
      buffer_.erase(0, end + 2);
      return ReadStatus::kOk;
    }
    if (buffer_.size() > limit) return ReadStatus::kTooLarge;
    if (!Fill(socket)) return ReadStatus::kBroken;
  }
}

ReadStatus WireReader::ReadChunked(tcp::socket& socket, std::string& out) {
  std::size_t data_bytes = 0;
  while (true) {
    std::string line;
    ReadStatus status = ReadLine(socket, line, kMaxLineBytes);
    if (status != ReadStatus::kOk) return status;
    out += line;
    out += "\r\n";
    std::size_t size = ParseNumber(Trim(std::string_view(line).substr(0, line.find(';'))), 16);
    if (size == kNoValue) return ReadStatus::kMalformed;
    if (size == 0) break;
    data_bytes += std::min(size, kMaxBodyBytes + 1);
    if (data_bytes > kMaxBodyBytes || out.size() > kMaxChunkedWireBytes) {
      return ReadStatus::kTooLarge;
    }
    status = ReadExactly(socket, size + 2, out);
    if (status != ReadStatus::kOk) return status;
    if (out.compare(out.size() - 2, 2, "\r\n") != 0) return ReadStatus::kMalformed;
  }
  // Trailer fields, then the blank line that ends the message.
  while (true) {
    std::string line;
    ReadStatus status = ReadLine(socket, line, kMaxLineBytes);
    if (status != ReadStatus::kOk) return status;
    out += line;
    out += "\r\n";
    if (line.empty()) return ReadStatus::kOk;
    if (out.size() > kMaxChunkedWireBytes) return ReadStatus::kTooLarge;
  }
}

ReadStatus WireReader::ReadUntilClose(tcp::socket& socket, std::string& out) {
  while (Fill(socket)) {
    if (buffer_.size() > kMaxBodyBytes) return ReadStatus::kTooLarge;
  }
  out = std::move(buffer_);
  buffer_.clear();
  return ReadStatus::kOk;
}

bool WireReader::Fill(tcp::socket& socket) {
  char chunk[16 * 1024];
  boost::system::error_code error;
  std::size_t count = socket.read_some(boost::asio::buffer(chunk), error);
  if (error || count == 0) return false;
  buffer_.append(chunk, count);
  return true;
}

}  // namespace settle::testing::fault_proxy
