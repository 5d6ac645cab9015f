#!/usr/bin/env bash
# cli_trace.sh — the simulated 1F1B timeline through a real tesseld (docs/tesselctl.md "plan"):
# `plan --server ... --trace FILE` and `plans export --format trace FP` write a
# Chrome trace (complete events "X" and "M" metadata, pid/tid per stage track,
# ts monotonic on each track, every stage's compute track covering [0, end]
# without gaps, its end the plan's simulated iteration time sim_iter_time_s);
# the remote trace equals the one `--local --trace` writes for the same
# request, event for event, a V plan's (ZB-V) with its chunks' own times as
# priced; an unknown format names trace (exit 2).
# Beside it, --galvatron-profile through the same daemon: the
# imported hardware figures travel as the cluster JSON (the plan's cluster
# has Galvatron's inter-node bandwidth) and the figure sources say what did
# not travel (skipped without ../shared/fixtures/galvatron).
#
# usage: cli_trace.sh TESSELCTL TESSELD
set -u

CTL=${1:?usage: cli_trace.sh TESSELCTL TESSELD}
DAEMON=${2:?usage: cli_trace.sh TESSELCTL TESSELD}
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3

tmp=$(mktemp -d /tmp/tessel-cli-trace.XXXXXX)
sock=$tmp/tesseld.sock
daemon_pid=
failures=0

# shellcheck source=proc.sh
. "$(dirname "$0")/proc.sh" # stop_pid

cleanup() {
    stop_pid "$daemon_pid"
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM


ctl() {
    timeout 300 "$CTL" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}

start_tesseld "$DAEMON" "$CTL" "$tmp" 2 || exit 1

# A two-stage plan, so that the trace has p2p events and bubbles.
REQ=(--model GPT2-345M --cluster 4xA100-40G --batch 16 --pp 2 --no-baselines)

ctl --server "unix:$sock" --json plan "${REQ[@]}" --trace "$tmp/remote.json"
expect_rc 0 "plan --server --trace"
fp=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["fingerprint"])' "$tmp/out")
iter=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["plan"]["sim_iter_time_s"])' "$tmp/out")

ctl plan --local "${REQ[@]}" --trace "$tmp/local.json"
expect_rc 0 "plan --local --trace"

ctl --server "unix:$sock" plans export --format trace -o "$tmp/export.json" "$fp"
expect_rc 0 "plans export --format trace $fp"

# check FILE... — the format, and every file's events equal to the first's
if "$PY" - "$iter" "$tmp/remote.json" "$tmp/local.json" "$tmp/export.json" >"$tmp/check" 2>&1 <<'PY'; then
import json, sys
iter_s = float(sys.argv[1])
docs = [json.load(open(p)) for p in sys.argv[2:]]
errs = []
def check(doc, name):
    ev = doc["traceEvents"]
    if {e["ph"] for e in ev} - {"X", "M"}:
        errs.append("%s: phases %s" % (name, sorted({e["ph"] for e in ev})))
    tracks = {}
    for e in ev:
        if not isinstance(e.get("pid"), int) or not isinstance(e.get("tid"), int):
            errs.append("%s: an event without integer pid/tid" % name)
        if e["ph"] == "X":
            if e["dur"] < 0:
                errs.append("%s: negative dur" % name)
            tracks.setdefault((e["pid"], e["tid"]), []).append(e)
    stages = {p for p, _ in tracks}
    if len(stages) != 2:
        errs.append("%s: %d stages, want 2" % (name, len(stages)))
    if not any(e["cat"] == "p2p" for t in tracks.values() for e in t):
        errs.append("%s: no p2p events" % name)
    end_us = iter_s * 1e6
    for (pid, tid), t in tracks.items():
        if any(b["ts"] < a["ts"] for a, b in zip(t, t[1:])):
            errs.append("%s: track %d/%d not in ts order" % (name, pid, tid))
        if tid != 1:
            continue
        if abs(t[0]["ts"]) > 1e-3:
            errs.append("%s: stage %d starts at %g" % (name, pid, t[0]["ts"]))
        for a, b in zip(t, t[1:]):
            if abs(a["ts"] + a["dur"] - b["ts"]) > 1e-6 * max(1.0, b["ts"]):
                errs.append("%s: stage %d: gap or overlap at %g" % (name, pid, b["ts"]))
                break
        last = t[-1]["ts"] + t[-1]["dur"]
        if abs(last - end_us) > 1e-6 * end_us:
            errs.append("%s: stage %d ends at %.3f us, iteration %.3f us" % (name, pid, last, end_us))
for d, n in zip(docs, ("remote", "local", "export")):
    check(d, n)
key = lambda d: [(e["ph"], e["name"], e["pid"], e["tid"], round(e.get("ts", 0), 3),
                  round(e.get("dur", 0), 3)) for e in d["traceEvents"]]
if key(docs[0]) != key(docs[1]):
    errs.append("remote and local traces differ")
if docs[0] != docs[2]:
    errs.append("--trace FILE and plans export --format trace differ")
print("\n".join(errs) if errs else "%d events" % len(docs[0]["traceEvents"]))
sys.exit(1 if errs else 0)
PY
    ok "trace format, end = iteration time, remote = local = export ($(cat "$tmp/check"))"
else
    fail "trace check: $(head -5 "$tmp/check")"
fi

# A V plan (ZB-V: BERT-Large on 8 stages, its chunks uneven): tesseld's stored document
# carries each stage's second chunk ("chunk1"), so the stored plan's trace is the
# search's — ending at its sim_iter_time_s, slice for slice the local trace (a
# document without them split each stage in halves: another timeline, another end).
VREQ=(--model BERT-Large --cluster 2x4xA100-40G:ib100 --batch 32 --pp 8 --no-baselines)
ctl --server "unix:$sock" --json plan "${VREQ[@]}"
expect_rc 0 "plan --server (a V plan)"
cp "$tmp/out" "$tmp/v-plan.json"
vfp=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["fingerprint"])' "$tmp/v-plan.json")
ctl --server "unix:$sock" plans export --format trace -o "$tmp/v-export.json" "$vfp"
expect_rc 0 "plans export --format trace $vfp (a V plan)"
ctl plan --local "${VREQ[@]}" --trace "$tmp/v-local.json"
expect_rc 0 "plan --local --trace (a V plan)"
if "$PY" - "$tmp/v-plan.json" "$tmp/v-export.json" "$tmp/v-local.json" >"$tmp/check" 2>&1 <<'PY'; then
import json, sys
plan = json.load(open(sys.argv[1]))["plan"]
exp, loc = (json.load(open(p))["traceEvents"] for p in sys.argv[2:])
assert plan["schedule"] == "zbv" and all("chunk1" in st for st in plan["stages"]), plan["schedule"]
end = max(e["ts"] + e["dur"] for e in exp if e["ph"] == "X")
assert abs(end - plan["sim_iter_time_s"] * 1e6) <= 1e-6 * end, (end, plan["sim_iter_time_s"])
key = lambda ev: [(e["ph"], e["name"], e["pid"], e["tid"], round(e.get("ts", 0), 3),
                   round(e.get("dur", 0), 3)) for e in ev]
assert key(exp) == key(loc), "the stored plan's trace is not the local one"
print("ends at %.3f us" % end)
PY
    ok "a stored V plan's trace is the search's ($(cat "$tmp/check"))"
else
    fail "a stored V plan's trace: $(tail -3 "$tmp/check")"
fi

ctl --server "unix:$sock" plans export --format chrome "$fp"
expect_rc 2 "an unknown format"
grep -q "trace" "$tmp/err" && ok "the error names trace: $(cat "$tmp/err")" ||
    fail "the error does not name trace: $(cat "$tmp/err")"

gdir="$(cd "$(dirname "$0")" && pwd)/../../../shared/fixtures/galvatron/llama2-7b"
if [ -d "$gdir" ]; then
    ctl --server "unix:$sock" --json plan --model Llama2-7B --seq-len 2048 \
        --cluster 2x8xA100-80G --batch 32 --memory 36G --no-baselines --galvatron-profile "$gdir"
    expect_rc 0 "plan --server --galvatron-profile"
    if "$PY" - "$tmp/out" <<'PY'; then
import json, sys
d = json.load(open(sys.argv[1]))
src = " ".join(d.get("figure_sources", []))
# p2p_bandwidth_2nodes_8gpus_per_node.json pp_size_2: 7.65998 GB/s, below the
# one-GPU-per-node all-reduce's 8.13007: the link the cluster JSON carries
assert "inter 7.66 GB/s" in d["cluster"]["description"], d["cluster"]
assert "sent as the cluster JSON" in src and "not sent" in src, src
PY
        ok "the imported links reached tesseld; the sources say what did not"
    else
        fail "--galvatron-profile through tesseld: $(head -c 600 "$tmp/out")"
    fi
else
    echo "skip --galvatron-profile through tesseld: $gdir is absent"
fi

if grep -E 'ERROR: (Address|Leak|Thread)Sanitizer|runtime error:' "$tmp/tesseld.log"; then
    fail "a sanitizer reported an error"
fi
[ "$failures" -eq 0 ] && echo "all checks passed" && exit 0
echo "$failures check(s) failed"
exit 1
