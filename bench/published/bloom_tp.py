#!/usr/bin/env python3
"""bloom_tp.py — the BLOOM rows at other intra-node figures, and what is left per TP all-reduce.

The rows of the BigScience tr11 sources (bloom-tr11, bloom-tr11-reshape,
bloom-tr11-prequel) are the only ones on Jean Zay's nodes, whose NVLink all-reduce is
not measured: Tessel prices it at the A100 node's curve (cost model 139). This runs
each row's own `run.py` command with the cluster given as a JSON file whose nodes carry
`intra_gbps` F (150 = the A100's built-in figure, the row as run.py prices it; the
curve scales with F), for each F asked, and prints:

  * per row: its TP, DP and micro-batch, the measured seconds, the predicted seconds
    and error at each F, and at the first F what is left per TP all-reduce of the
    critical stage — (measured − predicted) / ((micro-batches + PP − 1) × blocks a
    stage × 6), six a block and micro-batch under full recompute without SP (the
    forward's two, the recompute's two, the backward's two);
  * per source and F: mean and max |error| and the Spearman of TFLOP/s, as run.py.

A diagnosis aid (bench/published/README.md, "BLOOM's reshaping rows: TP 4 against
TP 2"): nothing here is a Tessel figure, and a figure other than 150 is not a
measurement of Jean Zay's node.

usage: bloom_tp.py [--tesselctl PATH] [--rows FILE] [--intra F ...]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run  # noqa: E402  (bench/published/run.py: the rows' command lines)

SOURCES = ("bloom-tr11", "bloom-tr11-reshape", "bloom-tr11-prequel")
TP_ALLREDUCES_PER_BLOCK = 6  # forward, recompute, backward: two each (full recompute, no SP)


def node_json(row, intra_gbps, tmpdir):
    """The row's cluster as a JSON file, its nodes at intra_gbps."""
    c = row["cluster"]
    doc = {"comment": "bloom_tp.py: %s at intra %g GB/s" % (row["id"], intra_gbps),
           "nodes": [{"type": c["gpu"], "gpus": c["gpus_per_node"], "count": c["nodes"],
                      "nics": c["nics_per_node"], "intra_gbps": intra_gbps}],
           "link": c["nic"]}
    path = os.path.join(tmpdir, "%s.%g.cluster.json" % (row["id"], intra_gbps))
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def evaluate(row, tesselctl, intra_gbps, tmpdir):
    """eval's plan document for the row, its cluster's nodes at intra_gbps."""
    cmd = run.eval_command(row, tesselctl, "nics", tmpdir)
    cmd[cmd.index("--cluster") + 1] = node_json(row, intra_gbps, tmpdir)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        sys.exit("bloom_tp.py: %s: %s" % (row["id"], p.stderr.strip()))
    return json.loads(p.stdout)


def tp_allreduces(row, plan):
    """The TP all-reduces of the critical (inner) stage over one iteration."""
    p = row["plan"]
    if p.get("ckpt") != "full" or p.get("sp"):
        raise ValueError("%s: six TP all-reduces a block hold under full recompute without SP" % row["id"])
    cycles = plan["n_micro"] + plan["pp"] - 1
    blocks = max(s["n_layers"] for s in plan["stages"])
    return cycles * blocks * TP_ALLREDUCES_PER_BLOCK


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tesselctl", default="build/client/tesselctl")
    ap.add_argument("--rows", default=os.path.join(HERE, "rows.json"))
    ap.add_argument("--intra", type=float, nargs="+", default=[150.0, 75.0, 50.0], metavar="F",
                    help="intra-node all-reduce figures, GB/s (default 150 75 50; 150 is run.py's)")
    args = ap.parse_args()
    if any(not 0 < f <= 100000 for f in args.intra):
        sys.exit("bloom_tp.py: --intra: each figure must be in (0, 100000] GB/s")
    with open(args.rows) as f:
        rows = [r for r in json.load(f)["rows"] if r["source"] in SOURCES]
    if not rows:
        sys.exit("bloom_tp.py: no rows of %s in %s" % (", ".join(SOURCES), args.rows))

    out = []
    with tempfile.TemporaryDirectory(prefix="tessel-bloom-tp-") as tmpdir:
        for row in rows:
            docs = [evaluate(row, args.tesselctl, f, tmpdir) for f in args.intra]
            flops = run.flops_per_iter(row, docs[0]["model"])
            meas = run.measured_seconds(row, flops)
            pred = [d["plan"]["iter_time_s"] for d in docs]
            out.append((row, flops, meas, pred, (meas - pred[0]) / tp_allreduces(row, docs[0]["plan"])))

    head = "".join(" %14s" % ("F %g" % f) for f in args.intra)
    print("%-34s %3s %3s %3s %9s%s %14s" % ("row", "TP", "DP", "MBS", "meas s", head,
                                          "left/TP-AR ms"))
    for row, _, meas, pred, left in out:
        p = row["plan"]
        cells = "".join(" %7.2f %+5.1f%%" % (t, 100 * (t / meas - 1)) for t in pred)
        print("%-34s %3d %3d %3d %9.2f%s %14.3f" % (row["id"], p["tp"], p["dp"], p["mbs"], meas,
                                                  cells, 1000 * left))
    print()
    print("per source (mean |err| / max |err| / Spearman of TFLOP/s), at each F:")
    for src in SOURCES:
        sel = [o for o in out if o[0]["source"] == src]
        if not sel:
            continue
        cells = []
        for i, _ in enumerate(args.intra):
            errs = [abs(o[3][i] / o[2] - 1) for o in sel]
            meas_tf = [o[1] / o[2] / run.gpus(o[0]) for o in sel]
            pred_tf = [o[1] / o[3][i] / run.gpus(o[0]) for o in sel]
            rho = run.spearman(meas_tf, pred_tf)
            cells.append(" %5.1f%% / %5.1f%% / %4s" % (100 * sum(errs) / len(errs), 100 * max(errs),
                                                      "n/a" if rho is None else "%.2f" % rho))
        print("  %-22s%s" % (src, "".join(cells)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
