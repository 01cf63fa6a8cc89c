#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "settle/core/status.h"
#include "settle/sdk/barrier.h"
#include "settle/sdk/client.h"  // the HTTP link most callers pass
#include "settle/sdk/coordinator_link.h"
#include "settle/sdk/msg_barrier.h"
#include "settle/sdk/outcome.h"
#include "settle/sdk/trans_options.h"

namespace settle::sdk {

// A transactional message (DTM's "msg"): steps the coordinator delivers, each until it
// succeeds, if and only if the sender's local transaction commits.
//
//   Msg msg(client, gid);
//   msg.Add(service + "/TransIn", R"({"amount":30})").AddTopic("transfers", R"({"amount":30})");
//   Result<Outcome> sent = msg.DoAndSubmit(self + "/QueryPrepared", barrier,
//                                          [&](BarrierTransaction& tx) { return Debit(tx, 30); });
//
// With DoAndSubmit the sender serves the coordinator's back-check on its own barrier:
// participant.OnQueryPrepared("/QueryPrepared", barrier). Every call checks its input first:
// InvalidArgument naming the field (gid, steps, steps[i].action, query_prepared, delay), and
// no request is made. Errors from the coordinator are the Client's (settle/sdk/client.h).
// Lifetime: `client` must outlive it. Not thread-safe: one thread builds and sends a message.
class Msg {
 public:
  Msg(CoordinatorLink& link, std::string gid) : link_(link), gid_(std::move(gid)) {}

  // A step: POST `payload` (byte for byte; empty: GET) to `action_url` until it succeeds.
  Msg& Add(std::string action_url, std::string payload);
  // A step delivered to every subscriber of `topic` (its action is "topic://<topic>").
  Msg& AddTopic(const std::string& topic, std::string payload);
  // Delivers the steps in parallel rather than one after the other.
  Msg& EnableConcurrent();
  // Delivery starts `delay` after the message was created (its prepare, or a submit without
  // one), as the coordinator counts it (custom_data {"delay":seconds}, as DTM sends it).
  Msg& SetDelay(std::chrono::seconds delay);
  Msg& SetOptions(TransOptions options);
  TransOptions& options() { return options_; }

  // Registers the message as prepared: nothing is delivered until Submit. If neither Submit
  // nor Abort arrives, the coordinator asks GET <query_prepared_url>?gid=..&trans_type=msg&
  // branch_id=00&op=msg whether the local transaction committed (QueryPrepared answers it)
  // and delivers or fails the message accordingly. Later Submit bodies carry the URL too.
  Status Prepare(const std::string& query_prepared_url);
  // Asks the coordinator to deliver the message (with or without a Prepare before). Outcome:
  // submitted; with wait_result succeed once every step was delivered, failed (reason: why),
  // or submitted when delivery is still going on.
  Result<Outcome> Submit();
  // Fails a prepared message: nothing is delivered. Outcome: failed. Conflict when the
  // coordinator refuses (the message was submitted already, or the gid is unknown).
  Result<Outcome> Abort();

  // Prepare, then `local_tx` with the message's barrier row in one local transaction on
  // `barrier`'s database (RunMsgLocalTransaction), then as DTM's DoAndSubmit:
  // - local_tx OK: Submit, and its result is returned;
  // - local_tx Conflict (the business said no): Abort; the Conflict is returned;
  // - any other error (the outcome may be unknown: a COMMIT that failed, a lost connection):
  //   the back-check is asked here (QueryPrepared on `barrier`): committed -> Submit,
  //   FAILURE -> Abort, and when the database cannot say, neither (the coordinator's own
  //   back-check decides later). The error is returned.
  // A Submit or Abort that does not reach the coordinator is not lost: its back-check finds
  // the same answer. An error from Prepare is returned before local_tx runs.
  Result<Outcome> DoAndSubmit(const std::string& query_prepared_url, Barrier& barrier,
                              const MsgLocalTransaction& local_tx);

  // The prepare and submit body as JSON (for logging and tests).
  std::string ToJson() const;

 private:
  GlobalCall ToCall() const;
  struct Step {
    std::string action;
    std::string payload;
  };
  Status CheckMessage() const;

  CoordinatorLink& link_;
  std::string gid_;
  std::vector<Step> steps_;
  bool concurrent_ = false;
  std::optional<std::chrono::seconds> delay_;
  std::string query_prepared_;  // set by Prepare
  TransOptions options_;
};

}  // namespace settle::sdk
