// The reads that may load much: GET topics, query and all. Each waits for one of ReadSlots'
// slots, answers at most --max-answer-bytes a page, shows what its caller may see, and hands
// the memory of a large one back to the system once it is answered.
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "api_server_impl.h"
#include "returned_memory.h"
#include "settle/api/request_parser.h"

namespace settle::api {
namespace {

// A read that loaded this much gives the freed memory back to the system when it is done.
constexpr std::size_t kLargeReadBytes = std::size_t{8} << 20;

constexpr const char* kBodiesRefused =
    "payloads: branch bodies are shown to admin tokens and to the client that created the "
    "transaction, not to a read-only token";

// Bytes a read loaded, roughly: what its records' strings hold.
std::size_t LoadedBytes(const std::optional<storage::Transaction>& tx) {
  if (!tx) return 0;
  std::size_t bytes = 0;
  for (const storage::BranchRecord& b : tx->branches) {
    bytes += b.data.size() + b.url.size() + b.last_error.size();
  }
  return bytes;
}
std::size_t LoadedBytes(const storage::ListPage& page) {
  std::size_t bytes = 0;
  for (const storage::GlobalRecord& g : page.transactions) {
    bytes += g.options.custom_data.size() + g.rollback_reason.size();
    for (const auto& [name, value] : g.options.branch_headers) bytes += name.size() + value.size();
  }
  return bytes;
}
std::size_t LoadedBytes(const std::vector<storage::Topic>& topics) {
  std::size_t bytes = 0;
  for (const storage::Topic& t : topics) {
    for (const storage::Subscriber& s : t.subscribers) bytes += s.url.size() + s.remark.size();
  }
  return bytes;
}

}  // namespace

template <typename Loaded>
void ApiServer::Impl::ReleaseLargeRead(Loaded loaded, std::size_t answer_bytes) {
  const std::size_t bytes = LoadedBytes(loaded) + answer_bytes;
  { Loaded gone = std::move(loaded); }
  if (bytes >= kLargeReadBytes) ReturnFreedMemory();
}

// The reads that may load much: topics, query and all.
void ApiServer::Impl::RegisterReadRoutes() {
  drive::Coordinator& c = coordinator;
  // The reads that may load much: one of ReadSlots' slots each while they build their answer,
  // capped by --max-answer-bytes, and the memory of a large one handed back to the system.
  // Each answers what its caller may see (engine/ownership.h).
  AddApiRoute("GET", "/topics", Access::kRead,
              CallerRouteHandler([this, &c](net::Request& req,
                                            const Caller& caller) -> asio::awaitable<HttpAnswer> {
                auto position = ParseTopicsPosition(req.params);
                if (!position) co_return ToHttpAnswer(position.status());
                ReadSlots::Slot slot = co_await read_slots.Take();
                auto topics = co_await c.Topics(RequesterOf(caller));
                if (!topics) co_return ToHttpAnswer(topics.status());
                HttpAnswer answer =
                    JsonAnswer(TopicsResponseBody(*topics, *position, options.max_answer_bytes));
                ReleaseLargeRead(std::move(*topics), answer.body.size());
                co_return answer;
              }));
  AddApiRoute("GET", "/query", Access::kRead,
              CallerRouteHandler([this, &c](net::Request& req,
                                            const Caller& caller) -> asio::awaitable<HttpAnswer> {
                auto gid = ParseQueryGid(req.params);
                if (!gid) co_return ToHttpAnswer(gid.status());
                auto payloads = ParseQueryPayloads(req.params);
                if (!payloads) co_return ToHttpAnswer(payloads.status());
                auto position = ParseQueryPosition(req.params);
                if (!position) co_return ToHttpAnswer(position.status());
                const Secrets secrets = SecretsFor(caller);
                if (*payloads && secrets == Secrets::kHidden) {
                  co_return HttpAnswer{403, MessageBody(kBodiesRefused)};
                }
                ReadSlots::Slot slot = co_await read_slots.Take();
                auto tx = co_await c.Query(*gid, RequesterOf(caller));
                if (!tx) co_return ToHttpAnswer(tx.status());
                // Operators see what operators did to it (a client sees its own transactions,
                // not who on the operators' side acted on them), on the first page only.
                std::optional<storage::AuditPage> audit;
                if (tx->has_value() && ShowsAudit(caller) && *position == 0) {
                  storage::AuditQuery of_gid;
                  of_gid.gid = *gid;
                  auto read = co_await c.ListAudit(std::move(of_gid));
                  if (!read) co_return ToHttpAnswer(read.status());
                  audit = std::move(*read);
                }
                HttpAnswer answer = JsonAnswer(
                    QueryResponseBody(*tx, *payloads, *position, options.max_answer_bytes, hosts,
                                      secrets, audit ? &audit->entries : nullptr));
                ReleaseLargeRead(std::move(*tx), answer.body.size());
                co_return answer;
              }));
  AddApiRoute("GET", "/all", Access::kRead,
              CallerRouteHandler([this, &c](net::Request& req,
                                            const Caller& caller) -> asio::awaitable<HttpAnswer> {
                auto query = ParseListQuery(req.params);
                if (!query) co_return ToHttpAnswer(query.status());
                ReadSlots::Slot slot = co_await read_slots.Take();
                auto page = co_await c.List(*query, RequesterOf(caller));
                if (!page) co_return ToHttpAnswer(page.status());
                HttpAnswer answer = JsonAnswer(
                    ListResponseBody(*page, options.max_answer_bytes, hosts, SecretsFor(caller)));
                ReleaseLargeRead(std::move(*page), answer.body.size());
                co_return answer;
              }));
}

}  // namespace settle::api
