#!/bin/bash
# tesselctl's local mode, driven as a user would: real plans, and bad input that must
# get one clear line naming the field and exit status 2 — never a crash.
set -u
ctl="$1"
pass=0
fail=0
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

# expect STATUS PATTERN-ON-STDERR ARGS...
expect() {
    local want="$1" pattern="$2"
    shift 2
    "$ctl" "$@" >"$out" 2>"$err"
    local got=$?
    if [ "$got" -ne "$want" ]; then
        bad "tesselctl $* exited $got, expected $want; stderr: $(cat "$err")"
    elif [ -n "$pattern" ] && ! grep -q -- "$pattern" "$err"; then
        bad "tesselctl $*: stderr lacks '$pattern': $(cat "$err")"
    elif [ "$want" -ne 0 ] && [ "$(wc -l <"$err")" -gt 1 ] && [ "$want" -ne 2 -o -n "$pattern" ] &&
        ! head -1 "$err" | grep -q "^tesselctl: "; then
        bad "tesselctl $*: error is not one 'tesselctl: ' line: $(cat "$err")"
    else
        ok
    fi
}

# a real plan, human output
expect 0 "" plan --local --model GPT2-345M --cluster 8xA100-40G --memory 16G
grep -q "pipeline:" "$out" && grep -q "Baselines" "$out" && grep -q "×" "$out" && ok ||
    bad "plan output lacks the pipeline line, baselines or folded runs: $(head -20 "$out")"

# JSON output parses and carries the plan
expect 0 "" plan --local --model BERT-Huge-32 --cluster 8xRTX-TITAN-24G --memory 8G --json
if /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["plan"]["samples_per_s"] > 0; assert len(d["baselines"]) == 9' "$out"; then ok; else bad "--json output"; fi

# a fixed batch is kept
expect 0 "" plan --local --model GPT2-345M --cluster 2x8xA100-40G:ib100 --batch 64 --json --no-baselines
if /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["plan"]["global_batch"] == 64' "$out"; then ok; else bad "--batch 64 not kept"; fi

# --timeout holds with --local too: the search is cancelled at the deadline and the
# exit status is a remote DEADLINE_EXCEEDED's (5), well before the search would end
t0=$(date +%s%N)
expect 5 "within 0.3 s (--timeout)" --timeout 0.3 plan --local --model GPT3-65B --cluster 16x8xA100-80G:ib100 --max-batch 65536
t1=$(date +%s%N)
[ $(((t1 - t0) / 1000000)) -lt 5000 ] && ok || bad "--local --timeout 0.3 took $(((t1 - t0) / 1000000)) ms"
expect 5 "within 0.2 s" plan --local --timeout 0.2 --model GPT3-65B --cluster 16x8xA100-80G:ib100

# the help lists every request option of planner/request_fields.h
expect 0 "" plan --help
grep -q -- "--no-bi-objective" "$out" && grep -q -- "--memory SIZE" "$out" && grep -q -- "--top-k N" "$out" &&
    ok || bad "plan --help lacks request options: $(cat "$out")"

# bad input: exit 2, one line naming the field
expect 2 "model:" plan --local --model NoSuchModel --cluster 8xA100-80G
expect 2 "cluster:" plan --local --model GPT2-345M --cluster 8xA200-80G
expect 2 "cluster:" plan --local --model GPT2-345M --cluster 0xA100-80G
expect 2 "cluster:" plan --local --model GPT2-345M
expect 2 "memory:" plan --local --model GPT2-345M --cluster 8xA100-80G --memory 0
expect 2 "memory:" plan --local --model GPT2-345M --cluster 8xA100-80G --memory -3G
expect 2 "memory:" plan --local --model GPT2-345M --cluster 8xA100-80G --memory lots
expect 2 "memory:" plan --local --model GPT2-345M --cluster 8xA100-40G --memory 200G
expect 2 "memory:" plan --local --model GPT3-65B --cluster 8xA100-40G --memory 4G
expect 2 "batch:" plan --local --model GPT2-345M --cluster 8xA100-80G --batch 0
expect 2 "batch:" plan --local --model GPT2-345M --cluster 8xA100-80G --batch -8
expect 2 "batch:" plan --local --model GPT2-345M --cluster 8xA100-80G --batch 3 --no-tp --no-pp
expect 2 "model:" plan --local --cluster 8xA100-80G
expect 2 "model:" plan --local --model GPT2-345M --hf-config /nonexistent.json --cluster 8xA100-80G
expect 2 "" plan --local --model GPT2-345M --cluster 8xA100-80G --bogus-flag
expect 2 "" frobnicate
expect 0 "" --help
expect 0 "" plan --help
grep -q -- "--memory" "$out" && ok || bad "plan --help lacks --memory"

# the preset and hardware listings
expect 0 "" models
grep -q "GPT3-65B" "$out" && grep -q "BERT-Huge-32" "$out" && ok || bad "models list"
expect 0 "" hardware
grep -q "A100-80G" "$out" && ok || bad "hardware list"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
