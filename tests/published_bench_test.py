#!/usr/bin/env python3
"""published_bench_test.py — bench/published/run.py drives the build's tesselctl.

Runs the runner on a few rows of two sources, with the aggregate and the single
topology, and checks the shape of its output: one line per selected row, a
per-source line with numeric errors, the leave-one-source-out and targets lines,
the JSON file, exit status 0. Then the mixture-of-experts sources: one line per
row, `refused` rows printed as not expressible, `unmodelled` rows listed, the
JSON keeping both. The runner's argument building for expert TP: a row's `etp`
reaches eval as `--etp` and eval prices the plan at it. The FLOP conventions of the
MT-NLG and GPT-NeoX rows turn their published figures into the seconds the papers
imply; llm-foundry's MPT rows build their models to the table's NumParams, and their
`tokens_per_s` and `mpt` FLOP count give back the table's figures, and their 13b and 7b
rows on 8 A100 40GB keep the ratios to their 2023 80 GB twins the README reads; flash-attention's
training rows count their kernels, convert by the README's and the paper's counts, and
price flash2 on the A100 alike with and without --attn-kernel; bloom_tp.py's scan of the BLOOM
rows prices its 150 GB/s column as run.py does; mb_pairs.py's bounds hold on a built pair
and single out the two AMP hetero-cluster pairs. It asserts no accuracy: the errors are the bench's
result, not a test condition.

usage: published_bench_test.py SOURCE_ROOT TESSELCTL
"""
import copy
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def load_runner(runner):
    """bench/published/run.py as a module, to call its functions (it has no package)."""
    spec = importlib.util.spec_from_file_location("published_run", runner)
    run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)
    return run


def check_sim_audit(root, tesselctl, rows):
    """sim_audit.py (bench/published/README.md "The event simulator against the closed
    form"): the closed form and the event simulator price one rule since cost model 161,
    so Megatron-LM 2021's interleaved Table 1 rows (blocking hops: n21-t1-530b was −2.0 %
    apart) and the Blackwell 405B rows under Megatron-core's per-chunk reduce (+1.1 %)
    agree within 0.5 %; a row of one stage has no simulated figure."""
    sys.path.insert(0, os.path.join(root, "bench", "published"))
    import sim_audit

    class Args:
        pass
    args = Args()
    args.tesselctl = tesselctl
    picked = [r for r in rows if r["id"] in ("n21-t1-530b", "n21-t1-76b", "mbarch2511-l405b-b200-fp8")]
    if len(picked) != 3:
        fail("rows.json lost the rows sim_audit is checked on")
    with tempfile.TemporaryDirectory() as tmp:
        for row in picked:
            res = sim_audit.audit_row(row, args, tmp)
            if "error" in res or res.get("diff_pct") is None:
                fail("sim_audit: %s: %s" % (row["id"], res))
            if abs(res["diff_pct"]) > 0.5:
                fail("sim_audit: %s closed %.6g s, simulated %.6g s (%+.2f %%)"
                     % (row["id"], res["closed_s"], res["sim_s"], res["diff_pct"]))
        one = next(r for r in rows if r["source"] == "torchtitan-h100")
        res = sim_audit.audit_row(one, args, tmp)
        if res.get("pp") != 1 or res.get("diff_pct") is not None:
            fail("sim_audit: one stage, yet %s" % res)
        # torchtitan's interleaved 405B row: torch.distributed.pipelining's blocking
        # hops in both figures since cost model 162 (README.md "Pipeline exchanges as
        # torch.distributed.pipelining and Megatron-LM 2021 run them"): −0.68 % apart
        tt = next((r for r in rows if r["id"] == "tt-405b-512gpu-3d-i1f1b"), None)
        if tt is None:
            fail("rows.json lost tt-405b-512gpu-3d-i1f1b")
        res = sim_audit.audit_row(tt, args, tmp)
        if "error" in res or res.get("diff_pct") is None or abs(res["diff_pct"]) > 1.0:
            fail("sim_audit: tt-405b-512gpu-3d-i1f1b: %s" % res)


def check_etp(runner, tesselctl, rows):
    """A row's expert TP goes to eval as --etp, after --ep; etp 1 adds no flag.
    Qwen3-30B-A3B on one 8-GPU B200 node at EP 4 x ETP 2 (4·2 = 8 = the stage's
    ranks): eval takes it and its plan keeps ep 4, etp 2."""
    run = load_runner(runner)
    base = next((r for r in rows if r["id"] == "mb2604-q30b-b200-mxfp8"), None)
    if base is None:
        fail("rows.json lost mb2604-q30b-b200-mxfp8")
    row = copy.deepcopy(base)
    row["plan"].update(ep=4, etp=1)
    if "--etp" in run.plan_args(row):
        fail("etp 1 passed --etp: %s" % run.plan_args(row))
    row["plan"]["etp"] = 2
    args = run.plan_args(row)
    i = args.index("--ep") if "--ep" in args else -1
    if i < 0 or args[i:i + 4] != ["--ep", "4", "--etp", "2"]:
        fail("etp 2: plan arguments %s lack '--ep 4 --etp 2'" % args)
    with tempfile.TemporaryDirectory() as tmp:
        cmd = run.eval_command(row, tesselctl, "aggregate", tmp)
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            fail("etp 2: %s exited %d: %s" % (" ".join(cmd), p.returncode, p.stderr))
        plan = json.loads(p.stdout)["plan"]
        if plan.get("ep") != 4 or plan.get("etp") != 2:
            fail("etp 2: eval's plan has ep %s etp %s, want 4 and 2" % (plan.get("ep"), plan.get("etp")))


def check_fused_srelu(runner, rows):
    """Every Nemotron-H row (a Megatron-Bridge recipe, each setting
    use_fused_weighted_squared_relu) carries moe_fused_srelu with a note citing the
    recipe's commit, the runner passes it as --moe-fused-srelu, and no other row sets it
    (cost model 196)."""
    run = load_runner(runner)
    nemo = [r for r in rows if "nemotron_3_" in r.get("model", {}).get("hf_config", "")]
    if len(nemo) < 16:
        fail("rows.json has %d Nemotron 3 rows, want 16 or more" % len(nemo))
    for r in rows:
        p = r.get("plan", {})
        if r in nemo:
            if p.get("moe_fused_srelu") is not True:
                fail("%s: a Nemotron-H recipe row without moe_fused_srelu" % r["id"])
            if not re.search(r"\b[0-9a-f]{7,40}\b", p.get("moe_fused_srelu_note", "")):
                fail("%s: moe_fused_srelu_note cites no commit" % r["id"])
            if "--moe-fused-srelu" not in run.knob_args(r):
                fail("%s: the runner does not pass --moe-fused-srelu" % r["id"])
        elif "moe_fused_srelu" in p:
            fail("%s: moe_fused_srelu on a row that runs no Nemotron-H recipe" % r["id"])


def check_flex_backend(runner, tesselctl, rows):
    """Every flex row names its back end (hybridep or deepep) with a note citing a commit;
    the runner passes it as --moe-flex-backend after --moe-flex-dispatcher; and eval prices
    the Nemotron 3 Super GB200 row slower under hybridep (its routing-map gather) than the
    same row under deepep, the plan keeping the back end named (1, 2)."""
    run = load_runner(runner)
    flex = [r for r in rows if r.get("plan", {}).get("moe_dispatcher") == "flex"]
    if not flex:
        fail("rows.json has no flex row")
    for r in flex:
        p = r["plan"]
        if p.get("moe_flex_backend") not in ("hybridep", "deepep"):
            fail("%s: moe_flex_backend %r is not hybridep or deepep" % (r["id"], p.get("moe_flex_backend")))
        if not re.search(r"\b[0-9a-f]{7,40}\b", p.get("moe_flex_backend_note", "")):
            fail("%s: moe_flex_backend_note cites no commit" % r["id"])
        args = run.knob_args(r)
        i = args.index("--moe-flex-dispatcher") if "--moe-flex-dispatcher" in args else -1
        if i < 0 or args[i + 1:i + 3] != ["--moe-flex-backend", p["moe_flex_backend"]]:
            fail("%s: arguments %s lack --moe-flex-backend %s" % (r["id"], args, p["moe_flex_backend"]))
    base = next((r for r in rows if r["id"] == "mb2604-super-gb200-mxfp8"), None)
    if base is None or base["plan"].get("moe_flex_backend") != "hybridep":
        fail("rows.json lost mb2604-super-gb200-mxfp8 under hybridep")
    got = {}
    for name in ("hybridep", "deepep"):
        row = copy.deepcopy(base)
        row["plan"]["moe_flex_backend"] = name
        with tempfile.TemporaryDirectory() as tmp:
            cmd = run.eval_command(row, tesselctl, "nics", tmp)
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            if p.returncode != 0:
                fail("%s: %s exited %d: %s" % (name, " ".join(cmd), p.returncode, p.stderr))
            got[name] = json.loads(p.stdout)["plan"]
    h, d = got["hybridep"], got["deepep"]
    if h.get("moe_flex_backend") != 1 or d.get("moe_flex_backend") != 2:
        fail("plans' moe_flex_backend: %s, %s" % (h.get("moe_flex_backend"), d.get("moe_flex_backend")))
    if not h["iter_time_s"] > d["iter_time_s"]:
        fail("hybridep %g s not above deepep %g s" % (h["iter_time_s"], d["iter_time_s"]))


def check_samples_per_s(runner, rows):
    """Galvatron-BMW's tables publish samples/s at the batch in brackets: a row's
    `samples_per_s` is batch / value seconds per iteration (ViT-Huge-32 under
    Megatron TP 8: 16.16 samples/s at batch 24 = 1.485 s), and every row of those
    sources carries the metric and a positive batch."""
    run = load_runner(runner)
    row = next((r for r in rows if r["id"] == "gb8-tp-vit32-b24"), None)
    if row is None:
        fail("rows.json lost gb8-tp-vit32-b24")
    t = run.measured_seconds(row, None)
    if abs(t - 24 / 16.16) > 1e-12:
        fail("samples_per_s: gb8-tp-vit32-b24 is %r s, want 24 / 16.16" % t)
    gal = [r for r in rows if r["source"].startswith("galvatron-bmw")]
    if not gal or any(r["measured"]["metric"] != "samples_per_s" or r["plan"]["batch"] <= 0 for r in gal):
        fail("galvatron-bmw rows: every row's metric samples_per_s with a positive batch")


def check_bloom(runner, tesselctl, rows):
    """The BLOOM rows run on an HF `bloom` config (ALiBi, embedding LayerNorm, no
    position table): run.py writes model_type bloom, and the model eval builds
    from it has BLOOM-176B's published 176,247,271,424 parameters."""
    spec = importlib.util.spec_from_file_location("published_run", runner)
    run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)
    row = next((r for r in rows if r["id"] == "bloom-tr11-48n"), None)
    if row is None or row["model"]["kind"] != "bloom":
        fail("rows.json: bloom-tr11-48n is not a bloom model")
    cfg = run.hf_config(row["model"])
    if cfg.get("model_type") != "bloom" or cfg.get("n_head") != 112:
        fail("run.py writes %r for the BLOOM row" % cfg)
    with tempfile.TemporaryDirectory() as tmp:
        args = run.model_args(row, tmp)
        p = subprocess.run([tesselctl, "eval", "--local"] + args +
                           ["--cluster", "48x8xA100-80G:ib100", "--tp", "4", "--pp", "24",
                            "--mbs", "1", "--batch", "2048", "--ckpt", "full", "--json"],
                           capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        fail("eval of the BLOOM row's model: %s" % p.stderr)
    if '"params": 176247271424' not in p.stdout:
        fail("BLOOM-176B's parameters are not 176,247,271,424 in eval's JSON")
    bad = dict(row["model"], ffn=4 * row["model"]["hidden"] + 1)
    try:
        run.hf_config(bad)
        fail("run.py wrote a bloom config with an FFN other than 4h")
    except ValueError:
        pass
    # every BLOOM launch exported CUDA_LAUNCH_BLOCKING=1: each row says launch_blocking,
    # run.py passes it as --launch-blocking, and eval's plan records it
    for r in rows:
        if r["source"].startswith("bloom-tr11") and not r["plan"].get("launch_blocking"):
            fail("rows.json: %s lacks launch_blocking (its script's CUDA_LAUNCH_BLOCKING=1)" % r["id"])
    if "--launch-blocking" not in run.knob_args(row):
        fail("run.py does not pass --launch-blocking for %s: %s" % (row["id"], run.knob_args(row)))
    with tempfile.TemporaryDirectory() as tmp:
        cmd = run.eval_command(row, tesselctl, "nics", tmp)
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if p.returncode != 0 or json.loads(p.stdout)["plan"].get("launch_blocking") is not True:
        fail("eval of %s does not record launch_blocking: %s" % (row["id"], p.stderr))
    # AMP's ds_config.json sets "wall_clock_breakdown": true for every trial it launched:
    # each AMP row says ds_wall_clock and run.py passes it as --ds-wall-clock
    amp = [r for r in rows if r["source"].startswith("amp-aws")]
    for r in amp:
        if not r["plan"].get("ds_wall_clock"):
            fail("rows.json: %s lacks ds_wall_clock (AMP's wall_clock_breakdown)" % r["id"])
    if amp and "--ds-wall-clock" not in run.knob_args(amp[0]):
        fail("run.py does not pass --ds-wall-clock for %s" % amp[0]["id"])
    # the g4dn rows ran the fork's PyTorch 1.7.1 on the g4dn.12xlarge hosts: each carries
    # that host's figure from AMP's own per-layer profile (host_op_us 73, cost model 156),
    # run.py passes it as --host-op-us and eval's plan records it; the p3 sources do not
    g4 = [r for r in amp if r["source"] == "amp-aws"]
    for r in amp:
        want = 73 if r in g4 else None
        if r["plan"].get("host_op_us") != want:
            fail("rows.json: %s has host_op_us %r, not %r" % (r["id"], r["plan"].get("host_op_us"), want))
    if g4:
        args = run.knob_args(g4[0])
        if "--host-op-us" not in args or args[args.index("--host-op-us") + 1] != "73":
            fail("run.py does not pass --host-op-us 73 for %s: %s" % (g4[0]["id"], args))
        with tempfile.TemporaryDirectory() as tmp:
            cmd = run.eval_command(g4[0], tesselctl, "nics", tmp)
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if p.returncode != 0 or json.loads(p.stdout)["plan"].get("host_op_us") != 73.0:
            fail("eval of %s does not record host_op_us 73: %s" % (g4[0]["id"], p.stderr))
    # Narayanan 2021 Table 2's ZeRO-3 rows ran DeepSpeed 0.3's stage 3: each says
    # ds_zero3_v03 and run.py passes it as --ds-zero3-v03
    z3 = [r for r in rows if r["source"] == "narayanan21-t2-zero3"]
    for r in z3:
        if not r["plan"].get("ds_zero3_v03"):
            fail("rows.json: %s lacks ds_zero3_v03 (DeepSpeed 0.3's ZeRO-3)" % r["id"])
    if z3 and "--ds-zero3-v03" not in run.knob_args(z3[0]):
        fail("run.py does not pass --ds-zero3-v03 for %s" % z3[0]["id"])
    # its GPT-2 launch passes none of Megatron-LM v1.1.5's fusion flags: those rows say
    # unfused_elementwise (the TransGAN rows' block is transgan_eager's own)
    gpt2 = [r for r in amp if r["source"] in ("amp-aws", "amp-aws-hetero-cluster")]
    for r in gpt2:
        if not r["plan"].get("unfused_elementwise"):
            fail("rows.json: %s lacks unfused_elementwise (no fusion flags in its launch)" % r["id"])
    for r in amp:
        if r not in gpt2 and r["plan"].get("unfused_elementwise"):
            fail("rows.json: %s is not a GPT-2 row of AMP's fork" % r["id"])
    if gpt2 and "--unfused-elementwise" not in run.knob_args(gpt2[0]):
        fail("run.py does not pass --unfused-elementwise for %s" % gpt2[0]["id"])
    # BLOOM's and MT-NLG's Megatron-DeepSpeed ran DeepSpeed's PipelineEngine (blocking
    # one-way p2p, cost model 154): those rows say ds_pipe_engine and run.py passes it;
    # Megatron-LM's own rows (legacy_p2p without DeepSpeed) do not
    ds_engine = ("bloom-tr11", "bloom-tr11-reshape", "bloom-tr11-prequel", "mtnlg22")
    for r in rows:
        if (r["source"] in ds_engine) != bool(r["plan"].get("ds_pipe_engine")):
            fail("rows.json: %s %s ds_pipe_engine" % (
                r["id"], "lacks" if r["source"] in ds_engine else "should not carry"))
    eng = [r for r in rows if r["source"] in ds_engine]
    if eng and "--ds-pipe-engine" not in run.knob_args(eng[0]):
        fail("run.py does not pass --ds-pipe-engine for %s" % eng[0]["id"])
    # torchtitan's stages run torch.distributed.pipelining (its interleaved 1F1B blocking,
    # cost model 162, keyed on torch_pipelining since 168): its rows of several stages say
    # so and run.py passes it; no other row does
    for r in rows:
        titan_pp = r["source"].startswith("torchtitan") and (r["plan"].get("pp") or 1) > 1
        if titan_pp != bool(r["plan"].get("torch_pipelining")):
            fail("rows.json: %s %s torch_pipelining" % (
                r["id"], "lacks" if titan_pp else "should not carry"))
    tpp = [r for r in rows if r["plan"].get("torch_pipelining")]
    if tpp and "--torch-pipelining" not in run.knob_args(tpp[0]):
        fail("run.py does not pass --torch-pipelining for %s" % tpp[0]["id"])


def check_bloom_tp(root, tesselctl, rows):
    """bloom_tp.py's scan (README.md "BLOOM's reshaping rows: TP 4 against TP 2"): its
    cluster JSON at the A100's own 150 GB/s prices a row as run.py's short spec does, a
    lower intra-node figure prices it slower, and the TP all-reduces it divides by are
    the inner stage's six a block and micro-batch over the cycles: TP 2 × PP 36 on 36
    nodes, 512 micro-batches and 35 more to fill and drain, two blocks a stage, 6564."""
    spec = importlib.util.spec_from_file_location(
        "published_bloom_tp", os.path.join(root, "bench", "published", "bloom_tp.py"))
    scan = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scan)
    row = next((r for r in rows if r["id"] == "bloom-reshape-tp2-pp36-36n"), None)
    if row is None:
        fail("rows.json lost bloom-reshape-tp2-pp36-36n")
    with tempfile.TemporaryDirectory() as tmp:
        cmd = scan.run.eval_command(row, tesselctl, "nics", tmp)
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            fail("eval of %s: %s" % (row["id"], p.stderr))
        spec_s = json.loads(p.stdout)["plan"]["iter_time_s"]
        at150 = scan.evaluate(row, tesselctl, 150.0, tmp)
        at75 = scan.evaluate(row, tesselctl, 75.0, tmp)
    t150, t75 = at150["plan"]["iter_time_s"], at75["plan"]["iter_time_s"]
    if abs(t150 - spec_s) > 1e-9 * spec_s:
        fail("bloom_tp.py at 150 GB/s prices %s at %.9g s, run.py's spec at %.9g" % (row["id"], t150, spec_s))
    if not t75 > t150:
        fail("bloom_tp.py: %s at 75 GB/s (%.6g s) is not slower than at 150 (%.6g)" % (row["id"], t75, t150))
    n = scan.tp_allreduces(row, at150["plan"])
    if n != (512 + 35) * 2 * 6:
        fail("bloom_tp.py counts %d TP all-reduces for %s, want 6564" % (n, row["id"]))
    sel = dict(row, plan=dict(row["plan"], ckpt="selective"))
    try:
        scan.tp_allreduces(sel, at150["plan"])
        fail("bloom_tp.py counted six TP all-reduces a block under selective recompute")
    except ValueError:
        pass


def check_preset_seq(runner):
    """A preset row's FLOPs are counted at the row's own sequence, the one eval is
    run at (--seq-len), not the preset's: Llama3-8B at 32768 under 6n is
    6·matmul params + 12·l·h·s per token at s = 32768."""
    run = load_runner(runner)
    row = {"model": {"preset": "Llama3-8B", "seq": 32768}, "plan": {"batch": 2}, "flops": "6n"}
    shape = dict(run.PRESET_SHAPES["Llama3-8B"], seq=32768)
    want = 2 * 32768 * (6 * run.matmul_params(shape) + 12 * 32 * 4096 * 32768)
    got = run.flops_per_iter(row, None)
    if abs(got - want) > 1e-9 * want:
        fail("preset at its row's seq: %r FLOPs, want %r (the preset's 8192 counted?)" % (got, want))


def check_flop_conventions(runner, rows):
    """The two conventions of the 2021-22 DeepSpeed-pipeline sources. `neox-2022`
    (GPT-NeoX's logged count, 6·N + 60·s·h·l per token with N the row's
    flops_params): 117 TFLOP/s on 96 GPUs at batch 1536 is 43.846 s. `narayanan21`
    on the MT-NLG rows gives back the TFLOP/s the paper printed beside each
    iteration time (126, 121, 113) to within 1 %: the figure and the seconds are
    one measurement."""
    run = load_runner(runner)
    row = next((r for r in rows if r["id"] == "neox-20b-96"), None)
    if row is None:
        fail("rows.json lost neox-20b-96")
    f = run.flops_per_iter(row, None)
    want_f = 1536 * 2048 * (6 * 20556201984 + 60 * 2048 * 6144 * 44)
    if abs(f - want_f) > 1e-9 * want_f:
        fail("neox-2022: %r FLOPs per iteration, want %r" % (f, want_f))
    t = run.measured_seconds(row, f)
    if abs(t - 43.846) > 0.001:
        fail("neox-2022: neox-20b-96 is %r s, want 43.846" % t)
    mt = [r for r in rows if r["source"] == "mtnlg22"]
    if len(mt) != 3:
        fail("mtnlg22: %d rows, want 3" % len(mt))
    for r in mt:
        tf = run.flops_per_iter(r, None) / run.measured_seconds(r, None) / run.gpus(r) / 1e12
        pub = r["measured"]["model_tflops_per_gpu"]
        if abs(tf - pub) > 0.01 * pub:
            fail("%s: narayanan21 gives %.1f TFLOP/s from %s s, the paper %s" % (r["id"], tf, r["measured"]["value"], pub))


def check_mpt(runner, tesselctl, rows):
    """llm-foundry's MPT rows (bench/published/README.md "MPT rows"). Each table row is
    its own source row with the table's NumParams as flops_params, and Tessel builds
    that model to the parameter: eval of one row per model size (at 2K) and of the
    learned position table at 64K (1b: 1,445,974,016, 2048·63,488 more than at 2K)
    reports model.params = NumParams. `tokens_per_s`: 70b on 512 H100 is 8,388,608 /
    515,636 = 16.2685 s, and the `mpt` count (6·NumParams + 12·l·h·s per token) gives
    back the table's Model TFLOP, 408. Every row carries llm-foundry's Triton kernel,
    `attn_kernel` flash1-triton (cost model 121), which run.py passes always."""
    run = load_runner(runner)
    mpt = [r for r in rows if r["source"].startswith("mpt-")]
    counts = {}
    for r in mpt:
        counts[r["source"]] = counts.get(r["source"], 0) + 1
    if counts != {"mpt-h100": 70, "mpt-h100-fp8": 7, "mpt-a100-80g": 61, "mpt-a100-40g": 78,
                  "mpt-a100-80g-2023": 84}:
        fail("rows.json: the MPT rows by source %s" % counts)
    for r in mpt:
        m, p = r["model"], r["plan"]
        if m.get("kind") != "gpt2" or m["vocab"] != 50368 or m["ffn"] != 4 * m["hidden"]:
            fail("%s: not MPT's shape (gpt2, vocab 50368, 4h FFN): %s" % (r["id"], m))
        if p["batch"] % (p["mbs"] * run.gpus(r)) != 0 or r["measured"]["metric"] != "tokens_per_s":
            fail("%s: batch %d over micro-batch %d on %d GPUs, metric %s"
                 % (r["id"], p["batch"], p["mbs"], run.gpus(r), r["measured"]["metric"]))
        # the optimizer step as the row's Composer ran it (cost model 165): DecoupledAdamW's
        # read-back per tensor since Composer 0.15 (0.16 / 0.17: opt_step composer), a
        # loop over flat parameters with a host step count before (0.12 / 0.13: torch)
        note = p.get("stack_note", "")
        want = "composer" if ("Composer 0.16" in note or "Composer 0.17" in note) else "torch"
        if p.get("opt_step") != want or ("Composer 0.1" not in note):
            fail("%s: opt_step %s, the stack's step is %s" % (r["id"], p.get("opt_step"), want))
        # llm-foundry's Triton FlashAttention, its own kernel since cost model 121, passed
        # to eval without run.py --attn-kernel (no GPU's default figure stands for it)
        args = run.knob_args(r)
        if p.get("attn_kernel") != "flash1-triton" or "--attn-kernel" not in args or \
                args[args.index("--attn-kernel") + 1:][:1] != ["flash1-triton"]:
            fail("%s: attn_kernel %s, eval %s: not the Triton port (flash1-triton)"
                 % (r["id"], p.get("attn_kernel"), args))
    row = next((r for r in mpt if r["id"] == "mpt-h100-70b-s2048-g512"), None)
    if row is None:
        fail("rows.json lost mpt-h100-70b-s2048-g512")
    t = run.measured_seconds(row, None)
    if abs(t - 8388608 / 515636) > 1e-9:
        fail("tokens_per_s: %r s, want %r" % (t, 8388608 / 515636))
    tf = run.flops_per_iter(row, None) / t / 512 / 1e12
    if abs(tf - 408) > 0.5:
        fail("mpt FLOPs: %.2f TFLOP/s, the table's Model TFLOP 408" % tf)
    picked = {}
    for r in mpt:
        if r["model"]["seq"] == 2048 and r["model"]["hidden"] not in picked:
            picked[r["model"]["hidden"]] = r
    long_row = next((r for r in mpt if r["id"] == "mpt-a100-80g-1b-s65536-g8"), None)
    if len(picked) != 9 or long_row is None:
        fail("rows.json: the MPT models at 2K (%d of 9) or the 1b 64K row" % len(picked))
    with tempfile.TemporaryDirectory() as tmp:
        for r in list(picked.values()) + [long_row]:
            out, err = run.run_eval(run.eval_command(r, tesselctl, "nics", tmp), False)
            if err:
                fail("%s: %s" % (r["id"], err))
            if out["model"]["params"] != r["model"]["flops_params"]:
                fail("%s: Tessel builds %d parameters, the table's NumParams %d"
                     % (r["id"], out["model"]["params"], r["model"]["flops_params"]))
    if long_row["model"]["flops_params"] != 1445974016:
        fail("mpt-a100-80g-1b-s65536-g8: NumParams %d" % long_row["model"]["flops_params"])


def check_mpt_siblings(runner, rows):
    """The MPT rows their siblings contradict (bench/published/README.md "The MPT outlier
    rows"): each is slower than a row of the same table with the same per-GPU micro-batch
    (sequences x tokens) and no more work per GPU, so no term monotone in what separates
    them can close it. Checked on rows.json's own figures, so an edit of those rows
    reopens the README's reading. Pairs: (slow row, sibling, the seconds a micro-batch the
    README quotes for the slow row; a step's share included, as measured)."""
    run = load_runner(runner)
    by_id = {r["id"]: r for r in rows}
    pairs = [
        ("mpt-a100-80g-760m-s512-g8", "mpt-a100-80g-760m-s2048-g8", 1.669),
        ("mpt-a100-80g-760m-s1024-g8", "mpt-a100-80g-760m-s2048-g8", 1.652),
        ("mpt-h100-760m-s2048-g8", "mpt-h100-760m-s2048-g16", 0.779),
        ("mpt-a100-40g-1b-s2048-g32", "mpt-a100-40g-1b-s2048-g64", 1.317),
        ("mpt-a100-40g-1b-s2048-g32", "mpt-a100-40g-1b-s2048-g128", 1.317),
        ("mpt-a100-40g-70b-s2048-g64", "mpt-a100-80g-70b-s2048-g32", 14.83),
    ]
    for slow, sib, quoted in pairs:
        a, b = by_id.get(slow), by_id.get(sib)
        if a is None or b is None:
            fail("rows.json lost %s or %s" % (slow, sib))
        tok = [r["plan"]["mbs"] * r["model"]["seq"] for r in (a, b)]
        if tok[0] != tok[1]:
            fail("%s / %s: %d / %d tokens a micro-batch, not the same" % (slow, sib, tok[0], tok[1]))
        per_mb = []
        for r in (a, b):
            n_mb = r["plan"]["batch"] // (r["plan"]["mbs"] * run.gpus(r))
            per_mb.append(run.measured_seconds(r, None) / n_mb)
        if abs(per_mb[0] - quoted) > 0.005 * quoted:
            fail("%s: %.4g s a micro-batch, the README quotes %.4g" % (slow, per_mb[0], quoted))
        if per_mb[0] <= per_mb[1]:
            fail("%s (%.4g s a micro-batch) is no slower than %s (%.4g): the README's reading"
                 " of it no longer holds" % (slow, per_mb[0], sib, per_mb[1]))


def check_mpt_second_reading(runner, rows):
    """The 2023 A100 80GB table (`mpt-a100-80g-2023`, llm-foundry 300cc5c58; bench/published/
    README.md "The MPT outliers read twice"): the same configurations the 2024 table ran
    again, read on the older stack. Every one of its 84 rows but the two 70b ones (the
    2024 table's own) pairs with a 2024 row of the same model, sequence, GPUs, micro-batch
    and batch (54) or stands alone (30: the 16-64-GPU rows, which the 2024 A100 80GB table
    does not have, and 125m, 3b, 7b, 13b at 2K and 7b, 13b at 512 on 8 GPUs, whose
    micro-batch differs). The
    README's reading rests on three of those pairs, checked on rows.json's own figures:
    760m at 512 and 1K ran 1.339 / 1.409 s a micro-batch in 2023 against 1.669 / 1.652 s
    in 2024 (faster than the 2K row's 1.548 / 1.515, so no per-sequence cost), and 30b at
    8K is at least 25 % slower a token than 30b at 4K in both readings."""
    run = load_runner(runner)
    by_id = {r["id"]: r for r in rows}
    old = [r for r in rows if r["source"] == "mpt-a100-80g-2023"]
    twins = 0
    for r in old:
        if r["plan"]["grad_reduce_bytes"] != 2 or r["cluster"]["gpu"] != "A100-80G" or \
                "300cc5c58" not in r["citation"] or "-70b-" in r["id"]:
            fail("%s: not the 2023 PURE table's row" % r["id"])
        twin = by_id.get(r["id"].replace("mpt-a100-80g-2023-", "mpt-a100-80g-"))
        if twin is not None and (twin["plan"]["mbs"], twin["plan"]["batch"], run.gpus(twin)) == \
                (r["plan"]["mbs"], r["plan"]["batch"], run.gpus(r)):
            twins += 1
    if twins != 54:
        fail("mpt-a100-80g-2023: %d rows with a 2024 twin of the same plan, want 54" % twins)

    def per_mb(r):
        return run.measured_seconds(r, None) / (r["plan"]["batch"] // (r["plan"]["mbs"] * run.gpus(r)))

    def per_token(r):
        return per_mb(r) / (r["plan"]["mbs"] * r["model"]["seq"])

    need = ["mpt-a100-80g-2023-760m-s2048-g8"] + [p + c for p in ("mpt-a100-80g-2023-", "mpt-a100-80g-")
                                                   for c in ("760m-s512-g8", "760m-s1024-g8")] + \
        [p + c for p in ("mpt-a100-80g-2023-", "mpt-a100-80g-", "mpt-h100-")
         for c in ("30b-s8192-g8", "30b-s4096-g8")]
    lost = [i for i in need if i not in by_id]
    if lost:
        fail("rows.json lost %s" % lost)
    for cfg, s2023, s2024 in (("760m-s512-g8", 1.339, 1.669), ("760m-s1024-g8", 1.409, 1.652)):
        a, b = by_id["mpt-a100-80g-2023-" + cfg], by_id["mpt-a100-80g-" + cfg]
        got = (per_mb(a), per_mb(b))
        if abs(got[0] - s2023) > 0.005 * s2023 or abs(got[1] - s2024) > 0.005 * s2024:
            fail("%s: %.4g / %.4g s a micro-batch (2023 / 2024), the README quotes %.4g / %.4g"
                 % (cfg, got[0], got[1], s2023, s2024))
        if got[0] >= per_mb(by_id["mpt-a100-80g-2023-760m-s2048-g8"]):
            fail("%s: the 2023 reading is no faster than its 2K sibling" % cfg)
    for prefix in ("mpt-a100-80g-2023-", "mpt-a100-80g-", "mpt-h100-"):
        ratio = per_token(by_id[prefix + "30b-s8192-g8"]) / per_token(by_id[prefix + "30b-s4096-g8"])
        if ratio < 1.25:
            fail("%s30b: 8K over 4K a token %.3f, the README reads >= 1.25" % (prefix, ratio))


def check_mpt_state_twins(runner, rows):
    """The 13b rows on 8 A100 40GB against their twins of the 2023 A100 80GB table, the same
    stack and sweep on one node (bench/published/README.md "The MPT outliers at cost model
    171"): measured, the 80 GB rows' time a token is 1.19-1.26 x faster than the 40 GB's on the
    13b (8,192 against 40,960 tokens a micro-batch) and 1.03-1.06 x on the 7b, the step that
    Tessel prices for both. And the model states (16 B a parameter over the GPUs) exceed half
    the device on exactly the 30b 8-GPU rows and the 13b 8-GPU 40 GB rows, the two groups the
    README leaves to memory. Checked on rows.json's own figures."""
    run = load_runner(runner)
    by_id = {r["id"]: r for r in rows}

    def per_token(r):
        return run.measured_seconds(r, None) / (r["plan"]["batch"] * r["model"]["seq"])

    for model, seqs, lo, hi in (("13b", (512, 1024, 2048, 4096, 8192), 1.19, 1.26),
                                ("7b", (512, 1024, 2048, 4096, 8192, 16384), 1.03, 1.06)):
        for s in seqs:
            cfg = "%s-s%d-g8" % (model, s)
            a, b = by_id.get("mpt-a100-40g-" + cfg), by_id.get("mpt-a100-80g-2023-" + cfg)
            if a is None or b is None:
                fail("rows.json lost the %s twins" % cfg)
            if a["plan"]["grad_reduce_bytes"] != b["plan"]["grad_reduce_bytes"]:
                fail("%s: the twins are not on one stack (grad_reduce_bytes)" % cfg)
            ratio = per_token(a) / per_token(b)
            if not lo <= ratio <= hi:
                fail("%s: 40 GB over 80 GB a token %.3f, the README reads %.2f-%.2f" % (cfg, ratio, lo, hi))
    bound = []
    for r in rows:
        if not r["source"].startswith("mpt-"):
            continue
        states = 16.0 * r["model"]["flops_params"] / run.gpus(r) / 2**30
        if states > 0.5 * run.device_memory_gib(r["cluster"]):
            bound.append(r["id"])
    want = [i for i in by_id if i.startswith("mpt-") and
            (("-30b-" in i and i.endswith("-g8")) or i.startswith("mpt-a100-40g-13b-") and i.endswith("-g8"))]
    if sorted(bound) != sorted(want):
        fail("MPT rows whose model states exceed half the device: %s, the README reads %s"
             % (sorted(bound), sorted(want)))


def check_flash_attn(runner, tesselctl, rows):
    """flash-attention's own training runs (bench/published/README.md "flash-attention
    training rows") and the README's HuggingFace baseline (8 rows: autocast, the unfused
    core, the unpadded vocabulary): 15 rows on 8 A100 80GB, 11 FlashAttention v1 (flash1) and 4
    FlashAttention-2 (flash2), data-parallel without recompute, no `autocast` (the
    stack's fused kernels, not eager modules) and fp32 gradients. The README's table
    and figure are one measurement: GPT3-1.3B's 169k tokens/s is 512·2048 / 169,000 s,
    and the `fa-2022` count (Narayanan's Eq. 3 × 3/4) gives back the figure's TFLOP/s
    on every GPT-3 2k row to within 1 %. The paper's `fa2-paper` count (6·N + 12·l·h·s
    per token): 220 TFLOP/s on GPT3-1.3B at 8k is F / (220e12 · 8) s. A flash1 row
    passes --attn-kernel flash1 always; a flash2 row passes it only under
    --attn-kernel, and on the A100 eval prices it the same either way (the default is
    FlashAttention-2's). Tessel builds each model to its GPT-2 parameter count."""
    run = load_runner(runner)
    fa = [r for r in rows if r["source"] == "flash-attn-training"]
    kernels = {}
    for r in fa:
        kernels[r["plan"]["attn_kernel"]] = kernels.get(r["plan"]["attn_kernel"], 0) + 1
        p, c = r["plan"], r["cluster"]
        if (c["gpu"], c["nodes"], c["gpus_per_node"], p["dp"], p["ckpt"]) != ("A100-80G", 1, 8, 8, "none") \
                or p.get("autocast") or p.get("grad_reduce_bytes") != 4 or p["batch"] % (p["mbs"] * 8):
            fail("%s: not the stack as run (8 A100-80G, DP 8, no recompute, no autocast, fp32 reduce)" % r["id"])
    if len(fa) != 15 or kernels != {"flash1": 11, "flash2": 4}:
        fail("rows.json: flash-attn-training has %d rows, by kernel %s" % (len(fa), kernels))
    hf = [r for r in rows if r["source"] == "flash-attn-training-hf"]
    for r in hf:  # transformers' eager GPT-2: autocast, its unfused core, 50,257 words
        if not (r["plan"].get("autocast") and r["plan"]["attention"].startswith("unfused")
                and r["model"]["vocab"] == 50257 and r["flops"] == "fa-2022"):
            fail("%s: not the HuggingFace baseline as run" % r["id"])
        # transformers' GPT2Block (cost model 122): the config as it ran, written for eval
        cfg = run.hf_config(r["model"])
        if cfg.get("activation_function") != "gelu_new" or \
                cfg.get("scale_attn_by_inverse_layer_idx") is not True:
            fail("%s: the config eval reads lacks gelu_new or the layer-wise scaling: %s"
                 % (r["id"], cfg))
    if len(hf) != 8:
        fail("rows.json: flash-attn-training-hf has %d rows, not 8" % len(hf))
    by_id = {r["id"]: r for r in fa}
    row = by_id.get("fa-gpt3-1.3b-2k-flash1")
    if row is None:
        fail("rows.json lost fa-gpt3-1.3b-2k-flash1")
    if abs(run.measured_seconds(row, None) - 512 * 2048 / 169e3) > 1e-12:
        fail("tokens_per_s: fa-gpt3-1.3b-2k-flash1 is %r s" % run.measured_seconds(row, None))
    for r in fa:
        if r["flops"] == "fa-2022" and r["measured"]["metric"] == "tokens_per_s":
            t = run.measured_seconds(r, None)
            tf = run.flops_per_iter(r, None) / t / 8 / 1e12
            if abs(tf - r["measured"]["model_tflops_per_gpu"]) > 0.01 * r["measured"]["model_tflops_per_gpu"]:
                fail("%s: fa-2022 gives %.1f TFLOP/s, the figure %s" % (r["id"], tf, r["measured"]["model_tflops_per_gpu"]))
    row = by_id.get("fa2p-gpt3-1.3b-8k-flash2")
    if row is None:
        fail("rows.json lost fa2p-gpt3-1.3b-8k-flash2")
    n = 50264 * 2048 + 8192 * 2048 + 24 * (12 * 2048 * 2048 + 13 * 2048) + 2 * 2048
    want = 128 * 8192 * (6 * n + 12 * 24 * 2048 * 8192) / (220e12 * 8)
    if row["model"]["flops_params"] != n or abs(run.measured_seconds(row, run.flops_per_iter(row, None)) - want) > 1e-9:
        fail("fa2-paper: fa2p-gpt3-1.3b-8k-flash2 is %r s, want %r" % (run.measured_seconds(row, run.flops_per_iter(row, None)), want))
    for r in fa:  # every row's kernel by default (cost model 142); flash1 even under --one-attn-figure
        off = "--attn-kernel" in run.knob_args(r, attn_kernel=False)
        if off != (r["plan"]["attn_kernel"] == "flash1") or "--attn-kernel" not in run.knob_args(r):
            fail("%s: --attn-kernel passed %s under run.py --one-attn-figure" % (r["id"], off))
    with tempfile.TemporaryDirectory() as tmp:
        times = []
        for ak in (False, True):
            out, err = run.run_eval(run.eval_command(row, tesselctl, "nics", tmp, attn_kernel=ak), False)
            if err:
                fail("fa2p-gpt3-1.3b-8k-flash2: %s" % err)
            times.append(out["plan"]["iter_time_s"])
        if times[0] != times[1]:
            fail("flash2 on the A100: %r s under --one-attn-figure, %r by default" % tuple(times))
        if out["model"]["params"] != n:
            fail("fa2p-gpt3-1.3b-8k-flash2: Tessel builds %d parameters, want %d" % (out["model"]["params"], n))


def check_galvatron_env(runner, tesselctl, rows):
    """--galvatron-env DIR prices a row with `galvatron_env` on Galvatron's measured
    figures, read in DIR's layout (Hetu df32daa tools/Galvatron): efficiency = the
    layers' forward FLOPs / their measured ms / the GPU's peak (BERT-Huge's 21.47 GFLOP
    layer in 2.2917 ms on a 130 TFLOP/s TITAN RTX: 0.0721), intra = 2^20 B / the
    all-reduce coefficient in ms per MiB (0.2153: 4.870 GB/s), and the overlap
    slowdown; the row is fp32 (cost model 63), so run.py takes the efficiency of the
    fp32 peak `tesselctl hardware --json` gives (TITAN RTX 16.3 TFLOP/s: 0.5748); eval
    takes the cluster JSON and prices the row a little faster than on the built-in
    figures (the measured 9.37 TFLOP/s against the datasheet's 16.3 x 0.5 = 8.15, the
    same 4.87 GB/s), within 10 %."""
    run = load_runner(runner)
    row = next((r for r in rows if r["id"] == "gb8-dp-bert32-b8"), None)
    if row is None or not row.get("galvatron_env"):
        fail("rows.json lost gb8-dp-bert32-b8 or its galvatron_env")
    with tempfile.TemporaryDirectory() as env:
        for rel, doc in (("bert/configs/forward_profiling_config.json", {"fwd_time_hidden_1280": 2.2917}),
                         ("env_configs/allreduce_bandwidth_8_gpus.json", {"1_8_1": 0.2153}),
                         ("env_configs/overlap_coefficient.json", {"overlap_coe": 1.3})):
            os.makedirs(os.path.dirname(os.path.join(env, rel)), exist_ok=True)
            with open(os.path.join(env, rel), "w") as f:
                json.dump(doc, f)
        fig = run.galvatron_env_figures(row, env, 130e12)
        if abs(fig["efficiency"] - 21.47e9 / 2.2917e-3 / 130e12) > 1e-9 or abs(fig["intra_gbps"] - 4.8703) > 1e-3 \
                or fig["overlap_slowdown"] != 1.3:
            fail("galvatron_env figures %s" % fig)
        if not row["plan"].get("fp32") or run.gpu_peak_flops(tesselctl, "RTX-TITAN-24G", True) != 16.3e12:
            fail("galvatron_env: the row's fp32 or the TITAN RTX's fp32 peak")
        with tempfile.TemporaryDirectory() as tmp:
            times = []
            for e in (None, env):
                cmd = run.eval_command(row, tesselctl, "nics", tmp, galvatron_env=e)
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
                if p.returncode != 0:
                    fail("galvatron_env: %s exited %d: %s" % (" ".join(cmd), p.returncode, p.stderr))
                times.append(json.loads(p.stdout)["plan"]["iter_time_s"])
            if not 0.9 * times[0] < times[1] < times[0]:
                fail("galvatron_env: measured figures priced %.4g s, built-in %.4g s" % (times[1], times[0]))


def check_edges_dp(runner, tesselctl, rows):
    """A row with plan.edges_dp (Galvatron's Megatron TP baseline: the embedding and
    the head data-parallel) is evaluated as a layer-wise plan: eval's answer has the
    runs dp8 / tp8 ×32 / dp8 on BERT-Huge-32 under TP 8, and the degree flags give way
    to --plan while the knob flags stay."""
    run = load_runner(runner)
    row = next((r for r in rows if r["id"] == "gb8-tp-bert32-b8"), None)
    if row is None or not row["plan"].get("edges_dp"):
        fail("rows.json lost gb8-tp-bert32-b8 or its edges_dp")
    with tempfile.TemporaryDirectory() as tmp:
        cmd = run.eval_command(row, tesselctl, "nics", tmp)
        out, err = run.run_eval(cmd, False)
        if err:
            fail("edges_dp: uniform plan: %s" % err)
        cmd2 = run.edges_dp_command(row, cmd, out, tmp)
        if "--plan" not in cmd2 or "--tp" in cmd2 or "--unfused-attn" not in cmd2:
            fail("edges_dp: command %s" % cmd2)
        out2, err = run.run_eval(cmd2, False)
        if err:
            fail("edges_dp: layer-wise plan: %s" % err)
        runs = [(x["first_layer"], x["count"], x["strategy"]) for x in out2["plan"]["stages"][0]["runs"]]
        if runs != [(0, 1, "dp8"), (1, 32, "tp8"), (33, 1, "dp8")]:
            fail("edges_dp: eval's runs %s" % runs)


def check_sources_table(root, rows):
    """bench/published/README.md "Sources" lists every source of rows.json once, with
    its row count: a source added to rows.json without its entry (what it is, where its
    plans come from), or an entry whose count went stale, fails here."""
    with open(os.path.join(root, "bench", "published", "README.md")) as f:
        text = f.read()
    start = text.find("\n## Sources\n")
    if start < 0:
        fail("README.md lost its Sources section")
    end = text.find("\n## ", start + 1)
    table = {}
    for m in re.finditer(r"^\| `([^`]+)` \| (\d+) \|", text[start:end], re.M):
        if m.group(1) in table:
            fail("README.md Sources: %s listed twice" % m.group(1))
        table[m.group(1)] = int(m.group(2))
    counts = {}
    for r in rows:
        counts[r["source"]] = counts.get(r["source"], 0) + 1
    if table != counts:
        fail("README.md Sources against rows.json: %s" % sorted(set(table.items()) ^ set(counts.items())))


def check_aggregate_links(runner, tesselctl):
    """`aggregate` with one NIC prices as `single` for every built-in link: the runner
    takes each link's figures from `tesselctl hardware --json` (its ring figure, the
    all-to-all's and the flex dispatcher's shares), not from a copy of its own. Priced
    on a two-node plan whose DP gradient ring, EP all-to-alls and (with
    --moe-flex-dispatcher) flex dispatcher all cross the link."""
    run = load_runner(runner)
    links = run.link_figures(tesselctl)
    if "ib400" not in links or "eth100" not in links:
        fail("link_figures: tesselctl hardware --json gave %s" % sorted(links))
    plan = ["--model", "GPT-OSS-20B", "--tp", "1", "--pp", "1", "--dp", "16", "--mbs", "1",
            "--batch", "64", "--ep", "16"]
    with tempfile.TemporaryDirectory() as tmp:
        for name in sorted(links):
            c = {"nodes": 2, "gpus_per_node": 8, "gpu": "H100-80G", "nic": name, "nics_per_node": 1}
            for extra in ([], ["--moe-flex-dispatcher"]):
                t = {}
                for topology in ("single", "aggregate"):
                    cluster = run.cluster_arg(c, topology, tmp, "links-" + name, tesselctl)
                    cmd = [tesselctl, "eval", "--local", "--no-search", "--json", "--cluster",
                           cluster] + plan + extra
                    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
                    if p.returncode != 0:
                        fail("%s exited %d: %s" % (" ".join(cmd), p.returncode, p.stderr))
                    t[topology] = json.loads(p.stdout)["plan"]["iter_time_s"]
                if abs(t["aggregate"] - t["single"]) > 1e-9 * t["single"]:
                    fail("link %s%s: aggregate with one NIC prices %.10g s, single %.10g s"
                         % (name, " (flex)" if extra else "", t["aggregate"], t["single"]))


def check_mb_pairs(root, rows):
    """mb_pairs.py (README.md "AMP's hetero-cluster rows at micro-batch 1–2"): on a pair
    built from known stage times its bounds hold (the slowest stage at the smaller
    micro-batch no faster than s_min, the others at the larger within the budget), a pair
    whose run with more micro-batches is the faster gives none, and on rows.json the pairs
    with a budget under 0.5 s are the two AMP hetero-cluster ones at micro-batch 2 -> 4."""
    spec = importlib.util.spec_from_file_location(
        "published_mb_pairs", os.path.join(root, "bench", "published", "mb_pairs.py"))
    mbp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mbp)
    s1, s2, k = [0.02, 0.03, 0.02, 0.09], [0.04, 0.05, 0.04, 0.15], 0.1  # stages at b, 2b
    t1 = k + sum(s1) + (16 - 1) * max(s1)
    t2 = k + sum(s2) + (8 - 1) * max(s2)
    s_min, budget = mbp.stage_bounds(t1, 16, t2, 8)
    if not (s_min <= max(s1) + 1e-12 and budget >= sum(s2) - max(s2) - 1e-12):
        fail("mb_pairs.py: bounds %.6g, %.6g do not hold for stages %s -> %s" % (s_min, budget, s1, s2))
    if mbp.stage_bounds(1.0, 16, 1.2, 8) is not None:
        fail("mb_pairs.py bounded a pair whose run with more micro-batches is the faster")
    found = mbp.pairs(rows)
    tight = sorted(q["ids"] for q in found if q["budget"] is not None and q["budget"] < 0.5)
    want = [("amp-hcl-17", "amp-hcl-29"), ("amp-hcl-37", "amp-hcl-40")]
    if tight != want:
        fail("mb_pairs.py: pairs with a budget under 0.5 s %s, want %s" % (tight, want))
    if len([q for q in found if q["source"] == "amp-aws"]) < 20:
        fail("mb_pairs.py pairs fewer than 20 of the amp-aws rows' plans")
    p = subprocess.run([sys.executable, os.path.join(root, "bench", "published", "mb_pairs.py"),
                        "--source", "nope"], capture_output=True, text=True, timeout=60)
    if p.returncode == 0 or "--source nope" not in p.stderr:
        fail("mb_pairs.py --source nope: exit %d, %r" % (p.returncode, p.stderr))

def main():
    root, tesselctl = sys.argv[1], sys.argv[2]
    runner = os.path.join(root, "bench", "published", "run.py")
    with open(os.path.join(root, "bench", "published", "rows.json")) as f:
        rows = json.load(f)["rows"]
    # two small sources: Table 2 ZeRO-3 (multi-node, so the topology matters)
    # and torchtitan (memory published)
    sources = ["narayanan21-t2-zero3", "torchtitan-h100"]
    ids = [r["id"] for r in rows if r["source"] in sources]
    if len(ids) < 4:
        fail("rows.json lost the rows of %s" % sources)
    for topology in ("aggregate", "single"):
        with tempfile.TemporaryDirectory() as tmp:
            out_json = os.path.join(tmp, "out.json")
            cmd = [sys.executable, runner, "--tesselctl", tesselctl, "--topology", topology,
                   "--json", out_json] + [a for s in sources for a in ("--source", s)]
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
            if p.returncode != 0:
                fail("%s exited %d: %s" % (" ".join(cmd), p.returncode, p.stderr))
            lines = p.stdout.splitlines()
            for rid in ids:
                hits = [l for l in lines if l.startswith(rid + " ")]
                if len(hits) != 1:
                    fail("%s: %d lines for row %s, want 1" % (topology, len(hits), rid))
            for src in sources:
                pat = re.compile(r"^\s+%s\s+rows\s+\d+\s+refused\s+\d+\s+mean \|err\|\s+[0-9.]+%%\s+max \|err\|\s+[0-9.]+%%"
                                 % re.escape(src))
                if not any(pat.match(l) for l in lines):
                    fail("%s: no per-source line with numeric errors for %s:\n%s" % (topology, src, p.stdout))
            if not any(l.startswith("leave-one-source-out") for l in lines):
                fail("%s: no leave-one-source-out line" % topology)
            if not any(l.startswith("targets:") and all(s in l for s in sources) for l in lines):
                fail("%s: no targets line" % topology)
            with open(out_json) as f:
                doc = json.load(f)
            if sorted(r["id"] for r in doc["rows"]) != sorted(ids):
                fail("%s: JSON rows differ from the selection" % topology)
    # the mixture-of-experts sources: rows with expert parallelism (a Megatron-LM
    # line), a schedule (a plan document) and rows evaluated with `unmodelled` parts;
    # and a row the runner refuses by its `refused` field: since cost model 41 no row
    # carries one (Nemotron 3 Super's ran), so the check marks one in a copy
    moe = ["mbridge-26.04.01", "deepseek-v3-report", "mcore-moe-readme"]
    moe_rows = [dict(r) for r in rows if r["source"] in moe]
    if not any("ep" in r["plan"] for r in moe_rows) \
            or not any(r.get("unmodelled") for r in moe_rows) or not any(r["plan"].get("schedule") for r in moe_rows):
        fail("rows.json lost the MoE rows of %s (ep, unmodelled, schedule)" % moe)
    if not any(r.get("refused") for r in moe_rows):
        moe_rows[-1]["refused"] = "a test's: the runner prints this row REFUSED and runs nothing"
    with tempfile.TemporaryDirectory() as tmp:
        out_json = os.path.join(tmp, "out.json")
        rows_json = os.path.join(tmp, "rows.json")
        with open(rows_json, "w") as f:
            json.dump({"rows": moe_rows}, f)
        cmd = [sys.executable, runner, "--tesselctl", tesselctl, "--json", out_json,
               "--rows", rows_json] + [a for s in moe for a in ("--source", s)]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            fail("%s exited %d: %s" % (" ".join(cmd), p.returncode, p.stderr))
        lines = p.stdout.splitlines()
        for r in moe_rows:
            hits = [l for l in lines if l.startswith(r["id"] + " ")]
            if len(hits) != 1:
                fail("moe: %d lines for row %s, want 1" % (len(hits), r["id"]))
            if r.get("refused") and "REFUSED  not expressible: " not in hits[0]:
                fail("moe: row %s has `refused` but its line is %r" % (r["id"], hits[0]))
            if r.get("unmodelled") and not any(l.startswith("  " + r["id"] + " ") for l in lines):
                fail("moe: row %s has `unmodelled` but no line under 'rows run with what eval does not price'"
                     % r["id"])
        pat = re.compile(r"^\s+mbridge-26\.04\.01\s+rows\s+\d+\s+refused\s+\d+\s+mean \|err\|\s+[0-9.]+%")
        if not any(pat.match(l) for l in lines):
            fail("moe: no per-source line with numeric errors for mbridge-26.04.01:\n" + p.stdout)
        with open(out_json) as f:
            doc = json.load(f)
        got = {r["id"]: r for r in doc["rows"]}
        if sorted(got) != sorted(r["id"] for r in moe_rows):
            fail("moe: JSON rows differ from the selection")
        for r in moe_rows:
            g = got[r["id"]]
            if r.get("unmodelled") and g.get("unmodelled") != r["unmodelled"]:
                fail("moe: JSON row %s lost its unmodelled list" % r["id"])
            if not g["ok"] and not g.get("error"):
                fail("moe: JSON row %s neither evaluated nor refused with a reason" % r["id"])
    check_sources_table(root, rows)
    check_aggregate_links(runner, tesselctl)
    check_etp(runner, tesselctl, rows)
    check_flex_backend(runner, tesselctl, rows)
    check_fused_srelu(runner, rows)
    check_samples_per_s(runner, rows)
    check_flop_conventions(runner, rows)
    check_preset_seq(runner)
    check_mpt(runner, tesselctl, rows)
    check_mpt_siblings(runner, rows)
    check_mpt_second_reading(runner, rows)
    check_mpt_state_twins(runner, rows)
    check_flash_attn(runner, tesselctl, rows)
    check_galvatron_env(runner, tesselctl, rows)
    check_edges_dp(runner, tesselctl, rows)
    check_bloom(runner, tesselctl, rows)
    check_bloom_tp(root, tesselctl, rows)
    check_mb_pairs(root, rows)
    check_sim_audit(root, tesselctl, rows)
    # an unknown source is an error, not an empty table
    p = subprocess.run([sys.executable, runner, "--tesselctl", tesselctl, "--source", "nope"],
                       capture_output=True, text=True, timeout=60)
    if p.returncode == 0:
        fail("--source nope exited 0")
    print("ok")


if __name__ == "__main__":
    main()
