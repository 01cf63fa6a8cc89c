// Boost's assertions stay on in the fuzz build (no NDEBUG) and go through this handler
// (BOOST_ENABLE_ASSERT_HANDLER), so that a reader breaking a precondition of Beast's parser
// stops the run like any other crash.
//
// One assertion of Beast 1.74 is itself wrong and is let through: `n >= 5` in
// basic_parser::parse_chunk_header, for the last chunk. A chunked body that is only "0\r\n"
// so far, followed by one or two more bytes, reaches it with n == 3 or 4, which is valid; the
// code after the assertion handles it (boostorg/beast#2861 relaxed the assertion). Builds with
// NDEBUG, as settled's are, never check it.

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace {

bool IsBeastLastChunkAssertion(std::string_view expr, std::string_view function) {
  return expr == "n >= 5" && function.find("parse_chunk_header") != std::string_view::npos;
}

}  // namespace

namespace boost {

void assertion_failed(const char* expr, const char* function, const char* file, long line) {
  if (IsBeastLastChunkAssertion(expr, function)) return;
  std::fprintf(stderr, "%s:%ld: %s: Assertion `%s' failed.\n", file, line, function, expr);
  std::abort();
}

void assertion_failed_msg(const char* expr, const char* msg, const char* function, const char* file,
                          long line) {
  std::fprintf(stderr, "%s:%ld: %s: Assertion `%s' failed: %s\n", file, line, function, expr, msg);
  std::abort();
}

}  // namespace boost
