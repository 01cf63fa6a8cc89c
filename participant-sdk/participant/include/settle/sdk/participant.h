#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "settle/core/clock.h"
#include "settle/core/status.h"
#include "settle/sdk/barrier.h"
#include "settle/sdk/branch_request.h"
#include "settle/sdk/participant_counts.h"
#include "settle/sdk/resume_request.h"
#include "settle/sdk/signature_refusals.h"
#include "settle/sdk/signed_calls.h"
#include "settle/sdk/xa_request.h"

namespace settle::sdk {

struct ParticipantOptions {
  // Handlers run on a pool of this many threads: each holds one while its business code (a
  // local database transaction, say) runs. Connections, and requests waiting for a thread,
  // hold none: they live on the I/O threads.
  std::size_t threads = 32;
  // Threads that read requests and write answers (0: one per core).
  std::size_t io_threads = 0;
  std::size_t max_body_bytes = 1 << 20;
  // How long an idle keep-alive connection stays open.
  std::chrono::seconds keep_alive_timeout{5};
  // A request's head and body must all arrive within this of its first byte, however they are
  // spread out: a client still sending then gets 408 and is disconnected, so that a trickling
  // client cannot hold a connection.
  std::chrono::milliseconds request_timeout{10000};
  // A connection is closed after this many answers (0: never), so that callers reconnect.
  std::size_t max_requests_per_connection = 0;
  // Open connections at most (503 beyond), and from one peer address (an IPv6 /64) at most,
  // so that one host's sockets cannot fill the rest (0: no cap per peer). settled makes at most
  // --host-max-in-flight (128) calls at once to one participant host; behind a proxy, raise
  // the cap per peer and cap clients at the proxy. At construction the process's soft
  // descriptor limit is raised to its hard one, and a max_connections that does not fit in it
  // less a reserve for everything else (a quarter, at least 64: the service's database, its
  // logs, its calls) is lowered to fit (and the cap per peer with it), said on stderr at
  // Start; bound_counts() has the cap in force. A process that also runs a GrpcBranchServer
  // (or another server) shares that limit: give each its part.
  std::size_t max_connections = 10000;
  std::size_t max_connections_per_peer = 512;
  // With a PEM certificate chain and key, the participant serves HTTPS only.
  std::string tls_cert_file;
  std::string tls_key_file;
  // With HTTPS and a PEM CA file here, every connection must present a client certificate
  // issued by that CA (mutual TLS: settled's --tls-client-cert, the initiator's
  // ClientOptions::client_cert_file). A connection without one, with one from another CA, or
  // with an expired one fails the TLS handshake: no request of it is read, so nothing reaches
  // the barrier or a handler, and the participant goes on serving others. Start fails
  // (InvalidArgument naming the file) when it cannot be used, or is given without HTTPS.
  std::string tls_client_ca_file;
  // With a policy, a branch, XA or back-check (OnQueryPrepared) call that is not signed as it
  // says is refused with 401 and
  // {"message":"signature: <reason>"} before the barrier or any handler runs (signed_calls.h,
  // docs/protocol.md §4.9); the participant's own routes (OnGet, OnPost) are not checked.
  std::optional<SignedCalls> signed_calls;
  // The names this participant answers to, "host:port" as settled dials it (its branch URLs'
  // host and port; behind a proxy, the public name settled calls): with signed_calls, a call
  // signed for any other authority is refused (authority_mismatch), whatever Host it carries,
  // so a call settled signed for another participant cannot be replayed here. Empty: the
  // address Start listens on (and localhost:<port> on a loopback address); Start fails
  // (InvalidArgument) on 0.0.0.0 without them. See served_authorities.h.
  std::vector<std::string> authorities;
  // Where a signature's created is compared with now (null: the system clock).
  const Clock* clock = nullptr;
};

using BranchHandler = std::function<BranchReply(const BranchRequest&)>;
using XaHandler = std::function<BranchReply(const XaRequest&)>;

// A header field: name and value, in the order sent or to be written.
using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

// A plain HTTP route of the participant's own (balances, health), outside the protocol.
struct HttpRequest {
  std::string method;
  std::string path;
  std::multimap<std::string, std::string> params;
  std::string body;
  HttpHeaders headers = {};  // as sent

  // The first field named `name` (compared case-insensitively), or nullptr.
  const std::string* Header(std::string_view name) const;
};
struct HttpReply {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  // More header fields (Retry-After, say), written as given: no CR or LF in names or values.
  HttpHeaders headers = {};
};
using RouteHandler = std::function<HttpReply(const HttpRequest&)>;

// A participant's HTTP(S) server, on the net room's server: strict framing (an ambiguous or
// malformed request gets one 4xx and the connection is closed), keep-alive, pipelining. Branch
// routes answer GET and POST; the SDK reads gid, trans_type, branch_id and op from the query
// (409 FAILURE naming the parameter when one is missing or invalid) and turns the handler's
// BranchReply into the protocol's answer with ToHttpAnswer (settle/core/http_status.h). A
// handler that throws answers 500, which the coordinator retries. A known path asked with
// another method answers 405 with Allow; an unknown path, 404: both from the request's head,
// before its body is read.
class Participant {
 public:
  explicit Participant(ParticipantOptions options = {});
  ~Participant();  // Stop()

  // A branch URL for any op.
  Participant& OnBranch(const std::string& path, BranchHandler handler);
  // A branch URL for one op: a call with another op is refused with 409 FAILURE.
  Participant& OnTry(const std::string& path, BranchHandler handler);
  Participant& OnConfirm(const std::string& path, BranchHandler handler);
  Participant& OnCancel(const std::string& path, BranchHandler handler);
  Participant& OnAction(const std::string& path, BranchHandler handler);
  Participant& OnCompensate(const std::string& path, BranchHandler handler);
  // An XA branch URL, serving its action and its phase 2 (op=commit, op=rollback; see
  // xa_request.h): the query is read with ParseXaQuery and refused like a branch URL's (409
  // FAILURE naming the parameter). PostgresXa::Handler makes the handler.
  Participant& OnXa(const std::string& path, XaHandler handler);

  // A transactional message's back-check URL (Msg::Prepare's query_prepared_url), answered by
  // QueryPrepared on `barrier` (settle/sdk/msg_barrier.h) for the query's gid: 200 SUCCESS
  // when the message's local transaction committed, 409 FAILURE when it did not (and now never
  // will), 500 or 503 when the database failed. GET and POST; a missing or invalid gid is a
  // 409 naming it. With ParticipantOptions::signed_calls it is settled's call like a phase 2:
  // one not signed by its keys is refused (401) before the barrier is asked. `barrier` must
  // outlive the participant.
  Participant& OnQueryPrepared(const std::string& path, Barrier& barrier);

  // A workflow's resume URL (its query_prepared, docs/protocol.md §3.16): settled calls it while
  // the workflow is unfinished, naming the workflow as its op; the query is read with
  // ParseResumeQuery (409 FAILURE naming the parameter) and `handler` answers as a branch
  // handler does (Workflows::ResumeHandler, settle/sdk/workflow.h, runs the workflow). With
  // ParticipantOptions::signed_calls it is settled's call: one not signed by its keys is
  // refused (401) before the handler runs. GET and POST.
  Participant& OnResume(const std::string& path, ResumeHandler handler);

  Participant& OnGet(const std::string& pattern, RouteHandler handler);
  Participant& OnPost(const std::string& pattern, RouteHandler handler);

  // Binds host:port (0: any free port) and serves on background threads; returns the port.
  // InvalidArgument for an unusable certificate, key or client CA file, a client CA file
  // without a certificate, or (with signed_calls) authorities that are malformed or cannot
  // be assumed. With signed_calls, first writes the keys it trusts to standard error
  // (DescribeTrustedKeys).
  Result<int> Start(const std::string& host, int port);
  // The names signed calls must have been signed for (ParticipantOptions::authorities, or the
  // ones Start assumed); empty before Start or without signed_calls.
  std::vector<std::string> authorities() const;
  // Branch and XA calls refused for their signature since construction: the metric of
  // ParticipantOptions::signed_calls (each refusal is logged with its kind and reason too).
  // signature_refusals() is their total; signature_refusal_counts() counts them by kind, for
  // SignatureRefusalsText on the service's own metrics route. Thread-safe.
  std::uint64_t signature_refusals() const;
  SignatureRefusalCounts signature_refusal_counts() const;
  // Connections open and refused, and requests cut, at the bounds of ParticipantOptions since
  // construction, with the connection cap in force: for the service's metrics
  // (ParticipantCountsText). Thread-safe.
  ParticipantCounts bound_counts() const;
  // Stops accepting, lets requests in progress answer, and closes every connection.
  // Idempotent.
  void Stop();

 private:
  Participant& OnOp(const std::string& path, std::optional<BranchOp> op, BranchHandler handler);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A branch handler whose business code runs inside `barrier` (see Barrier::Call).
using GuardedBusiness = std::function<Status(const BranchRequest&, BarrierTransaction&)>;
BranchHandler Guarded(Barrier& barrier, GuardedBusiness business);

}  // namespace settle::sdk
