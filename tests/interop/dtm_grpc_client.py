#!/usr/bin/python3
"""A DTM gRPC client that is not Settle's: Python's grpcio with DTM's proto compiled by protoc
here, as a Python service would build it. Through settled's gRPC API (docs/protocol.md section
10) it drives a saga, a TCC and a message to the HTTP participant the test runs, and checks
what settled answers (the test then checks what that participant received); then a saga, TCCs
and messages to Python gRPC participants served here (dtm_grpc_participant.py), and checks
that settled called every branch with DTM's metadata and the payload's bytes unchanged.

Usage: dtm_grpc_client.py GRPC_PORT PARTICIPANT_BASE_URL PROTO_DIR WORK_DIR
Prints "python grpc client: done" and exits 0 when everything was as expected; otherwise
prints what was not (FAILED: ... on stderr) and "python grpc client: failed", and exits 1.
Every call and wait has a deadline, and the whole run is stopped after 80 seconds.
"""
import json
import os
import subprocess
import sys
import threading

import grpc

from dtm_grpc_participant import FAILURE, ONGOING, GrpcParticipant

TIMEOUT = 20  # seconds, for each call to settled and each wait for a participant's calls
RUN_LIMIT = 80  # seconds for the whole run; the test waits 90 for the last line

# Protobuf messages' bytes, as a gRPC service's client would put them in BinPayloads: field 1
# = 300 (a byte that is not UTF-8 included), and field 1 = 30 with field 2 = bytes ff 00 01.
PB_300 = b"\x08\xac\x02"
PB_30_BYTES = b"\x08\x1e\x12\x03\xff\x00\x01"


def compile_proto(proto_dir, work_dir):
    subprocess.run(
        ["protoc", "--proto_path=" + proto_dir, "--proto_path=/usr/include",
         "--python_out=" + work_dir, "--grpc_python_out=" + work_dir,
         "--plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin",
         proto_dir + "/dtmgimp.proto"],
        check=True, timeout=TIMEOUT)
    sys.path.insert(0, work_dir)


class Checks:
    def __init__(self):
        self.failures = []

    def expect(self, what, condition):
        if not condition:
            self.failures.append(what)
        return condition

    def expect_code(self, what, call, code):
        """Runs call(); expects it to end with `code` (grpc.StatusCode.OK: no error)."""
        try:
            call()
            got, details = grpc.StatusCode.OK, ""
        except grpc.RpcError as e:
            got, details = e.code(), e.details()
        self.expect("%s: %s expected, got %s %s" % (what, code, got, details), got == code)
        return details

    def expect_branch_call(self, call, method, gid, trans_type, branch_id, op, payload):
        """One call that settled made to a gRPC participant, as DTM makes it."""
        what = "%s %s %s" % (gid, branch_id, op)
        m = call.metadata
        self.expect(what + ": method " + call.method, call.method == method)
        self.expect(what + ": dtm-gid " + m.get("dtm-gid", "(none)"), m.get("dtm-gid") == gid)
        self.expect(what + ": dtm-trans_type " + m.get("dtm-trans_type", "(none)"),
                    m.get("dtm-trans_type") == trans_type)
        self.expect(what + ": dtm-branch_id " + m.get("dtm-branch_id", "(none)"),
                    m.get("dtm-branch_id") == branch_id)
        self.expect(what + ": dtm-op " + m.get("dtm-op", "(none)"), m.get("dtm-op") == op)
        # This coordinator's gRPC address; the test's settled has a port chosen at start, so
        # it is empty there, but the key is sent, as DTM sends it.
        self.expect(what + ": dtm-dtm not sent", "dtm-dtm" in m)
        self.expect(what + ": payload %r, expected %r" % (call.payload, payload),
                    call.payload == payload)


def drive_http_participant(dtm, pb, base, checks):
    """A saga, a TCC and a message to the test's HTTP participant, and bad input."""
    body = json.dumps({"amount": 30}).encode()

    gid = dtm.NewGid(pb.google_dot_protobuf_dot_empty__pb2.Empty(), timeout=TIMEOUT).Gid
    checks.expect("NewGid answers a gid", len(gid) > 10)

    # A saga, waiting for its result.
    saga = pb.DtmRequest(
        Gid="py-saga", TransType="saga",
        TransOptions=pb.DtmTransOptions(WaitResult=True),
        Steps=json.dumps([{"action": base + "/TransOut", "compensate": base + "/TransOutRevert"},
                          {"action": base + "/TransIn", "compensate": base + "/TransInRevert"}]),
        BinPayloads=[body, body])
    dtm.Submit(saga, timeout=TIMEOUT)

    # A TCC: prepare, two branches, submit.
    tcc = pb.DtmRequest(Gid="py-tcc", TransType="tcc", Steps="null",
                        TransOptions=pb.DtmTransOptions(WaitResult=True))
    dtm.Prepare(tcc, timeout=TIMEOUT)
    for branch_id in ("01", "02"):
        dtm.RegisterBranch(pb.DtmBranchRequest(
            Gid="py-tcc", TransType="tcc", BranchID=branch_id, BusiPayload=body,
            Data={"confirm": base + "/Confirm" + branch_id,
                  "cancel": base + "/Cancel" + branch_id}), timeout=TIMEOUT)
    dtm.Submit(tcc, timeout=TIMEOUT)

    # A message to a topic's subscribers: subscribed, prepared, submitted.
    dtm.Subscribe(pb.DtmTopicRequest(Topic="py-orders", URL=base + "/Points"), timeout=TIMEOUT)
    msg = pb.DtmRequest(
        Gid="py-msg", TransType="msg", Steps=json.dumps([{"action": "topic://py-orders"}]),
        BinPayloads=[body], QueryPrepared=base + "/QueryPrepared")
    dtm.Prepare(msg, timeout=TIMEOUT)
    dtm.Submit(msg, timeout=TIMEOUT)

    # Bad input: the field is named with the proto's names.
    bad = pb.DtmRequest(Gid="py-bad", TransType="saga", Steps=saga.Steps, BinPayloads=[body])
    details = checks.expect_code("a saga with 2 steps and 1 payload",
                                 lambda: dtm.Submit(bad, timeout=TIMEOUT),
                                 grpc.StatusCode.INVALID_ARGUMENT)
    checks.expect("the refusal names BinPayloads: " + details, details.startswith("BinPayloads:"))
    # A repeat that differs: ABORTED, DTM's FAILURE.
    tcc_again = pb.DtmRequest(Gid="py-tcc", TransType="tcc",
                              TransOptions=pb.DtmTransOptions(TimeoutToFail=99))
    checks.expect_code("a differing repeat of a submitted TCC's prepare",
                       lambda: dtm.Prepare(tcc_again, timeout=TIMEOUT), grpc.StatusCode.ABORTED)


def drive_grpc_participants(dtm, pb, checks):
    """Every mode to Python gRPC participants, as DTM's gRPC branches are called."""
    p = GrpcParticipant()
    try:
        saga_to_grpc(dtm, pb, p, checks)
        tcc_to_grpc(dtm, pb, p, checks)
        msg_to_grpc(dtm, pb, p, checks)
    finally:
        p.stop()


def saga_to_grpc(dtm, pb, p, checks):
    # Two steps; the second answers ABORTED (FAILURE): both are compensated, the second first.
    p.set_default("/bank.Bank/TransIn", FAILURE)
    saga = pb.DtmRequest(
        Gid="py-grpc-saga", TransType="saga", TransOptions=pb.DtmTransOptions(WaitResult=True),
        Steps=json.dumps([{"action": p.url("bank.Bank/TransOut"),
                           "compensate": p.url("bank.Bank/TransOutRevert")},
                          {"action": p.url("bank.Bank/TransIn"),
                           "compensate": p.url("bank.Bank/TransInRevert")}]),
        BinPayloads=[PB_300, PB_30_BYTES])
    # A completed wait_result pass that ended failed is DTM's FAILURE.
    checks.expect_code("a saga whose second step answers ABORTED",
                       lambda: dtm.Submit(saga, timeout=TIMEOUT), grpc.StatusCode.ABORTED)
    checks.expect("the saga's compensations are called",
                  p.wait_for_calls("/bank.Bank/TransOutRevert", 1, TIMEOUT))
    calls = [(c.method, c.metadata.get("dtm-op")) for c in p.calls()
             if c.metadata.get("dtm-gid") == "py-grpc-saga"]
    checks.expect("the saga's calls in order: %r" % calls,
                  calls == [("/bank.Bank/TransOut", "action"), ("/bank.Bank/TransIn", "action"),
                            ("/bank.Bank/TransInRevert", "compensate"),
                            ("/bank.Bank/TransOutRevert", "compensate")])
    expected = [("/bank.Bank/TransOut", "01", "action", PB_300),
                ("/bank.Bank/TransIn", "02", "action", PB_30_BYTES),
                ("/bank.Bank/TransInRevert", "02", "compensate", PB_30_BYTES),
                ("/bank.Bank/TransOutRevert", "01", "compensate", PB_300)]
    for method, branch_id, op, payload in expected:
        got = p.calls_to(method)
        if checks.expect("%s called once, not %d times" % (method, len(got)), len(got) == 1):
            checks.expect_branch_call(got[0], method, "py-grpc-saga", "saga", branch_id, op,
                                      payload)

    # A step that answers FAILED_PRECONDITION (ONGOING) is called again until it answers OK.
    p.script("/shop.Stock/Reserve", [ONGOING])
    ongoing = pb.DtmRequest(
        Gid="py-grpc-ongoing", TransType="saga",
        Steps=json.dumps([{"action": p.url("shop.Stock/Reserve")}]), BinPayloads=[PB_300])
    dtm.Submit(ongoing, timeout=TIMEOUT)
    if checks.expect("an ONGOING step is called again",
                     p.wait_for_calls("/shop.Stock/Reserve", 2, TIMEOUT)):
        for call in p.calls_to("/shop.Stock/Reserve")[:2]:
            checks.expect_branch_call(call, "/shop.Stock/Reserve", "py-grpc-ongoing", "saga",
                                      "01", "action", PB_300)


def tcc_to_grpc(dtm, pb, p, checks):
    # Committed: each branch's confirm gets its own BusiPayload; no cancel is called.
    payloads = {"01": PB_300, "02": PB_30_BYTES}
    tcc = pb.DtmRequest(Gid="py-grpc-tcc", TransType="tcc", Steps="null",
                        TransOptions=pb.DtmTransOptions(WaitResult=True))
    dtm.Prepare(tcc, timeout=TIMEOUT)
    for branch_id, payload in payloads.items():
        dtm.RegisterBranch(pb.DtmBranchRequest(
            Gid="py-grpc-tcc", TransType="tcc", BranchID=branch_id, BusiPayload=payload,
            Data={"confirm": p.url("bank.Tcc/Confirm"), "cancel": p.url("bank.Tcc/Cancel")}),
            timeout=TIMEOUT)
    checks.expect_code("the TCC's submit, waiting for its confirms",
                       lambda: dtm.Submit(tcc, timeout=TIMEOUT), grpc.StatusCode.OK)
    confirms = sorted(p.calls_to("/bank.Tcc/Confirm"),
                      key=lambda c: c.metadata.get("dtm-branch_id", ""))
    if checks.expect("2 confirms, not %d" % len(confirms), len(confirms) == 2):
        for call, (branch_id, payload) in zip(confirms, sorted(payloads.items())):
            checks.expect_branch_call(call, "/bank.Tcc/Confirm", "py-grpc-tcc", "tcc", branch_id,
                                      "confirm", payload)
    checks.expect("a committed TCC is not cancelled", not p.calls_to("/bank.Tcc/Cancel"))

    # Aborted: its branch is cancelled; the completed wait_result abort is DTM's FAILURE.
    aborted = pb.DtmRequest(Gid="py-grpc-tcc-abort", TransType="tcc", Steps="null",
                            TransOptions=pb.DtmTransOptions(WaitResult=True),
                            RollbackReason="the Try of 01 failed")
    dtm.Prepare(aborted, timeout=TIMEOUT)
    dtm.RegisterBranch(pb.DtmBranchRequest(
        Gid="py-grpc-tcc-abort", TransType="tcc", BranchID="01", BusiPayload=PB_300,
        Data={"confirm": p.url("bank.Tcc/Confirm"), "cancel": p.url("bank.Tcc/Cancel")}),
        timeout=TIMEOUT)
    details = checks.expect_code("the TCC's abort, waiting for its cancel",
                                 lambda: dtm.Abort(aborted, timeout=TIMEOUT),
                                 grpc.StatusCode.ABORTED)
    checks.expect("the abort answers its reason: " + details, details == "the Try of 01 failed")
    cancels = p.calls_to("/bank.Tcc/Cancel")
    if checks.expect("1 cancel, not %d" % len(cancels), len(cancels) == 1):
        checks.expect_branch_call(cancels[0], "/bank.Tcc/Cancel", "py-grpc-tcc-abort", "tcc",
                                  "01", "cancel", PB_300)


def msg_to_grpc(dtm, pb, p, checks):
    # Prepared with a gRPC back-check, submitted: delivered to a topic's gRPC subscriber (step
    # 01) and to a gRPC step (02), each with its step's payload.
    dtm.Subscribe(pb.DtmTopicRequest(Topic="py-grpc-points", URL=p.url("shop.Points/Add")),
                  timeout=TIMEOUT)
    msg = pb.DtmRequest(
        Gid="py-grpc-msg", TransType="msg",
        Steps=json.dumps([{"action": "topic://py-grpc-points"},
                          {"action": p.url("shop.Mail/Send")}]),
        BinPayloads=[PB_300, PB_30_BYTES], QueryPrepared=p.url("shop.Orders/QueryPrepared"))
    dtm.Prepare(msg, timeout=TIMEOUT)
    dtm.Submit(msg, timeout=TIMEOUT)
    for method, branch_id, payload in (("/shop.Points/Add", "01", PB_300),
                                       ("/shop.Mail/Send", "02", PB_30_BYTES)):
        if checks.expect(method + " gets the message", p.wait_for_calls(method, 1, TIMEOUT)):
            checks.expect_branch_call(p.calls_to(method)[0], method, "py-grpc-msg", "msg",
                                      branch_id, "action", payload)

    # Prepared and left so: at its timeout_to_fail settled asks the gRPC back-check (op msg,
    # branch 00, an empty message), which answers OK (committed): it is delivered.
    unsent = pb.DtmRequest(
        Gid="py-grpc-msg-check", TransType="msg",
        TransOptions=pb.DtmTransOptions(TimeoutToFail=1),
        Steps=json.dumps([{"action": p.url("shop.Mail/Receipt")}]), BinPayloads=[PB_300],
        QueryPrepared=p.url("shop.Orders/QueryPrepared"))
    dtm.Prepare(unsent, timeout=TIMEOUT)
    if checks.expect("a prepared message's back-check and delivery",
                     p.wait_for_calls("/shop.Mail/Receipt", 1, TIMEOUT)):
        checks_of_it = [c for c in p.calls_to("/shop.Orders/QueryPrepared")
                        if c.metadata.get("dtm-gid") == "py-grpc-msg-check"]
        if checks.expect("one back-check, not %d" % len(checks_of_it), len(checks_of_it) == 1):
            checks.expect_branch_call(checks_of_it[0], "/shop.Orders/QueryPrepared",
                                      "py-grpc-msg-check", "msg", "00", "msg", b"")
        checks.expect_branch_call(p.calls_to("/shop.Mail/Receipt")[0], "/shop.Mail/Receipt",
                                  "py-grpc-msg-check", "msg", "01", "action", PB_300)


def describe(error):
    if isinstance(error, grpc.RpcError):
        return "gRPC %s: %s" % (error.code(), error.details())
    return "%s: %s" % (type(error).__name__, error)


def give_up():
    print("FAILED: the run did not end within %d s" % RUN_LIMIT, file=sys.stderr, flush=True)
    print("python grpc client: failed (timed out)", flush=True)
    os._exit(2)


def main():
    port, base, proto_dir, work_dir = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    watchdog = threading.Timer(RUN_LIMIT, give_up)
    watchdog.daemon = True
    watchdog.start()
    checks = Checks()
    step = "compiling DTM's proto with protoc"
    try:
        compile_proto(proto_dir, work_dir)
        import dtmgimp_pb2 as pb  # noqa: E402 (generated above)
        import dtmgimp_pb2_grpc  # noqa: E402

        step = "connecting to settled's gRPC API at 127.0.0.1:" + port
        channel = grpc.insecure_channel("127.0.0.1:" + port)
        grpc.channel_ready_future(channel).result(timeout=TIMEOUT)
        dtm = dtmgimp_pb2_grpc.DtmStub(channel)
        step = "driving the HTTP participant at " + base
        drive_http_participant(dtm, pb, base, checks)
        step = "driving the Python gRPC participants"
        drive_grpc_participants(dtm, pb, checks)
        channel.close()
    except grpc.FutureTimeoutError:
        checks.failures.append("%s: not ready within %d s" % (step, TIMEOUT))
    except Exception as e:  # noqa: BLE001 (any error is reported, with where it happened)
        checks.failures.append("%s: %s" % (step, describe(e)))

    for failure in checks.failures:
        print("FAILED: " + failure, file=sys.stderr)
    sys.stderr.flush()
    print("python grpc client: " + ("done" if not checks.failures else "failed"), flush=True)
    watchdog.cancel()
    return 1 if checks.failures else 0


if __name__ == "__main__":
    sys.exit(main())
