#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "settle/core/clock.h"
#include "settle/core/status.h"
#include "settle/storage/records.h"
#include "settle/storage/store.h"

namespace settle::drive {

// How much a caller may hold in unfinished transactions (docs/operations.md, "Quotas").
// 0: no limit.
// The defaults are settled's: generous, so that no setup that worked before quotas is refused.
struct QuotaLimits {
  std::size_t unfinished = 100'000;  // --quota-unfinished
  std::size_t bytes = 1ull << 30;    // --quota-unfinished-bytes (1 GiB)
};

// Which quota refused a request, for the metrics.
enum class QuotaKind { kUnfinished, kBytes };

// What each caller holds in unfinished transactions, as the coordinator counts it between
// reads of the store, and the admission of new holdings against QuotaLimits.
//
// The store is the truth (Store::UnfinishedUsage): the ledger starts from it (Reset) and adds
// what this coordinator admits. It never subtracts: a transaction that finishes, here or on
// another instance, leaves the count high, so the count is never below what the store holds
// plus what is being stored. A reservation the count would refuse is decided by the store's
// numbers instead: Admit answers nullopt, the coordinator reads the caller's usage and hands it
// to Refresh, and Admit decides from it. So a caller is refused only when the store (plus what
// is being stored) says it holds its quota; a caller that keeps refusing reads the store at most
// once per `refresh_interval` (its refusals in between are answered from the count).
//
// Thread-safety: every method from any thread (one mutex).
class QuotaLedger {
 public:
  QuotaLedger(QuotaLimits limits, const Clock& clock, Duration refresh_interval = Duration(1000));

  bool enabled() const { return limits_.unfinished > 0 || limits_.bytes > 0; }
  const QuotaLimits& limits() const { return limits_; }

  // Replaces every count with the store's (at start).
  void Reset(const std::vector<storage::CreatorUsage>& usage);

  // What Admit decided.
  struct Admission {
    enum class Outcome {
      kAdmitted,   // reserved: Settle it
      kRefused,    // over `kind`'s limit, by the store's numbers of lately
      kReadStore,  // over a limit as counted, and the store not read lately: Refresh, ask again
    };
    Outcome outcome = Outcome::kAdmitted;
    QuotaKind kind = QuotaKind::kUnfinished;
  };
  // Reserves `count` more transactions and `bytes` more bytes for `creator`.
  Admission Admit(const std::string& creator, std::size_t count, std::size_t bytes);

  // The caller's usage as the store holds it now (nullopt: it holds nothing).
  void Refresh(const std::string& creator, const std::optional<storage::CreatorUsage>& stored);

  // Ends a reservation: `stored` when its rows were committed (they then count as held).
  void Settle(const std::string& creator, std::size_t count, std::size_t bytes, bool stored);

  // What the ledger counts for `creator` (held and being stored), for tests and logs.
  storage::CreatorUsage UsageOf(const std::string& creator) const;

  // The bytes a quota counts for new rows, as Store::UnfinishedUsage counts them once stored:
  // each branch row's url, each body once however many rows share it, and (when `global` is
  // given) its options as stored and its span (trace: the ids and the tracestate, at most
  // about 570 bytes; the store counts its traceparent, a few bytes more).
  static std::size_t BytesOf(const storage::GlobalRecord* global,
                             const std::vector<storage::BranchRecord>& branches);

 private:
  struct Held {
    std::size_t unfinished = 0;
    std::size_t bytes = 0;
    std::size_t pending_unfinished = 0;  // reserved, not yet settled
    std::size_t pending_bytes = 0;
    std::optional<MonoTime> refreshed;
  };
  // The quota the reservation would exceed, if any.
  std::optional<QuotaKind> Exceeds(const Held& held, std::size_t count, std::size_t bytes) const;

  const QuotaLimits limits_;
  const Clock& clock_;
  const Duration refresh_interval_;
  mutable std::mutex mutex_;
  std::map<std::string, Held> held_;  // guarded by mutex_
};

// "quota: ..." naming the flag, as a refusal says it.
Status QuotaRefusal(QuotaKind kind, const QuotaLimits& limits);

}  // namespace settle::drive
