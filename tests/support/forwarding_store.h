#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "settle/storage/store.h"

namespace settle::testing {

// A Store that hands every call to another one: the base of the test stores that change one
// thing (fail commits, queue them). CommitAsync is left to Store's default, which commits on
// the calling thread; a subclass that wants the inner store's own overrides it.
class ForwardingStore : public storage::Store {
 public:
  explicit ForwardingStore(storage::Store& inner) : inner_(inner) {}

  Status Commit(const storage::WriteBatch& batch) override { return inner_.Commit(batch); }
  Result<std::optional<storage::Transaction>> Load(const std::string& gid) override {
    return inner_.Load(gid);
  }
  Result<storage::ListPage> List(const storage::ListQuery& query) override {
    return inner_.List(query);
  }
  Result<std::vector<storage::DueEntry>> ListUnfinished() override {
    return inner_.ListUnfinished();
  }
  Result<std::vector<storage::UnfinishedCount>> CountUnfinished() override {
    return inner_.CountUnfinished();
  }
  Result<std::vector<storage::CreatorUsage>> UnfinishedUsage(
      const std::optional<std::string>& creator) override {
    return inner_.UnfinishedUsage(creator);
  }
  Result<std::vector<std::string>> ListFinishedBefore(TimePoint cutoff,
                                                      std::size_t limit) override {
    return inner_.ListFinishedBefore(cutoff, limit);
  }
  Result<std::vector<storage::UndoneRollback>> ListUndoneRollbacks(TimePoint finished_since,
                                                                   std::int64_t after_id,
                                                                   std::size_t limit) override {
    return inner_.ListUndoneRollbacks(finished_since, after_id, limit);
  }
  Result<std::vector<storage::Subscriber>> Subscribers(const std::string& topic) override {
    return inner_.Subscribers(topic);
  }
  Result<std::vector<storage::Topic>> ListTopics() override { return inner_.ListTopics(); }
  Result<storage::AuditPage> ListAudit(const storage::AuditQuery& query) override {
    return inner_.ListAudit(query);
  }
  Result<std::optional<storage::BulkJob>> LoadJob(const std::string& id) override {
    return inner_.LoadJob(id);
  }
  Result<std::vector<storage::BulkJob>> ListJobs(std::size_t limit, bool running_only) override {
    return inner_.ListJobs(limit, running_only);
  }
  storage::StoreStats Stats() const override { return inner_.Stats(); }

 protected:
  storage::Store& inner() { return inner_; }

 private:
  storage::Store& inner_;
};

}  // namespace settle::testing
