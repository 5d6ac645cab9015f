#!/usr/bin/env python3
"""torch_gpt_step.py — what a real training step costs, to check a plan against.

Trains GPT2-345M and GPT2-1.3B shapes (planner/model_presets.c: 24 layers,
h 1024/16 heads and h 2048/32 heads, s 1024, vocab 50257, tied head) with
PyTorch on one GPU: bf16 autocast, fp32 master weights and AdamW (the cost
model's 16 bytes per parameter), global batch 16 split into m micro-batches
(gradient accumulation), for m in 1, 2, 4, 8, 16, with the attention core
unfused (QK^T, softmax, PV: what tessel-worker times) and fused
(scaled_dot_product_attention). Median of 3 steps after one warm-up, timed
with CUDA events; out-of-memory is reported as such. Outside the product:
Tessel never needs PyTorch.

usage: python3 bench/torch_gpt_step.py [--json FILE] [--models 345M,1.3B]
"""
import argparse
import json
import math
import statistics

import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPES = {"345M": (24, 1024, 16), "1.3B": (24, 2048, 32)}
SEQ, VOCAB, BATCH = 1024, 50257, 16


class Block(nn.Module):
    def __init__(self, h, a, fused):
        super().__init__()
        self.h, self.a, self.fused = h, a, fused
        self.ln1, self.ln2 = nn.LayerNorm(h), nn.LayerNorm(h)
        self.qkv, self.proj = nn.Linear(h, 3 * h), nn.Linear(h, h)
        self.fc1, self.fc2 = nn.Linear(h, 4 * h), nn.Linear(4 * h, h)

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, self.a, h // self.a).permute(2, 0, 3, 1, 4)
        if self.fused:
            c = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            mask = torch.ones(s, s, dtype=torch.bool, device=x.device).triu(1)
            sc = (q @ k.transpose(-1, -2)) / math.sqrt(h // self.a)
            c = torch.softmax(sc.masked_fill(mask, float("-inf")), dim=-1) @ v
        x = x + self.proj(c.transpose(1, 2).reshape(b, s, h))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, layers, h, a, fused):
        super().__init__()
        self.tok, self.pos = nn.Embedding(VOCAB, h), nn.Embedding(SEQ, h)
        self.blocks = nn.ModuleList(Block(h, a, fused) for _ in range(layers))
        self.ln = nn.LayerNorm(h)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for b in self.blocks:
            x = b(x)
        return self.ln(x) @ self.tok.weight.t()


def step_time(name, fused, m):
    layers, h, a = SHAPES[name]
    torch.manual_seed(0)
    model = GPT(layers, h, a, fused).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    mb = BATCH // m
    data = torch.randint(0, VOCAB, (BATCH, SEQ + 1), device="cuda")

    def step():
        for i in range(m):
            chunk = data[i * mb:(i + 1) * mb]
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(chunk[:, :-1])
                loss = F.cross_entropy(logits.float().view(-1, VOCAB), chunk[:, 1:].reshape(-1))
            (loss / m).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    try:
        torch.cuda.reset_peak_memory_stats()
        step()
        torch.cuda.synchronize()
        ts = []
        for _ in range(3):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            step()
            e1.record()
            e1.synchronize()
            ts.append(e0.elapsed_time(e1) * 1e-3)
        return statistics.median(ts), torch.cuda.max_memory_allocated()
    except torch.OutOfMemoryError:
        return None, None
    finally:
        del model, opt
        torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--models", default="345M,1.3B")
    args = ap.parse_args()
    rows = []
    print(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}; global batch {BATCH}, seq {SEQ}")
    print(f"{'model':>6} {'attention':>10} {'m':>3} {'mb':>3} {'s/step':>9} {'samples/s':>10} {'peak GiB':>9}")
    for name in args.models.split(","):
        for fused in (False, True):
            for m in (1, 2, 4, 8, 16):
                t, mem = step_time(name, fused, m)
                r = dict(model=name, attention="sdpa" if fused else "unfused", m=m, mb=BATCH // m,
                         step_s=t, samples_per_s=BATCH / t if t else None,
                         peak_bytes=mem)
                rows.append(r)
                if t is None:
                    print(f"{name:>6} {r['attention']:>10} {m:>3} {BATCH // m:>3}   out of memory")
                else:
                    print(f"{name:>6} {r['attention']:>10} {m:>3} {BATCH // m:>3} {t:9.4f} "
                          f"{BATCH / t:10.2f} {mem / 2**30:9.1f}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(device=torch.cuda.get_device_name(0), rows=rows), f, indent=1)


if __name__ == "__main__":
    main()
