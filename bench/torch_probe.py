#!/usr/bin/env python3
"""torch_probe.py — three GPU probes for questions issue 18's accuracy work left open.

Outside the product (Tessel never needs PyTorch); torch and the standard library only,
and pynvml for the clock samples where it imports (else `nvidia-smi -lms 200`).
bench/published/README.md names the question each probe would settle:

1. sustained: back-to-back 8192^3 bf16 GEMMs (torch.mm) for 40 s (--quick; 60 s
   otherwise), then FP8 (torch._scaled_mm, per-tensor E4M3) for 20 s (60 s after a 30-s
   idle otherwise; skipped with its error where _scaled_mm refuses), on random data.
   Achieved TFLOP/s per 1-s window of GPU time (CUDA events around batches of ~0.1 s,
   two batches in flight so the GPU never idles), beside the SM clock, power,
   temperature and clock-event (throttle) reasons sampled every 200 ms. Prints the first
   second against the last 10 s ("Dense Llama rows", cost model 53 (c): e_max rests on
   MAMF's short sweeps; does a GPU at its power cap run slower after 30-60 s?). In
   --quick mode the FP8 loop follows the bf16 one with no pause, so its first second is
   a hot GPU's, not a burst.
2. grouped: host time per grouped-GEMM call for 4, 8, 16 and 32 local experts, forward
   and backward, torch._grouped_mm (one call, where torch has it) and a per-expert loop
   of torch.mm (one cuBLAS call per expert, as TE's multi-stream GroupedLinear issues),
   on tiny shapes (32 rows x 256 x 256 per expert: the GPU never the bottleneck) and
   large ones (2048 x 4096 x 1536, Qwen3-235B's expert). The GPU is idle when each timed
   call starts (synchronised before), so the host never waits on a full launch queue.
   Host time is time.process_time (the whole process: the backward's kernels are
   launched from autograd's device thread) and wall time; GPU time by CUDA events. The
   per-expert figure is the least-squares slope over the four expert counts ("MoE rows",
   issue 18 (d): does the host's time per grouped GEMM grow with local experts?).
3. memory: a torchtitan-like step (Llama 3.1 8B's shape: 32 layers of 4096 whose inputs
   are kept, full AC; each layer's recomputed tensors in the backward; the loss in
   train.py's order: bf16 logits, their fp32 copy, cross_entropy, `del pred`, backward
   over 128,256 words) at 32,768 tokens (halved until it fits 80 % of the free memory),
   two micro-steps (four without --quick), in a child process per allocator setting:
   PYTORCH_CUDA_ALLOC_CONF unset and expandable_segments:True. Prints
   torch.cuda.max_memory_allocated and max_memory_reserved for each ("torchtitan rows",
   third reading: the predicted expandable-segments hole, tokens x vocab x 2 B = 7.8 GiB
   at 32,768 tokens).

Refuses with exit 2 where PyTorch or a CUDA device is absent. Prints a table last;
--json FILE writes every figure (each window, each row, both allocator runs).

usage: python3 bench/torch_probe.py [--quick] [--json FILE]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time

# NVML clock-event reason bits (nvml.h, nvmlClocksEventReason*)
REASONS = {0x1: "idle", 0x2: "app-clocks", 0x4: "sw-power-cap", 0x8: "hw-slowdown",
           0x20: "sync-boost", 0x40: "sw-thermal", 0x80: "hw-thermal",
           0x100: "hw-power-brake", 0x200: "display-clocks"}
EXPERTS = [4, 8, 16, 32]
GROUPED_SHAPES = {"tiny": (32, 256, 256), "large": (2048, 4096, 1536)}  # rows/expert, K, N
LLAMA8B = {"hidden": 4096, "ffn": 14336, "layers": 32, "vocab": 128256}


def reason_names(mask):
    """The names of the bits set in an NVML clock-event reason mask (unknown bits in hex)."""
    rest = mask & ~sum(REASONS)
    return [n for bit, n in sorted(REASONS.items()) if mask & bit] + \
        ([hex(rest)] if rest else []) or ["none"]


def windows(batches, width=1.0):
    """Bin back-to-back batches [(gpu_s, flop), ...] into windows of `width` seconds of GPU
    time, each batch in the window of its midpoint: [(start_s, end_s, flop_per_s), ...]."""
    out, t = {}, 0.0
    for dt, flop in batches:
        k = int((t + dt / 2) // width)
        s, e, f = out.get(k, (t, t, 0.0))
        out[k] = (min(s, t), t + dt, f + flop)
        t += dt
    return [(s, e, f / (e - s)) for _, (s, e, f) in sorted(out.items()) if e > s]


def slope(xs, ys):
    """Least-squares slope of ys on xs (the per-expert increment)."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def refuse(why):
    print(f"torch_probe.py: refused: {why}; it measures a CUDA GPU and has nothing to "
          "measure here", file=sys.stderr)
    sys.exit(2)


class Sampler:
    """SM MHz, W, deg C and the reason mask every 200 ms on a thread: (host_s, mhz, w, c, mask)."""

    def __init__(self, index):
        self.rows, self.stop, self.how = [], threading.Event(), "none"
        try:
            import pynvml
            pynvml.nvmlInit()
            h = pynvml.nvmlDeviceGetHandleByIndex(index)
            why = getattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or \
                pynvml.nvmlDeviceGetCurrentClocksThrottleReasons
            self.read = lambda: (pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM),
                                 pynvml.nvmlDeviceGetPowerUsage(h) / 1e3,
                                 pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU),
                                 why(h))
            self.read()
            self.how = "pynvml"
        except Exception:  # no pynvml or no NVML: nvidia-smi, the field's old name then new
            for field in ("clocks_throttle_reasons.active", "clocks_event_reasons.active"):
                q = [f"--query-gpu=clocks.sm,power.draw,temperature.gpu,{field}", "-i", str(index),
                     "--format=csv,noheader,nounits"]
                try:
                    ok = subprocess.run(["nvidia-smi"] + q, capture_output=True).returncode == 0
                except OSError:
                    break
                if ok:
                    self.smi, self.how = ["nvidia-smi"] + q + ["-lms", "200"], "nvidia-smi"
                    break
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        if self.how == "pynvml":
            while not self.stop.wait(0.2):
                try:
                    self.rows.append((time.perf_counter(),) + tuple(self.read()))
                except Exception:  # a sample NVML could not read: a gap, not a failure
                    pass
        elif self.how == "nvidia-smi":
            p = subprocess.Popen(self.smi, stdout=subprocess.PIPE, text=True)
            for line in p.stdout:
                if self.stop.is_set():
                    break
                f = [x.strip() for x in line.split(",")]
                try:
                    self.rows.append((time.perf_counter(), float(f[0]), float(f[1]), float(f[2]),
                                      int(f[3], 16)))
                except (ValueError, IndexError):
                    pass
            p.terminate()

    def between(self, t0, t1):
        """Mean MHz and W, max deg C and the reasons seen in host time [t0, t1)."""
        r = [x for x in self.rows if t0 <= x[0] < t1]
        if not r:
            return {"samples": 0}
        mask = 0
        for x in r:
            mask |= x[4]
        return {"samples": len(r), "sm_mhz": statistics.fmean(x[1] for x in r),
                "power_w": statistics.fmean(x[2] for x in r), "temp_c": max(x[3] for x in r),
                "reasons": reason_names(mask)}

    def close(self):
        self.stop.set()
        self.thread.join(timeout=2)


def first_last(wins, tail=10.0):
    """From windows [(start_s, end_s, flop_per_s), ...]: the first window, and the
    windows ending in the last `tail` seconds of GPU time as one (start_s, end_s,
    flop_per_s) — their FLOPs over their span."""
    last = [w for w in wins if w[1] > wins[-1][1] - tail]
    flop = sum(r * (e - s) for s, e, r in last)
    return wins[0], (last[0][0], last[-1][1], flop / (last[-1][1] - last[0][0]))


def back_to_back(torch, fn, flop_per_call, seconds, sampler, batch_s=0.1):
    """fn() back to back for `seconds` of host time, in batches of ~batch_s of GPU time
    with two batches in flight (the GPU never idles): per-window rates beside the
    sampler's readings, the first second's and the last 10 s's. fn is warm (called
    before)."""
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
    ev[0].record()
    for _ in range(3):
        fn()
    ev[1].record()
    ev[1].synchronize()
    per = max(1, round(batch_s / (ev[0].elapsed_time(ev[1]) * 1e-3 / 3)))  # calls per batch
    flop = flop_per_call * per
    ev = [torch.cuda.Event(enable_timing=True)]
    ev[0].record()  # the GPU is idle: it starts the first batch now
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for _ in range(per):
            fn()
        ev.append(torch.cuda.Event(enable_timing=True))
        ev[-1].record()
        if len(ev) >= 3:
            ev[-3].synchronize()  # two batches stay queued: no gap between them
    torch.cuda.synchronize()
    batches = [(ev[i].elapsed_time(ev[i + 1]) * 1e-3, flop) for i in range(len(ev) - 1)]
    wins = windows(batches)
    rows = [dict(start_s=s, end_s=e, tflops=r / 1e12, **sampler.between(t0 + s, t0 + e))
            for s, e, r in wins]
    first, last = first_last(wins)
    return {"calls_per_batch": per, "seconds": seconds, "windows": rows,
            "first_s": dict(tflops=first[2] / 1e12, **sampler.between(t0, t0 + first[1])),
            "last_10s": dict(tflops=last[2] / 1e12,
                             **sampler.between(t0 + last[0], t0 + last[1]))}


def sustained(torch, kind, seconds, sampler, n=8192):
    """Back-to-back n^3 GEMMs of `kind` (bf16 or fp8) for `seconds` of host time: per-window
    rates and samples, the first second's and the last 10 s's."""
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    if kind == "bf16":
        c = torch.empty_like(a)
        gemm = lambda: torch.mm(a, b, out=c)  # noqa: E731
    else:  # per-tensor scaled E4M3, b column-major as _scaled_mm wants it
        a8, b8 = a.to(torch.float8_e4m3fn), b.t().contiguous().to(torch.float8_e4m3fn).t()
        one = torch.ones((), device="cuda", dtype=torch.float32)
        gemm = lambda: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one,  # noqa: E731
                                        out_dtype=torch.bfloat16)
    for _ in range(3):  # cuBLAS handle, heuristics, workspace
        gemm()
    torch.cuda.synchronize()
    r = back_to_back(torch, gemm, 2.0 * n ** 3, seconds, sampler)
    r["gemms_per_batch"] = r.pop("calls_per_batch")
    return dict(kind=kind, n=n, **r)


def host_us(torch, fn, iters, before=None):
    """Median host CPU and wall microseconds of one fn() that starts on an idle GPU."""
    cpu, wall = [], []
    for _ in range(iters):
        args = (before(),) if before else ()
        torch.cuda.synchronize()
        c, w = time.process_time(), time.perf_counter()
        fn(*args)
        cpu.append((time.process_time() - c) * 1e6)
        wall.append((time.perf_counter() - w) * 1e6)
    torch.cuda.synchronize()
    return statistics.median(cpu), statistics.median(wall)


def gpu_us(torch, fn, iters):
    """Microseconds of GPU time per fn() over `iters` back-to-back calls (CUDA events)."""
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(iters):
        fn()
    e1.record()
    e1.synchronize()
    return e0.elapsed_time(e1) * 1e3 / iters


def grouped_row(torch, impl, shape, experts, iters):
    m, k, n = GROUPED_SHAPES[shape]
    a = torch.randn(experts * m, k, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    dy = torch.randn(experts * m, n, device="cuda", dtype=torch.bfloat16)
    if impl == "grouped_mm":  # one (E, N, K) weight, as torchtitan's MoE holds it
        w = [torch.randn(experts, n, k, device="cuda", dtype=torch.bfloat16, requires_grad=True)]
        offs = torch.arange(1, experts + 1, device="cuda", dtype=torch.int32) * m
        fwd = lambda: torch._grouped_mm(a, w[0].transpose(-2, -1), offs=offs)  # noqa: E731
    else:  # a weight per expert, as TE's GroupedLinear registers weight{i}
        w = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16, requires_grad=True)
             for _ in range(experts)]
        fwd = lambda: torch.cat([x @ wi.t() for x, wi in zip(a.split(m), w)])  # noqa: E731

    def bwd(y):
        y.backward(dy)

    def fresh():  # a new graph, gradients cleared so that no accumulation kernel runs
        for t in [a] + w:
            t.grad = None
        return fwd()
    for _ in range(3):
        fresh().backward(dy)
    fc, fw = host_us(torch, fwd, iters)
    bc, bw = host_us(torch, bwd, iters, before=fresh)
    with torch.no_grad():
        fg = gpu_us(torch, fwd, iters)
    return {"impl": impl, "shape": shape, "rows_per_expert": m, "k": k, "n": n,
            "experts": experts, "fwd_host_cpu_us": fc, "fwd_host_wall_us": fw,
            "bwd_host_cpu_us": bc, "bwd_host_wall_us": bw, "fwd_gpu_us": fg}


def grouped(torch, iters):
    impls = ["loop"]
    if hasattr(torch, "_grouped_mm"):
        impls.insert(0, "grouped_mm")
    rows, errors, slopes = [], {}, []
    for impl in impls:
        for shape in GROUPED_SHAPES:
            try:
                got = [grouped_row(torch, impl, shape, e, iters[shape]) for e in EXPERTS]
            except (RuntimeError, ValueError, TypeError) as e:  # refused: this GPU, shape or torch
                errors[f"{impl}/{shape}"] = str(e).splitlines()[0]
                continue
            rows += got
            slopes.append({"impl": impl, "shape": shape, **{
                f"{key}_per_expert_us": slope(EXPERTS, [r[key + "_us"] for r in got])
                for key in ("fwd_host_cpu", "bwd_host_cpu", "fwd_gpu")}})
            torch.cuda.empty_cache()
    return {"rows": rows, "slopes": slopes, "errors": errors}


def mem_need_bytes(tokens, m=LLAMA8B):
    """What mem_child holds at most, about: 12 B per logit at the loss backward (README's
    reading) + its bf16 gradient + a predicted hole of 2 B, the kept layer inputs, one
    recomputed layer, the output weight and its gradient."""
    h, f, v = m["hidden"], m["ffn"], m["vocab"]
    return tokens * (16 * v + 2 * h * m["layers"] + 2 * (6 * h + h // 2 + 3 * f)) + 4 * v * h


def predicted_gap_gib(tokens, m=LLAMA8B):
    """The third reading's expandable-segments gap: of the hole the fp32 copy and the bf16
    logits leave (12 B per logit), the first fp32 gradient takes 4 B: the logits' 2 B per
    logit stay reserved beside the peak, tokens x vocab x 2 B."""
    return tokens * m["vocab"] * 2 / 2.0 ** 30


def mem_child(torch, tokens, steps, m=LLAMA8B):
    """One allocator setting (this process's PYTORCH_CUDA_ALLOC_CONF): peak allocated and
    reserved bytes over `steps` torchtitan-like micro-steps."""
    import torch.nn.functional as F
    h, f, v, bf = m["hidden"], m["ffn"], m["vocab"], torch.bfloat16
    recomputed = [h, h, h, h // 4, h // 4, h, h, h, f, f, f]  # norms, q k v, core, out, SwiGLU
    w = (torch.randn(v, h, device="cuda", dtype=bf) * 0.02).requires_grad_()
    labels = torch.randint(0, v, (tokens,), device="cuda")
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    oom = None
    try:
        for _ in range(steps):
            kept = []
            for _ in range(m["layers"]):  # full AC: each layer keeps its input
                kept.append(torch.empty(tokens, h, device="cuda", dtype=bf))
            x = torch.randn(tokens, h, device="cuda", dtype=bf, requires_grad=True)
            pred = x @ w.t()  # train.py's order: bf16 logits, fp32 copy, cross_entropy
            loss = F.cross_entropy(pred.float(), labels)
            del pred
            loss.backward()
            g = x.grad
            del x, loss
            while kept:  # each layer recomputed, its input's gradient, then all freed
                acts = [torch.empty(tokens, c, device="cuda", dtype=bf) for c in recomputed]
                g = torch.empty_like(g)
                acts.clear()
                kept.pop()
            w.grad = None
        torch.cuda.synchronize()
    except torch.cuda.OutOfMemoryError as e:
        oom = str(e).splitlines()[0]
    gib = 2.0 ** 30
    mx_a, mx_r = torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved()
    return {"alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""), "tokens": tokens,
            "steps": steps, "max_allocated_gib": mx_a / gib, "max_reserved_gib": mx_r / gib,
            "gap_gib": (mx_r - mx_a) / gib,
            "alloc_retries": torch.cuda.memory_stats().get("num_alloc_retries", 0), "oom": oom}


def memory(torch, steps):
    """mem_child in a fresh process per allocator setting (the setting is read once, at the
    first allocation), at the most tokens up to 32,768 that fit 80 % of the free memory."""
    free = torch.cuda.mem_get_info()[0]
    tokens = 32768
    while tokens > 1024 and mem_need_bytes(tokens) > 0.8 * free:
        tokens //= 2
    out = {"tokens": tokens, "free_gib": free / 2.0 ** 30,
           "predicted_gap_expandable_gib": predicted_gap_gib(tokens), "runs": []}
    for conf in ("", "expandable_segments:True"):
        env = {k: x for k, x in os.environ.items() if k != "PYTORCH_CUDA_ALLOC_CONF"}
        if conf:
            env["PYTORCH_CUDA_ALLOC_CONF"] = conf
        try:
            p = subprocess.run([sys.executable, os.path.abspath(__file__), "--mem-child",
                                "--mem-tokens", str(tokens), "--mem-steps", str(steps)],
                               env=env, capture_output=True, text=True, timeout=300)
            out["runs"].append(json.loads(p.stdout.strip().splitlines()[-1]))
        except (ValueError, IndexError):
            out["runs"].append({"alloc_conf": conf, "error": f"exit {p.returncode}: "
                                + (p.stderr.strip().splitlines() or [""])[-1]})
        except subprocess.TimeoutExpired:
            out["runs"].append({"alloc_conf": conf, "error": "no answer in 300 s"})
    return out


def nvml_index():
    """NVML's index of CUDA device 0: CUDA_VISIBLE_DEVICES's first entry where it is a
    number (both orders agree on a one-GPU machine, the lent one), else 0."""
    first = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0].strip()
    return int(first) if first.isdigit() else 0


def report(r):
    print(f"== torch_probe on {r['device']} (sm {r['sm']}), torch {r['torch']}, "
          f"clock samples: {r['sampler']}")
    print("-- 1. sustained 8192^3 GEMMs: first second of GPU time against the last 10 s")
    print("%-5s %9s %6s %6s %4s | %9s %6s %6s %4s | %5s  %s" % (
        "kind", "TFLOP/s", "MHz", "W", "C", "TFLOP/s", "MHz", "W", "C", "ratio", "reasons, last 10 s"))
    for s in r["sustained"]:
        if "error" in s:
            print(f"{s['kind']:<5} refused: {s['error']}")
            continue
        a, b = s["first_s"], s["last_10s"]
        cols = [x.get(k, float("nan")) for x in (a, b) for k in ("sm_mhz", "power_w", "temp_c")]
        print("%-5s %9.1f %6.0f %6.0f %4.0f | %9.1f %6.0f %6.0f %4.0f | %5.3f  %s" % (
            s["kind"], a["tflops"], *cols[:3], b["tflops"], *cols[3:], b["tflops"] / a["tflops"],
            ",".join(b.get("reasons", ["-"]))))
    g = r["grouped"]
    print("-- 2. host time per grouped-GEMM call, us (median; cpu = process time, gpu = events)")
    print("%-10s %-5s %7s %9s %9s %9s %9s %9s" % ("impl", "shape", "experts", "fwd cpu",
          "fwd wall", "fwd gpu", "bwd cpu", "bwd wall"))
    for x in g["rows"]:
        print("%-10s %-5s %7d %9.1f %9.1f %9.1f %9.1f %9.1f" % (
            x["impl"], x["shape"], x["experts"], x["fwd_host_cpu_us"], x["fwd_host_wall_us"],
            x["fwd_gpu_us"], x["bwd_host_cpu_us"], x["bwd_host_wall_us"]))
    for x in g["slopes"]:
        print("per expert (slope over %s): %-10s %-5s fwd cpu %.2f us, bwd cpu %.2f us, "
              "fwd gpu %.2f us" % (EXPERTS, x["impl"], x["shape"], x["fwd_host_cpu_per_expert_us"],
                                   x["bwd_host_cpu_per_expert_us"], x["fwd_gpu_per_expert_us"]))
    for k, e in g["errors"].items():
        print(f"{k}: refused: {e}")
    m = r["memory"]
    print(f"-- 3. peak memory of a torchtitan-like step, {m['tokens']} tokens x "
          f"{LLAMA8B['vocab']} words (predicted gap under expandable segments: "
          f"{m['predicted_gap_expandable_gib']:.2f} GiB)")
    for x in m["runs"]:
        conf = x["alloc_conf"] or "(default)"
        if "error" in x:
            print(f"{conf:<26} failed: {x['error']}")
        else:
            print("%-26s max allocated %7.2f GiB  max reserved %7.2f GiB  gap %6.2f GiB%s" % (
                conf, x["max_allocated_gib"], x["max_reserved_gib"], x["gap_gib"],
                f"  OOM: {x['oom']}" if x["oom"] else ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the GPU check's run (under 2 minutes)")
    ap.add_argument("--json", metavar="FILE", help="write every figure to FILE")
    ap.add_argument("--mem-child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--mem-tokens", type=int, default=32768, help=argparse.SUPPRESS)
    ap.add_argument("--mem-steps", type=int, default=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    try:
        import torch
    except ImportError as e:
        refuse(f"PyTorch does not import ({e})")
    if not torch.cuda.is_available():
        refuse(f"torch {torch.__version__} sees no CUDA device")
    if args.mem_child:
        print(json.dumps(mem_child(torch, args.mem_tokens, args.mem_steps)))
        return
    torch.manual_seed(0)
    p = torch.cuda.get_device_properties(0)
    r = {"device": p.name, "sm": f"{p.major}.{p.minor}", "torch": torch.__version__,
         "quick": args.quick, "sustained": []}
    sampler = Sampler(nvml_index())
    try:
        r["sustained"].append(sustained(torch, "bf16", 40 if args.quick else 60, sampler))
        torch.cuda.empty_cache()
        if not args.quick:
            time.sleep(30)  # let it cool, so that FP8's first second is a burst too
        try:
            r["sustained"].append(sustained(torch, "fp8", 20 if args.quick else 60, sampler))
        except (RuntimeError, ValueError, TypeError, AttributeError) as e:
            r["sustained"].append({"kind": "fp8", "error": str(e).splitlines()[0]})
    finally:
        sampler.close()
    r["sampler"] = sampler.how
    torch.cuda.empty_cache()
    r["grouped"] = grouped(torch, {"tiny": 30, "large": 10} if args.quick else
                           {"tiny": 200, "large": 40})
    torch.cuda.empty_cache()
    r["memory"] = memory(torch, 2 if args.quick else 4)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(r, f, indent=1)
    report(r)


if __name__ == "__main__":
    main()
