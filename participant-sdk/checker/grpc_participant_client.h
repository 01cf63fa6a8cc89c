#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "checker_tls.h"
#include "participant_client.h"
#include "settle/core/clock.h"
#include "settle/grpc_unary/unary_call.h"
#include "settle/signing/keys.h"

namespace settle::checker {

// A participant whose branches may be gRPC methods (docs/protocol.md §10.4): a branch URL that
// is one ("grpc://host:port/pkg.Service/Method", grpcs://, or DTM's "host:port/...") is called
// as settled calls it, with the body as the request message's bytes and dtm-gid,
// dtm-trans_type, dtm-branch_id, dtm-op and dtm-dtm in the metadata, plus the extra headers
// lowercased; its status code is the answer. Everything else (http(s):// branches, the state
// URL, a service's own URLs) goes to `http`. grpcs:// is verified against `tls.ca_file` (empty:
// the system's CA store) and gets `tls`'s client certificate when it asks for one; a grpcs://
// participant that ends the TLS handshake is unreachable, its reason followed by
// HandshakeFailureHint. One channel per origin. With `signing_key`, a call is signed as settled
// signs it (docs/protocol.md §4.9, the gRPC form), left unsigned or tampered with (its message
// changed after signing) as BranchCall::signing says.
// What a call that ended UNAVAILABLE means: gRPC says UNAVAILABLE both when it could not
// connect and when the method answered so.
//   kHandshakeFailed  a tls target whose message says the TLS handshake ended (EndedInHandshake),
//                     whatever the channel's state: in TLS 1.3 the client's side of the
//                     handshake ends before the server judges its certificate, so the channel
//                     can read READY when the server refuses it and closes the connection;
//   kUnreachable      the channel never became READY;
//   kAnswer           the method's own answer, on a channel that connected.
enum class Unavailable { kAnswer, kUnreachable, kHandshakeFailed };
Unavailable ReadUnavailable(bool tls, bool channel_ready, const std::string& message);

class GrpcParticipantClient final : public ParticipantClient {
 public:
  GrpcParticipantClient(std::unique_ptr<ParticipantClient> http,
                        std::vector<std::pair<std::string, std::string>> headers, Duration timeout,
                        CheckerTls tls = {},
                        std::optional<signing::SigningKey> signing_key = std::nullopt);
  ~GrpcParticipantClient() override;

  Answer CallBranch(const BranchCall& call) override;
  Answer GetState(const std::string& url) override { return http_->GetState(url); }
  Answer Call(const HttpCall& call) override { return http_->Call(call); }
  std::vector<Answer> CallAtOnce(const std::vector<HttpCall>& calls) override {
    return http_->CallAtOnce(calls);
  }

 private:
  std::unique_ptr<ParticipantClient> http_;
  std::vector<std::pair<std::string, std::string>> headers_;
  Duration timeout_;
  CheckerTls tls_;
  std::string tls_error_;  // why a file of `tls_` could not be read, naming its flag
  std::optional<signing::SigningKey> signing_key_;
  std::unique_ptr<grpc_unary::ChannelPool> channels_;
};

}  // namespace settle::checker
