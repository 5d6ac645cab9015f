#!/usr/bin/env python3
"""bench/search_check.py — does `tesselctl plan` return the best plan of its space?

For each case (a model on one node of 8 A100-80G at a fixed global batch) it
searches the default space, then prices, with `tesselctl eval --no-search` under the
same budget (the search's budget_bytes), plans that the default space contains:

  restricted  the best plan of each restricted search (--pp N, --no-tp, --no-sdp,
              --no-dp, --no-zero-bubble, --no-interleave, --no-ckpt, --no-zero,
              --no-seq-par, --no-sublayer): each is a plan of the default space;
  uniform     a brute-force enumeration of the plans with one strategy for every
              layer: every PP degree, every (tp, dp, sdp) of the stage block
              (Takeaway #3: not dp with sdp), +sp with TP, ZeRO 1/2 with DP, CKPT
              or not, every micro-batch count the search weighs, 1F1B, ZB-H1 and
              ZB-V.

A miss is a plan that fits and is faster than the search's best (by more than
1e-9 relative). Prints one line per case and each miss; exits 1 when there is
one (a checker, not a test: it is not run by meson; ~1 min per case on one
core).

usage: bench/search_check.py [--tesselctl PATH] [--quick] [MODEL:BATCH ...]
"""
import argparse
import itertools
import json
import subprocess
import sys
import tempfile

CLUSTER = "1x8xA100-80G"
DEFAULT_CASES = ["GPT2-1.3B:8", "GPT2-1.3B:32", "GPT2-1.3B:64", "GPT3-15B:8", "GPT3-15B:16",
                 "GPT3-15B:32", "GPT3-15B:64", "GPT3-39B:16"]
RESTRICTIONS = [["--pp", "1"], ["--pp", "2"], ["--pp", "4"], ["--pp", "8"], ["--no-tp"],
                ["--no-sdp"], ["--no-dp"], ["--no-zero-bubble"], ["--no-interleave"],
                ["--no-ckpt"], ["--no-zero"], ["--no-seq-par"], ["--no-sublayer"]]


def run_json(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip()
    return json.loads(p.stdout), ""


def search(tc, model, batch, extra):
    cmd = [tc, "plan", "--local", "--model", model, "--cluster", CLUSTER, "--batch", str(batch),
           "--no-baselines", "--json"] + extra
    return run_json(cmd)


def eval_doc(tc, model, doc, budget):
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        json.dump(doc, f)
        f.flush()
        cmd = [tc, "eval", "--local", "--model", model, "--cluster", CLUSTER, "--plan", f.name,
               "--no-search", "--memory", str(budget), "--json"]
        d, err = run_json(cmd)
    return (d["plan"] if d else None), err


def eval_flags(tc, model, batch, flags, budget):
    cmd = [tc, "eval", "--local", "--model", model, "--cluster", CLUSTER, "--batch", str(batch),
           "--no-search", "--memory", str(budget), "--json"] + flags
    d, err = run_json(cmd)
    return (d["plan"] if d else None), err


def micro_counts(batch, pp):
    """The counts tsl_engine_run weighs (search_engine.c micro_counts)."""
    if pp == 1:
        return [m for m in (1, 2, 4, 8, 16, 32) if batch % m == 0]
    if batch < pp:
        return [batch]
    out, last = [], 0
    for m in range(pp, 32 * pp + 1):
        if batch % m or (last and m < 2 * last) or len(out) == 6:
            continue
        out.append(m)
        last = m
    return out


def uniform_plans(batch, quick):
    for pp in (1, 2, 4, 8):
        g = 8 // pp
        for tp, dp in itertools.product((1, 2, 4, 8), (1, 2, 4, 8)):
            if g % (tp * dp):
                continue
            sdp = g // (tp * dp)
            if dp > 1 and sdp > 1:
                continue
            for m in micro_counts(batch, pp):
                data = dp * sdp
                if (batch // m) % data:
                    continue
                for sched in (["1f1b"] if pp == 1 else ["1f1b", "zbh1", "zbv"]):
                    for ckpt in ("none", "full"):
                        for zero in ([0] if dp == 1 or quick else [0, 1, 2]):
                            flags = ["--pp", str(pp), "--tp", str(tp), "--dp", str(dp), "--sdp",
                                     str(sdp), "--micro", str(m), "--ckpt", ckpt]
                            if sched != "1f1b":
                                flags += ["--schedule", sched]
                            if tp > 1:
                                flags += ["--sp"]
                            if zero:
                                flags += ["--zero", str(zero)]
                            yield flags


def describe(p):
    return "pp %d m %d %s%s" % (p["pp"], p["n_micro"], p.get("schedule", "1F1B"),
                                " sub-layer" if p.get("granularity") == "sublayer" else "")


def check(tc, case, quick):
    model, batch = case.split(":")
    batch = int(batch)
    d, err = search(tc, model, batch, [])
    if d is None:
        print("%-14s batch %3d  search failed: %s" % (model, batch, err))
        return 0
    best = d["plan"]
    t, budget = best["iter_time_s"], best["budget_bytes"]
    misses, priced = [], 0
    for extra in RESTRICTIONS:
        r, _ = search(tc, model, batch, extra)
        if r is None:
            continue
        p, _ = eval_doc(tc, model, r, budget)
        priced += 1
        if p is not None and p["iter_time_s"] < t * (1 - 1e-9):
            misses.append("restricted %s: %s at %.4f s" % (" ".join(extra), describe(p),
                                                             p["iter_time_s"]))
    for flags in uniform_plans(batch, quick):
        p, _ = eval_flags(tc, model, batch, flags, budget)
        priced += 1
        if p is not None and p["iter_time_s"] < t * (1 - 1e-9):
            misses.append("uniform %s: %.4f s" % (" ".join(flags), p["iter_time_s"]))
    print("%-14s batch %3d  search %.4f s (%s), %d plans priced, %d faster" %
          (model, batch, t, describe(best), priced, len(misses)))
    for s in misses:
        print("    miss: " + s)
    return len(misses)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tesselctl", default="build/client/tesselctl")
    ap.add_argument("--quick", action="store_true", help="no ZeRO-1/2 variants of the uniform plans")
    ap.add_argument("cases", nargs="*", default=DEFAULT_CASES)
    a = ap.parse_args()
    total = sum(check(a.tesselctl, c, a.quick) for c in a.cases)
    print("%d plan(s) faster than the search's best" % total)
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
