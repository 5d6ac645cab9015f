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

It then runs one rank's whole pass at CP 1, 2, 4 and 8 back to back, for rank 0 and rank
c - 1 (the two ends of the step-kind mix), everything torch's loop does on one rank but
the exchange: the forward's c calls on chunks of a freshly written c x 2L K/V buffer
(the all-gather's output, written by a copy of the same bytes), each merged in fp32
with the partial-chunk rebuild where the step takes the second query half; the
backward's c calls with dQ, dK, dV accumulated in fp32, the neighbour's dK/dV stood in
for by this rank's own send buffer, and the fp32 send buffer built at every step. Its
per-step figure, (t_c - t_1) / (c - 1) per iteration, sits beside the rows' 4.48 /
7.39 / 7.34 s: constant in c on one GPU says CP 4 / 8's extra ~2.9 s a step lies
outside one rank's work (the exchange, the eight GPUs together, the run); growing with
c says one rank's pass itself (its buffers, its allocator, its clocks) grows.

First, after a pause of --pause seconds (5 with --quick, 30 otherwise) that lets the GPU
cool from whatever ran before, it runs the unmasked step the CP rows repeat (kv_half,
forward then backward) back to back for --sustain seconds (20 with --quick, 60
otherwise; 0 skips it): TFLOP/s per 1-s window of GPU time beside the SM clock, power,
temperature and throttle reasons (torch_probe.py's sampler and loop), the first second
against the last 10 s. Cost model 142 priced every Hopper attention kernel at the
settled / burst ratio of a bf16 GEMM (gemm_eff.h TSL_ATTN_GH100_SETTLED, 0.842, "Assumed:
the fused core loses at that clock what a GEMM loses"); this ratio beside torch_probe.py's
bf16 GEMM ratio on the same GPU tests that assumption, and says whether FlashAttention-2
runs slower the longer it runs unbroken (bench/published/README.md, "torchtitan-cp at
cost model 150": CP 2's ring step at the kernels' burst rate, CP 4's and 8's kernels at
0.57 / 0.70 × the capped rate).

Refuses with exit 2 where PyTorch or a CUDA device is absent. --json FILE writes every
figure.

usage: python3 bench/cp_ring_probe.py [--quick] [--sustain SECONDS] [--pause SECONDS]
                                      [--json FILE]
"""
import argparse
import json
import os
import statistics
import sys
import time

HEADS, HEAD_DIM, L, LAYERS = 32, 128, 16384, 32
# torchtitan benchmarks/llama3_h100_202412_torchtitan.md, Table 2: seconds per
# iteration = 32,768 tokens per GPU / TPS per GPU at CP 1, 2, 4, 8
MEASURED_S = {1: 32768 / 3890, 2: 32768 / 2540, 4: 32768 / 1071, 8: 32768 / 548}
KINDS = {"causal": (2 * L, 2 * L, True), "kv_half": (2 * L, L, False),
         "q_half": (L, 2 * L, False)}  # queries, keys, causal


def measured_steps(t=MEASURED_S):
    """Seconds per unmasked ring step per iteration, from each CP row against CP 1."""
    return {c: (t[c] - t[1]) / (c - 1) for c in (2, 4, 8)}


def ring_plan(c, rank):
    """The kind of each step one rank runs in a pass of torch's load-balanced ring at CP
    c: step 0 the causal diagonal, then per step i the source's first K/V chunk under
    both query chunks while i <= rank, else the second query chunk under both of the
    source's chunks (_templated_ring_attention). CP 1 is the one causal kernel."""
    if not 0 <= rank < c:
        raise ValueError(f"rank {rank} is not in a ring of {c}")
    return ["causal"] + ["kv_half" if i <= rank else "q_half" for i in range(1, c)]


def step_s(pass_s):
    """Seconds per unmasked step per iteration, each CP degree against CP 1, from
    {c: seconds per iteration} (the same reading as measured_steps)."""
    return {c: (pass_s[c] - pass_s[1]) / (c - 1) for c in sorted(pass_s) if c > 1}


def kernel_flop(q, k, causal, heads=HEADS, d=HEAD_DIM):
    """Forward FLOPs of one flash call: 4·d per visited (query, key) pair per head."""
    pairs = q * (q + 1) // 2 if causal else q * k
    return 4 * d * pairs * heads


def unit_flop():
    """FLOPs of one sustained unit: the kv_half kernel forward and its backward, counted
    as 2.5 x the forward's (as the kinds' bwd TFLOP/s and Tessel count them)."""
    return 3.5 * kernel_flop(*KINDS["kv_half"])


def sustain_settings(quick, sustain=None, pause=None):
    """(seconds of back-to-back steps, seconds of pause before them): 20 and 5 with
    --quick, 60 and 30 otherwise, each replaced where given; negative is an error."""
    s = (20.0 if quick else 60.0) if sustain is None else float(sustain)
    w = (5.0 if quick else 30.0) if pause is None else float(pause)
    if s < 0 or w < 0:
        raise ValueError(f"--sustain and --pause take seconds >= 0, not {s:g} and {w:g}")
    return s, w


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


def sustain_step(torch, seconds, sampler):
    """The unmasked ring step (kv_half: 2L queries x L keys, forward then backward, as
    the ring calls them) back to back for `seconds`: torch_probe.back_to_back's windows,
    first second and last 10 s."""
    import torch_probe
    aten = torch.ops.aten
    q, k, v = inputs(torch, *KINDS["kv_half"][:2])
    r = aten._scaled_dot_product_flash_attention(q, k, v, 0.0, False)
    dout = torch.randn_like(r[0])

    def unit():
        f = aten._scaled_dot_product_flash_attention(q, k, v, 0.0, False)
        aten._scaled_dot_product_flash_attention_backward(
            dout, q, k, v, f[0], f[1], f[2], f[3], f[4], f[5], 0.0, False, f[6], f[7])
    unit()
    torch.cuda.synchronize()
    return dict(kind="kv_half", **torch_probe.back_to_back(torch, unit, unit_flop(), seconds,
                                                          sampler))


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


def one_pass(torch, c, rank, kv_src):
    """Returns (forward, backward) closures running one rank's pass at CP c (ring_plan)
    on one GPU, the exchange left out; kv_src holds c ranks' K and V (bf16, 32 heads).
    CP 1 is torch without a CP context: the one causal kernel and its backward."""
    aten, f32, bf16 = torch.ops.aten, torch.float32, torch.bfloat16
    plan = ring_plan(c, rank)
    shape = (1, HEADS, 2 * L, HEAD_DIM)
    n = HEADS * 2 * L * HEAD_DIM

    def seq_major():  # (b, h, s, d) over (b, s, h, d) memory, as torchtitan's q and dout
        return torch.randn(1, 2 * L, HEADS, HEAD_DIM, device="cuda", dtype=bf16).transpose(1, 2)

    q, dout = seq_major(), seq_major()
    state = {}

    def kv_of(buf, j):
        """Rank j's K and V as views of a gathered buffer (c blocks of K then V)."""
        blk = buf[j * 2 * n:(j + 1) * 2 * n]
        return blk[:n].view(shape), blk[n:].view(shape)

    def operands(kind, k, v):
        if kind == "kv_half":
            return q, k.chunk(2, dim=2)[0], v.chunk(2, dim=2)[0], False
        if kind == "q_half":
            return q.chunk(2, dim=2)[1], k, v, True
        return q, k, v, False

    def merge(out, lse, o, l, second):
        """fp32 merge of one step's (o, l) into (out, lse): the stable form torch's
        merger uses, on the second query half alone where the step ran only that half,
        the whole rebuilt by concatenation as torch does."""
        o, l = o.to(f32), l.to(f32).unsqueeze(-1)
        if out is None:
            return o, l
        a, b = (out.chunk(2, dim=2)[1], lse.chunk(2, dim=2)[1]) if second else (out, lse)
        a = a - torch.sigmoid(l - b) * (a - o)
        b = b - torch.nn.functional.logsigmoid(b - l)
        if not second:
            return a, b
        return (torch.cat([out.chunk(2, dim=2)[0], a], dim=2),
                torch.cat([lse.chunk(2, dim=2)[0], b], dim=2))

    def forward():
        if c == 1:
            state[0] = aten._scaled_dot_product_flash_attention(q, kv_src[:n].view(shape),
                                                                kv_src[n:2 * n].view(shape),
                                                                0.0, True)
            return state[0][0]
        gathered = kv_src[:c * 2 * n].clone()  # the all-gather's output, written afresh
        out = lse = None
        for i, kind in enumerate(plan):
            qq, kk, vv, second = operands(kind, *kv_of(gathered, (rank - i) % c))
            r = aten._scaled_dot_product_flash_attention(qq, kk, vv, 0.0, kind == "causal")
            out, lse = merge(out, lse, r[0], r[1], second)
            state[i] = r
        state["out"], state["lse"] = out.to(bf16), lse.squeeze(-1)
        return state["out"]

    def flash_bwd(r, g_out, qq, kk, vv, out, lse, causal):
        return aten._scaled_dot_product_flash_attention_backward(
            g_out, qq, kk, vv, out, lse, r[2], r[3], r[4], r[5], 0.0, causal, r[6], r[7])

    def backward():
        if c == 1:
            r = state[0]
            return flash_bwd(r, dout, q, kv_src[:n].view(shape), kv_src[n:2 * n].view(shape),
                             r[0], r[1], True)
        gathered = kv_src[:c * 2 * n].clone()  # the backward's gather again
        out, lse = state["out"], state["lse"]
        dq = torch.zeros(shape, device="cuda", dtype=f32)
        dk, dv = torch.zeros_like(dq), torch.zeros_like(dq)
        send = None
        for i, kind in enumerate(plan):
            qq, kk, vv, second = operands(kind, *kv_of(gathered, (rank - i) % c))
            if second:  # the second query half's output, gradient and lse, as torch slices
                o, go = out.chunk(2, dim=2)[1], dout.chunk(2, dim=2)[1]
                ls = lse.chunk(2, dim=2)[1].contiguous()
            else:
                o, go, ls = out, dout, lse
            g = flash_bwd(state[i], go, qq, kk, vv, o, ls, kind == "causal")
            if i > 0:  # the neighbour's dK/dV in fp32: here this rank's own send buffer
                dk, dv = send[:n].view(shape), send[n:].view(shape)
            if kind == "kv_half":
                dk = torch.cat([dk.chunk(2, dim=2)[0] + g[1], dk.chunk(2, dim=2)[1]], dim=2)
                dv = torch.cat([dv.chunk(2, dim=2)[0] + g[2], dv.chunk(2, dim=2)[1]], dim=2)
            else:
                dk, dv = dk + g[1], dv + g[2]
            send = torch.cat([dk.flatten(), dv.flatten()])
            if kind == "q_half":
                dq = torch.cat([dq.chunk(2, dim=2)[0], dq.chunk(2, dim=2)[1] + g[0]], dim=2)
            else:
                dq = dq + g[0]
        return dq.to(bf16), send.to(bf16)

    return forward, backward


def time_passes(torch, reps, degrees=(1, 2, 4, 8)):
    """One rank's pass at each CP degree, rank 0 and rank c - 1: forward and backward ms
    and seconds per iteration (32 layers, forward twice under full AC)."""
    n = HEADS * 2 * L * HEAD_DIM
    kv_src = torch.randn(max(degrees) * 2 * n, device="cuda", dtype=torch.bfloat16)
    rows = []
    for c in degrees:
        for rank in sorted({0, c - 1}):
            fwd, bwd = one_pass(torch, c, rank, kv_src)
            f = gpu_ms(torch, fwd, reps, warm=1)
            b = gpu_ms(torch, bwd, reps, warm=1)
            rows.append({"cp": c, "rank": rank, "steps": ring_plan(c, rank), "fwd_ms": f,
                         "bwd_ms": b, "per_iteration_s": per_iteration_s(f, b)})
            del fwd, bwd
            torch.cuda.empty_cache()
    slowest = {c: max(x["per_iteration_s"] for x in rows if x["cp"] == c) for c in degrees}
    return rows, slowest


def report_sustained(x):
    a, b = x["first_s"], x["last_10s"]
    cols = [y.get(k, float("nan")) for y in (a, b) for k in ("sm_mhz", "power_w", "temp_c")]
    print(f"sustained ring step ({x['kind']} forward + backward, {x['seconds']:g} s back to "
          "back): first second against the last 10 s")
    print("%9s %6s %6s %4s | %9s %6s %6s %4s | %5s  %s" % (
        "TFLOP/s", "MHz", "W", "C", "TFLOP/s", "MHz", "W", "C", "ratio", "reasons, last 10 s"))
    print("%9.1f %6.0f %6.0f %4.0f | %9.1f %6.0f %6.0f %4.0f | %5.3f  %s" % (
        a["tflops"], *cols[:3], b["tflops"], *cols[3:], b["tflops"] / a["tflops"],
        ",".join(b.get("reasons", ["-"]))))
    print("(cost model 142 prices attention at the bf16 GEMM's settled ratio, 0.842: "
          "compare torch_probe.py's bf16 row on this GPU)")


def report(r):
    print(f"== cp_ring_probe on {r['device']} (sm {r['sm']}), torch {r['torch']}: "
          f"{HEADS} heads x {HEAD_DIM}, L = {L}, {LAYERS} layers")
    if r.get("sustained"):
        report_sustained(r["sustained"])
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
    if not r.get("passes"):
        return
    print("one rank's whole pass, the exchange left out (32 layers: 2 forwards + backward)")
    print("%-4s %-5s %10s %10s %10s  %s" % ("cp", "rank", "fwd ms", "bwd ms", "s / iter",
                                            "steps"))
    for x in r["passes"]:
        print("%-4d %-5d %10.1f %10.1f %10.2f  %s" % (
            x["cp"], x["rank"], x["fwd_ms"], x["bwd_ms"], x["per_iteration_s"],
            " ".join(x["steps"])))
    print("per unmasked step against CP 1 (the slower rank): " +
          ", ".join(f"CP {c} {s:.2f} s" for c, s in sorted(r["pass_step_s"].items())) +
          "; measured " +
          ", ".join(f"CP {c} {s:.2f} s" for c, s in sorted(r["measured_step_s"].items())))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the GPU check's run (fewer repeats)")
    ap.add_argument("--sustain", type=float, metavar="SECONDS",
                    help="seconds of the unmasked step back to back (default 20 with "
                         "--quick, 60 otherwise; 0: skip)")
    ap.add_argument("--pause", type=float, metavar="SECONDS",
                    help="idle seconds before the sustained run (default 5 with --quick, "
                         "30 otherwise)")
    ap.add_argument("--json", metavar="FILE", help="write every figure to FILE")
    args = ap.parse_args()
    try:
        sustain_s, pause_s = sustain_settings(args.quick, args.sustain, args.pause)
    except ValueError as e:
        ap.error(str(e))
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
    if sustain_s > 0:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # torch_probe
        import torch_probe
        time.sleep(pause_s)
        sampler = torch_probe.Sampler(torch_probe.nvml_index())
        try:
            with torch.no_grad():
                r["sustained"] = sustain_step(torch, sustain_s, sampler)
        finally:
            sampler.close()
        r["sustained"]["sampler"], r["sustained"]["pause_s"] = sampler.how, pause_s
        torch.cuda.empty_cache()
    with torch.no_grad():
        r["merge_ms"] = time_merge(torch, reps)
        for kind in KINDS:
            x = time_kind(torch, kind, reps)
            merge = r["merge_ms"] if kind != "causal" else 0.0
            x["per_iteration_s"] = per_iteration_s(x["fwd_ms"], x["bwd_ms"], merge)
            r["kinds"].append(x)
            torch.cuda.empty_cache()
    r["step_s"] = max(x["per_iteration_s"] for x in r["kinds"] if x["kind"] != "causal")
    with torch.no_grad():
        r["passes"], slowest = time_passes(torch, 2 if args.quick else 5)
    r["pass_s"] = slowest
    r["pass_step_s"] = step_s(slowest)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(r, f, indent=1)
    report(r)


if __name__ == "__main__":
    main()
