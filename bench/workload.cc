#include "workload.h"

#include <nlohmann/json.hpp>

#include "settle/common/http_client_connection.h"

namespace settle::bench {
namespace {

constexpr Duration kTimeout = std::chrono::seconds(60);
constexpr std::size_t kMaxAnswerBytes = 64 * 1024;

// `s` as a JSON string literal.
std::string Quoted(const std::string& s) { return nlohmann::json(s).dump(); }

std::string ParticipantUrl(int port, const std::string& path) {
  return "http://127.0.0.1:" + std::to_string(port) + path;
}

}  // namespace

// One keep-alive connection to a server on 127.0.0.1, reconnecting when the server closed it.
// The same lean client that settled calls participants with, so that the load generator's
// own cost, which shares the machine, stays small.
class Workload::Connection {
 public:
  explicit Connection(int port) : port_(port), host_header_("127.0.0.1:" + std::to_string(port)) {}

  // POSTs `body` (JSON) to `target`; OK on a 200.
  Status Post(const std::string& target, const std::string& body, const std::string& what) {
    std::string head;
    head.reserve(160 + target.size());
    head += "POST ";
    head += target;
    head += " HTTP/1.1\r\nHost: ";
    head += host_header_;
    head += "\r\nContent-Type: application/json\r\nContent-Length: ";
    head += std::to_string(body.size());
    head += "\r\n\r\n";
    HttpClientConnection::Answer answer;
    const bool reused = connection_ != nullptr && connection_->reusable();
    if (reused) answer = connection_->Exchange(head, body, kTimeout, kMaxAnswerBytes);
    // A kept-alive connection that the server closed while it was idle (its keep-alive
    // timeout, e.g. while the direct baseline ran) fails before any answer: send on a new one.
    if (!reused || answer.failure == HttpClientConnection::Failure::kWrite ||
        answer.failure == HttpClientConnection::Failure::kClosed) {
      answer = {};
      connection_ = HttpClientConnection::Connect("127.0.0.1", port_, kTimeout, answer);
      if (connection_ == nullptr) {
        return Status::Unavailable(what + ": " + HttpClientConnection::Describe(answer.failure));
      }
      answer = connection_->Exchange(head, body, kTimeout, kMaxAnswerBytes);
    }
    if (answer.failure != HttpClientConnection::Failure::kNone) {
      connection_.reset();
      return Status::Unavailable(what + ": " + HttpClientConnection::Describe(answer.failure) +
                                 (answer.detail.empty() ? "" : ": " + answer.detail));
    }
    if (answer.status != 200) {
      return Status::Unavailable(what + ": HTTP " + std::to_string(answer.status) + " " +
                                 answer.body.substr(0, 200));
    }
    return Status::Ok();
  }

 private:
  const int port_;
  const std::string host_header_;
  std::unique_ptr<HttpClientConnection> connection_;
};

struct Workload::Connections {
  std::unique_ptr<Connection> coordinator;
  std::unique_ptr<Connection> participant[2];
};

Workload::Workload(const Endpoints& endpoints, Mode mode, int client)
    : endpoints_(endpoints),
      mode_(mode),
      client_(client),
      connections_(std::make_unique<Connections>()) {
  const std::string account = std::to_string(client % endpoints.accounts + 1);
  body_out_ = R"({"account_id":")" + account + R"(","amount":1})";
  body_in_ = body_out_;
  connections_->coordinator = std::make_unique<Connection>(endpoints.coordinator_port);
  connections_->participant[0] = std::make_unique<Connection>(endpoints.participant_a_port);
  connections_->participant[1] = std::make_unique<Connection>(endpoints.participant_b_port);
}

Workload::~Workload() = default;

std::string Workload::GidFor(std::uint64_t n) const {
  return "bench-" + endpoints_.run_id + "-" + std::to_string(client_) + "-" + std::to_string(n);
}

Status Workload::PostParticipant(int which, const std::string& path, const std::string& gid,
                                 const std::string& branch_id, const char* op,
                                 const std::string& body) {
  const std::string target = path + "?gid=" + gid +
                             "&trans_type=" + (mode_ == Mode::kSaga ? "saga" : "tcc") +
                             "&branch_id=" + branch_id + "&op=" + op;
  return connections_->participant[which]->Post(target, body, path);
}

Status Workload::PostCoordinator(const std::string& route, const std::string& body) {
  return connections_->coordinator->Post(endpoints_.api + route, body, route);
}

Status Workload::ThroughCoordinator(std::uint64_t n) {
  const std::string gid = GidFor(n);
  const int a = endpoints_.participant_a_port;
  const int b = endpoints_.participant_b_port;
  if (mode_ == Mode::kSaga) {
    const std::string submit =
        R"({"gid":")" + gid + R"(","trans_type":"saga","wait_result":true,"steps":[)" +
        R"({"action":")" + ParticipantUrl(a, "/api/TransOut") + R"(","compensate":")" +
        ParticipantUrl(a, "/api/TransOutCompensate") + R"("},)" + R"({"action":")" +
        ParticipantUrl(b, "/api/TransIn") + R"(","compensate":")" +
        ParticipantUrl(b, "/api/TransInCompensate") + R"("}],"payloads":[)" + Quoted(body_out_) +
        "," + Quoted(body_in_) + "]}";
    return PostCoordinator("/submit", submit);
  }
  const std::string head = R"({"gid":")" + gid + R"(","trans_type":"tcc")";
  if (Status s = PostCoordinator("/prepare", head + "}"); !s.ok()) return s;
  const struct {
    int which;
    const char* name;
    const std::string& body;
  } branches[] = {{0, "TransOut", body_out_}, {1, "TransIn", body_in_}};
  int branch = 0;
  for (const auto& br : branches) {
    const std::string id = branch++ == 0 ? "01" : "02";
    const int port = br.which == 0 ? a : b;
    const std::string prefix = std::string("/api/") + br.name;
    const std::string registration = head + R"(,"branch_id":")" + id + R"(","data":)" +
                                     Quoted(br.body) + R"(,"confirm":")" +
                                     ParticipantUrl(port, prefix + "Confirm") + R"(","cancel":")" +
                                     ParticipantUrl(port, prefix + "Cancel") + R"("})";
    if (Status s = PostCoordinator("/registerBranch", registration); !s.ok()) return s;
    if (Status s = PostParticipant(br.which, prefix + "Try", gid, id, "try", br.body); !s.ok()) {
      return s;
    }
  }
  return PostCoordinator("/submit", head + R"(,"wait_result":true})");
}

Status Workload::Direct(std::uint64_t n) {
  const std::string gid = GidFor(n);
  if (mode_ == Mode::kSaga) {
    if (Status s = PostParticipant(0, "/api/TransOut", gid, "01", "action", body_out_); !s.ok()) {
      return s;
    }
    return PostParticipant(1, "/api/TransIn", gid, "02", "action", body_in_);
  }
  if (Status s = PostParticipant(0, "/api/TransOutTry", gid, "01", "try", body_out_); !s.ok()) {
    return s;
  }
  if (Status s = PostParticipant(1, "/api/TransInTry", gid, "02", "try", body_in_); !s.ok()) {
    return s;
  }
  if (Status s = PostParticipant(0, "/api/TransOutConfirm", gid, "01", "confirm", body_out_);
      !s.ok()) {
    return s;
  }
  return PostParticipant(1, "/api/TransInConfirm", gid, "02", "confirm", body_in_);
}

}  // namespace settle::bench
