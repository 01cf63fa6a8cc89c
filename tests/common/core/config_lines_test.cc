// The lines of the files settled reads for tokens, client certificates and OTLP headers
// (config_lines.h).
#include "settle/core/config_lines.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace settle {
namespace {

std::vector<std::string> Lines(std::string_view text) {
  std::vector<std::string> lines;
  REQUIRE(ForEachConfigLine(text, [&lines](std::string_view line) {
            lines.emplace_back(line);
            return Status::Ok();
          }).ok());
  return lines;
}

TEST_CASE("a config file's lines are read trimmed, without blank and comment lines",
          "[core][config_lines]") {
  CHECK(Lines("") == std::vector<std::string>{});
  CHECK(Lines("a\n\n  # comment\n\t b c \r\n#\nd") == std::vector<std::string>{"a", "b c", "d"});
  CHECK(Lines("last line without a newline") ==
        std::vector<std::string>{"last line without a newline"});
  CHECK(TrimBlanks(" \t\rx y\r ") == "x y");
}

TEST_CASE("the first line refused ends the walk, numbered from 1, blank lines counted",
          "[core][config_lines]") {
  int calls = 0;
  const Status s = ForEachConfigLine("ok\n\n# c\nbad\nnever", [&calls](std::string_view line) {
    ++calls;
    return line == "bad" ? Status::NotFound("not a line I know") : Status::Ok();
  });
  CHECK(calls == 2);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message() == "line 4: not a line I know");
}

}  // namespace
}  // namespace settle
