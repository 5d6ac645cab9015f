#!/usr/bin/python3
"""bench/soak.py — a soak of tesseld: mixed load for DURATION seconds on a
private unix socket and a loopback HTTP port, with clients killed mid-call and
periodic scrapes; RSS, open descriptors and threads of the daemon sampled once
a minute and printed as a table. Stops by itself; every loop is bounded.

usage: bench/soak [--duration S] [--tesseld PATH] [--sample S] [--rate CALLS_PER_S]

Load (one thread each, paced to --rate in all):
  * Plan: a cached preset most of the time; every 20th a forced search of a
    tiny model (50 distinct fingerprints, so the database grows a little);
  * GetPlan, ListPlans (paged), ExportPlan, Health/Check;
  * refused calls: an unknown token and an oversized message;
  * every 5 s a client process is started on a long search and SIGKILLed
    after 0.3 to 2 s (the daemon must notice and cancel);
  * every 2 s GET /metrics, /healthz and / over HTTP.
The daemon, its socket and its database live in a temporary directory that is
removed at the end. Like every benchmark here it reports; it fails only when
the daemon died.
"""
import argparse
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import tsl_rpc  # noqa: E402  (stubs generated from proto/)

TOKEN = "soak-scheduler-token-0123456789"
TINY = ('{"model_type": "gpt2", "n_embd": 256, "n_layer": %d, "n_head": 4, '
        '"vocab_size": 1000, "n_positions": 128}')
LONG = ('{"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008, '
        '"num_hidden_layers": 200, "num_attention_heads": 32, "vocab_size": 32000, '
        '"max_position_embeddings": 4096}')


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Load:
    def __init__(self, target, http, stop_at, rate):
        import grpc
        from tessel.v1 import planner_pb2 as pb, planner_pb2_grpc as pbg
        self.grpc, self.pb = grpc, pb
        self.ch = grpc.insecure_channel(target)
        self.stub = pbg.PlannerStub(self.ch)
        self.md = [("authorization", "Bearer " + TOKEN)]
        self.http, self.stop_at, self.period = http, stop_at, 1.0 / max(rate, 0.1)
        self.counts, self.fps, self.lock = {}, [], threading.Lock()

    def count(self, what, code):
        with self.lock:
            key = "%s %s" % (what, code)
            self.counts[key] = self.counts.get(key, 0) + 1

    def call(self, what, fn):
        try:
            fn()
            self.count(what, "OK")
        except self.grpc.RpcError as e:
            self.count(what, e.code().name)
        except Exception as e:  # noqa: BLE001 - a soak keeps going, and says so
            self.count(what, type(e).__name__)

    def plan(self, i):
        req = self.pb.PlanRequest()
        if i % 20 == 0:
            req.hf_config_json = TINY % (1 + (i // 20) % 4)
            req.cluster_spec = "2xA100-40G"
            req.global_batch = 2 + 2 * ((i // 20) % 13)
            req.force = True
        else:
            req.model_preset = "GPT2-345M"
            req.cluster_spec = "4xA100-40G"
        for ev in self.stub.Plan(req, timeout=60, metadata=self.md):
            if ev.WhichOneof("event") == "plan" and ev.plan.fingerprint:
                with self.lock:
                    if ev.plan.fingerprint not in self.fps:
                        self.fps.append(ev.plan.fingerprint)

    def some_fp(self):
        with self.lock:
            return random.choice(self.fps) if self.fps else "0000000000000000"

    def reads(self, i):
        pb = self.pb
        k = i % 6
        if k == 0:
            self.call("GetPlan", lambda: self.stub.GetPlan(
                pb.GetPlanRequest(fingerprint=self.some_fp()), timeout=10, metadata=self.md))
        elif k == 1:
            self.call("ListPlans", lambda: self.stub.ListPlans(
                pb.ListPlansRequest(page_size=20), timeout=10, metadata=self.md))
        elif k == 2:
            self.call("ExportPlan", lambda: self.stub.ExportPlan(
                pb.ExportPlanRequest(fingerprint=self.some_fp(), format="json"), timeout=10,
                metadata=self.md))
        elif k == 3:
            self.call("Health", lambda: self.ch.unary_unary("/grpc.health.v1.Health/Check")(
                b"", timeout=5))
        elif k == 4:
            self.call("BadToken", lambda: self.stub.ListPlans(
                pb.ListPlansRequest(), timeout=5, metadata=[("authorization", "Bearer nope")]))
        else:
            self.call("TooLarge", lambda: self.ch.unary_unary("/tessel.v1.Planner/Plan")(
                bytes(5 << 20), timeout=10, metadata=self.md))

    def loop(self, name, fn):
        i = 0
        while time.time() < self.stop_at:
            t0 = time.time()
            fn(i)
            i += 1
            time.sleep(max(0.0, self.period * 2 - (time.time() - t0)))

    def plans(self, i):
        self.call("Plan", lambda: self.plan(i))

    def scrapes(self, _):
        for path in ("/metrics", "/healthz", "/"):
            try:
                urllib.request.urlopen("http://%s%s" % (self.http, path), timeout=10).read()
                self.count("GET " + path, 200)
            except Exception as e:  # noqa: BLE001 - counted, not fatal
                self.count("GET " + path, type(e).__name__)
        time.sleep(2)


def killer(args, target, stop_at, counts):
    code = ("import sys; sys.path.insert(0, %r); import tsl_rpc\n"
            "tsl_rpc.load_stubs(%r, %r)\n"
            "import grpc\nfrom tessel.v1 import planner_pb2 as pb, planner_pb2_grpc as g\n"
            "s = g.PlannerStub(grpc.insecure_channel(%r))\n"
            "r = pb.PlanRequest(hf_config_json=%r, cluster_spec='16x8xA100-80G:ib100', force=True)\n"
            "list(s.Plan(r, timeout=60, metadata=[('authorization', 'Bearer %s')]))\n"
            % (os.path.join(ROOT, "tests", "integration"), os.path.join(ROOT, "proto"),
               args.stubs, target, LONG, TOKEN))
    while time.time() < stop_at:
        p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        time.sleep(random.uniform(1.0, 3.0))   # stubs import takes ~0.5 s
        p.send_signal(signal.SIGKILL)
        p.wait()
        counts["killed"] = counts.get("killed", 0) + 1
        time.sleep(max(0.0, 5 - 3))


def proc_sample(pid):
    rss = threads = 0
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
    return rss, len(os.listdir("/proc/%d/fd" % pid)), threads


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=float, default=3600)
    ap.add_argument("--sample", type=float, default=60)
    ap.add_argument("--rate", type=float, default=20, help="calls per second, all kinds")
    ap.add_argument("--tesseld", default=os.path.join(ROOT, "build-test", "daemon", "tesseld"))
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="tessel-soak.")
    args.stubs = os.path.join(tmp, "stubs")
    tsl_rpc.load_stubs(os.path.join(ROOT, "proto"), args.stubs)
    sock, http = os.path.join(tmp, "s.sock"), "127.0.0.1:%d" % free_port()
    conf = os.path.join(tmp, "soak.ini")
    with open(conf, "w") as f:
        f.write("[server]\nunix_socket = %s\nhttp = %s\n[store]\ndatabase = %s\n"
                "[search]\npool_size = 1\nqueue_size = 4\n[log]\nlevel = warn\n"
                "[tokens]\n%s = scheduler\n" % (sock, http, os.path.join(tmp, "s.db"), TOKEN))
    log = open(os.path.join(tmp, "tesseld.log"), "w")
    d = subprocess.Popen([args.tesseld, "--config", conf], stdout=log, stderr=log)
    for _ in range(100):
        if os.path.exists(sock):
            break
        time.sleep(0.1)
    target = "unix:" + sock
    start = time.time()
    stop_at = start + args.duration
    load = Load(target, http, stop_at, args.rate)
    killed = {}
    workers = [threading.Thread(target=load.loop, args=("plans", load.plans), daemon=True),
               threading.Thread(target=load.loop, args=("reads", load.reads), daemon=True),
               threading.Thread(target=load.loop, args=("scrapes", load.scrapes), daemon=True),
               threading.Thread(target=killer, args=(args, target, stop_at, killed), daemon=True)]
    for w in workers:
        w.start()
    print("%6s %10s %6s %8s %10s" % ("minute", "rss_kB", "fds", "threads", "calls"), flush=True)
    alive = True
    next_sample = start
    while time.time() < stop_at + 1 and alive:
        if time.time() >= next_sample:
            alive = d.poll() is None
            if alive:
                rss, fds, threads = proc_sample(d.pid)
                with load.lock:
                    calls = sum(load.counts.values())
                print("%6.0f %10d %6d %8d %10d" % ((time.time() - start) / 60, rss, fds, threads,
                                                    calls), flush=True)
            next_sample += args.sample
        time.sleep(0.5)
    for w in workers:
        w.join(timeout=70)
    print("calls by kind and status:", json.dumps(dict(sorted(load.counts.items()))))
    print("clients killed mid-search: %d" % killed.get("killed", 0))
    rc = 0
    if d.poll() is not None:
        print("tesseld DIED with status %s; log in %s" % (d.returncode, tmp))
        rc = 1
    else:
        d.send_signal(signal.SIGTERM)
        d.wait(timeout=60)
        print("tesseld stopped with status %d" % d.returncode)
    log.close()
    if rc == 0:
        subprocess.call(["rm", "-rf", tmp])
    return rc


if __name__ == "__main__":
    sys.exit(main())
