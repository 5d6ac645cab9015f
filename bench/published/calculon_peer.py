#!/usr/bin/env python3
"""calculon_peer.py — run Calculon on the Megatron-LM rows of rows.json.

Calculon (Isaev et al., SC23: "Calculon: a Methodology and Tool for High-Level
Codesign of Systems and Large Language Models") is an analytical model of
Megatron-LM training. This script writes, for each row it can express, the
model JSON and the execution JSON that `calculon llm` takes, runs it on
Calculon's own A100-80G system file (systems/a100_80g.json, the one its
authors validated against Korthikanti 2022's Table 5), and prints its
predicted seconds per iteration. With --write it records them in rows.json as
each row's `peer_prediction` ({who: "Calculon", iter_s, mem_gib, how}), which
run.py prints as the `peer: Calculon` line of the row's source.

Nothing of Calculon is copied here: give the path of a checkout of
calculon-ai/calculon (commit caa4b11 made rows.json's figures). Without one
the script says so and exits 0. Calculon imports numpy, pandas and psutil at
start-up (Debian: python3-numpy, python3-pandas, python3-psutil); --python
names an interpreter that has them. See README.md, "Peers: AMP and Calculon".

usage: python3 bench/published/calculon_peer.py [--calculon DIR] [--python PY]
           [--rows FILE] [--source KEY]... [--write]
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# The sources whose rows are Megatron-LM runs Calculon's inputs can state as
# run (README.md "Peers"): GPT-style blocks (2-matrix GELU FFN, multi-head
# attention), fp16 on A100 80GB, TP/PP/DP, interleaving, full or selective
# recomputation, sequence parallelism, no ZeRO-3.
SOURCES = ("korthikanti22", "narayanan21-t1", "narayanan21-t2-ptdp")
SYSTEM = "systems/a100_80g.json"


def not_expressible(row):
    """Why Calculon's inputs cannot state this row as run, or None."""
    m, p, c = row["model"], row["plan"], row["cluster"]
    if m.get("kind") != "gpt2":
        return "model is not a GPT-style block (Calculon: 2-matrix FFN, multi-head attention)"
    if c.get("gpu") != "A100-80G":
        return "GPU %s is not Calculon's A100-80G system" % c.get("gpu")
    if p.get("opt_step") != "megatron-fp16":
        return "not an fp16 Megatron-LM run"
    if p.get("sdp", 1) > 1 or p.get("cp", 1) > 1 or p.get("ep", 1) > 1:
        return "ZeRO-3, context or expert parallelism"
    if p.get("zero", 0) > 1:
        return "ZeRO-2 (Calculon shards the optimizer only)"
    return None


def calculon_model(row):
    """Calculon's application JSON (Llm.Application) for the row's shape."""
    m = row["model"]
    return {"hidden": m["hidden"], "feedforward": m["ffn"], "seq_size": m["seq"],
            "attn_heads": m["heads"], "attn_size": m["hidden"] // m["heads"],
            "num_blocks": m["layers"]}


def calculon_execution(row):
    """Calculon's execution JSON (Llm.Execution) for the row's plan, encoded as
    its authors encode Megatron-LM runs in validation/seqsel/tab5/*.json: TP on
    the NVLink tier (network 0), PP and DP on the InfiniBand tier (1); sequence
    parallelism as reduce-scatter/all-gather TP communication with the
    all-gather redone under selective recomputation; no TP overlap; fp16."""
    p = row["plan"]
    sp = bool(p.get("sp"))
    recompute = {"full": "full", "selective": "attn_only", "none": "none"}[p["ckpt"]]
    return {
        "num_procs": p["tp"] * p["pp"] * p["dp"],
        "tensor_par": p["tp"], "pipeline_par": p["pp"], "data_par": p["dp"],
        "tensor_par_net": 0, "pipeline_par_net": 1, "data_par_net": 1,
        "batch_size": p["batch"], "microbatch_size": p["mbs"],
        "datatype": "float16", "fused_activation": False, "attention_type": "multihead",
        "activation_recompute": recompute,
        "pipeline_interleaving": p.get("interleave", 1),
        "optimizer_sharding": p.get("zero", 0) == 1,
        "tensor_par_comm_type": "rs_ag" if sp else "ar",
        "tensor_par_overlap": "none",
        "seq_par_ag_redo": sp and recompute == "attn_only",
        # PyTorch DDP's all-reduce under the backward (Table 1's --DDP-impl torch rows)
        "data_par_overlap": bool(p.get("overlap_grad_reduce")) and p["dp"] > 1,
        "weight_offload": False, "activations_offload": False, "optimizer_offload": False,
        "training": True,
    }


def same_file(checkout, pattern, doc):
    """The checkout's own file (relative path) with exactly this content, or None."""
    for path in sorted(glob.glob(os.path.join(checkout, pattern))):
        with open(path) as f:
            if json.load(f) == doc:
                return os.path.relpath(path, checkout)
    return None


def commit_of(checkout):
    proc = subprocess.run(["git", "-C", checkout, "rev-parse", "--short=7", "HEAD"],
                          capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else "unknown commit"


def run_calculon(args, model_path, exe_path, stats_path):
    """Calculon's stats for one configuration, or raise with its message."""
    env = dict(os.environ, PYTHONPATH=args.calculon)
    cmd = [args.python, os.path.join(args.calculon, "bin", "calculon"), "llm",
           model_path, exe_path, os.path.join(args.calculon, SYSTEM), stats_path]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0 or not os.path.exists(stats_path):
        msg = (proc.stdout + proc.stderr).strip().splitlines()
        raise RuntimeError(msg[-1] if msg else "exit %d" % proc.returncode)
    with open(stats_path) as f:
        return json.load(f)


def how(commit, model_file, exe_file, m, e):
    """Enough to rerun the row: commit, system, model and execution settings."""
    model = model_file or ("h %d ffn %d heads %d attn_size %d blocks %d seq %d" % (
        m["hidden"], m["feedforward"], m["attn_heads"], m["attn_size"], m["num_blocks"], m["seq_size"]))
    exe = ("tp %d pp %d dp %d (nets 0/1/1) batch %d mbs %d interleave %d recompute %s "
           "tp_comm %s seq_par_ag_redo %s data_par_overlap %s optimizer_sharding %s "
           "tp_overlap none float16 unfused activation multihead" % (
               e["tensor_par"], e["pipeline_par"], e["data_par"], e["batch_size"],
               e["microbatch_size"], e["pipeline_interleaving"], e["activation_recompute"],
               e["tensor_par_comm_type"], str(e["seq_par_ag_redo"]).lower(),
               str(e["data_par_overlap"]).lower(), str(e["optimizer_sharding"]).lower()))
    if exe_file:
        exe += " (= its %s)" % exe_file
    return "calculon-ai/calculon %s, bench/published/calculon_peer.py: `calculon llm`, %s; model %s; %s" % (
        commit, SYSTEM, model, exe)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calculon", metavar="DIR", help="a checkout of calculon-ai/calculon")
    ap.add_argument("--python", default=sys.executable,
                    help="the interpreter that runs Calculon (needs numpy, pandas, psutil)")
    ap.add_argument("--rows", default=os.path.join(HERE, "rows.json"))
    ap.add_argument("--source", action="append", help="only this source (repeatable)")
    ap.add_argument("--write", action="store_true", help="record the figures in --rows")
    args = ap.parse_args()
    if not args.calculon:
        print("calculon_peer.py: no Calculon checkout given (--calculon DIR); nothing run")
        return 0
    if not os.path.exists(os.path.join(args.calculon, "bin", "calculon")):
        sys.exit("calculon_peer.py: --calculon %s: no bin/calculon there" % args.calculon)

    with open(args.rows) as f:
        doc = json.load(f)
    sources = args.source or SOURCES
    commit = commit_of(args.calculon)
    print("Calculon %s, %s" % (commit, SYSTEM))
    print("%-24s %-20s %10s %9s  %s" % ("row", "source", "calculon s", "mem GiB", "Calculon's own files"))
    with tempfile.TemporaryDirectory(prefix="tessel-calculon-") as tmp:
        for row in doc["rows"]:
            if row["source"] not in sources:
                continue
            why = not_expressible(row)
            if why:
                print("%-24s %-20s skipped: %s" % (row["id"], row["source"], why))
                continue
            m, e = calculon_model(row), calculon_execution(row)
            paths = [os.path.join(tmp, row["id"] + x) for x in (".model.json", ".exe.json", ".stats.json")]
            for path, d in zip(paths, (m, e)):
                with open(path, "w") as f:
                    json.dump(d, f, indent=2)
            try:
                stats = run_calculon(args, *paths)
            except RuntimeError as err:
                print("%-24s %-20s Calculon refused: %s" % (row["id"], row["source"], err))
                continue
            model_file = same_file(args.calculon, "models/*.json", m)
            # Table 5's files first: the end-to-end times its authors validated
            exe_file = (same_file(args.calculon, "validation/seqsel/tab5/*.json", e)
                        or same_file(args.calculon, "validation/seqsel/*/*.json", e))
            t, mem = stats["total_time"], stats["proc_mem_tier1_cap_req"] / 2**30
            print("%-24s %-20s %10.4f %9.1f  %s" % (row["id"], row["source"], t, mem,
                                                   ", ".join(x for x in (model_file, exe_file) if x) or "-"))
            if args.write:
                row["peer_prediction"] = {"who": "Calculon", "iter_s": round(t, 4),
                                          "mem_gib": round(mem, 1),
                                          "how": how(commit, model_file, exe_file, m, e)}
    if args.write:
        with open(args.rows, "w") as f:
            f.write(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        print("written: %s" % args.rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
