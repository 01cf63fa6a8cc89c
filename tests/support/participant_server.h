#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace settle::testing {

// One request a ParticipantServer received.
struct ReceivedCall {
  std::string method;                        // "GET" or "POST"
  std::string path;                          // without the query string
  std::map<std::string, std::string> query;  // gid, trans_type, branch_id, op, ...
  std::map<std::string, std::string> headers;
  std::string body;
  int remote_port = 0;  // the caller's port: calls on one connection share it
  std::chrono::steady_clock::time_point received_at;
  std::chrono::steady_clock::time_point answered_at;  // when the handler finished
};

// How the server answers one request.
struct ScriptedAnswer {
  int status = 200;
  std::string body = R"({"dtm_result":"SUCCESS"})";
  std::chrono::milliseconds delay{0};  // slept before answering
  // Not answered until the test calls Release(): a participant that is still working for
  // exactly as long as the test needs, whatever the machine's speed.
  bool held = false;
};

// A real HTTP participant on 127.0.0.1 at a port chosen by the kernel, serving every path
// with GET and POST, recording every request and answering as scripted. With a certificate
// and key (PEM files), it serves HTTPS. Thread-safe.
class ParticipantServer {
 public:
  ParticipantServer(std::string tls_cert_file = "", std::string tls_key_file = "");
  // HTTP on `port` (0: one the kernel chooses): a participant started again where it
  // listened before, as a restarted process would be, so that its branch URLs stay valid.
  // `configure` runs before it listens (SetHandler, Script, ...), so that no request that
  // arrives at once finds it half set up.
  explicit ParticipantServer(int port,
                             const std::function<void(ParticipantServer&)>& configure = nullptr);
  ~ParticipantServer();  // stops serving and joins its threads
  ParticipantServer(const ParticipantServer&) = delete;
  ParticipantServer& operator=(const ParticipantServer&) = delete;

  int port() const { return port_; }
  // "http://127.0.0.1:<port><path>" ("https://..." when serving HTTPS)
  std::string Url(const std::string& path) const;

  // Answers for `path`, used one per request in order; when they run out, the default.
  void Script(const std::string& path, std::vector<ScriptedAnswer> answers);
  // The answer for `path` once its script is used up (initially 200 SUCCESS, no delay).
  void SetDefault(const std::string& path, ScriptedAnswer answer);
  // Computes the answer for every request to `path` that has no scripted answer left,
  // instead of the default. Runs on a server thread; it may block (to hold a request until
  // others arrive, say).
  using Handler = std::function<ScriptedAnswer(const ReceivedCall&)>;
  void SetHandler(const std::string& path, Handler handler);

  // Holds every request received after the first `received` ones (all paths counted) until
  // Release(), as if each had a held answer.
  void HoldAfter(std::size_t received);
  // Answers every request held now and ends HoldAfter. Requests arriving later with a held
  // answer are held again.
  void Release();
  // Requests waiting for Release() now.
  std::size_t Held() const;
  // Waits until at least `count` requests are held; false on timeout.
  bool WaitForHeld(std::size_t count,
                   std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;

  std::vector<ReceivedCall> Calls() const;
  std::vector<ReceivedCall> CallsTo(const std::string& path) const;
  std::size_t CountCalls(const std::string& path) const;

  // Waits until `path` has received at least `count` requests and answered them;
  // false on timeout.
  bool WaitForCalls(const std::string& path, std::size_t count,
                    std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;

 private:
  ParticipantServer(std::string tls_cert_file, std::string tls_key_file, int port,
                    const std::function<void(ParticipantServer&)>& configure);

  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
  bool tls_ = false;
};

}  // namespace settle::testing
