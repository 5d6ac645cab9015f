#!/usr/bin/env python3
"""Throw malformed input at tesselctl, the way a hostile scheduler would.

    tests/cli_fuzz.py TESSELCTL [--seed N] [--jobs J] [--timeout S] [--only FAMILY]
                      [--flag FLAG] [--list] [--check-flags] [--log FILE]

A deterministic generator (one seed: the same cases every run) mutates the valid
inputs the docs and tests/data show: short cluster specs, cluster JSON, HF
config.json, plan documents for `eval --plan`, Tessel profiles (`--profile`),
Galvatron profile folders (`--galvatron-profile`), AMP .npy profiles, Megatron-LM
argument strings, torchtitan TOML, and every valued flag that `plan --help` and
`eval --help` list: numbers with 0, -1, 1e308, NaN, text, overflowing, empty and
escape-sequence values, names (IMPL, RECIPE, ...) and lists with words and lists no
parser takes, files and folders (PATH, FILE, DIR) with missing, empty, binary and
folder paths; their switches join the random combinations. The flags are read from
the --help texts (their metavars say what a value is), so a new flag is fuzzed
without an edit; one whose metavar the script does not know, or a table here naming
a flag --help lost, fails `--check-flags` (the meson test cli_fuzz_flags, suite cli),
which prints how each flag is fuzzed and runs no case. Each case runs with a
timeout; the script reports (and exits 1 on) any of:

  sanitizer   an AddressSanitizer / UBSan / LeakSanitizer report on stderr
  signal      the process died of a signal (SIGSEGV, SIGABRT, ...)
  timeout     no answer within the timeout (a hang)
  status      an exit status tesselctl does not document (0, 2, 3, 4, 5 are)
  unclear     a refusal (exit 2) whose message is empty or names nothing
  control     a control byte other than a newline or a tab on stderr, or a line of
              stderr that begins with the text after a value's newline (an input's
              newline or escape sequence echoed as given)

and lists the cases that were accepted although they should have been refused
(`accepted`) for a person to read: some mutations are valid by chance. Run it
against an ASan + UBSan build (meson setup build-asan
-Db_sanitize=address,undefined); it needs no daemon (every case is --local or
needs none). It is not in the meson suites (minutes under ASan); the findings it
made have regression tests in the suites that own the code.
"""
import argparse
import concurrent.futures
import copy
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data")
SHARED = os.environ.get("TSL_SHARED", os.path.join(ROOT, "..", "shared"))

BAD_NUMBERS = ["0", "-1", "1e308", "-1e308", "nan", "NaN", "inf", "-inf", "abc", "",
               " ", "1.5", "0x10", "3x", "4294967296", "4294967297",
               "18446744073709551615", "18446744073709551617", "9223372036854775808",
               "99999999999999999999999999", "1e-308", "-0", "+5", "00000000000000000008",
               "2147483648", "65537", "1,2", "1\x1b[2J"]
JSON_BAD_VALUES = [0, -1, 1e308, -1e308, 1.5, 4294967297, 18446744073709551617,
                   9223372036854775807, "", "abc", None, True, [], {}, [1, 2],
                   1e-308, 2147483648]

M345 = ["--model", "GPT2-345M"]
C8 = ["--cluster", "8xA100-80G"]


class Case:
    def __init__(self, family, argv, must_fail=False, files=None, stdin=None, note=""):
        self.family = family
        self.argv = argv
        self.must_fail = must_fail
        self.files = files or {}      # name -> text or bytes, written to the case's folder
        self.stdin = stdin
        self.note = note


# ---- short cluster specs ----------------------------------------------------

def spec_cases(rng):
    valid = ["8xA100-80G", "2x8xA100-40G:ib100", "16x8xH100-80G:8xib400",
             "36x4xGB200:nvl72:4xib800", "4x8xA100-80G:8xib200", "8x2080Ti",
             "12500x8xH200:8xib400", "9x4xGB200:nvl72"]
    fixed = ["", ":", "x", "xx", "8x", "x8xA100-80G", "0x8xA100-80G", "8x0xA100-80G",
             "-1x8xA100-80G", "8x-1xA100-80G", "1e3x8xA100-80G", "8xA100-80G:",
             "8xA100-80G::", "8xA100-80G:ib", "2x8xA100-80G:0xib400",
             "2x8xA100-80G:9xib400", "2x8xA100-80G:4294967297xib400", "2x8xA100-80G:nvl",
             "2x8xA100-80G:nvl0", "2x8xA100-80G:nvl-8", "2x8xA100-80G:nvl99999999999",
             "2x8xA100-80G:nvl16:nvl16", "2x8xA100-80G:ib400:ib400",
             "2x8xA100-80G:ib400:nvl16:extra", "2x8xA100-80G:8x", "2x8xA100-80G:x",
             "2x8xA100-80G:xib400", "8xA100-80G\n", "8xA100-80G ", " 8xA100-80G",
             "8x A100-80G", "8xa100-80g", "8XA100-80G", "32769x1xA100-80G",
             "32768x4xA100-80G", "131073xA100-80G", "1x131072xA100-80G",
             "99999999x8xA100-80G", "8xA100-80G:nvl8", "8xA100-80G:nvl4",
             "2x8xA100-80G:nvl24", "4294967296x8xA100-80G", "8x" + "A" * 300,
             "8x" + "A100-80G:" * 50, "2x2x2xA100-80G", "8xA100-80G:ib400:8xib400",
             "\x01", "8xA100-80G\x7fjunk", "2x8xA100-80G:1xib400", "2x8xA100-80G:01xib400",
             "0008xA100-80G", "8.5xA100-80G", "8xH100", "8xGB200", "72xGB200:nvl72",
             "18x4xGB200:nvl144", "18x4xGB200:nvl2", "2x8xH100-80G:roce400:nvl16",
             "registered", "8xA100-80G.json", "/", "-", "--batch"]
    out = []
    for s in fixed:
        out.append(Case("spec", ["eval", "--local"] + M345 + ["--cluster", s, "--no-search"]))
    for _ in range(80):
        s = list(rng.choice(valid))
        for _ in range(rng.randint(1, 3)):
            op = rng.randint(0, 3)
            i = rng.randrange(len(s) + 1)
            if op == 0 and s:
                del s[min(i, len(s) - 1)]
            elif op == 1:
                s.insert(i, rng.choice("x:0123456789-9.e+nvlib "))
            elif op == 2 and s:
                s[min(i, len(s) - 1)] = rng.choice("x:09-")
            else:
                s = s[:i]
        out.append(Case("spec", ["eval", "--local"] + M345 + ["--cluster", "".join(s),
                                                            "--no-search"]))
    return out


# ---- JSON mutation ----------------------------------------------------------

def json_paths(doc, path=()):
    yield path
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from json_paths(v, path + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from json_paths(v, path + (i,))


def json_set(doc, path, value):
    d = copy.deepcopy(doc)
    if not path:
        return value
    cur = d
    for p in path[:-1]:
        cur = cur[p]
    cur[path[-1]] = value
    return d


def json_del(doc, path):
    d = copy.deepcopy(doc)
    cur = d
    for p in path[:-1]:
        cur = cur[p]
    del cur[path[-1]]
    return d


def json_mutants(rng, doc, n):
    """n mutants of doc, each (text, what was done): a leaf given a hostile value,
    a key removed, a list emptied or truncated, a number negated, a key given
    twice, the text truncated."""
    text = json.dumps(doc)
    paths = [p for p in json_paths(doc) if p]
    leaves = [p for p in paths if not isinstance(_get(doc, p), (dict, list))] or paths
    out = []
    for _ in range(n):
        op = rng.randint(0, 9)
        if op <= 4:
            p = rng.choice(leaves)
            v = rng.choice(JSON_BAD_VALUES)
            out.append((json.dumps(json_set(doc, p, v)), "%s = %r" % (_path(p), v)))
        elif op == 5:
            p = rng.choice(paths)
            out.append((json.dumps(json_del(doc, p)), "%s removed" % _path(p)))
        elif op == 6:
            lists = [p for p in paths if isinstance(_get(doc, p), list)]
            if lists:
                p = rng.choice(lists)
                v = _get(doc, p)
                k = rng.randrange(len(v) + 1)
                out.append((json.dumps(json_set(doc, p, v[:k])),
                            "%s cut to %d entries" % (_path(p), k)))
            else:
                k = rng.randrange(len(text))
                out.append((text[:k], "text cut at %d" % k))
        elif op == 7:
            k = rng.randrange(len(text))
            out.append((text[:k], "text cut at %d" % k))
        elif op == 8:
            nums = [p for p in leaves if isinstance(_get(doc, p), (int, float))
                    and not isinstance(_get(doc, p), bool)]
            if nums:
                p = rng.choice(nums)
                out.append((json.dumps(json_set(doc, p, -_get(doc, p))), "%s negated" % _path(p)))
            else:
                out.append((text.replace("{", "{" * 3, 1), "braces"))
        else:
            # a key given twice: an object's first key repeated with another value
            objs = [p for p in [()] + paths if isinstance(_get(doc, p), dict) and _get(doc, p)]
            p = rng.choice(objs)
            k = next(iter(_get(doc, p)))
            frag = json.dumps(_get(doc, p))
            v = rng.choice(JSON_BAD_VALUES)
            dup = frag[:-1] + ', ' + json.dumps(k) + ': ' + json.dumps(v) + '}'
            out.append((text.replace(frag, dup, 1) if frag in text else text + "}",
                        "%s.%s given twice (then %r)" % (_path(p), k, v)))
    return out


def _path(p):
    return "".join("[%d]" % x if isinstance(x, int) else "." + str(x) for x in p).lstrip(".")


def _get(doc, path):
    for p in path:
        doc = doc[p]
    return doc


STRUCTURAL = ["", "{", "[", "null", "0", "\"x\"", "[]", "{}", "{" * 5000 + "}" * 5000,
              "[" * 100000, "{\"a\":" * 3000 + "1" + "}" * 3000, "\x00", "\xef\xbb\xbf{}",
              "{\"nodes\": [1e999]}", "{\"nodes\": \"\\ud800\"}"]


def cluster_json_cases(rng):
    out = []
    base = [json.load(open(os.path.join(DATA, "cluster", f)))
            for f in sorted(os.listdir(os.path.join(DATA, "cluster")))
            if f.endswith(".json") and not f.startswith("bad")]
    for s in STRUCTURAL:
        out.append(Case("cluster_json", ["eval", "--local"] + M345 +
                        ["--cluster", "@c.json", "--no-search"], files={"c.json": s}))
    for doc in base:
        for m, what in json_mutants(rng, doc, 30):
            out.append(Case("cluster_json", ["eval", "--local"] + M345 +
                            ["--cluster", "@c.json", "--no-search"], files={"c.json": m},
                            note=what))
    # hand-made: huge counts, duplicate names, matrices of the wrong size
    hand = [
        {"nodes": [{"type": "A100-80G", "gpus": 8, "count": 100000}], "link": "ib100"},
        {"nodes": [{"type": "A100-80G", "gpus": 8, "count": 4294967297}], "link": "ib100"},
        {"nodes": [{"type": "A100-80G", "gpus": 131073}]},
        {"nodes": [{"type": "A100-80G", "gpus": 8, "count": 2}], "inter_gbps": 0},
        {"nodes": [{"type": "A100-80G", "gpus": 8, "count": 2}], "inter_gbps": 1e308},
        {"nodes": [{"type": "A100-80G", "gpus": 8, "count": 2}], "inter_gbps_matrix": [[0]]},
        {"nodes": [{"type": "A100-80G", "gpus": 8, "count": 2}],
         "inter_gbps_matrix": [[0, 1], [1]]},
        {"nodes": [{"type": "A100-80G", "gpus": 8, "count": 2}],
         "links": [{"a": 0, "b": 0, "gbps": 5}]},
        {"nodes": [{"type": "A100-80G", "gpus": 8, "count": 2}],
         "links": [{"a": -1, "b": 1, "gbps": 5}]},
        {"nodes": [{"type": "A100-80G", "gpus": 8, "count": 2}], "link": "ib100",
         "nvlink_domain_nodes": 0},
        {"nodes": [{"type": "A100-80G", "gpus": 8, "count": 2}], "link": "ib100",
         "nvlink_domain_nodes": 4294967297},
        {"nodes": [{"type": "A100-80G", "gpus": 8, "nics": 0, "count": 2}], "link": "ib100"},
        {"nodes": [{"type": "A100-80G", "gpus": 8, "nics": 1e9, "count": 2}], "link": "ib100"},
        {"gpu_types": {"X": {"memory_gb": 1e-9, "peak_tflops": 1, "efficiency": 0.5,
                             "intra_gbps": 1, "pcie_gbps": 1}},
         "nodes": [{"type": "X", "gpus": 8}]},
        {"gpu_types": {"X": {"memory_gb": 1e308, "peak_tflops": 1e308, "efficiency": 1,
                             "intra_gbps": 1e308, "pcie_gbps": 1e308}},
         "nodes": [{"type": "X", "gpus": 8}]},
        {"gpu_types": {"X": {"base": "X"}}, "nodes": [{"type": "X", "gpus": 8}]},
        {"gpu_types": {"X": {"base": "Y"}, "Y": {"base": "X"}}, "nodes": [{"type": "X", "gpus": 8}]},
        {"gpu_types": {"": {"base": "A100-80G"}}, "nodes": [{"type": "", "gpus": 8}]},
        {"gpu_types": {"X" * 40: {"base": "A100-80G"}}, "nodes": [{"type": "X" * 40, "gpus": 8}]},
        {"gpu_types": {"T%d" % i: {"base": "A100-80G"} for i in range(12)},
         "nodes": [{"type": "T%d" % i, "gpus": 1} for i in range(12)], "link": "ib100"},
        {"nodes": [{"type": "A100-80G", "gpus": 8, "cpu_memory_gb": -1}]},
        {"nodes": [{"type": "A100-80G", "gpus": 8, "intra_gbps": 0}]},
        {"nodes": [{"type": "A100-80G", "gpus": 8, "intra_gbps": 1, "intra_gbit": 8}]},
        {"nodes": [{"type": "A100-80G", "gpus": 8}], "overlap_slowdown": 0.5},
        {"nodes": [{"type": "A100-80G", "gpus": 8}], "overlap_slowdown": 1e308},
        {"nodes": [{"type": "A100-80G", "gpus": 4, "count": 2}], "link": "ib100",
         "inter_a2a_ratio": 0},
        {"nodes": [{"type": "A100-80G", "gpus": 8}, {"type": "H100-80G", "gpus": 4}],
         "link": "ib100"},
    ]
    for doc in hand:
        out.append(Case("cluster_json", ["eval", "--local"] + M345 +
                        ["--cluster", "@c.json", "--no-search"], files={"c.json": json.dumps(doc)}))
    # the search on a mutated cluster: every placement and bandwidth path
    for doc in base:
        for m, what in json_mutants(rng, doc, 12):
            out.append(Case("cluster_json", ["plan", "--local"] + M345 +
                            ["--cluster", "@c.json", "--batch", "16", "--no-baselines"],
                            files={"c.json": m}, note="plan: " + what))
    return out


def hf_cases(rng):
    out = []
    hfdir = os.path.join(DATA, "hf")
    names = ["gpt2.json", "llama.json", "mixtral.json", "deepseek_v3.json", "t5.json",
             "bert.json", "qwen2.json", "gemma2_9b.json", "glm4_5_air.json"]
    for s in STRUCTURAL[:8]:
        out.append(Case("hf", ["eval", "--local", "--hf-config", "@m.json"] + C8 +
                        ["--no-search"], files={"m.json": s}))
    for n in names:
        p = os.path.join(hfdir, n)
        if not os.path.exists(p):
            continue
        doc = json.load(open(p))
        for m, what in json_mutants(rng, doc, 25):
            out.append(Case("hf", ["eval", "--local", "--hf-config", "@m.json",
                                   "--cluster", "8xH100-80G", "--no-search"],
                            files={"m.json": m}, note=n + ": " + what))
    # --seq-len on an HF model, --name
    for v in ["0", "-1", "1e308", "abc", "4294967297", "1"]:
        out.append(Case("hf", ["eval", "--local", "--hf-config",
                               os.path.join(hfdir, "gpt2.json"), "--seq-len", v] + C8 +
                        ["--no-search"], must_fail=v not in ("1",)))
    for v in ["", "a/b", "x" * 64, "a\"b", "\x01", "ok name", "a\nINFO forged", "a\x1b[2J"]:
        out.append(Case("hf", ["eval", "--local", "--hf-config",
                               os.path.join(hfdir, "gpt2.json"), "--name", v] + C8 +
                        ["--no-search"], must_fail=v not in ("ok name",)))
    # a DeepSeek config whose dense first layers leave no layer for its experts
    p = os.path.join(hfdir, "deepseek_v3.json")
    if os.path.exists(p):
        doc = json.load(open(p))
        for k, freq in [(61, 1), (62, 1), (4294967295, 1), (1, 100)]:
            d = dict(doc, first_k_dense_replace=k, moe_layer_freq=freq)
            out.append(Case("hf", ["eval", "--local", "--hf-config", "@m.json",
                                   "--cluster", "8xH100-80G", "--no-search"],
                            files={"m.json": json.dumps(d)}, must_fail=True,
                            note="first_k_dense_replace %d, moe_layer_freq %d" % (k, freq)))
    return out


# ---- the flags of plan --help and eval --help -----------------------------------

# Every option line of a --help text ("  --flag META  help", a few flags to a line:
# "--tp N --pp N", "--overlap-grad-reduce, --no-overlap-grad-reduce", "[--switch]")
# gives the flags the fuzzer feeds; its metavar (an upper-case word) says what a value
# is, so a new flag is fuzzed without an edit here, and a metavar not in KINDS fails
# (--check-flags, the meson test cli_fuzz_flags) until someone says how to fuzz it.
KINDS = {"N": "number", "X": "number", "C": "number", "US": "number", "SIZE": "number",
         "V": "number", "S": "number", "IMPL": "word", "RECIPE": "word", "STEP": "word",
         "KERNEL": "word", "MODE": "word", "NAME": "word", "TYPE": "word", "STACK": "word",
         "FORMAT": "word", "LIST": "list", "A,B": "list", "A,B,...": "list", "TEXT": "word",
         "PATH": "file", "FILE": "file", "DIR": "file", "SPEC": "family", "ADDR": "skip"}
# flags whose values a family of their own feeds (spec, megatron, profile, ...), or
# that need what the fuzzer does not run (a daemon)
OWN_FAMILY = {"--cluster": "spec and cluster_json", "--megatron-args": "megatron",
              "--server": "needs tesseld", "--nodes": "needs tesseld (registered workers)",
              "--model": "other (names)", "--name": "hf (names)"}
# switches left out of the random combinations: they change what is printed or
# where it runs, not what is priced
NOT_COMBINED = {"--local", "--json", "--help", "--no-search", "--force", "--sweep"}
OPT_LINE = re.compile(r"^  \[?--[a-z0-9]")
FLAG_TOKEN = re.compile(r"^\[?(--[a-z0-9][a-z0-9-]*)\]?,?$")
META_TOKEN = re.compile(r"^([A-Z][A-Z0-9_]*(?:,[A-Z.]+)*),?$")


def help_flags(ctl, cmd):
    """{flag: metavar ("" a switch)} of `tesselctl CMD --help`'s option lines: the
    flags at a line's start, each with the upper-case word one space after it (the
    help starts two spaces on, or one after a metavar where the flag is long), up to
    the first other word."""
    r = subprocess.run([ctl, cmd, "--help"], capture_output=True, text=True, timeout=60)
    flags = {}
    for line in r.stdout.splitlines():
        if not OPT_LINE.match(line):
            continue
        words = re.findall(r"(\S+)(\s*)", line)
        i = 0
        while i < len(words) and FLAG_TOKEN.match(words[i][0]):
            flag, meta = FLAG_TOKEN.match(words[i][0]).group(1), ""
            if (words[i][1] == " " and i + 1 < len(words) and
                    META_TOKEN.match(words[i + 1][0])):
                meta = META_TOKEN.match(words[i + 1][0]).group(1)
                i += 1
            flags[flag] = meta
            i += 1
    return flags


def flag_kind(flag, meta):
    if flag in OWN_FAMILY:
        return "family"
    if not meta:
        return "switch"
    return KINDS.get(meta, "unknown")


FLAGS = {}   # "plan" / "eval": {flag: metavar}, filled by main from the --help texts


def check_flags():
    """Print every flag of the two --help texts with how it is fuzzed; 1 where a
    metavar has no kind, a text lists too few flags (a --help that lost its options),
    or a table here names a flag the --help texts do not have (gone stale)."""
    bad = 0
    for cmd in ("plan", "eval"):
        if len(FLAGS[cmd]) < 40:
            print("not ok - tesselctl %s --help: %d option(s) read" % (cmd, len(FLAGS[cmd])))
            bad += 1
        for f, meta in sorted(FLAGS[cmd].items()):
            k = flag_kind(f, meta)
            print("%s %s %s%s: %s" % ("not ok -" if k == "unknown" else "ok -", cmd, f,
                                     " " + meta if meta else "", k))
            bad += k == "unknown"
        # a valued flag the random combinations would never set
        lack = [f for f in fuzzed_flags(cmd, ("number", "word", "list"))
                if f not in EVAL_VALS and f not in NOT_IN_COMBOS]
        print(("not ok" if lack else "ok") + " - EVAL_VALS has values of every valued flag of "
              "%s --help%s" % (cmd, ": not " + " ".join(lack) if lack else ""))
        bad += bool(lack)
    known = set(FLAGS["plan"]) | set(FLAGS["eval"])
    tables = [("EVAL_VALS", EVAL_VALS), ("FLAG_BASE", FLAG_BASE), ("OWN_FAMILY", OWN_FAMILY),
              ("GOOD_VALUE", GOOD_VALUE), ("NOT_IN_COMBOS", NOT_IN_COMBOS),
              ("NOT_COMBINED", NOT_COMBINED - {"--help"})]
    for name, t in tables:
        stale = sorted(set(t) - known)
        print(("not ok" if stale else "ok") + " - %s names only flags of the --help texts%s"
              % (name, ": not " + " ".join(stale) if stale else ""))
        bad += bool(stale)
    return 1 if bad else 0


BAD_WORDS = BAD_NUMBERS[:12] + ["bogus", "TE", " te", "te ", "te,te", "x" * 300, "te\nINFO x",
                                "te\x1b[2J", "1e3", "-"]
BAD_LISTS = ["", ",", ",,", "x", "x=", "=bf16", "linear_qkv=", "linear_qkv=bf16,",
             ",linear_qkv=bf16", "linear_qkv=bf16,,linear_fc1=mxfp8",
             "linear_qkv=bf16,linear_qkv=mxfp8", "linear_qkv=fp4", "LINEAR_QKV=bf16",
             "linear_qkv==bf16", "linear_qkv=bf16=bf16", "mlp,,moe", "mlp,", " mlp", "mlp, moe",
             "core_attn,core_attn", "attn,attn", "1,1", "-1,2", "4294967309,1", "a" * 600,
             ",".join(["mlp"] * 200), "mlp\nINFO x", "0", "-1", "nan"]
# a file flag's value: "@f" a file of that text written for the case, "@d" a folder
BAD_FILES = [("", None), ("/nonexistent/x", None), ("@f", ""), ("@f", "\x00\x01\x02"),
             ("@f", "{"), ("@f", "[" * 100000), ("@f", "a: [b\n"), ("@d", "dir"),
             ("/dev/null", None), ("@f", "configs:\n  x: 1\n" * 2000),
             ("@f", "\xef\xbb\xbf" + "{}"), ("@f\nINFO x", None)]

# the case a flag is fed in, where eval_base / plan_base (GPT2-345M on A100s, bf16)
# would refuse it before its value is used: MoE degrees need experts, FP8's options a
# GPU with FP8 and a recipe
MOE = "moe"
FP8 = "fp8"
FLAG_BASE = {"--ep": MOE, "--etp": MOE, "--moe-imbalance": MOE, "--moe-capacity-factor": MOE,
             "--fp8-impl": FP8, "--module-precision": FP8, "--te-precision-config-file": FP8,
             "--bf16-layers-start": FP8, "--bf16-layers-end": FP8, "--fp8-recipe": FP8,
             "--fp8": FP8, "--fp8-amax-tp-only": FP8, "--fp8-param-gather": FP8,
             "--moe-bf16-experts": FP8, "--moe-fp8-dispatch": MOE,
             "--moe-alltoall-dispatcher": MOE, "--moe-flex-dispatcher": MOE,
             "--moe-a2a-overlap": MOE, "--moe-unfused-permute": MOE, "--moe-fused-mlp": MOE,
             "--moe-fused-srelu": MOE,
             "--moe-pad-to-capacity": MOE, "--moe-flex-backend": MOE}
# a flag's valid value where the fuzzer sets one (the bases, combinations)
GOOD_VALUE = {"--fp8": "tensorwise", "--fp8-recipe": "tensorwise", "--moe-flex-backend": "hybridep"}


def fuzzed_flags(cmd, kinds):
    """The flags of CMD's --help whose kind is one of kinds, sorted."""
    return sorted(f for f, m in FLAGS.get(cmd, {}).items() if flag_kind(f, m) in kinds)


def _flag_base(cmd, flag, bases):
    """The case a flag's hostile values go into: the MoE or FP8 one where FLAG_BASE
    says so; a whole plan (--plan, --torchtitan, --strategy) beside no degrees."""
    kind = FLAG_BASE.get(flag, "")
    if cmd == "eval" and flag in ("--plan", "--torchtitan", "--strategy", "--megatron-args"):
        kind = "plain"
    base = bases[cmd, kind]
    if flag == "--hf-config":   # in place of the preset, not beside it
        i = base.index("--model")
        base = base[:i] + base[i + 2:]
    return base


def _value_cases(cmd, flag, meta, base):
    """(argv, files, must_fail) for each hostile value of the flag's kind."""
    kind = flag_kind(flag, meta)
    if kind == "number":
        return [(_replace_flag(base, flag, v), None, v in ("-1", "abc", "", "nan", "1e308"))
                for v in BAD_NUMBERS]
    if kind == "word":
        return [(_replace_flag(base, flag, v), None, v in ("bogus", "abc", "", "x" * 300))
                for v in BAD_WORDS]
    if kind == "list":
        return [(_replace_flag(base, flag, v), None, v in ("x", "=bf16", "a" * 600))
                for v in BAD_LISTS]
    if kind == "file":
        out = []
        for v, text in BAD_FILES:
            files = {"d/x": ""} if text == "dir" else {"f": text} if text is not None else None
            out.append((_replace_flag(base, flag, v), files, v in ("", "/nonexistent/x")))
        return out
    return []


def flag_cases(rng):
    out = []
    eval_base = ["eval", "--local"] + M345 + C8 + ["--tp", "2", "--pp", "2", "--batch", "32",
                                                    "--no-search"]
    moe_base = ["eval", "--local", "--model", "Mixtral-8x7B", "--cluster", "4x8xH100-80G:8xib400",
                "--no-search", "--tp", "2", "--pp", "4", "--ep", "4", "--batch", "64"]
    plan_base = ["plan", "--local"] + M345 + ["--cluster", "2xA100-80G", "--batch", "8",
                                              "--no-baselines", "--no-pp"]
    bases = {("eval", ""): eval_base, ("eval", MOE): moe_base,
             ("eval", FP8): _replace_flag(eval_base, "--cluster", "8xH100-80G") +
             ["--fp8", GOOD_VALUE["--fp8"]],
             ("eval", "plain"): ["eval", "--local"] + M345 + C8 + ["--no-search"],
             ("plan", ""): plan_base, ("plan", MOE): plan_base,
             ("plan", FP8): _replace_flag(plan_base, "--cluster", "2xH100-80G") +
             ["--fp8-recipe", GOOD_VALUE["--fp8-recipe"]]}
    for cmd in ("eval", "plan"):
        for f in fuzzed_flags(cmd, ("number", "word", "list", "file")):
            base = _flag_base(cmd, f, bases)
            for argv, files, must_fail in _value_cases(cmd, f, FLAGS[cmd][f], base):
                out.append(Case(cmd + "_flag", argv, must_fail=must_fail, files=files,
                                note=f))
        # every switch once on its base, given twice too (the random combinations
        # may never draw a new one)
        for f in _switches(cmd):
            base = _flag_base(cmd, f, bases)
            out.append(Case(cmd + "_switch", base + [f], note=f))
            out.append(Case(cmd + "_switch", base + [f, f], note=f + " twice"))
    # combinations the brief names: huge batch, mbs > batch, layers not divisible by PP,
    # TP > heads, seq 0, degrees not multiplying to the devices
    combos = [
        ["--batch", "4294967296"], ["--batch", "1", "--mbs", "64"], ["--pp", "5"],
        ["--pp", "27"], ["--pp", "1000"], ["--tp", "32"], ["--tp", "3"], ["--seq-len", "0"],
        ["--seq-len", "1"], ["--seq-len", "3"], ["--seq-len", "2147483647"],
        ["--tp", "8", "--pp", "8"], ["--mbs", "0"], ["--micro", "0"], ["--micro", "1000000000"],
        ["--batch", "3"], ["--interleave", "100"], ["--interleave", "13"],
        ["--layers-per-stage", "1,1"], ["--layers-per-stage", "26,0"],
        ["--layers-per-stage", "-1,27"], ["--layers-per-stage", "13,13,"],
        ["--layers-per-stage", ","], ["--layers-per-stage", "4294967309,4294967309"],
        ["--memory", "1"], ["--memory", "0"], ["--memory", "16E"], ["--memory", "9999999T"],
        ["--memory", "1e3G"], ["--memory", "-16G"], ["--memory", "16GB"],
        ["--strategy", ""], ["--strategy", "tp3"], ["--strategy", "tp2-dp2+ckpt+ckpt"],
        ["--strategy", "tp4294967298-dp2"], ["--strategy", "+"], ["--strategy", "tp2-"],
        ["--ckpt", "bogus"], ["--zero", "3"], ["--cp", "3"], ["--batch", "0"],
        ["--recompute-modules", ""], ["--recompute-modules", ",,"],
        ["--recompute-modules", "mlp,,moe"], ["--recompute-modules", "mlp,"],
        ["--recompute-modules", ",mlp"], ["--recompute-modules", "mlp, ,moe"],
        ["--recompute-modules", "core_attn,core_attn"], ["--micro", "3", "--batch", "32"],
        ["--batch", "18446744073709551615"], ["--mbs", "4294967296"],
        ["--bf16-layers-start", "30"], ["--cpu-offload-layers", "27"],
        ["--vp-group", "1"], ["--mtp-layers", "100"],
    ]
    for c in combos:
        argv = list(eval_base)
        for i in range(0, len(c), 2):
            argv = _replace_flag(argv, c[i], c[i + 1])
        out.append(Case("eval_combo", argv))
    pcombos = [["--batch", "4294967296"], ["--pp", "27"], ["--pp", "3"], ["--max-batch", "1"],
               ["--top-k", "17"], ["--top-k", "0"], ["--seq-len", "0"],
               ["--memory", "1K"], ["--memory-reserve", "80G"], ["--memory-reserve", "100T"],
               ["--max-batch", "4294967296"], ["--batch", "1"], ["--seq-len", "3"]]
    for c in pcombos:
        argv = list(plan_base)
        for i in range(0, len(c), 2):
            argv = _replace_flag(argv, c[i], c[i + 1])
        out.append(Case("plan_combo", argv))
    # hardware and other commands with junk
    for a in [["hardware", "--json", "x"], ["hardware", "--bogus"], ["models", "x"],
              ["eval"], ["plan"], ["eval", "--local"], ["plan", "--local", "--model"],
              ["eval", "--local", "--model", "GPT2-345M", "--cluster"],
              ["--timeout", "-1", "hardware"], ["--timeout", "nan", "hardware"],
              ["--timeout", "1e308", "hardware"], ["--json"], ["bogus"], [""],
              ["plan", "--local", "--model", "", "--cluster", "8xA100-80G"],
              ["plan", "--local", "--model", "x" * 10000, "--cluster", "8xA100-80G"]]:
        out.append(Case("other", a))
    # names with a newline or an escape sequence: refused, the message on one line with no
    # control byte (classify: "control")
    for v in ["GPT2\nINFO forged", "GPT2\x1b[2J", "GPT2\x7f", "GPT2\r"]:
        out.append(Case("other", ["plan", "--local", "--model", v, "--cluster", "8xA100-80G"],
                        must_fail=True))
        out.append(Case("other", ["eval", "--local", "--model", v] + C8 + ["--no-search"],
                        must_fail=True))
    return out


def _replace_flag(argv, flag, value):
    argv = list(argv)
    if flag in argv:
        i = argv.index(flag)
        argv[i + 1] = value
    else:
        argv += [flag, value]
    return argv


# ---- random combinations of plausible values -------------------------------

MODELS = ["GPT2-345M", "Llama3-8B", "Mixtral-8x7B", "DeepSeek-V3", "T5-Large-32", "BERT-Large",
          "GPT-OSS-20B", "ViT-Huge-32", "Swin-Huge-32", "BLOOM-7B1"]
CLUSTERS = ["8xA100-80G", "1xA100-40G", "2x8xH100-80G:8xib400", "4xV100-16G", "3xT4-16G",
            "18x4xGB200:nvl72:4xib800", "2x4xA100-80G:ib100", "16x8xH200:8xib400"]
EVAL_VALS = {"--tp": ["1", "2", "3", "4", "8", "16", "64"], "--pp": ["1", "2", "3", "4", "7", "64"],
             "--dp": ["1", "2", "4"], "--sdp": ["1", "2", "8"], "--mbs": ["1", "2", "3", "1024"],
             "--micro": ["1", "2", "3", "8", "4096"], "--batch": ["1", "8", "33", "1024", "65536"],
             "--zero": ["0", "1", "2"], "--interleave": ["1", "2", "3", "8"],
             "--cp": ["1", "2", "4", "8"], "--ep": ["1", "2", "8", "32", "256"],
             "--etp": ["1", "2", "8"], "--vp-group": ["1", "2", "9"], "--seq-len": ["1", "2", "7", "65536"],
             "--ckpt": ["full", "selective", "none"], "--mtp-layers": ["0", "1", "3"],
             "--cpu-offload-layers": ["1", "3", "100"], "--bf16-layers-start": ["1", "40"],
             "--bf16-layers-end": ["1", "40"], "--moe-capacity-factor": ["0", "0.001", "1", "64"],
             "--moe-imbalance": ["1", "1.0001", "4", "1000"], "--grad-reduce-bytes": ["2", "4"],
             "--host-op-us": ["1", "57.2", "93", "100000"],
             "--grad-buf-bytes": ["2", "4"], "--attn-kernel": ["1", "2", "3", "4"],
             "--memory": ["1G", "16G", "1T"], "--fp8": ["delayed", "tensorwise", "mxfp8", "blockwise"],
             "--target": ["megatron", "deepspeed", "torchtitan", "galvatron"],
             "--schedule": ["1f1b", "zbh1", "zb-h1", "zbv", "dualpipev", "gpipe"],
             "--layers-per-stage": ["1,1", "13,13", "0,26", "25,1"],
             "--cp-comm": ["p2p", "a2a", "allgather", "torch-allgather"],
             "--fp8-impl": ["te", "torchao"], "--norm-impl": ["te", "apex"],
             "--moe-flex-backend": ["hybridep", "deepep", "1", "2"],
             "--loss-impl": ["exec", "torch", "megatron", "te", "torch-compile",
                             "fused-xentropy", "composer", "megatron-fused"],
             "--opt-step": ["fused", "megatron", "megatron-fp16", "torch", "deepspeed-fp16",
                            "megatron-core-fp16", "torch-loop", "composer"],
             "--module-precision": ["linear_proj=bf16", "linear_fc1=mxfp8,linear_fc2=bf16",
                                    "linear_qkv=nvfp4", "in_proj=bf16"],
             "--cuda-graph-modules": ["attn", "mlp,moe", "moe_router,moe_preprocess", "mamba"],
             "--recompute-modules": ["core_attn", "mlp", "moe_act,layernorm", "torchtitan_op"],
             "--moe-capacity-factor": ["0.5", "1", "2"], "--micro": ["1", "4"],
             "--fp8-recipe": ["1", "2", "3", "4", "5", "tensorwise", "mxfp8"],
             "--max-batch": ["1", "64"], "--top-k": ["1", "16"],
             "--memory-reserve": ["0", "1G", "70G"]}
# valued flags the random combinations leave to the flag and family cases: files,
# names, formats, a whole plan, where it runs
NOT_IN_COMBOS = {"--strategy": "a whole plan (eval_combo)", "--export": "output, not priced",
                 "--timeout": "a deadline, not priced"}

def _switches(cmd):
    """CMD's switches from its --help, but those that change no price."""
    return [f for f in fuzzed_flags(cmd, ("switch",)) if f not in NOT_COMBINED]


def combo_cases(rng):
    out = []
    keys = [k for k in sorted(EVAL_VALS) if k in FLAGS.get("eval", {})]
    for _ in range(500):
        argv = ["eval", "--local", "--model", rng.choice(MODELS), "--cluster", rng.choice(CLUSTERS),
                "--no-search"]
        for k in rng.sample(keys, rng.randint(1, 5)):
            argv += [k, rng.choice(EVAL_VALS[k])]
        argv += rng.sample(_switches("eval"), rng.randint(0, 3))
        out.append(Case("combo_eval", argv))
    pvals = {k: v for k, v in EVAL_VALS.items() if k in FLAGS.get("plan", {})}
    pswitch = _switches("plan")
    small = ["GPT2-345M", "BERT-Large", "T5-Large-32", "Mixtral-8x7B", "GPT-OSS-20B", "Llama3-8B"]
    for _ in range(120):
        argv = ["plan", "--local", "--model", rng.choice(small), "--cluster",
                rng.choice(["8xA100-80G", "2xA100-40G", "4xV100-16G", "2x4xH100-80G:ib400"]),
                "--no-baselines", "--batch", rng.choice(["1", "8", "32", "33"])]
        for k in rng.sample(sorted(pvals), rng.randint(0, 3)):
            argv = _replace_flag(argv, k, rng.choice(pvals[k]))
        argv += rng.sample(pswitch, rng.randint(0, 4))
        out.append(Case("combo_plan", argv))
    return out


# ---- plan documents for eval --plan ------------------------------------------

def plan_doc_cases(rng, ctl, tmp):
    seed = os.path.join(tmp, "seed_plan.json")
    r = subprocess.run([ctl, "plan", "--local", "--model", "GPT2-345M", "--cluster",
                        "2x4xA100-80G:ib400", "--batch", "32", "--no-baselines", "--pp", "2",
                        "--json"], capture_output=True, timeout=600)
    if r.returncode != 0:
        print("plan_doc: no seed plan: " + r.stderr.decode()[:300], file=sys.stderr)
        return []
    doc = json.loads(r.stdout)
    out = []
    for s in STRUCTURAL[:10]:
        out.append(Case("plan_doc", ["eval", "--local", "--cluster", "2x4xA100-80G:ib400",
                                     "--plan", "@p.json", "--no-search"], files={"p.json": s}))
    # the keys beside the plan that eval reads: refused, not read as another value
    # (tokens_per_sample 2^32 + 512 was 512 tokens, "512" the preset's length, -1 none)
    for part, key, v in [("model", "tokens_per_sample", 2**32 + 512),
                         ("model", "tokens_per_sample", "512"), ("model", "tokens_per_sample", 0),
                         ("request", "mtp_layers", -1), ("request", "mtp_layers", "1"),
                         ("request", "no_mtp", 1)]:
        d = copy.deepcopy(doc)
        d[part][key] = v
        out.append(Case("plan_doc", ["eval", "--local", "--cluster", "2x4xA100-80G:ib400",
                                     "--plan", "@p.json", "--no-search"],
                        files={"p.json": json.dumps(d)}, must_fail=True,
                        note="%s.%s = %r" % (part, key, v)))
    # the plan object is where eval reads the degrees: weight mutations there
    sub = {"plan": doc["plan"], "model": doc["model"], "request": doc["request"]}
    for m, what in json_mutants(rng, sub, 260):
        d = dict(doc)
        try:
            md = json.loads(m)
            d.update(md)
            text = json.dumps(d)
        except (ValueError, TypeError, AttributeError):
            text = m
        out.append(Case("plan_doc", ["eval", "--local", "--cluster", "2x4xA100-80G:ib400",
                                     "--plan", "@p.json", "--no-search"], files={"p.json": text},
                        note=what))
    return out


# ---- profiles ----------------------------------------------------------------

def profile_cases(rng):
    p = os.path.join(ROOT, "deploy", "profiles", "h100-80g.json")
    doc = json.load(open(p))
    out = []
    base = ["eval", "--local", "--model", "Llama3-8B", "--cluster", "8xH100-80G", "--tp", "8",
            "--batch", "8", "--no-search", "--profile", "@prof.json"]
    for s in STRUCTURAL[:10]:
        out.append(Case("profile", base, files={"prof.json": s}))
    for m, what in json_mutants(rng, doc, 200):
        out.append(Case("profile", base, files={"prof.json": m}, note=what))
    # whole tables emptied, sizes made non-monotone, every time zero
    for key in list(doc.keys()):
        if isinstance(doc[key], list):
            out.append(Case("profile", base, files={"prof.json": json.dumps(json_set(doc, (key,), []))},
                            note=key + " emptied"))
            rev = json_set(doc, (key,), list(reversed(doc[key])))
            out.append(Case("profile", base, files={"prof.json": json.dumps(rev)},
                            note=key + " reversed"))
            z = copy.deepcopy(doc)
            for e in z[key]:
                if isinstance(e, dict):
                    for k in e:
                        if isinstance(e[k], (int, float)) and not isinstance(e[k], bool):
                            e[k] = 0
            out.append(Case("profile", base, files={"prof.json": json.dumps(z)},
                            note=key + " numbers all 0"))
    return out


def galvatron_cases(rng):
    g = os.path.join(SHARED, "fixtures", "galvatron")
    if not os.path.isdir(g):
        return []
    out = []
    model = os.path.join(g, "llama2-7b")
    files = {}
    for f in sorted(os.listdir(model)):
        if "seqlen2048" in f:
            continue
        files["g/m/" + f] = open(os.path.join(model, f), "rb").read()
    for f in sorted(os.listdir(os.path.join(g, "hardware"))):
        files["g/hardware/" + f] = open(os.path.join(g, "hardware", f), "rb").read()
    argv = ["plan", "--local", "--model", "Llama2-7B", "--seq-len", "2048", "--cluster",
            "8xA100-80G", "--batch", "16", "--memory", "36G", "--no-baselines",
            "--galvatron-profile", "@g/m"]
    argv2 = [a if a != "8xA100-80G" else "2x8xA100-80G:ib200" for a in argv]
    out.append(Case("galvatron", argv, files=dict(files), note="unmutated"))
    out.append(Case("galvatron", argv2, files=dict(files), note="unmutated, two nodes"))
    jsons = [k for k in files if k.endswith(".json") and "galvatron_config" not in k]
    for i in range(240):
        av = argv2 if i % 2 else argv
        k = rng.choice(jsons)
        doc = json.loads(files[k])
        f2 = dict(files)
        m, what = rng.choice(json_mutants(rng, doc, 1) + [("", "empty")])
        f2[k] = m
        out.append(Case("galvatron", av, files=f2, note=os.path.basename(k) + ": " + what))
    for k in jsons:
        f2 = dict(files)
        del f2[k]
        out.append(Case("galvatron", argv, files=f2, note="without " + k))
    return out


def amp_cases(rng):
    d = os.path.join(DATA, "amp")
    out = []
    files = {"a/" + f: open(os.path.join(d, f), "rb").read() for f in os.listdir(d)
             if f.endswith(".npy")}
    argv = ["eval", "--local", "--model", "TransGAN-Hetero", "--cluster",
            "@" + "amp.json", "--no-search", "--amp-profile", "@a"]
    clus = open(os.path.join(DATA, "cluster", "amp-hetero.json")).read()
    for _ in range(80):
        f2 = dict(files)
        f2["amp.json"] = clus
        k = rng.choice(sorted(files))
        b = bytearray(files[k])
        op = rng.randint(0, 3)
        if op == 0:
            b = b[:rng.randrange(len(b))]
        elif op == 1:
            for _ in range(rng.randint(1, 8)):
                b[rng.randrange(len(b))] = rng.randrange(256)
        elif op == 2:
            hdr_end = b.find(b"\n") + 1 or 128
            i = rng.randrange(min(hdr_end, len(b)))
            b[i] = rng.choice(b"0123456789(),:'{} ")
        else:
            b += bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
        f2[k] = bytes(b)
        out.append(Case("amp", argv, files=f2, note=k.split("/")[-1] + " op %d" % op))
    return out


def megatron_cases(rng):
    good = ("--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 "
            "--micro-batch-size 2 --global-batch-size 64 --sequence-parallel "
            "--use-distributed-optimizer --recompute-granularity selective")
    toks = good.split()
    out = []
    argv = ["eval", "--local", "--model", "GPT2-345M", "--cluster", "4x8xA100-80G:ib200",
            "--no-search", "--megatron-args"]
    for s in ["", " ", "--", "--tensor-model-parallel-size", "--tensor-model-parallel-size x",
              "--tensor-model-parallel-size 0", "--tensor-model-parallel-size -2",
              "--tensor-model-parallel-size 4294967298", "--micro-batch-size 0",
              "--global-batch-size 1e308", "--num-layers-per-virtual-pipeline-stage 0",
              "'unterminated", "\"x", "--recompute-granularity", "--bogus-flag 3",
              good + " " + good, "--tensor-model-parallel-size 2 --tensor-model-parallel-size 4",
              "--num-layers-at-start-in-bf16 -1", "--context-parallel-size 0",
              "--expert-model-parallel-size 0", "--pipeline-model-parallel-size 26",
              "--pipeline-model-parallel-size 27", "x" * 5000]:
        out.append(Case("megatron", argv + [s]))
    for _ in range(60):
        t = list(toks)
        i = rng.randrange(len(t))
        if t[i].startswith("--"):
            t.insert(i + 1, rng.choice(BAD_NUMBERS))
        else:
            t[i] = rng.choice(BAD_NUMBERS)
        out.append(Case("megatron", argv + [" ".join(t)]))
    return out


def torchtitan_cases(rng):
    p = os.path.join(DATA, "eval", "torchtitan_llama3_70b.toml")
    text = open(p).read()
    lines = text.splitlines()
    out = []
    argv = ["eval", "--local", "--model", "Llama3-70B", "--cluster", "8x8xH100-80G:8xib400",
            "--no-search", "--torchtitan", "@t.toml"]
    for s in ["", "[", "[job", "a = ", "x = \"unterminated", "[parallelism]\n" * 3,
              "\x00", "[parallelism]\ndata_parallel_shard_degree = 1e308\n",
              "[parallelism]\ntensor_parallel_degree = -1\n",
              "[parallelism]\ntensor_parallel_degree = 9223372036854775808\n",
              "[parallelism]\ntensor_parallel_degree = \"4\"\n"]:
        out.append(Case("torchtitan", argv, files={"t.toml": s}))
    # an array never closed: the tables after it were one value, dropped, the file taken
    for i in [l for l, t in enumerate(lines) if t.startswith("[")]:
        ls = list(lines)
        ls[i:i] = ["[float8]", "filter_fqns = [\"output\","]
        out.append(Case("torchtitan", argv, files={"t.toml": "\n".join(ls) + "\n"},
                        must_fail=True, note="an unclosed array before line %d" % (i + 1)))
    numre = re.compile(r"=\s*(-?\d+(\.\d+)?)\s*$")
    numlines = [i for i, l in enumerate(lines) if numre.search(l)]
    for _ in range(70):
        ls = list(lines)
        op = rng.randint(0, 2)
        if op == 0 and numlines:
            i = rng.choice(numlines)
            ls[i] = numre.sub("= " + rng.choice(["0", "-1", "1e308", "4294967297", "nan",
                                                 "\"x\"", "[]", "true", "99999999999999999999"]),
                              ls[i])
        elif op == 1:
            del ls[rng.randrange(len(ls))]
        else:
            ls = ls[:rng.randrange(len(ls))]
        out.append(Case("torchtitan", argv, files={"t.toml": "\n".join(ls) + "\n"}))
    return out


# ---- running ------------------------------------------------------------------

# a predicted iteration of more than a day: a figure read without a bound (a
# Galvatron bandwidth of 1e-9 GB/s priced 5e7 s); listed for a person to read
PREDICTED = re.compile(r"predicted:\s+([0-9.e+]+) s/iteration")
ABSURD_S = 86400.0
NONFINITE = re.compile(r"(?<![A-Za-z_])(-?nan|-?inf|-?NaN|-?Infinity)(?![A-Za-z_])")
SAN = re.compile(r"(AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error:)")


def run_case(ctl, case, timeout, tmp, idx):
    d = os.path.join(tmp, "c%05d" % idx)
    os.makedirs(d, exist_ok=True)
    for name, content in case.files.items():
        path = os.path.join(d, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        mode = "wb" if isinstance(content, bytes) else "w"
        with open(path, mode) as f:
            f.write(content)
    argv = [a.replace("@", d + "/", 1) if a.startswith("@") else a for a in case.argv]
    env = dict(os.environ)
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=0")
    env.pop("TESSEL_SERVER", None)
    if any("\0" in x for x in argv):   # no argv can carry a NUL byte
        return 0, ""
    try:
        r = subprocess.run([ctl] + argv, capture_output=True, timeout=timeout, cwd=d,
                           input=(case.stdin or "").encode())
        rc, err = r.returncode, r.stderr.decode("utf-8", "replace")
        out = r.stdout.decode("utf-8", "replace")
        if rc == 0 and NONFINITE.search(out):
            err = "NONFINITE in stdout: " + NONFINITE.search(out).group(0) + "\n" + err
        elif rc == 0 and any(float(t) > ABSURD_S for t in PREDICTED.findall(out)):
            err = "ABSURD in stdout: " + PREDICTED.search(out).group(0) + "\n" + err
    except subprocess.TimeoutExpired:
        rc, err = None, ""
    shutil.rmtree(d, ignore_errors=True)
    return rc, err


def forged_line(argv, err):
    """Whether stderr has a line of an argument's making: the text after a newline in
    a value ("a\\nINFO forged") that starts a line of its own, so the value's newline
    was echoed raw (a newline is a control byte the check above lets through: tesselctl's
    own messages hold them)."""
    lines = err.splitlines()
    for a in argv:
        for piece in a.split("\n")[1:]:
            piece = piece.strip()
            if len(piece) >= 3 and any(ln.startswith(piece) for ln in lines):
                return True
    return False


def classify(case, rc, err):
    if rc is None:
        return "timeout"
    if SAN.search(err):
        return "sanitizer"
    if rc < 0:
        return "signal"
    if err.startswith("NONFINITE"):
        return "nonfinite"
    if err.startswith("ABSURD"):
        return "absurd"
    if rc not in (0, 2, 3, 4, 5):
        return "status"
    # a message with a raw control byte (a name's newline or escape sequence echoed
    # as given) writes a line of the input's making or acts on the terminal
    if any(ord(ch) < 0x20 and ch not in "\n\t" or ord(ch) == 0x7f for ch in err):
        return "control"
    if forged_line(case.argv, err):
        return "control"
    if rc != 0:
        msg = err.strip()
        # a refusal names what it refuses: "field: ..." or "--flag ..." or a quoted value
        if not msg or not re.search(r"(--[a-z]|[a-z_\]\.]+: |'[^']*'|\"[^\"]*\"|\b[a-z_]+\[)",
                                    msg):
            return "unclear"
    if rc == 0 and case.must_fail:
        return "accepted"
    return "ok"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tesselctl")
    ap.add_argument("--seed", type=int, default=23)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--only", action="append")
    ap.add_argument("--flag", action="append",
                    help="only the cases that give this flag (repeatable)")
    ap.add_argument("--list", action="store_true", help="print the cases, run none")
    ap.add_argument("--check-flags", action="store_true",
                    help="print how each flag of plan --help and eval --help is fuzzed; "
                    "exit 1 where one is not known (the meson test cli_fuzz_flags)")
    ap.add_argument("--log", help="write every case's status and first stderr line here")
    a = ap.parse_args()
    ctl = os.path.abspath(a.tesselctl)
    for cmd in ("plan", "eval"):
        FLAGS[cmd] = help_flags(ctl, cmd)
    if a.check_flags:
        return check_flags()
    rng = random.Random(a.seed)
    tmp = tempfile.mkdtemp(prefix="tsl-cli-fuzz-")
    gens = [("spec", spec_cases), ("cluster_json", cluster_json_cases), ("hf", hf_cases),
            ("flags", flag_cases), ("profile", profile_cases), ("galvatron", galvatron_cases),
            ("amp", amp_cases), ("megatron", megatron_cases), ("torchtitan", torchtitan_cases),
            ("combo", combo_cases),
            ("plan_doc", lambda r: plan_doc_cases(r, ctl, tmp))]
    cases = []
    for name, g in gens:
        sub = g(random.Random(a.seed * 1000 + len(name)))   # one stream per family
        # --only names a generator (flags) or a case's family (eval_flag)
        cases += [c for c in sub if (not a.only or name in a.only or c.family in a.only) and
                  (not a.flag or set(a.flag) & set(c.argv))]
    if a.list:
        for c in cases:
            print(c.family, json.dumps(c.argv)[:300])
        return 0
    counts = {}
    found = []
    log = open(a.log, "w", buffering=1) if a.log else None   # a line at a time
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        futs = {ex.submit(run_case, ctl, c, a.timeout, tmp, i): c for i, c in enumerate(cases)}
        for fut, c in futs.items():   # in order: the log shows how far it has got
            rc, err = fut.result()
            k = classify(c, rc, err)
            counts[k] = counts.get(k, 0) + 1
            line = err.strip().splitlines()[0] if err.strip() else ""
            if log:
                log.write("%s\t%s\t%s\t%s\t%s\t%s\n" % (k, rc, c.family, json.dumps(c.argv)[:400],
                                                        c.note[:200], line[:300]))
            if k not in ("ok",):
                found.append((k, c, rc, err))
    shutil.rmtree(tmp, ignore_errors=True)
    for k, c, rc, err in sorted(found, key=lambda f: f[0]):
        print("%-9s rc=%s %s %s %s" % (k, rc, c.family, c.note, json.dumps(c.argv)[:300]))
        if c.files and k != "accepted":
            for n, t in c.files.items():
                if n.endswith(".json") or n.endswith(".toml"):
                    s = t if isinstance(t, str) else t[:0].decode()
                    print("          %s: %s" % (n, s[:300].replace("\n", " ")))
        for l in err.strip().splitlines()[:6]:
            print("          " + l[:300])
    print("%d cases: %s" % (len(cases), ", ".join("%s %d" % kv for kv in sorted(counts.items()))))
    bad = sum(v for k, v in counts.items() if k not in ("ok", "accepted", "absurd"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
