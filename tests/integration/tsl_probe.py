#!/usr/bin/python3
"""tsl_probe.py — hostile-client probes for daemon_hardening.sh (no stubs needed:
raw bytes through grpc's generic calls). Every probe prints one JSON line.

  health TARGET                       Health/Check on a new channel
  big TARGET MIB [--gzip] [--token T] one Plan request of MIB MiB (zeros)
  exhaust TARGET TCP UNIX HTTP N [--tls-ca PEM]
                                      N idle TCP and N idle unix connects; health on an
                                      old channel and /healthz while they are held, then
                                      whether a new channel is served once they are closed
                                      (over TLS on TCP with --tls-ca)
  idle TCP SECONDS                    does a silent TCP connect get closed within SECONDS?
  streams TCP N FP [TOKEN]            one HTTP/2 connection (hand-made frames), receive
                                      window 0, N ExportPlan streams for plan FP: how many
                                      did the server take, and did it keep the connection?
  scrapers HTTP N SECONDS             N clients sending "GET /metrics" a byte a second and
                                      N taking the answer of "GET /" a byte a second: how
                                      many had their connection closed by the server
                                      within SECONDS (the HTTP request deadline)
  flood TCP N FP [TOKEN]              the same N streams sent at once, before (and without)
                                      acknowledging the server's SETTINGS: how many are held
                                      open (HEADERS without END_STREAM), how many answered
                                      at once (END_STREAM: refused) or reset
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


def fresh(target, ca=None):
    """A channel with its own connection (not one shared from grpc's global pool);
    over TLS trusting the certificate in the file ca when given."""
    opts = [("grpc.use_local_subchannel_pool", 1)]
    if ca is None:
        return grpc.insecure_channel(target, options=opts)
    with open(ca, "rb") as f:
        creds = grpc.ssl_channel_credentials(root_certificates=f.read())
    return grpc.secure_channel(target, creds,
                               options=opts + [("grpc.ssl_target_name_override", "localhost")])


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


def exhaust(target, tcp, unix, http, n, ca=None):
    old = grpc.insecure_channel(target)
    out = {"before": health(old)}
    held = connect_many("tcp", tcp, n) + connect_many("unix", unix, n)
    out["held"] = len(held)
    # The daemon accepts them on its own time (a loaded machine): wait, bounded.
    deadline = time.time() + 15
    while True:
        out["old_channel_during"] = health(old)
        if out["old_channel_during"] == "NOT_SERVING" or time.time() > deadline:
            break
        time.sleep(0.2)
    out["healthz_during"] = healthz(http)
    for s in held:
        s.close()
    out["after"] = "never"
    deadline = time.time() + 30
    while time.time() < deadline:
        with fresh(target) as a, fresh(tcp, ca) as b:
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


def slow_sender(http, seconds, out, i):
    host, port = http.rsplit(":", 1)
    s = socket.create_connection((host, int(port)), timeout=5)
    req = b"GET /metrics HTTP/1.1\r\nHost: tesseld\r\nUser-Agent: slow-sender\r\n\r\n"
    t0, cut = time.time(), False
    s.settimeout(1.0)
    for b in req:
        if time.time() - t0 > seconds:
            break
        try:
            s.send(bytes([b]))
            if s.recv(4096) == b"":        # nothing is answered before the request ends
                cut = True
                break
        except socket.timeout:
            continue
        except OSError:
            cut = True
            break
    out[i] = (cut, round(time.time() - t0, 1))
    s.close()


def slow_reader(http, seconds, out, i):
    host, port = http.rsplit(":", 1)
    s = socket.create_connection((host, int(port)), timeout=5)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(b"GET / HTTP/1.1\r\nHost: tesseld\r\nUser-Agent: slow-reader\r\n\r\n")
    t0, cut = time.time(), False
    s.settimeout(1.0)
    try:
        while time.time() - t0 < seconds:
            if s.recv(1) == b"":
                cut = True
                break
            time.sleep(1.0)
        if not cut:                           # what the server sent is here: drain, then EOF?
            s.settimeout(5.0)
            while True:
                if s.recv(65536) == b"":
                    cut = True
                    break
    except OSError:
        cut = cut or not isinstance(sys.exc_info()[1], socket.timeout)
    out[i] = (cut, round(time.time() - t0, 1))
    s.close()


def scrapers(http, n, seconds):
    import threading
    out = [None] * (2 * n)
    ts = [threading.Thread(target=slow_sender, args=(http, seconds, out, i)) for i in range(n)]
    ts += [threading.Thread(target=slow_reader, args=(http, seconds, out, n + i))
           for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print(json.dumps({"n": n, "senders_cut": sum(1 for c, _ in out[:n] if c),
                      "readers_cut": sum(1 for c, _ in out[n:] if c),
                      "after_s": max(t for _, t in out)}))


def frame(kind, flags, stream, payload=b""):
    return len(payload).to_bytes(3, "big") + bytes([kind, flags]) + stream.to_bytes(4, "big") + payload


def hpack_literal(name, value):
    """Literal header field without indexing, no Huffman (RFC 7541 6.2.2)."""
    def string(s):
        b = s.encode()
        assert len(b) < 127
        return bytes([len(b)]) + b
    return b"\x00" + string(name) + string(value)


def export_streams(tcp, n, fp, token):
    """A connection whose SETTINGS (INITIAL_WINDOW_SIZE 0x4 = 0: the server may
    send us nothing) are sent, and the frames of n ExportPlan streams for fp."""
    host, port = tcp.rsplit(":", 1)
    s = socket.create_connection((host, int(port)), timeout=5)
    s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0, b"\x00\x04" + bytes(4)))
    headers = b"".join(hpack_literal(k, v) for k, v in (
        (":method", "POST"), (":scheme", "http"), (":path", "/tessel.v1.Planner/ExportPlan"),
        (":authority", "tesseld"), ("content-type", "application/grpc"), ("te", "trailers"))
        + ((("authorization", "Bearer " + token),) if token else ()))
    fpb = fp.encode()
    msg = b"\x0a" + bytes([len(fpb)]) + fpb + b"\x12\x04json"
    body = b"\x00" + len(msg).to_bytes(4, "big") + msg
    out = []
    for i in range(n):
        sid = 1 + 2 * i
        out.append(frame(1, 0x4, sid, headers) + frame(0, 0x1, sid, body))
    return s, out


def rounds(s, seconds):
    """One list of HTTP/2 frames (kind, flags, stream id, payload) per read of s
    (empty when a read timed out), for up to seconds; ends at EOF or an error."""
    buf = b""
    t0 = time.time()
    while time.time() - t0 < seconds:
        try:
            data = s.recv(65536)
            if not data:
                return
            buf += data
        except socket.timeout:
            pass
        except OSError:
            return
        got = []
        while len(buf) >= 9:
            ln = int.from_bytes(buf[:3], "big")
            if len(buf) < 9 + ln:
                break
            sid = int.from_bytes(buf[5:9], "big") & 0x7FFFFFFF
            got.append((buf[3], buf[4], sid, buf[9:9 + ln]))
            buf = buf[9 + ln:]
        yield got


def flood(tcp, n, fp, token=None, seconds=10):
    s, out = export_streams(tcp, n, fp, token)
    s.sendall(b"".join(out))                     # all at once; the SETTINGS never acked
    held, ended, reset, goaway, raw = set(), set(), set(), False, b""
    s.settimeout(0.5)
    for got in rounds(s, seconds):
        for kind, flags, sid, payload in got:
            if kind == 1 and flags & 0x1:        # HEADERS with END_STREAM: answered at once
                ended.add(sid)
                held.discard(sid)
                raw += payload
            elif kind == 1 and sid not in ended:  # HEADERS alone: the call is held open
                held.add(sid)
            elif kind == 3:
                reset.add(sid)
            elif kind == 7:
                goaway = True
        if len(held) + len(ended) + len(reset) >= n:
            break
    print(json.dumps({"sent": n, "held": len(held), "refused": len(ended), "reset": len(reset),
                      "goaway": goaway, "limit_named": b"too many calls" in raw}))


def streams(tcp, n, fp, token=None):
    s, out = export_streams(tcp, n, fp, token)
    acked = False
    refused, answered, goaway = 0, set(), False
    s.settimeout(0.5)
    sent = 0
    for got in rounds(s, 20):
        for kind, flags, sid, payload in got:
            if kind == 4 and not flags & 1:       # the server's SETTINGS: ack them
                s.sendall(frame(4, 1, 0))
                acked = True
            elif kind == 1:
                answered.add(sid)
            elif kind == 3 and int.from_bytes(payload[:4], "big") == 7:
                refused += 1                      # RST_STREAM REFUSED_STREAM
            elif kind == 7:
                goaway = True
        if acked and sent < n:                    # all streams once the settings are agreed
            try:
                s.sendall(b"".join(out[sent:]))
            except OSError:
                break
            sent = n
        if goaway or (sent == n and len(answered) + refused >= n):
            break
    print(json.dumps({"sent": sent, "answered": len(answered), "refused": refused,
                      "goaway": goaway}))


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
        ca = argv[argv.index("--tls-ca") + 1] if "--tls-ca" in argv else None
        exhaust(argv[2], argv[3], argv[4], argv[5], int(argv[6]), ca)
    elif cmd == "streams":
        streams(argv[2], int(argv[3]), argv[4], argv[5] if len(argv) > 5 else None)
    elif cmd == "scrapers":
        scrapers(argv[2], int(argv[3]), float(argv[4]))
    elif cmd == "flood":
        flood(argv[2], int(argv[3]), argv[4], argv[5] if len(argv) > 5 else None)
    elif cmd == "idle":
        idle(argv[2], float(argv[3]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
