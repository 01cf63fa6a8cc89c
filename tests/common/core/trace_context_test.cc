// W3C Trace Context as settled reads it from a request and writes it on the calls it makes.
#include "settle/core/trace_context.h"

#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace settle {
namespace {

constexpr const char* kTrace = "4bf92f3577b34da6a3ce929d0e0e4736";
constexpr const char* kParent = "00f067aa0ba902b7";

TEST_CASE("a valid traceparent is read with its tracestate", "[trace]") {
  const auto read = ParseTraceparent(std::string("00-") + kTrace + "-" + kParent + "-01",
                                     "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE");
  REQUIRE(read);
  CHECK(read->trace_id == kTrace);
  CHECK(read->span_id == kParent);
  CHECK(read->flags == 1);
  CHECK(read->state == "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE");
  // A later version's, by its first four fields.
  CHECK(ParseTraceparent(std::string("cc-") + kTrace + "-" + kParent + "-01-what-comes-next"));
  CHECK(ParseTraceparent(std::string("cc-") + kTrace + "-" + kParent + "-00")->flags == 0);
}

TEST_CASE("a traceparent W3C says to ignore starts a new trace instead", "[trace]") {
  const std::string trace = kTrace, parent = kParent;
  for (const std::string& bad :
       {std::string(), "00-" + trace + "-" + parent,          // short
        "00-" + trace + "-" + parent + "-01-x",               // 00 with more
        "ff-" + trace + "-" + parent + "-01",                 // version ff
        "00-" + std::string(32, '0') + "-" + parent + "-01",  // zero trace id
        "00-" + trace + "-" + std::string(16, '0') + "-01",   // zero parent id
        "00-" + std::string("4BF92F3577B34DA6A3CE929D0E0E4736") + "-" + parent + "-01",
        "00_" + trace + "-" + parent + "-01", "00-" + trace + "-" + parent + "-0g",
        "cc-" + trace + "-" + parent + "-01x"}) {
    INFO(bad);
    CHECK_FALSE(ParseTraceparent(bad));
  }
  // A tracestate too long or not ASCII is dropped; the traceparent stays.
  const std::string valid = "00-" + trace + "-" + parent + "-01";
  CHECK(ParseTraceparent(valid, std::string(513, 'a'))->state.empty());
  CHECK(ParseTraceparent(valid, "a=\n")->state.empty());
  CHECK(ParseTraceparent(valid, std::string(512, 'a'))->state.size() == 512);
}

TEST_CASE("the caller's span is read from its one traceparent and every tracestate, in any case",
          "[trace]") {
  const std::string traceparent = std::string("00-") + kTrace + "-" + kParent + "-01";
  const auto read = ReadTraceHeaders({{"Host", "settled"},
                                      {"TraceParent", traceparent},
                                      {"tracestate", "rojo=00f067aa0ba902b7"},
                                      {"TRACESTATE", ""},
                                      {"tracestate", "congo=t61rcWkgMzE"}});
  REQUIRE(read);
  CHECK(read->trace_id == kTrace);
  CHECK(read->span_id == kParent);
  // Several tracestate fields are one list, in the order sent; an empty one adds nothing.
  CHECK(read->state == "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE");
  CHECK(ReadTraceHeaders({{"traceparent", traceparent}})->state.empty());
  // None, two (which would name the caller's span?), or one W3C says to ignore: no span.
  CHECK_FALSE(ReadTraceHeaders({{"tracestate", "k=v"}}));
  CHECK_FALSE(ReadTraceHeaders({{"traceparent", traceparent}, {"Traceparent", traceparent}}));
  CHECK_FALSE(
      ReadTraceHeaders({{"traceparent", "00-" + std::string(kTrace)}, {"tracestate", "k=v"}}));
  // Any range of string pairs: HTTP's header fields as a server keeps them.
  const std::vector<std::pair<std::string, std::string>> headers = {{"traceparent", traceparent},
                                                                    {"tracestate", "k=v"}};
  CHECK(ReadTraceHeaders(headers)->state == "k=v");
}

TEST_CASE("a transaction's span is a child of the caller's, each call a child of it", "[trace]") {
  const auto incoming =
      ParseTraceparent(std::string("00-") + kTrace + "-" + kParent + "-01", "k=v");
  const TraceContext span = StartSpan(incoming);
  CHECK(span.trace_id == kTrace);
  CHECK(span.parent_id == kParent);
  CHECK(IsTraceHex(span.span_id, 16));
  CHECK(span.span_id != kParent);
  CHECK(span.state == "k=v");
  CHECK(span.Traceparent() == std::string("00-") + kTrace + "-" + span.span_id + "-01");
  const TraceContext call = ChildSpan(span);
  CHECK(call.trace_id == kTrace);
  CHECK(call.parent_id == span.span_id);
  CHECK(call.span_id != span.span_id);
  CHECK(call.state == "k=v");
  CHECK(ChildSpan(TraceContext{}).empty());
  // Without an incoming one: a new, sampled trace, a root span.
  const TraceContext root = StartSpan(std::nullopt);
  CHECK(IsTraceHex(root.trace_id, 32));
  CHECK(root.parent_id.empty());
  CHECK(root.flags == 1);
  std::set<std::string> ids;
  for (int i = 0; i < 1000; ++i) ids.insert(NewSpanId());
  CHECK(ids.size() == 1000);
}

}  // namespace
}  // namespace settle
