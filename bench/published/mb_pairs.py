#!/usr/bin/env python3
"""mb_pairs.py — measured pipeline rows that differ only in micro-batch size, held to 1F1B.

For every source, rows with a pipeline (PP >= 2, not interleaved) whose model, cluster
and plan agree in everything but the micro-batch size (and the layer split, which AMP
re-balanced per micro-batch) are taken in pairs of adjacent sizes b1 < b2. Under the
pipeline form of a 1F1B schedule (Tessel's closed form prices AMP's rows so),
m micro-batches over stages that take s_i each take

    T = K + sum_i s_i + (m - 1) max_i s_i

with K >= 0 what runs once per iteration (the step, the DP reduce). If no stage gets
faster with a larger micro-batch (s_i(b2) >= s_i(b1): true of every term of Tessel's,
each non-decreasing in a micro-batch's bytes and FLOPs or fixed per micro-batch), then
where the pair's run with more micro-batches is the slower one (T1 > T2):

  * the slowest stage at b1 takes at least  s_min = (T1 - T2) / (m1 - m2)  a micro-batch;
  * the other p - 1 stages at b2 take at most, together,  budget = T2 - m2 s_min.

A negative budget is a pair no such stage times reach; a small one is to be set beside
what the other stages are known to take (bench/published/README.md, "AMP's hetero-cluster
rows at micro-batch 1–2"). Nothing in Tessel is fitted from this; it reads measurements.

usage: mb_pairs.py [--rows FILE] [--source KEY]... [--tight S]
"""
import argparse
import collections
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run  # noqa: E402  (bench/published/run.py: the published figure as seconds)

# plan fields that may differ inside a pair: the micro-batch itself, the split AMP
# re-balanced for it, and prose
FREE_FIELDS = ("mbs", "layers_per_stage", "note", "stack_note")


def pair_key(row):
    """What two rows must share to be compared: model, cluster and plan but the
    micro-batch (FREE_FIELDS)."""
    plan = {k: v for k, v in row["plan"].items() if k not in FREE_FIELDS}
    return json.dumps([row["source"], row["model"], row["cluster"], plan], sort_keys=True)


def seconds(row):
    """The measured seconds per iteration, or None where the figure needs the FLOP
    count (tflops_per_gpu rows: left out)."""
    if row["measured"]["metric"] == "tflops_per_gpu":
        return None
    return run.measured_seconds(row, None)


def stage_bounds(t1, m1, t2, m2):
    """(s_min, budget) in seconds for a pair whose run with m1 > m2 micro-batches took
    t1 > t2 (the module's docstring); None where t1 <= t2 (a pair any slower stage
    reaches: nothing to bound)."""
    if m1 <= m2:
        raise ValueError("the pair's first run must have the more micro-batches (%d, %d)" % (m1, m2))
    if t1 <= t2:
        return None
    s_min = (t1 - t2) / (m1 - m2)
    return s_min, t2 - m2 * s_min


def pairs(rows, sources=None):
    """Each adjacent micro-batch pair: a dict per pair, in rows.json's order of plans."""
    groups = collections.OrderedDict()
    for row in rows:
        p = row["plan"]
        if p.get("pp", 1) < 2 or p.get("interleave", 1) != 1:
            continue
        if sources and row["source"] not in sources:
            continue
        t = seconds(row)
        if t is None:
            continue
        groups.setdefault(pair_key(row), []).append((p["mbs"], t, row))
    out = []
    for members in groups.values():
        members.sort(key=lambda x: x[0])
        for (b1, t1, r1), (b2, t2, r2) in zip(members, members[1:]):
            if b1 == b2:
                continue
            p = r1["plan"]
            m1, m2 = p["batch"] // (p["dp"] * b1), p["batch"] // (p["dp"] * b2)
            bounds = stage_bounds(t1, m1, t2, m2)
            out.append({"source": r1["source"], "ids": (r1["id"], r2["id"]), "mbs": (b1, b2),
                        "m": (m1, m2), "s": (t1, t2), "tp": p.get("tp", 1), "pp": p["pp"],
                        "dp": p["dp"], "s_min": bounds[0] if bounds else None,
                        "budget": bounds[1] if bounds else None})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", default=os.path.join(HERE, "rows.json"))
    ap.add_argument("--source", action="append", help="only this source (repeatable)")
    ap.add_argument("--tight", type=float, metavar="S",
                    help="print only the pairs whose budget is below S seconds")
    args = ap.parse_args()
    with open(args.rows) as f:
        doc = json.load(f)
    rows = doc if isinstance(doc, list) else doc["rows"]
    known = {r["source"] for r in rows}
    unknown = sorted(set(args.source or ()) - known)
    if unknown:
        sys.exit("mb_pairs.py: --source %s: no such source in %s" % (", ".join(unknown), args.rows))
    found = pairs(rows, set(args.source) if args.source else None)
    print("%-24s %-26s %-9s %-9s %-13s %-15s %9s %9s" % (
        "source", "rows", "tp/pp/dp", "mbs", "micro-batches", "measured s", "s_min ms", "budget s"))
    shown = 0
    for q in found:
        if args.tight is not None and (q["budget"] is None or q["budget"] >= args.tight):
            continue
        shown += 1
        print("%-24s %-26s %-9s %-9s %-13s %-15s %9s %9s%s" % (
            q["source"], " -> ".join(q["ids"]), "%d/%d/%d" % (q["tp"], q["pp"], q["dp"]),
            "%d -> %d" % q["mbs"], "%d -> %d" % q["m"], "%.3g -> %.3g" % q["s"],
            "-" if q["s_min"] is None else "%.0f" % (1e3 * q["s_min"]),
            "-" if q["budget"] is None else "%.3f" % q["budget"],
            "  no such stage times" if q["budget"] is not None and q["budget"] < 0 else ""))
    print("%d pairs, %d shown, %d with the slower run at the more micro-batches, %d with a negative budget"
          % (len(found), shown, sum(q["s_min"] is not None for q in found),
             sum(q["budget"] is not None and q["budget"] < 0 for q in found)))


if __name__ == "__main__":
    main()
