#!/usr/bin/python3
"""fake_registry.py — a stand-in for tesseld's Registry service that drives
tessel-worker agents through trial assignments, for tests/integration/trial_agent.sh.

It answers RegisterWorker (worker_id "w-" + hostname), Heartbeat, ReportProfile,
the Assignments long poll and ReportTrial, and plays these trials on the two
workers that register (sorted by hostname: A, B), then writes every ReportTrial it
got, as JSON, to --out and exits:
  t1  a pp = 2 plan: rank 0 on A; when A reports ready (tcp "host:port"), rank 1
      on B with that rendezvous; both must report results — the first two result
      reports are refused UNAVAILABLE (tesseld briefly away), so they arrive only
      because the workers retry;
  t2  rank 0 of 2 on A with timeout_s 2 and no rank 1: A must kill it and report
      why;
  t3  rank 0 of 2 on A; after its ready, an assignment with cancel: A kills it and
      reports no result;
  t4  rank 0 of 2 on A; its ready report is answered cancelled: A stops it;
  t5  rank 0 of 1 on A with comm nccl on cpu devops: it ends at once on the
      refusal, and its (error) result is answered cancelled, as when a cancel
      races a rank's end: A must log that it had already ended, and signal
      nothing (its pid is reaped).

usage: fake_registry.py --proto DIR --stubs DIR --listen unix:PATH --doc FILE --out FILE
"""
import argparse
import json
import os
import sys
import threading
import time
from concurrent import futures

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tsl_rpc  # noqa: E402  (load_stubs)

lock = threading.Condition()
workers = {}      # worker_id -> hostname
queues = {}       # worker_id -> [Assignment]
reports = []      # dicts, in arrival order
cancel_on_ready = set()
cancel_on_result = {"t5"}
unavailable = {"t1": 2}   # trial -> result reports still to refuse


def wait_for(pred, timeout, what):
    end = time.time() + timeout
    with lock:
        while not pred():
            left = end - time.time()
            if left <= 0:
                raise SystemExit("fake_registry: timed out waiting for " + what)
            lock.wait(left)


def make_servicer(pb, pbg):
    from google.protobuf.json_format import MessageToDict

    class Registry(pbg.RegistryServicer):
        def RegisterWorker(self, req, ctx):
            wid = "w-" + req.hostname
            with lock:
                workers[wid] = req.hostname
                queues.setdefault(wid, [])
                lock.notify_all()
            return pb.RegisterResponse(worker_id=wid, heartbeat_interval_s=1)

        def Heartbeat(self, req, ctx):
            return pb.HeartbeatResponse()

        def ReportProfile(self, req, ctx):
            return pb.ReportProfileResponse(stored=len(req.measurements))

        def Assignments(self, req, ctx):
            import grpc
            if req.worker_id not in workers:
                ctx.abort(grpc.StatusCode.NOT_FOUND, "unknown worker")
            end = time.time() + (req.wait_s or 20)
            with lock:
                while not queues[req.worker_id] and time.time() < end and ctx.is_active():
                    lock.wait(min(0.2, max(0.0, end - time.time())))
                got, queues[req.worker_id] = queues[req.worker_id], []
            for a in got:
                yield a

        def ReportTrial(self, req, ctx):
            import grpc
            d = MessageToDict(req, preserving_proto_field_name=True)
            with lock:
                if not req.ready and unavailable.get(req.trial_id, 0) > 0:
                    unavailable[req.trial_id] -= 1
                    reports.append({"refused": True, "trial_id": req.trial_id, "rank": req.rank})
                    ctx.abort(grpc.StatusCode.UNAVAILABLE, "briefly away")
                reports.append(d)
                lock.notify_all()
                cancelled = (req.ready and req.trial_id in cancel_on_ready) or \
                    (not req.ready and req.trial_id in cancel_on_result)
            return pb.ReportTrialResponse(cancelled=cancelled)

    return Registry()


def assign(pb, wid, **kw):
    with lock:
        queues[wid].append(pb.Assignment(**kw))
        lock.notify_all()


def got(trial, rank, ready):
    return [r for r in reports if r.get("trial_id") == trial and r.get("rank", 0) == rank and
            bool(r.get("ready")) == ready and not r.get("refused")]


def scenario(pb, doc):
    wait_for(lambda: len(workers) >= 2, 60, "two workers")
    a, b = sorted(workers)[:2]
    base = dict(world_size=2, iterations=2, warmup=1, comm="tcp", devops="cpu", document=doc,
                seed=3, timeout_s=120)
    assign(pb, a, trial_id="t1", rank=0, **base)
    wait_for(lambda: got("t1", 0, True), 60, "t1 rank 0 ready")
    rv = got("t1", 0, True)[0].get("rendezvous", "")
    assign(pb, b, trial_id="t1", rank=1, rendezvous=rv, **base)
    wait_for(lambda: got("t1", 0, False) and got("t1", 1, False), 120, "t1 results")

    short = dict(base, timeout_s=2)
    assign(pb, a, trial_id="t2", rank=0, **short)
    wait_for(lambda: got("t2", 0, False), 60, "t2 timeout report")

    assign(pb, a, trial_id="t3", rank=0, **base)
    wait_for(lambda: got("t3", 0, True), 60, "t3 rank 0 ready")
    assign(pb, a, trial_id="t3", rank=0, cancel=True, **base)

    with lock:
        cancel_on_ready.add("t4")
    assign(pb, a, trial_id="t4", rank=0, **base)
    wait_for(lambda: got("t4", 0, True), 60, "t4 rank 0 ready")

    assign(pb, a, trial_id="t5", rank=0, **dict(base, world_size=1, comm="nccl"))
    wait_for(lambda: got("t5", 0, False), 60, "t5 result")
    time.sleep(3)  # a t3/t4 result would arrive by now (rank 0 waits for rank 1 otherwise)


def main():
    ap = argparse.ArgumentParser()
    for k in ("--proto", "--stubs", "--listen", "--doc", "--out"):
        ap.add_argument(k, required=True)
    args = ap.parse_args()
    tsl_rpc.load_stubs(args.proto, args.stubs)
    import grpc
    from tessel.v1 import registry_pb2 as pb, registry_pb2_grpc as pbg
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=16))
    pbg.add_RegistryServicer_to_server(make_servicer(pb, pbg), server)
    server.add_insecure_port(args.listen)
    server.start()
    with open(args.doc) as f:
        doc = f.read()
    rc = 0
    try:
        scenario(pb, doc)
    except SystemExit as e:
        print(e, file=sys.stderr)
        rc = 1
    with lock:
        out = list(reports)
    with open(args.out + ".tmp", "w") as f:
        json.dump(out, f, indent=1)
    os.rename(args.out + ".tmp", args.out)
    server.stop(1)
    return rc


if __name__ == "__main__":
    sys.exit(main())
