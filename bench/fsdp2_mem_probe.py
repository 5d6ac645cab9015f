#!/usr/bin/env python3
"""fsdp2_mem_probe.py — what PyTorch's caching allocator reserves beyond the allocated peak
under FSDP2, stream by stream (bench/published/README.md, "Memory against published runs",
the reading of 2026-11-30).

Outside the product (Tessel never needs PyTorch; not a meson test: it needs a CUDA GPU);
torch and the standard library only. The question it settles: Tessel prices allocated
bytes, torchtitan publishes `max_reserved` (the allocator's reserved peak), and the
torchtitan rows sit 6-29 GiB above Tessel's figure. The caching allocator keeps a freed
block for the stream that allocated it ("Allocations are associated with a stream. Once
freed, blocks can be re-allocated on the same stream, but not on any other stream",
c10/cuda/CUDACachingAllocator.cpp's header; one expandable segment per (pool, stream)
pair under expandable_segments), and FSDP2 allocates its flat all-gather output on the
all-gather copy-in stream and its flat reduce-scatter input and output (the sharded
gradients) on the reduce-scatter stream (torch/distributed/_composable/fsdp/
_fsdp_collectives.py, foreach_all_gather and foreach_reduce_scatter). Those pools stay
reserved while the default stream reaches its own peak (the loss backward), so the reading
predicts reserved - allocated >= both side pools: the sharded fp32 gradients (freed by
zero_grad before the forward) and the largest FSDP unit's flat reduce-scatter input, and
that unit's flat all-gather output: torchtitan's root unit (tok_embeddings + norm +
output, one `fully_shard(model)`), 4 B + 2 B per parameter with reduce_dtype fp32 and
param_dtype bf16. Of that, Tessel's figure (which counts the gradients) lacks the unit's
buffers alone: 5.87 GiB at Llama 3.1 8B whatever the FSDP degree (9.61 GiB in all at 8).

What it runs: a torchtitan-like step (torchtitan 9dec370 train.py's order: zero_grad,
forward, cross_entropy(pred.flatten(0, 1).float(), labels), `del pred`, backward,
clip_grad_norm_, AdamW with foreach) on a Llama-3.1-8B-shaped model (GQA attention through
SDPA, complex RoPE, SwiGLU, RMSNorm; every block its own fully_shard, the last one not
resharded after forward, then fully_shard of the whole model; MixedPrecisionPolicy bf16
params, fp32 reduce; full activation checkpointing by checkpoint_wrapper, or none).
Per step: the allocated, active and reserved peaks (torch.cuda.memory_stats) and the
allocator retries; after the last step, each stream's reserved and allocated bytes from
torch.cuda.memory_snapshot(), the streams named from FSDP2's comm context where torch
exposes it. Each stream's reserved bytes at the step's end are its high-water mark: the
allocator unmaps nothing without empty_cache() or an allocation retry.

Two ways to run it:
  * one GPU (the default): rank 0 of --world ranks (8) over torch's fake process group
    (torch.testing._internal.distributed.fake_pg, the one torchtitan's
    scripts/estimate/estimation.py uses at 9dec370): every buffer real and sized as on
    rank 0 of 8 GPUs, no collective run; in one child process per allocator setting,
    PYTORCH_CUDA_ALLOC_CONF unset and expandable_segments:True (the setting is read once,
    at the first allocation; torchtitan's run_llama_train.sh sets the second);
        python3 bench/fsdp2_mem_probe.py [--quick] [--json FILE] [--world 8] [--layers 32]
  * several GPUs under torchrun (NCCL, real collectives; the allocator setting is the
    launcher's): each figure the maximum over the ranks, as torchtitan's benchmark takes
    it ("We take the maximum across all GPUs");
        PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \\
          torchrun --nproc_per_node=8 bench/fsdp2_mem_probe.py --child [--json FILE]

Refuses with exit 2 where PyTorch or a CUDA device is absent. --quick: 3 steps (else 5).
"""
import argparse
import json
import os
import subprocess
import sys

GIB = 2.0 ** 30
LLAMA8B = {"hidden": 4096, "heads": 32, "kv_heads": 8, "ffn": 14336, "layers": 32,
           "vocab": 128256, "seq": 8192, "batch": 2}
CONFS = ("", "expandable_segments:True")


def block_params(m):
    """One transformer block's parameters: q and out projections h x h, k and v
    h x (h / heads x kv_heads), the SwiGLU's three h x ffn, two RMSNorm weights."""
    h, kv = m["hidden"], m["hidden"] // m["heads"] * m["kv_heads"]
    return 2 * h * h + 2 * h * kv + 3 * h * m["ffn"] + 2 * h


def root_params(m):
    """torchtitan's root FSDP unit: tok_embeddings, the final norm and the output head
    (untied), all under the one fully_shard(model)."""
    return 2 * m["vocab"] * m["hidden"] + m["hidden"]


def predicted(m, world, reduce_bytes=4, gather_bytes=2):
    """The reading's figures, bytes, on one rank of `world` (dim-0 padding ignored):
    each side stream's pool at its high-water mark (the reduce-scatter pool: the sharded
    gradients, its output, and the largest unit's flat input; the all-gather copy-in
    pool: that unit's flat output); what the allocated peak does not hold of them (both
    pools whole: zero_grad frees the gradients before the forward, and the peak is the
    loss backward's); and what Tessel's figure lacks (it counts the gradients: the
    largest unit's flat buffers alone)."""
    unit = max(root_params(m), block_params(m))
    total = m["layers"] * block_params(m) + root_params(m)
    grads = reduce_bytes * total // world  # the sharded fp32 gradients: the RS output
    rs, ag = grads + reduce_bytes * unit, gather_bytes * unit
    return {"unit_params": unit, "total_params": total, "reduce_scatter_pool": rs,
            "all_gather_pool": ag, "beyond_allocated": rs + ag,
            "beyond_tessel": (reduce_bytes + gather_bytes) * unit}


def by_stream(segments, names):
    """torch.cuda.memory_snapshot()'s segments summed per stream: {name: {reserved,
    allocated, active}} in bytes; a stream not in `names` (id -> name) by its id."""
    out = {}
    for s in segments:
        key = names.get(s.get("stream", 0), "stream 0x%x" % s.get("stream", 0))
        row = out.setdefault(key, {"reserved": 0, "allocated": 0, "active": 0})
        row["reserved"] += s.get("total_size", 0)
        row["allocated"] += s.get("allocated_size", 0)
        row["active"] += s.get("active_size", 0)
    return out


def refuse(why):
    print(f"fsdp2_mem_probe.py: refused: {why}; it measures a CUDA GPU and has nothing to "
          "measure here", file=sys.stderr)
    sys.exit(2)


def build_model(torch, m, n_layers, seq, ac):
    """The Llama-shaped model on the meta device (sharded before it is materialised)."""
    import torch.nn as nn
    import torch.nn.functional as F

    class RMSNorm(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(d))

        def forward(self, x):  # torchtitan's eager RMSNorm: in fp32, back to x's dtype
            xf = x.float()
            y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)
            return y.type_as(x) * self.weight

    def rope(x, freqs):  # pairs of channels as complex numbers, rotated in fp32
        xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
        return torch.view_as_real(xc * freqs).flatten(3).type_as(x)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            h, hd = m["hidden"], m["hidden"] // m["heads"]
            self.hd, self.nh, self.nkv = hd, m["heads"], m["kv_heads"]
            self.attention_norm, self.ffn_norm = RMSNorm(h), RMSNorm(h)
            self.wq = nn.Linear(h, self.nh * hd, bias=False)
            self.wk = nn.Linear(h, self.nkv * hd, bias=False)
            self.wv = nn.Linear(h, self.nkv * hd, bias=False)
            self.wo = nn.Linear(self.nh * hd, h, bias=False)
            self.w1 = nn.Linear(h, m["ffn"], bias=False)
            self.w2 = nn.Linear(m["ffn"], h, bias=False)
            self.w3 = nn.Linear(h, m["ffn"], bias=False)

        def forward(self, x, freqs):
            b, s, _ = x.shape
            y = self.attention_norm(x)
            q = rope(self.wq(y).view(b, s, self.nh, self.hd), freqs)
            k = rope(self.wk(y).view(b, s, self.nkv, self.hd), freqs)
            v = self.wv(y).view(b, s, self.nkv, self.hd)
            rep = self.nh // self.nkv  # GQA's heads repeated before SDPA, as torchtitan does
            k = k.repeat_interleave(rep, dim=2)
            v = v.repeat_interleave(rep, dim=2)
            o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                               v.transpose(1, 2), is_causal=True)
            x = x + self.wo(o.transpose(1, 2).reshape(b, s, -1))
            y = self.ffn_norm(x)
            return x + self.w2(F.silu(self.w1(y)) * self.w3(y))

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok_embeddings = nn.Embedding(m["vocab"], m["hidden"])
            self.layers = nn.ModuleDict({str(i): Block() for i in range(n_layers)})
            self.norm = RMSNorm(m["hidden"])
            self.output = nn.Linear(m["hidden"], m["vocab"], bias=False)

        def forward(self, tokens, freqs):
            x = self.tok_embeddings(tokens)
            for layer in self.layers.values():
                x = layer(x, freqs)
            return self.output(self.norm(x))

    with torch.device("meta"):
        model = Model()
    if ac == "full":
        from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper
        for k in list(model.layers.keys()):
            model.layers[k] = checkpoint_wrapper(model.layers[k], preserve_rng_state=False)
    hd = m["hidden"] // m["heads"]
    inv = 1.0 / (500000.0 ** (torch.arange(0, hd, 2, device="cuda").float() / hd))
    ang = torch.outer(torch.arange(seq, device="cuda").float(), inv)
    freqs = torch.polar(torch.ones_like(ang), ang).view(1, seq, 1, hd // 2)
    return model, freqs


def fsdp_api(torch):
    try:
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    except ImportError:  # torch before 2.6
        from torch.distributed._composable.fsdp import MixedPrecisionPolicy, fully_shard
    return fully_shard, MixedPrecisionPolicy


def stream_names(torch, model):
    """FSDP2's side streams by id (its root state's comm context; a private attribute,
    so a torch that moved it leaves the streams named by id)."""
    names = {torch.cuda.default_stream().cuda_stream: "default",
             torch.cuda.current_stream().cuda_stream: "default"}
    try:
        ctx = model._get_fsdp_state()._comm_ctx
        for attr in ("all_gather_copy_in_stream", "all_gather_stream", "reduce_scatter_stream",
                     "all_reduce_stream"):
            s = getattr(ctx, attr, None)
            if s is not None:
                names.setdefault(s.cuda_stream, attr.replace("_stream", ""))
    except AttributeError:
        pass
    return names


def child(torch, args):
    """One process: the model sharded over `world` ranks, `steps` steps; its figures."""
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    import torch.nn.functional as F
    real = "RANK" in os.environ
    if real:
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)))
        dist.init_process_group("nccl")
    else:
        from torch.testing._internal.distributed.fake_pg import FakeStore
        torch.cuda.set_device(0)  # estimation.py's order: the device, then the fake group
        dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=args.world)
    world = dist.get_world_size()
    m = dict(LLAMA8B)
    mesh = init_device_mesh("cuda", (world,))
    fully_shard, MixedPrecisionPolicy = fsdp_api(torch)
    model, freqs = build_model(torch, m, args.layers, args.seq, args.ac)
    cfg = {"mesh": mesh, "mp_policy": MixedPrecisionPolicy(param_dtype=torch.bfloat16,
                                                           reduce_dtype=torch.float32)}
    for i, block in model.layers.items():  # torchtitan 9dec370 parallelize_llama.apply_fsdp
        fully_shard(block, **cfg, reshard_after_forward=int(i) < args.layers - 1)
    fully_shard(model, **cfg, reshard_after_forward=True)
    model.to_empty(device="cuda")
    with torch.no_grad():
        for name, p in model.named_parameters():
            local = p.to_local() if hasattr(p, "to_local") else p
            local.fill_(1.0) if name.endswith("norm.weight") else local.normal_(0.0, 0.02)
    opt = torch.optim.AdamW(model.parameters(), lr=8e-4, betas=(0.9, 0.95), weight_decay=0.1,
                            fused=False, foreach=True)
    g = torch.Generator(device="cuda").manual_seed(0)
    tokens = torch.randint(0, m["vocab"], (args.batch, args.seq), device="cuda", generator=g)
    labels = torch.randint(0, m["vocab"], (args.batch, args.seq), device="cuda", generator=g)
    steps, oom, clip_error = [], None, None
    try:
        for step in range(1, args.steps + 1):
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            opt.zero_grad()
            pred = model(tokens, freqs)
            loss = F.cross_entropy(pred.flatten(0, 1).float(), labels.flatten(0, 1))
            del pred
            loss.backward()
            try:  # a few bytes per parameter group; DTensor support varies by release
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, foreach=True)
            except (RuntimeError, NotImplementedError, TypeError) as e:
                clip_error = str(e).splitlines()[0]
            opt.step()
            torch.cuda.synchronize()
            st = torch.cuda.memory_stats()
            steps.append({"step": step, "allocated_peak": st["allocated_bytes.all.peak"],
                          "active_peak": st["active_bytes.all.peak"],
                          "reserved_peak": st["reserved_bytes.all.peak"],
                          "alloc_retries": st.get("num_alloc_retries", 0)})
    except torch.cuda.OutOfMemoryError as e:
        oom = str(e).splitlines()[0]
    streams = by_stream(torch.cuda.memory_snapshot(), stream_names(torch, model))
    if real and world > 1:  # the maximum over the ranks, figure by figure
        for s in steps:
            keys = ["allocated_peak", "active_peak", "reserved_peak", "alloc_retries"]
            t = torch.tensor([s[k] for k in keys], dtype=torch.float64, device="cuda")
            dist.all_reduce(t, op=dist.ReduceOp.MAX)
            s.update({k: int(x) for k, x in zip(keys, t.tolist())})
    r = {"alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""), "world": world,
         "collectives": "nccl" if real else "fake", "layers": args.layers, "ac": args.ac,
         "tokens": args.batch * args.seq, "steps": steps, "streams_after_last_step": streams,
         "oom": oom, "clip_error": clip_error,
         "predicted": predicted(dict(m, layers=args.layers), world)}
    dist.destroy_process_group()
    return r


def parent(args):
    """One child process per allocator setting over the fake process group."""
    runs = []
    for conf in CONFS:
        env = {k: x for k, x in os.environ.items() if k != "PYTORCH_CUDA_ALLOC_CONF"}
        if conf:
            env["PYTORCH_CUDA_ALLOC_CONF"] = conf
        cmd = [sys.executable, os.path.abspath(__file__), "--child", "--world", str(args.world),
               "--layers", str(args.layers), "--seq", str(args.seq), "--batch", str(args.batch),
               "--ac", args.ac, "--steps", str(args.steps)]
        try:
            p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
            runs.append(json.loads(p.stdout.strip().splitlines()[-1]))
        except (ValueError, IndexError):
            runs.append({"alloc_conf": conf, "error": f"exit {p.returncode}: "
                         + (p.stderr.strip().splitlines() or [""])[-1]})
        except subprocess.TimeoutExpired:
            runs.append({"alloc_conf": conf, "error": "no answer in 900 s"})
    return runs


def report(runs):
    for r in runs:
        conf = r["alloc_conf"] or "(default)"
        if "error" in r:
            print(f"== {conf}: failed: {r['error']}")
            continue
        p = r["predicted"]
        print(f"== {conf}: {r['layers']} layers, {r['tokens']} tokens, AC {r['ac']}, rank 0 "
              f"of {r['world']} ({r['collectives']} collectives)"
              + (f"; OOM: {r['oom']}" if r["oom"] else ""))
        print("%4s %12s %12s %12s %14s %8s" % ("step", "alloc GiB", "active GiB", "reserved GiB",
                                               "res-alloc GiB", "retries"))
        for s in r["steps"]:
            print("%4d %12.2f %12.2f %12.2f %14.2f %8d" % (
                s["step"], s["allocated_peak"] / GIB, s["active_peak"] / GIB,
                s["reserved_peak"] / GIB, (s["reserved_peak"] - s["allocated_peak"]) / GIB,
                s["alloc_retries"]))
        print("   predicted reserved - allocated >= %.2f GiB (both side pools), of which %.2f "
              "beyond Tessel's figure (the largest unit's flat RS input and AG output, %d "
              "parameters)" % (p["beyond_allocated"] / GIB, p["beyond_tessel"] / GIB,
                               p["unit_params"]))
        print("   %-26s %12s %12s   predicted pool" % ("stream, after the last step",
                                                       "reserved GiB", "alloc GiB"))
        want = {"reduce_scatter": p["reduce_scatter_pool"],
                "all_gather_copy_in": p["all_gather_pool"]}
        for name, x in sorted(r["streams_after_last_step"].items()):
            w = want.get(name)
            print("   %-26s %12.2f %12.2f   %s" % (name, x["reserved"] / GIB, x["allocated"] / GIB,
                                                  "%.2f" % (w / GIB) if w else "-"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="3 steps instead of 5")
    ap.add_argument("--json", metavar="FILE", help="write every figure to FILE")
    ap.add_argument("--child", action="store_true",
                    help="run in this process (torchrun, or one allocator setting)")
    ap.add_argument("--world", type=int, default=8, help="fake ranks on one GPU (default 8)")
    ap.add_argument("--layers", type=int, default=LLAMA8B["layers"])
    ap.add_argument("--seq", type=int, default=LLAMA8B["seq"])
    ap.add_argument("--batch", type=int, default=LLAMA8B["batch"], help="local batch")
    ap.add_argument("--ac", choices=("full", "none"), default="full")
    ap.add_argument("--steps", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.steps = args.steps or (3 if args.quick else 5)
    try:
        import torch
    except ImportError as e:
        refuse(f"PyTorch does not import ({e})")
    if not torch.cuda.is_available():
        refuse(f"torch {torch.__version__} sees no CUDA device")
    if args.child:
        r = child(torch, args)
        if "RANK" not in os.environ:  # one allocator setting for parent(): a JSON line
            print(json.dumps(r))
        elif int(os.environ["RANK"]) == 0:  # torchrun: rank 0 reports the maxima
            if args.json:
                with open(args.json, "w") as f:
                    json.dump([r], f, indent=1)
            report([r])
        return
    runs = parent(args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(runs, f, indent=1)
    report(runs)


if __name__ == "__main__":
    main()
