#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "settle/sdk/barrier.h"
#include "settle/sdk/participant.h"
#include "settle/sdk/sqlite_barrier_store.h"

namespace settle::testing {

// A bank participant built on the SDK alone: accounts "1".."n" in its own SQLite file, every
// branch handler guarded by the barrier. Body of every call: {"account_id":"1","amount":30}.
//   TCC:  /TransOutTry (balance -> frozen; 409 when short), /TransOutConfirm (frozen -> gone),
//         /TransOutCancel (frozen -> balance), /TransInTry (nothing to reserve),
//         /TransInConfirm (credit), /TransInCancel (nothing to undo).
//   saga: /TransOut (debit; 409 when short), /TransOutCompensate, /TransIn (credit; 409 for
//         an unknown account), /TransInCompensate.
class SdkBank {
 public:
  // `options` configure its Participant (signed calls, TLS); with a certificate, Url is https.
  SdkBank(const std::string& db_path, int accounts, std::int64_t balance,
          sdk::ParticipantOptions options = {});
  ~SdkBank();

  std::string Url(const std::string& path) const;
  int port() const { return port_; }
  std::int64_t Balance(const std::string& account);
  std::int64_t Frozen(const std::string& account);
  std::int64_t Total();        // balance plus frozen over every account
  std::int64_t BarrierRows();  // what the barrier has recorded, for every gid
  const sdk::Participant& participant() const { return participant_; }
  // The handler its routes use, to mount elsewhere (a GrpcBranchServer's methods): moves
  // `balance_delta` and `frozen_delta` times the body's amount on the body's account, in the
  // barrier (409 for an unknown account or a move below zero).
  sdk::BranchHandler Handler(std::int64_t balance_delta, std::int64_t frozen_delta);

 private:
  std::int64_t Read(const std::string& sql);

  SystemClock clock_;
  std::unique_ptr<sdk::SqliteBarrierStore> store_;
  std::unique_ptr<sdk::Barrier> barrier_;
  sdk::Participant participant_;
  std::string scheme_;
  int port_ = 0;
};

}  // namespace settle::testing
