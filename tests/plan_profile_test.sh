#!/bin/bash
# tesselctl plan --local --profile: plans on a measured profile and says which
# figures came from where (issue 8). Built-in figures without --profile.
set -u
ctl="$1"
root="$2"
prof="$root/deploy/profiles/h100-80g.json"
pass=0
fail=0
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

"$ctl" plan --local --model GPT2-345M --cluster 1xH100-80G --batch 16 >"$out" 2>"$err" &&
    grep -q "^figures: built-in" "$out" && ok || bad "built-in figures line: $(tail -2 "$out") $(cat "$err")"

"$ctl" plan --local --model GPT2-345M --cluster 1xH100-80G --batch 16 --profile "$prof" >"$out" 2>"$err" &&
    grep -q "^figures: compute measured (.*h100-80g.json, H100-80G / single), host<->device measured, intra-node built-in, overlap built-in" "$out" &&
    ok || bad "measured figures line: $(tail -2 "$out") $(cat "$err")"

"$ctl" plan --local --model GPT2-345M --cluster 1xH100 --batch 16 --profile "$prof" --json >"$out" 2>"$err"
python3 - "$out" <<'PY' && ok || bad "figures JSON key"
import json, sys
d = json.load(open(sys.argv[1]))
f = d["figures"]
assert f["compute"] == "measured" and f["host_device"] == "measured", f
assert f["intra_node"] == "built-in" and f["overlap"] == "built-in", f
assert f["profile"].endswith("h100-80g.json") and f["hardware"]["gpu"] == "H100-80G", f
PY

"$ctl" plan --local --model GPT2-345M --cluster 1xH100-80G --batch 16 --json >"$out" 2>"$err"
python3 -c "import json,sys; f=json.load(open(sys.argv[1]))['figures']; assert f['compute']=='built-in', f" "$out" &&
    ok || bad "built-in JSON key"

"$ctl" plan --local --model GPT2-345M --cluster 8xA100-40G --batch 16 --profile "$prof" >"$out" 2>"$err"
[ $? -eq 2 ] && grep -q "H100-80G" "$err" && ok || bad "profile for another GPU: $(cat "$err")"

"$ctl" plan --local --model GPT2-345M --cluster 1xH100 --batch 16 --profile /nonexistent.json >"$out" 2>"$err"
[ $? -eq 2 ] && grep -q "nonexistent" "$err" && ok || bad "missing profile: $(cat "$err")"

"$ctl" plan --model GPT2-345M --cluster 1xH100 --profile "$prof" >"$out" 2>"$err"
[ $? -eq 2 ] && grep -q -- "--local" "$err" && ok || bad "--profile without --local: $(cat "$err")"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
