#!/usr/bin/env python3
"""megatron_lines_test.py — real Megatron-LM launch lines through `eval --megatron-args`.

Each tests/data/megatron/*.args holds the arguments of one launch script or functional
test of NVIDIA/Megatron-LM d98e8a64dd (its source path in the file's comment), as the
script passes them to pretrain_gpt.py. Two comment lines say how Tessel is to read it:

  # tessel: --model NAME --cluster SPEC     (or --hf-config {data}/FILE.json ...)
  # not modelled: flag flag ...             (or (none))

and an optional `# then: ...` is appended to the line. Each line must be accepted
(exit 0) and priced (an iteration time and a peak memory in the JSON plan), and the
flags eval names on stderr as "not modelled by Tessel" must be exactly the listed ones:
a flag classified as no effect, or refused, changes this.

usage: megatron_lines_test.py SOURCE_ROOT TESSELCTL
"""
import glob
import json
import os
import re
import shlex
import subprocess
import sys


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def header(text, key, path):
    m = re.search(r"^# %s:(.*)$" % re.escape(key), text, re.M)
    if not m:
        return None
    return m.group(1).strip()


def main():
    root, ctl = sys.argv[1], sys.argv[2]
    data = os.path.join(root, "tests", "data", "megatron")
    files = sorted(glob.glob(os.path.join(data, "*.args")))
    if len(files) < 5:
        fail("%s: %d launch lines, expected at least 5" % (data, len(files)))
    for path in files:
        name = os.path.basename(path)
        with open(path) as f:
            text = f.read()
        tessel = header(text, "tessel", path)
        listed = header(text, "not modelled", path)
        if tessel is None or listed is None:
            fail("%s: no '# tessel:' or '# not modelled:' line" % name)
        if "d98e8a64dd" not in text:
            fail("%s: the comment does not name the Megatron-LM commit" % name)
        want = set() if listed == "(none)" else set(listed.split())
        line = text + "\n" + (header(text, "then", path) or "")
        argv = [ctl, "eval", "--local", "--no-search", "--json"]
        argv += [a.replace("{data}", data) for a in shlex.split(tessel)]
        p = subprocess.run(argv + ["--megatron-args", line], capture_output=True, text=True)
        if p.returncode != 0:
            fail("%s: exit %d: %s" % (name, p.returncode, p.stderr.strip()))
        try:
            plan = json.loads(p.stdout)["plan"]
        except (ValueError, KeyError) as e:
            fail("%s: no JSON plan (%s): %r" % (name, e, p.stdout[:200]))
        if not plan.get("iter_time_s", 0) > 0 or not plan.get("peak_bytes", 0) > 0:
            fail("%s: not priced: iter_time_s %r, peak_bytes %r" %
                 (name, plan.get("iter_time_s"), plan.get("peak_bytes")))
        got = set(re.findall(r"megatron: --([a-z0-9-]+): not modelled by Tessel", p.stderr))
        if got != want:
            fail("%s: 'not modelled' names %s, the file lists %s" %
                 (name, sorted(got), sorted(want)))
    print("megatron lines: %d real launch lines accepted and priced" % len(files))


if __name__ == "__main__":
    main()
