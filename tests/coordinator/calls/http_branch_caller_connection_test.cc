// How HttpBranchCaller connects: host names, keep-alive reuse, and connections that
// participants close.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <string>
#include <thread>

#include "participant_server.h"
#include "settle/calls/http_branch_caller.h"
#include "sync_branch_caller.h"

namespace settle::calls {
namespace {

using settle::testing::ParticipantServer;
using settle::testing::ReceivedCall;

engine::BranchCall GetCall(const std::string& url) {
  engine::BranchCall call;
  call.gid = "gid-1";
  call.branch_id = "01";
  call.url = url;
  return call;
}

// A participant on bare sockets, for what the project's own server cannot be told to do: close a
// keep-alive connection at a chosen moment. It serves one connection at a time and answers
// the first request on each with 200 SUCCESS, keeping the connection open; then, by `mode`,
// it closes the connection at once, or waits for the next request on it and closes without
// answering (the participant's idle timeout firing just as the caller reuses the connection).
class ClosingParticipant {
 public:
  enum class Mode { kCloseAfterAnswer, kCloseOnNextRequest };

  // `answer`: the bytes sent for each request (by default a 200 SUCCESS with Content-Length).
  explicit ClosingParticipant(Mode mode, std::string answer = "") : mode_(mode), answer_(answer) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(listen_fd_ >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
    REQUIRE(listen(listen_fd_, 16) == 0);
    socklen_t len = sizeof(addr);
    REQUIRE(getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    port_ = ntohs(addr.sin_port);
    REQUIRE(pipe(wake_) == 0);
    thread_ = std::thread([this] { Serve(); });
  }

  ~ClosingParticipant() {
    const char byte = 0;
    (void)!write(wake_[1], &byte, 1);
    thread_.join();
    close(listen_fd_);
    close(wake_[0]);
    close(wake_[1]);
  }

  std::string Url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  int connections() const { return connections_; }
  int requests() const { return requests_; }

 private:
  // False when the participant is being destroyed.
  bool WaitReadable(int fd) {
    pollfd fds[2] = {{fd, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    while (poll(fds, 2, -1) < 0) {
    }
    return (fds[1].revents & POLLIN) == 0;
  }

  // Reads one request head (the caller sends GETs without a body). False when the connection
  // closed first or the participant is being destroyed.
  bool ReadRequest(int fd) {
    std::string head;
    while (head.find("\r\n\r\n") == std::string::npos) {
      if (!WaitReadable(fd)) return false;
      char buffer[4096];
      const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
      if (n <= 0) return false;
      head.append(buffer, static_cast<std::size_t>(n));
    }
    ++requests_;
    return true;
  }

  void Serve() {
    const std::string body = R"({"dtm_result":"SUCCESS"})";
    const std::string answer = !answer_.empty()
                                   ? answer_
                                   : "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                     "Content-Length: " +
                                         std::to_string(body.size()) + "\r\n\r\n" + body;
    while (WaitReadable(listen_fd_)) {
      const int fd = accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) continue;
      ++connections_;
      if (ReadRequest(fd)) {
        (void)!send(fd, answer.data(), answer.size(), MSG_NOSIGNAL);
        if (mode_ == Mode::kCloseOnNextRequest) ReadRequest(fd);
      }
      close(fd);
    }
  }

  const Mode mode_;
  const std::string answer_;
  int listen_fd_ = -1;
  int port_ = 0;
  int wake_[2] = {-1, -1};
  std::atomic<int> connections_{0};
  std::atomic<int> requests_{0};
  std::thread thread_;
};

TEST_CASE("localhost reaches a participant that listens only on 127.0.0.1",
          "[coordinator][http_branch_caller]") {
  ParticipantServer participant;  // bound to 127.0.0.1 only
  testing::SyncBranchCaller caller;

  const engine::BranchOutcome outcome =
      caller.Call(GetCall("http://localhost:" + std::to_string(participant.port()) + "/confirm"));

  CHECK(outcome.result == BranchResult::kSuccess);
  CHECK(participant.CountCalls("/confirm") == 1);
}

TEST_CASE("sequential calls to one participant reuse one keep-alive connection",
          "[coordinator][http_branch_caller]") {
  ParticipantServer participant;
  testing::SyncBranchCaller caller;

  for (int i = 0; i < 5; ++i) {
    CHECK(caller.Call(GetCall(participant.Url("/confirm"))).result == BranchResult::kSuccess);
  }

  const std::vector<ReceivedCall> received = participant.CallsTo("/confirm");
  REQUIRE(received.size() == 5);
  for (const ReceivedCall& call : received) {
    CHECK(call.remote_port == received[0].remote_port);
  }
}

TEST_CASE("calls to different paths of one participant share its connection",
          "[coordinator][http_branch_caller]") {
  ParticipantServer participant;
  testing::SyncBranchCaller caller;

  CHECK(caller.Call(GetCall(participant.Url("/confirm"))).result == BranchResult::kSuccess);
  CHECK(caller.Call(GetCall(participant.Url("/cancel"))).result == BranchResult::kSuccess);

  CHECK(participant.CallsTo("/cancel").at(0).remote_port ==
        participant.CallsTo("/confirm").at(0).remote_port);
}

TEST_CASE("a participant that closes its connection after each answer is still reached",
          "[coordinator][http_branch_caller]") {
  ClosingParticipant participant(ClosingParticipant::Mode::kCloseAfterAnswer);
  testing::SyncBranchCaller caller;

  for (int i = 0; i < 3; ++i) {
    const engine::BranchOutcome outcome = caller.Call(GetCall(participant.Url("/confirm")));
    CHECK(outcome.result == BranchResult::kSuccess);
    CHECK(outcome.detail.empty());
  }
  CHECK(participant.requests() == 3);
  CHECK(participant.connections() == 3);
}

TEST_CASE("a reused connection the participant closed is retried once on a new connection",
          "[coordinator][http_branch_caller]") {
  ClosingParticipant participant(ClosingParticipant::Mode::kCloseOnNextRequest);
  testing::SyncBranchCaller caller;

  REQUIRE(caller.Call(GetCall(participant.Url("/confirm"))).result == BranchResult::kSuccess);
  // Sent on the kept-alive connection, which the participant closes without answering.
  const engine::BranchOutcome outcome = caller.Call(GetCall(participant.Url("/confirm")));

  CHECK(outcome.result == BranchResult::kSuccess);
  CHECK(outcome.http_status == 200);
  CHECK(participant.requests() == 3);
  CHECK(participant.connections() == 2);
}

TEST_CASE("a chunked answer is read whole and classified by its body",
          "[coordinator][http_branch_caller]") {
  ClosingParticipant participant(ClosingParticipant::Mode::kCloseAfterAnswer,
                                 "HTTP/1.1 409 Conflict\r\nTransfer-Encoding: chunked\r\n\r\n"
                                 "5\r\n{\"dtm\r\n13\r\n_result\":\"FAILURE\"}\r\n0\r\n\r\n");
  testing::SyncBranchCaller caller;

  const engine::BranchOutcome outcome = caller.Call(GetCall(participant.Url("/confirm")));

  CHECK(outcome.result == BranchResult::kFailure);
  CHECK(outcome.http_status == 409);
  CHECK(outcome.detail == R"(HTTP 409: {"dtm_result":"FAILURE"})");
}

TEST_CASE("an answer that is not HTTP is an unknown outcome that says so",
          "[coordinator][http_branch_caller]") {
  ClosingParticipant participant(ClosingParticipant::Mode::kCloseAfterAnswer,
                                 "SSH-2.0-OpenSSH_9.2\r\n\r\n");
  testing::SyncBranchCaller caller;

  const engine::BranchOutcome outcome = caller.Call(GetCall(participant.Url("/confirm")));

  CHECK(outcome.result == BranchResult::kUnknown);
  CHECK_THAT(outcome.detail, Catch::Contains("malformed answer from 127.0.0.1:") &&
                                 Catch::Contains("malformed status line 'SSH-2.0"));
}

}  // namespace
}  // namespace settle::calls
