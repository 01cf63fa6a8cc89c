#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "settle/api/api_server.h"
#include "settle/app/retention.h"
#include "settle/core/build_info.h"
#include "settle/drive/coordinator.h"
#include "settle/drive/instance_lease.h"
#include "settle/engine/host_gate.h"
#include "settle/engine/retry_policy.h"
#include "settle/signing/keys.h"
#include "settle/storage/sqlite_store.h"

namespace settle::app {

// Everything settled is configured with; the command line fills it in.
// DTM's gRPC API (docs/protocol.md §10), on the same host as the HTTP API, with its TLS files,
// tokens and body limit.
struct GrpcSettings {
  bool enabled = true;  // --grpc-port 0 turns it off
  int port = 36790;     // 0 with enabled: any free port (tests)
  // What bounds its clients (grpc_api::GrpcServerOptions says how; docs/operations.md,
  // "Hostile clients"): connections in all (--grpc-max-connections: the descriptors the port
  // may take) and from one address (--grpc-max-connections-per-peer, 0: no cap of its own),
  // the wait for a call's request message (--grpc-first-message-timeout), and its memory
  // (--grpc-memory-limit).
  std::size_t max_connections = 1000;
  std::size_t max_connections_per_peer = 100;
  Duration first_message_timeout{10000};
  std::size_t memory_limit_bytes = std::size_t{256} << 20;
};

struct ServerConfig {
  std::string host = "127.0.0.1";
  int port = 36789;
  GrpcSettings grpc;
  std::string db_path = "./data/settle.db";
  storage::SqliteStoreOptions store;
  // With a shared (PostgreSQL) store: this instance's lease. An empty instance_id is replaced
  // by "<hostname>-<pid>" at start.
  drive::InstanceLeaseSettings lease;
  // With a shared store: how far this host's clock may be from the database's before it is
  // logged, and before the instance stops claiming transactions (--max-clock-skew).
  drive::ClockSkewSettings clock_skew;
  drive::CoordinatorSettings coordinator;
  engine::RetrySettings retry;
  // The gate of every participant host: its circuit (--circuit-failures 0: none), its cap on
  // calls in flight, the pace of releases after an outage.
  engine::HostGateSettings hosts;
  // Threads that run every socket, timer and coroutine (the API, passes, branch calls).
  // 0: one per core.
  std::size_t io_threads = 0;
  // Transaction passes the scheduler runs at once (each may hold connections to participants).
  std::size_t max_passes = drive::Scheduler::kDefaultMaxPasses;
  // Transactions a bulk job acts on per second, at most (--bulk-rate; 0: no limit): a job over
  // many transactions leaves the database to the traffic it shares it with.
  std::size_t bulk_rate = 200;
  // https:// participants and webhooks are verified against this CA file (PEM); empty: the
  // system's CA store.
  std::string ca_file;
  // A client certificate chain and its key (PEM) that settled presents on its outbound
  // https:// calls (branch calls, webhook alerts) to participants that ask for one (mutual
  // TLS; --tls-client-cert, --tls-client-key). Both or neither. The client CA and the
  // subject map of settled's own API are api.tls.client_ca_file and api.client_certificates.
  std::string tls_client_cert;
  std::string tls_client_key;
  // With a key, every call to a participant is signed (--signing-key; docs/protocol.md §4.9).
  std::optional<signing::SigningKey> signing_key;
  std::string signing_key_file;     // where signing_key was read from, for the startup log
  bool unsigned_authority = false;  // the signature leaves the Host out
  api::ApiServerOptions api;
  // Whether --max-connections and --max-connections-per-peer were given (on the command line
  // or in --config): a given cap that does not fit the descriptors stops settled at start,
  // a default one is lowered (descriptor_budget.h).
  bool max_connections_given = false;
  bool max_connections_per_peer_given = false;
  bool grpc_max_connections_given = false;  // --grpc-max-connections, likewise
  // Requests a second per caller on the HTTP and gRPC APIs together (--rate-limit; off: 0).
  api::RateLimit rate_limit;
  RetentionSettings retention;
  std::string alert_webhook;  // empty: no alerts
  // Alerts about one creator's transactions per minute, at most (--alerts-per-creator; 0: no
  // limit): app/alert_budget.h.
  std::size_t alerts_per_creator = 60;
  // OpenTelemetry spans (docs/operations.md "Tracing with OpenTelemetry"): the OTLP/HTTP
  // traces URL spans are posted to (from --otlp-endpoint, a base URL; empty: no export), the
  // headers sent with them, and the service name they report.
  std::string otlp_traces_url;
  std::vector<std::pair<std::string, std::string>> otlp_headers;
  std::string otlp_service_name = "settled";
  std::size_t otlp_queue = 4096;   // spans waiting beyond this are dropped (counted)
  Duration shutdown_grace{10000};  // how long in-flight branch calls may finish on shutdown
  std::string log_level = "info";
  std::string log_format = "text";  // or "json" (log_format.h)
  // What this binary was built from: reported by --version, the startup log and
  // settle_build_info (main sets ThisBuild()).
  BuildInfo build;
};

}  // namespace settle::app
