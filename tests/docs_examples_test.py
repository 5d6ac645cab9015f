#!/usr/bin/env python3
"""docs_examples_test.py — the examples in the documentation that are not tesselctl
command lines (docs_test.py runs those) are accepted by the tool they are for:

* docs/cluster-format.md: the JSON example is a cluster `plan --local --cluster FILE`
  plans on; every spec of the short-spec table parses; every error shown for a short
  spec (or a GPU type or link, put into one) is the error tesselctl gives, word for
  word up to a "...";
* docs/operations.md: every ```ini block is a tesseld configuration
  `tesseld --check-config --config FILE` accepts;
* docs/profile-format.md: the "calibration" object, put into the committed H100
  profile, is read by `plan --local --profile FILE`, whose figures line says so;
* docs/plan-format.md: every key of the document shown (`<plan>` aside) is where
  `plan --local --json` writes it;
* docs/api.md: every key of the grpcurl answer shown is a field of
  proto/tessel/v1/planner.proto (lowerCamelCase, as grpcurl writes them);
* every file under deploy/, systemd/ or tests/data/ that the README, docs/, the
  manual pages, the example configurations or the programs' --help texts name exists.

usage: docs_examples_test.py SOURCE_ROOT TESSELCTL TESSELD TESSEL_WORKER
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT, CTL, TESSELD, WORKER = sys.argv[1:5]
failed = 0


def result(good, what, why=""):
    global failed
    print(("ok" if good else "not ok") + " - " + what)
    if not good:
        print("  " + why.strip().replace("\n", "\n  ")[:1500])
        failed += 1


def read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


def blocks(rel, lang=None):
    """The fenced code blocks of a page ("```lang" ... "```"), as text."""
    out = re.findall(r"^```([a-z]*)\n(.*?)^```", read(rel), re.S | re.M)
    return [body for kind, body in out if lang is None or kind == lang]


def run(args, **kw):
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=600, **kw)


def plan_local(cluster, *extra):
    return run([CTL, "plan", "--local", "--model", "GPT2-345M", "--cluster", cluster,
                "--batch", "16", "--no-baselines", *extra])


def check_cluster_format(tmp):
    page = "docs/cluster-format.md"
    (example,) = blocks(page, "json")
    path = os.path.join(tmp, "cluster.json")
    with open(path, "w") as f:
        f.write(example)
    r = plan_local(path)
    result(r.returncode == 0 and "L40S-48G" in r.stdout,
           f"{page}: the JSON example is a cluster tesselctl plans on",
           f"exit {r.returncode}: {r.stderr}")

    table = read(page).split("## Short spec")[1].split("## Units")[0]
    for spec in re.findall(r"^\| `([^`]+)` \|", table, re.M):
        # Only the spec is judged: an error about anything else (the batch on
        # 100,000 GPUs) means the spec parsed, and so does the one-NIC note
        # ("tesselctl: plan: note: cluster: ...", cluster-format.md "One NIC or eight").
        r = plan_local(spec, "--pp", "1", "--timeout", "60")
        good = not any("cluster:" in l and "note: cluster:" not in l for l in r.stderr.splitlines())
        result(good, f"{page}: the short spec {spec} parses", r.stderr)

    # The errors shown under the short spec: each line names a spec, or a GPU type
    # or a link that one is made around; the message is tesselctl's up to a "...".
    (errors,) = [b for b in blocks(page, "") if b.startswith("cluster: unknown GPU type")]
    for line in errors.splitlines():
        spec = re.search(r"'(\d[^']*)'", line)
        typ = re.match(r"cluster: unknown GPU type '([^']+)'", line)
        link = re.match(r"cluster: link '([^']+)'", line)
        spec = (spec.group(1) if spec else f"8x{typ.group(1)}" if typ else
                f"2x8xA100-40G:{link.group(1)}" if link else None)
        if spec is None:
            result(False, f"{page}: the error line {line!r} names a spec to try")
            continue
        want = "tesselctl: " + line.split("...")[0]
        r = plan_local(spec)
        got = r.stderr.strip()
        good = r.returncode == 2 and (got.startswith(want) if "..." in line else got == want)
        result(good, f"{page}: {spec} fails as shown",
               f"exit {r.returncode}\n  shown: {want}\n  got:   {got}")


def check_operations(tmp):
    page = "docs/operations.md"
    for i, body in enumerate(blocks(page, "ini")):
        path = os.path.join(tmp, f"operations-{i}.conf")
        with open(path, "w") as f:
            f.write(body)
        r = run([TESSELD, "--check-config", "--config", path])
        result(r.returncode == 0 and "configuration OK" in r.stdout,
               f"{page}: ini block {i + 1} is a configuration tesseld --check-config accepts",
               f"exit {r.returncode}: {r.stderr}")


def check_profile_format(tmp):
    page = "docs/profile-format.md"
    (fragment,) = [b for b in blocks(page, "json") if b.lstrip().startswith('"calibration"')]
    with open(os.path.join(ROOT, "deploy", "profiles", "h100-80g.json")) as f:
        profile = json.load(f)
    profile.update(json.loads("{" + fragment + "}"))
    path = os.path.join(tmp, "calibrated.json")
    with open(path, "w") as f:
        json.dump(profile, f)
    r = run([CTL, "plan", "--local", "--model", "GPT2-345M", "--cluster", "8xH100-80G",
             "--batch", "16", "--no-baselines", "--profile", path])
    trials = json.loads("{" + fragment + "}")["calibration"]["trials"]
    result(r.returncode == 0 and f"calibrated from {trials} trials" in r.stdout,
           f"{page}: the calibration example, in a profile, is read and named on the figures line",
           f"exit {r.returncode}: {r.stderr}{r.stdout[-400:]}")


def check_plan_format():
    page = "docs/plan-format.md"
    (example,) = blocks(page, "json")
    # <plan> stands for the object the table below lists; the rest is JSON
    doc = json.loads(re.sub(r"<plan>( \| null)?", "null", example)
                     .replace("[null, ...]", "[]").replace("}, ...]", "}]"))
    r = run([CTL, "plan", "--local", "--model", "GPT2-345M", "--cluster", "8xA100-80G",
             "--batch", "32", "--target", "megatron", "--json"])
    real = json.loads(r.stdout)
    missing = []

    def walk(shown, made, at):
        for key, value in shown.items():
            if key not in made:
                missing.append(at + key)
            elif isinstance(value, dict) and isinstance(made[key], dict):
                walk(value, made[key], at + key + ".")
            elif isinstance(value, list) and value and isinstance(value[0], dict) and made[key]:
                walk(value[0], made[key][0], at + key + "[].")

    walk(doc, real, "")
    result(not missing, f"{page}: every key of the document shown is in plan --json's",
           "not written: " + " ".join(missing))


def check_api():
    page = "docs/api.md"
    proto = read("proto/tessel/v1/planner.proto")
    fields = set(re.findall(r"^\s*(?:repeated\s+|optional\s+)?[\w.]+\s+(\w+)\s*=\s*\d+", proto, re.M))
    camel = {re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), f) for f in fields}
    for body in blocks(page, "json"):
        keys = set(re.findall(r'"(\w+)":', body)) - {"..."}
        unknown = sorted(k for k in keys if k not in camel)
        result(not unknown, f"{page}: the keys of the JSON answer shown are planner.proto fields",
               "not fields: " + " ".join(unknown))


# Files of the tree the texts name; a name with a placeholder (<gpu>, NNN) aside.
NAMED = re.compile(r"(?<![\w./-])((?:deploy|systemd|tests/data)/[A-Za-z0-9_.*/+-]*[A-Za-z0-9_*])")
NOT_FILES = {"tests/data/hf/no_such_file.json"}  # docs/models.md: the error for a missing file


def check_named_files():
    texts = {}
    pages = (["README.md"] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))) +
             sorted(glob.glob(os.path.join(ROOT, "docs", "man", "*"))) +
             sorted(glob.glob(os.path.join(ROOT, "deploy", "*.conf"))) +
             sorted(glob.glob(os.path.join(ROOT, "deploy", "*", "README.md"))) +
             sorted(glob.glob(os.path.join(ROOT, "systemd", "*.service"))))
    for page in pages:
        rel = os.path.relpath(os.path.join(ROOT, page), ROOT)
        texts[rel] = read(rel).replace("\\-", "-").replace("\\&", "")
    for args in ([CTL, "--help"], [CTL, "plan", "--help"], [CTL, "eval", "--help"],
                 [TESSELD, "--help"], [WORKER, "--help"], [WORKER, "profile", "--help"]):
        r = run(args)
        texts[" ".join([os.path.basename(args[0])] + args[1:])] = r.stdout + r.stderr
    for where, text in texts.items():
        named = sorted(set(NAMED.findall(text)) - NOT_FILES)
        absent = [p for p in named if not glob.glob(os.path.join(ROOT, p))]
        result(not absent, f"{where}: the files it names under deploy/, systemd/, tests/data/ exist",
               "absent: " + " ".join(absent))


with tempfile.TemporaryDirectory() as tmp:
    check_named_files()
    check_operations(tmp)
    check_profile_format(tmp)
    check_plan_format()
    check_api()
    check_cluster_format(tmp)
print(f"{failed} failed")
sys.exit(1 if failed else 0)
