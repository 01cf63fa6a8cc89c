#pragma once

#include <string>
#include <utility>
#include <vector>

#include "settle/core/clock.h"
#include "settle/core/status.h"
#include "settle/signing/keys.h"

namespace settle::calls {

// The fields of settled's countersignature of a registered Try (docs/protocol.md §4.9), in
// the order to send them: an HTTP Try's header fields (Content-Digest, Signature-Input,
// Signature), a gRPC Try's metadata (content-digest, signature-input, signature).
using TrySignature = std::vector<std::pair<std::string, std::string>>;

// What one registered Try is: the branch as registerBranch stored it and the Try's target.
struct RegisteredTry {
  std::string gid;
  std::string branch_id;
  std::string try_url;  // http(s):// URL or gRPC method, as registered
  std::string data;     // the registered data, which the Try must carry as its body (message)
};

// settled's countersignature of a Try its initiator registered: a signature by settled's key,
// tagged signing::kRegisteredTryTag, over the Try exactly as the initiator must send it, so
// that a participant set to require it (SignedCalls::TryPolicy::kRegistered) runs only that
// Try: this gid, this branch, this target, the registered data, made now.
//   HTTP: POST (GET when `data` is empty), the URL's host:port, its path, its own query
//     followed by gid, trans_type=tcc, branch_id and op=try as Url::TargetWith writes them
//     (the query settled's own calls carry, docs/protocol.md §4.1), the data's digest;
//   gRPC: the method, its host:port, dtm-gid, dtm-trans_type (tcc), dtm-branch_id and
//     dtm-op (try), in that order and no other dtm-* key, the message's digest.
// The same signing code as settled's own calls (net::SignRequest, grpc_unary::SignUnary), so
// both are built one way. Thread-safety: Countersign from any thread at once.
class TryCountersigner {
 public:
  // `key` is settled's --signing-key; without `sign_authority` (--unsigned-authority) the
  // authority is left out, as from settled's own calls. `clock` must outlive it.
  TryCountersigner(const Clock& clock, signing::SigningKey key, bool sign_authority);

  // The fields for `registered`'s Try; InvalidArgument for a URL that is neither an
  // http(s):// URL nor a gRPC method.
  Result<TrySignature> Countersign(const RegisteredTry& registered) const;

 private:
  const Clock& clock_;
  signing::SigningKey key_;
  bool sign_authority_;
};

}  // namespace settle::calls
