#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "settle/core/protocol.h"
#include "settle/core/status.h"
#include "settle/sdk/coordinator_link.h"
#include "settle/signing/keys.h"

namespace settle::sdk {

struct ClientOptions {
  // Connect, send and each read, for calls to the coordinator and to Try URLs. A call to the
  // coordinator with wait_result may take longer: it waits for branch calls.
  std::chrono::milliseconds timeout{10'000};
  // Extra headers sent to the coordinator with every call (an auth token, say).
  std::map<std::string, std::string> headers;
  // https:// coordinators and Try URLs are verified against this CA file (PEM); empty: the
  // system's CA store.
  std::string ca_file;
  // A PEM certificate chain and its key presented to https:// coordinators and Try URLs that
  // ask for a client certificate (mutual TLS: settled's --tls-client-ca, a participant's
  // ParticipantOptions::tls_client_ca_file). Both or neither.
  std::string client_cert_file;
  std::string client_key_file;
  // With a key, the calls the initiator makes to branches itself (a TCC's Try, an XA action)
  // are signed as settled signs its own (RFC 9421; docs/protocol.md §4.9), so that a
  // participant can tell them from anyone else's (SignedCalls::TryPolicy::kTryKeys). Read it
  // with signing::SigningKey::FromFile: a PEM Ed25519 private key or an "hmac:" secret, any
  // other file refused naming it.
  std::optional<signing::SigningKey> signing_key;
};

// Talks to any coordinator that speaks the protocol of docs/protocol.md (Settle or DTM; how it
// reads their answers: §6.4) over HTTP or HTTPS, with keep-alive connections and TCP_NODELAY
// (the net room's client, on an I/O thread of its own).
//
// Answers are classified by ClassifyBranchResponse (settle/core/branch_result.h), the rule
// the coordinator applies to participants (§4.2); the bodies of newGid and query are data, so
// only their status code is classified. Errors from every call: Conflict for FAILURE (409, or
// a body containing FAILURE), Pending for ONGOING (425, or a body containing ONGOING);
// otherwise InvalidArgument when the coordinator refused the request as malformed (400) or
// its credentials (401, 403), Unavailable when the coordinator could not be reached, timed
// out or answered anything else. Messages carry the coordinator's own.
//
// Thread-safe: calls from several threads share a small pool of connections.
class Client : public CoordinatorLink {
 public:
  // `server` is the API base: "http://127.0.0.1:36789/api/settle", or ".../api/dtmsvr".
  // InvalidArgument if it is not an http(s):// URL, or the CA file cannot be used.
  static Result<std::unique_ptr<Client>> Create(const std::string& server,
                                                ClientOptions options = {});
  ~Client();

  Result<std::string> NewGid() override;
  Result<std::optional<TransactionInfo>> Query(const std::string& gid) override;
  // POST prepare, submit or abort with the call as the JSON body of §3.
  Result<std::string> Send(GlobalOp op, const GlobalCall& call) override;
  // POST registerBranch.
  Result<RegisteredBranch> RegisterBranch(const BranchRegistration& branch) override;
  // POST prepareWorkflow.
  Result<WorkflowState> PrepareWorkflow(const GlobalCall& call) override;
  // http:// and https:// URLs; a gRPC one is the gRPC client's (grpc_client.h).
  Status CheckOwnBranchUrl(const std::string& url) const override;
  // POST the body (GET when empty) to the URL with the protocol's query parameters.
  Result<BranchAnswer> CallBranch(const OwnBranchCall& call) override;
  std::chrono::milliseconds timeout() const override { return options_.timeout; }

  // One protocol call: POST <server>/<route> with a JSON body; the answer's body on SUCCESS.
  Result<std::string> Post(const std::string& route, const std::string& json_body);
  // GET <url> or POST it with `body` and `headers`, for Try calls: the answer's status and
  // body, or Unavailable if no answer came within `timeout`.
  struct HttpAnswer {
    int status = 0;
    std::string body;
  };
  Result<HttpAnswer> CallUrl(const std::string& url, const std::string& body,
                             std::chrono::milliseconds timeout,
                             const std::map<std::string, std::string>& headers = {});

  const ClientOptions& options() const { return options_; }

 private:
  class Transport;
  Client(std::unique_ptr<Transport> transport, ClientOptions options);
  std::unique_ptr<Transport> transport_;
  ClientOptions options_;
};

}  // namespace settle::sdk
