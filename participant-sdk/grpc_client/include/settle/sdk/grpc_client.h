#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "settle/core/status.h"
#include "settle/sdk/coordinator_link.h"
#include "settle/signing/keys.h"

namespace settle::sdk {

struct GrpcClientOptions {
  // Each call to the coordinator and each Try the initiator makes itself, unless the
  // transaction's request_timeout says otherwise. A wait_result call may take 30 s longer: the
  // coordinator holds its answer for one pass over the transaction.
  std::chrono::milliseconds timeout{10'000};
  // Metadata sent to the coordinator with every call: {"authorization", "Bearer TOKEN"} for a
  // settled that requires access tokens. Keys lowercase, as gRPC requires.
  std::map<std::string, std::string> metadata;
  // grpcs:// coordinators and Try methods are verified against this CA file (PEM); empty: the
  // system's CA store.
  std::string ca_file;
  // A PEM certificate chain and its key, presented to grpcs:// coordinators and Try methods,
  // and to the http_server, that ask for a client certificate (settled --tls-client-ca);
  // both or neither.
  std::string client_cert_file;
  std::string client_key_file;
  // The coordinator's HTTP API base ("http://127.0.0.1:36789/api/settle"). DTM's gRPC API has
  // no query: Query goes there, and so do Try calls to http(s):// URLs. Empty: both are
  // refused with InvalidArgument.
  std::string http_server;
  // With a key, the calls the initiator makes to branches itself (a TCC's Try, an XA action)
  // are signed as settled signs its own (docs/protocol.md §4.9; over gRPC as signature-input,
  // signature and content-digest metadata, over HTTP as ClientOptions::signing_key does), so
  // that a participant can tell them from anyone else's (SignedCalls::TryPolicy::kTryKeys).
  // Read it with signing::SigningKey::FromFile, as ClientOptions::signing_key.
  std::optional<signing::SigningKey> signing_key;
};

// A connection to a coordinator over DTM's gRPC API (service dtmgimp.Dtm, docs/protocol.md §10):
// what Settle's settled and DTM both serve, on port 36790 by default. Every initiator works
// with it as with the HTTP Client (Saga, Msg, RunTcc, RunXa, and PostgresXa's registration):
//
//   auto client = GrpcClient::Create("grpc://127.0.0.1:36790");
//   Saga saga(**client, gid);
//   saga.Add("grpc://bank:9000/bank.Bank/TransOut", "grpc://bank:9000/bank.Bank/TransOutRevert",
//            out_request.SerializeAsString());
//
// A step's payload is sent as the bytes it is (BinPayloads): a serialized protobuf message for a
// gRPC participant. The initiator calls a gRPC Try or XA action itself, as the coordinator
// calls a gRPC branch (§10.4): the body as the request message, dtm-gid, dtm-trans_type,
// dtm-branch_id, dtm-op and dtm-dtm (XA: dtm-phase2_url) in the metadata with the
// transaction's branch_headers. One channel per origin, reused. A transaction's
// TransOptions::traceparent and tracestate travel as `traceparent` and `tracestate` metadata
// on its Prepare, Submit, Abort and RegisterBranch and on the initiator's own branch calls.
//
// Answers as §10.3 gives them: OK is SUCCESS, ABORTED Conflict (FAILURE), FAILED_PRECONDITION
// Pending (ONGOING), INVALID_ARGUMENT, UNAUTHENTICATED, PERMISSION_DENIED and
// RESOURCE_EXHAUSTED InvalidArgument; anything else, a deadline included, Unavailable.
// Messages carry the code's name and the coordinator's own message.
//
// What DTM's gRPC API cannot carry is refused before anything is sent: a message whose steps
// are delivered in parallel (Msg::EnableConcurrent; DtmRequest has no member for it).
//
// Thread-safe: calls from several threads share the channels.
class GrpcClient : public CoordinatorLink {
 public:
  // `server`: "grpc://host:port", "grpcs://host:port" or DTM's "host:port". InvalidArgument for
  // another form, an unreadable CA file, metadata gRPC cannot carry or a bad http_server.
  static Result<std::unique_ptr<GrpcClient>> Create(const std::string& server,
                                                    GrpcClientOptions options = {});
  ~GrpcClient() override;

  Result<std::string> NewGid() override;
  // Through GrpcClientOptions::http_server.
  Result<std::optional<TransactionInfo>> Query(const std::string& gid) override;
  // Prepare, Submit or Abort with the call as a DtmRequest; the answer's body is empty.
  Result<std::string> Send(GlobalOp op, const GlobalCall& call) override;
  // RegisterBranch: the bytes as BusiPayload, the URLs in Data (and a workflow step's op and
  // status).
  Result<RegisteredBranch> RegisterBranch(const BranchRegistration& branch) override;
  // PrepareWorkflow: DtmProgressesReply read back (its Result is base64, as settled sends it).
  Result<WorkflowState> PrepareWorkflow(const GlobalCall& call) override;
  // A gRPC method; an http(s):// URL when http_server is set.
  Status CheckOwnBranchUrl(const std::string& url) const override;
  Result<BranchAnswer> CallBranch(const OwnBranchCall& call) override;
  std::chrono::milliseconds timeout() const override;

  struct Impl;  // the channels, the stub and the HTTP client (its calls see it)

 private:
  explicit GrpcClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace settle::sdk
