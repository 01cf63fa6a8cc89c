#pragma once

// What the server and the client share below HTTP: the two kinds of stream, their timeouts,
// writing a message whole, and closing a connection so that the peer reads everything sent
// before.
#include "settle/async/asio.h"

#include <boost/asio/ssl/context.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "settle/core/clock.h"
#include "settle/core/status.h"
#include "settle/net/client.h"
#include "settle/net/server.h"

namespace settle::net {

namespace beast = boost::beast;
using tcp = asio::ip::tcp;
using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

template <class Stream>
constexpr bool kIsTls = std::is_same_v<Stream, TlsStream>;

// A server's TLS context from its certificate chain and key, asking for client certificates
// from files.client_ca_file when set (InvalidArgument naming the file that cannot be used).
Result<std::unique_ptr<asio::ssl::context>> ServerTlsContext(const TlsFiles& files);

// A client's TLS context: peers verified against options.ca_file (PEM) when given, otherwise
// against the system's CA store; options.client_cert_file presented to servers that ask.
Result<std::unique_ptr<asio::ssl::context>> ClientTlsContext(const ClientOptions& options);

// A message up to this size (head and body) is written from one buffer: one TLS record, and
// one TCP segment where it fits.
constexpr std::size_t kOneBufferMessageBytes = 16 * 1024;

// Writes a message's `head` and then its `body` (either may be empty), all of it or until the
// stream fails (the error; the stream's own timeout included). The caller keeps both alive
// until it returns.
//
// Never hands the stream a sequence of several buffers. Beast's ssl_stream (its flat_stream,
// in Boost 1.74) writes nothing of a sequence whose first buffer is empty and whose next is
// larger than 16 KiB, and reports success; asio::async_write of a std::array of two buffers
// asks for exactly that sequence once the first is written (the consumed buffer stays in it,
// empty), and takes a write of 0 bytes for the end. An HTTPS message whose body was larger
// than 16 KiB went out as its head alone, and the write said it was done.
template <class Stream>
asio::awaitable<beast::error_code> WriteMessage(Stream& stream, std::string_view head,
                                                std::string_view body) {
  beast::error_code ec;
  if (head.size() + body.size() <= kOneBufferMessageBytes) {
    std::string message;
    message.reserve(head.size() + body.size());
    message.append(head);
    message.append(body);
    co_await asio::async_write(stream, asio::buffer(message),
                               asio::redirect_error(asio::use_awaitable, ec));
    co_return ec;
  }
  co_await asio::async_write(stream, asio::buffer(head),
                             asio::redirect_error(asio::use_awaitable, ec));
  if (ec || body.empty()) co_return ec;
  co_await asio::async_write(stream, asio::buffer(body),
                             asio::redirect_error(asio::use_awaitable, ec));
  co_return ec;
}

// Ends a connection without losing what was just sent to the peer: it stops sending (TLS: its
// close_notify; TCP: its FIN) and reads (and drops) what the peer still sends until the peer
// closes too, up to `limit` and 16 MiB, so that closing with unread bytes does not reset the
// connection under the peer's feet before it read the answer. A client still sending the body
// of a request refused from its head is the usual case.
//
// Over TLS, OpenSSL 3 fails the wait for the peer's close_notify with "application data after
// close notify" as soon as such bytes arrive after its own; they are then drained as raw TCP
// bytes, undecrypted.
template <class Stream>
asio::awaitable<void> CloseGracefully(Stream& stream, Duration limit) {
  beast::error_code ec;
  auto& tcp_stream = beast::get_lowest_layer(stream);
  tcp_stream.expires_after(limit);
  if constexpr (kIsTls<Stream>) {
    co_await stream.async_shutdown(asio::redirect_error(asio::use_awaitable, ec));
    if (!ec) {  // both close_notify sent: nothing more can come
      tcp_stream.close();
      co_return;
    }
    ec = {};
  }
  tcp_stream.socket().shutdown(tcp::socket::shutdown_send, ec);
  constexpr std::size_t kMaxDrainBytes = 16 << 20;
  std::size_t drained = 0;
  char scratch[16 * 1024];
  while (!ec && drained < kMaxDrainBytes) {
    drained += co_await tcp_stream.async_read_some(asio::buffer(scratch),
                                                   asio::redirect_error(asio::use_awaitable, ec));
  }
  tcp_stream.close();
}

}  // namespace settle::net
