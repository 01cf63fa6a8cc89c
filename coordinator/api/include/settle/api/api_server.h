#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "settle/api/access_tokens.h"
#include "settle/api/client_certificates.h"
#include "settle/api/rate_limiter.h"
#include "settle/api/refusal_log.h"
#include "settle/api/session_store.h"
#include "settle/calls/host_gates.h"
#include "settle/core/clock.h"
#include "settle/core/status.h"
#include "settle/drive/bulk_jobs.h"
#include "settle/drive/coordinator.h"
#include "settle/drive/database_clock.h"
#include "settle/metrics/prometheus_text.h"
#include "settle/net/server.h"

namespace settle::api {

struct ApiServerOptions {
  std::size_t max_body_bytes = 1 << 20;
  Duration io_timeout{5000};  // a client that stalls mid-request (or mid-answer) is dropped
  // A request's head and body must all be in within this of its first byte (408 otherwise).
  Duration request_timeout{10000};
  Duration keep_alive_timeout{5000};
  std::size_t max_connections = 10000;
  // Connections from one peer address at most (net::ServerOptions; 0: no cap).
  std::size_t max_connections_per_peer = 512;
  // With a certificate and key, the API is served over HTTPS only.
  net::TlsFiles tls;
  // Bearer tokens. With neither tokens nor client_certificates every request has admin
  // access.
  AccessTokens tokens;
  // Subjects of verified client certificates (tls.client_ca_file) mapped to access levels
  // and names. A request without an Authorization header (or live console session) is judged
  // by its certificate's subject: one not mapped grants nothing. With any mapped,
  // authentication is on even without tokens.
  ClientCertificates client_certificates;
  // The admin console's sign-in sessions: how long one lasts, how many may live at once.
  SessionStore::Options console_sessions;
  // The largest answer of query, all and topics (--max-answer-bytes): a longer one is cut into
  // pages a client follows with next_position (docs/protocol.md §3.9, §3.10, §3.12).
  std::size_t max_answer_bytes = std::size_t{4} << 20;
};

// Writes the metrics of everything behind the API (the coordinator, the store, the
// scheduler) for /api/metrics; the API adds its own HTTP request metrics.
using MetricsWriter = std::function<void(metrics::PrometheusText&)>;

// The HTTP face of the coordinator: every route of docs/protocol.md §3 under /api/settle and
// /api/dtmsvr, /api/ping and /api/metrics (Prometheus), and the admin console's (GET /, /admin
// and its files, /api/admin/whoami, /api/admin/counts, /api/admin/hosts and, admin only,
// POST /api/admin/hosts/retryNow; §3.14). Parses (400
// naming the field), calls the Coordinator, maps its Status to HTTP in one place. Never lets an
// exception or a bad request stop it serving.
//
// With tokens configured, every route but /api/ping needs "Authorization: Bearer <token>"
// granting its access level (see Access): 401 without a valid token, 403 with one that grants
// too little. With client certificates mapped (options.client_certificates), a request
// without that header is judged by its verified certificate's subject instead, the same way;
// a certificate not mapped gets 401 saying so. A token, when sent, is judged alone. The
// console's session cookie (an opaque id, SessionStore) counts as its token would; one that is
// unknown or expired is set aside, so that it hides no certificate, and named in the 401 when
// nothing else grants. Every 401 and 403 is logged and counted (RefusalLog), and so is every
// TLS handshake the HTTPS port fails. Routes and access are judged from a request's head
// (net::ServerOptions::judge_head): a 404, 405, 401 or 403 is answered before its body is
// read, so that an anonymous client's body costs no memory, and a request let through is
// served as its head was judged, its token not judged again; the routes open to anyone
// (/api/ping, the console's pages and its sign-in and sign-out forms) take a body of 4 KiB at
// most (413 beyond, 411 without a Content-Length).
//
// Lifetime: `coordinator`, `clock`, `context`, `hosts` and `refusals` (and what SetClock is
// given) must outlive the server; Stop() (or the destructor) returns once no request is in
// progress. Thread-safety: the setters and Start before serving, from one thread; Handle and the
// requests it serves from any thread, at once; Start and Stop from one thread that is not one
// of the context's.
class ApiServer {
 public:
  // Serves on `context`'s threads (net::Server): a request holds a coroutine, not a thread,
  // for as long as it takes, a wait_result submit included. Request durations (the metrics)
  // are measured on `clock`'s monotonic reading, and so are the console sessions' lifetimes.
  // GET /api/admin/hosts reads `hosts`, the participant hosts' gates (null: it lists none),
  // /query and /all say which transactions they hold (waiting_on_host), and
  // POST /api/admin/hosts/retryNow asks them for a host's Retry now (null: 404 for any host).
  // Refusals and failed handshakes go to `refusals` (null: a log of its own, on `clock`).
  ApiServer(drive::Coordinator& coordinator, const Clock& clock, asio::io_context& context,
            ApiServerOptions options, MetricsWriter metrics = {}, calls::HostGates* hosts = nullptr,
            RefusalLog* refusals = nullptr);
  ~ApiServer();  // Stop()

  // What GET /api/admin/clock answers: how this instance's clock stands against the database's
  // (or the host's). Without it, 404. Before Start().
  void SetClock(std::function<drive::ClockReading()> read);
  // Requests over `limiter`'s rate per caller get 429 {"message":"quota: ..."} with
  // Retry-After (docs/protocol.md §1.2), /api/ping excepted. Null (the default): no limit.
  // It must outlive the server. Before Start().
  void SetRateLimiter(RateLimiter* limiter);
  // Bulk actions run as `jobs` (POST /api/admin/bulk, /api/admin/jobs...); null (the
  // default): those routes answer 503. It must outlive the server. Before Start().
  void SetBulkJobs(drive::BulkJobs* jobs);

  // Answers one request as a connection does once it has framed it (routes, access, the
  // coordinator's answer, the metrics), without a socket, judging its access itself (whatever
  // its head_judgement holds, it is set aside): the deterministic simulation
  // (tests/simulation) drives the routes this way on its own thread. Any time after
  // construction; runs on the awaiting coroutine's executor.
  asio::awaitable<net::Response> Handle(net::Request& request);

  // Binds host:port (port 0: any free port) and starts serving. Returns the bound port.
  Result<int> Start(const std::string& host, int port);

  // Stops accepting connections and waits for requests in progress. Idempotent.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace settle::api
