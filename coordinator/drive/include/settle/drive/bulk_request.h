#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "settle/core/status.h"
#include "settle/storage/store.h"

namespace settle::drive {

// What an operator's bulk action does to each transaction it matches (docs/operations.md,
// "Bulk actions"): one of the admin API's actions on one transaction.
enum class BulkAction { kRetryNow, kPause, kResume, kForceStop, kRedirect };

// "retry_now", "pause", "resume", "force_stop", "redirect": the audit trail's names.
std::string_view ToString(BulkAction action);
std::optional<BulkAction> ParseBulkAction(std::string_view name);

// A bulk action as an operator asks for it.
struct BulkRequest {
  BulkAction action = BulkAction::kRetryNow;
  // Which transactions: /all's filters (ListQuery; its limit and before_id are not used).
  storage::ListQuery filter;
  // An empty filter matches every transaction: refused unless `all` says that is meant.
  bool all = false;
  // A redirect's hosts: every pending call on origin `from` goes to the same path on `to`.
  // Origins as UrlOrigin (core/url_origin.h) gives them ("http://bank:8080"); CheckBulkRequest
  // normalises them and makes `from` the filter's host.
  std::string from;
  std::string to;
  std::string actor;
  std::string reason;
};

// Checks an operator's bulk request, InvalidArgument naming the field (a dry run's too: the
// reason a job needs is BulkJobs::Start's to check): the filter (empty without `all`: "filter:
// empty ..."), a redirect's `from` and `to` (each a participant host; an http(s) host goes to an
// http(s) host and a gRPC one to a gRPC one, and not to itself). Normalises `from` and `to` and
// sets the filter's host to `from`.
Status CheckBulkRequest(BulkRequest& request);

// Whether a filter names no transaction in particular (it matches every one).
bool FilterIsEmpty(const storage::ListQuery& filter);

// The filter as a job stores it: a JSON object of the ListQuery's search fields (status,
// trans_type, stuck, paused, gid_prefix, create_time_start and create_time_end as Unix
// milliseconds, host), and back. DecodeFilter refuses (InvalidArgument) what EncodeFilter
// would not write.
std::string EncodeFilter(const storage::ListQuery& filter);
Result<storage::ListQuery> DecodeFilter(std::string_view json);

// A job's parameters ("{}", or a redirect's {"from", "to"}), and back into `request`.
std::string EncodeParameters(const BulkRequest& request);
Status DecodeParameters(std::string_view json, BulkRequest& request);

// `url` moved from origin `from` to origin `to`: `to` followed by what follows the url's host
// and port (its path and query), written in the url's own form (a gRPC target without a scheme
// keeps none). nullopt when the url is not on `from` (UrlOrigin).
std::optional<std::string> RebaseUrl(const std::string& url, const std::string& from,
                                     const std::string& to);

}  // namespace settle::drive
