#!/usr/bin/python3
"""A DTM gRPC client that is not Settle's: Python's grpcio with DTM's proto compiled by protoc
here, as a Python service would build it. It drives a saga, a TCC and a message through
settled's gRPC API (docs/protocol.md section 10) to the HTTP participant the test runs, and
checks what settled answers; the test then checks what the participant received.

Usage: dtm_grpc_client.py GRPC_PORT PARTICIPANT_BASE_URL PROTO_DIR WORK_DIR
Exits 0 when every answer was as expected; prints what was not, and exits 1, otherwise.
"""
import json
import subprocess
import sys

import grpc


def compile_proto(proto_dir, work_dir):
    subprocess.run(
        ["protoc", "--proto_path=" + proto_dir, "--proto_path=/usr/include",
         "--python_out=" + work_dir, "--grpc_python_out=" + work_dir,
         "--plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin",
         proto_dir + "/dtmgimp.proto"],
        check=True)
    sys.path.insert(0, work_dir)


def main():
    port, base, proto_dir, work_dir = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    compile_proto(proto_dir, work_dir)
    import dtmgimp_pb2  # noqa: E402 (generated above)
    import dtmgimp_pb2_grpc  # noqa: E402

    failures = []

    def expect(what, condition):
        if not condition:
            failures.append(what)

    channel = grpc.insecure_channel("127.0.0.1:" + port)
    grpc.channel_ready_future(channel).result(timeout=20)
    dtm = dtmgimp_pb2_grpc.DtmStub(channel)
    body = json.dumps({"amount": 30}).encode()

    gid = dtm.NewGid(dtmgimp_pb2.google_dot_protobuf_dot_empty__pb2.Empty(), timeout=20).Gid
    expect("NewGid answers a gid", len(gid) > 10)

    # A saga, waiting for its result.
    saga = dtmgimp_pb2.DtmRequest(
        Gid="py-saga", TransType="saga",
        TransOptions=dtmgimp_pb2.DtmTransOptions(WaitResult=True),
        Steps=json.dumps([{"action": base + "/TransOut", "compensate": base + "/TransOutRevert"},
                          {"action": base + "/TransIn", "compensate": base + "/TransInRevert"}]),
        BinPayloads=[body, body])
    dtm.Submit(saga, timeout=20)

    # A TCC: prepare, two branches, submit.
    tcc = dtmgimp_pb2.DtmRequest(Gid="py-tcc", TransType="tcc", Steps="null",
                                 TransOptions=dtmgimp_pb2.DtmTransOptions(WaitResult=True))
    dtm.Prepare(tcc, timeout=20)
    for branch_id in ("01", "02"):
        dtm.RegisterBranch(dtmgimp_pb2.DtmBranchRequest(
            Gid="py-tcc", TransType="tcc", BranchID=branch_id, BusiPayload=body,
            Data={"confirm": base + "/Confirm" + branch_id,
                  "cancel": base + "/Cancel" + branch_id}), timeout=20)
    dtm.Submit(tcc, timeout=20)

    # A message to a topic's subscribers: subscribed, prepared, submitted.
    dtm.Subscribe(dtmgimp_pb2.DtmTopicRequest(Topic="py-orders", URL=base + "/Points"),
                  timeout=20)
    msg = dtmgimp_pb2.DtmRequest(
        Gid="py-msg", TransType="msg", Steps=json.dumps([{"action": "topic://py-orders"}]),
        BinPayloads=[body], QueryPrepared=base + "/QueryPrepared")
    dtm.Prepare(msg, timeout=20)
    dtm.Submit(msg, timeout=20)

    # Bad input: the field is named with the proto's names.
    try:
        bad = dtmgimp_pb2.DtmRequest(Gid="py-bad", TransType="saga", Steps=saga.Steps,
                                     BinPayloads=[body])
        dtm.Submit(bad, timeout=20)
        failures.append("a saga with 2 steps and 1 payload was accepted")
    except grpc.RpcError as e:
        expect("INVALID_ARGUMENT for too few payloads, not " + str(e.code()),
               e.code() == grpc.StatusCode.INVALID_ARGUMENT)
        expect("the refusal names BinPayloads: " + e.details(),
               e.details().startswith("BinPayloads:"))
    # A repeat that differs: ABORTED, DTM's FAILURE.
    try:
        tcc_again = dtmgimp_pb2.DtmRequest(
            Gid="py-tcc", TransType="tcc",
            TransOptions=dtmgimp_pb2.DtmTransOptions(TimeoutToFail=99))
        dtm.Prepare(tcc_again, timeout=20)
        failures.append("a differing repeat of a submitted TCC's prepare was accepted")
    except grpc.RpcError as e:
        expect("ABORTED for a prepare of a finished TCC, not " + str(e.code()),
               e.code() == grpc.StatusCode.ABORTED)

    for failure in failures:
        print("FAILED: " + failure, file=sys.stderr)
    print("python grpc client: " + ("done" if not failures else "failed"), flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
