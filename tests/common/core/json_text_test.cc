// JSON text written without a document: the same bytes nlohmann::json's dump() writes.
#include "settle/core/json_text.h"

#include <catch2/catch.hpp>

#include <limits>
#include <string>

#include <nlohmann/json.hpp>

namespace settle {
namespace {

std::string Quoted(std::string_view text) {
  std::string out = "x";
  REQUIRE(AppendJsonString(out, text));
  return out.substr(1);
}

TEST_CASE("a string is written as nlohmann's dump writes it, every byte below 0x20 included",
          "[core][json]") {
  std::string every_control;
  for (int c = 0; c < 0x20; ++c) every_control += static_cast<char>(c);
  const std::string texts[] = {"",
                               "plain",
                               "quote \" and backslash \\ and slash /",
                               every_control,
                               std::string("nul \0 inside", 12),
                               "\x7f del stays",
                               "Ünicode ✓ 😀 stays as it is",
                               R"({"custom":"data","n":[1,2]})"};
  for (const std::string& text : texts) {
    INFO(nlohmann::json(text).dump());
    const std::string written = Quoted(text);
    CHECK(written == nlohmann::json(text).dump());
    CHECK(nlohmann::json::parse(written).get<std::string>() == text);
  }
}

TEST_CASE("text that is not UTF-8 is refused and nothing is appended", "[core][json]") {
  const std::string bad[] = {"\xc3\x28", "\xff", "ok then \xe2\x82", "\xed\xa0\x80", "\xc0\xaf"};
  for (const std::string& text : bad) {
    std::string out = "kept";
    CHECK_FALSE(AppendJsonString(out, text));
    CHECK(out == "kept");
  }
}

TEST_CASE("numbers are written in decimal, both ends of int64 included", "[core][json]") {
  for (std::int64_t n :
       {std::int64_t{0}, std::int64_t{-1}, std::int64_t{35000},
        std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()}) {
    std::string out;
    AppendJsonNumber(out, n);
    CHECK(out == nlohmann::json(n).dump());
  }
}

}  // namespace
}  // namespace settle
