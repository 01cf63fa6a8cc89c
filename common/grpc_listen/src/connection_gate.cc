#include "settle/grpc_listen/connection_gate.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/server_builder.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "settle/core/clock.h"
#include "settle/core/thread_name.h"

namespace settle::grpc_listen {
namespace {

// epoll data of the wake-up eventfd and of the listening sockets; a connection's is its id,
// which starts above them.
constexpr std::uint64_t kWake = 0;
constexpr std::uint64_t kFirstListener = 1;
constexpr std::uint64_t kFirstConnection = 1 << 16;

// How often every open connection is checked for a close that came without a hang-up, and how
// often at most a cap's refusal may check them first.
constexpr Duration kSweepInterval{1000};
constexpr Duration kSweepAtCapInterval{50};
// How often a connection that hung up is checked until gRPC has closed its descriptor.
constexpr int kClosingPollMillis = 10;
// How long accepting pauses after accept() failed for want of descriptors or memory.
constexpr Duration kAcceptPause{100};

// What a descriptor is: the same number later naming another socket is another inode.
struct Identity {
  dev_t device = 0;
  ino_t inode = 0;
  bool operator==(const Identity&) const = default;
};

std::optional<Identity> IdentityOf(int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) return std::nullopt;
  return Identity{st.st_dev, st.st_ino};
}

std::string PeerAddress(const sockaddr_storage& address) {
  char text[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&address);
    inet_ntop(AF_INET, &v4->sin_addr, text, sizeof(text));
  } else if (address.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&address);
    // An IPv4 client of a dual-stack socket is its IPv4 address.
    if (IN6_IS_ADDR_V4MAPPED(&v6->sin6_addr)) {
      inet_ntop(AF_INET, &v6->sin6_addr.s6_addr[12], text, sizeof(text));
    } else {
      inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof(text));
    }
  }
  return text;
}

int PortOf(int fd) {
  sockaddr_storage bound{};
  socklen_t size = sizeof(bound);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &size) != 0) return 0;
  if (bound.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  return ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
}

// A listening socket on `address`; -1 with `error` set when it cannot be bound.
int ListenOn(const addrinfo& address, bool v6_only, std::string& error) {
  const int fd = socket(address.ai_family, address.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                        address.ai_protocol);
  if (fd < 0) {
    error = std::strerror(errno);
    return -1;
  }
  const int on = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
  if (address.ai_family == AF_INET6) {
    const int only = v6_only ? 1 : 0;
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &only, sizeof(only));
  }
  if (bind(fd, address.ai_addr, address.ai_addrlen) != 0 || listen(fd, SOMAXCONN) != 0) {
    error = std::strerror(errno);
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

struct ConnectionGate::Impl {
  struct Connection {
    int fd = -1;
    Identity identity;
    std::string peer;
  };

  ConnectionLimits limits;
  std::vector<int> listeners;
  int port = 0;
  int epoll = -1;
  int wake = -1;
  std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor;
  ConnectionGate::RefusalObserver observe_refusal;  // may be empty
  std::thread thread;
  std::atomic<bool> stopping{false};
  bool started = false;
  SystemClock clock;

  // The accepting thread's, but for counts() (under mutex).
  mutable std::mutex mutex;
  std::unordered_map<std::uint64_t, Connection> open;  // by id
  std::map<std::string, std::size_t> per_peer;         // open connections by address
  std::vector<std::uint64_t> closing;                  // hung up, descriptor not yet closed
  std::uint64_t next_id = kFirstConnection;
  ConnectionCounts counts;
  MonoTime last_sweep{0};
  MonoTime paused_until{0};
  bool paused = false;

  ~Impl() {
    for (int fd : listeners) close(fd);
    if (epoll >= 0) close(epoll);
    if (wake >= 0) close(wake);
  }

  void Loop() {
    NameThisThread("grpc-accept");
    epoll_event events[64];
    while (!stopping.load()) {
      int timeout = static_cast<int>(kSweepInterval.count());
      {
        std::lock_guard lock(mutex);
        if (!closing.empty()) timeout = kClosingPollMillis;
      }
      if (paused) timeout = std::min(timeout, static_cast<int>(kAcceptPause.count()));
      const int n = epoll_wait(epoll, events, 64, timeout);
      for (int i = 0; i < n; ++i) {
        const std::uint64_t key = events[i].data.u64;
        if (key == kWake) continue;
        if (key < kFirstConnection) {
          Accept(listeners[key - kFirstListener]);
          continue;
        }
        std::lock_guard lock(mutex);
        const auto it = open.find(key);
        if (it == open.end()) continue;
        // Hung up: gRPC has shut it down (or the peer reset it). No more events from it; it
        // counts until its descriptor is closed.
        epoll_ctl(epoll, EPOLL_CTL_DEL, it->second.fd, nullptr);
        closing.push_back(key);
      }
      const MonoTime now = clock.Monotonic();
      if (paused && now >= paused_until) Resume();
      std::lock_guard lock(mutex);
      ReleaseClosing();
      if (now - last_sweep >= kSweepInterval) Sweep(now);
    }
  }

  // Forgets `id`, whose descriptor gRPC has closed. REQUIRES mutex.
  void Release(std::unordered_map<std::uint64_t, Connection>::iterator it) {
    const auto peer = per_peer.find(it->second.peer);
    if (peer != per_peer.end() && --peer->second == 0) per_peer.erase(peer);
    open.erase(it);
  }

  bool Closed(const Connection& c) const { return IdentityOf(c.fd) != c.identity; }

  // REQUIRES mutex.
  void ReleaseClosing() {
    std::erase_if(closing, [this](std::uint64_t id) {
      const auto it = open.find(id);
      if (it == open.end()) return true;
      if (!Closed(it->second)) return false;
      Release(it);
      return true;
    });
  }

  // Every open connection checked. REQUIRES mutex.
  void Sweep(MonoTime now) {
    last_sweep = now;
    for (auto it = open.begin(); it != open.end();) {
      auto next = std::next(it);
      if (Closed(it->second)) {
        std::erase(closing, it->first);
        Release(it);
      }
      it = next;
    }
  }

  void Pause() {
    paused = true;
    paused_until = clock.Monotonic() + kAcceptPause;
    for (int fd : listeners) {
      epoll_event event{};
      event.data.u64 = 0;  // unused while paused
      epoll_ctl(epoll, EPOLL_CTL_MOD, fd, &event);
    }
  }

  void Resume() {
    paused = false;
    for (std::size_t i = 0; i < listeners.size(); ++i) {
      epoll_event event{};
      event.events = EPOLLIN;
      event.data.u64 = kFirstListener + i;
      epoll_ctl(epoll, EPOLL_CTL_MOD, listeners[i], &event);
    }
  }

  // Whether one more connection from `peer` fits, a sweep first when it would not (at most
  // every kSweepAtCapInterval). REQUIRES mutex.
  bool Fits(const std::string& peer, bool& over_peer) {
    auto over = [&] {
      if (open.size() >= limits.max_connections) {
        over_peer = false;
        return true;
      }
      if (limits.max_connections_per_peer == 0) return false;
      const auto it = per_peer.find(peer);
      over_peer = it != per_peer.end() && it->second >= limits.max_connections_per_peer;
      return over_peer;
    };
    if (!over()) return true;
    const MonoTime now = clock.Monotonic();
    if (now - last_sweep < kSweepAtCapInterval) return false;
    Sweep(now);
    return !over();
  }

  void Accept(int listener) {
    for (int accepted = 0; accepted < 256 && !stopping.load(); ++accepted) {
      sockaddr_storage address{};
      socklen_t size = sizeof(address);
      const int fd = accept4(listener, reinterpret_cast<sockaddr*>(&address), &size,
                             SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return;
        std::lock_guard lock(mutex);
        ++counts.accept_failures;
        // Out of descriptors or memory: the socket stays readable, so wait a little rather
        // than spin.
        Pause();
        return;
      }
      const std::string peer = PeerAddress(address);
      const std::optional<Identity> identity = IdentityOf(fd);
      std::uint64_t id = 0;
      bool over_peer = false;
      bool refused = false;
      {
        std::lock_guard lock(mutex);
        if (!identity || !Fits(peer, over_peer)) {
          ++(over_peer ? counts.refused_per_peer : counts.refused_total);
          close(fd);
          refused = true;
        }
      }
      if (refused) {
        if (observe_refusal) observe_refusal(peer, over_peer);
        continue;
      }
      {
        std::lock_guard lock(mutex);
        id = next_id++;
        // Watched before gRPC has it, which may close it at once.
        epoll_event event{};
        event.data.u64 = id;
        if (epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event) != 0) {
          ++counts.accept_failures;
          close(fd);
          continue;
        }
        open.emplace(id, Connection{fd, *identity, peer});
        ++per_peer[peer];
        ++counts.accepted;
      }
      const int on = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
      grpc::experimental::ExternalConnectionAcceptor::NewConnectionParameters connection;
      connection.listener_fd = listener;
      connection.fd = fd;
      acceptor->HandleNewConnection(&connection);
    }
  }
};

ConnectionGate::ConnectionGate(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ConnectionGate::~ConnectionGate() { Stop(); }

Result<std::unique_ptr<ConnectionGate>> ConnectionGate::Listen(const std::string& host, int port,
                                                               ConnectionLimits limits) {
  if (limits.max_connections < 1) {
    return Status::InvalidArgument("max_connections: at least 1");
  }
  if (limits.max_connections_per_peer > limits.max_connections) {
    return Status::InvalidArgument("max_connections_per_peer: at most max_connections (" +
                                   std::to_string(limits.max_connections) + ")");
  }
  auto impl = std::make_unique<Impl>();
  impl->limits = limits;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int e = getaddrinfo(host.c_str(), service.c_str(), &hints, &found); e != 0) {
    return Status::Unavailable("cannot listen on " + host + ": " + gai_strerror(e));
  }
  std::vector<addrinfo*> addresses;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) addresses.push_back(a);
  std::string error = "no address";
  int bound_port = port;
  for (addrinfo* a : addresses) {
    // Each address on the first one's port, when the port was left to the system.
    if (bound_port != 0) {
      if (a->ai_family == AF_INET) {
        reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_port = htons(bound_port);
      } else if (a->ai_family == AF_INET6) {
        reinterpret_cast<sockaddr_in6*>(a->ai_addr)->sin6_port = htons(bound_port);
      }
    }
    // A lone IPv6 wildcard serves IPv4 too; beside an IPv4 address, IPv6 only.
    const int fd = ListenOn(*a, addresses.size() > 1, error);
    if (fd < 0) continue;
    impl->listeners.push_back(fd);
    bound_port = PortOf(fd);
  }
  freeaddrinfo(found);
  if (impl->listeners.empty()) {
    return Status::Unavailable("cannot listen on " + host + ":" + service + ": " + error);
  }
  impl->port = bound_port;
  return std::unique_ptr<ConnectionGate>(new ConnectionGate(std::move(impl)));
}

void ConnectionGate::AttachTo(grpc::ServerBuilder& builder,
                              std::shared_ptr<grpc::ServerCredentials> credentials) {
  impl_->acceptor = builder.experimental().AddExternalConnectionAcceptor(
      grpc::ServerBuilder::experimental_type::ExternalConnectionType::FROM_FD,
      std::move(credentials));
}

void ConnectionGate::ObserveRefusals(RefusalObserver observer) {
  impl_->observe_refusal = std::move(observer);
}

void ConnectionGate::Start() {
  Impl& impl = *impl_;
  if (impl.started || impl.acceptor == nullptr) return;
  impl.started = true;
  impl.epoll = epoll_create1(EPOLL_CLOEXEC);
  impl.wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  epoll_event wake{};
  wake.events = EPOLLIN;
  wake.data.u64 = kWake;
  epoll_ctl(impl.epoll, EPOLL_CTL_ADD, impl.wake, &wake);
  for (std::size_t i = 0; i < impl.listeners.size(); ++i) {
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.u64 = kFirstListener + i;
    epoll_ctl(impl.epoll, EPOLL_CTL_ADD, impl.listeners[i], &event);
  }
  impl.thread = std::thread([&impl] { impl.Loop(); });
}

void ConnectionGate::Stop() {
  Impl& impl = *impl_;
  if (impl.stopping.exchange(true)) return;
  if (impl.thread.joinable()) {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t written = write(impl.wake, &one, sizeof(one));
    impl.thread.join();
  }
  for (int fd : impl.listeners) close(fd);
  impl.listeners.clear();
}

int ConnectionGate::port() const { return impl_->port; }

const ConnectionLimits& ConnectionGate::limits() const { return impl_->limits; }

ConnectionCounts ConnectionGate::counts() const {
  std::lock_guard lock(impl_->mutex);
  ConnectionCounts counts = impl_->counts;
  counts.open = impl_->open.size();
  return counts;
}

}  // namespace settle::grpc_listen
