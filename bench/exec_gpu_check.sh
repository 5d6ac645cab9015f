#!/bin/sh
# GPU check of the stage executor and the profiler (docs/executor.md, "GPU check"),
# for a machine with NVIDIA GPUs, CUDA, cuBLAS and NCCL under CUDA_HOME (default
# /usr/local/cuda). Needs no gRPC, SQLite or jansson: builds the planner and
# worker/exec directly with gcc and nvcc, then
#   1. the cuda ops against the cpu ops on a small layer stack (forward loss and every
#      gradient within bf16 tolerance), a mixture-of-experts layer and a DeepSeek-like
#      one (latent attention, V3's router, a gated shared expert) in it, the MoE device
#      ops alone and the latent-attention and routing ops alone: tests/test_exec_cuda.c;
#   2. 1-GPU timings of GPT block stacks (with and without checkpointing; with a 50k
#      vocabulary, untied and tied with learned positions; fused and unfused attention
#      at seq 2048), of a Llama-like stack (SwiGLU, RMSNorm, no biases, 8 K/V heads),
#      of a Mixtral-like MoE stack (8 experts, top 2, EP 1) and of DeepSeek-like ones:
#      V2-Lite's shape (latent attention without a query latent, 64 experts top 6, 2
#      shared) and a V3-like one (a query latent, sigmoid router with a correction bias,
#      8 groups top 4, normalised, x 2.5);
#   3. with 2 or more GPUs: dp = all GPUs over NCCL, one process per GPU; then pp 2 on
#      two GPUs, plain and interleaved 1F1B (--interleave 2; it needs pp >= 2, so it
#      has no one-GPU row); then the MoE stack at dp = all GPUs, EP 1 and EP = all GPUs
#      (the dispatch and combine all-to-alls over NCCL), its loss printed beside the
#      one-GPU run's of the same global batch; the same for the V3-like latent-attention
#      stack at tp 2 (its latents' gradients all-reduced) and at dp = all GPUs, EP all.
#   4. the profiler (tessel-worker profile --backend cuda, built on the same device and
#      comm ops): a quick profile with the executor's fused attention (the default)
#      and one with --unfused-attn, each checked for its blocks and its notes, and the
#      attention rows of the two printed side by side; each starts with the soak (8192³
#      GEMMs in 1 s windows until five agree within 1 %, --quick's 15 s cap) and puts
#      ~20 ms of filler GEMMs before each figure: at most ~35 s more for the two, its
#      first and settled rates printed;
#   5. where PyTorch imports, bench/torch_blocks.py --quick: its GEMMs and blocks and
#      SDPA's core alone, forward and backward, causal and not, with the kernels it ran
#      (the H100 flash rate of docs/cost-model.md rests on these; its JSON in
#      $B/torch_blocks.json), and torch_gpt_step.py's unfused core kernel by kernel
#      beside matmul's q and k^T copies (the unfused rows' open remainder).
#   6. where PyTorch imports, bench/torch_probe.py --quick (under 2 minutes; its JSON in
#      $B/torch_probe.json), for three questions bench/published/README.md leaves open:
#      8192^3 bf16 and FP8 GEMMs back to back for 40 + 20 s, TFLOP/s per second beside
#      the SM clock, power, temperature and throttle reasons (the first second against
#      the last 10: does e_max's burst rate hold at the power cap?); the host time per
#      grouped-GEMM call (torch._grouped_mm and a per-expert torch.mm loop) at 4-32
#      local experts, forward and backward; and a torchtitan-like step's peak
#      allocated and reserved memory with PYTORCH_CUDA_ALLOC_CONF unset and
#      expandable_segments:True (the predicted 7.8 GiB gap at the loss).
#   7. where PyTorch imports, bench/cp_ring_probe.py --quick (under a minute; JSON in
#      $B/cp_ring_probe.json): after 5 s idle, the ring's unmasked step (flash forward +
#      backward) back to back for 20 s, per-second TFLOP/s beside clock, power and throttle
#      reasons (does attention settle as step 6's bf16 GEMM does? cost model 142 assumes
#      so); then the three flash kernels one rank of torch's ring attention
#      runs at the torchtitan-cp rows' shapes (32 heads x 128, 32,768 tokens per rank:
#      causal 32K x 32K, unmasked 32K x 16K and 16K x 32K), forward and backward, and one
#      step's fp32 merge, as seconds per ring step per iteration beside the rows' measured
#      4.48 s (CP 2) and 7.39 / 7.34 s (CP 4 / 8); then one rank's whole pass at CP 1, 2,
#      4, 8 (ranks 0 and c - 1; merges, fp32 accumulations and the gathered buffer as
#      torch's loop has them, the exchange left out) and its step per iteration against
#      CP 1 beside the same figures: constant in c says the rows' extra lies outside one
#      rank's work.
#   8. where PyTorch imports, bench/fsdp2_mem_probe.py --quick (minutes; JSON in
#      $B/fsdp2_mem_probe.json): a torchtitan FSDP2 step on Llama 3.1 8B as rank 0 of 8
#      over torch's fake process group, with PYTORCH_CUDA_ALLOC_CONF unset and
#      expandable_segments:True: the allocated, active and reserved peaks per step and
#      each CUDA stream's pool beside the predicted reduce-scatter and all-gather pools
#      (bench/published/README.md, "Memory against published runs", 2026-11-30).
# Usage: sh bench/exec_gpu_check.sh [build-dir]   (prints tables; exits non-zero only
# when the check in 1 fails or something does not build)
set -eu
cd "$(dirname "$0")/.."
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
B=${1:-build-exec-gpu}
ARCH=${ARCH:-"-gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_90,code=sm_90"}
mkdir -p "$B"
echo "== build (gcc + nvcc, no RPC stack) in $B"
"$CUDA_HOME/bin/nvcc" -c worker/exec/devops_cuda_kernels.cu -o "$B/kernels.o" -O3 -std=c++17 \
    -Xcompiler -fPIC -Iworker/exec -Iplanner $ARCH
# The executor's sources as worker/exec/meson.build lists them for a CUDA build (every
# .c named from `exec_sources = files(` to `exec_lib =`, less the no-CUDA stubs), so
# that this list cannot fall behind the library's.
EXEC=$(sed -n '/^exec_sources = files(/,/^exec_lib =/p' worker/exec/meson.build |
    grep -o "'[a-z_]*\.c'" | tr -d "'" | grep -vx 'devops_nocuda.c' | sed 's|^|worker/exec/|')
[ -n "$EXEC" ] || { echo "no exec_sources in worker/exec/meson.build" >&2; exit 1; }
SRC="planner/*.c $EXEC"
CFLAGS="-O2 -std=c11 -D_GNU_SOURCE -DTSL_HAVE_CUDA=1 -I$CUDA_HOME/include -Iplanner -Iworker/exec -Itests"
LIBS="$B/kernels.o -L$CUDA_HOME/lib64 -Wl,-rpath,$CUDA_HOME/lib64 -lcublas -lcublasLt -lcudart -lnccl -lstdc++ -lm -lpthread"
# shellcheck disable=SC2086
gcc $CFLAGS $SRC tests/test_exec_cuda.c $LIBS -o "$B/test_exec_cuda"
# shellcheck disable=SC2086
gcc $CFLAGS $SRC worker/exec/exec_run.c $LIBS -o "$B/tessel-exec-run"
# The profiler on the executor's ops: tessel-worker with the cuda backend only (no
# agent, no sim backend: those need gRPC and jansson).
PROF="worker/worker.c worker/profile/prof_backends.c worker/profile/prof_util.c worker/profile/prof_emit.c worker/profile/prof_soak.c
      worker/profile/prof_dev.c worker/profile/prof_coll.c worker/profile/prof_cuda.c"
# shellcheck disable=SC2086
gcc $CFLAGS -DTSL_HAVE_PROF_CUDA=1 -Iworker/profile $SRC $PROF $LIBS -o "$B/tessel-worker"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true

echo "== 1. cuda ops vs cpu ops (small layer stack, bf16 tolerance)"
"$B/test_exec_cuda"

# DeepSeek-V3's attention and router at a fifth of its width: 16 heads of 128 + 64 / 128,
# latents 1536 and 512; 64 experts of 512, top 8, in 8 groups (top 4), one shared.
MLA3="--llama --heads 16 --hidden 2048 --q-lora 1536 --kv-lora 512 --qk-nope 128 --qk-rope 64 --v-head 128 --ffn 512 --experts 64 --top-k 8 --shared-experts 1 --router sigmoid --router-bias --router-groups 8 --router-topk-groups 4 --norm-topk --routed-scale 2.5 --seq 2048 --layers 4"
echo "== 2. one GPU: GPT block stack, bf16, Adam (medians of 10 iterations after 3)"
printf '%-72s %s\n' "shape" "report"
for cfg in "--layers 8 --hidden 1024 --heads 16 --seq 1024 --mbs 8 --micro 2" \
           "--layers 8 --hidden 2048 --heads 16 --seq 1024 --mbs 4 --micro 2" \
           "--layers 8 --hidden 2048 --heads 16 --seq 1024 --mbs 4 --micro 2 --ckpt" \
           "--layers 4 --hidden 4096 --heads 32 --seq 2048 --mbs 1 --micro 4 --vocab 50304" \
           "--layers 4 --hidden 4096 --heads 32 --seq 2048 --mbs 1 --micro 4 --vocab 50304 --positions 2048 --tied" \
           "--layers 4 --hidden 4096 --heads 32 --seq 2048 --mbs 1 --micro 4 --vocab 50304 --unfused-attn" \
           "--llama --kv-heads 8 --heads 32 --hidden 4096 --ffn 11008 --seq 2048 --layers 4 --mbs 1 --micro 4" \
           "--llama --kv-heads 8 --heads 32 --hidden 2048 --ffn 2048 --experts 8 --top-k 2 --seq 2048 --layers 4 --mbs 1 --micro 4" \
           "--llama --heads 16 --hidden 2048 --kv-lora 512 --qk-nope 128 --qk-rope 64 --v-head 128 --ffn 1408 --experts 64 --top-k 6 --shared-experts 2 --seq 2048 --layers 4 --mbs 1 --micro 4" \
           "$MLA3 --mbs 1 --micro 4"; do
    # shellcheck disable=SC2086
    out=$("$B/tessel-exec-run" --devops cuda $cfg --warmup 3 --iters 10 2>&1 | tail -1)
    printf '%-72s %s\n' "$(echo "$cfg" | sed 's/--//g')" "$out"
done

n=$(nvidia-smi -L 2>/dev/null | wc -l)
if [ "$n" -ge 2 ]; then
    echo "== 3. $n GPUs: dp $n over NCCL (one process per GPU)"
    id="$B/nccl.id"
    rm -f "$id"
    r=0
    while [ "$r" -lt "$n" ]; do
        "$B/tessel-exec-run" --devops cuda --comm nccl --rank "$r" --device "$r" --nccl-id "$id" \
            --layers 8 --hidden 2048 --heads 16 --seq 1024 --mbs $((2 * n)) --micro 2 --dp "$n" \
            --warmup 3 --iters 10 &
        r=$((r + 1))
    done
    wait
    echo "== 3b. pp 2 over NCCL on GPUs 0 and 1: plain and interleaved 1F1B"
    for v in 1 2; do
        echo "-- interleave $v"
        rm -f "$id"
        for r in 0 1; do
            "$B/tessel-exec-run" --devops cuda --comm nccl --rank "$r" --device "$r" --nccl-id "$id" \
                --layers 8 --hidden 2048 --heads 16 --seq 1024 --mbs 4 --micro 8 --pp 2 \
                --interleave "$v" --warmup 3 --iters 10 &
        done
        wait
    done
    echo "== 3c. MoE over NCCL: dp $n at EP 1 and EP $n (sgd, same batch: compare the losses)"
    moe="--llama --kv-heads 8 --heads 16 --hidden 2048 --ffn 1024 --experts 8 --top-k 2 --seq 1024 --layers 4 --micro 2 --sgd --lr 0 --warmup 1 --iters 3"
    # shellcheck disable=SC2086
    echo "-- one GPU, mbs $n: $("$B/tessel-exec-run" --devops cuda $moe --mbs "$n" --json | tail -1)"
    for ep in 1 "$n"; do
        if [ $((8 % ep)) -ne 0 ]; then
            echo "-- ep $ep does not divide 8 experts: skipped"
            continue
        fi
        echo "-- dp $n ep $ep"
        rm -f "$id"
        r=0
        while [ "$r" -lt "$n" ]; do
            # shellcheck disable=SC2086
            "$B/tessel-exec-run" --devops cuda --comm nccl --rank "$r" --device "$r" --nccl-id "$id" \
                $moe --mbs "$n" --dp "$n" --ep "$ep" --json &
            r=$((r + 1))
        done
        wait
    done
    echo "== 3d. DeepSeek-V3-like latent attention + MoE over NCCL (sgd, same batch: compare the losses)"
    mla="$MLA3 --micro 2 --sgd --lr 0 --warmup 1 --iters 3"
    # shellcheck disable=SC2086
    echo "-- one GPU, mbs $n: $("$B/tessel-exec-run" --devops cuda $mla --mbs "$n" --json | tail -1)"
    for par in "--tp 2 --dp $((n / 2)) --ep $n" "--dp $n --ep $n"; do
        if [ $((n % 2)) -ne 0 ] || [ $((64 % n)) -ne 0 ]; then
            echo "-- $par: $n GPUs do not split it: skipped"
            continue
        fi
        echo "-- $par"
        rm -f "$id"
        r=0
        while [ "$r" -lt "$n" ]; do
            # shellcheck disable=SC2086
            "$B/tessel-exec-run" --devops cuda --comm nccl --rank "$r" --device "$r" --nccl-id "$id" \
                $mla --mbs "$n" $par --json &
            r=$((r + 1))
        done
        wait
    done
fi

echo "== 4. the profiler on the executor's ops: fused attention (default), then unfused"
for attn in fused unfused; do
    flag=""
    [ "$attn" = unfused ] && flag="--unfused-attn"
    # shellcheck disable=SC2086
    "$B/tessel-worker" profile --backend cuda --quick --shape h=2048,s=2048,a=16 --mb 1,4 --tp 1,2 \
        $flag --json --out "$B/profile-$attn.json"
    python3 - "$B/profile-$attn.json" "$attn" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["simulated"] is False and "): %s attention (" % sys.argv[2] in d["notes"], d["notes"]
assert all(x["attention_core"] == "executor-" + sys.argv[2] for x in d["blocks"] if x["block"] == "attention")
b = d["blocks"]
assert len(b) == 8 and all(x["fwd_s"] > 0 and x["bwd_s"] > 0 for x in b), len(b)
assert d["collectives"] and len(d["overlap"]) == 2, "collectives, overlap"
s = d["soak"]
assert s["max_s"] == 15 and s["windows"] >= 1, s
print("soak: %d windows, %.1f s, %s; first %.1f, settled %.1f TFLOP/s (spread %.2f %%)" % (
    s["windows"], s["seconds"], "settled" if s["settled"] else "capped", s["first_tflops"],
    s["settled_tflops"], 100 * s["spread"]))
PY
done
python3 - "$B/profile-fused.json" "$B/profile-unfused.json" <<'PY'
import json, sys
f, u = (json.load(open(p))["blocks"] for p in sys.argv[1:])
print("%-10s %4s %3s %12s %12s %12s %12s %10s %10s" % ("block", "mb", "tp", "fused fwd", "unfused fwd",
      "fused bwd", "unfused bwd", "fused MiB", "unfus MiB"))
for a, b in zip(f, u):
    if a["block"] != "attention":
        continue
    print("%-10s %4d %3d %10.3fms %10.3fms %10.3fms %10.3fms %10.0f %10.0f" % (a["block"], a["mb"], a["tp"],
          a["fwd_s"] * 1e3, b["fwd_s"] * 1e3, a["bwd_s"] * 1e3, b["bwd_s"] * 1e3,
          a["memory_bytes"] / 2**20, b["memory_bytes"] / 2**20))
PY

echo "== 5. PyTorch on the same shapes: GEMMs, blocks, SDPA's core alone (bench/torch_blocks.py)"
if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
    python3 bench/torch_blocks.py --quick --json "$B/torch_blocks.json" || echo "torch_blocks.py failed (not part of the check)"
else
    echo "no PyTorch with CUDA here: skipped"
fi

echo "== 6. PyTorch probes: sustained GEMM rate, grouped-GEMM host time, allocator peaks (bench/torch_probe.py)"
if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
    python3 bench/torch_probe.py --quick --json "$B/torch_probe.json" || echo "torch_probe.py failed (not part of the check)"
else
    echo "no PyTorch with CUDA here: skipped"
fi

echo "== 7. PyTorch: one rank's ring-attention kernels at the torchtitan-cp shapes (bench/cp_ring_probe.py)"
if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
    python3 bench/cp_ring_probe.py --quick --json "$B/cp_ring_probe.json" || echo "cp_ring_probe.py failed (not part of the check)"
else
    echo "no PyTorch with CUDA here: skipped"
fi

echo "== 8. PyTorch: FSDP2's allocator pools, stream by stream (bench/fsdp2_mem_probe.py)"
if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
    python3 bench/fsdp2_mem_probe.py --quick --json "$B/fsdp2_mem_probe.json" || echo "fsdp2_mem_probe.py failed (not part of the check)"
else
    echo "no PyTorch with CUDA here: skipped"
fi
