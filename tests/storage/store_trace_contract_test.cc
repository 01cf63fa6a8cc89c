// The Store contract for a transaction's span (records.h GlobalRecord::trace): stored by the
// insert with every id, its flags and its tracestate, loaded by Load and List as inserted,
// and never changed by an update. These tests run against the store that store_factory.h
// makes, whatever its implementation.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "record_builders.h"
#include "settle/core/trace_context.h"
#include "settle/storage/store.h"
#include "store_factory.h"
#include "store_test_util.h"

namespace settle::storage::testing {
namespace {

// A transaction's span as a caller's traceparent starts it: a child of the caller's span.
TraceContext CallersChild() {
  TraceContext span;
  span.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
  span.span_id = "00f067aa0ba902b7";
  span.parent_id = "b7ad6b7169203331";
  span.flags = 0x01;
  span.state = "k=v,x=y";
  return span;
}

GlobalRecord Traced(std::string gid, TraceContext span) {
  GlobalRecord g = MakeGlobal(std::move(gid));
  g.trace = std::move(span);
  return g;
}

// The stored transactions' spans, newest first, as List reads them.
std::vector<TraceContext> ListedSpans(Store& store) {
  std::vector<TraceContext> spans;
  for (const GlobalRecord& g : MustList(store, ListQuery{}).transactions) spans.push_back(g.trace);
  return spans;
}

TEST_CASE("a transaction's span is stored with it: Load and List read it back as inserted",
          "[storage][trace]") {
  TestStore store;
  TraceContext root = CallersChild();  // a new trace's root: no parent, no tracestate
  root.trace_id = "0af7651916cd43dd8448eb211c80319c";
  root.span_id = "b9c7c989f97918e1";
  root.parent_id.clear();
  root.state.clear();
  TraceContext unsampled = CallersChild();
  unsampled.flags = 0x00;
  MustCommit(*store,
             Batch(InsertGlobal{Traced("child", CallersChild())},
                   InsertGlobal{Traced("root", root)}, InsertGlobal{Traced("unsampled", unsampled)},
                   InsertGlobal{Traced("none", TraceContext{})}));

  CHECK(MustLoad(*store, "child").global.trace == CallersChild());
  CHECK(MustLoad(*store, "root").global.trace == root);
  CHECK(MustLoad(*store, "unsampled").global.trace == unsampled);
  CHECK(MustLoad(*store, "none").global.trace == TraceContext{});
  CHECK(MustLoad(*store, "none").global.trace.empty());
  CHECK(ListedSpans(*store) ==
        std::vector<TraceContext>{TraceContext{}, unsampled, root, CallersChild()});
}

TEST_CASE("updating a transaction leaves its span as inserted", "[storage][trace]") {
  TestStore store;
  MustCommit(*store, Batch(InsertGlobal{Traced("traced", CallersChild())},
                           InsertGlobal{Traced("untraced", TraceContext{})}));

  // A status change whose record carries another span, or none: neither is written.
  GlobalRecord aborting = MustLoad(*store, "traced").global;
  aborting.status = GlobalStatus::kAborting;
  aborting.update_time = T0() + 1s;
  aborting.rollback_reason = "timeout_to_fail";
  aborting.trace = TraceContext{};
  MustCommit(*store, Batch(UpdateGlobal{aborting, GlobalStatus::kPrepared}));
  GlobalRecord submitted = MustLoad(*store, "untraced").global;
  submitted.status = GlobalStatus::kSubmitted;
  submitted.trace = CallersChild();
  MustCommit(*store, Batch(UpdateGlobal{submitted, GlobalStatus::kPrepared}));

  const GlobalRecord traced = MustLoad(*store, "traced").global;
  CHECK(traced.status == GlobalStatus::kAborting);
  CHECK(traced.trace == CallersChild());
  const GlobalRecord untraced = MustLoad(*store, "untraced").global;
  CHECK(untraced.status == GlobalStatus::kSubmitted);
  CHECK(untraced.trace.empty());
  CHECK(ListedSpans(*store) == std::vector<TraceContext>{TraceContext{}, CallersChild()});
}

TEST_CASE(
    "a span that is not a valid W3C one is stored as none, and a tracestate W3C drops as none",
    "[storage][trace]") {
  TestStore store;
  TraceContext upper_case = CallersChild();
  upper_case.span_id = "00F067AA0BA902B7";
  TraceContext no_span = CallersChild();
  no_span.span_id.clear();
  TraceContext bad_parent = CallersChild();
  bad_parent.parent_id = "b7ad6b71";
  TraceContext odd_state = CallersChild();
  odd_state.state = "k=\xff\xfe,x=\n";
  MustCommit(*store, Batch(InsertGlobal{Traced("upper", upper_case)},
                           InsertGlobal{Traced("no-span", no_span)},
                           InsertGlobal{Traced("bad-parent", bad_parent)},
                           InsertGlobal{Traced("odd-state", odd_state)}));

  CHECK(MustLoad(*store, "upper").global.trace.empty());
  CHECK(MustLoad(*store, "no-span").global.trace.empty());
  CHECK(MustLoad(*store, "bad-parent").global.trace.empty());
  TraceContext without_state = CallersChild();
  without_state.state.clear();
  CHECK(MustLoad(*store, "odd-state").global.trace == without_state);
}

TEST_CASE("a transaction's span counts in its creator's unfinished bytes",
          "[storage][trace][quota]") {
  TestStore store;
  GlobalRecord plain = MakeGlobal("plain");
  plain.creator = "alice";
  GlobalRecord traced = Traced("traced", CallersChild());
  traced.creator = "bob";
  MustCommit(*store, Batch(InsertGlobal{plain}, InsertGlobal{traced}));
  const auto bytes_of = [&](const std::string& creator) {
    auto usage = store->UnfinishedUsage(creator);
    INFO(usage.status().ToString());
    REQUIRE(usage);
    REQUIRE(usage->size() == 1);
    return usage->front().bytes;
  };
  // As stored: its traceparent (55 bytes), its caller's span id (16) and its tracestate.
  CHECK(bytes_of("bob") - bytes_of("alice") == 55 + 16 + CallersChild().state.size());
}

}  // namespace
}  // namespace settle::storage::testing
