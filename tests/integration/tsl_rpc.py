#!/usr/bin/python3
"""tsl_rpc.py — an independent gRPC client for tesseld's integration tests.

Debian's python3-grpcio and python3-grpc-tools: the stubs are generated from
proto/ into a private directory (--stubs) on first use. Every command prints
one JSON object on stdout — {"code": "OK" | "INVALID_ARGUMENT" | ..., "details":
..., plus what the answer held} — and exits 0 whatever the RPC's status, so the
calling script asserts on the code; exit 2 means the tool itself was misused.

usage: tsl_rpc.py --proto DIR --stubs DIR --target unix:PATH|HOST:PORT
                  [--token T] [--tls-ca PEM] [--deadline S] COMMAND ...
commands: health [SERVICE] | plan OPTS | plans N OPTS | get FP | list [...] |
          delete FP | export FP [--format F] | raw METHOD HEX | unknown |
          eval OPTS --plan-json FILE [--no-search] [--target-given] |
          registry | trials
"""
import argparse
import json
import os
import sys
import threading
import time


def load_stubs(proto_dir, out_dir):
    """Generates (once) and imports the message and service modules."""
    marker = os.path.join(out_dir, "tessel", "v1", "planner_pb2_grpc.py")
    if not os.path.exists(marker):
        from grpc_tools import protoc
        os.makedirs(out_dir, exist_ok=True)
        tessel = ["tessel/v1/planner.proto", "tessel/v1/registry.proto", "tessel/v1/trials.proto"]
        for include, files in ((proto_dir, tessel),
                               (os.path.join(proto_dir, "grpc", "health", "v1"), ["health.proto"])):
            rc = protoc.main(["protoc", "-I" + include, "--python_out=" + out_dir,
                              "--grpc_python_out=" + out_dir] + files)
            if rc != 0:
                sys.exit("tsl_rpc: protoc failed on %s" % files)
    sys.path.insert(0, out_dir)


def channel(args):
    import grpc
    opts = [("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1)]
    if args.tls_ca:
        with open(args.tls_ca, "rb") as f:
            creds = grpc.ssl_channel_credentials(root_certificates=f.read())
        return grpc.secure_channel(args.target, creds,
                                   options=opts + [("grpc.ssl_target_name_override", "localhost")])
    return grpc.insecure_channel(args.target, options=opts)


def metadata(args):
    return [("authorization", "Bearer " + args.token)] if args.token else None


def error(e):
    return {"code": e.code().name, "details": e.details() or ""}


def plan_request(a):
    from tessel.v1 import planner_pb2 as pb
    req = pb.PlanRequest()
    if a.hf_config:
        with open(a.hf_config) as f:
            req.hf_config_json = f.read()
    elif a.hf_config_text is not None:
        req.hf_config_json = a.hf_config_text
    elif a.model:
        # --escapes: "GPT2-345M\\0evil" carries a real NUL byte (argv cannot)
        req.model_preset = a.model.encode().decode("unicode_escape") if a.escapes else a.model
    if a.cluster_json:
        with open(a.cluster_json) as f:
            req.cluster_json = f.read()
    elif a.cluster:
        req.cluster_spec = a.cluster
    req.seq_len = a.seq_len
    req.memory_bytes = a.memory
    req.global_batch = a.batch
    req.max_batch = a.max_batch
    req.top_k = a.top_k
    req.no_baselines = a.no_baselines
    req.target = a.stack
    req.force = a.force
    for kv in a.set or []:
        # --set FIELD=VALUE: any scalar PlanRequest field, by its type ("nan", "inf" for doubles)
        name, value = kv.split("=", 1)
        f = req.DESCRIPTOR.fields_by_name[name]
        if f.type == f.TYPE_BOOL:
            setattr(req, name, value.lower() in ("1", "true", "yes"))
        elif f.type in (f.TYPE_DOUBLE, f.TYPE_FLOAT):
            setattr(req, name, float(value))
        elif f.type == f.TYPE_STRING:
            setattr(req, name, value)
        else:
            setattr(req, name, int(value, 0))
    return req


def note_event(a, text):
    """Appends one line per event to --events-file, so a test can wait for one."""
    if a.events_file:
        with open(a.events_file, "a") as f:
            f.write(text + "\n")


def run_plan(stub, args, a):
    """Follows one Plan stream; the result records every event's kind and time."""
    out = {"code": "OK", "details": "", "progress": 0, "phases": [], "fractions": [], "times": []}
    t0 = time.monotonic()
    try:
        call = stub.Plan(plan_request(a), timeout=args.deadline, metadata=metadata(args))
        if a.cancel_after is not None:
            timer = threading.Timer(a.cancel_after, call.cancel)
            timer.daemon = True
            timer.start()
        for ev in call:
            t = time.monotonic() - t0
            out.setdefault("first_event_s", t)
            if "fingerprint" in out:
                out["events_after_plan"] += 1
            if ev.HasField("progress"):
                note_event(a, "progress %s %.3f" % (ev.progress.phase, ev.progress.fraction))
                out["progress"] += 1
                out["fractions"].append(ev.progress.fraction)
                out["times"].append(t)
                if not out["phases"] or out["phases"][-1] != ev.progress.phase:
                    out["phases"].append(ev.progress.phase)
            elif "fingerprint" not in out:
                note_event(a, "plan " + ev.plan.fingerprint)
                p = ev.plan
                out.update(fingerprint=p.fingerprint, cached=p.cached, stale=p.stale,
                           model=p.model_name, n_devices=p.n_devices,
                           tokens_per_sample=p.tokens_per_sample,
                           iter_time_s=p.best.iter_time_s, global_batch=p.best.global_batch,
                           n_stages=len(p.best.stages), n_baselines=len(p.baselines),
                           n_alternatives=len(p.alternatives), created_unix=p.created_unix,
                           plan_after_s=t, events_after_plan=0, notes=list(p.notes))
    except Exception as e:  # grpc.RpcError
        if not hasattr(e, "code"):
            raise
        out.update(error(e))
    out["elapsed_s"] = time.monotonic() - t0
    return out


def cmd_plans(stub, args, a):
    """N identical Plan calls at once; the results in start order."""
    results = [None] * a.n
    threads = [threading.Thread(target=lambda i=i: results.__setitem__(i, run_plan(stub, args, a)))
               for i in range(a.n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    codes = {}
    for r in results:
        codes[r["code"]] = codes.get(r["code"], 0) + 1
    return {"code": "OK", "codes": codes, "results": results}


def unary(fn, req, args, convert):
    t0 = time.monotonic()
    try:
        out = dict({"code": "OK", "details": ""}, **convert(
            fn(req, timeout=args.deadline, metadata=metadata(args))))
    except Exception as e:
        if not hasattr(e, "code"):
            raise
        out = error(e)
    out["elapsed_s"] = time.monotonic() - t0
    return out


def cmd_list(stub, args, a):
    from tessel.v1 import planner_pb2 as pb
    stale = {"any": 0, "fresh": 1, "stale": 2}[a.stale]
    req = pb.ListPlansRequest(model_name=a.model or "", n_devices=a.devices, stale=stale,
                              page_size=a.page_size, page_token=a.page_token or "")
    return unary(stub.ListPlans, req, args, lambda r: {
        "plans": [{"fingerprint": p.fingerprint, "model": p.model_name, "n_devices": p.n_devices,
                   "global_batch": p.global_batch, "stale": p.stale} for p in r.plans],
        "next_page_token": r.next_page_token})


def cmd_eval(stub, args, a):
    """One EvaluatePlan: the request as plan's options build it, plan_json from a file;
    the answer's result_json parsed (null when empty)."""
    from tessel.v1 import planner_pb2 as pb
    with open(a.plan_json) as f:
        plan = f.read()
    req = pb.EvaluatePlanRequest(request=plan_request(a), plan_json=plan, no_search=a.no_search,
                                 target_given=a.target_given)
    return unary(stub.EvaluatePlan, req, args, lambda r: {
        "fits": r.fits, "why": r.why,
        "result": json.loads(r.result_json) if r.result_json else None})


def cmd_raw(ch, args, a):
    ident = lambda b: b
    fn = ch.unary_unary(a.method, request_serializer=ident, response_deserializer=ident)
    return unary(fn, bytes.fromhex(a.hex), args, lambda r: {"reply_bytes": len(r)})


def build_parser():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--proto", required=True)
    ap.add_argument("--stubs", required=True)
    ap.add_argument("--target", required=True)
    ap.add_argument("--token")
    ap.add_argument("--tls-ca")
    ap.add_argument("--deadline", type=float, default=120.0)
    sub = ap.add_subparsers(dest="cmd", required=True)
    h = sub.add_parser("health")
    h.add_argument("service", nargs="?", default="")
    for name in ("plan", "plans", "eval"):
        p = sub.add_parser(name)
        if name == "plans":
            p.add_argument("n", type=int)
        if name == "eval":
            p.add_argument("--plan-json", required=True, help="EvaluatePlanRequest.plan_json")
            p.add_argument("--no-search", action="store_true")
            p.add_argument("--target-given", action="store_true",
                           help="EvaluatePlanRequest.target_given")
        p.add_argument("--model")
        p.add_argument("--hf-config")
        p.add_argument("--hf-config-text")
        p.add_argument("--escapes", action="store_true",
                       help="decode backslash escapes in --model (e.g. \\0)")
        p.add_argument("--cluster")
        p.add_argument("--cluster-json")
        p.add_argument("--seq-len", type=int, default=0)
        p.add_argument("--memory", type=int, default=0)
        p.add_argument("--batch", type=int, default=0)
        p.add_argument("--max-batch", type=int, default=0)
        p.add_argument("--top-k", type=int, default=0)
        p.add_argument("--no-baselines", action="store_true")
        p.add_argument("--stack", type=int, default=0, help="PlanRequest.target (tessel.v1.Target)")
        p.add_argument("--force", action="store_true")
        p.add_argument("--set", action="append", metavar="FIELD=VALUE",
                       help="set any scalar PlanRequest field (repeatable)")
        p.add_argument("--cancel-after", type=float, help="cancel the call after S seconds")
        p.add_argument("--events-file", help="append a line per event to this file")
    for name in ("get", "delete", "export"):
        p = sub.add_parser(name)
        p.add_argument("fingerprint")
        if name == "export":
            p.add_argument("--format", default="json")
    ls = sub.add_parser("list")
    ls.add_argument("--model")
    ls.add_argument("--devices", type=int, default=0)
    ls.add_argument("--stale", choices=["any", "fresh", "stale"], default="any")
    ls.add_argument("--page-size", type=int, default=0)
    ls.add_argument("--page-token")
    r = sub.add_parser("raw")
    r.add_argument("method")
    r.add_argument("hex")
    sub.add_parser("unknown")
    sub.add_parser("registry")
    sub.add_parser("trials")
    return ap


def dispatch(args):
    from tessel.v1 import planner_pb2 as pb, planner_pb2_grpc as pbg
    from tessel.v1 import registry_pb2, registry_pb2_grpc, trials_pb2, trials_pb2_grpc
    import health_pb2
    import health_pb2_grpc
    ch = channel(args)
    planner = pbg.PlannerStub(ch)
    c = args.cmd
    if c == "health":
        return unary(health_pb2_grpc.HealthStub(ch).Check,
                     health_pb2.HealthCheckRequest(service=args.service), args,
                     lambda r: {"status": health_pb2.HealthCheckResponse.ServingStatus.Name(r.status)})
    if c == "plan":
        return run_plan(planner, args, args)
    if c == "plans":
        return cmd_plans(planner, args, args)
    if c == "get":
        return unary(planner.GetPlan, pb.GetPlanRequest(fingerprint=args.fingerprint), args,
                     lambda p: {"fingerprint": p.fingerprint, "cached": p.cached,
                                "stale": p.stale, "model": p.model_name, "n_stages": len(p.best.stages),
                                "iter_time_s": p.best.iter_time_s, "created_unix": p.created_unix})
    if c == "delete":
        return unary(planner.DeletePlan, pb.DeletePlanRequest(fingerprint=args.fingerprint), args,
                     lambda r: {"deleted": r.deleted})
    if c == "export":
        return unary(planner.ExportPlan,
                     pb.ExportPlanRequest(fingerprint=args.fingerprint, format=args.format), args,
                     lambda r: {"format": r.format, "content_type": r.content_type,
                                "content": r.content.decode("utf-8", "replace"),
                                "stale": r.stale})
    if c == "list":
        return cmd_list(planner, args, args)
    if c == "eval":
        return cmd_eval(planner, args, args)
    if c == "raw":
        return cmd_raw(ch, args, args)
    if c == "unknown":
        args.method, args.hex = "/tessel.v1.Nope/Nothing", ""
        return cmd_raw(ch, args, args)
    if c == "registry":
        return unary(registry_pb2_grpc.RegistryStub(ch).Heartbeat,
                     registry_pb2.HeartbeatRequest(worker_id="w1"), args, lambda r: {})
    if c == "trials":
        return unary(trials_pb2_grpc.TrialsStub(ch).GetTrial, trials_pb2.GetTrialRequest(), args,
                     lambda r: {})
    raise SystemExit(2)


def main():
    args = build_parser().parse_args()
    load_stubs(args.proto, args.stubs)
    print(json.dumps(dispatch(args)), flush=True)


if __name__ == "__main__":
    main()
