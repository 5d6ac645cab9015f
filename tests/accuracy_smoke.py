#!/usr/bin/env python3
"""accuracy_smoke.py — bench/accuracy's cpu smoke run (--devops cpu --scale-down).

Checks behaviour, never timings or error levels: the markdown table has a row
per plan (at least 10) and the JSON the same rows, every plan ran; the
leave-one-out column is not the in-sample fit (no plan calibrates itself); the
summary quotes MAE and Spearman per column; and the leave-one-out column's
MAE, priced through the cost model with the calibration attached, equals the
mae_after calibrate.h computes on the samples (the two paths agree).

usage: accuracy_smoke.py PATH/TO/accuracy
"""
import json
import math
import os
import subprocess
import sys
import tempfile


def main():
    exe = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "acc.json")
        run = subprocess.run([exe, "--devops", "cpu", "--scale-down", "--json", out],
                             capture_output=True, text=True, timeout=600)
        if run.returncode != 0:
            sys.exit(f"accuracy exited {run.returncode}: {run.stderr}")
        with open(out) as f:
            doc = json.load(f)
    table = [ln for ln in run.stdout.splitlines() if ln.startswith("| ") and ln[2].isdigit()]
    fails = []
    if len(table) < 10:
        fails.append(f"table has {len(table)} plan rows, want >= 10")
    rows = doc["rows"]
    if len(rows) != len(table):
        fails.append(f"JSON has {len(rows)} rows, the table {len(table)}")
    if not all(r["ran"] and not r["oom"] for r in rows):
        fails.append("a plan did not run: " + run.stderr)
    differ = [r for r in rows if r["loo_s"] is not None and r["fit_s"] is not None
              and r["loo_s"] != r["fit_s"]]
    if len(differ) < len(rows) // 2:
        fails.append(f"leave-one-out equals the in-sample fit on {len(rows) - len(differ)} rows")
    for col in ("builtin", "fit", "loo"):
        s = doc["summary"].get(col, {})
        if s.get("mae") is None or "spearman" not in s:
            fails.append(f"summary of {col} lacks mae/spearman: {s}")
    cal, loo = doc["calibration"], doc["summary"]["loo"]["mae"]
    if cal["trials"] != len(rows) or not math.isclose(cal["iter_error_after"], loo,
                                                      rel_tol=1e-6):
        fails.append(f"calibrate.h's mae_after {cal} != the LOO column's MAE {loo}")
    if not math.isclose(cal["iter_error_before"], doc["summary"]["builtin"]["mae"], rel_tol=1e-6):
        fails.append("calibrate.h's mae_before is not the built-in column's MAE")
    for f in fails:
        print("FAIL:", f)
    print(f"{len(table)} plans; {len(fails)} failures")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
