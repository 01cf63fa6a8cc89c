#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "settle/calls/branch_caller.h"
#include "settle/core/clock.h"
#include "settle/grpc_unary/unary_call.h"
#include "settle/signing/keys.h"

namespace settle::calls {

struct GrpcBranchCallerOptions {
  // PEM CA certificates grpcs:// participants are verified against; empty: the system's.
  std::string ca_file;
  // A PEM certificate chain and its key presented to grpcs:// participants that ask for a
  // client certificate (settled --tls-client-cert, --tls-client-key); empty: none.
  std::string client_cert_file;
  std::string client_key_file;
  // Sent as the dtm-dtm metadata: where the participant reaches this coordinator's gRPC API
  // ("127.0.0.1:36790"); empty when it is off.
  std::string coordinator;
  // With a key (settled --signing-key), every call is signed (RFC 9421 as gRPC metadata;
  // docs/protocol.md §4.9): content-digest, signature-input and signature over the method, the
  // channel's authority (the branch URL's host:port), the dtm-* metadata and the message's
  // digest, created from `clock`'s wall time.
  std::optional<signing::SigningKey> signing_key;
  // Whether the signature covers the authority (--unsigned-authority turns it off).
  bool sign_authority = true;
};

// Calls participants that serve gRPC methods (docs/protocol.md §10.4), as DTM calls them: the
// branch's stored bytes are the request message, sent unchanged to the method the branch URL
// names (host:port/package.Service/Method, grpc://, grpcs://); the metadata carries dtm-gid,
// dtm-trans_type, dtm-branch_id, dtm-op and dtm-dtm (an XA branch's dtm-phase2_url too) and the
// transaction's branch headers with lowercased names; the call's timeout is its deadline. OK
// is SUCCESS, ABORTED FAILURE, FAILED_PRECONDITION ONGOING, anything else (a deadline, an
// unreachable host) an error, retried: UNAUTHENTICATED too, which a participant answers when it
// refuses the signature (the detail then says so, naming the key). One channel per origin, made on
// first use and reused. The calls of one CallAll run concurrently; none holds a thread while it
// waits.
//
// Lifetime: `clock` must outlive the caller, and the caller every call still running.
// Thread-safety: CallAll and Call from any thread, at once.
class GrpcBranchCaller final : public BranchCaller {
 public:
  GrpcBranchCaller(const Clock& clock, GrpcBranchCallerOptions options);
  ~GrpcBranchCaller() override;

  asio::awaitable<std::vector<engine::BranchOutcome>> CallAll(
      std::vector<engine::BranchCall> calls) override;
  asio::awaitable<engine::BranchOutcome> Call(engine::BranchCall call);

 private:
  const Clock& clock_;
  GrpcBranchCallerOptions options_;
  std::unique_ptr<grpc_unary::ChannelPool> channels_;
};

// Sends each call to the caller its URL needs: gRPC methods to `grpc`, http(s):// URLs to
// `http`, so that one transaction may mix both.
//
// Lifetime: both callers must outlive it. Thread-safety: as theirs.
class SchemeRoutingCaller final : public BranchCaller {
 public:
  SchemeRoutingCaller(BranchCaller& http, BranchCaller& grpc) : http_(http), grpc_(grpc) {}

  asio::awaitable<std::vector<engine::BranchOutcome>> CallAll(
      std::vector<engine::BranchCall> calls) override;

 private:
  BranchCaller& http_;
  BranchCaller& grpc_;
};

}  // namespace settle::calls
