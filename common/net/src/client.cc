#include "settle/net/client.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>

#include <chrono>
#include <functional>
#include <iterator>
#include <mutex>
#include <optional>
#include <typeinfo>
#include <unordered_map>
#include <vector>

#include "settle/net/response_reader.h"
#include "stream.h"
#include "wire.h"

namespace settle::net {
namespace {

// Deadlines of exchanges are time points of the real steady clock, not of the injected Clock:
// the streams' timers (Beast's expires_at) are OS timers on it.
using Steady = std::chrono::steady_clock;

constexpr std::size_t kReadChunk = 16 * 1024;
constexpr std::size_t kMaxAnswerHead = 64 * 1024;

// One connection to an origin, its stream on the I/O threads' executor. It is used by one
// exchange at a time, on the strand of the coroutine that took it from the pool (see
// Client::Send): every completion of that exchange, the stream's timeout included, runs on
// that strand, so the timer and the operation it guards never run at once on two threads.
struct Connection {
  std::unique_ptr<PlainStream> plain;  // one of the two
  std::unique_ptr<TlsStream> tls;
  MonoTime idle_since{0};  // on Client::Impl::clock

  PlainStream& lowest() { return plain != nullptr ? *plain : beast::get_lowest_layer(*tls); }
};

// Whether `ec` is a server's TLS alert refusing the client's certificate (none, another CA's,
// expired, revoked, not allowed): in TLS 1.3 the client's handshake ends before the server has
// judged its certificate, so the refusal comes in place of the answer, and the server has
// read no request. Any other TLS error there (a bad record, say) may come after the server
// read it, and is not taken for a refusal.
bool IsCertificateRefusal(const beast::error_code& ec) {
  if (ec.category() != asio::error::get_ssl_category()) return false;
  switch (ERR_GET_REASON(static_cast<unsigned long>(ec.value()))) {
    case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
    case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
    case SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE:
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
    case SSL_R_TLSV1_ALERT_ACCESS_DENIED:
      return true;
    default:
      return false;
  }
}

// How one exchange on a connection ended.
struct Exchanged {
  enum Kind {
    kAnswer,
    kWriteFailed,
    kClosedEarly,
    kTimeout,
    kMalformed,
    kTlsAlert,  // the server's refusal of the client's certificate instead of an answer
    kBroken
  } kind = kBroken;
  ClientAnswer answer;
  bool reusable = false;
  std::string detail;
};

template <class Stream>
asio::awaitable<Exchanged> Exchange(Stream& stream, const std::string& head,
                                    const std::string& body, std::size_t keep,
                                    Steady::time_point deadline) {
  Exchanged out;
  beast::error_code ec;
  auto& tcp_stream = beast::get_lowest_layer(stream);
  tcp_stream.expires_at(deadline);
  ec = co_await WriteMessage(stream, head, body);
  if (ec && IsCertificateRefusal(ec)) {
    out.kind = Exchanged::kTlsAlert;
    out.detail = ec.message();
    co_return out;
  }
  if (ec) {
    out.kind = ec == beast::error::timeout ? Exchanged::kTimeout : Exchanged::kWriteFailed;
    co_return out;
  }
  ResponseReader reader(kMaxAnswerHead, keep);
  for (;;) {
    ResponseReader::Step step = reader.Parse();
    if (step == ResponseReader::Step::kNeedMore) {
      std::span<char> room = reader.Prepare(kReadChunk);
      const std::size_t n = co_await stream.async_read_some(
          asio::buffer(room.data(), room.size()), asio::redirect_error(asio::use_awaitable, ec));
      reader.Commit(n);
      if (!ec) continue;
      if (ec == beast::error::timeout) {
        out.kind = Exchanged::kTimeout;
        co_return out;
      }
      // In TLS 1.3 the client's handshake ends before the server has judged the client's
      // certificate; a refusal (none, another CA, expired) comes as an alert in its place.
      if (IsCertificateRefusal(ec) && !reader.got_some()) {
        out.kind = Exchanged::kTlsAlert;
        out.detail = ec.message();
        co_return out;
      }
      step = reader.Eof();
      if (step == ResponseReader::Step::kNeedMore) {
        out.kind = reader.got_some() ? Exchanged::kMalformed : Exchanged::kClosedEarly;
        out.detail = "cut off before its end";
        co_return out;
      }
    }
    if (step == ResponseReader::Step::kMalformed) {
      out.kind = Exchanged::kMalformed;
      out.detail = reader.problem();
      co_return out;
    }
    out.kind = Exchanged::kAnswer;
    out.answer.status = reader.status();
    out.answer.body = reader.body();
    out.answer.body_bytes = reader.body_bytes();
    out.answer.headers = reader.headers();
    out.reusable = reader.reusable();
    co_return out;
  }
}

bool IsIpAddress(const std::string& host) {
  beast::error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

std::string Millis(Duration d) { return std::to_string(d.count()) + " ms"; }

// The strand `executor` is, or null. (Boost 1.74's any_executor::target casts without
// checking the type: the type is compared here.)
template <class Strand>
const Strand* AsStrand(const asio::any_io_executor& executor) {
  return executor.target_type() == typeid(Strand) ? executor.target<Strand>() : nullptr;
}

// Whether a coroutine on `executor` runs one step at a time: on a strand (a server's
// connection, a scheduler's pass, a task of AwaitAll).
bool OnStrand(const asio::any_io_executor& executor) {
  return AsStrand<asio::strand<asio::io_context::executor_type>>(executor) != nullptr ||
         AsStrand<asio::strand<asio::any_io_executor>>(executor) != nullptr;
}

// The executor under a strand. A connection's stream lives on it rather than on the strand of
// its first user: pooled, it serves coroutines on other strands later, and its completions
// (the timeout's included) go to the strand of whichever coroutine awaits them.
asio::any_io_executor Unstranded(const asio::any_io_executor& executor) {
  if (auto* s = AsStrand<asio::strand<asio::io_context::executor_type>>(executor)) {
    return s->get_inner_executor();
  }
  if (auto* s = AsStrand<asio::strand<asio::any_io_executor>>(executor)) {
    return s->get_inner_executor();
  }
  return executor;
}

// A request's cancellation attached to the step under way (resolving, connecting, an
// exchange) while it is in scope: Cancel then closes that step's socket. Detached as it goes
// out of scope, on the request's strand, before anything the cut touches is gone.
class CutWhileInScope {
 public:
  explicit CutWhileInScope(const std::shared_ptr<Cancellation>& cancellation)
      : cancellation_(cancellation) {}
  ~CutWhileInScope() {
    if (armed_) cancellation_->Detach();
  }
  CutWhileInScope(const CutWhileInScope&) = delete;
  CutWhileInScope& operator=(const CutWhileInScope&) = delete;

  // False when the request is cancelled already (and the step must not start).
  bool Arm(const asio::any_io_executor& strand, std::function<void()> cut) {
    if (cancellation_ == nullptr) return true;
    armed_ = cancellation_->Attach(strand, std::move(cut));
    return armed_;
  }

 private:
  const std::shared_ptr<Cancellation>& cancellation_;
  bool armed_ = false;
};

bool IsCancelled(const std::shared_ptr<Cancellation>& cancellation) {
  return cancellation != nullptr && cancellation->cancelled();
}

Status CancelledBeforeSending(const Url& url) {
  return Status::Unavailable("cancelled before anything was sent to " + url.HostPort());
}

}  // namespace

struct Client::Impl {
  ClientOptions options;
  SystemClock system_clock;  // when the options name no clock
  const Clock* clock = &system_clock;
  std::unique_ptr<asio::ssl::context> tls;

  std::mutex mu;
  std::unordered_map<std::string, std::vector<std::unique_ptr<Connection>>> idle;  // by origin
  std::size_t idle_count = 0;  // the connections in `idle`

  // Closes the idle connections too old to reuse, and forgets the origins left without any.
  // Under mu.
  void DropStale();

  std::unique_ptr<Connection> Take(const std::string& origin);
  void Give(const std::string& origin, std::unique_ptr<Connection> connection);
  asio::awaitable<Result<std::unique_ptr<Connection>>> Connect(
      const Url& url, Duration timeout, Steady::time_point deadline,
      const std::shared_ptr<Cancellation>& cancellation);
  // Client::Send on a strand.
  asio::awaitable<Result<ClientAnswer>> Send(ClientRequest request);
};

std::unique_ptr<Connection> Client::Impl::Take(const std::string& origin) {
  std::lock_guard lock(mu);
  auto found = idle.find(origin);
  if (found == idle.end()) return nullptr;
  std::vector<std::unique_ptr<Connection>>& list = found->second;
  const MonoTime fresh_after = clock->Monotonic() - options.max_idle_time;
  std::unique_ptr<Connection> fresh;
  while (!list.empty() && fresh == nullptr) {
    std::unique_ptr<Connection> connection = std::move(list.back());
    list.pop_back();
    --idle_count;
    if (connection->idle_since >= fresh_after) fresh = std::move(connection);
    // Too old to trust: closed as it is dropped.
  }
  if (list.empty()) idle.erase(found);
  return fresh;
}

void Client::Impl::DropStale() {
  const MonoTime fresh_after = clock->Monotonic() - options.max_idle_time;
  for (auto it = idle.begin(); it != idle.end();) {
    std::vector<std::unique_ptr<Connection>>& list = it->second;
    const std::size_t before = list.size();
    std::erase_if(list, [fresh_after](const std::unique_ptr<Connection>& connection) {
      return connection->idle_since < fresh_after;
    });
    idle_count -= before - list.size();
    it = list.empty() ? idle.erase(it) : std::next(it);
  }
}

void Client::Impl::Give(const std::string& origin, std::unique_ptr<Connection> connection) {
  connection->idle_since = clock->Monotonic();
  std::lock_guard lock(mu);
  // Calls to many origins (a participant host each) keep no more than max_idle_total sockets.
  if (idle_count >= options.max_idle_total) DropStale();
  if (idle_count >= options.max_idle_total) return;
  std::vector<std::unique_ptr<Connection>>& list = idle[origin];
  if (list.size() >= options.max_idle_per_host) return;
  list.push_back(std::move(connection));
  ++idle_count;
}

asio::awaitable<Result<std::unique_ptr<Connection>>> Client::Impl::Connect(
    const Url& url, Duration timeout, Steady::time_point deadline,
    const std::shared_ptr<Cancellation>& cancellation) {
  const asio::any_io_executor strand = co_await asio::this_coro::executor;
  const asio::any_io_executor executor = Unstranded(strand);
  auto connection = std::make_unique<Connection>();
  beast::error_code ec;
  tcp::resolver::results_type endpoints;
  if (IsIpAddress(url.host)) {
    endpoints = tcp::resolver::results_type::create(
        tcp::endpoint(asio::ip::make_address(url.host), static_cast<unsigned short>(url.port)),
        url.host, std::to_string(url.port));
  } else {
    tcp::resolver resolver(executor);
    CutWhileInScope cut(cancellation);
    if (!cut.Arm(strand, [&resolver] { resolver.cancel(); })) {
      co_return CancelledBeforeSending(url);
    }
    endpoints = co_await resolver.async_resolve(url.host, std::to_string(url.port),
                                                asio::redirect_error(asio::use_awaitable, ec));
    if (IsCancelled(cancellation)) co_return CancelledBeforeSending(url);
    if (ec)
      co_return Status::Unavailable("cannot resolve host '" + url.host + "': " + ec.message());
  }
  if (url.tls && tls == nullptr) {
    co_return Status::Unavailable("no TLS context for " + url.Origin());
  }
  if (url.tls) {
    connection->tls = std::make_unique<TlsStream>(executor, *tls);
  } else {
    connection->plain = std::make_unique<PlainStream>(executor);
  }
  PlainStream& lowest = connection->lowest();
  // Closing the socket ends the connect (every address of a name: asio tries no other once
  // it is closed) and the TLS handshake alike.
  CutWhileInScope cut(cancellation);
  if (!cut.Arm(strand, [&lowest] {
        beast::error_code ignored;
        lowest.socket().close(ignored);
      })) {
    co_return CancelledBeforeSending(url);
  }
  lowest.expires_at(deadline);
  co_await lowest.async_connect(endpoints, asio::redirect_error(asio::use_awaitable, ec));
  if (IsCancelled(cancellation)) co_return CancelledBeforeSending(url);
  if (ec == beast::error::timeout) {
    co_return Status::Unavailable("timed out after " + Millis(timeout) + " connecting to " +
                                  url.HostPort());
  }
  if (ec) {
    co_return Status::Unavailable("connection refused or unreachable: " + url.HostPort());
  }
  lowest.socket().set_option(tcp::no_delay(true), ec);
  if (url.tls) {
    TlsStream& stream = *connection->tls;
    // SNI names the host (not an address); the certificate must name it, or the address.
    if (!IsIpAddress(url.host)) SSL_set_tlsext_host_name(stream.native_handle(), url.host.c_str());
    stream.set_verify_callback(asio::ssl::host_name_verification(url.host));
    co_await stream.async_handshake(asio::ssl::stream_base::client,
                                    asio::redirect_error(asio::use_awaitable, ec));
    if (IsCancelled(cancellation)) co_return CancelledBeforeSending(url);
    if (ec == beast::error::timeout) {
      co_return Status::Unavailable("timed out after " + Millis(timeout) +
                                    " in the TLS handshake with " + url.HostPort());
    }
    if (ec) {
      co_return Status::Unavailable("TLS handshake with " + url.HostPort() +
                                    " failed: " + ec.message());
    }
  }
  co_return connection;
}

Result<std::unique_ptr<Client>> Client::Create(ClientOptions options) {
  auto impl = std::make_unique<Impl>();
  auto tls = ClientTlsContext(options);
  if (!tls) return tls.status();
  impl->tls = std::move(*tls);
  impl->options = std::move(options);
  if (impl->options.clock != nullptr) impl->clock = impl->options.clock;
  return std::unique_ptr<Client>(new Client(std::move(impl)));
}

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Client::~Client() = default;

void Client::CloseIdle() {
  std::lock_guard lock(impl_->mu);
  impl_->idle.clear();
}

asio::awaitable<Result<ClientAnswer>> Client::Send(ClientRequest request) {
  const asio::any_io_executor executor = co_await asio::this_coro::executor;
  if (OnStrand(executor)) co_return co_await impl_->Send(std::move(request));
  co_return co_await asio::co_spawn(asio::make_strand(executor), impl_->Send(std::move(request)),
                                    asio::use_awaitable);
}

asio::awaitable<Result<ClientAnswer>> Client::Impl::Send(ClientRequest request) {
  const Url& url = request.url;
  const std::string& target = request.target.empty() ? url.path_and_query : request.target;
  Result<std::string> head =
      RequestHead(request.method, target, url, request.headers, request.body.size());
  if (!head) co_return head.status();
  const Duration timeout = std::max(request.timeout, Duration(1));
  // The real steady clock, not `clock`: the streams' OS timers expire at this deadline.
  const Steady::time_point deadline = Steady::now() + timeout;
  const std::string origin = url.Origin();

  const std::shared_ptr<Cancellation>& cancellation = request.cancellation;
  const asio::any_io_executor strand = co_await asio::this_coro::executor;

  std::unique_ptr<Connection> connection = Take(origin);
  for (int attempt = 0;; ++attempt) {
    const bool reused = connection != nullptr;
    if (!reused) {
      auto connected = co_await Connect(url, timeout, deadline, cancellation);
      if (!connected) co_return connected.status();
      connection = std::move(*connected);
    }
    Exchanged exchanged;
    {
      CutWhileInScope cut(cancellation);
      PlainStream& lowest = connection->lowest();
      if (!cut.Arm(strand, [&lowest] {
            beast::error_code ignored;
            lowest.socket().close(ignored);
          })) {
        co_return CancelledBeforeSending(url);
      }
      if (connection->plain != nullptr) {
        exchanged = co_await Exchange(*connection->plain, *head, request.body,
                                      request.max_answer_bytes, deadline);
      } else {
        exchanged = co_await Exchange(*connection->tls, *head, request.body,
                                      request.max_answer_bytes, deadline);
      }
    }
    // A whole answer is the answer, even if the cut came as it ended; then the connection
    // may be closed, and is not pooled.
    const bool cancelled = IsCancelled(cancellation);
    if (cancelled && exchanged.kind != Exchanged::kAnswer) {
      co_return Status::Pending("cancelled while waiting for " + url.HostPort());
    }
    switch (exchanged.kind) {
      case Exchanged::kAnswer:
        // Pooled only if its deadline has not passed: then the stream's timer was cancelled
        // before it fired, and nothing of this exchange can still run on this strand once
        // another coroutine, on another strand, takes the connection. (Read on the timer's own
        // clock, the real steady clock, for that reason.)
        if (exchanged.reusable && !cancelled && Steady::now() < deadline) {
          Give(origin, std::move(connection));
        }
        co_return exchanged.answer;
      case Exchanged::kWriteFailed:
      case Exchanged::kClosedEarly:
        // The server may have closed a kept-alive connection just as it was reused. (The
        // deadline is the stream timer's, on the real steady clock.)
        if (reused && request.idempotent && attempt == 0 && Steady::now() < deadline) {
          connection.reset();
          continue;
        }
        co_return Status::Pending(
            exchanged.kind == Exchanged::kWriteFailed
                ? "connection closed by " + url.HostPort() + " while sending the request"
                : "connection closed by " + url.HostPort() + " before a complete answer");
      case Exchanged::kTimeout:
        co_return Status::Pending("timed out after " + Millis(timeout) + " waiting for " +
                                  url.HostPort());
      case Exchanged::kMalformed:
        co_return Status::Pending("malformed answer from " + url.HostPort() + ": " +
                                  exchanged.detail);
      case Exchanged::kTlsAlert:
        // On a fresh connection, the handshake's verdict: the server read no request.
        if (!reused) {
          co_return Status::Unavailable("TLS handshake with " + url.HostPort() +
                                        " failed: " + exchanged.detail);
        }
        co_return Status::Pending("TLS error from " + url.HostPort() + ": " + exchanged.detail);
      case Exchanged::kBroken:
        break;
    }
    co_return Status::Pending("connection error (" + url.HostPort() + ")");
  }
}

}  // namespace settle::net
