#include "settle/sdk/signature_refusals.h"

#include <cstddef>

namespace settle::sdk {
namespace {

// A kind's place in the arrays: kRefusalKinds lists the enumerators in their order from 0.
std::size_t Index(signing::RefusalKind kind) { return static_cast<std::size_t>(kind); }

constexpr bool KindsInOrder() {
  for (std::size_t i = 0; i < signing::kRefusalKinds.size(); ++i) {
    if (static_cast<std::size_t>(signing::kRefusalKinds[i]) != i) return false;
  }
  return true;
}
static_assert(KindsInOrder(), "signing::kRefusalKinds must list the kinds in enumerator order");
static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "a refusal is counted lock-free");

}  // namespace

std::uint64_t SignatureRefusalCounts::of(signing::RefusalKind kind) const {
  return by_kind[Index(kind)];
}

std::uint64_t SignatureRefusalCounts::total() const {
  std::uint64_t sum = 0;
  for (std::uint64_t count : by_kind) sum += count;
  return sum;
}

SignatureRefusalCounts& SignatureRefusalCounts::operator+=(const SignatureRefusalCounts& other) {
  for (std::size_t i = 0; i < by_kind.size(); ++i) by_kind[i] += other.by_kind[i];
  return *this;
}

void SignatureRefusalCounter::Count(signing::RefusalKind kind) {
  // A count orders nothing else: relaxed is enough.
  counts_[Index(kind)].fetch_add(1, std::memory_order_relaxed);
}

SignatureRefusalCounts SignatureRefusalCounter::Snapshot() const {
  SignatureRefusalCounts counts;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    counts.by_kind[i] = counts_[i].load(std::memory_order_relaxed);
  }
  return counts;
}

std::string SignatureRefusalsText(const SignatureRefusalCounts& counts) {
  const std::string name(kSignatureRefusalsMetric);
  // Names and label values are this file's constants: nothing to escape.
  std::string text = "# HELP " + name +
                     " Branch calls refused for their signature, by reason "
                     "(docs/operations.md, Signed calls to participants).\n"
                     "# TYPE " +
                     name + " counter\n";
  for (signing::RefusalKind kind : signing::kRefusalKinds) {
    text += name + "{reason=\"";
    text += signing::RefusalKindName(kind);
    text += "\"} " + std::to_string(counts.of(kind)) + "\n";
  }
  return text;
}

namespace {

std::string Printable(std::string_view text, std::size_t max = 128) {
  if (text.empty()) return "-";
  std::string out;
  for (char c : text.substr(0, max)) {
    const auto u = static_cast<unsigned char>(c);
    out += u >= 0x20 && u < 0x7f ? c : '?';
  }
  if (text.size() > max) out += "...";
  return out;
}

}  // namespace

std::string RefusalLogLine(const RefusedCall& call, const signing::Verdict& verdict) {
  std::string line(call.server);
  line += ": refused " + Printable(call.call) + " from " + Printable(call.peer);
  line += " gid=" + Printable(call.gid) + " branch=" + Printable(call.branch_id) +
          " op=" + Printable(call.op);
  line += ": signature (";
  line += signing::RefusalKindName(verdict.kind());
  line += "): " + Printable(verdict.message(), 400);
  return line;
}

}  // namespace settle::sdk
