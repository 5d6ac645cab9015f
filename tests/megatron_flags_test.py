#!/usr/bin/env python3
"""megatron_flags_test.py — the flag tables of `eval --megatron-args` against
Megatron-LM's own flags (common/megatron_flags.c, d98e8a6).

Every flag common/eval_cfg.c lists as leaving the plan alone (mg_no_effect), as
noted (mg_noted) or as not modelled (mg_unmodelled) must be one Megatron-LM d98e8a6
defines, but for the older trees' spellings named below: a table entry that is no
Megatron-LM flag accepts a line Megatron-LM refuses (`--fp8-wgrad` sat in the no-effect
list; Megatron-LM has only `--no-fp8-wgrad`). Then each is driven through the build's
tesselctl: a no-effect flag is accepted without a note, an unmodelled one with its
"not modelled by Tessel" note (the value-taking ones given a value Megatron-LM takes).

usage: megatron_flags_test.py SOURCE_ROOT TESSELCTL
"""
import os
import re
import subprocess
import sys

# spellings of older Megatron-LM trees that eval_cfg.c accepts on purpose
OLDER = {"log-loss-scale-to-tensorboard"}
# a value Megatron-LM takes, for the unmodelled flags that need one
VALUES = {"moe-router-dtype": "fp32", "ddp-bucket-size": "40000000",
          "ddp-num-buckets": "4", "tp-comm-overlap-cfg": "ub.yaml"}


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def table(src, name):
    m = re.search(r"\b%s\[\] = \{(.*?)\n\};" % re.escape(name), src, re.S)
    if not m:
        fail("common/eval_cfg.c has no table %s" % name)
    body = re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S)
    if name == "mg_no_effect":
        return re.findall(r'^\s*"([a-z0-9_-]+)",', body, re.M)
    return re.findall(r'^\s*\{"([a-z0-9_-]+)",', body, re.M)


def main():
    root, ctl = sys.argv[1], sys.argv[2]
    with open(os.path.join(root, "common", "eval_cfg.c")) as f:
        src = f.read()
    with open(os.path.join(root, "common", "megatron_flags.c")) as f:
        known = set(" ".join(re.findall(r'^\s*"([^"]*)"', f.read(), re.M)).split())
    if len(known) < 800 or "tensor-model-parallel-size" not in known:
        fail("common/megatron_flags.c: %d flags read" % len(known))
    tables = {t: table(src, t) for t in ("mg_no_effect", "mg_noted", "mg_unmodelled")}
    checked = 0
    for t, names in tables.items():
        if len(names) < 1:
            fail("%s: no entries read" % t)
        for n in names:
            if n not in known and n not in OLDER:
                fail("%s lists --%s, which Megatron-LM d98e8a6 does not define" % (t, n))
    base = [ctl, "eval", "--local", "--model", "GPT2-345M", "--cluster", "8xA100-80G", "--no-search"]
    for t in ("mg_no_effect", "mg_unmodelled"):
        for n in tables[t]:
            flag = "--" + n + (" " + VALUES[n] if n in VALUES else "")
            # a no-effect flag may take a value; give one where a flag alone is refused
            p = subprocess.run(base + ["--megatron-args", "--bf16 " + flag], capture_output=True, text=True)
            if p.returncode != 0 and t == "mg_no_effect" and "needs" not in p.stderr:
                p = subprocess.run(base + ["--megatron-args", "--bf16 %s 1" % flag], capture_output=True,
                                   text=True)
            if p.returncode != 0:
                fail("%s: %s refused: %s" % (t, flag, p.stderr.strip()))
            noted = "--%s: not modelled by Tessel" % n in p.stderr
            if t == "mg_unmodelled" and not noted:
                fail("%s accepted without its 'not modelled' note: %r" % (flag, p.stderr))
            if t == "mg_no_effect" and "note:" in p.stderr:
                fail("no-effect %s gave a note: %r" % (flag, p.stderr))
            checked += 1
    print("megatron flags: %d table flags checked against %d Megatron-LM flags" % (checked, len(known)))


if __name__ == "__main__":
    main()
