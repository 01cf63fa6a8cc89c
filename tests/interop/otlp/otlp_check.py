#!/usr/bin/python3
"""Checks OTLP/HTTP JSON bodies as an OpenTelemetry Collector reads them.

Usage: otlp_check.py BODY_FILE...

Each body must be an ExportTraceServiceRequest of opentelemetry-proto (the .proto files beside
this script, compiled here with protoc) in protobuf's JSON mapping, with OTLP's one exception:
trace and span ids are hex, not base64. Every member must be known to the proto (an unknown
one fails, as it would in a strict reader), every enum a number or name it defines, every
int64 a decimal string or number; ids must be 16 bytes (traces) and 8 bytes (spans), not all
zero; a span needs a name and must not end before it starts. Prints "otlp check: N spans" and
exits 0, or names the first problem on stderr and exits 1.
"""
import base64
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROTOS = [
    "opentelemetry/proto/common/v1/common.proto",
    "opentelemetry/proto/resource/v1/resource.proto",
    "opentelemetry/proto/trace/v1/trace.proto",
    "opentelemetry/proto/collector/trace/v1/trace_service.proto",
]


def fail(message):
    print("otlp check: " + message, file=sys.stderr)
    sys.exit(1)


def hex_id(holder, key, size, where):
    """Turns the hex id holder[key] into the base64 protobuf's JSON mapping reads."""
    if key not in holder:
        return
    text = holder[key]
    if not isinstance(text, str) or len(text) != 2 * size:
        fail("%s: %s %r is not %d hex digits" % (where, key, text, 2 * size))
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        fail("%s: %s %r is not hex" % (where, key, text))
    if raw == bytes(size):
        fail("%s: %s is all zero" % (where, key))
    holder[key] = base64.b64encode(raw).decode()


def main():
    out = tempfile.mkdtemp(prefix="otlp-check-")
    subprocess.check_call(["protoc", "-I", HERE, "--python_out", out] + PROTOS)
    sys.path.insert(0, out)
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

    spans = 0
    for path in sys.argv[1:]:
        with open(path, encoding="utf-8") as f:
            body = json.load(f)
        for rs in body.get("resourceSpans", []):
            for ss in rs.get("scopeSpans", []):
                for i, span in enumerate(ss.get("spans", [])):
                    where = "%s span %d" % (path, i)
                    for key in ("traceId", "spanId"):
                        if key not in span:
                            fail("%s: no %s" % (where, key))
                    hex_id(span, "traceId", 16, where)
                    hex_id(span, "spanId", 8, where)
                    hex_id(span, "parentSpanId", 8, where)
        request = trace_service_pb2.ExportTraceServiceRequest()
        try:
            json_format.ParseDict(body, request, ignore_unknown_fields=False)
        except json_format.ParseError as e:
            fail("%s: %s" % (path, e))
        for rs in request.resource_spans:
            for ss in rs.scope_spans:
                for span in ss.spans:
                    if not span.name:
                        fail("%s: a span without a name" % path)
                    if span.end_time_unix_nano < span.start_time_unix_nano:
                        fail("%s: span %s ends before it starts" % (path, span.name))
                    if span.start_time_unix_nano == 0:
                        fail("%s: span %s has no start" % (path, span.name))
                    spans += 1
    print("otlp check: %d spans" % spans)


main()
