#!/usr/bin/env python3
"""vs_search.py — does Tessel's search beat the plan the experts published?

For every row of rows.json whose stack Tessel can search (`--target`: the
Megatron-LM / Megatron-Bridge rows as megatron, torchtitan's as torchtitan, the
Megatron-DeepSpeed rows as deepspeed) this prices the published plan as run.py
does (`tesselctl eval`), searches the same model, cluster, global batch,
sequence and precision under the row's stack (`tesselctl plan --local
--target`, with the stack's own switches: the row's recipe, gradient and
overlap knobs, never its degrees), then prices the search's best plan again
with eval under every knob of the row (`eval --plan`, so both plans are priced
by the same command: plan cannot take every stack switch eval can). Per row:
measured s, the published plan's prediction, the best plan's, the predicted
gain (published / best - 1), the mb gain (the published plan, everything kept but
its micro-batch size, priced at 1, 2, 4 and twice its size where they divide its
replica's batch: published / the fastest of those - 1, the part of the gain no
other degree is needed for) and the two plans in one line each; per source a
summary. A gain over a tuned preset is a claim to check, not a win: see
README.md "Search against the published plans".

The search gets `plan`'s default memory budget (the device less its reserve),
what a user gets; the published plan is priced against the whole device as
run.py prices it, and a row whose published plan the search's budget could not
hold is marked `pub>budget`. Standard library only; it reuses run.py's row ->
command translation.

usage: python3 bench/published/vs_search.py [--tesselctl PATH] [--source KEY]...
           [--row ID]... [--timeout S] [--json FILE] [--verbose]
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run  # noqa: E402  (run.py: the row -> eval command translation)

# The stack each source's runs ran on, as `plan --target` names it. Sources
# left out ran a stack Tessel's targets do not describe (UNMAPPED says which).
TARGETS = {
    "narayanan21-t1": "megatron", "narayanan21-t2-ptdp": "megatron",
    "korthikanti22": "megatron", "mcore-moe-readme": "megatron",
    "mbridge-26.04.01": "megatron", "mbridge-archive-h100": "megatron",
    "mbridge-archive-blackwell": "megatron", "mbridge-26.06": "megatron",
    "mbridge-26.06.01": "megatron", "mbridge-26.08": "megatron",
    "torchtitan-h100": "torchtitan", "torchtitan-cp": "torchtitan",
    "torchtitan-pp": "torchtitan", "torchtitan-asynctp": "torchtitan",
    "torchtitan-h200": "torchtitan",
    # BLOOM's and MT-NLG's Megatron-DeepSpeed and DeepSpeed's ZeRO-3 (Narayanan's
    # Table 2); MT-NLG's 107 units cut as 'type:transformer' (cost model 104)
    "bloom-tr11": "deepspeed", "bloom-tr11-reshape": "deepspeed",
    "bloom-tr11-prequel": "deepspeed",
    "mtnlg22": "deepspeed",
}
UNMAPPED = {
    "deepseek-v3-report": "DeepSeek's HAI-LLM (DualPipe, its own kernels): no target",
    "neox20b": "GPT-NeoX's own stack (DeepSpeed PP with Megatron TP, a parallel "
               "attention/FFN block, the mask sent between stages: ds_pipe_p2p), not "
               "Megatron-DeepSpeed's GPT: the deepspeed target refuses its TP beside "
               "stages",
    "tessel-h100": "Tessel's own executor: no published expert plan",
    # since cost model 146 its rows are priced as DeepSpeed 0.3's stage 3 ran them
    # (ds_zero3_v03), which the deepspeed target (today's DeepSpeed) refuses: a search
    # priced as today's ZeRO-3 against the published plan priced as 0.3's would
    # compare two stacks, not two plans
    "narayanan21-t2-zero3": "DeepSpeed 0.3's ZeRO-3 (ds_zero3_v03): the deepspeed "
                            "target is today's DeepSpeed, which does not run it",
    "llama3-t4": "Tessel's own executor on T4s: no published expert plan",
}
# llm-foundry's MPT rows ran Composer over torch's FSDP1 (per-block units, no TP or
# PP): no target describes that stack (torchtitan's is FSDP2 under its own defaults)
for _src in ("mpt-h100", "mpt-h100-fp8", "mpt-a100-80g", "mpt-a100-40g", "mpt-a100-80g-2023"):
    UNMAPPED[_src] = "Composer over torch FSDP1 (llm-foundry): no target describes it"

# What the stack the row ran could not do, as plan switches: Megatron-LM as
# Narayanan et al. ran it (the paper's pin 6985e58938, 2021-08-18) had no
# sequence parallelism (--sequence-parallel first at cfd2e21607, 2022-04-28), no
# selective recomputation (--recompute-granularity, bbab79f869, 2022-05-16) and
# no distributed optimizer (--use-distributed-optimizer, 329fe5820f, 2022-02-10):
# NVIDIA/Megatron-LM `git log -S` on megatron/arguments.py. Neither it nor
# Korthikanti et al.'s 2022 tree had Megatron-FSDP, the megatron target's SDP level
# since cost model 94 (first as --use-custom-fsdp, d165a8548b, 2025-02-26: `git log -S
# use-custom-fsdp` on megatron/training/arguments.py).
STACK_LIMITS = {
    "narayanan21-t1": ["--no-seq-par", "--no-selective", "--no-zero", "--no-sdp"],
    "narayanan21-t2-ptdp": ["--no-seq-par", "--no-selective", "--no-zero", "--no-sdp"],
    "korthikanti22": ["--no-sdp"],
}

# eval's stack switches `plan` takes under another name or not at all: the
# search runs without them and the re-evaluation (eval --plan) puts them back.
# DeepSpeed's BF16_Optimizer (--ds-bf16-optimizer: BLOOM's rows) the deepspeed target
# prices by itself where its engine runs it (bf16 at ZeRO-0 under stages, cost model
# 95) and refuses as a flag; CUDA_LAUNCH_BLOCKING=1 is a launch's environment, which
# no target's configuration carries. --fp8-param-gather (the FP8 weights gathered in
# FP8, Megatron-Bridge's FP8 presets, torchtitan's FSDP float8 all-gather) plan takes
# since cost model 103: the search weighs it only when asked, so it is passed.
# DeepSpeed's PipelineEngine (--ds-pipe-engine: BLOOM's and MT-NLG's rows) the
# deepspeed target prices by itself on a plan of several stages (cost model 154).
EVAL_ONLY = {"--fp8-impl": 1, "--opt-step": 1,
             "--ds-pipe-p2p": 0, "--ds-pipe-engine": 0, "--torch-pipelining": 0,
             "--amp-profile": 1,
             "--ds-bf16-optimizer": 0,
             "--launch-blocking": 0}


# (row field, the plan flags of eval's default without a target where the
# target's default differs: docs/tesselctl.md, plan --help)
SILENT_DEFAULTS = [("grad_reduce_bytes", ["--grad-reduce-bytes", "2"]),
                   ("overlap_grad_reduce", ["--overlap-grad-reduce"]),
                   ("overlap_tp_dgrad", ["--no-overlap-tp-dgrad"]),
                   ("loss_impl", ["--loss-impl", "exec"])]


def stack_args(row, target):
    """The row's stack switches as `plan` flags: knob_args (eval's) less what
    plan cannot take, --fp8 RECIPE as --fp8-recipe, --no-fp8 where the row
    ran bf16 (the same precision, not a searched one), and the row's activation
    offload. Returns (flags, dropped)."""
    knobs, out, dropped = run.knob_args(row), [], []
    i = 0
    while i < len(knobs):
        a = knobs[i]
        if a in EVAL_ONLY:
            n = EVAL_ONLY[a]
            dropped.append(" ".join(knobs[i:i + 1 + n]))
            i += 1 + n
            continue
        if a == "--fp8":
            out += ["--fp8-recipe", knobs[i + 1]]
            i += 2
            continue
        if a == "--loss-impl" and knobs[i + 1] == "te" and target == "megatron":
            # the megatron target is today's Megatron-LM, which refuses TE's
            # fused loss (target_rules.c tsl_megatron_te_loss_ok); the row's
            # older release ran it: searched with Megatron's own loss
            dropped.append("--loss-impl te")
            i += 2
            continue
        out.append(a)
        i += 1
    if not row["plan"].get("fp8"):
        out.append("--no-fp8")
    # the activations the run offloaded to the host (Megatron-LM
    # --cpu-offloading-num-layers, a plan_args field, not a knob): the search takes it as
    # a switch, which holds it to one stage without recompute (offload.h)
    if row["plan"].get("cpu_offload_layers"):
        out += ["--cpu-offload-layers", str(row["plan"]["cpu_offload_layers"])]
    # where the row is silent, eval (no target) prices the published plan on
    # Tessel's executor's way; the search gets the same, not its target's default
    p = row["plan"]
    for key, flags in SILENT_DEFAULTS:
        if key not in p:
            out += flags
    return out, dropped


def plan_command(row, args, tmpdir, target):
    c = row["cluster"]
    cmd = [args.tesselctl, "plan", "--local", "--json", "--no-baselines", "--top-k", "1",
           "--timeout", str(args.timeout), "--target", target]
    cmd += run.model_args(row, tmpdir)
    cmd += ["--cluster", run.cluster_arg(c, args.topology, tmpdir, row["id"], args.tesselctl)]
    cmd += ["--batch", str(row["plan"]["batch"])]
    flags, dropped = stack_args(row, target)
    return cmd + flags + STACK_LIMITS.get(row["source"], []), dropped


# The plan object's keys that say what the plan IS (degrees, split, schedule,
# micro-batching, per-layer strategies); the rest of it says how the stack ran
# (the gradient reduce, overlaps, loss, step ...), which the search filled with
# its target's defaults (common/plan_fields.h): stack_only() drops those, so the
# re-evaluation prices the best plan under the same knobs as the published one.
PLAN_STRUCTURE = {"label", "pp", "global_batch", "micro_batch", "n_micro", "iter_time_s",
                  "samples_per_s", "tokens_per_s", "peak_bytes", "budget_bytes", "alpha_t",
                  "alpha_m", "stages", "granularity", "master_stage", "interleave", "vp_group",
                  "schedule", "cp", "cp_comm", "ep", "etp", "moe_capacity_factor",
                  "moe_pad_to_capacity", "moe_imbalance", "fp8_recipe", "recompute_modules",
                  "cpu_offload_layers", "slicer", "memopt", "node_order",
                  # torchtitan keeps FSDP unsharded between micro-batches under PP
                  # (the torchtitan target sets it: what the stack runs at that shape)
                  "sdp_nosync"}


def structure_only(doc):
    """The search's document with its plan's stack fields and its target left
    out (the request's switches off), for eval --plan."""
    doc = json.loads(json.dumps(doc))
    doc["plan"] = {k: v for k, v in doc["plan"].items() if k in PLAN_STRUCTURE}
    doc.pop("target", None)
    req = doc.get("request", {})
    for k, v in list(req.items()):
        if k not in ("pp", "global_batch") and isinstance(v, (bool, int, float, list)):
            req[k] = type(v)()
    req["target"] = "any"
    doc["alternatives"], doc["baselines"] = [], []
    return doc


def reeval_command(row, args, tmpdir, plan_path):
    """eval of the search's plan document under every knob of the row, against
    the whole device, as the published plan is priced."""
    c = row["cluster"]
    cmd = [args.tesselctl, "eval", "--local", "--no-search", "--json"]
    cmd += run.model_args(row, tmpdir)
    cmd += ["--cluster", run.cluster_arg(c, args.topology, tmpdir, row["id"], args.tesselctl)]
    cmd += ["--memory", "%dG" % run.device_memory_gib(c), "--plan", plan_path]
    # --target any: the document's target would hold the knobs to today's stack
    # (a row's older release ran TE's fused loss); the published plan's eval has none
    return cmd + ["--target", "any"] + run.knob_args(row)


def describe(doc):
    """One short line for a plan document: pp, micro-batch x count, the layer
    strategies (share of layers), and the schedule and expert/context degrees."""
    p = doc["plan"]
    layers = collections.Counter()
    for s in p["stages"]:
        for r in s["runs"]:
            layers[r["strategy"]] += r["count"]
    total = sum(layers.values()) or 1
    strat = ",".join(k if v == total else "%s(%d)" % (k, v) for k, v in layers.most_common(3))
    if len(layers) > 3:
        strat += ",+%d" % (len(layers) - 3)
    out = "pp%d mb%dx%d %s" % (p["pp"], p["micro_batch"], p["n_micro"], strat)
    for k in ("ep", "etp", "cp", "interleave"):
        if p.get(k, 1) not in (0, 1):
            out += " %s%s" % (k, p[k])
    if p.get("schedule") and p["schedule"] != "1F1B":
        out += " " + p["schedule"]
    return out


# The micro-batch sizes the "same degrees" figure tries beside the published one: a
# handful of evals a row, the small sizes where a pipeline's bubble shrinks (more
# micro-batches) and the published size's neighbourhood. Not the search's whole range.
MB_SIZES = (1, 2, 4)


def mb_candidates(plan):
    """The micro-batch sizes, other than the published one, at which the published
    plan is priced again: those of MB_SIZES and twice the published size that divide
    the per-replica batch (batch / (dp x sdp)); under an interleaved schedule only
    those that give at least PP micro-batches (the schedule needs one per stage in
    flight). What else a schedule refuses, eval says."""
    replicas = plan.get("dp", 1) * plan.get("sdp", 1)
    if replicas <= 0 or plan["batch"] % replicas:
        return []
    per_replica = plan["batch"] // replicas
    out = []
    for mbs in sorted(set(MB_SIZES) | {2 * plan["mbs"]}):
        if mbs == plan["mbs"] or per_replica % mbs:
            continue
        if plan.get("interleave", 1) > 1 and per_replica // mbs < plan["pp"]:
            continue
        out.append(mbs)
    return out


def best_microbatching(row, args, tmpdir, pub_s):
    """The published plan (its degrees, split, schedule, recompute, knobs: all of
    it) priced by eval at each of mb_candidates' micro-batch sizes; returns
    (the fastest of those and the published one as {"mbs", "n_micro", "s"}, the
    sizes eval refused as "mbs N: why"). A refusal (memory, a schedule's count) is
    skipped, not an error: the figure is the best the published degrees reach."""
    p = row["plan"]
    best = {"mbs": p["mbs"], "n_micro": None, "s": pub_s, "peak": None}
    refused = []
    for mbs in mb_candidates(p):
        alt = json.loads(json.dumps(row))
        alt["plan"]["mbs"] = mbs
        try:
            doc, rc, why = run_json(run.eval_command(alt, args.tesselctl, args.topology, tmpdir),
                                    args.verbose)
        except (ValueError, KeyError, OSError) as e:
            doc, rc, why = None, -1, "runner: %s" % e
        if doc is None:
            refused.append("mbs %d: exit %d: %s" % (mbs, rc, why))
            continue
        if doc["plan"]["iter_time_s"] < best["s"]:
            best = {"mbs": mbs, "n_micro": doc["plan"]["n_micro"], "s": doc["plan"]["iter_time_s"],
                    "peak": doc["plan"].get("peak_bytes")}
    return best, refused


def run_json(cmd, verbose):
    if verbose:
        print("$ " + " ".join(cmd))
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        lines = (proc.stderr.strip() or proc.stdout.strip() or "no message").splitlines()
        return None, proc.returncode, lines[-1] if lines else ""
    return json.loads(proc.stdout), 0, ""


def compare_row(row, args, tmpdir):
    res = {"id": row["id"], "source": row["source"], "ok": False}
    target = TARGETS[row["source"]]
    if row.get("refused"):
        res["error"] = "not expressible: %s" % row["refused"]
        return res
    try:
        pub, rc, why = run_json(run.eval_command(row, args.tesselctl, args.topology, tmpdir), args.verbose)
        if pub is None:
            res["error"] = "eval of the published plan: exit %d: %s" % (rc, why)
            return res
        if row["plan"].get("edges_dp"):
            res["error"] = "edges_dp: a per-layer plan no target takes"
            return res
        cmd, res["dropped"] = plan_command(row, args, tmpdir, target)
        best, rc, why = run_json(cmd, args.verbose)
        if best is None:
            res["error"] = ("search timed out (%g s)" % args.timeout if rc == 5
                            else "search: exit %d: %s" % (rc, why))
            res["pub_s"] = pub["plan"]["iter_time_s"]
            return res
        path = os.path.join(tmpdir, row["id"] + ".best.json")
        with open(path, "w") as f:
            json.dump(structure_only(best), f)
        again, rc, why = run_json(reeval_command(row, args, tmpdir, path), args.verbose)
    except (ValueError, KeyError, OSError) as e:
        res["error"] = "runner: %s" % e
        return res
    flops = run.flops_per_iter(row, pub["model"])
    res["measured_s"] = run.measured_seconds(row, flops)
    res["pub_s"] = pub["plan"]["iter_time_s"]
    res["pub_err_pct"] = 100 * (res["pub_s"] - res["measured_s"]) / res["measured_s"]
    res["pub_peak_gib"] = pub["plan"]["peak_bytes"] / 2**30
    res["budget_gib"] = best["plan"]["budget_bytes"] / 2**30
    res["pub_over_budget"] = res["pub_peak_gib"] > res["budget_gib"]
    res["search_s"] = best["plan"]["iter_time_s"]
    # the best plan under every knob of the row; where eval refuses it the
    # search's own figure stands, and the row says so
    res["best_s"] = again["plan"]["iter_time_s"] if again else best["plan"]["iter_time_s"]
    res["reeval_error"] = None if again else "exit %d: %s" % (rc, why)
    if args.verbose and not again:
        print("re-eval refused: " + res["reeval_error"])
    res["best_peak_gib"] = (again or best)["plan"]["peak_bytes"] / 2**30
    res["gain_pct"] = 100 * (res["pub_s"] / res["best_s"] - 1)
    # the part of the gain the published degrees reach by micro-batching alone
    mb, res["mb_refused"] = best_microbatching(row, args, tmpdir, res["pub_s"])
    res["mb_best_s"], res["mb_best_mbs"] = mb["s"], mb["mbs"]
    res["mb_best_n_micro"] = mb["n_micro"] if mb["n_micro"] is not None else pub["plan"]["n_micro"]
    res["mb_gain_pct"] = 100 * (res["pub_s"] / res["mb_best_s"] - 1)
    # a faster size the search's budget cannot hold: the mb gain may then exceed the gain
    res["mb_best_peak_gib"] = (mb["peak"] if mb["peak"] is not None else pub["plan"]["peak_bytes"]) / 2**30
    res["mb_over_budget"] = res["mb_best_peak_gib"] > res["budget_gib"]
    # a diagnostic, not a prediction: where the source published the published
    # plan's memory, the best plan's extra predicted bytes on top of that figure;
    # over the device it would likely not run (the allocator's reserve and
    # fragmentation are not priced: README.md "torchtitan memory")
    meas_mem = row["measured"].get("memory_gib")
    if meas_mem is not None:
        res["best_mem_projected_gib"] = meas_mem + res["best_peak_gib"] - res["pub_peak_gib"]
        res["may_oom"] = res["best_mem_projected_gib"] > run.device_memory_gib(row["cluster"])
    res["pub_plan"], res["best_plan"] = describe(pub), describe(best)
    res["ok"] = True
    return res


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return None if n == 0 else (xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2)


def summarize(results, sources, claim_pct):
    out = {}
    for src in sources:
        rs = [r for r in results if r["source"] == src]
        ok = [r for r in rs if r["ok"]]
        gains = [r["gain_pct"] for r in ok]
        mb_gains = [r["mb_gain_pct"] for r in ok]
        out[src] = {"target": TARGETS[src], "rows": len(rs), "compared": len(ok),
                    "timeouts": sum(1 for r in rs if "timed out" in r.get("error", "")),
                    "failed": len(rs) - len(ok),
                    "median_gain_pct": median(gains),
                    "max_gain_pct": max(gains) if gains else None,
                    "median_mb_gain_pct": median(mb_gains),
                    "claims": sum(1 for g in gains if g > claim_pct),
                    "worse": sum(1 for g in gains if g < -1.0),
                    "may_oom": sum(1 for r in ok if r.get("may_oom"))}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tesselctl", default="build/client/tesselctl")
    ap.add_argument("--rows", default=os.path.join(HERE, "rows.json"))
    ap.add_argument("--source", action="append", help="only this source (repeatable)")
    ap.add_argument("--row", action="append", help="only this row id (repeatable)")
    ap.add_argument("--topology", choices=("nics", "aggregate", "single"), default="nics")
    ap.add_argument("--timeout", type=float, default=60, help="plan's --timeout per row, seconds")
    ap.add_argument("--claim", type=float, default=15.0,
                    help="a predicted gain over the published plan above this %% is counted as a claim")
    ap.add_argument("--json", metavar="FILE", help="write rows and summaries as JSON")
    ap.add_argument("--verbose", action="store_true", help="print each tesselctl command")
    args = ap.parse_args()

    with open(args.rows) as f:
        rows = json.load(f)["rows"]
    known = {r["source"] for r in rows}
    bad = [s for s in (args.source or []) if s not in known]
    if bad:
        sys.exit("vs_search.py: unknown source %s; known: %s" % (", ".join(bad), ", ".join(sorted(known))))
    if args.source:
        rows = [r for r in rows if r["source"] in args.source]
    if args.row:
        rows = [r for r in rows if r["id"] in args.row]
        missing = set(args.row) - {r["id"] for r in rows}
        if missing:
            sys.exit("vs_search.py: unknown row %s" % ", ".join(sorted(missing)))
    unmapped = collections.Counter(r["source"] for r in rows if r["source"] not in TARGETS)
    rows = [r for r in rows if r["source"] in TARGETS]
    sources = list(dict.fromkeys(r["source"] for r in rows))

    with tempfile.TemporaryDirectory(prefix="tessel-vs-search-") as tmpdir:
        results = [compare_row(r, args, tmpdir) for r in rows]

    print("gain = published prediction / best prediction - 1 (both priced by eval under the row's knobs)")
    print("mb gain = published prediction / the published plan's at its best micro-batch size - 1"
          " (the same degrees, schedule and knobs; mbs: that size)")
    print("%-26s %-10s %8s %8s %7s %8s %7s %7s %4s  %s" % (
        "row", "target", "meas s", "pub s", "err %", "best s", "gain %", "mb g %", "mbs",
        "published -> best"))
    for r in results:
        if not r["ok"]:
            print("%-26s %-10s NOT COMPARED  %s" % (r["id"], TARGETS[r["source"]], r["error"]))
            continue
        flag = " pub>budget" if r["pub_over_budget"] else ""
        if r["mb_over_budget"] and not r["pub_over_budget"]:
            flag += " mbs>budget (%.1f GiB)" % r["mb_best_peak_gib"]
        if r.get("may_oom"):
            flag += " OOM? (%.0f GiB: measured + the extra predicted)" % r["best_mem_projected_gib"]
        flag += " (re-eval refused: search's figure)" if r["reeval_error"] else ""
        print("%-26s %-10s %8.4g %8.4g %+7.1f %8.4g %+7.1f %+7.1f %4d  %s -> %s%s" % (
            r["id"], TARGETS[r["source"]], r["measured_s"], r["pub_s"], r["pub_err_pct"],
            r["best_s"], r["gain_pct"], r["mb_gain_pct"], r["mb_best_mbs"], r["pub_plan"],
            r["best_plan"], flag))
        if args.verbose and r["mb_refused"]:
            print("  same degrees, refused: " + "; ".join(r["mb_refused"]))

    dropped = [r for r in results if r.get("dropped")]
    if dropped:
        print()
        print("stack switches plan cannot take (searched without them; the re-evaluation has them):")
        for r in dropped:
            print("  %-26s %s" % (r["id"], "; ".join(r["dropped"])))
    if unmapped:
        print()
        print("sources not compared (no --target runs their stack):")
        for src, n in unmapped.items():
            print("  %-26s %2d rows: %s" % (src, n, UNMAPPED.get(src, "no target mapped")))

    summary = summarize(results, sources, args.claim)
    print()
    print("per source (claims: predicted gain > %g%%; worse: the search's best predicted > 1%% slower)" % args.claim)
    for src in sources:
        s = summary[src]
        print("  %-26s %-10s rows %2d  compared %2d  timeouts %d  median gain %6s%%  max %6s%%  "
              "median mb gain %6s%%  claims %2d  worse %2d  OOM? %d" % (
                  src, s["target"], s["rows"], s["compared"], s["timeouts"],
                  run.fmt(s["median_gain_pct"], "+.1f"), run.fmt(s["max_gain_pct"], "+.1f"),
                  run.fmt(s["median_mb_gain_pct"], "+.1f"), s["claims"], s["worse"], s["may_oom"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": results, "sources": summary}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
