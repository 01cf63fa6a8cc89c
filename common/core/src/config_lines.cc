#include "settle/core/config_lines.h"

#include <string>

namespace settle {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

}  // namespace

std::string_view TrimBlanks(std::string_view text) {
  while (!text.empty() && IsBlank(text.front())) text.remove_prefix(1);
  while (!text.empty() && IsBlank(text.back())) text.remove_suffix(1);
  return text;
}

Status ForEachConfigLine(std::string_view text,
                         const std::function<Status(std::string_view line)>& read) {
  std::size_t line_number = 0;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = TrimBlanks(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++line_number;
    if (line.empty() || line.front() == '#') continue;
    if (Status s = read(line); !s.ok()) {
      return Status::InvalidArgument("line " + std::to_string(line_number) + ": " + s.message());
    }
  }
  return Status::Ok();
}

}  // namespace settle
