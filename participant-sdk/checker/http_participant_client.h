#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "checker_tls.h"
#include "participant_client.h"
#include "settle/core/clock.h"
#include "settle/core/url.h"
#include "settle/net/blocking_client.h"
#include "settle/signing/keys.h"

namespace settle::checker {

// ParticipantClient over HTTP(S), calling as docs/protocol.md §4.1 says: POST with the body
// (GET when it is empty), the URL plus gid, trans_type, branch_id and op, Content-Type:
// application/json plus the extra headers (which may replace it). A new connection per
// request, so that one answer cannot leak into the next. Not thread-safe: one caller at a time
// (CallAtOnce runs its calls concurrently itself).
class HttpParticipantClient final : public ParticipantClient {
 public:
  // `headers` go with every request, state reads included; `timeout` bounds each request
  // (connecting, sending and waiting for its answer); https:// participants are verified
  // against `tls.ca_file` (empty: the system's CA store), and get `tls`'s client certificate
  // when they ask for one. A failed TLS handshake is unreachable, its reason followed by
  // HandshakeFailureHint. With `signing_key`, branch calls are signed as BranchCall::signing
  // says.
  HttpParticipantClient(std::vector<std::pair<std::string, std::string>> headers, Duration timeout,
                        CheckerTls tls = {},
                        std::optional<signing::SigningKey> signing_key = std::nullopt);

  Answer CallBranch(const BranchCall& call) override;
  Answer GetState(const std::string& url) override;
  Answer Call(const HttpCall& call) override;
  std::vector<Answer> CallAtOnce(const std::vector<HttpCall>& calls) override;

 private:
  using Headers = std::vector<std::pair<std::string, std::string>>;
  // The request to send: the client's headers, then `extra`.
  net::ClientRequest Request(const std::string& method, const Url& url, const std::string& target,
                             const std::string& body, const Headers& extra = {}) const;
  // Sends on a fresh connection.
  Answer Send(net::ClientRequest request);
  // Sends on whatever connection the pool gives; callable from several threads at once.
  Answer SendConcurrently(net::ClientRequest request);

  std::vector<std::pair<std::string, std::string>> headers_;
  Duration timeout_;
  CheckerTls tls_;
  std::optional<signing::SigningKey> signing_key_;
  std::unique_ptr<net::BlockingClient> client_;  // null if the TLS files cannot be used
  std::string client_error_;
};

}  // namespace settle::checker
