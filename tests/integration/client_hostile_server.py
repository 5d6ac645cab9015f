#!/usr/bin/env python3
"""client_hostile_server.py TESSELCTL — tesselctl against a server that answers every
call with an error whose message carries a terminal escape sequence and a newline
(a hostile or broken tesseld, or something else listening on the socket).

tesselctl prints a server's message on the caller's terminal: it must come out as one
line (a newline as "; ") with no control byte in it ('?' in its place) — before, the
ESC went through and acted on the terminal. Needs Debian's python3-grpcio (exit 77,
skip, without it)."""
import os
import subprocess
import sys
import tempfile
from concurrent import futures

try:
    import grpc
except ImportError:
    print("SKIP: python3 lacks grpc (python3-grpcio)")
    sys.exit(77)

MESSAGE = "plan_fingerprint: 'x\x1b[2J\x07' is wrong\nsecond line"


class Refuse(grpc.GenericRpcHandler):
    """Every method: INVALID_ARGUMENT with MESSAGE."""

    def service(self, details):
        def refuse(request, context):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, MESSAGE)

        return grpc.unary_unary_rpc_method_handler(refuse)


def main():
    ctl = sys.argv[1]
    failures = 0
    with tempfile.TemporaryDirectory() as d:
        sock = os.path.join(d, "s")
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        server.add_generic_rpc_handlers((Refuse(),))
        server.add_insecure_port("unix:" + sock)
        server.start()
        try:
            for args in (["plans", "show", "0123456789abcdef"], ["plans", "list"]):
                r = subprocess.run([ctl, "--server", "unix:" + sock] + args, capture_output=True,
                                   timeout=60)
                err = r.stderr.decode("utf-8", "replace")
                bad = [c for c in err.rstrip("\n") if ord(c) < 0x20 or ord(c) == 0x7f]
                if r.returncode == 2 and not bad and "'x?[2J?' is wrong; second line" in err:
                    print("ok: %s: the server's message on one line, no control byte" % args[:2])
                else:
                    failures += 1
                    print("FAIL: %s: exit %d, stderr %r" % (args[:2], r.returncode, err))
        finally:
            server.stop(0)
    print("%d check(s) failed" % failures if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
