#!/usr/bin/env python3
"""published_bench_test.py — bench/published/run.py drives the build's tesselctl.

Runs the runner on a few rows of two sources, with the aggregate and the single
topology, and checks the shape of its output: one line per selected row, a
per-source line with numeric errors, the leave-one-source-out and targets lines,
the JSON file, exit status 0. It asserts no accuracy: the errors are the bench's
result, not a test condition.

usage: published_bench_test.py SOURCE_ROOT TESSELCTL
"""
import json
import os
import re
import subprocess
import sys
import tempfile


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def main():
    root, tesselctl = sys.argv[1], sys.argv[2]
    runner = os.path.join(root, "bench", "published", "run.py")
    with open(os.path.join(root, "bench", "published", "rows.json")) as f:
        rows = json.load(f)["rows"]
    # two small sources: Table 2 ZeRO-3 (multi-node, so the topology matters)
    # and torchtitan (memory published)
    sources = ["narayanan21-t2-zero3", "torchtitan-h100"]
    ids = [r["id"] for r in rows if r["source"] in sources]
    if len(ids) < 4:
        fail("rows.json lost the rows of %s" % sources)
    for topology in ("aggregate", "single"):
        with tempfile.TemporaryDirectory() as tmp:
            out_json = os.path.join(tmp, "out.json")
            cmd = [sys.executable, runner, "--tesselctl", tesselctl, "--topology", topology,
                   "--json", out_json] + [a for s in sources for a in ("--source", s)]
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
            if p.returncode != 0:
                fail("%s exited %d: %s" % (" ".join(cmd), p.returncode, p.stderr))
            lines = p.stdout.splitlines()
            for rid in ids:
                hits = [l for l in lines if l.startswith(rid + " ")]
                if len(hits) != 1:
                    fail("%s: %d lines for row %s, want 1" % (topology, len(hits), rid))
            for src in sources:
                pat = re.compile(r"^\s+%s\s+rows\s+\d+\s+refused\s+\d+\s+mean \|err\|\s+[0-9.]+%%\s+max \|err\|\s+[0-9.]+%%"
                                 % re.escape(src))
                if not any(pat.match(l) for l in lines):
                    fail("%s: no per-source line with numeric errors for %s:\n%s" % (topology, src, p.stdout))
            if not any(l.startswith("leave-one-source-out") for l in lines):
                fail("%s: no leave-one-source-out line" % topology)
            if not any(l.startswith("targets:") and all(s in l for s in sources) for l in lines):
                fail("%s: no targets line" % topology)
            with open(out_json) as f:
                doc = json.load(f)
            if sorted(r["id"] for r in doc["rows"]) != sorted(ids):
                fail("%s: JSON rows differ from the selection" % topology)
    # an unknown source is an error, not an empty table
    p = subprocess.run([sys.executable, runner, "--tesselctl", tesselctl, "--source", "nope"],
                       capture_output=True, text=True, timeout=60)
    if p.returncode == 0:
        fail("--source nope exited 0")
    print("ok")


if __name__ == "__main__":
    main()
