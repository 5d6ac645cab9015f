#!/usr/bin/env bash
# daemon_limits.sh — the [limits] of the configuration, each answered before a
# search starts: request size (RESOURCE_EXHAUSTED), layers, devices and batch
# sizes (INVALID_ARGUMENT naming the field and the limit).
#
# usage: daemon_limits.sh TESSELD PROTO_DIR
source "$(dirname "$0")/lib.sh"

SOCK=$TMPD/tesseld.sock
T=unix:$SOCK
rpc() { rpc_to "$T" "$@"; }

start_daemon d --unix-socket "$SOCK" --database "$TMPD/t.db" --pool-size 1 \
    --max-request-bytes 65536 --max-layers 40 --max-devices 16 --max-batch 1024 \
    --http 127.0.0.1:0
wait_healthy "$T" || { fail "tesseld did not become healthy"; finish; }
grep -Eq 'http: status page.* on 127\.0\.0\.1:[1-9][0-9]* \(127\.0\.0\.1:0\)' "$TMPD/d.log" &&
    ok "--http 127.0.0.1:0 logs the port bound" || fail "no port logged for --http 127.0.0.1:0"
grep -q 'not a loopback address' "$TMPD/d.log" && fail "a loopback page warned as public" ||
    ok "no public-page warning on loopback"

rpc plan --model GPT2-345M --cluster 4x8xA100-40G:ib100
expect "32 devices over max_devices=16" code INVALID_ARGUMENT
expect_details "devices message" 'max_devices=16'
rpc plan --model GPT3-65B --cluster 16xA100-80G
expect "GPT3-65B's layers over max_layers=40" code INVALID_ARGUMENT
expect_details "layers message" 'max_layers=40'
rpc plan "${QUICK[@]}" --batch 2048
expect "global_batch over max_batch=1024" code INVALID_ARGUMENT
expect_details "global_batch message" 'global_batch: 2048.*max_batch=1024'
rpc plan "${QUICK[@]}" --max-batch 4096
expect "max_batch over max_batch=1024" code INVALID_ARGUMENT
expect_details "max_batch message" '^max_batch: 4096'

# A sweep stays under the limit by itself.
rpc plan "${QUICK[@]}"
expect "a sweep under max_batch=1024" code OK
gb=$(jget "$OUT" global_batch)
[ "${gb:-0}" -ge 1 ] && [ "${gb:-0}" -le 1024 ] && ok "sweep chose batch $gb <= 1024" ||
    fail "sweep chose batch $gb"

# Bad values that pass no more: a NUL byte inside a string, and
# hardware figures outside their physical bounds (api/request.h).
rpc plan --escapes --model 'GPT2-345M\0evil' --cluster 4xA100-40G
expect "model_preset with a NUL byte" code INVALID_ARGUMENT
expect_details "NUL message names the field" '^model_preset: contains a NUL byte'
printf '{"nodes": [{"type": "A100-40G", "gpus": 4}, {"type": "A100-40G", "gpus": 4}], "inter_gbps": 1e-300}' \
    >"$TMPD/slow.json"
rpc plan --model GPT2-345M --cluster-json "$TMPD/slow.json"
expect "inter_gbps = 1e-300" code INVALID_ARGUMENT
expect_details "bounds message names inter_gbps" '^cluster_json: inter_gbps: .*physical bounds'
printf '{"gpu_types": {"slow": {"memory_gb": 40, "peak_tflops": 1e-30, "efficiency": 0.5, "intra_gbps": 100, "pcie_gbps": 16}}, "nodes": [{"type": "slow", "gpus": 4}]}' \
    >"$TMPD/weak.json"
rpc plan --model GPT2-345M --cluster-json "$TMPD/weak.json"
expect "peak_tflops = 1e-30" code INVALID_ARGUMENT
expect_details "bounds message names peak_tflops" 'peak_tflops: .*physical bounds'
printf '{"nodes": [{"type": "A100-40G", "gpus": 4, "intra_gbps": 1e308}]}' >"$TMPD/fast.json"
rpc plan --model GPT2-345M --cluster-json "$TMPD/fast.json"
expect "intra_gbps = 1e308" code INVALID_ARGUMENT
expect_details "the message names the bound broken" \
    '^cluster_json: nodes\[0\]\.intra_gbps: 1e\+308 GB/s is outside the physical bounds \[0.01, 100000\]'
rpc plan "${QUICK[@]}" --batch 8
expect "a plan in bounds after the refusals" code OK

# Registry input: strings must be UTF-8, device memory within int64, and a
# profile's figures physical and near the worker's own history.
"$PY" - "$STUBS" "$SOCK" >"$TMPD/registry.out" 2>&1 <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
import grpc
from tessel.v1 import registry_pb2 as pb
ch = grpc.insecure_channel("unix:" + sys.argv[2])
def call(method, resp, raw):
    fn = ch.unary_unary("/tessel.v1.Registry/" + method, request_serializer=lambda b: b,
                        response_deserializer=resp.FromString)
    try:
        return "OK", fn(raw, timeout=30)
    except grpc.RpcError as e:
        return e.code().name + " " + e.details(), None
def reg(host, mem):
    r = pb.RegisterRequest(hostname="HOSTX", devices=[pb.Device(
        index=0, model="NVIDIA A100-SXM4-40GB", memory_bytes=mem, uuid="GPU-1")])
    return r.SerializeToString().replace(b"\x05HOSTX", bytes([len(host)]) + host)
print("badutf8:", call("RegisterWorker", pb.RegisterResponse, reg(b"node-\xc0\xaf", 40 << 30))[0])
print("bigmem:", call("RegisterWorker", pb.RegisterResponse, reg(b"node-a", 1 << 63))[0])
code, r = call("RegisterWorker", pb.RegisterResponse, reg(b"node-a", 40 << 30))
print("good:", code)
wid = r.worker_id if r else "none"
def report(value, when=0, rid="r"):
    m = pb.Measurement(name="ffn_fwd", unit="s", value=value, per_device=True, device_index=0,
                       labels={"h": "1024", "mb": "4"})
    return pb.ReportProfileRequest(worker_id=wid, measurements=[m], report_id=rid,
                                   measured_unix=when).SerializeToString()
R = pb.ReportProfileResponse
print("negative:", call("ReportProfile", R, report(-1.0, rid="r0"))[0])
print("future:", call("ReportProfile", R, report(0.004, when=(1 << 63) - 1, rid="r1"))[0])
print("first:", call("ReportProfile", R, report(0.004, rid="r2"))[0])
print("x1000:", call("ReportProfile", R, report(4.0, rid="r3"))[0])
print("near:", call("ReportProfile", R, report(0.005, rid="r4"))[0])
# a report's shape: empty (it replaced the node's stored profile with nothing), a GEMM
# of "inf" rows (infinite work: an infinite achieved FLOP/s), the same figure twice
print("empty:", call("ReportProfile", R, pb.ReportProfileRequest(worker_id=wid,
                                                                 report_id="r5").SerializeToString())[0])
g = pb.Measurement(name="gemm_fwd", unit="s", value=1e-3, per_device=True, device_index=0,
                   labels={"m": "inf", "n": "8192", "k": "8192"})
print("infgemm:", call("ReportProfile", R, pb.ReportProfileRequest(
    worker_id=wid, measurements=[g], report_id="r6").SerializeToString())[0])
g.labels["m"] = "8192"
print("twice:", call("ReportProfile", R, pb.ReportProfileRequest(
    worker_id=wid, measurements=[g, g], report_id="r7").SerializeToString())[0])
print("after:", call("ReportProfile", R, report(0.005, rid="r8"))[0])
# a name with a newline: refused, the message on one line
r = pb.RegisterRequest(hostname="node-b\nINFO forged", devices=[pb.Device(
    index=0, model="NVIDIA A100-SXM4-40GB", memory_bytes=40 << 30, uuid="GPU-2")])
print("newline:", call("RegisterWorker", pb.RegisterResponse, r.SerializeToString())[0].replace("\n", "<NL>"))
# one GPU listed twice (one UUID on two indices): the registered cluster counted two
r = pb.RegisterRequest(hostname="node-c", devices=[pb.Device(
    index=i, model="NVIDIA A100-SXM4-40GB", memory_bytes=40 << 30, uuid="GPU-3") for i in (0, 1)])
print("uuidtwice:", call("RegisterWorker", pb.RegisterResponse, r.SerializeToString())[0])
# a device index no node has, an SM count no GPU has, a negative sm_count (a 64-bit
# varint of -1 read as uint32 2^32-1): each was stored and shown as given
def dev(**kw):
    return pb.RegisterRequest(hostname="node-d", devices=[pb.Device(
        model="NVIDIA A100-SXM4-40GB", memory_bytes=40 << 30, uuid="GPU-4", **kw)])
print("bigindex:", call("RegisterWorker", pb.RegisterResponse,
                        dev(index=4096, sm_count=108).SerializeToString())[0])
print("bigsm:", call("RegisterWorker", pb.RegisterResponse,
                     dev(index=0, sm_count=1 << 20).SerializeToString())[0])
negdev = pb.Device(model="NVIDIA A100-SXM4-40GB", memory_bytes=40 << 30, uuid="GPU-4",
                   sm_count=7).SerializeToString().replace(b"\x20\x07",
                                                           b"\x20" + b"\xff" * 9 + b"\x01")
neg = pb.RegisterRequest(hostname="node-d").SerializeToString() + b"\x12" + \
    bytes([len(negdev)]) + negdev
print("negsm:", call("RegisterWorker", pb.RegisterResponse, neg)[0])
print("goodsm:", call("RegisterWorker", pb.RegisterResponse,
                      dev(index=63, sm_count=108).SerializeToString())[0])
EOF
sed 's/^/  /' "$TMPD/registry.out"
grep_out() {
    grep -Eq -- "$2" "$TMPD/registry.out" && ok "$1" || fail "$1: no line matches /$2/"
}
grep_out "a hostname with invalid UTF-8 is refused" '^badutf8: INVALID_ARGUMENT hostname: invalid UTF-8'
grep_out "device memory of 2^63 bytes is refused" '^bigmem: INVALID_ARGUMENT devices\[0\]\.memory_bytes'
grep_out "a plain registration" '^good: OK'
grep_out "a negative block time is refused" '^negative: INVALID_ARGUMENT measurements\[0\]\.value: ffn_fwd'
grep_out "a timestamp of 2^63-1 is refused" '^future: INVALID_ARGUMENT measured_unix'
grep_out "a first report is stored" '^first: OK'
grep_out "a block time 1000x its history is refused" '^x1000: INVALID_ARGUMENT measurements\[0\]\.value: ffn_fwd.*history'
grep_out "a block time near its history is stored" '^near: OK'
grep_out "an empty report is refused" '^empty: INVALID_ARGUMENT measurements: none given'
grep_out "a GEMM label 'inf' is refused" \
    "^infgemm: INVALID_ARGUMENT measurements\[0\]\.labels: m 'inf' \(gemm_fwd\) is not a whole decimal number"
grep_out "a figure twice in one report is refused" \
    '^twice: INVALID_ARGUMENT measurements\[1\]: gemm_fwd .* is measurements\[0\] again'
grep_out "a report after the refusals is stored" '^after: OK'
grep_out "one UUID on two devices is refused" \
    "^uuidtwice: INVALID_ARGUMENT devices\\[1\\]\\.uuid: 'GPU-3' is devices\\[0\\]'s too"
grep_out "a device index past a node's CUDA ordinals is refused" \
    '^bigindex: INVALID_ARGUMENT devices\[0\]\.index: 4096 is not a CUDA device ordinal'
grep_out "an SM count no GPU has is refused" \
    '^bigsm: INVALID_ARGUMENT devices\[0\]\.sm_count: 1048576 is more streaming'
grep_out "a negative SM count is refused" \
    '^negsm: INVALID_ARGUMENT devices\[0\]\.sm_count: 4294967295 is more streaming'
grep_out "index 63 with 108 SMs registers" '^goodsm: OK'
grep_out "a hostname with a newline is refused, shown escaped" \
    "^newline: INVALID_ARGUMENT hostname: 'node-b\\\\nINFO forged' must be 1 to 127 printable"

big=$("$PY" -c 'print("{\"model_type\": \"gpt2\", \"pad\": \"" + "x" * 100000 + "\"}")')
rpc plan --hf-config-text "$big" --cluster 4xA100-40G
expect "a 100 kB request over max_request_bytes=65536" code RESOURCE_EXHAUSTED
rpc health
expect "still serving after the oversized request" status SERVING
finish
