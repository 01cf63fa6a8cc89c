#include "settle/sdk/client.h"

#include <algorithm>
#include <cctype>
#include <exception>
#include <optional>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "global_call_json.h"
#include "settle/core/base64.h"
#include "settle/core/branch_result.h"
#include "settle/core/grpc_target.h"
#include "settle/core/protocol.h"
#include "settle/core/protocol_keys.h"
#include "settle/core/url.h"
#include "settle/net/blocking_client.h"
#include "settle/net/message.h"
#include "settle/net/request_signing.h"

namespace settle::sdk {
namespace {

using nlohmann::json;

using net::DescribeAnswer;
using net::EqualsIgnoreCase;

// Message framing and the connection belong to the transport: a user header could otherwise
// desynchronize a keep-alive connection.
bool IsFramingHeader(std::string_view name) {
  return EqualsIgnoreCase(name, "Content-Length") || EqualsIgnoreCase(name, "Transfer-Encoding") ||
         EqualsIgnoreCase(name, "Connection") || EqualsIgnoreCase(name, "Host");
}

std::optional<json> ParseJson(std::string_view body) {
  json parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return std::nullopt;
  return parsed;
}

// The coordinator's own explanation: the "message" of a JSON answer, or else the answer
// itself, shortened.
std::string MessageOf(int status, const std::string& body) {
  if (auto parsed = ParseJson(body); parsed && parsed->is_object()) {
    auto it = parsed->find("message");
    if (it != parsed->end() && it->is_string() && !it->get<std::string>().empty()) {
      return it->get<std::string>();
    }
  }
  return DescribeAnswer(status, body);
}

// Whether `fields` has one named `name` (any case).
bool NamedIn(const net::Headers& fields, std::string_view name) {
  return std::any_of(fields.begin(), fields.end(),
                     [name](const auto& field) { return EqualsIgnoreCase(field.first, name); });
}

// The route without its query string, for messages.
std::string_view RouteName(std::string_view route) { return route.substr(0, route.find('?')); }

// What the body of a coordinator's answer is: a verdict (the routes that change a
// transaction), or data (newGid, query), which may well contain the words FAILURE and ONGOING
// (a branch's last_error) without being a verdict.
enum class AnswerBody { kVerdict, kData };

// docs/protocol.md §6.4: the one classification of §4.2 (ClassifyBranchResponse), given the
// body only when it is a verdict; what it leaves UNKNOWN is read by its status code.
Status StatusOfAnswer(std::string_view method, std::string_view route, int status,
                      const std::string& body, AnswerBody kind) {
  const std::string_view verdict = kind == AnswerBody::kVerdict ? body : std::string_view();
  switch (ClassifyBranchResponse(status, verdict)) {
    case BranchResult::kSuccess:
      return Status::Ok();
    case BranchResult::kFailure:
      return Status::Conflict(MessageOf(status, body));
    case BranchResult::kOngoing:
      return Status::Pending(MessageOf(status, body));
    case BranchResult::kUnknown:
      break;
  }
  switch (status) {
    case 400:
      return Status::InvalidArgument(MessageOf(status, body));
    case 401:
    case 403:
      // Not retryable, and the caller's to fix: an argument (the token), not an outage.
      return Status::InvalidArgument("coordinator refused credentials (HTTP " +
                                     std::to_string(status) + "): " + MessageOf(status, body));
    default:
      return Status::Unavailable(std::string(method) + " " + std::string(RouteName(route)) + ": " +
                                 DescribeAnswer(status, body));
  }
}

Status NotUnderstood(std::string_view route, const std::string& what) {
  return Status::Unavailable("GET " + std::string(RouteName(route)) +
                             ": answer not understood: " + what);
}

std::string StringOr(const json& object, const char* name, std::string fallback = {}) {
  auto it = object.find(name);
  if (it == object.end() || !it->is_string()) return fallback;
  return it->get<std::string>();
}

Result<TransactionInfo> ParseTransaction(const json& tx, const json& branches) {
  constexpr std::string_view kRoute = "query";
  if (!tx.is_object()) return NotUnderstood(kRoute, "transaction is not an object");
  TransactionInfo info;
  info.gid = StringOr(tx, "gid");
  const std::string trans_type = StringOr(tx, "trans_type");
  const std::string status = StringOr(tx, "status");
  auto parsed_type = ParseTransType(trans_type);
  if (!parsed_type) return NotUnderstood(kRoute, "trans_type \"" + trans_type + "\"");
  auto parsed_status = ParseGlobalStatus(status);
  if (!parsed_status) return NotUnderstood(kRoute, "status \"" + status + "\"");
  info.trans_type = *parsed_type;
  info.status = *parsed_status;
  info.rollback_reason = StringOr(tx, "rollback_reason");
  if (auto it = tx.find("stuck"); it != tx.end() && it->is_boolean()) info.stuck = it->get<bool>();

  if (branches.is_null()) return info;
  if (!branches.is_array()) return NotUnderstood(kRoute, "branches is not an array");
  for (const json& b : branches) {
    if (!b.is_object()) return NotUnderstood(kRoute, "a branch is not an object");
    BranchInfo branch;
    branch.branch_id = StringOr(b, "branch_id");
    branch.url = StringOr(b, "url");
    const std::string op = StringOr(b, "op");
    const std::string branch_status = StringOr(b, "status");
    auto parsed_op = ParseBranchOp(op);
    if (!parsed_op) return NotUnderstood(kRoute, "branch op \"" + op + "\"");
    auto parsed_branch_status = ParseBranchStatus(branch_status);
    if (!parsed_branch_status) {
      return NotUnderstood(kRoute, "branch status \"" + branch_status + "\"");
    }
    branch.op = *parsed_op;
    branch.status = *parsed_branch_status;
    if (auto it = b.find("attempts"); it != b.end() && it->is_number_integer()) {
      branch.attempts = it->get<int>();
    }
    branch.last_error = StringOr(b, "last_error");
    info.branches.push_back(std::move(branch));
  }
  return info;
}

}  // namespace

// The coordinator's address and the client that calls it (and Try URLs).
class Client::Transport {
 public:
  Url base;               // the coordinator's API base
  std::string base_path;  // "/api/settle"; "" for a server at the root
  std::unique_ptr<net::BlockingClient> http;

  // One call to the coordinator: the answer whatever its status, or Unavailable when none
  // came. `trace`: the transaction's trace fields (TraceFields), in place of the options'
  // headers of the same names.
  Result<HttpAnswer> Call(const ClientOptions& options, const char* method, std::string_view route,
                          const std::string& body, const net::Headers& trace = {}) {
    net::ClientRequest request;
    request.method = method;
    request.url = base;
    request.target = base_path + "/" + std::string(route);
    for (const auto& [name, value] : options.headers) {
      if (!NamedIn(trace, name)) request.headers.emplace_back(name, value);
    }
    request.headers.insert(request.headers.end(), trace.begin(), trace.end());
    request.body = body;
    request.timeout = options.timeout;
    if (!body.empty()) {
      auto parsed = ParseJson(body);
      if (parsed && parsed->is_object() && parsed->value("wait_result", json()) == true) {
        request.timeout += kWaitResultAllowance;
      }
    }
    // Every coordinator route of the protocol can be repeated safely: prepare, registerBranch,
    // submit and abort of the same transaction are no-ops the second time.
    request.idempotent = true;
    auto answer = http->Send(std::move(request));
    if (!answer) {
      return Status::Unavailable(std::string(method) + " " + std::string(RouteName(route)) + ": " +
                                 answer.status().message());
    }
    return HttpAnswer{answer->status, std::move(answer->body)};
  }

  // Call, then the protocol's status mapping: the body on SUCCESS, a Status otherwise.
  Result<std::string> CallForBody(const ClientOptions& options, const char* method,
                                  std::string_view route, const std::string& body,
                                  AnswerBody kind = AnswerBody::kVerdict,
                                  const net::Headers& trace = {}) {
    auto answer = Call(options, method, route, body, trace);
    if (!answer) return answer.status();
    if (Status s = StatusOfAnswer(method, route, answer->status, answer->body, kind); !s.ok()) {
      return s;
    }
    return std::move(answer->body);
  }
};

namespace {

// Extra headers a caller may send: valid, and not ones that frame the message.
Status CheckHeaders(const std::map<std::string, std::string>& headers) {
  for (const auto& [name, value] : headers) {
    if (!IsValidHeaderName(name)) {
      return Status::InvalidArgument("headers: \"" + name + "\" is not a header name");
    }
    if (!IsValidHeaderValue(value)) {
      return Status::InvalidArgument("headers." + name + ": must not contain control characters");
    }
    if (IsFramingHeader(name)) {
      return Status::InvalidArgument("headers." + name + ": set by the client itself");
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<Client>> Client::Create(const std::string& server, ClientOptions options) {
  auto url = ParseUrl(server);
  if (!url) {
    return Status::InvalidArgument("server URL '" + server + "' " + url.status().message());
  }
  if (url->path_and_query.find('?') != std::string::npos) {
    return Status::InvalidArgument("server URL '" + server + "' must not have a query");
  }
  if (options.timeout <= std::chrono::milliseconds::zero()) {
    return Status::InvalidArgument("timeout: must be positive");
  }
  if (Status s = CheckHeaders(options.headers); !s.ok()) return s;
  auto http = net::BlockingClient::Create({.ca_file = options.ca_file,
                                           .client_cert_file = options.client_cert_file,
                                           .client_key_file = options.client_key_file});
  if (!http) {
    // The message names the file; say which option gave it.
    const bool ca = http.status().message().find("CA file") != std::string::npos;
    return Status::InvalidArgument((ca ? "ca_file: " : "client_cert_file/client_key_file: ") +
                                   http.status().message());
  }
  auto transport = std::make_unique<Transport>();
  std::string base = url->path_and_query;
  while (!base.empty() && base.back() == '/') base.pop_back();
  transport->base_path = std::move(base);
  transport->base = std::move(*url);
  transport->http = std::move(*http);
  return std::unique_ptr<Client>(new Client(std::move(transport), std::move(options)));
}

Client::Client(std::unique_ptr<Transport> transport, ClientOptions options)
    : transport_(std::move(transport)), options_(std::move(options)) {}

Client::~Client() = default;

Result<std::string> Client::NewGid() {
  constexpr std::string_view kRoute = "newGid";
  auto body = transport_->CallForBody(options_, "GET", kRoute, "", AnswerBody::kData);
  if (!body) return body.status();
  auto parsed = ParseJson(*body);
  if (!parsed || !parsed->is_object()) return NotUnderstood(kRoute, DescribeAnswer(200, *body));
  std::string gid = StringOr(*parsed, "gid");
  if (gid.empty()) return NotUnderstood(kRoute, "no gid in " + DescribeAnswer(200, *body));
  return gid;
}

// Pages of one query answer a client follows at most (a TCC's 2,000 rows at one a page, and
// more).
constexpr int kMaxQueryPages = 10'000;

Result<std::optional<TransactionInfo>> Client::Query(const std::string& gid) {
  const std::string route = "query?gid=" + PercentEncode(gid);
  auto body = transport_->CallForBody(options_, "GET", route, "", AnswerBody::kData);
  if (!body) return body.status();
  auto parsed = ParseJson(*body);
  if (!parsed || !parsed->is_object() || !parsed->contains("transaction")) {
    return NotUnderstood(route, DescribeAnswer(200, *body));
  }
  const json& tx = (*parsed)["transaction"];
  if (tx.is_null()) return std::optional<TransactionInfo>();
  json branches = parsed->value("branches", json());
  // An answer over the coordinator's --max-answer-bytes is cut into pages (docs/protocol.md
  // §3.9): the rest of the branches follow from next_position.
  std::string next = StringOr(*parsed, "next_position");
  for (int page = 0; !next.empty(); ++page) {
    if (page >= kMaxQueryPages || !branches.is_array()) {
      return NotUnderstood(route, "more than " + std::to_string(kMaxQueryPages) + " pages");
    }
    const std::string more = route + "&position=" + PercentEncode(next);
    auto page_body = transport_->CallForBody(options_, "GET", more, "", AnswerBody::kData);
    if (!page_body) return page_body.status();
    auto page_json = ParseJson(*page_body);
    if (!page_json || !page_json->is_object() || !(*page_json)["branches"].is_array()) {
      return NotUnderstood(more, DescribeAnswer(200, *page_body));
    }
    for (json& branch : (*page_json)["branches"]) branches.push_back(std::move(branch));
    next = StringOr(*page_json, "next_position");
  }
  auto info = ParseTransaction(tx, branches);
  if (!info) return info.status();
  return std::optional<TransactionInfo>(std::move(*info));
}

Result<std::string> Client::Post(const std::string& route, const std::string& json_body) {
  std::string_view name = route;
  while (!name.empty() && name.front() == '/') name.remove_prefix(1);
  return transport_->CallForBody(options_, "POST", name, json_body);
}

Result<Client::HttpAnswer> Client::CallUrl(const std::string& url, const std::string& body,
                                           std::chrono::milliseconds timeout,
                                           const std::map<std::string, std::string>& headers) {
  auto parsed = ParseUrl(url);
  if (!parsed) return Status::InvalidArgument("URL '" + url + "' " + parsed.status().message());
  if (Status s = CheckHeaders(headers); !s.ok()) return s;
  net::ClientRequest request;
  request.method = body.empty() ? "GET" : "POST";
  request.url = std::move(*parsed);
  request.headers.assign(headers.begin(), headers.end());
  request.body = body;
  request.timeout = timeout;
  // A participant's handlers are idempotent (docs/protocol.md §5, the barrier of §6.3).
  request.idempotent = true;
  if (options_.signing_key) {
    const SystemClock clock;
    if (Status s =
            net::SignRequest(request, *options_.signing_key, ToUnixMillis(clock.Now()) / 1000);
        !s.ok()) {
      return Status::InvalidArgument("signing the call: " + s.message());
    }
  }
  const std::string method = request.method;
  auto answer = transport_->http->Send(std::move(request));
  if (!answer) return Status::Unavailable(method + " " + url + ": " + answer.status().message());
  return HttpAnswer{answer->status, std::move(answer->body)};
}

namespace {

std::string_view RouteOf(GlobalOp op) {
  switch (op) {
    case GlobalOp::kPrepare:
      return "prepare";
    case GlobalOp::kSubmit:
      return "submit";
    case GlobalOp::kAbort:
      break;
  }
  return "abort";
}

}  // namespace

Result<std::string> Client::Send(GlobalOp op, const GlobalCall& call) {
  return transport_->CallForBody(options_, "POST", RouteOf(op), GlobalCallJson(call),
                                 AnswerBody::kVerdict,
                                 TraceFields(call.options.traceparent, call.options.tracestate));
}

Result<RegisteredBranch> Client::RegisterBranch(const BranchRegistration& branch) {
  auto answer = transport_->CallForBody(options_, "POST", "registerBranch",
                                        RegistrationJson(branch), AnswerBody::kVerdict,
                                        TraceFields(branch.traceparent, branch.tracestate));
  if (!answer) return answer.status();
  // {"dtm_result":"SUCCESS"}, and settled's countersignature of the Try when it gave one.
  RegisteredBranch registered;
  auto parsed = ParseJson(*answer);
  if (parsed && parsed->is_object()) {
    const auto fields = parsed->find(std::string(kTrySignatureMember));
    if (fields != parsed->end() && fields->is_object()) {
      for (const auto& [name, value] : fields->items()) {
        if (!value.is_string()) continue;
        registered.try_signature.emplace_back(name, value.get<std::string>());
      }
    }
  }
  return registered;
}

Result<WorkflowState> Client::PrepareWorkflow(const GlobalCall& call) {
  constexpr std::string_view kRoute = "prepareWorkflow";
  // Data: a reason or a step's bytes may spell FAILURE.
  auto body =
      transport_->CallForBody(options_, "POST", kRoute, GlobalCallJson(call), AnswerBody::kData,
                              TraceFields(call.options.traceparent, call.options.tracestate));
  if (!body) return body.status();
  auto parsed = ParseJson(*body);
  if (!parsed || !parsed->is_object() || !(*parsed)["transaction"].is_object() ||
      !(*parsed)["progresses"].is_array()) {
    return NotUnderstood(kRoute, DescribeAnswer(200, *body));
  }
  const json& tx = (*parsed)["transaction"];
  WorkflowState state;
  const auto status = ParseGlobalStatus(StringOr(tx, "status"));
  if (!status) return NotUnderstood(kRoute, "status \"" + StringOr(tx, "status") + "\"");
  state.status = *status;
  state.rollback_reason = StringOr(tx, "rollback_reason");
  auto result = Base64Decode(StringOr(tx, "result"));
  if (!result) return NotUnderstood(kRoute, "result is not base64");
  state.result = std::move(*result);
  for (const json& p : (*parsed)["progresses"]) {
    if (!p.is_object()) return NotUnderstood(kRoute, "a progress is not an object");
    auto data = Base64Decode(StringOr(p, "bin_data"));
    if (!data) return NotUnderstood(kRoute, "a progress's bin_data is not base64");
    state.progresses.push_back(StepProgress{StringOr(p, "branch_id"), StringOr(p, "op"),
                                            StringOr(p, "status"), std::move(*data)});
  }
  return state;
}

Status Client::CheckOwnBranchUrl(const std::string& url) const {
  auto parsed = ParseUrl(url);
  if (parsed) {
    // The initiator appends these itself (CallBranch), and settled refuses them in a phase-2
    // URL: a second value would be the one a participant reads.
    if (const auto key = ProtocolKeyInQuery(url)) {
      return Status::InvalidArgument("'" + url + "' names \"" + std::string(*key) +
                                     "\" in its query, which the protocol sets itself");
    }
    return Status::Ok();
  }
  if (LooksLikeGrpcTarget(url) && ParseGrpcTarget(url)) {
    return Status::InvalidArgument(
        "'" + url +
        "' is a gRPC method: the HTTP client calls http(s):// URLs only; start the transaction "
        "with the gRPC client (settle/sdk/grpc_client.h) to call it");
  }
  return Status::InvalidArgument("'" + url + "' " + parsed.status().message());
}

Result<BranchAnswer> Client::CallBranch(const OwnBranchCall& call) {
  if (Status s = CheckOwnBranchUrl(call.url); !s.ok()) return s;
  const Url url = *ParseUrl(call.url);
  std::vector<std::pair<std::string, std::string>> query = {{"gid", call.gid},
                                                            {"trans_type", call.trans_type},
                                                            {"branch_id", call.branch_id},
                                                            {"op", call.op}};
  query.insert(query.end(), call.extra.begin(), call.extra.end());
  std::map<std::string, std::string> headers = call.headers;
  // settled's countersignature, unless this client signs its own calls (CallUrl would replace
  // it anyway).
  if (!options_.signing_key) {
    for (const auto& [name, value] : call.signature) headers[name] = value;
  }
  // docs/protocol.md §6.1: the protocol's words as query parameters, after the URL's own,
  // appended exactly as settled appends them to its calls (and countersigns a Try).
  auto answer = CallUrl(url.Origin() + url.TargetWith(query), call.body, call.timeout, headers);
  if (!answer) return answer.status();
  BranchAnswer out;
  out.result = ClassifyBranchResponse(answer->status, answer->body);
  out.description = DescribeAnswer(answer->status, answer->body);
  out.body = std::move(answer->body);
  return out;
}

}  // namespace settle::sdk
