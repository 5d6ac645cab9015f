#!/bin/sh
# GPU check of the stage executor (issue 9), for a machine with NVIDIA GPUs, CUDA,
# cuBLAS and NCCL under CUDA_HOME (default /usr/local/cuda). Needs no gRPC, SQLite or
# jansson: builds the planner and worker/exec directly with gcc and nvcc, then
#   1. the cuda ops against the cpu ops on a small layer stack (forward loss and every
#      gradient within bf16 tolerance): tests/test_exec_cuda.c;
#   2. a 1-GPU timing of a GPT block stack (with and without checkpointing);
#   3. with 2 or more GPUs: dp = all GPUs over NCCL, one process per GPU.
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
SRC="planner/*.c worker/exec/devops.c worker/exec/devops_mem.c worker/exec/devops_cpu.c worker/exec/comm_host.c worker/exec/comm_tcp.c
     worker/exec/exec_rank.c worker/exec/exec_layer.c worker/exec/exec_attn.c worker/exec/exec_vocab.c worker/exec/exec_engine.c
     worker/exec/exec_step.c worker/exec/exec_phase.c worker/exec/exec_layout.c worker/exec/exec_relayout.c worker/exec/devops_cuda.c worker/exec/comm_nccl.c"
CFLAGS="-O2 -std=c11 -D_GNU_SOURCE -DTSL_HAVE_CUDA=1 -I$CUDA_HOME/include -Iplanner -Iworker/exec -Itests"
LIBS="$B/kernels.o -L$CUDA_HOME/lib64 -Wl,-rpath,$CUDA_HOME/lib64 -lcublas -lcudart -lnccl -lstdc++ -lm -lpthread"
# shellcheck disable=SC2086
gcc $CFLAGS $SRC tests/test_exec_cuda.c $LIBS -o "$B/test_exec_cuda"
# shellcheck disable=SC2086
gcc $CFLAGS $SRC worker/exec/exec_run.c $LIBS -o "$B/tessel-exec-run"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true

echo "== 1. cuda ops vs cpu ops (small layer stack, bf16 tolerance)"
"$B/test_exec_cuda"

echo "== 2. one GPU: GPT block stack, bf16, Adam (medians of 10 iterations after 3)"
printf '%-44s %s\n' "shape" "report"
for cfg in "--layers 8 --hidden 1024 --heads 16 --seq 1024 --mbs 8 --micro 2" \
           "--layers 8 --hidden 2048 --heads 16 --seq 1024 --mbs 4 --micro 2" \
           "--layers 8 --hidden 2048 --heads 16 --seq 1024 --mbs 4 --micro 2 --ckpt" \
           "--layers 4 --hidden 4096 --heads 32 --seq 2048 --mbs 1 --micro 4 --vocab 50304"; do
    # shellcheck disable=SC2086
    out=$("$B/tessel-exec-run" --devops cuda $cfg --warmup 3 --iters 10 2>&1 | tail -1)
    printf '%-44s %s\n' "$(echo "$cfg" | sed 's/--//g')" "$out"
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
fi
