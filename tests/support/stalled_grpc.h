#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace settle::testing {

// A hostile gRPC client at the HTTP/2 framing level: a TCP connection from `source` (an address
// of this host's loopback, such as 127.0.0.2) to 127.0.0.1:port that sends the HTTP/2 preface,
// SETTINGS (and an ACK of the server's), then for each of `streams` streams the HEADERS of a
// call of `path` (with "authorization: Bearer <token>" when a token is given) and a DATA frame
// holding the start of a `declared`-byte gRPC message, `sent` bytes of it: a call whose
// request message never wholly arrives. What the server answers is read at the frame level
// (no HPACK): which streams it ended (trailers with END_STREAM, or RST_STREAM), and whether it
// closed the connection.
class StalledGrpcConnection {
 public:
  struct Plan {
    std::string source = "127.0.0.2";
    int port = 0;
    std::string path = "/dtmgimp.Dtm/Submit";
    std::string token;  // empty: no authorization
    int streams = 1;
    std::size_t declared = 1000;
    std::size_t sent = 10;
    bool silent = false;  // connect and send nothing at all (not even a TLS ClientHello)
  };
  explicit StalledGrpcConnection(const Plan& plan);
  ~StalledGrpcConnection();
  StalledGrpcConnection(const StalledGrpcConnection&) = delete;
  StalledGrpcConnection& operator=(const StalledGrpcConnection&) = delete;

  // Reads what the server sent so far, without waiting.
  void Poll();
  // Whether the server closed (or reset) the connection before sending a byte: a connection
  // refused at accept. Call after Poll.
  bool RefusedAtAccept() const { return closed_ && received_ == 0; }
  bool closed() const { return closed_; }
  std::size_t received() const { return received_; }
  // How many of the streams the server has ended.
  int ended_streams() const;

 private:
  void Parse();

  int fd_ = -1;
  bool closed_ = false;
  std::size_t received_ = 0;
  std::string pending_;
  std::vector<bool> ended_;  // by stream (index k: stream id 2k + 1)
};

}  // namespace settle::testing
