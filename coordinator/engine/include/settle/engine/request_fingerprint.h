#pragma once

#include <string>
#include <string_view>

#include "settle/core/status.h"
#include "settle/engine/requests.h"

// What a repeated prepare or submit must match (docs/protocol.md §3.15). The request that
// creates a transaction leaves its fingerprint in the stored options; a later request for the
// same gid that carries the transaction's content (a prepare again, a saga's submit again, a
// message's submit) is compared with it, so that a caller whose second request differs learns
// that it was not taken, instead of a 200 for rows it did not send.
//
// A fingerprint is text, one `name=value` line per field that changes what the transaction
// does, in the protocol's JSON names and a fixed order: trans_type, the options (wait_result
// excluded: it changes only the answer), the count of steps and each step, the count of
// payloads and each payload, query_prepared. A count, a number or a flag is written as it is
// ("retry_limit=3", "timeout_to_fail=-" for one not sent); a text (a URL, a payload, custom_data,
// the branch headers) as a 64-bit digest ("#0f3a..."). A message's topic://NAME steps are
// fingerprinted as sent, before they are resolved to subscribers, so a repeat matches whatever
// happened to the topic meanwhile.
//
// The digest is FNV-1a: it tells an accidental difference from an identical repeat (two differing
// texts look alike with probability 2^-64); it is not a defence against a caller who crafts a
// collision, which could only make its own differing repeat answer 200 and change nothing.
namespace settle::engine {

std::string FingerprintOf(const PrepareRequest& request);
std::string FingerprintOf(const SubmitRequest& request);

// How a repeat is compared with what is stored.
struct RepeatRules {
  // A message's submit may leave query_prepared out: it keeps the prepare's.
  bool query_prepared_optional = false;
  // A message's submit may carry another custom_data than its prepare: DTM's Go, Node and C#
  // SDKs add a message's {"delay": N} to the submit only. The prepare's is the one kept.
  bool custom_data_ignored = false;
  // Only custom_data is compared (and trans_type): a workflow's prepareWorkflow is repeated by
  // every resume of its client, which may run elsewhere (another query_prepared) with other
  // options; its name and input are what must not change.
  bool only_custom_data = false;
};

// A request that finds its gid stored, and what the stored transaction's creator must match.
struct Repeat {
  std::string fingerprint;  // FingerprintOf the repeat
  RepeatRules rules;
};

// OK when the repeat matches `stored`, or when `stored` is empty (a transaction stored before
// fingerprints, which keeps the old behaviour: the repeat is taken as the same). Otherwise a
// Conflict naming the first field that differs, in the repeat's order: "steps: 2 here, 3 in
// the request that created gid g1; ...", "steps[1]: differs from the request that created
// gid g1; ...".
Status MatchStored(std::string_view gid, std::string_view stored, const Repeat& repeat);

}  // namespace settle::engine
