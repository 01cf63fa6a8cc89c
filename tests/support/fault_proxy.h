#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace settle::testing {

// What the proxy does to a request that a rule matches.
enum class Fault {
  kDropRequest,   // close the client's connection; the upstream never sees the request
  kDropResponse,  // forward it (the upstream acts on it), then close the client's connection
                  // instead of answering
  kDelay,         // hold it for `delay`, then forward
  kHold,          // hold it until Release(path), then forward; if the proxy stops first, the
                  // connection just closes, as if the proxy process had died
  kDuplicate,     // forward it twice, one after the other; answer with the first answer
  kRespond,       // answer `status` and `body` itself, without forwarding
  kCloseMidBody,  // forward it; send the answer's status line, headers (with the whole body's
                  // Content-Length) and half of its body, then close the connection; an answer
                  // without a body loses half of its head instead
};

// Applies `fault` to requests whose path (without the query) equals `path`: after letting
// `skip` matching requests through untouched, to the next `times` ones (-1: to all).
struct FaultRule {
  std::string path;
  Fault fault = Fault::kDropRequest;
  int skip = 0;
  int times = 1;
  std::chrono::milliseconds delay{0};  // kDelay
  int status = 503;                    // kRespond
  std::string body;                    // kRespond
};

// Random faults for soak tests: each request that no rule matches gets, with `probability`,
// one fault drawn uniformly from `faults` (kHold is not allowed here). Deterministic for a
// given seed and request order.
struct RandomFaults {
  double probability = 0.0;
  std::uint64_t seed = 1;
  std::vector<Fault> faults;
  std::chrono::milliseconds delay{50};  // for kDelay
  int status = 503;                     // for kRespond
};

// An HTTP/1.1 proxy on 127.0.0.1 (a kernel-chosen port) in front of one upstream server on
// 127.0.0.1, between the coordinator and a participant or between a client and a participant.
// It frames messages with the net room's RequestReader and ResponseReader and sends them on
// re-serialized: the request line or status, the header fields as received, and the body
// (de-chunked) framed by a Content-Length. Keep-alive on both sides; an upstream that closes
// its connection after an answer gets the client's closed too. A request it cannot read gets
// a 400 and the connection closes; HEAD gets a 501 (no answer to it could be framed). It
// injects faults as the rules say; tests change rules at run time. Boost.Asio, its own
// threads. Thread-safe.
class FaultProxy {
 public:
  explicit FaultProxy(int upstream_port);
  // Stops listening and closes every connection; held and delayed requests are not forwarded.
  ~FaultProxy();
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  int port() const;
  // "http://127.0.0.1:<port><path>"
  std::string Url(const std::string& path) const;

  // Rules are tried in the order they were added; the first that still applies wins.
  void AddRule(FaultRule rule);
  void ClearRules();
  void SetRandomFaults(RandomFaults faults);  // probability 0 turns them off

  // Where requests go from now on (a participant restarted on another port).
  void SetUpstream(int port);

  // Lets the requests held for `path` go on (kHold).
  void Release(const std::string& path);

  // The last request seen for `path`, as the proxy forwards it (request line, the header fields
  // as received, the body framed by a Content-Length): what someone reading the traffic
  // between the two would hold. Empty when none was seen.
  std::string LastRequest(const std::string& path) const;

  // Requests seen for `path`, requests held right now, faults applied (rules and random).
  std::size_t Seen(const std::string& path) const;
  std::size_t Held(const std::string& path) const;
  std::size_t FaultsApplied() const;

  // Waits until `path` has been seen `count` times (or that many are held); false on timeout.
  bool WaitForSeen(const std::string& path, std::size_t count,
                   std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;
  bool WaitForHeld(const std::string& path, std::size_t count,
                   std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace settle::testing
