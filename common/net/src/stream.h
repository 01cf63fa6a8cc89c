#pragma once

// What the server and the client share below HTTP: the two kinds of stream, their timeouts,
// and closing a connection so that the peer reads everything sent before.
#include "settle/async/asio.h"

#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <chrono>
#include <memory>

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

// Ends a connection without losing what was just sent to the peer: TLS sends its close_notify;
// plain TCP stops sending and reads (and drops) what the peer still sends, up to `limit` and
// 16 MiB, so that closing with unread bytes does not reset the connection under the peer's
// feet before it read the answer.
template <class Stream>
asio::awaitable<void> CloseGracefully(Stream& stream, Duration limit) {
  beast::error_code ec;
  auto& tcp_stream = beast::get_lowest_layer(stream);
  tcp_stream.expires_after(limit);
  if constexpr (kIsTls<Stream>) {
    co_await stream.async_shutdown(asio::redirect_error(asio::use_awaitable, ec));
  } else {
    tcp_stream.socket().shutdown(tcp::socket::shutdown_send, ec);
    constexpr std::size_t kMaxDrainBytes = 16 << 20;
    std::size_t drained = 0;
    char scratch[16 * 1024];
    while (!ec && drained < kMaxDrainBytes) {
      drained += co_await tcp_stream.async_read_some(asio::buffer(scratch),
                                                     asio::redirect_error(asio::use_awaitable, ec));
    }
  }
  tcp_stream.close();
}

}  // namespace settle::net
