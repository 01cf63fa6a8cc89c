#include "answer.h"

#include "settle/core/grpc_codes.h"
#include "settle/net/message.h"

namespace settle::checker {

Answer Answer::None(Delivery delivery, std::string error) {
  Answer answer;
  answer.delivery = delivery;
  answer.error = std::move(error);
  return answer;
}

BranchResult Answer::result() const {
  if (!answered()) return BranchResult::kUnknown;
  if (grpc_code >= 0) return ClassifyGrpcCode(grpc_code);
  return ClassifyBranchResponse(http_status, body);
}

std::string Answer::Describe() const {
  if (!answered()) return "no answer (" + error + ")";
  const BranchResult r = result();
  if (r == BranchResult::kSuccess) return "SUCCESS";
  // A gRPC answer's body is its status message.
  std::string http =
      grpc_code >= 0 ? "gRPC " + GrpcCodeName(grpc_code) : "HTTP " + std::to_string(http_status);
  if (!body.empty()) http += ": " + OneLine(body);
  if (r == BranchResult::kUnknown) return http;
  return std::string(ToString(r)) + " (" + http + ")";
}

std::string Answer::DescribeHttp() const {
  if (!answered()) return "no answer (" + error + ")";
  std::string http = "HTTP " + std::to_string(http_status);
  if (!body.empty()) http += ": " + OneLine(body);
  return http;
}

const std::string* Answer::Header(std::string_view name) const {
  return net::FindHeader(headers, name);
}

std::string OneLine(const std::string& text, std::size_t limit) {
  std::string line;
  for (unsigned char c : text.substr(0, limit)) {
    line += (c < 0x20 || c == 0x7f) ? ' ' : static_cast<char>(c);
  }
  if (text.size() > limit) line += "...";
  return line;
}

}  // namespace settle::checker
