#pragma once

#include <cstddef>
#include <string>

#include "settle/coordinator/api_server.h"
#include "settle/coordinator/coordinator.h"
#include "settle/coordinator/instance_lease.h"
#include "settle/coordinator/retention.h"
#include "settle/coordinator/retry_policy.h"
#include "settle/storage/sqlite_store.h"

namespace settle::coordinator {

// Everything settled is configured with; the command line fills it in.
struct ServerConfig {
  std::string host = "127.0.0.1";
  int port = 36789;
  std::string db_path = "./data/settle.db";
  storage::SqliteStoreOptions store;
  // With a shared (PostgreSQL) store: this instance's lease. An empty instance_id is replaced
  // by "<hostname>-<pid>" at start.
  InstanceLeaseSettings lease;
  CoordinatorSettings coordinator;
  RetrySettings retry;
  std::size_t workers = 64;  // transaction passes and branch calls in flight at once
  ApiServerOptions api;
  RetentionSettings retention;
  std::string alert_webhook;  // empty: no alerts
  Duration shutdown_grace{10000};  // how long in-flight branch calls may finish on shutdown
  std::string log_level = "info";
};

}  // namespace settle::coordinator
