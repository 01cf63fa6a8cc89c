#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "settle/core/clock.h"
#include "settle/core/status.h"
#include "settle/sdk/barrier.h"
#include "settle/sdk/branch_request.h"
#include "settle/sdk/participant.h"
#include "settle/sdk/resume_request.h"
#include "settle/sdk/signature_refusals.h"
#include "settle/sdk/signed_calls.h"

namespace grpc {
class ServerBuilder;
class ServerCredentials;
}  // namespace grpc

namespace settle::sdk {

struct GrpcBranchServerOptions {
  // Handlers run on a pool of this many threads: each holds one while its business code runs.
  // gRPC's own threads only receive calls and send answers.
  std::size_t threads = 32;
  // With a PEM certificate chain and key, Start serves over TLS only (grpcs://). The three TLS
  // options are Start's alone: MountOn ignores them (and says so on stderr), since the host
  // server's TLS is the credentials its listening port was added with (see MountOn).
  std::string tls_cert_file;
  std::string tls_key_file;
  // With TLS and a PEM CA file, every connection must present a client certificate from that
  // CA (mutual TLS: settled --tls-client-cert): none, another CA's, or an expired one ends at
  // the handshake, before the barrier or any handler.
  std::string tls_client_ca_file;
  // With a policy, a call that is not signed as it says (signed_calls.h; the gRPC form of
  // docs/protocol.md §4.9: signature-input, signature and content-digest metadata over the
  // method, :authority, dtm-* metadata and the message's digest) is answered UNAUTHENTICATED
  // with "signature: <reason>" before the barrier or any handler runs, counted and logged. A
  // Try on an OnTry or OnBranch method, and an XA action on an OnXa method, are judged by its
  // try_policy; every other call as settled's, whatever its dtm-trans_type and dtm-op say.
  std::optional<SignedCalls> signed_calls;
  // The names this server answers to, "host:port" as settled dials it (its branch methods'
  // host and port): with signed_calls, a call signed for any other :authority is refused
  // (authority_mismatch), whatever :authority it arrives with. Empty: the address Start
  // listens on (and localhost:<port> on a loopback address); required on 0.0.0.0 and when
  // mounted (MountOn). See served_authorities.h.
  std::vector<std::string> authorities;
  // Where a signature's created is compared with now (null: the system clock). It must outlive
  // the server.
  const Clock* clock = nullptr;
  // What bounds its clients (gRPC 1.51 caps neither connections nor a stream's wait for its
  // message itself). On a server of its own (Start), and on a mounted one's port that
  // ListenFor opened, connections are accepted by grpc_listen::ConnectionGate: open
  // connections beyond max_connections, or beyond max_connections_per_peer from one IP address
  // (0: no cap of its own; at most max_connections), are closed as soon as accepted (the
  // caller sees UNAVAILABLE).
  std::size_t max_connections = 1000;
  std::size_t max_connections_per_peer = 100;
  // Start and MountOn: a call whose request message has not wholly arrived this long after
  // its headers is ended with DEADLINE_EXCEEDED (settled retries it) and its memory freed;
  // beyond memory_limit_bytes / 96 KiB calls waiting at once, a new one is refused at once
  // with RESOURCE_EXHAUSTED. On Start's server, the TLS handshake and HTTP/2 settings have
  // first_message_timeout too, and memory_limit_bytes is gRPC's resource quota.
  Duration first_message_timeout{10000};
  std::size_t memory_limit_bytes = std::size_t{256} << 20;
  // Start's server: the largest request message (RESOURCE_EXHAUSTED beyond, before it is
  // read), calls in flight on one connection (HTTP/2's MAX_CONCURRENT_STREAMS), and how long
  // a connection with no call stays open (settled reconnects at will).
  std::size_t max_message_bytes = std::size_t{4} << 20;
  int max_calls_per_connection = 100;
  Duration idle_timeout{60'000};
};

// What a GrpcBranchServer has refused and cut (its metrics).
struct GrpcBranchServerCounts {
  std::size_t open_connections = 0;       // Start's server, or ListenFor's port
  std::uint64_t refused_connections = 0;  // at max_connections or max_connections_per_peer
  std::size_t waiting_calls = 0;          // calls whose request message has not arrived yet
  std::uint64_t first_message_timeouts = 0;
  std::uint64_t waiting_refusals = 0;  // refused: memory_limit_bytes's calls were waiting
};

// A participant's branches as gRPC methods (docs/protocol.md §10.4): the coordinator calls
// "/package.Service/Method" with the branch's bytes as the request message and dtm-gid,
// dtm-trans_type, dtm-branch_id and dtm-op in the metadata. Each call becomes the same
// BranchRequest an HTTP branch URL gets (path: the method; body: the message's bytes;
// headers: the metadata), runs the same handler, under the same Barrier when it is Guarded,
// and its BranchReply becomes the status DTM's gRPC protocol uses: OK (with the reply's body
// as the answer's bytes), ABORTED for FAILURE (Conflict, NotFound, AlreadyExists),
// FAILED_PRECONDITION for ONGOING (Pending), INVALID_ARGUMENT, UNAVAILABLE or INTERNAL for the
// errors the coordinator retries. A call without valid dtm-* metadata is ABORTED naming the
// key, as an HTTP branch URL refuses a bad query; a method nobody serves is UNIMPLEMENTED; a
// handler that throws answers INTERNAL.
//
// Mount it on a grpc::ServerBuilder of the service's own (its typed services keep their
// methods), or let Start run a server of its own.
//
// Lifetime: it must outlive the server it is mounted on, and a Barrier given to
// OnQueryPrepared must outlive it. Thread-safety: register handlers before serving; calls are
// then served from any number of threads at once.
class GrpcBranchServer {
 public:
  explicit GrpcBranchServer(GrpcBranchServerOptions options = {});
  ~GrpcBranchServer();  // Stop()
  GrpcBranchServer(const GrpcBranchServer&) = delete;
  GrpcBranchServer& operator=(const GrpcBranchServer&) = delete;

  // `method` is "/package.Service/Method", as gRPC names it on the wire.
  GrpcBranchServer& OnBranch(const std::string& method, BranchHandler handler);
  // One op only: a call with another op is ABORTED.
  GrpcBranchServer& OnTry(const std::string& method, BranchHandler handler);
  GrpcBranchServer& OnConfirm(const std::string& method, BranchHandler handler);
  GrpcBranchServer& OnCancel(const std::string& method, BranchHandler handler);
  GrpcBranchServer& OnAction(const std::string& method, BranchHandler handler);
  GrpcBranchServer& OnCompensate(const std::string& method, BranchHandler handler);
  // An XA branch's method, serving its action (the initiator's, with dtm-phase2_url) and its
  // phase 2 (dtm-op commit or rollback, settled's), as Participant::OnXa serves an XA URL: a
  // call whose dtm-trans_type is not xa, whose op is another, or an action without
  // dtm-phase2_url is ABORTED naming the key. Only here is an XA action the initiator's.
  GrpcBranchServer& OnXa(const std::string& method, BranchHandler handler);
  // A transactional message's back-check (QueryPrepared on `barrier`, msg_barrier.h): with
  // signed_calls, settled's call like a phase 2, whatever dtm-op it names.
  GrpcBranchServer& OnQueryPrepared(const std::string& method, Barrier& barrier);
  // A workflow's resume (its query_prepared, DTM's `/workflow.Workflow/Execute`;
  // docs/protocol.md §3.16), as Participant::OnResume serves it over HTTP: the dtm-* metadata
  // read as ParseResumeQuery reads the query (ABORTED naming the key), the input from the
  // message `WorkflowData { bytes data = 1; }` (INVALID_ARGUMENT when it is not one), the
  // answer an empty message. With signed_calls, settled's call.
  GrpcBranchServer& OnResume(const std::string& method, ResumeHandler handler);

  // Serves every registered method on `builder`'s server (as its generic service: at most one
  // per server). Once. TLS and client certificates are then the host server's: the
  // credentials of its AddListeningPort, not tls_cert_file, tls_key_file or tls_client_ca_file
  // (MountOn warns on stderr when they are set). Mutual TLS on a mounted server:
  //
  //   grpc::SslServerCredentialsOptions tls(
  //       GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  //   tls.pem_key_cert_pairs.push_back({key_pem, cert_chain_pem});
  //   tls.pem_root_certs = client_ca_pem;  // the CA of settled's --tls-client-cert
  //   builder.AddListeningPort("0.0.0.0:9000", grpc::SslServerCredentials(tls));
  //   branches.MountOn(builder);
  //
  // With signed_calls (check_authority on), `authorities` must name the server as settled
  // dials it (the listening address is the builder's): InvalidArgument otherwise, or for a
  // malformed name, and nothing is mounted.
  Status MountOn(grpc::ServerBuilder& builder);
  // A mounted server's port with the caps of Start's (max_connections,
  // max_connections_per_peer): in place of the builder's AddListeningPort, listens on host:port
  // (0: any free port) itself and hands each connection within the caps to `builder`'s server,
  // served with `credentials` (as AddListeningPort takes them: TLS, mutual TLS); one beyond is
  // closed as soon as it is accepted. Once, after MountOn and before builder.BuildAndStart();
  // then AcceptConnections once the server has started (until then connections wait in the
  // listen queue), and Stop before the server's Shutdown. Returns the port; Unavailable if it
  // cannot listen there, InvalidArgument for caps out of range (or a second call).
  //
  //   branches.MountOn(builder);
  //   Result<int> port = branches.ListenFor(builder, "0.0.0.0", 9000, credentials);
  //   std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  //   branches.AcceptConnections();
  //   ...
  //   branches.Stop();
  //   server->Shutdown();
  Result<int> ListenFor(grpc::ServerBuilder& builder, const std::string& host, int port,
                        std::shared_ptr<grpc::ServerCredentials> credentials);
  // Starts accepting on ListenFor's port, once the builder's server has started. Once.
  void AcceptConnections();
  // A server of its own on host:port (0: any free port); returns the port. Unavailable if it
  // cannot listen there; InvalidArgument for an unreadable certificate or key, a
  // tls_client_ca_file that cannot be read or holds no PEM certificate that parses, or (with
  // signed_calls) authorities that are malformed or cannot be assumed. With signed_calls,
  // first writes the keys it trusts to standard error (DescribeTrustedKeys).
  Result<int> Start(const std::string& host, int port);
  // The names signed calls must have been signed for; empty before Start or MountOn, or
  // without signed_calls.
  std::vector<std::string> authorities() const;
  // Stops a server Start made, letting calls in progress answer; stops accepting on
  // ListenFor's port (the mounted server's Shutdown is its owner's). Idempotent.
  void Stop();

  // Calls refused for their signature since construction: the metric of
  // GrpcBranchServerOptions::signed_calls (each refusal is logged with its kind and reason
  // too). signature_refusals() is their total; signature_refusal_counts() counts them by kind,
  // for SignatureRefusalsText (add a Participant's to serve one metric). Thread-safe.
  std::uint64_t signature_refusals() const;
  SignatureRefusalCounts signature_refusal_counts() const;
  // Connections and calls refused or cut at the bounds of GrpcBranchServerOptions.
  // Thread-safe.
  GrpcBranchServerCounts bound_counts() const;

  struct Impl;  // the routes, the handler pool and the generic service (its calls see it)

 private:
  GrpcBranchServer& OnOp(const std::string& method, std::optional<BranchOp> op,
                         BranchHandler handler);
  void Mount(grpc::ServerBuilder& builder);  // MountOn without its warning, for Start
  std::unique_ptr<Impl> impl_;
};

}  // namespace settle::sdk
