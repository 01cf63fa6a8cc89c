// How a transaction's span is stored: trans_global's trace, trace_parent and trace_state.
#include "trace_codec.h"

#include <catch2/catch.hpp>

#include <string>

namespace settle::storage {
namespace {

TraceContext Span() {
  TraceContext span;
  span.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
  span.span_id = "00f067aa0ba902b7";
  span.parent_id = "b7ad6b7169203331";
  span.flags = 0x01;
  span.state = "k=v,x=y";
  return span;
}

TEST_CASE("a span is stored as its traceparent, its parent's id and its tracestate",
          "[storage][trace]") {
  const TraceColumns columns = EncodeTrace(Span());

  CHECK(columns.trace == "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  CHECK(columns.parent == "b7ad6b7169203331");
  CHECK(columns.state == "k=v,x=y");
  CHECK(DecodeTrace(columns.trace, columns.parent, columns.state) == Span());
}

TEST_CASE("no span is stored as three empty columns, and they read as no span",
          "[storage][trace]") {
  const TraceColumns columns = EncodeTrace(TraceContext{});

  CHECK(columns.trace.empty());
  CHECK(columns.parent.empty());
  CHECK(columns.state.empty());
  CHECK(DecodeTrace("", "", "") == TraceContext{});
  // Without a traceparent the other columns mean nothing.
  CHECK(DecodeTrace("", "b7ad6b7169203331", "k=v") == TraceContext{});
}

TEST_CASE("a stored span that does not parse reads as no span", "[storage][trace]") {
  const std::string parent = "b7ad6b7169203331";
  for (const std::string trace : {"garbage", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
                                  "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
                                  "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
                                  "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                                  "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
                                  "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-"}) {
    INFO(trace);
    CHECK(DecodeTrace(trace, parent, "k=v") == TraceContext{});
  }
  const std::string valid = EncodeTrace(Span()).trace;
  for (const std::string bad_parent : {"b7ad6b71", "0000000000000000", "B7AD6B7169203331"}) {
    INFO(bad_parent);
    CHECK(DecodeTrace(valid, bad_parent, "k=v") == TraceContext{});
  }
}

TEST_CASE("a stored tracestate that W3C would drop reads as none, the span kept",
          "[storage][trace]") {
  const TraceColumns columns = EncodeTrace(Span());
  TraceContext without_state = Span();
  without_state.state.clear();

  CHECK(DecodeTrace(columns.trace, columns.parent, std::string(513, 'k')) == without_state);
  CHECK(DecodeTrace(columns.trace, columns.parent, "k=\x01") == without_state);
}

TEST_CASE("a span that would not read back is stored as it would read", "[storage][trace]") {
  TraceContext no_span = Span();
  no_span.span_id.clear();
  TraceContext long_state = Span();
  long_state.state = std::string(600, 'k');

  CHECK(EncodeTrace(no_span).trace.empty());
  CHECK(EncodeTrace(no_span).state.empty());
  const TraceColumns kept = EncodeTrace(long_state);
  CHECK(kept.trace == EncodeTrace(Span()).trace);
  CHECK(kept.state.empty());
}

}  // namespace
}  // namespace settle::storage
