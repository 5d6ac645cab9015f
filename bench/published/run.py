#!/usr/bin/env python3
"""run.py — hold Tessel's predicted iteration times to published training runs.

For every row of rows.json (a published run: model, cluster, plan, measured
figure) this runs `tesselctl eval --local --no-search --json` on the same
model, cluster and plan and prints measured against predicted seconds per
iteration, model TFLOP/s per GPU and memory; then per source the error
summary, a leave-one-source-out check of one global efficiency scale, and the
targets line. Rows with a `peer_prediction` (another planner's own model run
on the same row: AMP's p_cost, Calculon's total_time from calculon_peer.py)
get a `peer: WHO` line under their source, its error and Spearman computed as
Tessel's are (the published figure in seconds by the row's FLOP count).
Standard library only. See README.md in this directory.

usage: python3 bench/published/run.py [--tesselctl PATH] [--source KEY]...
           [--topology nics|aggregate|single] [--rows FILE] [--json FILE]
           [--amp-profile DIR] [--galvatron-env DIR] [--verbose]
"""
import argparse
import functools
import json
import math
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))  # the source tree: rows name HF configs under it

# Targets per source (the bench reports them; it never fails on them).
TARGET_MEAN, TARGET_MAX, TARGET_RHO = 7.0, 15.0, 0.9

@functools.lru_cache(maxsize=None)
def link_figures(tesselctl):
    """Each built-in link's figures as the build prices them (planner/cluster_hw.c, printed
    by `tesselctl hardware --json`): name -> (one NIC's ring figure in GB/s, the
    all-to-all's share of it, the flex dispatcher's share). The node-list and `aggregate`
    cluster files are written from them, so that `aggregate` with one NIC equals `single`
    (tests/published_bench_test.py check_aggregate_links) and no second copy of the table
    drifts from the cost model's."""
    out = subprocess.run([tesselctl, "hardware", "--json"], capture_output=True, text=True, check=True)
    return {l["name"]: (l["bw_bytes_per_s"] / 1e9, l["a2a_bw_bytes_per_s"] / l["bw_bytes_per_s"],
                        l["flex_bw_bytes_per_s"] / l["bw_bytes_per_s"])
            for l in json.loads(out.stdout)["links"]}


def link_of(links, nic):
    if nic not in links:
        raise ValueError("no figure for link %r in tesselctl hardware (known: %s)"
                         % (nic, ", ".join(sorted(links))))
    return links[nic]


def link_ratios(doc, figures):
    """A cluster file's all-to-all and flex shares (docs/cluster-format.md
    inter_a2a_ratio, inter_flex_ratio) from its links' figures: given where below 1, as
    the built-in link gives them; one pair of shares per file."""
    for i, key in ((1, "inter_a2a_ratio"), (2, "inter_flex_ratio")):
        shares = {f[i] for f in figures}
        if len(shares) > 1:
            raise ValueError("links with different %s in one cluster file: %s" % (key, sorted(shares)))
        share = shares.pop()
        if share < 1:
            doc[key] = share


def hf_config(m):
    """An HF-style config.json for a shape (docs/models.md, HuggingFace configs)."""
    if m["kind"] == "gpt2":
        cfg = {"model_type": "gpt2", "n_layer": m["layers"], "n_embd": m["hidden"],
               "n_head": m["heads"], "n_inner": m["ffn"], "n_positions": m["seq"],
               "vocab_size": m["vocab"]}
        # transformers' own GPT2Block where the row ran it (hf_config.h: the config's
        # activation, and GPT2Config's layer-wise scaling as the run set it)
        for key in ("activation_function", "scale_attn_by_inverse_layer_idx"):
            if key in m:
                cfg[key] = m[key]
        return cfg
    if m["kind"] == "bloom":  # ALiBi, embedding LayerNorm, FFN 4h (hf_config.h)
        if m["ffn"] != 4 * m["hidden"]:
            raise ValueError("a bloom model's FFN is 4 x hidden, not %d" % m["ffn"])
        return {"model_type": "bloom", "n_layer": m["layers"], "hidden_size": m["hidden"],
                "n_head": m["heads"], "vocab_size": m["vocab"], "seq_length": m["seq"]}
    if m["kind"] == "llama":
        return {"model_type": "llama", "num_hidden_layers": m["layers"],
                "hidden_size": m["hidden"], "num_attention_heads": m["heads"],
                "num_key_value_heads": m.get("kv_heads", m["heads"]),
                "intermediate_size": m["ffn"], "vocab_size": m["vocab"],
                "max_position_embeddings": m["seq"]}
    raise ValueError("model kind %r has no config writer (Tessel's model builder cannot express it)"
                     % m["kind"])


def node_list_json(c, tmpdir, row_id, tesselctl):
    """A cluster JSON file for a row whose nodes differ (AMP's heterogeneous clusters):
    each node's GPU type and count, and a bandwidth matrix in which each
    node pair gets the slower of the two nodes' NIC figures (link_figures)."""
    links = link_figures(tesselctl)
    nodes, pair, figures = [], [], []
    for n in c["node_list"]:
        figure = link_of(links, n["nic"])
        nodes.append({"type": n["type"], "gpus": n["gpus"], "count": n.get("count", 1)})
        pair += [figure[0]] * n.get("count", 1)
        figures.append(figure)
    matrix = [[0 if i == j else min(a, b) for j, b in enumerate(pair)]
              for i, a in enumerate(pair)]
    doc = {"comment": "bench/published row %s: node list, slower NIC per pair" % row_id,
           "nodes": nodes, "inter_gbps_matrix": matrix}
    link_ratios(doc, figures)
    path = os.path.join(tmpdir, row_id + ".cluster.json")
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def cluster_arg(c, topology, tmpdir, row_id, tesselctl):
    """The --cluster argument for a row: a short spec or a JSON file."""
    if c.get("node_list"):  # per-node GPU types and NICs: always a JSON file
        return node_list_json(c, tmpdir, row_id, tesselctl)
    nodes, gpn, gpu, nic, k = c["nodes"], c["gpus_per_node"], c["gpu"], c["nic"], c["nics_per_node"]
    # an NVLink domain of several nodes (GB200 NVL72: "nvl72"), in the spec as ":nvl72"
    nvl = ":" + c["nvlink_domain"] if c.get("nvlink_domain") else ""
    if nodes == 1 or not nic:
        return "%dx%dx%s%s" % (nodes, gpn, gpu, nvl)
    if topology == "single":
        return "%dx%dx%s%s:%s" % (nodes, gpn, gpu, nvl, nic)
    if topology == "nics":
        return "%dx%dx%s%s:%dx%s" % (nodes, gpn, gpu, nvl, k, nic)
    # aggregate: every NIC of a node summed into one node-to-node bandwidth, at the
    # link's own all-to-all and flex shares
    figure = link_of(link_figures(tesselctl), nic)
    doc = {"comment": "bench/published row %s: %d x %s aggregated" % (row_id, k, nic),
           "nodes": [{"type": gpu, "gpus": gpn, "count": nodes}],
           "inter_gbps": k * figure[0]}
    link_ratios(doc, [figure])
    if nvl:  # nvlN: N GPUs, i.e. N / gpus-per-node nodes, per domain (a smaller cluster is one)
        doc["nvlink_domain_nodes"] = min(nodes, int(c["nvlink_domain"][3:]) // gpn)
    path = os.path.join(tmpdir, row_id + ".cluster.json")
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def galvatron_env_figures(row, env_dir, peak_flops):
    """Galvatron's own measured figures of its testbed for a row that names them
    (rows.json `galvatron_env`), read from ENV_DIR, a checkout of Galvatron's paper-era
    tree (PKU-DAIR/Hetu df32daa tools/Galvatron): the GEMM efficiency = the measured
    layer forward rate (sum of the layers' forward FLOPs per sample over the sum of
    their measured ms per sample, `{model}/configs/forward_profiling_config.json`,
    written by profile_forward.py) / the GPU's peak; the intra-node bus bandwidth from
    the all-reduce coefficient (`env_configs/allreduce_bandwidth_*.json`, ms per MiB of
    ring bus traffic 2(n-1)/n x message, test_allreduce.py): 2^20 B / coe ms; the
    overlap slowdown (`env_configs/overlap_coefficient.json`)."""
    g = row["galvatron_env"]

    def load(rel):
        with open(os.path.join(env_dir, rel)) as f:
            return json.load(f)

    fwd = load(g["forward"])
    flops = ms = 0.0
    for key, count, gflops in g["layers"]:
        v = fwd
        for part in key.split("."):
            v = v[part]
        flops += count * gflops * 1e9
        ms += count * float(v)
    path, key = g["allreduce"]
    coe_ms_per_mib = float(load(path)[key])
    return {"efficiency": flops / (ms * 1e-3) / peak_flops,
            "intra_gbps": 2**20 / (coe_ms_per_mib * 1e-3) / 1e9,
            "overlap_slowdown": float(load(g["overlap"])["overlap_coe"])}


def galvatron_env_cluster(row, env_dir, peak_flops, tmpdir):
    """A cluster JSON (docs/cluster-format.md) of the row's cluster with the GPU type's
    efficiency and intra-node bandwidth, and the overlap slowdown, Galvatron measured."""
    c, fig = row["cluster"], galvatron_env_figures(row, env_dir, peak_flops)
    doc = {"comment": "bench/published row %s: Galvatron's measured figures of its testbed" % row["id"],
           "gpu_types": {c["gpu"]: {"efficiency": round(fig["efficiency"], 6),
                                    "intra_gbps": round(fig["intra_gbps"], 6)}},
           "nodes": [{"type": c["gpu"], "gpus": c["gpus_per_node"], "count": c["nodes"]}],
           "overlap_slowdown": fig["overlap_slowdown"]}
    if c["nodes"] > 1:
        doc["link"] = c["nic"]
    path = os.path.join(tmpdir, row["id"] + ".cluster.json")
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def gpu_peak_flops(tesselctl, gpu, fp32=False):
    """The GPU type's peak FLOP/s as tesselctl hardware --json gives it: the 16-bit
    tensor peak, or with fp32 the one an fp32 step's GEMMs run at (TF32 where the GPU
    has it; cost-model.md "fp32 training"), the peak the efficiency is taken of."""
    out = subprocess.run([tesselctl, "hardware", "--json"], capture_output=True, text=True, check=True)
    for g in json.loads(out.stdout)["gpus"]:
        if g["name"].lower() == gpu.lower():
            return g["fp32_peak_flops"] if fp32 else g["peak_flops"]
    raise ValueError("GPU type %r not in tesselctl hardware" % gpu)


def model_args(row, tmpdir):
    """--model / --hf-config and the sequence length of a row."""
    m = row["model"]
    if "preset" in m:
        cmd = ["--model", m["preset"]]
    elif "hf_config" in m:  # a config.json in the tree (tests/data/hf/...)
        cmd = ["--hf-config", os.path.join(ROOT, m["hf_config"]),
               "--name", m.get("name", os.path.splitext(os.path.basename(m["hf_config"]))[0])]
    else:
        path = os.path.join(tmpdir, row["id"] + ".config.json")
        with open(path, "w") as f:
            json.dump(hf_config(m), f)
        cmd = ["--hf-config", path, "--name", row["id"]]
    # the sequence as run, not the config's default (an HF config's window may be longer)
    if "seq" in m:
        cmd += ["--seq-len", str(m["seq"])]
    return cmd


def stage_counts(row):
    """Layers per pipeline rank (embedding and head included) where a row's split
    is uneven, as Megatron-LM splits its Transformer layers (eval_cfg.c
    even_split): --decoder-first/last-pipeline-num-layers (first_stage_layers,
    last_stage_layers), the others even; or the embedding and the loss counted
    as a layer each (account_embedding, account_loss). The rows with experts are
    Megatron-LM runs: their Transformer layers split evenly otherwise, as
    Megatron does (eval's flags alone balance by FLOPs). None: eval's split."""
    p = row["plan"]
    if p.get("layers_per_stage"):  # the split as run, given per stage
        return p["layers_per_stage"]
    f, l = p.get("first_stage_layers", 0), p.get("last_stage_layers", 0)
    ae, al = int(bool(p.get("account_embedding"))), int(bool(p.get("account_loss")))
    if not (f or l or ae or al) and ("ep" not in p or p["pp"] < 2):
        return None
    m = row["model"]
    nb = (m["layers"] if "layers" in m
          else PRESET_SHAPES[m["preset"]]["layers"] if m.get("preset") in PRESET_SHAPES
          else hf_config_of(m)["num_hidden_layers"])
    P = p["pp"]
    if ae or al:
        n = nb + ae + al
        if n % P:
            raise ValueError("%d layers + embedding/loss do not split over pp %d" % (nb, P))
        f, l = n // P - ae, n // P - al
    mid = P - (1 if f else 0) - (1 if l else 0)
    rest = nb - f - l
    if mid <= 0 or rest % mid:
        raise ValueError("%d layers do not split as first %d, last %d over pp %d" % (nb, f, l, P))
    blocks = [rest // mid] * P
    if f:
        blocks[0] = f
    if l:
        blocks[-1] = l
    blocks[0] += 1  # the embedding
    blocks[-1] += 1  # the head
    return blocks


def plan_args(row):
    """The PLAN part of the eval command, as eval's flags: degrees, batch,
    recompute (and Megatron's recompute modules), ZeRO, SP, interleave, context
    and expert parallelism, Megatron's split as --layers-per-stage, a schedule."""
    p = row["plan"]
    cmd = ["--tp", str(p["tp"]), "--pp", str(p["pp"]), "--dp", str(p["dp"]),
           "--sdp", str(p["sdp"]), "--mbs", str(p["mbs"]), "--batch", str(p["batch"]),
           "--ckpt", p["ckpt"]]
    if p.get("zero") in (1, 2):  # ZeRO-3 is --sdp, not --zero
        cmd += ["--zero", str(p["zero"])]
    if p.get("sp"):
        cmd += ["--sp"]
    if p.get("interleave", 1) > 1:
        cmd += ["--interleave", str(p["interleave"])]
    if isinstance(p.get("vp_group"), int):  # Megatron's micro-batches per group, as run
        cmd += ["--vp-group", str(p["vp_group"])]
    if p.get("cp", 1) > 1:  # context parallelism: the sequence split over CP ranks
        cmd += ["--cp", str(p["cp"]), "--cp-comm", p.get("cp_comm", "p2p")]
        if p.get("cp_shard"):  # FSDP over the CP ranks too (torchtitan's dp_shard_cp)
            cmd += ["--cp-shard"]
    if p.get("ep", 1) > 1:  # the MoE layers' experts over EP ranks of a stage
        cmd += ["--ep", str(p["ep"])]
    if p.get("etp", 1) > 1:  # each routed expert's FFN split over etp ranks (Megatron's ETP)
        cmd += ["--etp", str(p["etp"])]
    counts = stage_counts(row)
    if counts:
        cmd += ["--layers-per-stage", ",".join(str(c) for c in counts)]
    if p.get("schedule"):  # zbh1, zbv, dualpipev
        cmd += ["--schedule", p["schedule"]]
    if p.get("recompute_modules"):  # Megatron's --recompute-modules beside core_attn
        cmd += ["--recompute-modules", ",".join(p["recompute_modules"])]
    if p.get("cpu_offload_layers"):  # Megatron's --cpu-offloading-num-layers (activations)
        cmd += ["--cpu-offload-layers", str(p["cpu_offload_layers"])]
    return cmd


# rows.json attn_kernel values passed to eval even under --one-attn-figure: kernels no
# GPU's one figure stands for (FlashAttention v1 on the A100, flash1, and its Triton
# port, flash1-triton). Since cost model 142 every row's kernel is passed by default
# (README "Hopper's attention core by the kernel each stack ran")
ALWAYS_KERNELS = ("flash1", "flash1-triton")


def knob_args(row, amp_profile=None, attn_kernel=True):
    """Attention kernel, figures, precision and overlap: eval flags for every
    plan form (they win over what a --megatron-args line or a --plan says)."""
    p = row["plan"]
    cmd = []
    if p.get("attention", "").startswith("unfused"):  # kept scores, no flash kernel
        cmd += ["--unfused-attn"]
    if p.get("dropout") is False:  # trained without dropout
        cmd += ["--no-dropout"]
    if p.get("autocast"):  # PyTorch eager modules under torch.autocast (cost-model.md "Autocast")
        cmd += ["--autocast"]
    if p.get("block_fwd_runs") == 2:  # the stack ran each block's forward twice (AMP's fork)
        cmd += ["--double-block-fwd"]
    if p.get("eager"):  # modules run eagerly, no torch.compile (cost-model.md "Eager modules")
        cmd += ["--eager"]
    if p.get("mtp_layers"):  # multi-token-prediction depths trained (docs/models.md)
        cmd += ["--mtp-layers", str(p["mtp_layers"])]
    # blocks the stack kept bf16 under the FP8/NVFP4 recipe (Megatron-LM
    # --first-last-layers-bf16; docs/cost-model.md "Blocks kept bf16")
    if p.get("bf16_layers_start"):
        cmd += ["--bf16-layers-start", str(p["bf16_layers_start"])]
    if p.get("bf16_layers_end"):
        cmd += ["--bf16-layers-end", str(p["bf16_layers_end"])]
    if amp_profile and row["source"].startswith("amp-"):  # AMP's own layer times
        cmd += ["--amp-profile", amp_profile]
    # the fused attention kernel the row's stack ran (TE's cuDNN FusedAttention, SDPA's
    # FlashAttention-2, FlashAttention v1 or its Triton port), priced at its published
    # share by shape: by default since cost model 142 (README "Hopper's attention core by
    # the kernel each stack ran"); --one-attn-figure keeps the GPU's one figure for
    # flash2 and cudnn (the default before 140), never for flash1 / flash1-triton, which
    # no GPU's one figure stands for (README "The A100 by kernel")
    k = p.get("attn_kernel")
    if k and (attn_kernel or k in ALWAYS_KERNELS):
        cmd += ["--attn-kernel", k]
    # how the stack kept and synced gradients (docs/cost-model.md "Precision and
    # overlap"); a field left out keeps Tessel's executor's way
    if p.get("grad_reduce_bytes"):
        cmd += ["--grad-reduce-bytes", str(p["grad_reduce_bytes"])]
    if p.get("grad_buf_bytes"):  # the buffer's bytes where not the reduce's (DeepSpeed's fp32_allreduce)
        cmd += ["--grad-buf-bytes", str(p["grad_buf_bytes"])]
    if p.get("ds_grad_bucket"):  # DeepSpeed's ZeRO-0 gradient bucket (cost-model.md "DeepSpeed's gradient bucket")
        cmd += ["--ds-grad-bucket"]
    if p.get("sdp_layer_roots"):  # fairscale's FSDP with a root per layer (cost-model.md "FSDP with a root per layer")
        cmd += ["--sdp-layer-roots"]
    if p.get("sdp_nosync"):  # FSDP kept unsharded between micro-batches (cost-model.md "SDP without resharding")
        cmd += ["--sdp-nosync"]
    if p.get("sdp_keep_weights"):  # torch FSDP's SHARD_GRAD_OP (cost-model.md "FSDP's SHARD_GRAD_OP")
        cmd += ["--sdp-keep-weights"]
    if p.get("ds_bf16_optimizer"):  # DeepSpeed's BF16_Optimizer under PP (cost-model.md "DeepSpeed's BF16_Optimizer")
        cmd += ["--ds-bf16-optimizer"]
    if p.get("launch_blocking"):  # CUDA_LAUNCH_BLOCKING=1 (cost-model.md "Synchronous launches")
        cmd += ["--launch-blocking"]
    if p.get("ds_wall_clock"):  # DeepSpeed's wall_clock_breakdown (cost-model.md "DeepSpeed's synchronising timers")
        cmd += ["--ds-wall-clock"]
    if p.get("host_op_us"):  # the stack's host time per eager op, measured on its host (cost-model.md "Host dispatch")
        cmd += ["--host-op-us", str(p["host_op_us"])]
    if p.get("ds_zero3_v03"):  # DeepSpeed 0.3's ZeRO-3 (cost-model.md "DeepSpeed 0.3's ZeRO-3")
        cmd += ["--ds-zero3-v03"]
    if p.get("fp8_dpa"):  # TE's FP8 attention (cost-model.md "FP8 attention on a sliding window")
        cmd += ["--fp8-dpa"]
    if p.get("fp8_amax_tp_only"):  # TE < 1.6's amax over TP (cost-model.md "Delayed scaling's amax reduction over TP")
        cmd += ["--fp8-amax-tp-only"]
    if p.get("unfused_elementwise"):  # Megatron-LM v1.1.5's unfused kernels (cost-model.md "Megatron-LM's unfused kernels")
        cmd += ["--unfused-elementwise"]
    if p.get("fp32"):  # fp32 training, TF32 GEMMs where the GPU has them (cost-model.md "fp32 training")
        cmd += ["--fp32"]
    if p.get("fp16"):  # fp16 mixed precision with a loss scaler, as run (cost-model.md "fp16 mixed precision")
        cmd += ["--fp16"]
    if p.get("fp32_master") is False:
        cmd += ["--no-fp32-master"]
    if p.get("bf16_moments"):  # Adam's moments in bf16 beside the fp32 master
        cmd += ["--bf16-moments"]
    if p.get("lazy_grads"):  # gradients from each chunk's first backward (PyTorch FSDP)
        cmd += ["--lazy-grads"]
    if p.get("opt_step"):  # the stack's optimizer step (cost-model.md "The step as the stack runs it")
        cmd += ["--opt-step", p["opt_step"]]
    if p.get("norm_impl"):  # whose fused LayerNorm kernels (cost-model.md "apex's LayerNorm backward")
        cmd += ["--norm-impl", p["norm_impl"]]
    if p.get("ds_pipe_p2p"):  # DeepSpeed's pipeline p2p (cost-model.md "DeepSpeed's pipeline p2p")
        cmd += ["--ds-pipe-p2p"]
    if p.get("ds_pipe_engine"):  # DeepSpeed's PipelineEngine's blocking one-way p2p (cost-model.md "DeepSpeed's pipeline engine")
        cmd += ["--ds-pipe-engine"]
    if p.get("nccl_no_tree"):  # the stack's NCCL_ALGO=^tree (cost-model.md "NCCL's tree on two nodes")
        cmd += ["--nccl-no-tree"]
    if p.get("torch_pipelining"):  # torch.distributed.pipelining's stages (cost-model.md "Interleaved 1F1B", its blocking stacks)
        cmd += ["--torch-pipelining"]
    if p.get("tp_sync"):  # TP all-reduces between device syncs (cost-model.md "Synchronised TP collectives")
        cmd += ["--tp-sync"]
    if p.get("tp_whole_heads"):  # every head on each TP rank (cost-model.md "Attention heads kept whole under TP")
        cmd += ["--tp-whole-heads"]
    if "overlap_grad_reduce" in p:
        cmd += ["--overlap-grad-reduce" if p["overlap_grad_reduce"] else "--no-overlap-grad-reduce"]
    if p.get("overlap_param_gather"):
        cmd += ["--overlap-param-gather"]
    if p.get("overlap_tp_dgrad"):
        cmd += ["--overlap-tp-dgrad"]
    if p.get("tp_comm_overlap"):  # TE's userbuffers under the SP collectives (--tp-comm-overlap)
        cmd += ["--tp-comm-overlap"]
    if p.get("async_tp"):  # torch's micro-pipelined TP (torchtitan's AsyncTP; --async-tp)
        cmd += ["--async-tp"]
    if p.get("unfused_grad_accum"):
        cmd += ["--unfused-grad-accum"]
    if p.get("legacy_p2p"):
        cmd += ["--legacy-p2p"]
    # the precision of the linear GEMMs (docs/cost-model.md "FP8"): absent = bf16
    if p.get("fp8"):
        cmd += ["--fp8", p["fp8"]]
    if p.get("fp8_impl"):  # who runs the recipe: te (Transformer Engine, the default) or torchao
        cmd += ["--fp8-impl", p["fp8_impl"]]
    if p.get("loss_impl"):  # how the LM loss ran: exec (the default), torch, torch-compile, megatron, te, fused-xentropy, composer, megatron-fused
        cmd += ["--loss-impl", p["loss_impl"]]
    if p.get("fp8_param_gather"):  # FP8 weights, all-gathered in FP8 (Megatron-Bridge's FP8 presets)
        cmd += ["--fp8-param-gather"]
    if p.get("moe_bf16_experts"):  # the routed experts' GEMMs kept bf16 under FP8
        cmd += ["--moe-bf16-experts"]
    if p.get("moe_fp8_dispatch"):  # the MoE dispatch (and the combine's gradient) in FP8
        cmd += ["--moe-fp8-dispatch"]
    if p.get("moe_dispatcher") == "alltoall":  # Megatron-LM's all-to-all token dispatcher
        cmd += ["--moe-alltoall-dispatcher"]
    if p.get("moe_dispatcher") == "flex":  # HybridEP / DeepEP (DeepSeek-V3's own kernels)
        cmd += ["--moe-flex-dispatcher"]
        if p.get("moe_flex_backend"):  # which: hybridep or deepep (moe_flex_backend_note cites it)
            cmd += ["--moe-flex-backend", p["moe_flex_backend"]]
    if p.get("moe_a2a_overlap"):  # Megatron-LM's --overlap-moe-expert-parallel-comm (moe_a2a_overlap)
        cmd += ["--moe-a2a-overlap"]
    if p.get("moe_unfused_permute"):  # MCore v0.8's unfused token permutation (moe_utils.py)
        cmd += ["--moe-unfused-permute"]
    if p.get("moe_fused_mlp"):  # TE's op fuser for the experts (cutedsl_fused_grouped_mlp)
        cmd += ["--moe-fused-mlp"]
    if p.get("moe_fused_srelu"):  # the weighted squared ReLU fused (use_fused_weighted_squared_relu)
        cmd += ["--moe-fused-srelu"]
    if p.get("cuda_graph_impl") == "full_iteration":  # one graph for the forward-backward: no host floor
        cmd += ["--no-host-floor"]
    if p.get("cuda_graph_modules"):  # Megatron-core's per-layer CUDA graphs (cuda_graph_modules)
        cmd += ["--cuda-graph-modules", p["cuda_graph_modules"]]
    if p.get("module_precision"):  # Megatron-core's per-module quant_recipe (te_quant.cfg)
        cmd += ["--module-precision", p["module_precision"]]
    return cmd


def device_memory_gib(c):
    """The memory of a row's largest GPU: gpu_memory_gib where the row gives it (a GPU
    with more memory than Tessel's type), else the type's, which its name states
    (A100-80G: 80 GiB; a node_list names each node's type)."""
    if c.get("gpu_memory_gib"):
        return c["gpu_memory_gib"]
    types = [n["type"] for n in c["node_list"]] if c.get("node_list") else [c["gpu"]]
    return max(int(re.fullmatch(r".*-(\d+)G", t).group(1)) for t in types)


def eval_command(row, tesselctl, topology, tmpdir, amp_profile=None, attn_kernel=True,
                 galvatron_env=None):
    """The tesselctl eval command of a row. A published run ran within its devices'
    memory: eval holds it to the whole device (--memory), not to plan's default budget,
    which keeps a reserve back for what the cost model does not count (README.md,
    "Memory")."""
    c = row["cluster"]
    cmd = [tesselctl, "eval", "--local", "--no-search", "--json"] + model_args(row, tmpdir)
    if galvatron_env and row.get("galvatron_env"):  # Galvatron's measured figures of its testbed
        peak = gpu_peak_flops(tesselctl, c["gpu"], bool(row["plan"].get("fp32")))
        cluster = galvatron_env_cluster(row, galvatron_env, peak, tmpdir)
    else:
        cluster = cluster_arg(c, topology, tmpdir, row["id"], tesselctl)
    cmd += ["--cluster", cluster]
    cmd += ["--memory", "%dG" % device_memory_gib(c)]
    cmd += plan_args(row)
    return cmd + knob_args(row, amp_profile, attn_kernel)


def gpus(row):
    c = row["cluster"]
    return c["nodes"] * c["gpus_per_node"]


def matmul_params(m):
    """Parameters that take part in matmuls per token: the layers' weights
    and the output head (the input embedding is a lookup)."""
    h, f, l = m["hidden"], m["ffn"], m["layers"]
    kv = h * m.get("kv_heads", m["heads"]) // m["heads"]
    ffn = 3 * h * f if m["kind"] == "llama" else 2 * h * f  # SwiGLU has three
    return l * (2 * h * h + 2 * h * kv + ffn) + m["vocab"] * h


def flops_per_iter(row, tessel_model):
    """Model FLOPs of one iteration, by the row's convention (README.md)."""
    m, batch = row["model"], row["plan"]["batch"]
    if row["flops"] in ("moe", "megatron-2024"):  # from the HF config (README.md)
        cfg = hf_config_of(m)
        s = m.get("seq") or cfg.get("max_position_embeddings")
        mtp = row["plan"].get("mtp_layers", 0)  # MTP depths trained (counted as the Bridge counts them)
        per_token = moe_flops_per_token(cfg, s, mtp) if row["flops"] == "moe" else megatron_2024_flops_per_token(cfg, s)
        return batch * s * per_token
    if row["flops"] == "neox-2022":
        # GPT-NeoX's logged "approx flops per GPU" (megatron/logging.py get_flops,
        # unchanged from da0a017b, 2021-05-06, to 5f364017, 2023-09-27): 6 x the
        # parameters its get_total_params sums over every TP and PP rank (so the
        # TP-replicated LayerNorms and biases twice: the row's flops_params) plus
        # 60 s h l per token; recomputation not counted (README.md)
        cfg = hf_config_of(m)
        s, h, l = m["seq"], cfg["hidden_size"], cfg["num_hidden_layers"]
        return batch * s * (6 * m["flops_params"] + 60 * s * h * l)
    if row["flops"] in ("mpt", "fa2-paper"):
        # llm-foundry's MFU count (scripts/train/benchmarking/README.md "MFU"): per token
        # 3 x 2 x NumParams (every parameter, the embeddings too: the row's
        # flops_params, the table's NumParams) plus attention 3 x 4 l h s;
        # recomputation not counted. The FlashAttention-2 paper's (Dao 2023, Sec. 4.2:
        # 6 x seqlen x params + 12 x layers x hidden x seqlen^2 per sequence) is the same
        s, h, l = m["seq"], m["hidden"], m["layers"]
        return batch * s * (6 * m["flops_params"] + 12 * l * h * s)
    if row["flops"] == "3fwd":  # forward + backward of a preset's count (docs/models.md)
        return 3 * m["fwd_gflops_per_sample"] * 1e9 * batch
    if "preset" in m:  # shape of the preset, as bench/torch_gpt_step.py states it, at
        # the row's own sequence where it sets one (eval is run at --seq-len: command())
        m = dict(PRESET_SHAPES[m["preset"]], **({"seq": m["seq"]} if "seq" in m else {}))
    s, l, h, V = m["seq"], m["layers"], m["hidden"], m["vocab"]
    if row["flops"] == "narayanan21":
        # Narayanan et al. 2021 Eq. (3), full recomputation counted (96 = 4 x 24)
        return 96 * batch * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h))
    if row["flops"] == "fa-2022":
        # flash-attention's training/README.md "Training speed": Eq. (3) scaled by 3/4,
        # the model FLOPs without the recomputation's forward (72 = 3 x 24)
        return 72 * batch * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h))
    if row["flops"] == "6n-causal":
        # the same with the causal core's half, 6 l h s: Megatron-LM's count since 2025
        # and Megatron-Bridge's flop_utils.py (README.md); recomputation is not counted
        return batch * s * (6 * matmul_params(m) + 6 * l * h * s)
    # 6 x matmul parameters per token plus attention 12 l h s (torchtitan's
    # get_num_flop_per_token); recomputation is not counted
    return batch * s * (6 * matmul_params(m) + 12 * l * h * s)


# The HF configs the mixture-of-experts presets stand for (docs/models.md: the
# preset and the config build the same layers), for the FLOP count.
PRESET_HF_CONFIGS = {"DeepSeek-V3": "tests/data/hf/deepseek_v3.json",
                     "Mixtral-8x7B": "tests/data/hf/mixtral.json",
                     "GPT-OSS-120B": "tests/data/hf/gpt_oss_120b.json"}


def hf_config_of(m):
    path = m.get("hf_config") or PRESET_HF_CONFIGS.get(m.get("preset"))
    if path is None:
        raise ValueError("no HF config for the FLOPs of model %s" % (m.get("preset") or m))
    with open(os.path.join(ROOT, path)) as f:
        return json.load(f)


def moe_shape(cfg):
    """Per layer of an HF MoE config (mixtral, qwen2_moe, qwen3_moe,
    deepseek_v2/v3): [(attention matmul params, attention width a·(d_qk + d_v),
    FFN matmul params one token uses)], and the head's h·V."""
    h, l, a = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["num_attention_heads"]
    t = cfg["model_type"]
    if cfg.get("kv_lora_rank"):  # multi-head latent attention (DeepSeek-V2/V3)
        q, c = cfg.get("q_lora_rank"), cfg["kv_lora_rank"]
        n, r, v = cfg["qk_nope_head_dim"], cfg["qk_rope_head_dim"], cfg["v_head_dim"]
        attn = (h * q + q * a * (n + r) if q else h * a * (n + r)) + h * (c + r) + c * a * (n + v) + a * v * h
        width = a * (n + r + v)
    else:  # grouped-query attention
        d = cfg.get("head_dim") or h // a
        kv = cfg.get("num_key_value_heads", a)
        attn = 2 * h * a * d + 2 * h * kv * d
        width = 2 * a * d
    if t == "mixtral":
        E, f_e, f_s, shared_gate = cfg["num_local_experts"], cfg["intermediate_size"], 0, 0
    elif t.startswith("deepseek"):
        E, f_e = cfg["n_routed_experts"], cfg["moe_intermediate_size"]
        f_s, shared_gate = cfg.get("n_shared_experts", 0) * f_e, 0
    elif t in ("qwen2_moe", "qwen3_moe"):
        E, f_e = cfg["num_experts"], cfg["moe_intermediate_size"]
        f_s = cfg.get("shared_expert_intermediate_size", 0)
        shared_gate = h if f_s else 0  # Qwen2-MoE's sigmoid gate of the shared expert
    elif t == "gpt_oss":  # every layer MoE, no shared expert
        E, f_e, f_s, shared_gate = cfg["num_local_experts"], cfg["intermediate_size"], 0, 0
    else:
        raise ValueError("model_type %r: no MoE FLOP count in run.py" % t)
    k = cfg["num_experts_per_tok"]
    moe_ffn = h * E + k * 3 * h * f_e + 3 * h * f_s + shared_gate  # router, top-k, shared
    dense_ffn = 3 * h * cfg["intermediate_size"]
    layers = []
    for i in range(l):
        if t.startswith("deepseek"):
            dense = i < cfg.get("first_k_dense_replace", 0) or i % cfg.get("moe_layer_freq", 1) != 0
        elif t in ("qwen2_moe", "qwen3_moe"):
            step = cfg.get("decoder_sparse_step", 1)
            dense = i in cfg.get("mlp_only_layers", []) or (i + 1) % step != 0
        else:
            dense = False
        # keys per query of the causal core: s/2, or a sliding window's w (gpt-oss)
        window = cfg.get("sliding_window") if cfg.get("layer_types", ["full"] * l)[i] == "sliding_attention" else None
        layers.append((attn, width, dense_ffn if dense else moe_ffn, window))
    return layers, h * cfg["vocab_size"]


def hybrid_flops_per_token(cfg, s, mtp=0):
    """A hybrid Mamba-2 / attention / MLP / MoE model (nemotron_h), as
    Megatron-Bridge counts it (src/megatron/bridge/training/utils/flop_utils.py
    hybrid_flops at 21d102f5e, README.md): 3 x the forward of each block by the
    hybrid pattern. Mamba: in_proj 2·h·(2·d + 2·G·N + H) and out_proj 2·d·h with
    d = 2·h (its d_in, not H·P), the scan 7·d·N; attention 4·h·q·(h + h·g/a + s/2)
    with q = a·head_dim/h (causal); MLP 4·4·h² (its fixed expansion 4); MoE
    4·h·f·k + 4·h·f_s (no router), under latent MoE (moe_latent_size ℓ)
    4·ℓ·f·k + 4·h·ℓ + 4·h·f_s; the logits 2·h·V. With mtp MTP depths: each
    depth's blocks (mtp_hybrid_override_pattern) and its logits again (no eh_proj)."""
    h, a, V = cfg["hidden_size"], cfg["num_attention_heads"], cfg["vocab_size"]
    pat = cfg["hybrid_override_pattern"]
    g = cfg.get("num_key_value_heads", a)
    q = (cfg.get("head_dim") or h // a) * a / h
    d, G, N, H = 2 * h, cfg["n_groups"], cfg["ssm_state_size"], cfg["mamba_num_heads"]
    mamba = 2 * h * (2 * d + 2 * G * N + H) + 7 * d * N + 2 * d * h
    attn = 4 * h * q * (h + h * g / a + s / 2)
    mlp = 4 * 4 * h * h
    lat = cfg.get("moe_latent_size")
    routed = (4 * (lat or h) * cfg.get("moe_intermediate_size", 0) * cfg.get("num_experts_per_tok", 0)
              + (4 * h * lat if lat else 0))
    moe = routed + 4 * h * cfg.get("moe_shared_expert_intermediate_size", 0)
    per = {"M": mamba, "*": attn, "-": mlp, "E": moe}
    depth = sum(per[c] for c in cfg.get("mtp_hybrid_override_pattern", "")) if mtp else 0
    return 3 * (sum(per[c] for c in pat) + mtp * depth + 2 * h * V * (1 + mtp))


def moe_flops_per_token(cfg, s, mtp=0):
    """6 x the matmul parameters one token uses (attention incl. MLA, router,
    top-k and shared experts, dense FFNs, LM head) + causal attention
    3·s·a·(d_qk + d_v) per layer (Megatron-LM's count, README.md), a sliding
    window's layer 6·w·a·(d_qk + d_v); with mtp MTP depths each one more layer
    as the last, eh_proj 2·h² and its norms 3·h, and the logits again
    (Megatron-Bridge flop_utils.py transformer_flops at 21d102f5e); a hybrid
    (nemotron_h) as hybrid_flops_per_token counts it."""
    if cfg["model_type"] == "nemotron_h":
        return hybrid_flops_per_token(cfg, s, mtp)
    layers, head = moe_shape(cfg)
    per = [6 * (attn + ffn) + 6 * (min(w, s / 2) if w else s / 2) * width
           for attn, width, ffn, w in layers]
    h = cfg["hidden_size"]
    return sum(per) + mtp * (per[-1] + 6 * (2 * h * h + 3 * h)) + 6 * head * (1 + mtp)


def megatron_2024_flops_per_token(cfg, s):
    """Megatron-LM core_v0.9.0 num_floating_point_operations per token
    (megatron/training/training.py): 12·l·h²·[(1 + g/a + s/h)·(q/h) + (f/h)·k·3/2
    + V/(2·l·h)], SwiGLU, no router, non-causal attention."""
    h, l, a = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["num_attention_heads"]
    g = cfg.get("num_key_value_heads", a)
    q = (cfg.get("head_dim") or h // a) * a
    f = cfg.get("moe_intermediate_size") or cfg["intermediate_size"]
    k = cfg["num_experts_per_tok"]
    return 12 * l * h * h * ((1 + g / a + s / h) * (q / h) + (f / h) * k * 1.5 + cfg["vocab_size"] / (2 * l * h))


PRESET_SHAPES = {  # planner/model_presets.c, as bench/torch_gpt_step.py trains them
    "GPT2-345M": {"kind": "gpt2", "layers": 24, "hidden": 1024, "heads": 16, "ffn": 4096,
                  "vocab": 50257, "seq": 1024},
    "GPT2-1.3B": {"kind": "gpt2", "layers": 24, "hidden": 2048, "heads": 32, "ffn": 8192,
                  "vocab": 50257, "seq": 1024},
    "Llama3-8B": {"kind": "llama", "layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8,
                  "ffn": 14336, "vocab": 128256, "seq": 8192},
    "Llama3-70B": {"kind": "llama", "layers": 80, "hidden": 8192, "heads": 64, "kv_heads": 8,
                   "ffn": 28672, "vocab": 128256, "seq": 8192},
    "Llama3-405B": {"kind": "llama", "layers": 126, "hidden": 16384, "heads": 128, "kv_heads": 8,
                    "ffn": 53248, "vocab": 128256, "seq": 8192},
}


def measured_seconds(row, flops):
    """The published figure as seconds per iteration (README.md)."""
    ms = row["measured"]
    if ms["metric"] == "iter_s":
        return ms["value"]
    if ms["metric"] == "samples_per_s":  # a throughput at the row's global batch (Galvatron-BMW's tables)
        return row["plan"]["batch"] / ms["value"]
    if ms["metric"] == "tflops_per_gpu":  # t = F / (X n)
        return flops / (ms["value"] * 1e12 * gpus(row))
    tokens = row["plan"]["batch"] * row["model"]["seq"]  # per iteration
    if ms["metric"] == "tokens_per_s_per_gpu":  # tokens one GPU sees per iteration / rate
        return tokens / gpus(row) / ms["value"]
    if ms["metric"] == "tokens_per_s":  # the whole run's rate (llm-foundry's Throughput (T/s))
        return tokens / ms["value"]
    if ms["metric"] == "gpu_hours_per_trillion_tokens":  # H GPU-hours per 1e12 tokens
        return tokens * ms["value"] * 3600 / 1e12 / gpus(row)
    raise ValueError("unknown metric %r" % ms["metric"])


def run_eval(cmd, verbose):
    """(eval's JSON document, None) or (None, why it refused)."""
    if verbose:
        print("$ " + " ".join("'%s'" % a if " " in a else a for a in cmd))
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        lines = (proc.stderr.strip() or proc.stdout.strip() or "no message").splitlines()
        return None, "exit %d: %s" % (proc.returncode, lines[-1] if lines else "")
    return json.loads(proc.stdout), None


def peer_figures(row):
    """A row's peer prediction (rows.json `peer_prediction`: AMP's p_cost,
    Calculon's total_time) held to the measured figure as Tessel's is: the
    published figure in seconds by measured_seconds and the row's FLOP
    convention, and both as model TFLOP/s per GPU for the rank correlation.
    Needs no Tessel run (the FLOP conventions take the row's own shape)."""
    peer = row["peer_prediction"]
    flops = flops_per_iter(row, None)
    meas = measured_seconds(row, flops)
    n = gpus(row)
    return {"peer": peer.get("who", "peer"), "peer_s": peer["iter_s"], "peer_measured_s": meas,
            "peer_error_pct": 100 * (peer["iter_s"] - meas) / meas,
            "peer_tflops": flops / peer["iter_s"] / n / 1e12,
            "peer_measured_tflops": flops / meas / n / 1e12}


def edges_dp_command(row, cmd, out, tmpdir):
    """The eval command of a row whose embedding and head ran data-parallel over
    every device of the (single) stage while its Transformer layers ran the plan's
    strategy (rows.json plan.edges_dp: Galvatron's runtime, tp_sizes_whole_model =
    [1] + layers + [1, 1], dp_types_whole_model = [0] + layers + [0, 0]): the uniform
    plan eval gave back (`out`), its first and last layer's run set to dp N, passed
    as --plan in place of the degree flags; the knob flags stay after it."""
    plan = out["plan"]
    if plan["pp"] != 1 or len(plan["stages"]) != 1:
        raise ValueError("edges_dp: only a plan of one stage (pp 1)")
    n, layers = gpus(row), out["model"]["layers"]
    inner = plan["stages"][0]["runs"][0]["strategy"]
    plan["stages"][0]["runs"] = [{"first_layer": 0, "count": 1, "strategy": "dp%d" % n},
                                 {"first_layer": 1, "count": layers - 2, "strategy": inner},
                                 {"first_layer": layers - 1, "count": 1, "strategy": "dp%d" % n}]
    path = os.path.join(tmpdir, row["id"] + ".plan.json")
    with open(path, "w") as f:
        json.dump(out, f)
    first, last = cmd.index("--tp"), cmd.index("--ckpt") + 2  # plan_args' degree flags
    return cmd[:first] + ["--plan", path] + cmd[last:]


def run_row(row, args, tmpdir):
    res = {"id": row["id"], "source": row["source"], "ok": False}
    if row.get("peer_prediction"):  # the peer's own model, beside Tessel's
        try:
            res.update(peer_figures(row))
        except (ValueError, KeyError) as e:
            res["peer_error"] = "runner: %s" % e
    if row.get("unmodelled"):
        res["unmodelled"] = row["unmodelled"]
    if row.get("refused"):  # what the row needs that Tessel cannot express yet
        res["error"] = "not expressible: %s" % row["refused"]
        return res
    try:
        cmd = eval_command(row, args.tesselctl, args.topology, tmpdir, args.amp_profile,
                           not args.one_attn_figure, args.galvatron_env)
        out, err = run_eval(cmd, args.verbose)
        if out is not None and row["plan"].get("edges_dp"):  # the layer-wise plan as run
            out, err = run_eval(edges_dp_command(row, cmd, out, tmpdir), args.verbose)
    except (ValueError, KeyError, OSError) as e:
        res["error"] = "runner: %s" % e
        return res
    if err:
        res["error"] = err
        return res
    flops = flops_per_iter(row, out["model"])
    res["measured_s"] = measured_seconds(row, flops)
    res["predicted_s"] = out["plan"]["iter_time_s"]
    n = gpus(row)
    res["measured_tflops"] = flops / res["measured_s"] / n / 1e12
    res["predicted_tflops"] = flops / res["predicted_s"] / n / 1e12
    res["error_pct"] = 100 * (res["predicted_s"] - res["measured_s"]) / res["measured_s"]
    res["params_b"] = out["model"]["params"] / 1e9
    pub = row["model"].get("published_params_b")
    res["params_off"] = bool(pub and abs(res["params_b"] - pub) > 0.05 * pub)
    if row["measured"].get("model_tflops_per_gpu"):  # the source's own count, to check the FLOP convention
        res["published_tflops"] = row["measured"]["model_tflops_per_gpu"]
    res["predicted_mem_gib"] = out["plan"]["peak_bytes"] / 2**30
    if row["measured"].get("memory_gib") is not None:
        res["measured_mem_gib"] = row["measured"]["memory_gib"]
        res["mem_error_pct"] = 100 * (res["predicted_mem_gib"] - res["measured_mem_gib"]) / res["measured_mem_gib"]
    res["ok"] = True
    return res


def ranks(xs):
    """1-based ranks, ties get their average rank."""
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(a, b):
    if len(a) < 3:
        return None
    ra, rb = ranks(a), ranks(b)
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra)
    vb = sum((y - mb) ** 2 for y in rb)
    if va == 0 or vb == 0:
        return None
    return cov / math.sqrt(va * vb)


def summarize(results, sources):
    out = {}
    for src in sources:
        rs = [r for r in results if r["source"] == src]
        ok = [r for r in rs if r["ok"]]
        errs = [abs(r["error_pct"]) for r in ok]
        mems = [abs(r["mem_error_pct"]) for r in ok if "mem_error_pct" in r]
        rho = spearman([r["predicted_tflops"] for r in ok], [r["measured_tflops"] for r in ok])
        s = {"rows": len(rs), "evaluated": len(ok), "refused": len(rs) - len(ok),
             "mean_abs_pct": sum(errs) / len(errs) if errs else None,
             "max_abs_pct": max(errs) if errs else None, "spearman": rho,
             "mem_mean_abs_pct": sum(mems) / len(mems) if mems else None}
        # a peer's own predictions (AMP's p_cost, Calculon's), over every row
        # that has one, by the same error and the same rank correlation of
        # model TFLOP/s per GPU as Tessel's
        pr = [r for r in rs if "peer_s" in r]
        if pr:
            perr = [abs(r["peer_error_pct"]) for r in pr]
            s["peer"] = {"who": pr[0]["peer"], "rows": len(pr),
                         "mean_abs_pct": sum(perr) / len(perr), "max_abs_pct": max(perr),
                         "spearman": spearman([r["peer_tflops"] for r in pr],
                                              [r["peer_measured_tflops"] for r in pr])}
        # A refused row is a miss; so is a source with too few rows for a rank
        # correlation only when it has three or more (below that rho is n/a).
        s["pass"] = (s["refused"] == 0 and errs != [] and s["mean_abs_pct"] <= TARGET_MEAN
                     and s["max_abs_pct"] <= TARGET_MAX and (rho is None or rho >= TARGET_RHO))
        out[src] = s
    return out


def leave_one_source_out(results, sources):
    """Per source: fit one scale c on the OTHER sources' rows (least squares
    in log time, log c = weighted mean of log(measured / predicted)), apply it
    here. Each source weighs the same in the fit, so that AMP's 47 trials do
    not outvote ten Table 1 rows."""
    ok = [r for r in results if r["ok"]]
    logs = {}
    for r in ok:
        logs.setdefault(r["source"], []).append(math.log(r["measured_s"] / r["predicted_s"]))
    out = {}
    for src in sources:
        train = [sum(v) / len(v) for k, v in logs.items() if k != src]
        test = [r for r in ok if r["source"] == src]
        if not train or not test:
            out[src] = None
            continue
        c = math.exp(sum(train) / len(train))
        errs = [abs(100 * (c * r["predicted_s"] - r["measured_s"]) / r["measured_s"]) for r in test]
        out[src] = {"scale": c, "mean_abs_pct": sum(errs) / len(errs), "max_abs_pct": max(errs)}
    return out


def fmt(x, spec, none="-"):
    return none if x is None else format(x, spec)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tesselctl", default="build/client/tesselctl")
    ap.add_argument("--rows", default=os.path.join(HERE, "rows.json"))
    ap.add_argument("--source", action="append", help="run only this source (repeatable)")
    ap.add_argument("--topology", choices=("nics", "aggregate", "single"), default="nics",
                    help="how NICs per node reach the cluster spec (README.md)")
    ap.add_argument("--json", metavar="FILE", help="write rows and summaries as JSON")
    ap.add_argument("--amp-profile", metavar="DIR",
                    help="pass --amp-profile DIR (AMP's src/known_cost) to the amp-* rows")
    ap.add_argument("--galvatron-env", metavar="DIR",
                    help="price the rows with a galvatron_env field on Galvatron's measured figures of its "
                         "testbed, read from DIR (PKU-DAIR/Hetu df32daa tools/Galvatron): GEMM efficiency "
                         "from the layer forward times, intra-node bandwidth, overlap")
    ap.add_argument("--verbose", action="store_true", help="print each tesselctl command")
    ap.add_argument("--one-attn-figure", action="store_true",
                    help="price the flash2 and cudnn rows at the GPU's one fused-attention figure "
                         "(the default before cost model 142); default: each row's kernel "
                         "(rows.json attn_kernel) at its published share by shape (eval "
                         "--attn-kernel); flash1 and flash1-triton are passed either way")
    ap.add_argument("--attn-kernel", action="store_true",
                    help="each row's kernel: the default since cost model 142 (kept for old "
                         "command lines)")
    args = ap.parse_args()

    with open(args.rows) as f:
        rows = json.load(f)["rows"]
    if args.source:
        known = {r["source"] for r in rows}
        bad = [s for s in args.source if s not in known]
        if bad:
            sys.exit("run.py: unknown source %s; known: %s" % (", ".join(bad), ", ".join(sorted(known))))
        rows = [r for r in rows if r["source"] in args.source]
    sources = list(dict.fromkeys(r["source"] for r in rows))

    with tempfile.TemporaryDirectory(prefix="tessel-published-") as tmpdir:
        results = [run_row(r, args, tmpdir) for r in rows]

    if args.amp_profile:
        print("figures: amp-* rows priced on --amp-profile %s" % args.amp_profile)
    if args.galvatron_env:
        print("figures: rows with galvatron_env priced on Galvatron's measured figures in %s" % args.galvatron_env)
    print("topology: %s   (error = (predicted - measured) / measured; TFLOP/s = model FLOP/s per GPU)" % args.topology)
    print("%-28s %-20s %10s %10s %8s %8s %8s %15s %9s %9s" % (
        "row", "source", "meas s", "pred s", "err %", "meas TF", "pred TF", "mem meas/pred", "params B",
        "peer s"))
    for r in results:
        peer = "%.4g" % r["peer_s"] if "peer_s" in r else "-"
        if not r["ok"]:
            print("%-28s %-20s REFUSED  %s  (peer s %s)" % (r["id"], r["source"], r["error"], peer))
            continue
        mem = "%.1f/%.1f" % (r["measured_mem_gib"], r["predicted_mem_gib"]) if "measured_mem_gib" in r else "-"
        # Tessel's parameter count, flagged '!' when over 5% from the paper's
        params = "%.2f%s" % (r["params_b"], "!" if r.get("params_off") else "")
        print("%-28s %-20s %10.4g %10.4g %+8.1f %8.1f %8.1f %15s %9s %9s" % (
            r["id"], r["source"], r["measured_s"], r["predicted_s"], r["error_pct"],
            r["measured_tflops"], r["predicted_tflops"], mem, params, peer))

    bad_peer = [r for r in results if r.get("peer_error")]
    if bad_peer:  # a peer figure the runner could not hold to the measured one
        print()
        print("peer predictions left out:")
        for r in bad_peer:
            print("  %-26s %s" % (r["id"], r["peer_error"]))

    gaps = [r for r in results if r.get("unmodelled")]
    if gaps:  # evaluated, but with parts of the run eval cannot express (rows.json "unmodelled")
        print()
        print("rows run with what eval does not price (priced as Tessel's nearest; README.md \"unmodelled\"):")
        for r in gaps:
            print("  %-26s %s" % (r["id"], "; ".join(r["unmodelled"])))

    summary = summarize(results, sources)
    loso = leave_one_source_out(results, sources)
    print()
    print("per source (targets: mean |err| <= %g%%, max |err| <= %g%%, Spearman of TFLOP/s >= %g; a refused row is a miss)"
          % (TARGET_MEAN, TARGET_MAX, TARGET_RHO))
    for src in sources:
        s = summary[src]
        print("  %-22s rows %2d  refused %2d  mean |err| %6s%%  max |err| %6s%%  spearman %5s  mem |err| %6s%%  %s" % (
            src, s["rows"], s["refused"], fmt(s["mean_abs_pct"], ".1f"), fmt(s["max_abs_pct"], ".1f"),
            fmt(s["spearman"], ".2f", "n/a"), fmt(s["mem_mean_abs_pct"], ".1f"),
            "PASS" if s["pass"] else "MISS"))
        if s.get("peer"):
            q = s["peer"]
            print("  %-22s rows %2d  (the peer's own model: %s)  mean |err| %6.1f%%  max |err| %6.1f%%  spearman %5s" % (
                "  peer: " + q["who"], q["rows"], q["who"], q["mean_abs_pct"], q["max_abs_pct"],
                fmt(q["spearman"], ".2f", "n/a")))
    print()
    print("leave-one-source-out (diagnostic, nothing is fitted in Tessel): one global time scale c fitted on the other sources, applied to this one")
    for src in sources:
        l = loso[src]
        if l is None:
            print("  %-22s n/a (no evaluated rows here or elsewhere)" % src)
        else:
            print("  %-22s c = %.3f  mean |err| %6.1f%%  max |err| %6.1f%%" % (
                src, l["scale"], l["mean_abs_pct"], l["max_abs_pct"]))
    print()
    print("targets: " + "  ".join("%s %s" % (src, "PASS" if summary[src]["pass"] else "MISS") for src in sources))

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"topology": args.topology, "rows": results, "sources": summary,
                       "leave_one_source_out": loso}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
