#pragma once

#include <cstddef>
#include <optional>

#include "settle/calls/branch_caller.h"
#include "settle/core/clock.h"
#include "settle/net/client.h"
#include "settle/signing/keys.h"

namespace settle::calls {

struct HttpBranchCallerOptions {
  // A participant's answer beyond this many bytes is read and discarded: only the start of a
  // body matters for classification and last_error.
  std::size_t max_response_bytes = 64 * 1024;
  // With a key (settled --signing-key), every call is signed (RFC 9421; docs/protocol.md
  // §4.9): Content-Digest, Signature-Input and Signature, created from `clock`'s wall time.
  std::optional<signing::SigningKey> signing_key;
  // Whether the signature covers the Host (--unsigned-authority turns it off).
  bool sign_authority = true;
};

// Calls participants over HTTP(S) exactly as docs/protocol.md §4.1 says: POST with the stored body
// when it is non-empty, otherwise GET; the registered URL plus gid, trans_type, branch_id and
// op; Content-Type: application/json plus the branch headers; the call's timeout for the
// whole exchange. Calls go through `client` (net::Client: keep-alive pools per origin, TLS, a
// stale kept-alive connection replaced once: branch handlers are idempotent). The calls of
// one CallAll run concurrently as coroutines, without a thread each. Each outcome's elapsed
// time is measured on `clock`'s monotonic reading.
//
// Lifetime: `client` and `clock` must outlive the caller, and the caller every CallAll or Call
// still running. Thread-safety: CallAll and Call from any thread, at once (it keeps no state
// of its own; the client's pools are locked).
class HttpBranchCaller final : public BranchCaller {
 public:
  HttpBranchCaller(net::Client& client, const Clock& clock, HttpBranchCallerOptions options = {});

  asio::awaitable<std::vector<engine::BranchOutcome>> CallAll(
      std::vector<engine::BranchCall> calls) override;

  // One call.
  asio::awaitable<engine::BranchOutcome> Call(engine::BranchCall call);

 private:
  net::Client& client_;
  const Clock& clock_;
  HttpBranchCallerOptions options_;
};

}  // namespace settle::calls
