#!/usr/bin/env python3
"""docs_test.py — every offline tesselctl command shown in README.md and docs/*.md
runs: `plan --local ...`, `models`, `hardware`, `--help`, `--version`.

A command shown with an error after it ("tesselctl: ...") must fail with exit 2 and
that message (up to its first "..."); one shown with output after it must print that
output (the search time aside). Commands that need tesseld, synopses and pipelines
are listed as skipped. Placeholder paths map to files in the tree (PLACEHOLDERS).

usage: docs_test.py SOURCE_ROOT TESSELCTL
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

ROOT, CTL = sys.argv[1], sys.argv[2]
PLACEHOLDERS = {
    "path/to/config.json": "tests/data/hf/gpt2.json",
    "./llama-7b/config.json": "tests/data/hf/llama.json",
    "./llama/config.json": "tests/data/hf/llama.json",
}
OFFLINE = re.compile(r"\s(--local|models|hardware|--help|-h|--version)(\s|$)")
failed = 0


def examples(path):
    """(command, following lines) for each tesselctl command in a code block."""
    blocks, cur, inside = [], [], False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            if inside:
                blocks.append(cur)
            cur, inside = [], not inside
        elif inside:
            cur.append(line.rstrip("\n"))
    for block in blocks:
        i = 0
        while i < len(block):
            cmd = block[i]
            while cmd.endswith("\\") and i + 1 < len(block):
                i += 1
                cmd = cmd[:-1] + " " + block[i].strip()
            i += 1
            prompt = cmd.startswith("$ ")
            cmd = cmd[2:] if prompt else cmd
            if not re.match(r"(build/client/)?tesselctl\s", cmd + " "):
                continue
            out = []
            while prompt and i < len(block) and not block[i].startswith("$ "):
                out.append(block[i])
                i += 1
            yield cmd.split(" #")[0].strip(), out


def run(cmd, tmp):
    args = cmd.split()[1:]
    for k, v in PLACEHOLDERS.items():
        args = [v if a == k else a for a in args]
    args = [os.path.join(tmp, a) if prev == "--trace" else a for prev, a in zip([""] + args, args)]
    return subprocess.run([CTL] + args, cwd=ROOT, capture_output=True, text=True, timeout=600)


def check(path, cmd, out, tmp):
    global failed
    if any(c in cmd for c in "[(|>$") or not OFFLINE.search(cmd):
        print(f"skip - {path}: {cmd} (needs tesseld, or a synopsis)")
        return
    r = run(cmd, tmp)
    if out and out[0].startswith("tesselctl: "):
        want = out[0].split("...")[0].split("(...")[0]
        good = r.returncode == 2 and r.stderr.startswith(want)
        why = f"exit {r.returncode}, stderr {r.stderr.strip()[:200]!r}, want exit 2 and {want!r}"
    elif out:
        norm = lambda t: re.sub(r"Search: [0-9.]+ s,", "Search: X s,", t.rstrip("\n"))
        good = r.returncode == 0 and norm(r.stdout) == norm("\n".join(out))
        why = f"exit {r.returncode}; the output differs from the one shown:\n{r.stdout}{r.stderr}"
    else:
        good = r.returncode == 0
        why = f"exit {r.returncode}: {r.stderr.strip()[:300]}"
    print(("ok" if good else "not ok") + f" - {path}: {cmd}")
    if not good:
        print("  " + why)
        failed += 1


def check_help_cites():
    """Every docs/cost-model.md section the --help texts, the man page and the docs cite
    by name ("... (docs/cost-model.md "Section")") is one of its headings."""
    global failed
    with open(os.path.join(ROOT, "docs", "cost-model.md")) as f:
        heads = [re.sub(r"^#+\s*", "", l).strip() for l in f if l.startswith("#")]
    texts = {}
    for c in ("plan", "eval"):
        r = subprocess.run([CTL, c, "--help"], capture_output=True, text=True)
        texts[f"tesselctl {c} --help"] = r.stdout + r.stderr
    pages = ["README.md", "docs/man/tesselctl.1"] + sorted(
        os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))
    for page in pages:
        with open(os.path.join(ROOT, page)) as f:
            texts[page] = f.read().replace("\\-", "-")
    for where, text in texts.items():
        for name in re.findall(r'cost-model\.md`?,? "([^"]+)"', " ".join(text.split())):
            good = any(h.startswith(name) for h in heads)
            print(("ok" if good else "not ok") + f' - {where} cites cost-model.md "{name}"')
            failed += not good


CONNECTION = {"--server", "--token", "--timeout", "--json", "--tls", "--ca", "--cert", "--key",
              "--help", "--local"}


def section(text, head):
    """The lines of a "## head" section of a markdown page, up to the next "## "."""
    m = re.search(r"^## " + re.escape(head) + r"\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    return m.group(1) if m else ""


def check_help_in_docs():
    """Every option a subcommand's --help lists is in that command's section of
    docs/tesselctl.md (the connection options have their own), and every export
    format of docs/exports.md's table is named where --export / --format are: the
    --help texts and their docs/tesselctl.md sections."""
    global failed
    with open(os.path.join(ROOT, "docs", "tesselctl.md")) as f:
        page = f.read()
    for cmd, head in (("plan", "plan"), ("eval", "eval"), ("plans list", "plans list"),
                      ("plans show", "plans show"), ("plans delete", "plans delete"),
                      ("plans export", "plans export"), ("workers", "workers"),
                      ("profiles", "profiles"), ("health", "health"),
                      ("trial start", "trial"), ("trial list", "trial"),
                      ("trial probe-link", "trial")):
        r = subprocess.run([CTL] + cmd.split() + ["--help"], capture_output=True, text=True)
        text = section(page, head)
        # (an option written as "--first/second-..." is Megatron's pair, not ours)
        opts = sorted(set(re.findall(r"--[a-z0-9][a-z0-9-]*(?![a-z0-9/-])", r.stdout)) -
                      CONNECTION)
        missing = [o for o in opts if not re.search(re.escape(o) + r"(?![a-z0-9-])", text)]
        print(("ok" if text and not missing else "not ok") +
              f" - docs/tesselctl.md \"{head}\" names every option of `tesselctl {cmd} --help`" +
              (f": lacks {' '.join(missing)}" if missing else ""))
        failed += bool(missing) or not text
    with open(os.path.join(ROOT, "docs", "exports.md")) as f:
        formats = re.findall(r"^\| `([a-z-]+)` \|", f.read().split("\n\n| format |")[1]
                             .split("\n\n")[0], re.M)
    for cmd, head in (("plan", "plan"), ("plans export", "plans export")):
        r = subprocess.run([CTL] + cmd.split() + ["--help"], capture_output=True, text=True)
        for where, text in ((f"tesselctl {cmd} --help", " ".join(r.stdout.split())),
                            (f'docs/tesselctl.md "{head}"', section(page, head))):
            missing = [f for f in formats if not re.search(r"(?<![a-z-])" + f + r"(?![a-z-])", text)]
            print(("ok" if formats and not missing else "not ok") +
                  f" - {where} names every export format" +
                  (f": lacks {' '.join(missing)}" if missing else ""))
            failed += bool(missing) or not formats


check_help_cites()
check_help_in_docs()
with tempfile.TemporaryDirectory() as tmp:
    for path in ["README.md"] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))):
        full = os.path.join(ROOT, path)
        for cmd, out in examples(full):
            check(os.path.relpath(full, ROOT), cmd, out, tmp)
print(f"{failed} failed")
sys.exit(1 if failed else 0)
