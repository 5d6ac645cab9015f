#!/bin/bash
# Profiles end to end, driven as a user would (docs/profile-format.md, docs/worker.md).
# tessel-worker profile: the sim backend's table and JSON (every figure marked
# simulated), and bad input that must get one clear line and exit status 2. The cuda
# backend runs only where a GPU answers (it is timed on a GPU machine by hand,
# deploy/profiles/README.md); here it must fail cleanly.
# tesselctl plan --local --profile (when tesselctl is built): plans on the committed
# H100 profile and says which figures came from where; built-in figures without it.
set -u
worker="$1"
root="$2"
ctl="${3:-}"
prof="$root/deploy/profiles/h100-80g.json"
dev="$root/deploy/sim/h100-80g.json"
pass=0
fail=0
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err" "$out.json"' EXIT
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

expect() {   # expect STATUS PATTERN-ON-STDERR ARGS...
    local want="$1" pattern="$2"
    shift 2
    "$worker" "$@" >"$out" 2>"$err"
    local got=$?
    if [ "$got" -ne "$want" ]; then
        bad "$* exited $got, want $want: $(head -3 "$err")"
    elif [ -n "$pattern" ] && ! grep -q -- "$pattern" "$err"; then
        bad "$*: stderr lacks '$pattern': $(head -3 "$err")"
    else
        ok
    fi
}

if ! "$worker" profile --backend sim --device-file "$dev" --quick >"$out" 2>"$err" &&
    grep -q "built without jansson" "$err"; then
    echo "SKIP: this tessel-worker has no sim backend (no jansson)"
    exit 77
fi

expect 0 "" profile --backend sim --device-file "$dev" --quick
grep -q "SIMULATED" "$out" && ok || bad "table does not say SIMULATED"
grep -q "^attention  1024" "$out" && ok || bad "no attention row: $(head -12 "$out")"
grep -q "^ffn        2048" "$out" && ok || bad "no ffn 2048 row"

expect 0 "" profile --backend sim --device-file "$dev" --json --out "$out.json" \
    --shape h=4096,s=2048,a=32,f=11008,gated --mb 1,2 --tp 1,2,4
python3 - "$out.json" <<'PY' && ok || bad "sim JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "tessel-profile/1" and d["simulated"] is True, d["format"]
assert d["hardware"] == {"gpu": "H100-80G", "link": "nvlink", "gpus": 8}, d["hardware"]
b = d["blocks"]
assert len(b) == 2 * 2 * 3, len(b)
assert all(x["ffn_kind"] == "swiglu" and x["hidden"] == 4096 for x in b)
assert all(x["fwd_s"] > 0 and x["bwd_s"] > 0 and x["memory_bytes"] > 0 for x in b)
ar = [c for c in d["collectives"] if c["op"] == "all_reduce" and c["group"] == 8]
assert ar and abs(ar[-1]["busbw_gbps"] / ar[-1]["algbw_gbps"] - 1.75) < 1e-6, ar[-1]
assert {c["op"] for c in d["collectives"]} == {"all_reduce", "all_gather", "reduce_scatter", "send_recv"}
o = d["overlap"][0]
assert o["comm"] == "nccl-all-reduce" and o["stand_in"] is False and o["gemm_slowdown"] == 1.3
PY

# one GPU: group 1, no send/recv, a copy stand-in for the overlap test
one=$(mktemp)
sed 's/"gpus": 8/"gpus": 1/' "$dev" >"$one"
"$worker" profile --backend sim --device-file "$one" --json --quick >"$out" 2>"$err"
python3 - "$out" <<'PY' && ok || bad "one-GPU sim JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["hardware"]["link"] == "single" and d["hardware"]["gpus"] == 1
assert all(c["group"] == 1 and c["busbw_gbps"] == 0 for c in d["collectives"])
assert "send_recv" not in {c["op"] for c in d["collectives"]}
assert d["overlap"][0]["stand_in"] is True
PY
rm -f "$one"

# The soak (docs/profile-format.md "Soak"): a device whose clock starts 8 % above its
# sustained rate and decays with a 3 s time constant. Without a soak the table is at
# boost; the default soak waits for the decay and the table lands within 1 % of the
# sustained rate; a 2 s cap stops unsettled and says so.
clk=$(mktemp)
sed -e 's/"gpus": 8/"gpus": 1/' -e 's/"efficiency": 0.5,/"efficiency": 0.5, "boost_ratio": 1.08, "clock_settle_s": 3,/' \
    "$dev" >"$clk"
for soak in 0 default 2; do
    arg=(); [ "$soak" = default ] || arg=(--soak "$soak")
    "$worker" profile --backend sim --device-file "$clk" --quick --json "${arg[@]}" \
        >"$out.$soak" 2>"$err.$soak" || bad "--soak $soak: $(head -3 "$err.$soak")"
done
python3 - "$out" "$dev" <<'PY' && ok || bad "the soak on the sim clock"
import json, sys
base = sys.argv[1]
dev = json.load(open(sys.argv[2]))
sustained = dev["peak_tflops"] * dev["efficiency"] * 8192 / (8192 + dev["half_rate_tokens"])
def ref(d):
    g = [g for g in d["gemms"] if g["what"] == "reference 8192^3"][0]
    return g["tflops"]
cold, soaked, capped = (json.load(open(base + "." + s)) for s in ("0", "default", "2"))
assert cold["soak"]["max_s"] == 0 and cold["soak"]["windows"] == 0, cold["soak"]
assert abs(ref(cold) / sustained - 1.08) < 1e-6, (ref(cold), sustained)
s = soaked["soak"]
assert s["max_s"] == 15 and s["settled"] is True and 5 <= s["windows"] < 15, s
assert s["spread"] <= s["tolerance"] == 0.01 and s["first_tflops"] > 1.05 * sustained, s
assert 1 <= ref(soaked) / sustained < 1.01, (ref(soaked), sustained)
c = capped["soak"]
assert c["max_s"] == 2 and c["settled"] is False and c["windows"] == 2 and c["seconds"] == 2, c
assert ref(capped) / sustained > 1.03, ref(capped)
PY
# the table says how the soak ended (the sim backend prints no progress: nothing waits)
"$worker" profile --backend sim --device-file "$clk" --quick --soak 2 >"$out" 2>"$err"
grep -q "^soak: 8192^3 GEMMs for 2.0 s (2 windows of 1 s), stopped at its cap before settling" \
    "$out" && ok || bad "cap not said: $(grep soak "$out")"
"$worker" profile --backend sim --device-file "$clk" --quick >"$out" 2>"$err"
grep -q "^soak: .*, settled at" "$out" && ok || bad "settle not said: $(grep soak "$out")"
rm -f "$clk" "$out".{0,default,2} "$err".{0,default,2}
# a device file without the clock keys (every older one): soaked, figures as before
"$worker" profile --backend sim --device-file "$dev" --quick --json --soak 0 >"$out.0" 2>/dev/null
"$worker" profile --backend sim --device-file "$dev" --quick --json >"$out" 2>/dev/null
python3 - "$out.0" "$out" <<'PY' && ok || bad "a device without a clock model"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert a["gemms"] == b["gemms"] and a["blocks"] == b["blocks"]
assert b["soak"]["settled"] is True and b["soak"]["windows"] == 5, b["soak"]
PY
rm -f "$out.0"
expect 2 "^tessel-worker: --soak: 'x' is not an integer in 0..3600$" profile --backend sim \
    --device-file "$dev" --soak x
bad_clk=$(mktemp)
sed 's/"efficiency": 0.5,/"efficiency": 0.5, "boost_ratio": 1.1,/' "$dev" >"$bad_clk"
expect 2 "'clock_settle_s' must be > 0" profile --backend sim --device-file "$bad_clk"
sed 's/"efficiency": 0.5,/"efficiency": 0.5, "boost_ratio": 0.9,/' "$dev" >"$bad_clk"
expect 2 "'boost_ratio' must be a number >= 1" profile --backend sim --device-file "$bad_clk"
rm -f "$bad_clk"

expect 2 "required" profile
# -h as tessel-worker -h; a bad option is one line naming it (it printed getopt's
# "profile: invalid option -- 'h'" and the whole usage)
expect 0 "" profile -h
grep -q "^usage: tessel-worker profile" "$out" && ok || bad "profile -h: no usage on stdout"
expect 2 "^tessel-worker: profile: unknown option '--bogus'; see tessel-worker profile --help$" \
    profile --bogus
[ "$(wc -l <"$err")" -eq 1 ] && ok || bad "profile --bogus: $(wc -l <"$err") lines on stderr"
expect 2 "option '--mb' needs a value" profile --backend sim --mb
# a stray argument: named, with where help is (it named it without)
expect 2 "^tessel-worker: profile: unexpected argument 'extra'; see tessel-worker profile --help$" \
    profile --backend sim extra
expect 2 "not cuda or sim" profile --backend tpu
expect 2 "device-file" profile --backend sim
expect 2 "missing" profile --backend sim --device-file "$root/deploy/tesseld.conf.missing"
expect 2 "needs h, s and a" profile --backend sim --device-file "$dev" --shape h=1024
expect 2 "positive integer" profile --backend sim --device-file "$dev" --mb 0
expect 2 "iters" profile --backend sim --device-file "$dev" --iters 0
# a TP split no shape's heads divide measured nothing (exit 0, a profile of no
# block that tesselctl --profile refuses); a value twice, every row twice
expect 2 "--tp: 3 divides the heads and FFN width of no shape" profile --backend sim \
    --device-file "$dev" --tp 1,3
expect 2 "--mb: 2 given twice" profile --backend sim --device-file "$dev" --mb 2,2
# output that cannot be written: exit 1 with one line naming it (standard output on a
# full disk exited 0; --out's errors lacked the tessel-worker: prefix)
if [ -w /dev/full ]; then
    "$worker" profile --backend sim --device-file "$dev" --quick --json >/dev/full 2>"$err"
    [ $? -eq 1 ] && [ "$(cat "$err")" = "tessel-worker: profile: cannot write standard output: No space left on device" ] &&
        ok || bad "profile > /dev/full: $(cat "$err")"
    expect 1 "^tessel-worker: profile: cannot write /dev/full: No space left on device" \
        profile --backend sim --device-file "$dev" --quick --out /dev/full
fi
expect 1 "^tessel-worker: profile: cannot open /nonexistent/p.json: No such file" \
    profile --backend sim --device-file "$dev" --quick --out /nonexistent/p.json
expect 2 "unknown command" frobnicate
expect 0 "" --help

# the executor's unfused attention is an option of the cuda backend's blocks
"$worker" profile --help | grep -q -- "--unfused-attn" && ok || bad "--help lacks --unfused-attn"

# the cuda backend, fused (the default) and unfused attention: either it measures (a
# GPU is there; the notes say which attention the blocks ran) or it says why not
for attn in fused unfused; do
    flag=""
    [ "$attn" = unfused ] && flag="--unfused-attn"
    # shellcheck disable=SC2086
    "$worker" profile --backend cuda --quick --mb 1 --tp 1 --iters 1 --warmup 0 --json $flag >"$out" 2>"$err"
    case $? in
    0) python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['simulated'] is False and ('): ' + sys.argv[2] + ' attention (') in d['notes'], d['notes']" "$out" "$attn" && ok || bad "cuda JSON ($attn)" ;;
    1) grep -q "cuda" "$err" && ok || bad "cuda failure without a message: $(head -2 "$err")" ;;
    2) grep -q "built without CUDA" "$err" && ok || bad "cuda: $(head -2 "$err")" ;;
    *) bad "cuda backend crashed ($attn)" ;;
    esac
done

# no GPU visible (this machine has none, or CUDA_VISIBLE_DEVICES hides them): one
# line that says there is none and names the sim backend; where the CUDA runtime says
# "driver version is insufficient" (its words when no driver is loaded at all), the
# line says first which it is, no driver or too old a one, its words in parentheses
CUDA_VISIBLE_DEVICES="" "$worker" profile --backend cuda --quick >"$out" 2>"$err"
case $? in
1) grep -q "no CUDA GPU" "$err" && grep -q -- "--backend sim --device-file" "$err" &&
    [ "$(wc -l <"$err")" -eq 1 ] &&
    { ! grep -q "driver version is insufficient" "$err" ||
        grep -Eq "(no NVIDIA driver is loaded|the NVIDIA driver is too old for CUDA [0-9]+\.[0-9]).* \(the CUDA runtime: CUDA driver version is insufficient" "$err"; } &&
    ok || bad "cuda without a GPU: $(cat "$err")" ;;
2) grep -q "built without CUDA" "$err" && ok || bad "cuda: $(head -2 "$err")" ;;
*) bad "cuda without a visible GPU: exit $?: $(head -2 "$err")" ;;
esac
CUDA_VISIBLE_DEVICES="" timeout 20 "$worker" run --server unix:/nonexistent.sock \
    --state-dir "$(dirname "$out")/tsl-worker-$$" --backend cuda >"$out" 2>"$err"
rc=$?
rm -rf "$(dirname "$out")/tsl-worker-$$"
[ "$rc" -eq 1 ] && grep -q -- "--backend sim --device-file" "$err" && ok ||
    bad "tessel-worker run without a GPU: exit $rc: $(head -3 "$err")"

if [ -n "$ctl" ]; then
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
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
