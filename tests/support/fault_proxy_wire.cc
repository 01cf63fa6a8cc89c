#include "fault_proxy_wire.h"

#include <span>
#include <string_view>

#include <boost/asio/buffer.hpp>
#include <boost/asio/write.hpp>

#include "settle/net/response_reader.h"

namespace settle::testing::fault_proxy {
namespace {

using boost::asio::ip::tcp;

constexpr std::size_t kReadBytes = 16 * 1024;
// Chunk lines around tiny chunks can make a body within kMaxBodyBytes much longer on the wire;
// past this an answer is refused while it is still arriving, not after an endless stream.
constexpr std::size_t kMaxAnswerWireBytes = kMaxHeadBytes + 2 * kMaxBodyBytes;
constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

// The fields that frame a message on one connection; the proxy frames what it sends itself.
bool IsFramingField(std::string_view name) {
  return net::EqualsIgnoreCase(name, "Content-Length") ||
         net::EqualsIgnoreCase(name, "Transfer-Encoding") ||
         net::EqualsIgnoreCase(name, "Trailer") || net::EqualsIgnoreCase(name, "Connection");
}

void AppendFields(const net::Headers& headers, std::string& out) {
  for (const auto& [name, value] : headers) {
    if (IsFramingField(name)) continue;
    out += name;
    out += ": ";
    out += value;
    out += "\r\n";
  }
}

// Reads what the socket has into `room`; 0 when the connection ended or failed.
std::size_t ReadSome(tcp::socket& socket, std::span<char> room) {
  boost::system::error_code error;
  std::size_t count = socket.read_some(boost::asio::buffer(room.data(), room.size()), error);
  return error ? 0 : count;
}

}  // namespace

ClientReader::ClientReader(tcp::socket& socket)
    : socket_(socket),
      reader_(net::RequestLimits{.max_head_bytes = kMaxHeadBytes,
                                 // As many as fit in the head: the upstream's limit is the
                                 // one that matters.
                                 .max_fields = kMaxHeadBytes / 4,
                                 .max_body_bytes = kMaxBodyBytes}) {}

ReadStatus ClientReader::Read(Request& request) {
  while (true) {
    switch (reader_.Parse()) {
      case net::RequestReader::Step::kRequest:
        request.message = reader_.TakeRequest();
        request.version = reader_.version();
        request.keep_alive = reader_.keep_alive();
        // An absolute URL or "*" names a server; this proxy only ever forwards to its one.
        if (request.message.target.empty() || request.message.target.front() != '/') {
          refusal_ = "request target: not a path";
          return ReadStatus::kMalformed;
        }
        return ReadStatus::kOk;
      case net::RequestReader::Step::kExpectContinue: {
        boost::system::error_code error;
        boost::asio::write(socket_, boost::asio::buffer(kContinue.data(), kContinue.size()), error);
        if (error) return ReadStatus::kBroken;
        continue;
      }
      case net::RequestReader::Step::kRefused:
        refusal_ = reader_.refusal();
        return ReadStatus::kMalformed;
      case net::RequestReader::Step::kHead:  // not reported: this reader does not ask for heads
        continue;
      case net::RequestReader::Step::kNeedMore:
        break;
    }
    std::size_t count = ReadSome(socket_, reader_.Prepare(kReadBytes));
    reader_.Commit(count);
    if (count == 0) return reader_.mid_request() ? ReadStatus::kBroken : ReadStatus::kClosed;
  }
}

ReadStatus ReadResponse(tcp::socket& socket, Response& response) {
  net::ResponseReader reader(kMaxHeadBytes, kMaxBodyBytes);
  std::size_t received = 0;
  net::ResponseReader::Step step = net::ResponseReader::Step::kNeedMore;
  while (step == net::ResponseReader::Step::kNeedMore) {
    if (received > kMaxAnswerWireBytes) return ReadStatus::kMalformed;
    std::size_t count = ReadSome(socket, reader.Prepare(kReadBytes));
    reader.Commit(count);
    received += count;
    if (count > 0) {
      step = reader.Parse();
      continue;
    }
    // The end of the connection completes an answer that runs until it, and cuts any other.
    // Counting bytes, not asking the reader, tells an upstream that closed an idle connection
    // from one that sent a "100 Continue" and then closed.
    step = reader.Eof();
    if (step == net::ResponseReader::Step::kNeedMore) {
      return received == 0 ? ReadStatus::kClosed : ReadStatus::kBroken;
    }
    if (step == net::ResponseReader::Step::kMalformed) return ReadStatus::kBroken;
  }
  if (step == net::ResponseReader::Step::kMalformed) return ReadStatus::kMalformed;
  // No protocol switches through here; a longer body was counted, not kept.
  if (reader.status() == 101 || reader.body_bytes() > kMaxBodyBytes) return ReadStatus::kMalformed;
  response.status = reader.status();
  response.headers = reader.headers();
  response.body = reader.body();
  response.reusable = reader.reusable();
  response.closes = !reader.reusable() && reader.leftover().empty();
  return ReadStatus::kOk;
}

std::string SerializeRequest(const Request& request) {
  const net::Request& message = request.message;
  std::string out = message.method + " " + message.target +
                    (request.version == 10 ? " HTTP/1.0\r\n" : " HTTP/1.1\r\n");
  AppendFields(message.headers, out);
  // A POST with "Content-Length: 0" keeps it; a GET without a body gets none.
  bool framed = net::FindHeader(message.headers, "Content-Length") != nullptr ||
                net::FindHeader(message.headers, "Transfer-Encoding") != nullptr;
  if (framed || !message.body.empty()) {
    out += "Content-Length: " + std::to_string(message.body.size()) + "\r\n";
  }
  out += "\r\n";
  out += message.body;
  return out;
}

std::string SerializeResponseHead(int status, const net::Headers& headers, std::size_t body_bytes,
                                  bool close) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + net::ReasonPhrase(status) + "\r\n";
  AppendFields(headers, out);
  // RFC 9110 section 8.6: these answers have no body, and a 204 must not say it has none.
  if (status >= 200 && status != 204 && status != 304) {
    out += "Content-Length: " + std::to_string(body_bytes) + "\r\n";
  }
  if (close) out += "Connection: close\r\n";
  out += "\r\n";
  return out;
}

}  // namespace settle::testing::fault_proxy
