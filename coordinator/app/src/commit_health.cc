#include "settle/app/commit_health.h"

#include "settle/core/duration_text.h"

namespace settle::app {

std::optional<CommitHealth::Change> CommitHealth::Observe(const storage::StoreStats& stats,
                                                          TimePoint now) {
  if (!seen_) {
    seen_ = true;
    commits_ = stats.commits;
    failed_ = stats.failed_commits;
    return std::nullopt;
  }
  const bool new_failures = stats.failed_commits > failed_;
  const bool new_commits = stats.commits > commits_;
  std::optional<Change> change;
  if (!failing_ && new_failures) {
    failing_ = true;
    failed_before_streak_ = failed_;
    since_ = now;
    change = Change{true, "the store's commits fail: " + stats.last_commit_failure +
                              "; every change is refused (503) until a commit works again "
                              "(said when it does; settle_store_failed_commits_total counts)"};
  } else if (failing_ && new_commits && !new_failures) {
    failing_ = false;
    const auto lasted = std::chrono::duration_cast<Duration>(now - since_);
    change = Change{false, "the store's commits work again, after " +
                               std::to_string(stats.failed_commits - failed_before_streak_) +
                               " failed in " + FormatDuration(lasted)};
  }
  commits_ = stats.commits;
  failed_ = stats.failed_commits;
  return change;
}

}  // namespace settle::app
