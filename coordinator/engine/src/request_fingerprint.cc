#include "settle/engine/request_fingerprint.h"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <utility>
#include <vector>

#include "settle/engine/request_rules.h"
#include "settle/engine/type_rules.h"

namespace settle::engine {
namespace {

// FNV-1a over length-prefixed parts, so that ("ab", "c") and ("a", "bc") differ.
class Digest {
 public:
  Digest& Add(std::string_view part) {
    AddLength(part.size());
    for (unsigned char c : part) Mix(c);
    return *this;
  }
  std::string Text() const {
    char text[20];
    std::snprintf(text, sizeof text, "#%016llx", static_cast<unsigned long long>(hash_));
    return text;
  }

 private:
  void AddLength(std::size_t n) {
    for (int i = 0; i < 8; ++i) Mix(static_cast<unsigned char>(n >> (8 * i)));
  }
  void Mix(unsigned char c) {
    hash_ ^= c;
    hash_ *= 0x100000001b3ULL;
  }
  std::uint64_t hash_ = 0xcbf29ce484222325ULL;
};

class Lines {
 public:
  void Add(std::string_view name, std::string_view value) {
    text_ += name;
    text_ += '=';
    text_ += value;
    text_ += '\n';
  }
  void Add(std::string_view name, const std::optional<Duration>& seconds) {
    Add(name,
        seconds ? std::to_string(std::chrono::duration_cast<std::chrono::seconds>(*seconds).count())
                : std::string("-"));
  }
  std::string Take() { return std::move(text_); }

 private:
  std::string text_;
};

void AddOptions(Lines& lines, const RequestOptions& options) {
  lines.Add("timeout_to_fail", options.timeout_to_fail);
  lines.Add("request_timeout", options.request_timeout);
  lines.Add("retry_interval", options.retry_interval);
  lines.Add("retry_limit", std::to_string(options.retry_limit));
  lines.Add("concurrent", options.concurrent ? "true" : "false");
  Digest headers;
  for (const auto& [name, value] : options.branch_headers) headers.Add(name).Add(value);
  lines.Add("branch_headers", headers.Text());
  lines.Add("custom_data", Digest().Add(options.custom_data).Text());
}

void AddSteps(Lines& lines, const std::vector<RequestStep>& steps,
              const std::vector<std::string>& payloads) {
  lines.Add("steps", std::to_string(steps.size()));
  for (std::size_t i = 0; i < steps.size(); ++i) {
    lines.Add(IndexPath("steps", i),
              Digest().Add(steps[i].action_url).Add(steps[i].compensate_url).Text());
  }
  lines.Add("payloads", std::to_string(payloads.size()));
  for (std::size_t i = 0; i < payloads.size(); ++i) {
    lines.Add(IndexPath("payloads", i), Digest().Add(payloads[i]).Text());
  }
}

std::string Fingerprint(TransType type, const RequestOptions& options,
                        const std::vector<RequestStep>& steps,
                        const std::vector<std::string>& payloads,
                        const std::string& query_prepared) {
  Lines lines;
  lines.Add("trans_type", ToString(type));
  AddOptions(lines, options);
  const TypeRules& rules = RulesOf(type);
  if (!rules.carries_steps) return lines.Take();
  AddSteps(lines, steps, payloads);
  if (rules.carries_query_prepared && !query_prepared.empty()) {
    lines.Add("query_prepared", Digest().Add(query_prepared).Text());
  }
  return lines.Take();
}

using Entry = std::pair<std::string_view, std::string_view>;

std::vector<Entry> EntriesOf(std::string_view text) {
  std::vector<Entry> entries;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    const std::size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    entries.emplace_back(line.substr(0, eq), line.substr(eq + 1));
  }
  return entries;
}

const std::string_view* Find(const std::vector<Entry>& entries, std::string_view name) {
  for (const Entry& e : entries) {
    if (e.first == name) return &e.second;
  }
  return nullptr;
}

// A Conflict that names the field first, as every refusal does: "steps: 2 here, 3 in the
// request that created gid g1; ...". A digest's values mean nothing to the caller.
Status Differs(std::string_view gid, std::string_view field, std::string_view repeat,
               const std::string_view* stored) {
  auto shown = [](std::string_view v) {
    return v == "-" ? std::string("not sent") : std::string(v);
  };
  const std::string creator = "the request that created gid " + std::string(gid);
  std::string what;
  if (stored == nullptr) {
    what = "sent here, but " + creator + " had none";
  } else if (repeat.empty()) {
    what = "not sent here, but " + creator + " had one";
  } else if (repeat.starts_with('#') || stored->starts_with('#')) {
    what = "differs from " + creator;
  } else {
    what = shown(repeat) + " here, " + shown(*stored) + " in " + creator;
  }
  return Status::Conflict(std::string(field) + ": " + what +
                          "; a repeated request must match that one, and nothing was changed");
}

}  // namespace

std::string FingerprintOf(const PrepareRequest& request) {
  return Fingerprint(request.trans_type, request.options, request.steps, request.payloads,
                     request.query_prepared);
}

std::string FingerprintOf(const SubmitRequest& request) {
  return Fingerprint(request.trans_type, request.options, request.steps, request.payloads,
                     request.query_prepared);
}

Status MatchStored(std::string_view gid, std::string_view stored, const Repeat& repeat) {
  if (stored.empty()) return Status::Ok();
  const RepeatRules& rules = repeat.rules;
  const std::vector<Entry> was = EntriesOf(stored);
  const std::vector<Entry> now = EntriesOf(repeat.fingerprint);
  const auto compared = [&rules](std::string_view name) {
    return !rules.only_custom_data || name == "custom_data" || name == "trans_type";
  };
  for (const auto& [name, value] : now) {
    if (!compared(name)) continue;
    if (name == "custom_data" && rules.custom_data_ignored) continue;
    const std::string_view* old = Find(was, name);
    if (old == nullptr || *old != value) return Differs(gid, name, value, old);
  }
  for (const auto& [name, value] : was) {
    if (Find(now, name) != nullptr || !compared(name)) continue;
    if (name == "custom_data" && rules.custom_data_ignored) continue;
    if (name == "query_prepared" && rules.query_prepared_optional) continue;
    const std::string_view none;
    return Differs(gid, name, none, &value);
  }
  return Status::Ok();
}

}  // namespace settle::engine
