#!/usr/bin/python3
"""tsl_probe.py — hostile-client probes for daemon_hardening.sh (no stubs needed:
raw bytes through grpc's generic calls). Every probe prints one JSON line.

  health TARGET                       Health/Check on a new channel
  big TARGET MIB [--gzip] [--token T] one Plan request of MIB MiB (zeros)
  exhaust TARGET TCP UNIX HTTP N      N idle TCP and N idle unix connects; health on an
                                      old channel and /healthz while they are held, then
                                      whether a new channel is served once they are closed
  idle TCP SECONDS                    does a silent TCP connect get closed within SECONDS?
"""
import json
import socket
import sys
import time
import urllib.request

import grpc

HEALTH = "/grpc.health.v1.Health/Check"
PLAN = "/tessel.v1.Planner/Plan"
STATUS = {1: "SERVING", 2: "NOT_SERVING"}


def call(ch, method, payload, timeout=5, token=None, gzip=False):
    md = [("authorization", "Bearer " + token)] if token else None
    f = ch.unary_unary(method, request_serializer=None, response_deserializer=None)
    try:
        kw = {"compression": grpc.Compression.Gzip} if gzip else {}
        resp = f(payload, timeout=timeout, metadata=md, **kw)
        return "OK", resp
    except grpc.RpcError as e:
        return e.code().name, e.details()


def fresh(target):
    """A channel with its own connection (not one shared from grpc's global pool)."""
    return grpc.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)])


def health(ch, timeout=3):
    code, resp = call(ch, HEALTH, b"", timeout)
    if code != "OK":
        return code
    return STATUS.get(resp[1] if len(resp) >= 2 else 0, "UNKNOWN")


def healthz(http):
    try:
        return urllib.request.urlopen("http://%s/healthz" % http, timeout=3).status
    except urllib.error.HTTPError as e:
        return e.code
    except Exception as e:  # noqa: BLE001 - any failure is an answer here
        return str(e)


def connect_many(kind, addr, n):
    socks = []
    for _ in range(n):
        try:
            if kind == "tcp":
                host, port = addr.rsplit(":", 1)
                s = socket.create_connection((host, int(port)), timeout=2)
            else:
                s = socket.socket(socket.AF_UNIX)
                s.settimeout(2)
                s.connect(addr)
            socks.append(s)
        except OSError:
            break
    return socks


def exhaust(target, tcp, unix, http, n):
    old = grpc.insecure_channel(target)
    out = {"before": health(old)}
    held = connect_many("tcp", tcp, n) + connect_many("unix", unix, n)
    out["held"] = len(held)
    time.sleep(1.0)
    out["old_channel_during"] = health(old)
    out["healthz_during"] = healthz(http)
    for s in held:
        s.close()
    out["after"] = "never"
    deadline = time.time() + 30
    while time.time() < deadline:
        with fresh(target) as a, fresh(tcp) as b:
            if health(a, 2) == health(b, 2) == "SERVING" and healthz(http) == 200:
                out["after"] = "SERVING"
                break
        time.sleep(0.5)
    print(json.dumps(out))


def idle(tcp, seconds):
    host, port = tcp.rsplit(":", 1)
    s = socket.create_connection((host, int(port)), timeout=seconds)
    t0 = time.time()
    closed = False
    try:
        while time.time() - t0 < seconds:
            if not s.recv(4096):  # the server's SETTINGS/GOAWAY first, then EOF
                closed = True
                break
    except OSError:
        closed = True
    print(json.dumps({"closed": closed, "after_s": round(time.time() - t0, 1)}))


def main(argv):
    cmd = argv[1]
    if cmd == "health":
        print(json.dumps({"status": health(fresh(argv[2]))}))
    elif cmd == "big":
        token = argv[argv.index("--token") + 1] if "--token" in argv else None
        payload = bytes(int(argv[3]) << 20)
        ch = grpc.insecure_channel(argv[2], options=[("grpc.max_send_message_length", -1),
                                                     ("grpc.use_local_subchannel_pool", 1)])
        code, details = call(ch, PLAN, payload, 30, token, "--gzip" in argv)
        print(json.dumps({"code": code, "details": details if isinstance(details, str) else ""}))
    elif cmd == "exhaust":
        exhaust(argv[2], argv[3], argv[4], argv[5], int(argv[6]))
    elif cmd == "idle":
        idle(argv[2], float(argv[3]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
