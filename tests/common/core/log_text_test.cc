#include "settle/core/log_text.h"

#include <catch2/catch.hpp>

#include <string>

namespace settle {
namespace {

TEST_CASE("a value is one quoted token whatever bytes it holds", "[log_text]") {
  CHECK(LogValue("insufficient balance") == "\"insufficient balance\"");
  CHECK(LogValue("") == "\"\"");
  CHECK(LogValue("a\nb\rc\td") == "\"a\\nb\\rc\\td\"");
  CHECK(LogValue("say \"hi\" \\ bye") == "\"say \\\"hi\\\" \\\\ bye\"");
  CHECK(LogValue(std::string("nul\0bell\x07", 9)) == "\"nul\\x00bell\\x07\"");
  CHECK(LogValue("caf\xc3\xa9\x7f") == "\"caf\\xc3\\xa9\\x7f\"");
}

TEST_CASE("a value cannot end its quotes early or pose as another field", "[log_text]") {
  const std::string forged = "x\" actor=admin reason=\"y";
  const std::string logged = LogValue(forged);
  CHECK(logged == "\"x\\\" actor=admin reason=\\\"y\"");
  // The only unescaped quotes are the first and the last byte.
  for (std::size_t i = 1; i + 1 < logged.size(); ++i) {
    if (logged[i] == '"') CHECK(logged[i - 1] == '\\');
  }
}

TEST_CASE("a long value is cut and says how long it was", "[log_text]") {
  const std::string long_value(1000, 'a');
  CHECK(LogValue(long_value) == "\"" + std::string(kMaxLogValue, 'a') + "\"...(1000 bytes)");
  CHECK(LogValue("abcdef", 3) == "\"abc\"...(6 bytes)");
  CHECK(LogValue("abc", 3) == "\"abc\"");
}

TEST_CASE("a line's control bytes are escaped and nothing else changes", "[log_text]") {
  CHECK_FALSE(HasControlBytes("gid=g1 reason=\"ok\" caf\xc3\xa9"));
  CHECK(HasControlBytes("a\nb"));
  CHECK(HasControlBytes(std::string("a\0b", 3)));
  CHECK(HasControlBytes("a\x7f"));
  CHECK(EscapeControlBytes("one\n2026-11-27T00:00:00.000 info FORGED") ==
        "one\\n2026-11-27T00:00:00.000 info FORGED");
  CHECK(EscapeControlBytes("a\r\tb\x01") == "a\\r\\tb\\x01");
  CHECK(EscapeControlBytes("caf\xc3\xa9 \"q\" \\") == "caf\xc3\xa9 \"q\" \\");
}

}  // namespace
}  // namespace settle
