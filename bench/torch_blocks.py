#!/usr/bin/env python3
"""torch_blocks.py — PyTorch side-by-side for `tessel-worker profile --backend cuda`.

Times, with torch (outside the product: Tessel never needs PyTorch), the same
bf16 shapes the cuda backend times: the forward GEMMs of the attention and FFN
blocks (torch.matmul), the attention core both unfused (QK^T, softmax, PV:
the profiler's "batched-gemm" path) and fused (scaled_dot_product_attention,
whatever kernel torch picks: flash / cuDNN / efficient), and whole blocks
forward + backward through autograd; and the fused core alone, forward and
backward, causal and not, with the kernels it ran (SDPA_CORES: the flash rate of
docs/cost-model.md rests on these shapes); and bench/torch_gpt_step.py's unfused core
alone (autocast, its mask, masked_fill, the fp32 softmax by casts) forward and backward
with each kernel's time, beside torch.matmul's copies of the strided q and k^T
(bench/published/README.md "tessel-h100 rows": the per-op count and what is left).
Median of N runs timed with CUDA events after warm-up, on random data.

usage: python3 bench/torch_blocks.py [--quick] [--json FILE]
"""
import argparse
import json
import math
import statistics

import torch
import torch.nn.functional as F

SHAPES = [(1024, 1024, 16), (2048, 1024, 32)]   # (h, s, a): GPT2-345M, GPT2-1.3B
# (batch, heads, s, head dim): the GPT-2 blocks above at micro-batch 16, and Llama 3.1
# 8B's core at 8K (torchtitan's rows) and 32K (its CP 1 row)
SDPA_CORES = [(16, 16, 1024, 64), (16, 32, 1024, 64), (1, 32, 8192, 128), (1, 32, 32768, 128)]


def bench(fn, warmup=3, iters=10):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e-3)
    return statistics.median(times)


def rnd(*shape, grad=False):
    t = torch.rand(*shape, device="cuda", dtype=torch.bfloat16) * 2 - 1
    return t.requires_grad_(grad)


def cuda_kernels(fn):
    """The names of the CUDA kernels one call of fn runs."""
    acts = [torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        fn()
        torch.cuda.synchronize()
    return sorted({e.name[:80] for e in prof.events()
                   if e.device_type == torch.autograd.DeviceType.CUDA})


def kernel_times(fn):
    """Each CUDA kernel one call of fn runs: [name, launches, total us], dearest first."""
    acts = [torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        fn()
        torch.cuda.synchronize()
    tot = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            n, t = tot.get(e.name[:80], (0, 0.0))
            tot[e.name[:80]] = (n + 1, t + e.time_range.elapsed_us())
    return sorted(([k, n, t] for k, (n, t) in tot.items()), key=lambda x: -x[2])


def unfused_core_rows(quick):
    """torch_gpt_step.py's unfused core on the permuted views of a leaf (b, s, 3h) qkv,
    as its Block writes it, forward and backward (from a kept graph), kernel by kernel;
    and matmul's reshape copies of the strided q (rows of hd contiguous) and k^T (a
    transposing copy: 2-byte reads 3h apart), 4 bytes per element each as priced."""
    rows = []
    for (b, a, s, dh) in SDPA_CORES[:1] if quick else SDPA_CORES[:2]:
        h = a * dh
        qkv = rnd(b, s, 3 * h, grad=True)

        def fwd():
            q, k, v = qkv.view(b, s, 3, a, dh).permute(2, 0, 3, 1, 4)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                mask = torch.ones(s, s, dtype=torch.bool, device="cuda").triu(1)
                sc = (q @ k.transpose(-1, -2)) / math.sqrt(dh)
                return torch.softmax(sc.masked_fill(mask, float("-inf")), dim=-1) @ v
        out = fwd()
        g = torch.rand_like(out)

        def bwd():
            torch.autograd.grad(out, (qkv,), g, retain_graph=True)
        q, k, _ = qkv.detach().view(b, s, 3, a, dh).permute(2, 0, 3, 1, 4)
        rows.append(dict(what="unfused core", b=b, heads=a, s=s, dh=dh, scores=b * a * s * s,
                         fwd_s=bench(fwd), bwd_s=bench(bwd),
                         q_copy_s=bench(lambda: q.reshape(b * a, s, dh)),
                         kT_copy_s=bench(lambda: k.transpose(-1, -2).reshape(b * a, dh, s)),
                         copy_bytes=4 * b * s * h,
                         kernels_fwd=kernel_times(fwd), kernels_bwd=kernel_times(bwd)))
        del qkv, out, g, q, k
        torch.cuda.empty_cache()
    return rows


def sdpa_core_rows(quick):
    """SDPA's forward and backward alone on leaf q, k, v: no projection, no indexing,
    no .grad accumulation beside the kernel (the backward is timed from a kept graph)."""
    rows = []
    for (b, a, s, dh) in SDPA_CORES[:2] if quick else SDPA_CORES:
        for causal in (False, True):
            q, k, v = (rnd(b, a, s, dh, grad=True) for _ in range(3))
            fwd = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            out = fwd()
            g = torch.rand_like(out)

            def bwd():
                torch.autograd.grad(out, (q, k, v), g, retain_graph=True)
            flops = 4 * b * a * s * s * dh  # unmasked: QK^T and PV; backward 2.5x
            rows.append(dict(what="sdpa core", b=b, heads=a, s=s, dh=dh, causal=causal,
                             fwd_s=bench(fwd), bwd_s=bench(bwd), fwd_flops=flops,
                             bwd_flops=2.5 * flops, kernels_fwd=cuda_kernels(fwd),
                             kernels_bwd=cuda_kernels(bwd)))
            del q, k, v, out, g
            torch.cuda.empty_cache()
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json")
    args = ap.parse_args()
    mbs = [1, 4, 16]
    tps = [1, 4]
    rows = []
    dev = torch.cuda.get_device_name(0)
    print(f"device: {dev}, torch {torch.__version__}, CUDA {torch.version.cuda}")
    for m in (8192, 4096):
        A, B = rnd(m, m), rnd(m, m)
        t = bench(lambda: A @ B)
        rows.append(dict(what=f"reference {m}^3", time_s=t, tflops=2 * m**3 / t / 1e12))
    for (h, s, a) in SHAPES:
        dh = h // a
        f = 4 * h
        for tp in tps:
            for mb in mbs:
                T, al, fl = mb * s, a // tp, f // tp
                d = al * dh
                x = rnd(T, h)
                wqkv, wo, w1, w2 = rnd(h, 3 * d), rnd(d, h), rnd(h, fl), rnd(fl, h)
                q, k, v = rnd(mb, al, s, dh), rnd(mb, al, s, dh), rnd(mb, al, s, dh)
                ctx = rnd(T, d)
                u = rnd(T, fl)
                gemms = {
                    "qkv": (lambda: x @ wqkv, 2 * T * h * 3 * d),
                    "qk^T": (lambda: q @ k.transpose(-1, -2), 2 * mb * al * s * s * dh),
                    "attn-out": (lambda: ctx @ wo, 2 * T * d * h),
                    "ffn-up": (lambda: x @ w1, 2 * T * h * fl),
                    "ffn-down": (lambda: u @ w2, 2 * T * fl * h),
                }
                r = dict(h=h, s=s, a=a, mb=mb, tp=tp)
                for name, (fn, fl_) in gemms.items():
                    t = bench(fn)
                    r[name + "_tflops"] = fl_ / t / 1e12
                scale = 1.0 / dh**0.5

                def unfused():
                    p = torch.softmax((q @ k.transpose(-1, -2)) * scale, dim=-1)
                    return p @ v

                core_flops = 4 * mb * al * s * s * dh
                r["core_unfused_s"] = bench(unfused)
                r["core_sdpa_s"] = bench(lambda: F.scaled_dot_product_attention(q, k, v))
                r["core_flops"] = core_flops

                # whole blocks, forward and backward through autograd
                xg = rnd(T, h, grad=True)
                Wqkv, Wo = rnd(h, 3 * d, grad=True), rnd(d, h, grad=True)
                W1, W2 = rnd(h, fl, grad=True), rnd(fl, h, grad=True)

                def attn_fwd(fused):
                    qkv = (xg @ Wqkv).view(mb, s, 3, al, dh).permute(2, 0, 3, 1, 4)
                    if fused:
                        c = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2])
                    else:
                        p = torch.softmax((qkv[0] @ qkv[1].transpose(-1, -2)) * scale, dim=-1)
                        c = p @ qkv[2]
                    return c.permute(0, 2, 1, 3).reshape(T, d) @ Wo

                def ffn_fwd():
                    return F.gelu(xg @ W1, approximate="tanh") @ W2

                for name, fwd in (("attn_unfused", lambda: attn_fwd(False)),
                                  ("attn_sdpa", lambda: attn_fwd(True)), ("ffn", ffn_fwd)):
                    r[name + "_fwd_s"] = bench(lambda: fwd())
                    out = fwd()
                    gy = torch.rand_like(out)

                    def fb():
                        y = fwd()
                        y.backward(gy)
                    r[name + "_fwdbwd_s"] = bench(fb)
                    r[name + "_bwd_s"] = r[name + "_fwdbwd_s"] - r[name + "_fwd_s"]
                rows.append(r)
                del x, wqkv, wo, w1, w2, q, k, v, ctx, u, xg, Wqkv, Wo, W1, W2
                torch.cuda.empty_cache()
    cores = sdpa_core_rows(args.quick)
    for r in cores:
        print(f"sdpa core b {r['b']} heads {r['heads']} s {r['s']} dh {r['dh']}"
              f" causal {int(r['causal'])}: fwd {r['fwd_s']*1e6:.1f} us"
              f" ({r['fwd_flops']/r['fwd_s']/1e12:.0f} TFLOP/s unmasked),"
              f" bwd {r['bwd_s']*1e6:.1f} us ({r['bwd_flops']/r['bwd_s']/1e12:.0f});"
              f" kernels {r['kernels_fwd'][:2]} / {r['kernels_bwd'][:3]}")
    rows += cores
    unfused = unfused_core_rows(args.quick)
    for r in unfused:
        print(f"unfused core b {r['b']} heads {r['heads']} s {r['s']} dh {r['dh']}:"
              f" fwd {r['fwd_s']*1e6:.1f} us, bwd {r['bwd_s']*1e6:.1f} us"
              f" ({r['scores']} scores); copies q {r['q_copy_s']*1e6:.1f} us,"
              f" k^T {r['kT_copy_s']*1e6:.1f} us ({r['copy_bytes']/1e6:.0f} MB each)")
        for k, n, t in r["kernels_fwd"] + r["kernels_bwd"]:
            print(f"    {t:9.1f} us  x{n:<3} {k}")
    rows += unfused
    print(f"{'h':>5} {'mb':>3} {'tp':>3} {'qkv':>6} {'qkT':>6} {'out':>6} {'up':>6} {'down':>6}"
          f" {'core-unf':>9} {'core-sdpa':>9} {'attn f/b unf':>14} {'attn f/b sdpa':>14}"
          f" {'ffn f/b':>14}   (TFLOP/s; times us)")
    for r in rows:
        if r.get("what") in ("sdpa core", "unfused core"):
            continue
        if "h" not in r:
            print(f"{r['what']}: {r['tflops']:.1f} TFLOP/s ({r['time_s']*1e6:.1f} us)")
            continue
        print(f"{r['h']:>5} {r['mb']:>3} {r['tp']:>3} {r['qkv_tflops']:6.0f} {r['qk^T_tflops']:6.0f}"
              f" {r['attn-out_tflops']:6.0f} {r['ffn-up_tflops']:6.0f} {r['ffn-down_tflops']:6.0f}"
              f" {r['core_unfused_s']*1e6:9.1f} {r['core_sdpa_s']*1e6:9.1f}"
              f" {r['attn_unfused_fwd_s']*1e6:6.0f}/{r['attn_unfused_bwd_s']*1e6:<7.0f}"
              f" {r['attn_sdpa_fwd_s']*1e6:6.0f}/{r['attn_sdpa_bwd_s']*1e6:<7.0f}"
              f" {r['ffn_fwd_s']*1e6:6.0f}/{r['ffn_bwd_s']*1e6:<7.0f}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(dict(device=dev, torch=torch.__version__, rows=rows), fh, indent=1)


if __name__ == "__main__":
    main()
