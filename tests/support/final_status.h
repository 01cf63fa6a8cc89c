#pragma once

#include <chrono>
#include <string>

#include "eventually.h"
#include "json_client.h"

namespace settle::testing {

// A transaction's status as /api/settle/query reports it, or "" if the query fails.
inline std::string StatusOf(JsonClient& c, const std::string& gid) {
  const auto q = c.Get("/api/settle/query?gid=" + gid);
  if (q.status != 200 || !q.json.is_object() || !q.json["transaction"].is_object()) return "";
  return q.json["transaction"]["status"];
}

// Polls until the transaction is succeed or failed, or until `deadline`; returns the last
// status seen.
inline std::string WaitForFinalStatus(JsonClient& c, const std::string& gid,
                                      std::chrono::steady_clock::time_point deadline) {
  std::string status;
  Eventually(
      [&] {
        status = StatusOf(c, gid);
        return status == "succeed" || status == "failed";
      },
      std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()),
      std::chrono::milliseconds(20));
  return status;
}

}  // namespace settle::testing
