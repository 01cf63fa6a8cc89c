#pragma once

#include "settle/engine/requests.h"

namespace settle::testing {

// The submit DTM's SDKs send after a message's prepare: the same body.
inline engine::SubmitRequest SubmitOfPrepared(const engine::PrepareRequest& prepare) {
  engine::SubmitRequest r{prepare.gid, TransType::kMsg, prepare.options, prepare.steps,
                          prepare.payloads};
  r.query_prepared = prepare.query_prepared;
  return r;
}

}  // namespace settle::testing
