#pragma once

#include <string>
#include <string_view>

namespace settle::engine {

// The tenancy rule (docs/protocol.md §1.6): a transaction, and a topic, belongs to the caller
// that created it. The front doors say who asks; the coordinator stores the name with what the
// request creates and applies MayTouch to what it reads or changes.

// Who asks.
struct Requester {
  // The caller's name (api::Caller::name: a token's name or a client certificate's mapped name;
  // tokens that share a name are one caller), stored as the creator of what the request
  // creates. Empty with authentication off: what it creates belongs to nobody.
  std::string name;
  // Sees and acts on its own transactions and topics only, and is counted by the quotas: a
  // client-level caller under authentication. Otherwise (an admin, a read-level operator, or
  // every request with authentication off) it sees and acts on every one.
  bool own_only = false;
};

// Whether `who` may see and act on what `creator` created. Something of nobody's (created with
// authentication off, or stored before transactions had creators) is everybody's, as it was.
inline bool MayTouch(const Requester& who, std::string_view creator) {
  return !who.own_only || creator.empty() || creator == who.name;
}

}  // namespace settle::engine
