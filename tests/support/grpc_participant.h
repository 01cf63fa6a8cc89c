#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace settle::testing {

// What a gRPC participant received: the method, the request message's bytes, its metadata.
struct GrpcCall {
  std::string method;  // "/bank.Bank/TransOut"
  std::string body;
  std::multimap<std::string, std::string> metadata;
  std::string Meta(const std::string& key) const {
    const auto it = metadata.find(key);
    return it == metadata.end() ? "" : it->second;
  }
};

// The status a scripted gRPC participant answers with (0: OK).
struct GrpcAnswer {
  int code = 0;  // a grpc::StatusCode
  std::string message;
};

// A gRPC participant on 127.0.0.1 at a kernel-chosen port that serves every method (gRPC's
// generic service), on a thread pool of gRPC's own: it records each call and answers OK with an
// empty message, or what a script says. Thread-safe.
class GrpcParticipant {
 public:
  // With a certificate and key (PEM files), it serves over TLS only (grpcs://).
  explicit GrpcParticipant(const std::string& cert_file = "", const std::string& key_file = "");
  ~GrpcParticipant();

  int port() const;
  // A branch URL in DTM's form: "127.0.0.1:<port>/bank.Bank/TransOut" for "bank.Bank/TransOut".
  std::string Url(const std::string& method) const;

  // The next calls of `method` ("/bank.Bank/TransOut") get these answers, then OK.
  void Script(const std::string& method, std::vector<GrpcAnswer> answers);
  // Every call of `method` gets this answer (after its script).
  void SetDefault(const std::string& method, GrpcAnswer answer);

  std::vector<GrpcCall> CallsTo(const std::string& method) const;
  std::size_t CountCalls(const std::string& method) const;
  // Waits (up to 15 s) until `method` was called `count` times.
  bool WaitForCalls(const std::string& method, std::size_t count) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace settle::testing
