"""A gRPC participant as a Python service built on grpcio serves DTM's gRPC branches, for the
interop test (dtm_grpc_client.py): no compiled service proto, one generic handler that serves
every method `/package.Service/Method` with the request message's bytes as they came and an
empty message as the answer. A branch URL in DTM's form names it: `127.0.0.1:PORT/pkg.Svc/M`.

Each call is recorded (method, the dtm-* metadata, the payload). A method answers OK (DTM's
SUCCESS) unless told otherwise: ABORTED is DTM's FAILURE, FAILED_PRECONDITION its ONGOING
(docs/protocol.md section 10.4). Thread-safe; every wait has a deadline.
"""
import collections
import concurrent.futures
import threading
import time

import grpc

# What a DTM gRPC participant answers for each of DTM's results.
SUCCESS = grpc.StatusCode.OK
FAILURE = grpc.StatusCode.ABORTED
ONGOING = grpc.StatusCode.FAILED_PRECONDITION

Call = collections.namedtuple("Call", ["method", "metadata", "payload"])


class _EveryMethod(grpc.GenericRpcHandler):
    """Serves any unary method: no deserializer, so the handler gets the message's bytes."""

    def __init__(self, participant):
        self._participant = participant

    def service(self, handler_call_details):
        method = handler_call_details.method
        participant = self._participant

        def answer(payload, context):
            return participant._answer(method, payload, context)

        return grpc.unary_unary_rpc_method_handler(answer, request_deserializer=None,
                                                   response_serializer=None)


class GrpcParticipant:
    def __init__(self):
        self._lock = threading.Condition()
        self._calls = []
        self._scripts = {}   # method -> [status codes], answered in order, then the default
        self._defaults = {}  # method -> status code
        self._server = grpc.server(concurrent.futures.ThreadPoolExecutor(max_workers=8),
                                   handlers=[_EveryMethod(self)])
        self.port = self._server.add_insecure_port("127.0.0.1:0")
        if self.port == 0:
            raise RuntimeError("the Python gRPC participant could not listen on 127.0.0.1")
        self._server.start()

    def stop(self):
        self._server.stop(grace=1).wait(timeout=5)

    def url(self, method):
        """DTM's form of a gRPC branch URL: host:port/package.Service/Method."""
        return "127.0.0.1:%d/%s" % (self.port, method)

    def script(self, method, codes):
        """The next calls of `method` ("/shop.Points/Add") answer these codes, then the default."""
        with self._lock:
            self._scripts.setdefault(method, []).extend(codes)

    def set_default(self, method, code):
        with self._lock:
            self._defaults[method] = code

    def calls_to(self, method):
        with self._lock:
            return [c for c in self._calls if c.method == method]

    def calls(self):
        with self._lock:
            return list(self._calls)

    def wait_for_calls(self, method, count, timeout):
        """Waits until `method` was called `count` times or `timeout` seconds pass."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while sum(1 for c in self._calls if c.method == method) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._lock.wait(left)
            return True

    def _answer(self, method, payload, context):
        metadata = {}
        for key, value in context.invocation_metadata():
            metadata.setdefault(key, value)
        with self._lock:
            script = self._scripts.get(method)
            if script:
                code = script.pop(0)
            else:
                code = self._defaults.get(method, SUCCESS)
            self._calls.append(Call(method, metadata, payload))
            self._lock.notify_all()
        if code != SUCCESS:
            context.set_code(code)
            context.set_details("python participant answers " + code.name)
        return b""
