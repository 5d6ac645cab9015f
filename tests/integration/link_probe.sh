#!/usr/bin/env bash
# link_probe.sh — the inter-node link probe end to end (DESIGN.md "Profiles": the
# inter-node bandwidth when the daemon pairs two workers; docs/api.md "Trials"):
# tesseld and two `sim` tessel-workers on a private unix socket. Checked:
#   `tesselctl trial probe-link A B --wait` runs a trial of kind "link" that ends
#   done; `tesselctl profiles` then shows inter-node send/recv and all-reduce
#   figures (bus and algorithm bandwidth per message size, 1 KiB .. 64 MiB over
#   tcp), labelled simulated with comm=tcp and the peer host;
#   a plan on `--cluster registered` across the two nodes prices it by the
#   measured inter-node figure (tesseld, which assembles the cluster, logs the
#   figure's source under the plan's fingerprint);
#   a probe naming an unknown node, or one that went offline, is refused with
#   the reason; probes naming one node or a plan are refused (usage, daemon).
#
# usage: link_probe.sh TESSELD PROTO_DIR TESSELCTL TESSEL_WORKER DEVICE_FILE
. "$(dirname "$0")/lib.sh"
CTL=${3:?usage: link_probe.sh TESSELD PROTO_DIR TESSELCTL TESSEL_WORKER DEVICE_FILE}
WORKER=${4:?usage}
DEVICE_FILE=${5:?usage}

start_trial_daemon

port=$(( 30000 + ($$ * 7) % 20000 ))
start_sim_workers "$port" link- link-a link-b link-c
wait_profiled 3
ok "three sim workers registered with a profile"

# ---- refusals ----
timeout 20 "$CTL" --server "$T" trial probe-link link-a no-such-node >"$TMPD/r1.out" 2>&1
rc=$?
[ "$rc" -eq 4 ] && grep -q "no-such-node" "$TMPD/r1.out" && grep -q "no worker registered" "$TMPD/r1.out" &&
    ok "a probe naming an unknown node is refused with the reason (exit 4)" ||
    fail "unknown node: exit $rc: $(cat "$TMPD/r1.out")"
timeout 20 "$CTL" --server "$T" trial probe-link link-a >"$TMPD/r2.out" 2>&1
rc=$?
[ "$rc" -eq 2 ] && grep -q "two node names" "$TMPD/r2.out" && ok "probe-link with one node: usage (2)" ||
    fail "one node: exit $rc: $(cat "$TMPD/r2.out")"
timeout 20 "$CTL" --server "$T" trial probe-link link-a link-a >"$TMPD/r3.out" 2>&1
rc=$?
[ "$rc" -ne 0 ] && grep -qi "given twice\|two different" "$TMPD/r3.out" &&
    ok "probe-link of a node with itself is refused" || fail "same node: exit $rc: $(cat "$TMPD/r3.out")"

# ---- the probe ----
if timeout 240 "$CTL" --server "$T" trial probe-link --iterations 3 --warmup 1 --wait link-a link-b \
    >"$TMPD/probe.out" 2>"$TMPD/probe.err"; then
    ok "tesselctl trial probe-link --wait: exit 0"
else
    fail "probe-link --wait: exit $?: $(cat "$TMPD/probe.out" "$TMPD/probe.err")"
fi
grep -Eq "^Trial t-[^:]+: done" "$TMPD/probe.out" && grep -q "link probe: link-a (rank 0) <-> link-b" "$TMPD/probe.out" &&
    ok "the probe is a done trial of kind link" || fail "probe printed: $(cat "$TMPD/probe.out")"
TID=$(grep -Eo "^t-[0-9a-f]+" "$TMPD/probe.out" | head -1)
timeout 20 "$CTL" --server "$T" trial show --json "$TID" >"$TMPD/show.json" 2>&1
[ "$(jget "$TMPD/show.json" kind)" = link ] && [ "$(jget "$TMPD/show.json" comm)" = tcp ] &&
    ok "trial show --json: kind link, comm tcp" || fail "trial show: $(cat "$TMPD/show.json")"

timeout 20 "$CTL" --server "$T" profiles --json >"$TMPD/profiles.json" 2>&1
"$PY" - "$TMPD/profiles.json" >"$TMPD/pcheck.out" 2>&1 <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
rows = [m for m in doc.get("measurements", []) if m.get("link_class") == "inter-node"]
bad = []
def want(name):
    got = {int(m["labels"]["bytes"]): m for m in rows if m["name"] == name}
    if not got:
        bad.append("no %s rows" % name); return
    if min(got) != 1024 or max(got) != 64 << 20:
        bad.append("%s sizes %d..%d, want 1 KiB .. 64 MiB" % (name, min(got), max(got)))
    for b, m in got.items():
        l = m["labels"]
        if not m.get("simulated") or l.get("comm") != "tcp" or l.get("peer") != "link-b" or m["value"] <= 0:
            bad.append("%s %d: %s" % (name, b, m))
    return got
sr = want("sendrecv_busbw"); ar = want("allreduce_busbw"); alg = want("allreduce_algbw")
want("sendrecv_algbw"); want("sendrecv_time")
if ar and alg:  # 2 ranks: nccl-tests' all-reduce factor 2(n-1)/n = 1
    for b in ar:
        if abs(ar[b]["value"] - alg[b]["value"]) > 1e-6 * alg[b]["value"]:
            bad.append("all-reduce busbw != algbw at %d" % b)
print("\n".join(bad) if bad else "%d inter-node rows" % len(rows))
sys.exit(1 if bad else 0)
PY
[ $? -eq 0 ] && ok "profiles: inter-node send/recv and all-reduce, simulated, comm=tcp, peer ($(cat "$TMPD/pcheck.out"))" ||
    fail "profiles: $(cat "$TMPD/pcheck.out")"
timeout 20 "$CTL" --server "$T" profiles >"$TMPD/profiles.txt" 2>&1
grep -q "inter-node" "$TMPD/profiles.txt" && ok "tesselctl profiles prints the inter-node rows" ||
    fail "profiles (text): $(head -30 "$TMPD/profiles.txt")"

timeout 20 "$CTL" --server "$T" profiles --node link-a --json >"$TMPD/node.json" 2>&1
"$PY" -c '
import json, sys
ms = json.load(open(sys.argv[1])).get("measurements", [])
inter = [m for m in ms if m.get("link_class") == "inter-node"]
other = [m for m in ms if m.get("link_class") != "inter-node"]
print(len(inter), len(other))
sys.exit(0 if inter and any(m["name"].endswith("_fwd") for m in other) else 1)' "$TMPD/node.json" \
    >"$TMPD/node.out" 2>&1 &&
    ok "profiles --node link-a: the probe rows beside the node's own profile ($(cat "$TMPD/node.out"))" ||
    fail "profiles --node: $(cat "$TMPD/node.out")"

# ---- a plan on the registered cluster across both nodes uses the measured figure ----
cat >"$TMPD/tiny.json" <<'JSON'
{"model_type": "gpt2", "n_layer": 4, "n_embd": 64, "n_head": 4, "n_positions": 32, "vocab_size": 128}
JSON
# figures_of JSON OUT — the "figures:" lines tesseld logged for the plan in JSON.
figures_of() {
    local fp
    fp=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["fingerprint"])' "$1")
    grep "plan $fp: figures: " "$TMPD/d.log" >"$2"
}
if timeout 120 "$CTL" --server "$T" plan --hf-config "$TMPD/tiny.json" --cluster registered \
    --nodes link-a,link-b --batch 8 --no-baselines --json >"$TMPD/plan.json" 2>"$TMPD/plan.log"; then
    figures_of "$TMPD/plan.json" "$TMPD/plan.out"
    # a probe on a heavily loaded machine can measure under the request's floor
    # (0.01 GB/s): the plan then stands on ib100 and names the figure it left out
    if grep -Eq "inter-node link-a<->link-b: built-in ib100 \([0-9.e-]+ GB/s measured is outside" \
        "$TMPD/plan.out"; then
        LEFT_OUT=1
        ok "a plan across the two nodes names the measured figure it left out (under the floor)"
    else
        grep -Eq "inter-node link-a<->link-b: [0-9.]+ GB/s measured by a link probe \(simulated" \
            "$TMPD/plan.out" && ! grep -q "built-in ib100" "$TMPD/plan.out" &&
            ok "a plan across the two nodes names the measured inter-node figure" ||
            fail "plan figures: $(grep -i "inter" "$TMPD/plan.out" | head -5)"
    fi
    grep -i "inter" "$TMPD/plan.out" | sed 's/^/# /'
else
    fail "plan --cluster registered --nodes link-a,link-b: $(cat "$TMPD/plan.log")"
fi

timeout 120 "$CTL" --server "$T" plan --hf-config "$TMPD/tiny.json" --cluster registered \
    --nodes link-a,link-c --batch 8 --no-baselines --json >"$TMPD/plan2.json" 2>&1
figures_of "$TMPD/plan2.json" "$TMPD/plan2.out"
# (with the probe's figure left out above, both pairs are the same cluster: the same
# fingerprint, whose figures say "no usable link probe")
unprobed="inter-node: built-in ib100 (no link probe"
[ -n "${LEFT_OUT:-}" ] && unprobed="inter-node: built-in ib100 (no"
grep -qF "$unprobed" "$TMPD/plan2.out" &&
    ok "a pair never probed keeps the built-in inter-node figure, saying so" ||
    fail "unprobed pair: $(grep -i "inter" "$TMPD/plan2.out" | head -5)"

# ---- a node gone offline is refused with the reason ----
kill -KILL "$pid_c"
for _ in $(seq 1 100); do
    timeout 20 "$CTL" --server "$T" workers >"$TMPD/w.txt" 2>&1
    grep -E "link-c" "$TMPD/w.txt" | grep -q offline && break
    sleep 0.2
done
timeout 20 "$CTL" --server "$T" trial probe-link link-a link-c >"$TMPD/r4.out" 2>&1
rc=$?
[ "$rc" -eq 4 ] && grep -q "link-c" "$TMPD/r4.out" && grep -q "offline" "$TMPD/r4.out" &&
    ok "a probe naming an offline node is refused with the reason" ||
    fail "offline node: exit $rc: $(cat "$TMPD/r4.out")"
finish
