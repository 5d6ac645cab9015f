#!/usr/bin/env python3
"""torch_block_stack.py — PyTorch reference for one bench/accuracy plan.

The same GPT block stack the stage executor runs for that plan (worker/exec:
LayerNorm, QKV, causal attention core (unfused; --fused: PyTorch's
scaled_dot_product_attention), output projection, LayerNorm, FFN 4h with GeLU,
residuals, biases; no embedding or head; MSE loss on the output), on one GPU: bf16 autocast over fp32 master weights, fused AdamW,
`--micro` micro-batches of `--mbs` samples accumulated per step, per-block
checkpointing with `--ckpt`. Median step time of --iters steps after --warmup,
timed with CUDA events; peak memory from torch.cuda.max_memory_allocated.
Prints one JSON object: {"iter_s": ..., "peak_bytes": ...} or {"oom": true}.
Outside the product: Tessel never needs PyTorch.

usage: python3 bench/torch_block_stack.py --layers L --hidden H --heads A
         --seq S --mbs B --micro M [--ckpt] [--fused] [--warmup W] [--iters N]
"""
import argparse
import json
import os
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_gpt_step import Block  # noqa: E402  (the same block the GPT step times)


def step(blocks, opt, args):
    for _ in range(args.micro):
        x = torch.randn(args.mbs, args.seq, args.hidden, device="cuda", requires_grad=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            y = x
            for b in blocks:
                y = checkpoint(b, y, use_reentrant=False) if args.ckpt else b(y)
            loss = F.mse_loss(y.float(), torch.zeros_like(y, dtype=torch.float32))
        (loss / args.micro).backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


def main():
    ap = argparse.ArgumentParser()
    for k in ("layers", "hidden", "heads", "seq", "mbs", "micro"):
        ap.add_argument("--" + k, type=int, required=True)
    ap.add_argument("--ckpt", action="store_true")
    ap.add_argument("--fused", action="store_true", help="scaled_dot_product_attention")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--iters", type=int, default=5)
    args = ap.parse_args()
    torch.manual_seed(1)
    try:
        blocks = torch.nn.ModuleList(
            Block(args.hidden, args.heads, args.fused) for _ in range(args.layers)).cuda()
        opt = torch.optim.AdamW(blocks.parameters(), lr=1e-4, fused=True)
        for _ in range(args.warmup):
            step(blocks, opt, args)
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        times = []
        for _ in range(args.iters):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            step(blocks, opt, args)
            b.record()
            torch.cuda.synchronize()
            times.append(a.elapsed_time(b) / 1e3)
        print(json.dumps({"iter_s": statistics.median(times),
                          "peak_bytes": torch.cuda.max_memory_allocated()}))
    except torch.cuda.OutOfMemoryError:
        print(json.dumps({"oom": True}))


if __name__ == "__main__":
    main()
