#!/usr/bin/env python3
"""cp_ring_probe.py — one rank's ring-attention kernels at the torchtitan-cp rows' shapes.

Outside the product (Tessel never needs PyTorch); torch and the standard library only.
bench/published/README.md ("torchtitan rows", the fourth reading) leaves open why a
ring step of torch's context parallelism costs 4.48 s per iteration at CP 2 but 7.39 /
7.34 s at CP 4 / 8 in Table 2 of torchtitan's December 2024 benchmark, while torch's loop
(`torch/distributed/tensor/experimental/_attention.py`) runs the same kernels at every
CP degree: each rank holds 2L = 32,768 tokens (L = 16,384), 32 heads of 128 after
torchtitan's repeat_kv, and runs per pass

  step 0        one causal 2L x 2L flash kernel (as CP 1's one kernel),
  step i <= r   2L queries x the source's first chunk, L keys, unmasked ("kv_half"),
  step i > r    the second query chunk, L queries x 2L keys, unmasked ("q_half"),

each step's output merged in fp32 (`_SDPAMerger`). This probe times those three flash
kernels on one GPU the way the ring calls them (aten._scaled_dot_product_flash_attention
and its backward, q a transposed view as torchtitan's, K/V made contiguous as the ring
does), forward and backward, and the eager merge of one step, and prints each ring step
per iteration (32 layers x (forward + full AC's recomputed forward + backward)) beside
the rows' measured steps. A step near CP 2's 4.48 s says CP 2 ran the kernels' physics
and CP 4 / 8 paid ~2.9 s per step for something outside one rank's kernels; a step near
7.3 s says the opposite. One GPU cannot run the ring's exchange: that part stays open.

Refuses with exit 2 where PyTorch or a CUDA device is absent. --json FILE writes every
figure.

usage: python3 bench/cp_ring_probe.py [--quick] [--json FILE]
"""
import argparse
import json
import statistics
import sys

HEADS, HEAD_DIM, L, LAYERS = 32, 128, 16384, 32
# torchtitan benchmarks/llama3_h100_202412_torchtitan.md, Table 2: seconds per
# iteration = 32,768 tokens per GPU / TPS per GPU at CP 1, 2, 4, 8
MEASURED_S = {1: 32768 / 3890, 2: 32768 / 2540, 4: 32768 / 1071, 8: 32768 / 548}
KINDS = {"causal": (2 * L, 2 * L, True), "kv_half": (2 * L, L, False),
         "q_half": (L, 2 * L, False)}  # queries, keys, causal


def measured_steps(t=MEASURED_S):
    """Seconds per unmasked ring step per iteration, from each CP row against CP 1."""
    return {c: (t[c] - t[1]) / (c - 1) for c in (2, 4, 8)}


def kernel_flop(q, k, causal, heads=HEADS, d=HEAD_DIM):
    """Forward FLOPs of one flash call: 4·d per visited (query, key) pair per head."""
    pairs = q * (q + 1) // 2 if causal else q * k
    return 4 * d * pairs * heads


def per_iteration_s(fwd_ms, bwd_ms, merge_ms=0.0, layers=LAYERS):
    """One ring step over an iteration under full AC: forward, recompute, backward."""
    return layers * (2 * (fwd_ms + merge_ms) + bwd_ms) / 1e3


def refuse(why):
    print(f"cp_ring_probe.py refused: {why}", file=sys.stderr)
    sys.exit(2)


def gpu_ms(torch, fn, reps, warm=2):
    for _ in range(warm):
        fn()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def inputs(torch, nq, nk):
    """q as torchtitan's xq.transpose(1, 2) (b, s, h, d underneath); K/V contiguous
    (b, h, s, d), as the ring's key.contiguous() and its gathered buffer leave them."""
    dev, dt = "cuda", torch.bfloat16
    q = torch.randn(1, 2 * L, HEADS, HEAD_DIM, device=dev, dtype=dt).transpose(1, 2)
    if nq == L:
        q = q.chunk(2, dim=2)[1]  # the ring's query.chunk(2, dim=2)[1]
    k = torch.randn(1, HEADS, 2 * L, HEAD_DIM, device=dev, dtype=dt)
    v = torch.randn_like(k)
    if nk == L:
        k, v = k.chunk(2, dim=2)[0], v.chunk(2, dim=2)[0]  # key.chunk(2, dim=2)[0]
    return q, k, v


def time_kind(torch, kind, reps):
    nq, nk, causal = KINDS[kind]
    aten = torch.ops.aten
    q, k, v = inputs(torch, nq, nk)
    fwd = lambda: aten._scaled_dot_product_flash_attention(q, k, v, 0.0, causal)
    r = fwd()
    out, lse = r[0], r[1]
    dout = torch.randn_like(out)
    bwd = lambda: aten._scaled_dot_product_flash_attention_backward(
        dout, q, k, v, out, lse, r[2], r[3], r[4], r[5], 0.0, causal, r[6], r[7])
    f, b = gpu_ms(torch, fwd, reps), gpu_ms(torch, bwd, reps)
    flop = kernel_flop(nq, nk, causal)
    return {"kind": kind, "queries": nq, "keys": nk, "causal": causal, "fwd_ms": f,
            "bwd_ms": b, "fwd_tflops": flop / f / 1e9, "bwd_tflops": 2.5 * flop / b / 1e9}


def time_merge(torch, reps):
    """One later step's _SDPAMerger.step, eager: the block's bf16 output and lse to fp32,
    out - sigmoid(lse_b - lse)·(out - out_b), lse - logsigmoid(lse - lse_b)."""
    dev = "cuda"
    out = torch.randn(1, HEADS, 2 * L, HEAD_DIM, device=dev)
    lse = torch.randn(1, HEADS, 2 * L, 1, device=dev)
    blk = torch.randn(1, 2 * L, HEADS, HEAD_DIM, device=dev, dtype=torch.bfloat16).transpose(1, 2)
    blse = torch.randn(1, HEADS, 2 * L, device=dev)

    def merge():
        b, bl = blk.to(torch.float32), blse.to(torch.float32).unsqueeze(-1)
        o = out - torch.sigmoid(bl - lse) * (out - b)
        return o, lse - torch.nn.functional.logsigmoid(lse - bl)
    return gpu_ms(torch, merge, reps)


def report(r):
    print(f"== cp_ring_probe on {r['device']} (sm {r['sm']}), torch {r['torch']}: "
          f"{HEADS} heads x {HEAD_DIM}, L = {L}, {LAYERS} layers")
    print("%-8s %7s %6s %6s %9s %9s %9s %9s %10s" % (
        "kind", "queries", "keys", "causal", "fwd ms", "bwd ms", "fwd TF/s", "bwd TF/s",
        "s / iter"))
    for x in r["kinds"]:
        print("%-8s %7d %6d %6s %9.2f %9.2f %9.1f %9.1f %10.2f" % (
            x["kind"], x["queries"], x["keys"], x["causal"], x["fwd_ms"], x["bwd_ms"],
            x["fwd_tflops"], x["bwd_tflops"], x["per_iteration_s"]))
    print(f"merge of one step (eager, fp32): {r['merge_ms']:.2f} ms")
    print("one unmasked ring step per iteration (the slower kind, its merge included): "
          f"{r['step_s']:.2f} s; measured (Table 2, against CP 1): " +
          ", ".join(f"CP {c} {s:.2f} s" for c, s in sorted(r["measured_step_s"].items())))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the GPU check's run (fewer repeats)")
    ap.add_argument("--json", metavar="FILE", help="write every figure to FILE")
    args = ap.parse_args()
    try:
        import torch
    except ImportError as e:
        refuse(f"PyTorch does not import ({e})")
    if not torch.cuda.is_available():
        refuse(f"torch {torch.__version__} sees no CUDA device")
    reps = 5 if args.quick else 20
    p = torch.cuda.get_device_properties(0)
    r = {"device": p.name, "sm": f"{p.major}.{p.minor}", "torch": torch.__version__,
         "kinds": [], "measured_step_s": measured_steps()}
    with torch.no_grad():
        r["merge_ms"] = time_merge(torch, reps)
        for kind in KINDS:
            x = time_kind(torch, kind, reps)
            merge = r["merge_ms"] if kind != "causal" else 0.0
            x["per_iteration_s"] = per_iteration_s(x["fwd_ms"], x["bwd_ms"], merge)
            r["kinds"].append(x)
            torch.cuda.empty_cache()
    r["step_s"] = max(x["per_iteration_s"] for x in r["kinds"] if x["kind"] != "causal")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(r, f, indent=1)
    report(r)


if __name__ == "__main__":
    main()
