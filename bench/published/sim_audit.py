#!/usr/bin/env python3
"""sim_audit.py — every bench/published row's two iteration times side by side.

A plan carries the closed form's iteration time (plan.iter_time_s, what run.py holds
to the published figure) and the 1F1B event simulator's (plan.sim_iter_time_s,
planner/pipesim.c over the same stage figures: tsl_plan_sim_input). This runs each
row's `tesselctl eval` as run.py does and prints both, their difference and the
plan's schedule, rows over --threshold percent first. Rows of one stage have no
simulated figure (nothing to schedule). Standard library only; see README.md
"The event simulator against the closed form".

usage: python3 bench/published/sim_audit.py [--tesselctl PATH] [--source KEY]...
           [--threshold PCT] [--json FILE]
"""
import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402  (the rows' eval commands, one definition)


def schedule_of(plan):
    """The plan's pipeline schedule in words: 1F1B, 1F1B v (interleaved, with its group
    N where not P), or the zero-bubble one's name."""
    v = plan.get("interleave", 1)
    if str(plan.get("schedule", "1F1B")).lower() not in ("1f1b", "interleaved"):
        return plan["schedule"]
    if v > 1:
        return "1F1B v%d%s" % (v, " N%d" % plan["vp_group"] if plan.get("vp_group") else "")
    return "1F1B"


def audit_row(row, args, tmpdir):
    res = {"id": row["id"], "source": row["source"]}
    if row.get("refused"):
        res["error"] = "not expressible"
        return res
    cmd = run.eval_command(row, args.tesselctl, "nics", tmpdir)
    out, err = run.run_eval(cmd, False)
    if out is not None and row["plan"].get("edges_dp"):
        out, err = run.run_eval(run.edges_dp_command(row, cmd, out, tmpdir), False)
    if err:
        res["error"] = err
        return res
    plan = out["plan"]
    res.update(pp=plan["pp"], n_micro=plan["n_micro"], schedule=schedule_of(plan),
               closed_s=plan["iter_time_s"], sim_s=plan.get("sim_iter_time_s", 0.0))
    if res["sim_s"] > 0:
        res["diff_pct"] = 100 * (res["sim_s"] - res["closed_s"]) / res["closed_s"]
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tesselctl", default="build/client/tesselctl")
    ap.add_argument("--rows", default=os.path.join(run.HERE, "rows.json"))
    ap.add_argument("--source", action="append", help="audit only this source (repeatable)")
    ap.add_argument("--threshold", type=float, default=2.0,
                    help="percent |simulated - closed| / closed above which a row is listed first")
    ap.add_argument("--json", metavar="FILE", help="write the rows as JSON")
    args = ap.parse_args()
    with open(args.rows) as f:
        rows = json.load(f)["rows"]
    if args.source:
        rows = [r for r in rows if r["source"] in args.source]
    with tempfile.TemporaryDirectory(prefix="tessel-simaudit-") as tmpdir:
        results = [audit_row(r, args, tmpdir) for r in rows]
    sim = [r for r in results if r.get("diff_pct") is not None]
    over = [r for r in sim if abs(r["diff_pct"]) > args.threshold]
    print("%-32s %-25s %3s %5s %-11s %10s %10s %7s" % (
        "row", "source", "pp", "m", "schedule", "closed s", "sim s", "diff %"))
    for r in sorted(over, key=lambda r: -abs(r["diff_pct"])) + [r for r in sim if r not in over]:
        print("%-32s %-25s %3d %5d %-11s %10.4f %10.4f %+7.2f" % (
            r["id"], r["source"], r["pp"], r["n_micro"], r["schedule"], r["closed_s"], r["sim_s"],
            r["diff_pct"]))
    print()
    print("rows %d: simulated %d, over %.3g%% %d, one stage %d, refused %d" % (
        len(results), len(sim), args.threshold, len(over),
        sum(1 for r in results if "closed_s" in r and r["sim_s"] <= 0),
        sum(1 for r in results if "error" in r)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
