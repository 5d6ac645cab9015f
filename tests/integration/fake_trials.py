#!/usr/bin/python3
"""fake_trials.py — a stand-in for tesseld's Trials service, for tesselctl's
printing and following of trials before the daemon serves them: Trials
methods are answered from a fixed set of trials (below), every other method
is forwarded byte for byte to a real tesseld (so `plans show` gets its plan
from the daemon and its trials from here). Serves until killed.

usage: fake_trials.py --proto DIR --stubs DIR --listen unix:PATH --upstream unix:PATH FP
"""
import argparse
import os
import sys
import time
from concurrent import futures

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tsl_rpc  # noqa: E402  (load_stubs)


def trials(pb, fp):
    def rank(i, host, med, peak, state="done", error="", oom=False):
        r = pb.TrialRank(rank=i, worker_id="w-%d" % i, hostname=host, device_index=0, state=state,
                         iter_time_s=med, iter_min_s=med * 0.99, iter_max_s=med * 1.02,
                         peak_bytes=peak, oom=oom, error=error)
        for k, v in (("fwd", med * 0.3), ("bwd", med * 0.6), ("comm", med * 0.05),
                     ("bubble", med * 0.05)):
            r.phase_s[k] = v
        return r
    gib = 1 << 30
    done = pb.Trial(trial_id="t-done", plan_fingerprint=fp, status="done",
                    predicted_iter_time_s=0.5, measured_iter_time_s=0.625,
                    predicted_peak_bytes=2 * gib, measured_peak_bytes=int(2.5 * gib),
                    plan_index=0, plan_label="tessel", world_size=2, iterations=10, warmup=3,
                    comm="tcp", devops="cpu", simulated=True, time_error=-0.2,
                    memory_error=-0.2, chosen=True, batch_id="b-1", measured_samples_per_s=25.6,
                    ranks=[rank(0, "sim-a", 0.625, int(2.5 * gib)), rank(1, "sim-b", 0.61, 2 * gib)])
    alt = pb.Trial(trial_id="t-alt", plan_fingerprint=fp, status="done",
                   predicted_iter_time_s=0.55, measured_iter_time_s=0.5,
                   predicted_peak_bytes=3 * gib, measured_peak_bytes=3 * gib, plan_index=1,
                   plan_label="tessel", world_size=2, iterations=10, warmup=3, comm="tcp",
                   devops="cpu", simulated=True, time_error=0.1, memory_error=0.0, batch_id="b-1",
                   ranks=[rank(0, "sim-a", 0.5, 3 * gib), rank(1, "sim-b", 0.5, 3 * gib)])
    failed = pb.Trial(trial_id="t-fail", plan_fingerprint=fp, status="failed", plan_index=0,
                      predicted_iter_time_s=0.5, predicted_peak_bytes=2 * gib, world_size=2,
                      error="rank 1 (worker w-1 on sim-b): the worker stopped heartbeating",
                      ranks=[rank(0, "sim-a", 0.0, 0, state="failed"),
                             rank(1, "sim-b", 0.0, 0, state="failed", error="worker lost")])
    # a plan of batch b-1 the executor cannot run (StartTrialResponse.skipped)
    skipped = pb.Trial(trial_id="t-skip", plan_fingerprint=fp, status="skipped", plan_index=2,
                       plan_label="tessel", predicted_iter_time_s=0.45,
                       predicted_peak_bytes=2 * gib, world_size=2, batch_id="b-1",
                       error="skipped: plan 2: plan: schedule zbv: the executor runs 1F1B and "
                       "interleaved 1F1B; the executor cannot try it")
    # a plan of batch b-1 no online workers fit (4 GPUs, 2 online): skipped as well
    nofit = pb.Trial(trial_id="t-nofit", plan_fingerprint=fp, status="skipped", plan_index=3,
                     plan_label="tessel", predicted_iter_time_s=0.3,
                     predicted_peak_bytes=2 * gib, world_size=4, batch_id="b-1",
                     error="skipped: plan 3: no online workers fit it: the plan needs 4 GPUs of "
                     "type A100-40G; online matching simulated workers have 2: w-1 (host sim-a, "
                     "1 GPUs), w-2 (host sim-b, 1 GPUs)")
    return {t.trial_id: t for t in (done, alt, failed, skipped, nofit)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--proto", required=True)
    ap.add_argument("--stubs", required=True)
    ap.add_argument("--listen", required=True)
    ap.add_argument("--upstream", required=True)
    ap.add_argument("fp")
    a = ap.parse_args()
    tsl_rpc.load_stubs(a.proto, a.stubs)
    import grpc
    from tessel.v1 import trials_pb2 as pb
    known = trials(pb, a.fp)
    up = grpc.insecure_channel(a.upstream)
    ident = lambda b: b  # noqa: E731

    def get(req, ctx):
        t = known.get(req.trial_id)
        if t is None:
            ctx.abort(grpc.StatusCode.NOT_FOUND, "no trial %s" % req.trial_id)
        return t

    def watch(req, ctx):
        t = get(req, ctx)
        for status in ("pending", "running"):
            early = pb.Trial()
            early.CopyFrom(t)
            early.status = status
            yield early
            time.sleep(0.05)
        yield t

    def start(req, ctx):
        if req.plan_fingerprint != a.fp:
            ctx.abort(grpc.StatusCode.NOT_FOUND, "no plan %s" % req.plan_fingerprint)
        ids = ["t-done", "t-alt"][: max(1, req.top_k)]
        if req.nodes and req.nodes[0] == "fail":
            ids = ["t-fail"]
        # nodes "stale": the plan as the store marks it after a new profile or cost model
        stale = bool(req.nodes) and req.nodes[0] == "stale"
        # nodes "skip": a batch whose ZB-V alternative the executor cannot run and whose
        # 4-GPU one no online workers fit
        skip = bool(req.nodes) and req.nodes[0] == "skip"
        skipped = [known["t-skip"], known["t-nofit"]] if skip else []
        return pb.StartTrialResponse(trial_ids=ids, batch_id="b-1", plan_stale=stale,
                                     skipped=skipped)

    def list_(req, ctx):
        ts = [t for t in known.values()
              if not req.plan_fingerprint or t.plan_fingerprint == req.plan_fingerprint]
        return pb.ListTrialsResponse(trials=ts)

    def u(fn, req_t, resp_t):
        return grpc.unary_unary_rpc_method_handler(fn, request_deserializer=req_t.FromString,
                                                   response_serializer=resp_t.SerializeToString)

    handlers = {
        "StartTrial": u(start, pb.StartTrialRequest, pb.StartTrialResponse),
        "GetTrial": u(get, pb.GetTrialRequest, pb.Trial),
        "ListTrials": u(list_, pb.ListTrialsRequest, pb.ListTrialsResponse),
        "WatchTrial": grpc.unary_stream_rpc_method_handler(
            watch, request_deserializer=pb.GetTrialRequest.FromString,
            response_serializer=pb.Trial.SerializeToString),
    }

    class Forward(grpc.GenericRpcHandler):
        """Everything but Trials goes to the real tesseld, as bytes."""
        def service(self, details):
            m = details.method
            if m.startswith("/tessel.v1.Trials/"):
                return handlers.get(m.rsplit("/", 1)[1])
            if m == "/tessel.v1.Planner/Plan":
                call = up.unary_stream(m, request_serializer=ident, response_deserializer=ident)
                return grpc.unary_stream_rpc_method_handler(
                    lambda req, ctx: call(req), request_deserializer=ident,
                    response_serializer=ident)
            call = up.unary_unary(m, request_serializer=ident, response_deserializer=ident)

            def fwd(req, ctx):
                try:
                    return call(req)
                except grpc.RpcError as e:
                    ctx.abort(e.code(), e.details())
            return grpc.unary_unary_rpc_method_handler(fwd, request_deserializer=ident,
                                                       response_serializer=ident)

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4), handlers=[Forward()])
    server.add_insecure_port(a.listen)
    server.start()
    server.wait_for_termination()


if __name__ == "__main__":
    main()
