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
    --max-request-bytes 65536 --max-layers 40 --max-devices 16 --max-batch 1024
wait_healthy "$T" || { fail "tesseld did not become healthy"; finish; }

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
rpc plan "${QUICK[@]}" --batch 8
expect "a plan in bounds after the refusals" code OK

big=$("$PY" -c 'print("{\"model_type\": \"gpt2\", \"pad\": \"" + "x" * 100000 + "\"}")')
rpc plan --hf-config-text "$big" --cluster 4xA100-40G
expect "a 100 kB request over max_request_bytes=65536" code RESOURCE_EXHAUSTED
rpc health
expect "still serving after the oversized request" status SERVING
finish
