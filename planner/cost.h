/*
 * cost.h — time and memory of one layer under one strategy for one micro-batch
 * (Galvatron-BMW Sec. III-A and V, AMP 3.4). Every figure the planner prints is
 * a sum of these.
 *
 * Notation: a stage runs on a block of G devices; the strategy has TP degree t,
 * DP degree d, SDP degree z (data width w = d·z, t·w = G); the micro-batch has
 * B_m samples, so each device processes n = B_m / w samples (B_m must divide by w,
 * otherwise the strategy is infeasible for this micro-batch). P is the layer's
 * parameter count, F its forward FLOPs per sample, X its fastest device rate
 * (peak × efficiency, the slowest device of the block), k the overlap slowdown.
 *
 * Collectives (ring; M = bytes of the full buffer):
 *   all-reduce       2(n−1)/n · M / bw
 *   all-gather       (n−1)/n · M / bw
 *   reduce-scatter   (n−1)/n · M / bw
 *   p2p              M / bw
 * STACK mode (the default): bw = the dimension's bus bandwidth over the topology,
 * NICs shared by the concurrent groups (tsl_cluster_dim_busbw), and each
 * collective costs what NCCL's tuner predicts for its cheapest choice: the least
 * over algorithm (ring or tree for all-reduce, ring or PAT for the others) and
 * protocol (LL, LL128, Simple) of α(choice, n ranks, k NVLink domains) + M over
 * that choice's bandwidth (bw times the protocol's factor; cluster.h,
 * tsl_cluster_coll_allreduce_s). PAPER mode: bw = the slowest link of the group
 * (AMP Eq. 3), no α, the ring bandwidth terms above — the formulas before the
 * topology, bit for bit. tsl_cost_allreduce_s & co. are those bandwidth terms;
 * the α's ride in tsl_strategy_bw_t.
 *
 * Time of one micro-batch:
 *   compute_f  = roofline of the layer's GEMMs and elementwise work (roofline.h;
 *                F · n / (t · X) when the device has no memory-bandwidth figure)
 *   compute_b  = roofline of each forward GEMM's two gradient GEMMs (dX, dW, by
 *                their own shapes), the attention core's backward and the
 *                elementwise backward (roofline.h; 2 · compute_f without bandwidth)
 *   tp_f       = tp_allreduces × all-reduce(2·s·h·n bytes, t)   (same again in backward)
 *   sdp_gather = all-gather(2·P/t bytes, z)          (once in forward, once in backward)
 *   tp_b       = tp_f, or with knobs.overlap_tp_dgrad (STACK) what the column-
 *                parallel dX/dW GEMMs (roofline.h tsl_roofline_layer_col_frac) do
 *                not hide: overlap(dW, tp_f) − dW; with SP tp_f/2 (the all-gather)
 *                + overlap(dX, tp_f/2) − dX (the input re-gathered for dW)
 *                + overlap(dW, tp_f/2) − dW (the dX reduce-scatter); a decoder
 *                layer adds all-reduce(2·t·h·n bytes, t_TP) in STACK: the encoder
 *                output's gradient from its cross-attention's K/V (cost model 76)
 *   recompute  = compute_f + tp_f                    (CKPT only, in backward: the
 *                re-run forward's collectives exposed, as the forward's)
 *   fwd_s      = compute_f + tp_f + sdp_gather
 *   bwd_s      = compute_b + tp_b + sdp_gather + recompute      (no gradient sync;
 *                compute_b with the gradient accumulation of a later micro-batch
 *                where it is a kernel of its own — autocast, unfused_grad_accum:
 *                roofline.h tsl_roofline_layer_bwd_acc_s; none under SDP or ZeRO-2,
 *                which reduce-scatter each micro-batch's gradients: there
 *                unfused_grad_accum copies them into the bucket on every micro-batch)
 *   grad_comm  = all-reduce(2·P/(t·z) bytes, d) + reduce-scatter(2·P/t bytes, z)
 *                (STACK: the SDP reduce-scatter runs under every micro-batch's
 *                backward, as the executor and FSDP/ZeRO-3 do; PAPER: with the
 *                all-reduce on the last one)
 *   bwd_sync_s = bwd_s − compute_b + overlap(compute_b, grad_comm)   (no accumulation:
 *                with m micro-batches, m − 1 accumulate, as m − 1 take bwd_s)
 *   overlap(X, C) = max(X, C) + (k − 1) · min(X, C)
 *     — while both run each is slowed by k (Galvatron V: k ≈ 1.3); the longer one
 *       then finishes alone at full speed. k = 1 gives max(X, C).
 *   c(l, s) = fwd_s + bwd_s; the last micro-batch costs fwd_s + bwd_sync_s.
 *
 * Memory per device (bytes), mixed-precision Adam (ZeRO paper, Rajbhandari 2020):
 *   16 bytes per parameter = 2 (fp16 weights) + 2 (fp16 grads) + 4 (fp32 master
 *   weights) + 4 (Adam momentum) + 4 (Adam variance).
 *   O_ms  = 16 · P / t            under DP
 *         = 16 · P / (t · z)      under SDP (all states sharded, ZeRO-3)
 *   act   = (act_repl + act_shard / t) · n          (model.h)
 *   O_f   = act, O_b = 0                             without CKPT
 *   O_f   = bnd · n, O_b = act                       with CKPT (Galvatron III-A)
 *   SDP adds its transient gathered weights and unsharded gradients to the
 *   backward peak: O_b += 4 · P / t · (1 − 1/z).
 *
 * Precision and overlap (env->knobs, tsl_cost_knobs_t below; docs/cost-model.md
 * "Precision and overlap"): g = grad_reduce_bytes (2 when 0) replaces the 2 of
 * the gradient terms (grad_comm, the gradient in O_ms and O_b); O_ms's 12
 * optimizer bytes are 4 without an fp32 master (8 with bf16_moments: the fp32
 * master and two 16-bit moments), and its 2 weight bytes 0 under
 * SDP with g = 4 (FSDP2's fp32 shard is the master); grad_reduce_exposed adds
 * the DP all-reduce / ZeRO-1 reduce-scatter after overlap(compute_b, ...)
 * instead of inside it; overlap_param_gather leaves of ZeRO-1's weight gather G
 * only overlap(compute_f, G) − compute_f, and (STACK) runs an SDP level's gathers
 * beside the compute: fwd overlap(compute_f, G_sdp), bwd overlap(compute_b,
 * rs_per_mb + G_sdp) (Megatron-FSDP's prefetch). All zero: the formulas above.
 *
 * FP8 (knobs.fp8, docs/cost-model.md "FP8"): compute_f and compute_b price the
 * blocks' linear GEMMs at the FP8 rate with their cast kernels (roofline.h).
 * Memory, with c = tsl_fp8_copy_bytes(recipe) (one quantised copy: 1 byte for the
 * FP8 recipes, 0.5625 for nvfp4) and d = tsl_fp8_data_bytes(recipe) (its payload:
 * 1, nvfp4 0.5): O_ms += 2·c bytes per FP8 weight element W8 of the rank (the
 * cached rowwise and columnwise copies Transformer Engine keeps between steps: 2,
 * nvfp4 1.125; not under knobs.fp8_impl torchao, which casts afresh per use);
 * act −= 2 − c bytes per element of the linear inputs the backward keeps (TE saves
 * their columnwise copy instead of bf16: 1, nvfp4 1.4375; not under torchao, which
 * saves bf16), per sample. fp8_param_gather: the two copies replace the 2-byte
 * bf16 weight, O_ms += 2·c − 2 per W8 (0 for the FP8 recipes, nvfp4 −0.875), and
 * the SDP gather and ZeRO-1's weight all-gather move d bytes per FP8 weight
 * element (2 for the rest). The routed experts of a MoE layer run FP8 grouped GEMMs
 * (unless moe_bf16_experts) with the same memory terms over their own weights
 * and routed rows, and with moe_fp8_dispatch one of each pass's two all-to-alls
 * moves tsl_fp8_wire_bytes per element instead of 2.
 *
 * Choices beyond the papers (docs/cost-model.md has each with its source):
 *   feasibility  t must divide the layer's heads, K/V heads and FFN width;
 *                embedding/LM-head vocabulary padded to a multiple of 128·t (P').
 *
 * Vocabulary layers as Megatron-LM lays them out (docs/cost-model.md "Embedding
 * and head"): "P / t" above is the parameters of one TP rank, P_r:
 *   P_r = (P − P_pos + (V' − V)·h) / t + P_pos
 *   P_pos = positions·h of an embedding: the learned position table is replicated
 *   over the TP group (only the word embedding is vocabulary-parallel), so its
 *   weights, gradients and optimizer states are whole on every rank (still / z
 *   under SDP) and its gradient enters the DP all-reduce at full size.
 *   A tied head owns nothing in its embedding's stage; in a later stage
 *   (env.tied_copy) it keeps a copy of the word embedding: P_r = (P + V'·h) / t,
 *   with its gradient sync and step, plus tsl_cost_tied_allreduce_elem_s once per
 *   iteration (pipeline.h adds it before the first and last stages' steps).
 *   +sp          act_repl and (with CKPT) bnd divided by t; tp_f unchanged (an
 *                all-gather + reduce-scatter moves the all-reduce's ring bytes).
 *   +selckpt     act drops act_score_bytes; recompute = the attention core alone.
 *   recompute modules (knobs.recompute_modules, recompute.h; layers without
 *                +ckpt): act drops each module's stash, recompute adds its
 *                forward (tsl_roofline_recompute_fwd_s; mlp and moe with their
 *                block's TP all-reduce, moe with its dispatch and combine);
 *                under FP8 the inputs they drop save no FP8 byte.
 *   +zero1       O_ms = P'/(t·z)·(4 + 12/d); grad sync = reduce-scatter under the
 *                backward + weight all-gather exposed after it.
 *   +zero2       O_ms = P'/(t·z)·(2 + 14/d); a reduce-scatter every micro-batch,
 *                O_b += 2·P'/(t·z)·(1 − 1/d) (the unsharded gradient).
 *
 * Optimizer step (once per iteration, not per micro-batch; HBM-bound):
 *   opt_s = 28 · P' / (t · z · d₁) / W_opt + L      d₁ = d under ZeRO-1/2, else 1
 *   28 B = fused mixed-precision Adam: read fp32 master, m, v + fp16 grad (14),
 *   write master, m, v + fp16 weights (14). W_opt = the profile's measured
 *   device-memory bandwidth, else 0.8 × datasheet (roofline.h); unknown → 0.
 *   pipeline.h adds it where the iteration ends.
 *
 * Calibration (calibrate.h; docs/cost-model.md "Calibration"). When the
 * block's GPU type has one (env->calib), compute_f, compute_b and the recomputed
 * core are multiplied by its compute_scale for n·s tokens, every communication
 * time (tp_f, sdp_gather, grad_comm, R, the stage p2p of a calibrated sender) by
 * comm_scale, and O_ms, O_f, O_b by mem_scale. Without one the figures are the
 * formulas above, bit for bit.
 *
 * Transformation cost R (Eq. 4), priced by the pair of layouts as the stage
 * executor moves the activation (relayout.h, after worker/exec/exec_layout.c;
 * Galvatron-BMW's Slice-Gather). X = bnd · B_m, each direction (forward: the
 * activation; backward: its gradient) one of
 *   none, slice          0
 *   gather by need       all-gather(X / w_N, k)   k = w_H / w_N (narrowing forward,
 *                        widening backward; H held, N needed)
 *   whole                all-gather(X, w_H)       (layouts whose slices do not nest)
 * over the slowest ring link of the gather groups, times comm_scale.
 */
#ifndef TSL_COST_H
#define TSL_COST_H

#include <stdbool.h>
#include <stdint.h>

#include "cluster.h"
#include "gemm_eff.h"
#include "kept.h"
#include "loss_impl.h"
#include "model.h"
#include "opt_step.h"
#include "recompute.h"
#include "relayout.h"
#include "request_fields.h"
#include "roofline.h"
#include "strategy.h"

#define TSL_BYTES_PER_PARAM_STATES 16u /* see above */
#define TSL_BYTES_PER_PARAM_FP16   2u
/* The optimizer step's device-memory traffic per parameter a rank updates: a fused
 * mixed-precision Adam reads the fp32 master, m and v (4 + 4 + 4) and the fp16
 * gradient (2), and writes master, m, v (12) and the fp16 weights (2). */
#define TSL_BYTES_PER_PARAM_OPT_STEP 28u
/* Under autocast, an LM head's loss as a script writes it (cross_entropy over
 * logits.float(), the bf16 logits held by the script through the backward;
 * docs/cost-model.md "Autocast"): torch's loss (loss_impl.h TSL_LOSS_TORCH: its
 * fp32 log-probabilities kept, 8 B per logit while its backward runs) with the
 * script's bf16 logits kept beside them (2 B per logit), which its forward's
 * transient then no longer counts. */
#define TSL_AUTOCAST_LOGITS_KEPT_BYTES 2.0

/* Which formulas price a plan (docs/cost-model.md, "Cost modes"). STACK, the
 * default, prices what the training stacks run (Megatron-LM, torchtitan, the
 * executor); PAPER keeps the seed papers' formulas where they differ (Galvatron
 * Eq. 9's summed gradient synchronisation, AMP Eq. 3's slowest link shared by
 * nobody), for the reproductions of their tables. */
typedef enum tsl_cost_mode {
    TSL_COST_STACK = 0,
    TSL_COST_PAPER = 1,
} tsl_cost_mode_t;

/* Bumped whenever a formula changes a figure: part of every plan's fingerprint,
 * so a plan cached under an older cost model is searched again, not served. */
/* 8: expert TP searched for MoE models; 9: TP collectives under the backward's
 * GEMMs (overlap_tp_dgrad); 10: NCCL's algorithm and protocol by message size; 11: recompute
 * modules, bf16 moments, FP8-cached expert inputs; 12: FP8 e_max per GPU, FP8 routed
 * experts (moe_bf16_experts) and dispatch (moe_fp8_dispatch), FP8 weight all-gathers
 * (fp8_param_gather), TE's weight casts once per step; 13: interleaved 1F1B's activations
 * chunk by chunk from Megatron's schedule table (pipeline.h); 14: PyTorch eager modules
 * under torch.autocast (autocast), models without dropout (no_dropout), the causal flash
 * kernel's rate, the host floor re-measured on the step as it ran (57.2 us); 15: the
 * experts' clamped gated activation (glu_clamp) and Megatron-LM's per-expert FFN-out
 * bias add (experts with biases); 16: the gradients' lifetime (lazy_grads) in
 * interleaved 1F1B's peak; 17: under autocast, eager PyTorch's layout copies around
 * the attention core, the .grad accumulation of later micro-batches, the loss's bf16
 * logits and backward transient, a one-micro-batch step's peak before its backward
 * has allocated the .grad; 18: the weight gradients' accumulation as its own kernel
 * (unfused_grad_accum), Megatron-LM's p2p before core: scatter/gather over TP,
 * blocking hops (legacy_p2p); 19: a stack that runs each block's forward twice
 * (double_block_fwd, AMP's fork), the tied head's all-reduce with every rank pair at
 * once on the shared NICs; 20: eager modules (eager: torchtitan's RMSNorm, RoPE and
 * SwiGLU as unfused ATen kernels), torchtitan's op-level selective AC (the recompute
 * module torchtitan_op); 21: TransGAN's block as AMP's fork writes it
 * (transgan_eager: pixel norms, erf GELU, noise, the QKV bias add, the scores' scale
 * and relative-position bias as eager kernels); 22: the CP ring's kernels (the
 * diagonal causal, the other blocks unmasked) for p2p, torch's context_parallel
 * (torch-allgather: its fp32 merges, the gather under the first step, dK/dV in fp32
 * around the ring); 23: torch-allgather compiled (not eager): its gathers and dK/dV
 * sends exposed, each waited where it is issued under torch.compile; 24: the nvfp4 recipe
 * (Blackwell's FP4 GEMMs, TE's NVFP4 quantize kernels and copies); 25: PyTorch's own softmax backward as two kernels (its
 * `grad * output` first: autocast's fp32 unfused core, TransGAN's fp16 one) and,
 * under autocast, the causal mask the script builds per block and micro-batch; 26: TransformerEngine's userbuffers TP overlap
 * (tp_comm_overlap: each sequence-parallel collective under its own GEMM, chunked); 27: Mamba-2 mixer layers (mamba.h: in_proj/out_proj, the conv and
 * the SSD scan's kernels, the grouped norm) of hybrid models; 28: the fused attention kernel's rate on B200 and GB200 (cuDNN's
 * published GB200 sweeps; MLA's backward its own); 29: FP8's implementation a plan property (fp8_impl: TE or
 * torchao, fp8_impl.h): TE's current scaling with cached weight copies, FP8 stashes and
 * its amax and scale kernels (the norm's amax before a LayerNormLinear); 30: activation CPU offloading (cpu_offload_layers: TE's
 * schedule, offload.h); 31: the built-in intra-node bandwidth of H100/H200 (239 GB/s), B200
 * (453) and GB200 (440): the published NCCL ring busbw x the A100's ratio of Galvatron's
 * measured 150 to NVIDIA's published 232 (cluster_hw.c); 32: tp_comm_overlap's blocks include a Mamba-2 mixer's
 * in_proj/out_proj, the collectives outside a block hide only under the column-parallel
 * GEMMs no block used, and a recomputed MLP or a second forward re-runs the overlapped
 * forward; 33: the LM loss's memory as each stack runs it (loss_impl: the executor's bf16 logits
 * workspace, torch's eager cross_entropy over logits.float(), Megatron-LM's vocabulary-parallel
 * loss, TE's fused one; loss_impl.h), its transient on the head's backward peak; 34: the
 * optimizer step as the stack runs it (knobs.opt_step, opt_step.h:
 * fused, megatron, megatron-fp16, torch, deepspeed-fp16), its passes beyond the fused kernel and the
 * grad buffer's zeroing; 35: Megatron-LM's all-to-all MoE dispatcher (moe_alltoall: its counts and
 * their all-gather, the sync, the routing weights' all-to-all, the second permutation); 36: target megatron prices its export's all-to-all
 * dispatcher by default; 37: tp_comm_overlap's GEMMs lose the SMs their userbuffers collective
 * holds (none for the copy-engine rings, Megatron-Bridge's FP8 cfgs' num_sm for the bulk
 * overlaps) in place of the overlap slowdown k, where the GPU's SM count is known; 38: the
 * PAPER mode without 33's loss figures or 35's dispatcher pieces (the seeds' as before them),
 * and the moe module's recompute of the EP collectives calibrated as they are; 39: the SP
 * all-gathers of FP8 linears' inputs (and dY) in the recipe's bytes as TE and torchao run them
 * (tsl_fp8_impl_sp_gather_bytes); 40: unfused_grad_accum under SDP / ZeRO-2 as Megatron-FSDP
 * runs it without gradient-accumulation fusion (each micro-batch's param.grad copied into the
 * unsharded bucket); 41: TP collectives between two device synchronisations (tp_sync,
 * AMP's fork): each one's dispatch and the queue's restart after it, one host op each.
 * 42: latent MoE (moe_latent: the routed rows, experts and dispatch at
 * the latent width, fc1/fc2_latent) and MTP depths (mtp.h: an entry layer, shared-weight
 * layers kept, synced and stepped once, an MTP entry's embedding copy on a later stage and
 * its embedding-group all-reduce). 43: one embedding copy per later stage with MTP
 * depths (a tied head's, else depth 1's entry's), not one per entry and head.
 * 44: blocks kept bf16 under FP8/NVFP4 (model.h
 * tsl_model_set_bf16_layers, Megatron-LM --first-last-layers-bf16) and MTP layers under
 * nvfp4, each priced as under a bf16 plan. 45: DeepSpeed's pipeline p2p as AMP's fork runs
 * it (ds_pipe_p2p): 1/t of the activation and the fp16 attention mask per TP rank, a TP
 * all-gather on each side, every exchange held by both of its stages. 46: an FP8 GEMM's
 * per-tile fixed cost in depth scaled by its rate over the bf16 one, and TE's FP8 wgrad
 * GEMMs accumulating into the fp32 main_grad (read and written in their epilogue) under
 * Megatron-LM's gradient_accumulation_fusion (gemm_eff.h tsl_gemm_tile_cost). 47: under
 * ds_pipe_p2p the fill and the drain cross each boundary once each way (Σ C_nosync, not
 * Σ K: the incoming exchanges are steady-state time only), as the event simulator's
 * rendezvous. 48: all-to-alls (EP dispatch and combine, Ulysses CP) inside an NVLink
 * domain at the part's published all-to-all / ring busbw (tsl_gpu_a2a_ratio: A100
 * 210/232, H100/H200 320/370, B200 640/700, GB200 640/680). 49: an MTP entry's eh_proj
 * as Megatron-LM runs it: the output's all-gather forward (under SP after the 2h-wide
 * input's), the 2h-wide input gradient's all-reduce backward (under SP its
 * reduce-scatter, dY's all-gather and the input's re-gather for dW), not one s·h
 * all-reduce each way. 50: every linear's weight-gradient GEMM, bf16 and FP8, that
 * accumulates into the kept gradient buffer (the default: Megatron-LM's fusion, TE's, the
 * executor's beta 1; not under unfused_grad_accum, autocast, lazy_grads or torchao)
 * reads and writes it in its epilogue at g = its element bytes, 2·g per output element
 * (FP8 under a bf16 main_grad: 4, not 46's 8); 51: TE's per-tensor FP8 (delayed,
 * tensorwise) on Blackwell writes and keeps the rowwise copy alone (its GEMMs take any
 * layout), and MXFP8's fp8_param_gather under ZeRO-1 gathers bf16 through the gradient
 * buffer and casts every weight once per step (Megatron-LM's
 * reuse_grad_buf_for_mxfp8_param_ag). 52: NCCL's all-to-all across NVLink domains at its
 * NICs' bound (n − 1)·cap_D / (m_D·(n − m_D)); a flex dispatcher's (moe_flex: HybridEP,
 * DeepEP) one network copy per token and destination domain at the rank's NIC share,
 * pipelined with its NVLink forwarding; Megatron-LM's EP all-to-all overlap
 * (moe_a2a_overlap: the 1F1B steady state's merged steps hide the EP all-to-alls). 53:
 * an FP8 dispatch (moe_fp8_dispatch) runs the flex dispatcher's all-to-alls, as
 * Megatron-LM runs it (ncclep) and its export writes it; the EP all-to-all overlap saves
 * nothing on a plan with full recompute, which Megatron-LM refuses beside it, and the event
 * simulator takes its saving as the closed form does (a non-default vp_group); torchtitan
 * (its target and its configuration read back) keeps no gradient buffer (lazy_grads), so
 * its weight-gradient GEMMs write fresh gradients, and DeepSpeed's engine adds them by
 * kernels of its own (unfused_grad_accum). 54: the gradient buffer's element bytes
 * apart from the reduce's (grad_buf_bytes: a 16-bit .grad cast to fp32 for the
 * collective alone, DeepSpeed's fp32_allreduce): what the weight gradients accumulate
 * into, the model states keep and the step reads, the DP/SDP collectives at
 * grad_reduce_bytes. 55: the casts such a buffer needs around its reduce (grad_cast_s:
 * read at one width, written at the other, before and after the collective). 56: Blackwell's
 * GEMM e_max from the published sustained (power-saturated) matmul rate, MSMF, not the
 * boost-clock burst MAMF: B200 0.628 / FP8 0.603, GB200 by the B200's MSMF / MAMF ratio
 * 0.581 / 0.571 (cluster_hw.c; docs/cost-model.md "Sustained clocks").
 * 57: DeepSpeed's ZeRO-0 gradient bucket around the DP all-reduce (ds_grad_bucket: the
 * flatten, the 1/DP mul_ on the reduced tensor, the unflatten copy back into each .grad;
 * grad_bucket_s). 58: a named fused attention kernel on Hopper (attn_kernel: flash2,
 * cudnn; attn_kernel.h) at its published share by head dimension and keys
 * (FlashAttention-3's Figs. 5–6); no kernel named (the default) prices as 57.
 * 60: SDP without resharding between micro-batches (sdp_nosync: torchtitan's FSDP2
 * under pipeline parallelism): the weights gathered once per iteration under the
 * first forward and held, the gradients accumulated unsharded and reduce-scattered
 * once, after the last micro-batch; without it SDP prices as 58. 61:
 * DeepSpeed's BF16_Optimizer under pipeline stages (ds_bf16_optimizer: the cast and add of
 * every micro-batch's gradient into the fp32 buffer, its DP all-reduce under ZeRO-1, the
 * tied gradient at the buffer's bytes); a plan without it prices as 58.
 * 62: the RTX TITAN's intra-node bus bandwidth at Galvatron-BMW's testbed as Galvatron's
 * profiler measured it, 4.87 GB/s (was 10 GB/s assumed: cluster_hw.c). 63: fp32
 * training (knobs.fp32: the GEMMs at the GPU's dense TF32 tensor rate, its fp32 FMA rate
 * where it has no TF32, × the same e_max and shape curve; every activation, stash,
 * memory-bound kernel, TP collective, stage send, weight all-gather and gradient reduce at
 * 4 bytes per element; 16 B of model states per parameter); a plan without it prices as
 * 62. 64: sdp_nosync is FSDP2 as torchtitan runs it, kept unsharded between micro-batches
 * only on a stage of a pipeline of several (tsl_cost_env_t.pipelined; at PP 1 torchtitan
 * reshards after the forward and reduce-scatters every micro-batch, priced as 63's SDP),
 * and --target torchtitan sets it (tsl_target_knobs); a plan at PP > 1 with it, or at
 * PP 1 without, prices as 63.
 * 65: DeepSpeed's BF16_Optimizer's memory and reduce width (ds_bf16_optimizer keeps
 * each backward's bf16 .grad, 2 B per parameter, beside the fp32 buffer; a gradient
 * buffer wider than its reduce, grad_buf_bytes 4 under grad_reduce_bytes 2, is cast
 * to the reduce's width and back around it, as DeepSpeed's engine casts the fp32
 * buffer to its bf16 communication_data_type); a plan without either prices as 64.
 * 67 (66 unused): fp32 and TF32 figures for every built-in GPU (B200, GB200, L40S, L4, A10G,
 * 2080 Ti; MI300X/MI325X at their FP32 matrix peak), settable in a cluster file; fp32
 * plans priced on them where they were refused; the H3T fallback (memopt) prices an fp32
 * request at the fp32 rate with 4-byte parameters (was bf16, 2 bytes).
 * 68: BLOOM (hf_config model_type bloom): ALiBi through baddbmm in an unfused core (the
 * broadcast bias copied into the scores, 2 B each, and read back as the score GEMM's C:
 * forward and recompute; roofline.c alibi_scores_gemm_s; free in a fused kernel) and the
 * embedding LayerNorm (2·h parameters, its 2·s·h input kept, 4 B per element forward);
 * a model without either prices as 67.
 * 69: fp32 training under --target megatron, deepspeed or torchtitan prices
 * the GEMMs as the stack runs them, TF32 off (knobs.tf32_off: the fp32 FMA peak where
 * 67 refused a GPU with TF32); a plan without tf32_off prices as 68.
 * 70: torch's loss (loss_impl torch) under TP > 1 is torchtitan's loss_parallel, the
 * DTensor handlers' eager decomposition: 10 B of transient per logit in the forward
 * and 12 in the backward beside what it keeps (ATen's kernels: 6 and 8); under PP
 * the last stage holds every micro-batch's logits until the step ends (2 B each,
 * torch.distributed.pipelining's output_chunks: tsl_layer_cost_t step_bytes, m of
 * them at the stage's peak); a plan without loss_impl torch at TP > 1 or PP > 1
 * prices as 69.
 * 72 (71 unused): an unfused attention core that keeps all its heads on
 * every TP rank, each head 1/t as wide (tp_whole_heads: AMP's fork's TransGAN attention):
 * its scores, their kernels and the activations kept of them not divided by t, its batched
 * GEMMs over all heads at head width d/(a·t); a plan without it prices as 70.
 * 73: a causal sliding-window fused core at head dimension
 * 64 on B200 / GB200 at cuDNN's published sliding-window figures
 * (TSL_ATTN_GB100_SWA64_*: gpt-oss's 128-key layers ≈ 4× slower than the causal rule
 * priced them); a model without such a layer, or on another GPU, prices as 72.
 * 74: overlap_param_gather on an SDP level is Megatron-FSDP:
 * each micro-batch's gathers are prefetched under the passes' compute (cost.c
 * sdp_prefetch), not run before them; a plan without both prices as 73.
 * 75: torch's micro-pipelined TP (async_tp: torchtitan's AsyncTP, the inductor pass
 * micro_pipeline_tp): the forward's SP all-gathers and reduce-scatters and the
 * backward's dY all-gathers each under its own GEMM split in t chunks, copy-engine
 * transfers, the reduce-scatter's t partials summed by a kernel after it; a plan
 * without it prices as 74.
 * 76: in STACK mode a decoder layer's cross-attention under TP > 1
 * all-reduces the gradient of the encoder output its column-parallel K/V projection
 * reads (t·h per sample) in the backward (cost.c cross_kv_grad_s); a model without
 * cross-attention, or one at TP 1, prices as 74.
 * 78 (77 unused): synchronous kernel launches (launch_blocking:
 * CUDA_LAUNCH_BLOCKING=1, BigScience's BLOOM scripts): each pass of a layer priced
 * G + ops·H, its host dispatch added to its kernels' time, where it was max(G, ops·H)
 * (roofline.c host_floor); a plan without it prices as 76.
 * 79: non-gated routed experts (Nemotron-H's squared ReLU) take their routing weights
 * after the activation in eager PyTorch, as Megatron-LM's TEGroupedMLP runs them: the
 * product and, with the flex dispatcher's fp32 weights, the cast back
 * (TSL_ROOFLINE_EXPERT_PROBS_*); a model without such experts prices as 76.
 * 80: 75 merged after 79 (each session's branch took its own number): 75, 76,
 * 78 and 79 together; a plan without async_tp prices as 79.
 * 81 (80 on its branch): an SDP level run as fairscale 0.4.5's FSDP with each
 * layer its own root (sdp_layer_roots, Galvatron-BMW's wrapping; sdp_roots.h): the
 * forward exposes the layer's first FSDP unit's gather and runs the others' under the
 * earlier units' compute, the backward's gathers are prefetched beside the
 * reduce-scatters under its compute; a plan without it prices as 80.
 * 82: HF T5's block as transformers 4.16.2 runs it (Galvatron-BMW's T5): each norm
 * T5LayerNorm's eager ATen chain (tsl_layer_t.eager_norm; fp32: 28 B forward, 92
 * backward per element, roofline.h TSL_ROOFLINE_EAGER_RMSNORM_FP32_*) and the dropout
 * between the FFN's activation and wo (ffn_dropout: 5 bytes per f element each way,
 * its mask and copy kept); a model without either (every family but T5) prices as 81.
 * 83: async_tp's sum of the reduce-scatter's t partials runs at ATen's reduce_kernel
 * rate, 0.33 of the datasheet HBM bandwidth (pytorch/pytorch#191803: 23-43 %), not
 * the roofline's 0.80 (cost.c TSL_ASYNC_TP_SUM_HBM_FRAC); a plan without async_tp
 * prices as 81.
 * 85 (82–84 other sessions'): opt_step deepspeed-fp16 pays its host reads: the
 * FP16_UnfusedOptimizer's overflow check and norm read each tensor back to the host,
 * each chain of framework ops (H / 3 each) from an idle GPU (cost_host_sync.h); and
 * ds_wall_clock, DeepSpeed's synchronising timers around every pipeline instruction
 * (tp_sync's restart per instruction, a dispatch per exchange); a plan with another
 * opt_step and without ds_wall_clock prices as 81.
 * 86 (82-85 other branches'): recompute modules moe_act or shared_experts beside moe
 * run their module a third time (the checkpointed MoE forward re-creates their
 * checkpoints: moe_layer.py, experts.py at 44151194), each priced once more in the
 * recompute; a flex dispatcher's NVLink all-to-all moves one copy per token and
 * destination rank holding one of its experts, ep·hit(1/ep)/k of the per-expert
 * copies (HybridEP's sparse_to_dense_map: cost.c flex_rank_copies); a plan without
 * the flex dispatcher or both modules prices as 81.
 * 87: MCore v0.8's unfused token permutation (moe_unfused_permute: argsort and gather,
 * the combine's scatter into zeros, the routing weights' product and the top-k sum
 * each a kernel, TSL_ROOFLINE_UNFUSED_PERMUTE_*); a plan without it prices as 81.
 * 88: 82, 83, 85, 86 and 87 merged (each branch took its own number from 81; 84
 * unused): a plan none of whose terms they name prices as 81.
 * 89: fp16 mixed precision (knobs.fp16: asked, or where a GPU has no bf16 tensor cores,
 * tsl_gpu_spec_t.no_bf16): under Megatron-LM's step the loss scaler's unscale and inf
 * check over the fp32 main gradients (opt_step megatron-core-fp16: megatron's + 8 B per
 * updated parameter, a kernel); FP8 never weighed beside an fp32 or fp16 plan (the search
 * priced --fp32 --target torchtitan with FP8 linears). A plan without fp16 on GPUs with
 * bf16 prices as 88.
 * 90 (89 another branch's): loss_impl torch-compile, torch's cross_entropy over
 * logits.float() under torch.compile (torchtitan e7c0cae components/loss.py):
 * inductor's fused loss keeps the bf16 logits (2 B per logit) and allocates only
 * their bf16 gradient (2 B) — against eager torch's 4 kept and 8 transient; a plan
 * with another loss_impl prices as 89.
 * 91: attention on GPUs older than Ampere as the target's stack runs it: under target
 * megatron a cluster with a GPU of compute capability below 8.0 (V100, T4, TITAN RTX,
 * 2080 Ti: tsl_cluster_no_flash) prices the unfused core, its s x s scores kept, as
 * --unfused-attn (Transformer Engine does not run there; Megatron-LM's --transformer-impl
 * local has only DotProductAttention), selective recomputation offered; plans record
 * stack_unfused_attn. Every other plan prices as 90.
 * 92: no priced term changed — the search space did: context parallelism of degree 2
 * searched from sequences of 8192 tokens (search.h TSL_SEARCH_CP_MIN_SEQ; Megatron-Bridge's
 * Llama 3.1 405B presets), so tesseld's cached plans of such requests, found without it,
 * are searched again.
 * 94 (93 another branch's): target megatron searches and exports an SDP level as
 * Megatron-FSDP (knobs.megatron_fsdp: optim_grads_params, its gathers prefetched as
 * cost model 74 prices overlap_param_gather on SDP; the plan records
 * overlap_param_gather and the gradient reduce under the backward), where 92 refused
 * every SDP plan under that target; every plan outside target megatron, and every
 * plan without SDP, prices as 92.
 * 95 (93 another branch's): DeepSpeed's BF16_Optimizer as today's engine runs it
 * (DeepSpeed edaa722): under target deepspeed a bf16 strategy at ZeRO-0 with DP > 1 on
 * a stage of a pipeline of several is priced as BF16_Optimizer (ds_bf16_zero0; the search
 * refused it), BF16_Optimizer shards its fp32 master and moments over DP whatever the
 * plan's ZeRO stage says (ds_bf16_optimizer at ZeRO-0 priced as at ZeRO-1: the states
 * 12/d, the weights all-gathered after the step), and its accumulation casts the fresh
 * .grad only into a buffer of another width (hp_grad.add_(lp.grad.to(hp_grad.dtype)): a
 * bf16 buffer adds 3g, not n + 4g). A plan without ds_bf16_optimizer, and one with it at
 * ZeRO-1 and an fp32 buffer (BLOOM's), prices as 94.
 * 96: no priced term changed — the megatron target's space did: a hybrid Mamba model
 * (Nemotron-H, Nemotron 3), refused before, is searched as Megatron-LM's HybridModel
 * (target_rules.c megatron_hybrid_shapes; docs/exports.md "Hybrid models"), interleaved
 * plans of it refused. No stored plan was of such a request; every other request
 * searches and prices as 95.
 * 97 (93 on its branch): no priced term changed — the search space did: beside the
 * micro-batch counts spread geometrically over the batch's divisors, the counts at which each data rank holds one
 * sample, m = B / d for the divisors d of a stage's devices (search_engine.c rank_counts;
 * Megatron-Bridge's Llama 3.1 405B presets run 1536 / 4 = 384 and 1536 / 8 = 192), so
 * tesseld's cached plans, found without them, are searched again.
 * 99 (98 another branch's): no priced term changed — the search space did: interleaved
 * 1F1B under Megatron's default group N = P, priced in closed form, is weighed up to
 * m·v = TSL_PIPESIM_MAX_MICRO chunk micro-batches as eval takes it (search_eval.c
 * interleave_reach), not only to TSL_SEARCH_SIM_MAX_MICRO (1024): Megatron-Bridge's
 * Llama 3.1 405B presets, VP 4 and 8 at 384 micro-batches; a plan of m·v at most 1024,
 * and every plan of another N or schedule, searches and prices as 97.
 * 100 (98 other branches'): no priced term changed — the megatron target's space did: models
 * with GPTModel's YaRN (--position-embedding-type yarn) or causal sliding windows on any set of
 * layers (--window-size, --window-attn-skip-freq), GPT-OSS among them, refused before, are
 * searched (target_rules.c megatron_rope, megatron_windows), and Gemma's sandwich norms,
 * soft-capping and embedding scale are refused by name (they were, by their windows). A plan
 * without YaRN or windows under --target megatron prices and searches as 99.
 * 101 (98 other branches'): no priced term changed — the deepspeed target's space did: TP
 * beside pipeline stages, as Megatron-DeepSpeed runs it under DeepSpeed's pipeline engine
 * (BLOOM, MT-NLG), refused before, is searched with its boundaries priced as DeepSpeed's
 * PartitionedTensor p2p (knobs.legacy_p2p, as eval prices the BLOOM rows; the plan records it
 * only there) and its TP all-reduces after the gradient GEMMs (target_rules.c
 * deepspeed_pipe_tp). A plan without TP beside stages prices as 100.
 * 102 (103 on its branch): no priced term changed — the megatron target's space did: an
 * interleaved plan of a hybrid Mamba model, refused before, is admitted where Megatron-LM's '|'
 * segments of --hybrid-layer-pattern (segment j·P + r rank r's chunk j) build on every rank the
 * blocks its stage was priced with (target_rules.c megatron_hybrid_split; docs/exports.md
 * "Hybrid models"); a plan without a hybrid, or without interleaving, prices and searches as
 * 101.
 * 103 (98 on its branch): no priced term changed — the search space did: a request's
 * fp8_param_gather (plan --fp8-param-gather) prices every FP8 plan the search weighs with its
 * weights in FP8 and gathered in FP8 (knobs.fp8_param_gather, as eval prices a given plan's),
 * and under target megatron such a plan runs ZeRO-1 or Megatron-FSDP on its data-parallel
 * ranks, never plain DDP (Megatron-LM's validate_args); a plan without fp8_param_gather prices
 * as 102.
 * 104: no priced term changed — the deepspeed target's space did: beside PipelineModule's
 * 'uniform' cut (equal layer counts, the embedding and head counted), a pipeline of P stages
 * where P divides only the Transformer layers is cut as 'type:transformer' (partition_balanced
 * over the blocks: equal blocks, the embedding on the first stage and the head on the last;
 * Megatron-DeepSpeed's GPTModelPipe default, MT-NLG's 105 blocks over 35 stages), refused
 * before, and is priced as laid out (target.c ds_partition); the export writes that method. A
 * plan under another target, or cut 'uniform', prices and searches as 103.
 * 105 (104 another branch's): a stage of a pipeline of several under torch's loss
 * (loss_impl torch or torch-compile: torch.distributed.pipelining, the stack mark of 70's
 * held logits) holds PipelineStage's receive buffers, one activation buffer per
 * micro-batch on every virtual stage but the first and one gradient buffer per
 * micro-batch on every one but the last, allocated at the first step and kept
 * (tsl_cost_pp_recv_bytes, tsl_pipeline_recv_buffers; the rank's share of a block's
 * input each, on the row of the stage's first block); a plan without PP or without
 * torch's loss prices as 104.
 * 106: no priced term changed — the megatron target's space did: a hybrid Mamba model's
 * pipeline stages are --hybrid-layer-pattern's '|' segments of any length, interleaved or not
 * (the export writes them for every hybrid pipeline plan), so its middle stages may differ
 * (target_rules.c megatron_layout), and the search costs each of its configurations also on
 * the cut its priced layer times balance (search_eval.c hybrid_priced_cut), keeping the
 * faster; a plan without a hybrid, or without pipeline stages, prices and searches as 105.
 * 107 (106 another branch's): a V schedule (ZBV, DualPipeV) prices its ends where it runs
 * them: rank 0 holds virtual stages 0 and 2P − 1, so stage 0 prices the model's tail (the
 * untied head, its loss and logits, the MTP layers after it: memory, time, no tied
 * all-reduce) in place of its last block, which the last stage prices in place of the
 * tail; the tail holds one micro-batch (the last virtual stage's F then B), not the
 * stage's P (search_eval.c set_vends, stage_rows). A plan without a V schedule, with a
 * tied head, or whose stage 0 ends on no block, prices as 106.
 * 108: the A100's fused (flash) attention core runs at FlashAttention's published A100
 * shares, 0.40 of peak forward and 0.30 backward (gemm_eff.h TSL_ATTN_A100_*: the
 * midpoints of Dao 2023's 30-50 % and 25-35 %; llm-foundry's MPT rows, which ran its
 * Triton port), not at the GEMM curve's rate. A plan on no A100, or with an unfused
 * core, prices as 107.
 * 111 (the sweep and vsim branches' 109, 110 merged as 112, 113): no priced term changed —
 * the deepspeed target's space did: a pipeline of P stages where P divides neither the layers nor
 * the Transformer layers is cut as DeepSpeed's 'type:transformer' cuts it (partition_balanced's
 * programme over the blocks weighted 1, ds_partition.h; e.g. 105 blocks over 8 stages: 14, 13,
 * ..., 13 blocks, the embedding on the first stage, the head on the last), refused before, priced
 * with its uneven stages as laid out and exported with that method (target.c ds_cut_blocks); a
 * plan under another target, or whose P divides the layers or the blocks, prices and searches as
 * 108.
 * 112 (109 on its branch): no priced term changed — the batch sweep did: after the doubling (and
 * the cap) it tries 3b/4, 7b/8 and 3b/2 around the best batch b and walks the side below b in
 * steps of b/16 where 3b/4 or 7b/8 became the best, else the side above in steps of b/8 as
 * before, skipping the batches the doublings tried (search_engine.c refine_around); a swept
 * plan may now sit between b/2 and b (GPT3-65B on 8×8 A100: 1536, 17.54 samples/s, over 1024's 17.50). The doubling from
 * the device count's odd part counts its gains over its own batches, not the powers of two's best
 * (GPT2-345M on 5×8 A100: 2594.64 samples/s at 3840, was 1681.68 at 4096). A plan at a fixed batch
 * prices and searches as 111.
 * 113 (110 on its branch): a V schedule's ranks price the layers the torchtitan
 * export places on them — the model cut in order into 2P parts, rank s parts s and
 * 2P − 1 − s, the first ceil(n_s / 2) of its count in its first chunk (pipeline.h
 * tsl_pipeline_v_parts; search_eval.c set_vparts, stage_rows) — in place of 107's swap
 * of stage 0's last block, which differs on a model of uneven blocks (DeepSeek-V3's
 * dense layers first); a tied head sits on rank 0 beside its embedding (no copy, no
 * all-reduce); the event simulator runs each chunk's own F, B and W (pipesim.h
 * chunk1_*) where it split the rank's times evenly. A plan without a V schedule
 * prices as 112; a V plan of one block kind and an untied head moves by its chunks'
 * times only.
 * 114: the A100's fused attention core by kernel
 * (attn_kernel.h tsl_attn_ampere_share): by default, and under flash2 and cudnn, at
 * FlashAttention-2's published A100 shares by head dimension and keys (Dao 2023, Fig. 4,
 * forward + backward 132-203 TFLOP/s, split at the paper's 73 % / 63 % maxima), what
 * Megatron-LM, TransformerEngine and PyTorch SDPA run there; FlashAttention v1 and its
 * Triton port are the named kernel flash1 (attn_kernel 3), at cost model 108's 0.40 / 0.30
 * (on Hopper the family's one figure). A plan on no A100, with an unfused core, or under
 * flash1 prices as 113.
 * 117 (115, 116: not used on main): an SDP level that keeps each layer's gathered weights
 * from its forward to its backward (sdp_keep_weights: torch FSDP1's SHARD_GRAD_OP, each
 * micro-batch's gradients reduce-scattered): no backward gather, the gathered weights
 * of every layer held at the stage's peak (states, not the layer's transient); a plan
 * without sdp_keep_weights prices as 114.
 * 118: a V schedule's (ZBV, DualPipeV) two chunks each hold their own count of
 * micro-batches at the rank's peak, read off the schedule's op order (pipeline.h
 * tsl_pipeline_v_held: ZBV rank s (2P − s, s) or (2P − s − 1, s + 1), DualPipeV
 * (2P − s, s + 1), the heavier moment) where every row of the rank held the two chunks'
 * count together (P, DualPipeV P + 1) and the head's tail one; rank 0's first chunk, the
 * embedding's, now holds 2P − 1 or 2P, its second at most one. A V's MTP depth on a
 * rank other than 0 and P − 1 syncs its embedding copy between rank 0 and that rank in
 * the simulator (pipesim.h tie_stage), as priced. The torchtitan target weighs no
 * pipeline for a model whose head is tied (torchtitan raises NotImplementedError for
 * weight tying with PP). A plan without a V schedule prices as 117; a V of equal
 * chunks under ZBV too.
 * 119: the LM loss's time by how the stack runs it
 * (loss_impl.h "The loss's time"; roofline.c ends_s): its kernels' HBM bytes per
 * logit, forward + backward, at the GPU's memory rate, in place of eager torch's
 * 22 + 26 for every stack — exec 10 + 6, torch 22 + 26 (38 + 38 under loss_parallel,
 * TP > 1), megatron 38 + 14, te 6 + 4, torch-compile 4 + 4 and a new loss_impl
 * fused-xentropy (5: flash-attn's / apex's xentropy kernel, 4 + 4; keeps the bf16
 * logits, in-place backward). Autocast (a script's torch loss over whole logits) and
 * PAPER (torch's 22 + 26, unsplit) keep 114's bytes, the forward in 2 kernels, not 3.
 * A plan under torch at TP 1 or autocast prices as 118 but for that one launch.
 * 120: a new loss_impl composer (6: llm-foundry's MPT under Composer, loss_impl.h):
 * flash-attn's xentropy as fused-xentropy, its backward writing a new bf16 gradient
 * (bwd 2 B per logit, llm-foundry keeps inplace_backward=False), and Composer's two
 * train metrics (LanguageCrossEntropy, LanguagePerplexity), each torch's cross-entropy
 * forward over the bf16 logits under autocast, after every micro-batch's backward:
 * the head's backward moves 4 + 2 × 22 = 48 B per logit in 7 kernels. The missing
 * cost that grew as the model shrank (MPT-125M −19 … −24 % at 2K on A100 40GB): the
 * logits are V/h of a token's block work. A plan without loss_impl composer prices
 * as 119.
 * 121: attn_kernel flash1 (3) is FlashAttention v1's CUDA kernel,
 * priced on the A100 by shape from Dao 2023 (FlashAttention-2), Fig. 4's "FlashAttention"
 * bars — forward + backward 72-110 TFLOP/s non-causal, 55-97 causal, by head dimension
 * (64, 128) and sequence (512-16k), split at v1's 40 : 30 midpoints; a causal core at
 * the causal bars' share of the FLOPs the mask leaves, in place of the causal rule
 * (attn_kernel.h tsl_attn_ampere_causal_share; roofline.c causal_share) — where it
 * was cost model 108's flat 0.40 / 0.30 (20-30 % fast at head dimension 128). Its
 * Triton port (llm-foundry's attn_impl triton, the MPT rows) is the new named kernel
 * flash1-triton (attn_kernel 4), at 108's 0.40 / 0.30 (inferred from the MPT rows);
 * on Hopper both price as the family's one figure. A plan on no A100 or without
 * flash1 prices as 120; a flash1 plan of 120 prices as flash1-triton does now.
 * 122: transformers' GPT2Block as written under autocast
 * (tsl_layer_t.hf_gpt2_eager, read from an HF gpt2 config naming activation_function
 * gelu_new; roofline.h TSL_ROOFLINE_HF_GPT2_*): NewGELUActivation's eager chain (+72 B
 * and 9 kernels per FFN element forward, +112 B and 14 backward, each a host op; +12 B
 * kept per FFN element), GPT2Attention._attn's torch.where in place of masked_fill,
 * the division by the layer's index + 1 (scale_attn_by_inverse_layer_idx), the
 * causal buffer's cast to bool, split's cat of the QKV gradients, and under fp16
 * autocast the half-to-float softmax each way. A plan without hf_gpt2_eager, or not
 * under autocast, prices as 121.
 * 126: YaRN RoPE with an attention factor other than 1 (gpt-oss's 1 + 0.1·ln 32,
 * tsl_model_yarn_attention_factor; tsl_layer_t.yarn_eager_rope, set from the model's
 * rope_scaling) as Megatron-LM runs it: TE's fused RoPE takes no mscale, so q and k
 * each go through the eager _apply_rotary_pos_emb_bshd (rope_utils.py at 44151194
 * through 24bad8e6): 24 B per element and 12 kernels forward, 28 B and 7 kernels
 * backward, a host op each (roofline.h TSL_ROOFLINE_YARN_ROPE_*). Latent attention
 * is not marked. A model without such YaRN prices as 122.
 * 127: the built-in ib100 (EDR) link is NCCL's measured ring bus bandwidth over one
 * 100 Gb/s card, 12.2 GB/s (NVIDIA/nccl-tests#29; nccl#307 "~12 GB/s with each NIC"),
 * in place of line rate x 0.85 (10.625 GB/s): 1.148x every collective and stage send
 * that crosses an ib100 NIC. A plan on no ib100 link prices as 126.
 * 128: the unfused core's score kernels outside autocast (Megatron's fused
 * scale-mask-softmax and the attention dropout, 4 + 5 B a score forward) at 1/1.20 of
 * W (roofline.h TSL_ROOFLINE_SCORE_KERNEL_SLOWDOWN): Korthikanti et al. 2022 Table 4's
 * selective recomputation, the 22B core's forward alone, took 1.3 ms where 122 priced
 * 1.150 (the GEMMs as priced leave the score kernels 2/3 of the A100's datasheet
 * bandwidth); the backward's score kernels at the same rate. A plan with a fused
 * (flash) core, or an unfused one under autocast, prices as 127.
 * 129: InfiniBand links at NCCL's measured ring bus bandwidth over one card, not line
 * rate x 0.85 (the Gb/s is after encoding): ib200 (HDR) 24 GB/s (NVIDIA/nccl#812,
 * nccl-tests#119), ib400 (NDR) 47 (nccl-tests#290: 46-48), ib800 (XDR) 94 (assumed at
 * NDR's share); and the cross-node all-to-all bound (cost model 52) at what a card
 * carries of NCCL's all-to-all (tsl_link_spec_t.a2a_bw, tsl_cluster_t.inter_a2a_ratio):
 * 74.3 % of the data rate, HDR 18.6 and NDR 37.2 GB/s (NVIDIA GTC25 S72583 slide 13's
 * 24 and 48 GB/s busbw over 4 nodes x 8 GPUs, x 24/31), EDR 9.29 and XDR 74.3 assumed
 * at that share. A plan on no InfiniBand link, or on ib100 with no all-to-all across
 * nodes, prices as 128.
 * 136: a flex dispatcher's network leg (moe_flex, moe_fp8_dispatch; cost model 52) at
 * what a card carries of DeepEP's and HybridEP's own RDMA kernels (tsl_link_spec_t.flex_bw,
 * tsl_cluster_t.inter_flex_ratio), not NCCL's ring: NDR 43.66 GB/s, 87.3 % of the data
 * rate (deepseek-ai/DeepEP's internode table on H800 + ConnectX-7, 58/57 GB/s at EP 32 and
 * 51/50 at EP 64 counted with each node's own copy, x 3/4 and x 7/8 off the node;
 * HybridEP's H100 kernels 43.1-43.7 by the same count), EDR 10.9, HDR 21.8 and XDR 87.3
 * assumed at that share; Ethernet and Omni-Path keep the ring's. A plan without a flex
 * dispatch across NVLink domains, or on no InfiniBand link, prices as 129.
 * 137: Hopper (every GH100 part: H100-80G, H100-96G, H200, H800) at the sustained clock of
 * a dense step at its 700 W limit, as Blackwell since 56: e_max 0.777 -> 0.695 (the H200's
 * published MSMF 708.5 TFLOPS = 71.6 %, ~693 W at 1465 MHz, x 0.97), FP8 e_max 0.688 (H200
 * 0.712) -> 0.632 (MSMF FP8 1288.7 = 65.1 %, 1374 MHz, x 0.97); ml-engineering fast-mamf
 * 082816f (cluster_hw.c). The burst fit 0.777 stays the transfer ratio of the MAMF-table
 * GPUs. A plan on no Hopper GPU prices as 136.
 * 138: a new opt_step torch-loop (6: torch.optim.Adam's
 * per-tensor Python loop as PyTorch 1.10-1.12 ran it, opt_step.h): per tensor the
 * weight-decayed gradient's temporary, m's and v's two in-place passes each, sqrt and
 * its division into new tensors, eps, addcdiv_ (92 B per parameter in fp32, nine
 * kernels), and zero_grad's in-place zero_ of each .grad (g per kept element, a
 * kernel); the ten launches counted per parameter tensor of the layer (cost.c
 * step_tensors: Megatron's layout, or one per FSDP unit under SDP). Galvatron-BMW's
 * bench/published rows carry it. A plan without opt_step torch-loop prices as 137.
 * 139: an all-reduce inside one NVLink domain of a part with a measured curve (the A100:
 * Galvatron's torch all-reduce of 16 MiB-1 GiB over 2, 4 and 8 GPUs on its A100 node, the
 * node the flat 150 GB/s comes from; tsl_gpu_ar_curve) is priced at that curve's bus
 * bandwidth by buffer size (100 GB/s at 16 MiB to 200 at 256-512 MiB over 8 GPUs),
 * below 16 MiB the larger of NCCL's tuner and the 16 MiB figure. The DP/SDP reduce
 * (bucketed by the stacks) keeps the flat figure. TP all-reduces of Narayanan Table 1
 * (67-268 MB) run 1.2-1.3x faster; a plan without an A100 TP all-reduce prices as 138.
 * 140: Megatron-LM v1.1.5's block without its fusion flags under PyTorch 1.7
 * (knobs.unfused_elementwise, AMP's fork; roofline.h TSL_ROOFLINE_UNFUSED_*): the QKV
 * bias added after F.linear's matmul on a 3-D input, the FFN-in bias before the GeLU,
 * the two row-parallel biases before the unfused dropout and residual add (4 B per
 * output element and a kernel each, forward), the causal mask by masked_fill_ (4 B per
 * score each pass, at the score kernels' rate) and the context's permute copy (4 B per
 * element each pass), a host op each. A plan without unfused_elementwise prices as
 * 139.
 * 141: torchao's tensorwise Float8Linear as torch.compile runs it (fp8_impl.h
 * tsl_fp8_impl_recasts_input, tsl_fp8_impl_weight_cast_bytes; torchao's own roofline,
 * torchao/testing/float8/roofline_utils.py at 6243040): each linear input cast once —
 * the amax, then one kernel writing its rowwise and columnwise FP8 copies (6 B, 2
 * kernels), not again in the backward (eab345c, the December 2024 rows' torchao, saves
 * the FP8 input itself) — and each weight's amax and rowwise cast forward (5 B, 2
 * kernels), its columnwise cast backward with the forward's scale (3 B, 1 kernel), in
 * place of 6 B and 2 kernels for X and W each way: per element X 12 -> 6 B, W 12 -> 8 B,
 * dY 6 B as before. torchao's MX linear and grouped experts keep 138's casts. A plan
 * without fp8_impl torchao and tensorwise prices as 140.
 * 142: Hopper's fused attention core at the settled clock of a dense step, as its GEMMs
 * since 137: every GH100 part's attention shares (the family's 0.35 / 0.18 and
 * attn_kernel.h's FlashAttention-2 and cuDNN tables, all burst timings) x the H200's
 * published MSMF / MAMF, 708.5 / 841.9 = 0.842 (gemm_eff.h TSL_ATTN_GH100_SETTLED):
 * 0.295 / 0.152 by default, cuDNN at head dimension 128, 8K 0.511 / 0.441. A plan on
 * no Hopper GPU, or with an unfused core, prices as 141.
 * 143: the 500 W H100-96G (Meta's Grand Teton, torchtitan's hosts) at its cap: its
 * GEMMs (bf16 e_max 0.695 -> 0.636, FP8 0.632 -> 0.578) and attention shares (the
 * family's and attn_kernel.h's tables alike) at 0.915 x the 700 W GH100 figures, what a
 * training step on the HBM2e H100 SXM keeps at 500 W of its 700 W rate (Mayr et al.
 * 2026, arXiv:2603.16164, Table 4, "Pre-training / H100": LLaMA 3 8B under LitGPT,
 * 27,705.3 / 30,271.0 tokens/s per GPU; gemm_eff.h TSL_GH100_500W_SETTLED; the kernels
 * assumed to lose at least the step's share, FP8 as bf16). A plan on no H100-96G
 * prices as 142.
 * 144: transformers' GPT-2 block (hf_gpt2_eager, PyTorch 1.13) past 1024 keys: ATen's
 * softmax leaves its one-pass warp kernel (SoftMax.cu host_softmax: dim_size <= 1024,
 * dim_size * sizeof <= 4096) for cunn_SoftMaxForward, which reads its input three
 * times (+8 B a score in fp32, +4 B for fp16's half-to-float kernel), and
 * cunn_SoftMaxBackward, which reads the gradient twice (+4 B); the re-reads at W
 * (roofline.h TSL_ROOFLINE_BLOCK_SOFTMAX_*). A plan without hf_gpt2_eager, or of at
 * most 1024 keys, prices as 143.
 * 145: Blackwell's fused attention core at the settled clock of a dense step, as its
 * GEMMs since 56 and Hopper's core since 142: every B200 and GB200 attention share
 * (cuDNN's published GB200 sweeps, 0.67 / 0.54, MLA's backward 0.42, the head-dimension-64
 * sliding window's 0.405 / 0.409: ten single-kernel calls each, burst timings) x the
 * B200's published bf16 MSMF / MAMF, 1456.3 / 1770.9 = 0.822 (gemm_eff.h
 * TSL_ATTN_GB100_SETTLED; the GB200 at the B200's ratio, assumed): 0.551 / 0.444, below
 * the GEMM rate, so the forward no longer sits at the GEMM cap. A plan on no B200 or
 * GB200, or with an unfused core, prices as 144.
 * 146: ds_zero3_v03, DeepSpeed 0.3's ZeRO-3 as its stage-3
 * code runs under DeepSpeedExamples' Megatron ZeRO-3 recipe (cost.c ds_zero3_v03): one
 * all-gather per weight of 1e5 elements or more (NCCL's α each), again in a full
 * recompute's forward but for the layer's last weight, one reduce-scatter per tensor,
 * all exposed; ProcessGroupNCCL's list copies (a kernel per rank, L each) and the
 * buffers' zero-fill and division at W; the small tensors gathered again after the
 * step. A plan without ds_zero3_v03 prices as 145.
 * 147: FSDP2 under torch's pipelining (sdp_nosync) reduce-scatters a stage's
 * gradients after its last backward has returned (stage.py
 * backward_maybe_with_nosync: post_backward of every parameter group, then the
 * root's final callback, which makes the compute stream wait for them;
 * pytorch/pytorch#165106): the whole reduce-scatter exposed on the last
 * micro-batch, none of it under that backward's compute; and every other
 * micro-batch's backward adds its fresh bf16 gradient into FSDP2's unsharded
 * accumulator of the reduce dtype (pytorch#125191: 2·g + 2 bytes per parameter
 * of the TP rank, not ÷ z; sdp_nosync_accum_bytes). A plan without sdp_nosync
 * under PP prices as 146.
 * 148: gpt-oss's clamped quick-GeGLU as Megatron-LM
 * 44151194 runs it (weighted_bias_quick_geglu_impl): the clamp's backward as autograd
 * runs it, bool masks, wheres, their 0-d zeros and the chunk's cat (PyTorch
 * FunctionsManual.cpp clamp_backward): 15 B per element of FFN-in's output in 9
 * kernels and 3 host ops where 10 B, 3 and 1 were priced; and the linear offset's
 * torch.tensor(..., device=cuda), a synchronising copy on every forward call
 * (pytorch/pytorch#120996, #190217): the drained stream idles one host op in the
 * forward and in moe_act's recompute, the call one op more (roofline.h
 * TSL_ROOFLINE_GLU_CLAMP_*, TSL_ROOFLINE_GLU_OFFSET_SYNCS). And moe_fused_mlp
 * (PlanRequest 142): the experts' MLP through Transformer Engine's op fuser
 * (Megatron-LM use_transformer_engine_op_fuser), none of those eager pieces nor the
 * per-expert FFN-out bias. A plan without glu_clamp layers, and without
 * moe_fused_mlp beside expert biases, prices as 147.
 * 149: AWS's 10 Gigabit instance network as a link of its own (ena10, cluster_hw.c
 * ENA10_GBITS): the measured sustained 10.04 Gbit/s of a 10 Gigabit ENA instance
 * (cloudonaut.io's iperf3 cheat sheet, m5.12xlarge), which NCCL's sockets reach (2
 * threads x 8 sockets on an ENA, NCCL 2.7.8 net_socket.cc), where generic 10 GbE
 * keeps line rate x 0.80; AMP's p3.8xlarge rows run on it. A plan on no ena10 link
 * prices as 148.
 * 150: Megatron-LM's MXFP8 dispatch (moe_fp8_dispatch) runs the experts' MLP through
 * Transformer Engine's op fuser (TransformerConfig at d98e8a64: the mxfp8 dispatch and
 * combine dtypes "require BOTH use_transformer_engine_op_fuser and moe_grouped_gemm"), so
 * the knobs of a request or plan with it carry moe_fused_mlp too (tsl_request_knobs,
 * tsl_plan_get_knobs; PAPER prices neither) and so does the plan; --megatron-args reads
 * --use-transformer-engine-op-fuser with --moe-grouped-gemm as moe_fused_mlp, and the
 * Megatron export writes it. A plan without moe_fp8_dispatch, or on a model without
 * glu_clamp layers or expert biases, prices as 149.
 * 151: TP-whole parameters beside the parallel linears (tsl_layer_t.tp_repl_extra):
 * AMP's fork builds TransGAN's latent projection as a plain nn.Linear and its position
 * and relative-position tables as nn.Parameters (trans_gan_gen.py
 * ParallelTransGANGeneratorPipe), so every TP rank holds, reduces over DP and steps
 * them whole (the TransGAN-Hetero preset's 48.3M of its 199.5M). A plan on a model
 * without tp_repl_extra layers, or at TP 1, prices as 150.
 * 152: userbuffers' ring-exchange reduce-scatters end in their sum, as Transformer
 * Engine runs them (CommOverlapP2PBase::split_overlap_rs, release_v2.9 and v2.16:
 * reduce_bf16 over the t partial chunks of the rank's shard on the main stream, once
 * the ring's sends have landed): each tp_comm_overlap block's forward reduce-scatter
 * (the projection's, FFN-out's) pays one streaming kernel of (1 + 1/t)·s·h·2 bytes,
 * exposed (cost.c ub_rs_reduce_s). A plan without tp_comm_overlap prices as 151.
 * 153: DualPipeV's F&B step under a flex dispatcher prices the contention of its EP
 * all-to-alls as DeepEP's kernels cause it: they hold 20 SMs (deep_ep/buffer.py
 * Buffer.num_sms at 82dcf48; DeepSeek-V3 report Sec. 3.2.2; the 20-block grids of
 * deepseek-ai/profile-data train.json), so the partner's compute runs at (SMs − 20) /
 * SMs while they do: k = 1 + 20/SMs for that part of the step's communication (1.152
 * on the H800's 132), the cluster's overlap_slowdown for the rest (pipesim.h
 * tsl_pipesim_fb_k). PAPER, expert TP > 1 and GPUs without an SM figure keep k. A plan
 * without moe_flex, or not DualPipeV, prices as 152.
 * 154: DeepSpeed's PipelineEngine priced as it runs (knobs.ds_pipe_engine): TrainSchedule's
 * four one-way transfers a 1F1B cycle (RecvActivation, SendGrad with the previous stage;
 * SendActivation, RecvGrad with the next), each a blocking p2p.send / p2p.recv both ranks
 * sit in, so a stage's cycle holds its incoming boundary's exchange besides its own (the
 * rendezvous ds_pipe_p2p prices, cost models 45 and 47) over the bytes its protocol sends
 * (legacy_p2p: PartitionedTensor both ways). BLOOM's and MT-NLG's rows carry it, and the
 * deepspeed target sets it (recorded on a plan of several stages). A plan without
 * ds_pipe_engine prices as 153.
 * 155: Megatron-core's per-chunk gradient reduce under interleaving: with
 * overlap_grad_reduce (and its default align_grad_reduce) every backward runs under
 * no_sync and the interleaved schedule launches each model chunk's whole DP reduce
 * p − i virtual micro-batches after that chunk's last backward on stage i
 * (schedules.py backward_step_helper_postprocess; training.py sets grad_sync_func to
 * each chunk's start_grad_sync), the last chunk's after the stage's last backward:
 * none of it under that backward. STACK prices each stage's reduce so (pipeline.h
 * tsl_pipeline_chunk_rs_s) for Megatron-core's optimizer step (opt_step megatron,
 * megatron-core-fp16) without legacy_p2p or grad_reduce_exposed, at PP > 1 in
 * Megatron's group N = P (the closed form; search_eval.c chunk_rs_priced). In plain
 * 1F1B only the first stage lifts no_sync for its last backward (grad_sync_first_stage):
 * every other stage's whole reduce follows its last backward. A plan at PP 1, or on
 * another stack, prices as 154.
 * 156: the stack's own host figure (the request's host_op_us, `--host-op-us`): a stack
 * measured on its own host and PyTorch prices every eager op at that figure where the
 * built-in TSL_ROOFLINE_HOST_OP_S (PyTorch 2.11 on an H100 host) was used — the host
 * floor, the synchronised TP collectives' dispatch and restart, DeepSpeed's timers and
 * exchanges, the step's host reads. AMP's g4dn.12xlarge rows (`amp-aws`) carry 73 µs,
 * the figure AMP's own per-layer profile of the fork's GPT-2 block on that host gives
 * at TP 2 and 4 (bench/published/README.md "AMP's g4dn host"). A plan without
 * host_op_us prices as 155.
 * 157: that per-chunk reduce's contention with the drain: what of the queued chunk
 * reduces runs before the stage's last backward ends ran on the DP communicator's
 * stream beside the drain's chunk backwards, and slows them at the cluster's overlap
 * slowdown k as every overlapped collective does (tsl_cost_overlap_s; 155 priced it
 * beside nothing, where the bucketed reduce under the last backward had paid it):
 * E + (k − 1)·(R − E), E the part after the stage's end (pipeline.h
 * tsl_pipeline_chunk_rs_cost_s). A plan without the per-chunk reduce (PP 1, plain
 * 1F1B, another stack) prices as 156.
 * 158: a named FlashAttention kernel runs a head at its compiled head dimension
 * (attn_kernel.h tsl_attn_kernel_run_hd): flash1 pads to 32, 64 or 128 (flash-attn
 * 0.2's hdim32 / 64 / 128 kernels), flash2 to the next multiple of 32 (flash-attn
 * 2.0's HEADDIM_SWITCH); the fused core does the padded head's FLOPs at the padded
 * head's share, its bytes the real head's. A plan whose head dimension is one of its
 * kernel's, or without attn_kernel flash1 or flash2, prices as 157.
 * 159: Transformer Engine's split_quantize of a grouped GEMM under current scaling
 * (tensorwise), blockwise and MXFP8 runs each local expert's quantizer on its own (release_v2.16
 * cast.cpp multi_tensor_quantize_impl: the fused multi-tensor kernel is delayed
 * scaling's alone): the recipe's kernels once per expert — FC1's and FC2's inputs
 * forward, their output gradients backward — where the group had one tensor's
 * (fp8_impl.h tsl_fp8_impl_split_per_tensor; the bytes and the host's ops as
 * before). A plan without FP8 experts over more than one local expert under those
 * recipes and TE, or with moe_fused_mlp, prices as 158.
 * 160: cuBLASLt's MXFP8 GEMM at TSL_MXFP8_GEMM_RATE (6.812 / 7.161 = 0.951) of the
 * per-tensor FP8 rate (roofline.h tsl_roofline_fp8_gemm_rate: TE's GEMM profiling
 * guide, a B300 layer's twelve GEMMs pre-quantised under FP8 current scaling and
 * MXFP8): every MXFP8 linear and TE grouped linear; not the fused grouped MLP's or
 * torchao's grouped experts. A plan without mxfp8 prices as 159.
 * 161: the event simulator and the closed form price one rule (bench/published
 * README.md "The event simulator against the closed form"): (1) Megatron-core's
 * per-chunk DP reduce (155, 157) moved only the closed form's copy of each stage's
 * sync, while the simulator (tsl_plan_sim_input), the trace and the plan document
 * read the stage's time_s, which kept the reduce under the last backward; the move
 * is now the stage's time_s (search_eval.c chunk_rs_sync). (2) Megatron's blocking
 * exchanges (plain 1F1B, and legacy_p2p's interleaving) hold a stage for one hop of
 * each of its boundaries, each exchange both directions of one boundary at once:
 * K_i = C_nosync(i) − p2p_i/2 + p2p_{i−1}/2 (pipeline.c exchange_shift_s), where 158
 * charged both hops of its own boundary (the last stage none); the simulator runs
 * legacy_p2p's interleaving with blocking sends too (pipesim.h p2p_blocking), as the
 * closed form prices it. A plan without the per-chunk reduce prices as 160 where its
 * slowest stage's cycle is the same either way: one stage, DeepSpeed's rendezvous,
 * Megatron-core's interleaving (its hops hidden), a zero-bubble schedule, or an inner
 * stage the slowest between boundaries alike.
 * 162: torch.distributed.pipelining's interleaved 1F1B (ScheduleInterleaved1F1B, a
 * PipelineScheduleMulti at torch 2.6, the torchtitan rows' December 2024 nightly)
 * waits on each time step's batched send and receives before its next op, as
 * Megatron-LM before core does: every hop is stage time, none hidden in the steady
 * state, in the closed form (pipeline.h p2p_blocking) and the event simulator alike
 * (tsl_cost_vp_blocking: the torch-native stack, opt_step torch). Its plain 1F1B
 * (Schedule1F1B) fuses each steady-state send with the receive from the same
 * neighbour and waits, one hop of each boundary as Megatron's: priced as 161 (its
 * warm-up and cool-down sends, waited on one op later, are not told apart). A plan
 * without interleaving, or without opt_step torch, prices as 161.
 * 163: Transformer Engine's current-scaling casts as they run (bench/published
 * README.md "TE's current-scaling casts as they run"): (1) each quantised tensor's
 * zero-amax kernel (current_scaling.cu zero_amax_kernel; the at::zeros fill after a
 * norm): 4 kernels a cast, 3 after a norm (fp8_impl.h
 * tsl_fp8_impl_zero_amax_kernels); (2) under SP the amax all-reduce over the TP group
 * of each column-parallel linear's input forward and row-parallel linear's dY
 * backward (cost.c tp_sp_shares, amax_f_s / amax_b_s); (3) under moe_act with FP8,
 * FC2's input quantised again in the backward (set_save_original_input; roofline.c
 * fc2_recast_s). A plan without TE current scaling, and without moe_act under a TE
 * FP8 recipe other than delayed, prices as 162.
 * 164: the overlapped F&B and EP merged steps (search_eval.c stage_times, fb_save_s,
 * ep_save_s) hide the partner's communication under the passes' compute less the host
 * lead that hid their own EP collectives already (layer_cost_t.ep_lead_s, cost.c
 * ep_host_lead): that GPU idle counted twice made more host time per op price a
 * shorter iteration (bench/published README.md "More host time, a shorter
 * iteration?"). A plan without moe_a2a_overlap or DualPipeV, or whose MoE passes are
 * GPU-bound, prices as 163.
 * 165: a new opt_step composer (7: Composer 0.15+'s DecoupledAdamW after FSDP1's
 * clip_grad_norm_, opt_step.h): a loop over the pieces of the original tensors the
 * busiest rank's FSDP1 shard holds (use_orig_params; cost_host_sync.h
 * tsl_shard_step_tensors), each tensor's step count read back (.item()) before its
 * eight kernels, which then run at the host's pace (tsl_composer_step_sync_s, h = H / 3).
 * llm-foundry's 2024 MPT rows carry it (bench/published README.md "Composer's
 * DecoupledAdamW"). A plan without opt_step composer prices as 164.
 * 166: Megatron-core's set_save_original_input(linear_proj) (bench/published README.md
 * "linear_proj keeps its bf16 input"; tsl_cost_proj_orig_input): under a TE recipe
 * other than delayed and Megatron-core's optimizer, the attention output projection's
 * forward cast writes its rowwise copy alone, its backward casts the kept bf16 input
 * again for the wgrad (roofline.c proj_orig_s: current scaling the whole cast, 4
 * kernels; the block-scaled recipes the columnwise copy, 1), and the stash keeps that
 * input in bf16 — the fused core's own saved output — not its FP8 copy (cost.c
 * layer_memory). A plan without FP8 (or FP4) under opt_step megatron or
 * megatron-core-fp16, or under delayed scaling, prices as 165.
 * 167: the experts after the sync — a dropless MoE forward's routed experts, issued
 * after the dispatcher's device-to-host sync from an empty stream, show what their host
 * ops (TE's per-expert quantize and GEMM calls counted, roofline.h
 * TSL_ROOFLINE_TE_EXPERT_FOPS_*) take beyond their kernels and the forward's EP
 * collectives, at host_op_s × the GPU type's host_scale (GB200's Grace 2.75,
 * cluster_hw.c; cost.c moe_sync_stretch; docs/cost-model.md "The experts after the
 * sync"). A plan without MoE layers, with a capacity factor, under TE's op fuser, or
 * whose expert stretch is GPU-bound (every x86-host row of bench/published) prices as
 * 166.
 * 168: --target torchtitan weighs interleaved 1F1B as torchtitan runs it
 * (Interleaved1F1B: torch.distributed.pipelining's ScheduleInterleaved1F1B, its
 * model parts placed part q on rank q mod pp; target.h tsl_target_torchtitan_parts),
 * priced with torch's blocking exchanges (162) in the group its schedule takes from
 * the micro-batches (pipeline.h tsl_pipeline_torch_vp_group: the search's m a
 * multiple of pp, N = pp); the torchtitan exports write it. The search space under
 * --target torchtitan grows. The blocking rule of 162 is keyed on the stages' runtime,
 * knobs.torch_pipelining (plan field, eval --torch-pipelining; the torchtitan target,
 * its configurations and rows set it), not on opt_step torch, which stood for it: an
 * interleaved plan with torch's optimizer step but not its pipelining (no
 * bench/published row) hides its hops again. Every other plan prices as 167.
 * 169: --target torchtitan weighs no context parallelism (search.c target_weighs_cp):
 * torchtitan main's Python configuration runs CP only as FlexAttention over K/V
 * all-gathered at the attention (b5bcd76c6 models/common/decoder_sharding.py), which
 * Tessel does not price, and v0.2.x's job TOML only ring attention, so no CP plan
 * exports to both forms; a fixed --cp above 1 under the target is refused (cp). The
 * search space under --target torchtitan shrinks; nothing is priced otherwise: every
 * plan prices as 168.
 * 170: Megatron-core's other set_save_original_input sites (bench/published README.md
 * "The other kept-original inputs"; tsl_cost_shared_fc1_orig_input,
 * tsl_cost_mla_down_orig_input): the shared experts' linear_fc1 unless shared_experts
 * is recomputed, and under a layernorm recompute latent attention's down projections,
 * cast as linear_proj's at 166 (roofline.c orig_input_s; the shared FC1's input
 * gathered under SP: current scaling's forward saves nothing there, its backward
 * recasts the rowwise copy alone). And TE's default memory: a fused core keeps its
 * bf16 output for its own backward beside TE's FP8 copy of it, so the output
 * projection's input costs 2 B + one copy per element where 1 copy was counted
 * (cost.c proj_copy_beside_core; not with +selckpt, an unfused core or full CKPT). A
 * plan without FP8 (or FP4), or under Megatron-core without shared experts and
 * without a layernorm recompute of latent attention, prices as 169.
 * 171: CUDA-graphed modules and the host's pace everywhere —
 * a plan's cuda_graph_modules (cuda_graph.h; plan field and tessel.v1 field 146, eval
 * --cuda-graph-modules: Megatron-core's per-layer graphs of attn, mlp, moe,
 * moe_router(+moe_preprocess), mamba) takes each graphed module's ops off the pass's
 * host floor, one graph launch (TSL_ROOFLINE_GRAPH_LAUNCH_OPS) per module and pass in
 * their place (roofline.c graphed); the GPU type's host_scale (GB200's Grace 2.75)
 * scales the built-in host op on every use (tsl_cost_env_init: the floor, EP's host
 * lead, the step's host reads, ...), not only the experts after the sync; and that
 * stretch no longer subtracts the part of the pass's floor that already hid the
 * forward's EP collectives (cost.c moe_sync_stretch: more host time priced a shorter
 * forward). A plan without cuda_graph_modules on x86 hosts prices as 170 (no
 * bench/published x86 row moves but those carrying graphs); on a GB200 every eager
 * host-bound pass is slower (docs/cost-model.md "CUDA-graphed modules").
 * 172: Hopper's default fused-attention backward at its keys (roofline.c flash_s,
 * attn_kernel.c tsl_attn_hopper_default_bwd_keys): the H100 family's one backward share,
 * 0.18, was measured at 1,024 keys (gemm_eff.h TSL_ATTN_H100_BWD_KEYS), and a flash
 * backward's per-query work amortises over the keys a query sees, so the share is now
 * 0.18 × FlashAttention-2's published backward at the kernel's keys over its own at
 * 1,024 (the FA3 paper's Fig. 6; flat past 16k): 1.22 × at 8k, 1.24 × from 16k at head
 * dimension 128. The forward's 0.35 (FlashAttention-2's long-sequence utilisation) and
 * every named kernel keep their figures. A plan on a GPU other than H100, H200 and H800,
 * with a named attn_kernel, an unfused core, or whose fused cores see 1,024 keys, prices
 * as 171.
 * 173: per-module precision — a plan's module_precision (module_prec.h; plan field and
 * tessel.v1 field 148, eval --module-precision: Megatron-core's per-module quant_recipe,
 * Megatron-Bridge's te_quant.cfg) prices each named linear (linear_qkv, linear_proj, a
 * dense MLP's linear_fc1/fc2, Mamba's in_proj/out_proj, latent MoE's fc1/fc2_latent_proj)
 * at its own precision inside the layers the recipe quantizes: its forward, dgrad and
 * wgrad GEMMs at that recipe's rate (bf16 at F; roofline.c prec_enter), its input and
 * dY casts at its bytes, its SP gathers in bf16 where it is bf16, its TE weight copies,
 * their per-iteration cast and its kept input at its recipe's bytes (none in bf16;
 * cost.c fp8_stash_act, fp8_weight_cast_s). A plan without module_precision prices as
 * 172.
 * 174: NCCL's tree on exactly two NVLink domains at the bus figure NCCL gives it — its
 * search raises a tree graph's speedIntra up to 2 × speedInter where the node's links
 * carry it and its tuner prices trees on ≤ 2 nodes by speedIntra (NVIDIA/nccl v2.10.3-1
 * src/graph/search.cc pass 2, tuning.cc; the same since v2.7.8 and in v2.30.7):
 * min(intra, 2 × the NICs' share) against the ring's min(intra, the NICs' share)
 * (cluster_topo.c group_busbw, tsl_coll_lat_t.tree_gain). A plan's nccl_no_tree (plan
 * field and tessel.v1 field 156, eval --nccl-no-tree: NCCL_ALGO=^tree, AMP's fork)
 * prices every all-reduce on the ring (tsl_cluster_coll_lat_no_tree). A plan without
 * nccl_no_tree whose all-reduce groups do not span exactly two domains bound by their
 * NICs, or one with it that never chose a tree, prices as 173 (docs/cost-model.md
 * "NCCL's tree on two nodes").
 * 175: latent MoE's projections in FP8 memory — fc1_latent_proj and fc2_latent_proj
 * (Nemotron 3 Super; TELinear "duplicated", Megatron-LM moe_layer.py at d98e8a6) keep
 * TE's FP8 weight copies (h × ℓ each, whole on every TP rank) at the recipe each runs
 * at, cast once per iteration; fc2_latent_proj keeps its input (the combined ℓ-wide
 * rows) in FP8 in place of their bf16 stash, and fc1_latent_proj keeps an FP8 copy of
 * the pre-MLP norm's output beside the bf16 one the router keeps (roofline.c fp8_ffn,
 * tsl_roofline_fp8_split_t.beside; cost.c fp8_stash_act); neither where module_precision
 * keeps it bf16, no input under the moe module's recompute. A plan without latent MoE
 * layers priced in FP8 prices as 174 (docs/cost-model.md "Latent MoE in FP8").
 * 176: the QK norms (tsl_layer_t.qk_norm: Qwen3, Gemma 3, OLMo 2, Llama 4's L2 norm) are
 * priced at the bandwidth, in the attention block (roofline.c qk_norm_s, roofline.h "QK
 * norms"): Megatron-core's TENorm q_layernorm / k_layernorm (Megatron-LM 44151194
 * attention.py, TE release_v2.16 ops/basic/rmsnorm.py) read and write 2 B an element of
 * the rank's queries and keys forward, copy the strided key first (and the query where
 * its reshape was a view), and move 6 B an element backward in two kernels a tensor (the
 * fused kernel and the dγ finalize); Megatron's L2Norm one compiled kernel a tensor each
 * way; an eager stack its RMSNorm chain; one host op a kernel. Their input, which the
 * norm keeps, counts with the heads (act_shard: divided by TP without SP, where it was
 * replicated), their FLOPs once, and two weight tensors more where a .grad accumulation
 * kernel runs per tensor. A plan on a model without qk_norm prices as 175.
 * 177: TE delayed scaling's amax reduction is priced per model chunk and pass: at each
 * fp8_autocast exit (Megatron-core's TransformerBlock.forward, 338af5145) and after the
 * chunk's backward, TE (7d576ed25 fp8.py reduce_and_update_fp8_tensors) concatenates the
 * modules' amaxes, all-reduces them (MAX, on the compute stream's path) over the amax
 * reduction group — TP x DP x CP, the stage's block — and runs one fused history and
 * scale update (delayed_scaling.cu kernel_bulk): that all-reduce plus two launch floors,
 * each chunk forward and backward, in the stage's per-micro-batch time
 * (cost.c tsl_cost_fp8_delayed_amax_s, search_eval.c eval_stage_rows). A plan without
 * FP8 under the delayed recipe and TE prices as 176 (docs/cost-model.md "Delayed
 * scaling's amax reduction").
 * 178: a fused norm's backward is two kernels and two host ops, not one (roofline.h
 * "QK norms", TSL_ROOFLINE_TE_NORM_BWD_KERNELS; roofline.c norm_kernels): the
 * elementwise dX kernel and the dγ(/dβ) finalize that sums its per-CTA partials (TE
 * release_v2.16 common/normalization/rmsnorm/rmsnorm_bwd_semi_cuda_kernel.cu and
 * layernorm/ln_bwd_semi_cuda_kernel.cu: the tuned and the general launchers both
 * launch the finalize kernel after the main one). In every block's norm (TE's
 * LayerNormLinear calls the same rmsnorm_bwd / layernorm_bwd; an MoE block's
 * standalone pre_mlp_layernorm, TENorm, likewise), MLA's latent norms, an MTP depth's
 * enorm, hnorm and final norm, BLOOM's embedding norm; PyTorch's native layer_norm
 * backward launches two as well (grad input, then gamma/beta), apex's FusedLayerNorm
 * three (the third unpriced). The dγ partials' bytes are left out (assumed small: a
 * few rows of h in fp32). Not under autocast (its five kept), nor an eager RMSNorm
 * chain (its own kernels), nor Mamba's gated norm (mamba_ssm's Triton kernels, not
 * TE's). A plan on a model without a fused norm prices as 177 (none in practice).
 * 179: the moe recompute module's drop on a latent MoE layer (recompute.c
 * tsl_recompute_drop, recompute.h): Megatron-LM 44151194 moe_layer.py checkpoints the
 * whole custom_forward, preprocess's fc1_latent_proj and postprocess's fc2_latent_proj
 * with it, so it drops the dispatched copies at their width ℓ and fc2_latent_proj's
 * ℓ-wide input (model.h "Latent MoE": 2·k·s·ℓ + 4·s·E + 2·s·ℓ replicated), not 2·k·s·h
 * + 4·s·E; the checkpoint's input, the norm's output fc1_latent_proj reads, is kept. The
 * recompute's time already priced the latent layer. A plan without moe in
 * recompute_modules on a latent MoE model prices as 178.
 * 180: a layer's extra_fwd_flops counted once outside cost.c, as fwd_flops already holds
 * them (model.c compute; model.h extra_*): the megatron, torchtitan and galvatron targets'
 * starting cut (target.c flops) had weighed them twice — BERT's MLM transform in the head,
 * a soft-capped head, a scaled embedding — and moved BERT-Huge's cut at 3 or more stages
 * (the search under --target answers another plan); an imported whole-layer profile
 * (profile.c tsl_profile_add_layer: Galvatron's, AMP's) had split the extra into its
 * blocks' FLOPs twice, overstating their rates, so such a layer priced under its measured
 * time. cost.c moves nowhere. A plan whose model has no extra_fwd_flops, or searched
 * without --target and priced without an imported per-layer profile, prices as 179
 * (docs/cost-model.md "Extra FLOPs, once").
 * 181: TransformerEngine's kernels around its p2p CP ring (cp_comm p2p, Megatron-core's
 * AttnFuncWithCPAndKVP2P; roofline.c ring_te_s, dev.cp_te set in cost.c cp_core; roofline.h
 * "Context parallelism as a ring"): the first K/V send buffer's copy each pass, the
 * softmax-LSE and output corrections forward (one torch.compile'd kernel each, all c
 * output corrections after the ring), the dQ, dK, dV copy_/add_ per step backward, in
 * bf16, as bytes at the memory bandwidth plus a launch each, on the slowest rank. A plan
 * without cp > 1 under cp_comm p2p prices as 180 (docs/cost-model.md "Context
 * parallelism").
 * 182: no priced term changed — the megatron and torchtitan targets' search did: each
 * configuration costed on the starting cut (target.c partition_ends: the first and last
 * stages free, the middle ones equal, by forward FLOPs) is costed again on the cut of that
 * shape whose largest stage in the layers' priced forward + backward time is smallest
 * (target.c tsl_target_ends_cut; search_eval.c ends_priced_cut), the faster kept, as
 * 106's hybrids are re-cut freely: a layer whose time is not proportional to its FLOPs
 * (BERT's head, Llama 3's 128K-vocabulary head and loss) moves the cut (BERT-Huge-32 on
 * 2x8 A100 at PP 8: 716.33 -> 752.01 samples/s; Llama3-8B on 2x8 H100 at PP 8: 15.19 ->
 * 17.08), so a stored plan of such a request is searched again. Not galvatron (its
 * re-balancing cuts freely by priced time already) nor deepspeed (its own cut). A
 * plan of another target, a hybrid, or a model whose time follows its FLOPs prices and
 * searches as 181 (docs/search-space.md "Under --target: the priced starting cut").
 * 183: the head's final norm and Mamba's gate. The head's final norm
 * (tsl_layer_t.final_norm: Megatron-core's final_layernorm, torchtitan's norm, HF's
 * ln_f; every preset head) is priced on the stage that holds the head, as the blocks'
 * norm runs on the stack (roofline.c final_norm_s, roofline.h "The head's final
 * norm"): TE's fused norm, 4 B an element forward and 6 B backward in norm_kernels; an
 * eager RMSNorm chain; under autocast the fp32 norm and its cast, 14 B in 2 kernels
 * forward, 26 B in 3 backward. Its memory was counted already. Mamba's gate y·silu(z)
 * runs inside the scan at Megatron-LM d98e8a64dd (_ssm_training passes no
 * rmsnorm_weight, so mamba_ssm's chunk-scan kernel gates and writes out_x, and the
 * norm gets no z): 4 B an element of d_i/t forward (z read, out_x written), 12 B in
 * one kernel backward (_chunk_scan_bwd_dz: dout, out_x, z, x read, dz and dout_x
 * written); the grouped RMSNorm's backward three kernels (the Triton kernel,
 * _dw.sum(0), the cast to the bf16 weight) (roofline.c mamba_gate_norm_s, roofline.h
 * "Mamba's gate and gated norm"). A plan on a model without a head carrying
 * final_norm and without Mamba layers prices as 182.
 * 184: apex's LayerNorm backward (plan field norm_impl, PlanFigures 157, eval
 * --norm-impl; norm_impl.h). apex's fused_layer_norm_cuda and Megatron-LM 2021's copy
 * of it (MixedFusedLayerNorm, fused_mix_prec_layer_norm_cuda: 6985e58938
 * megatron/fused_kernels/layer_norm_cuda_kernel.cu HostLayerNormGradient; NVIDIA/apex
 * 6424da3b csrc/layer_norm_cuda_kernel.cu l.849-945) launch three kernels a norm
 * backward where TE launches two: cuComputePartGradGammaBeta reads dY and X once more.
 * norm_impl apex prices every fused norm's backward with one kernel (and host op) and
 * 4 B an element more (roofline.c norm_kernels, norm_part_grad_s); the forward is one
 * kernel either way. Set on the narayanan21-t1, -t2-ptdp, mtnlg22 and bloom-tr11* rows
 * (Megatron-LM 6985e58938, Megatron-DeepSpeed 8a132ced and affff3d2). A plan without
 * norm_impl apex prices as 183.
 * 185: TE's delayed-scaling amax reduction over TP only, asynchronous (plan field
 * fp8_amax_tp_only, PlanRequest/PlanOptions/PlanFigures 158, eval --fp8-amax-tp-only).
 * TE before v1.6 (da30634a6, NeMo 24.03.01's) under NVTE_DP_AMAX_REDUCE_INTERVAL=0
 * reduces the amaxes over the module's TP group only, not at all at TP 1 (fp8.py
 * global_amax_reduction l.363-386), and under NVTE_ASYNC_AMAX_REDUCTION=1 (module/base.py
 * l.235-236) launches the all-reduce async: the forward's at the next fp8_autocast entry,
 * waited by that region's first module before its kernels (base.py l.554-557: exposed),
 * the backward's after the first module's backward, waited at the next backward region
 * (base.py l.76-79, l.98-107: hidden under the work between). Priced so in
 * tsl_cost_fp8_delayed_amax_s: the forward's all-reduce over t ranks, none backward, no
 * concatenation at TP 1. Set on the nemo-long-h100 rows (NeMo-Framework-Launcher
 * 24.03.01 launcher_scripts/conf/config.yaml l.66-67). A plan without fp8_amax_tp_only
 * prices as 184.
 * 186: Megatron-core's native cross-entropy fusion, a new loss_impl megatron-fused (7;
 * loss_impl.h; --cross-entropy-loss-fusion, the --megatron-args import and the export).
 * megatron/core/fusions/fused_cross_entropy.py at 338af5145 (NeMo r2.0.0rc1's
 * MCORE_TAG) runs vocab_parallel_cross_entropy's steps in jit_fuser functions, which
 * are torch.compile on torch >= 2.2 (megatron/core/jit.py): 22 B per logit in 3 kernels
 * forward (38 in 6 eager), and backward a clone of the saved fp32 softmax before the
 * scatter, 18 B in 2 kernels (14) with the clone's 4 B beside the 2 B gradient (bwd
 * transient 6 B per logit, 2 eager; Liger-Kernel's H100 measurement: a 12 B peak
 * where the eager loss takes 8). Set on nemo2407-llama3-8b-8gpu and -70b-64gpu (the
 * launcher's llama3 yamls set cross_entropy_loss_fusion). A plan without loss_impl
 * megatron-fused prices as 185, but a --megatron-args line with
 * --cross-entropy-loss-fusion and no --cross-entropy-fusion-impl te, which 185 priced
 * as megatron.
 * 187: no priced term changed — the search did: its local improvement of the fastest
 * plan's cuts (search_partition.c improve_cuts) also moves a layer from each other
 * stage tied busiest to the idlest where no other move was kept (a V's rank s runs
 * parts s and 2P - 1 - s, so which tied stage gives matters: GPT3-175B on 100k H100,
 * 36776.38 -> 36809.48 samples/s, pp 20 -> pp 25 DualPipeV), so a stored plan is
 * searched again. Every plan prices as 186.
 * 188: FlashAttention-2 holds its burst clock on the 700 W Hopper parts (H100-80G, H200,
 * H800): attn_kernel flash2 takes the FA3 paper's FlashAttention-2 shares (Figs. 5-6) as
 * published, no longer × the GEMM's settled / burst clock 708.5 / 841.9 (attn_kernel.c
 * tsl_attn_hopper_share, attn_kernel.h tsl_attn_kernel_holds_clock; gemm_eff.h
 * attn_power_capped). Assumed: a kernel at ~37 % of the tensor cores' peak stays below the
 * 700 W limit at its boost clock, where a GEMM at ~85 % does not (docs/cost-model.md
 * "FlashAttention-2 holds its clock"). The 500 W H100-96G, cudnn and the default keep the
 * settled clock. A plan without attn_kernel flash2 on a 700 W Hopper part prices as 187.
 * 189: Transformer Engine's MXFP8 quantize kernel at TSL_MXFP8_CAST_MEM_EFF (0.65) of the
 * datasheet memory bandwidth, not the streaming 0.80 (roofline.h; roofline.c cast_mem_s):
 * 5.21 TB/s on a B200 writing both copies of a bf16 8192 x 8192 tensor (ROCm/
 * TransformerEngine PR #598's B200 column), 5.07 TB/s for TE's own cast + dbias at
 * 4096 x 14336 (NVIDIA/TransformerEngine PR #3137). Every MXFP8 cast under fp8_impl te
 * — the activations', the gradients', a kept input's recast, the step's weight cast —
 * and the copy a rowwise- or columnwise-only cast leaves out; torchao's MX casts and
 * every other recipe keep 0.80. A plan without fp8 mxfp8 under fp8_impl te (or a
 * module at mxfp8: module_prec) prices as 188.
 * 190: no priced term changed — the search did: the plans it returns beside the best
 * are improved a cut at a time too, once every engine run is done, each by an engine
 * under its own knobs (search_partition.c tsl_search_improve_top), and a run's fastest
 * plan whose 8 passes (improve_cuts) run out goes on with "don't look" bits
 * (improve_marked): GPT-2 345M on 16x16 A100, pp 8 ZB-V 308.89 -> 312.91 and pp 16 ZB-H1 253.99 -> 260.60
 * samples/s; GPT3-175B on 100k H100's best 36809.48 -> 36840.43. A stored plan is
 * searched again. Every plan prices as 189. */
/*
 * 191: HybridEP's routing map (docs/cost-model.md "HybridEP's routing map"): a flex
 * plan names its back end (moe_flex_backend: hybridep, deepep; unset Megatron-LM's
 * default, deepep, or hybridep where the experts are padded to capacity); under
 * HybridEP every MoE forward first all-gathers every rank's routing map (1 B per token
 * and expert) over the TP x EP group through NCCL, scans it in the preprocessing kernel
 * and, dropless, synchronises the stream (DeepEP hybrid-ep 94a9f8f executor.cu
 * l.23-56, 165-167; Megatron-LM 44151194 token_dispatcher.py _HybridEPManager): the
 * gather and the scan exposed in full there, beside the other EP collectives
 * under a capacity factor. Nemotron 3 Super on 64 GB200: 134 MB gathered, ~0.49 ms
 * per MoE forward (0.33 s of 8.6 s an iteration); bench/published mean 6.05 -> 6.01 %,
 * 18 -> 19 sources PASS. A plan without moe_flex, under deepep, or flex with the back
 * end unset and unpadded (Megatron-LM's deepep) prices as 190.
 *
 * 192: TransformerEngine's p2p CP ring where every CP rank has an NVLink domain of its
 * own (each hop over the network) slows the core beside each step's transfer by the
 * SMs NCCL's send/recv kernels hold, not by the overlap slowdown k: ≤ 2 channels a
 * network peer (NVIDIA/nccl paths.cc ncclTopoGetNchannels, v2.19.4-v2.27.3), one CTA a
 * channel, two peers (one at c = 2), so k = 1 + 4/132 on an H100 (cost.c
 * cp_p2p_net_ctas, the SM-share rule of 37 and 153). nemo-long-h100's CP 16 / 32 rows
 * +9.4 / +6.3 → +0.7 / −2.7 %. A ring inside a node, with a hop inside one, in PAPER
 * mode or on a GPU without an SM figure prices as 191.
 *
 * 193: FP8 attention (knobs.fp8_dpa, PlanRequest/PlanOptions/PlanFigures 160, eval
 * --fp8-dpa: TransformerEngine's fp8_dpa, Megatron-LM's fp8_dot_product_attention): on
 * B200 / GB200 a causal sliding window's backward at head dimension 64 runs cuDNN's FP8
 * kernel, which computes every tile under the causal diagonal and masks the window there —
 * cuDNN 9.22's published GB200 sweep (cudnn-frontend gpt_oss_20260424_100011.csv, fp8 and
 * mxfp8) grows as s², at the bf16 window backward's own form over the causal square's keys
 * (per-tensor FP8 its share, MXFP8 0.337: gemm_eff.h TSL_ATTN_GB100_SWA64_MXFP8_BWD_EFF).
 * Set on the rows.json rows that run fp8_dot_product_attention; only gpt-oss's windowed
 * layers move (GPT-OSS-120B GB200 MXFP8 26.06 / 26.08 −16.3 / −17.1 → −10.0 / −10.8 %).
 * Every other core, and every GPU without the sliding-window figures, prices as in bf16;
 * a plan without fp8_dpa prices as 192.
 *
 * 194: Megatron-LM's EP overlap priced node by node as its two streams run it
 * (ep_overlap.h, docs/cost-model.md "The EP overlap node by node"): forward layer i
 * beside backward layer n − 1 − i, each all-to-all under the compute its node is
 * paired with, the experts' dW deferred (--delay-wgrad-compute, every overlap row's
 * preset) or inline (moe_a2a_wgrad_inline, request / plan field 161); the embedding,
 * head and MTP entry alone. Where each all-to-all hides under its node, as 193.
 * mb2604-dsv3-b200-mxfp8 −8.7 → −3.3 %, mb2604-q235b-h100-fp8 +10.1 → +10.2 %.
 *
 * 195: no price moves; the search's local improvement (search_partition.c
 * improve_marked) ends with two more moves where no cut is left to look at: a layer
 * from each stage tied busiest to each neighbour not tied busiest, and where the idlest
 * stage holds layers of a block kind the busiest does not (DeepSeek-V3's dense layers)
 * a layer from each stage tied busiest to each of the two next idlest stages. Plans
 * change (bench/search: GPT3-175B on 100k H100 36840.43 -> 36841.79 samples/s; DeepSeek-
 * V3's EP 8 alternatives +0.15-0.25 %, its pp 8 at batch 15360 602.75 -> 630.87), so
 * tesseld's stored plans are searched again.
 *
 * 196: the fused weighted squared ReLU (plan field moe_fused_srelu, PlanRequest /
 * PlanFigures / PlanOptions 162, eval --moe-fused-srelu; Megatron-LM --use-fused-weighted-
 * squared-relu both ways). Every Megatron-Bridge Nemotron-H recipe sets
 * use_fused_weighted_squared_relu (recipes/nemotronh/nemotron_3_nano.py l.190,
 * nemotron_3_super.py l.131 at 21d102f5e; likewise 63b08b397, cba825fdd), so
 * TEGroupedMLP's bias_act_func runs relu(x)²·w and its backward as one torch.compile'd
 * function each (Megatron-LM 44151194 experts.py l.674-681,
 * fusions/fused_weighted_squared_relu.py), not the activation and then the eager fp32
 * product and cast (TSL_ROOFLINE_EXPERT_PROBS_*, cost model 79): 12 + 34 B an element and
 * 7 kernels a layer's routed activation no longer priced, in the forward, the `moe`
 * recompute and `moe_act`'s. Set on the 16 Nemotron 3 rows: Nano H100 +10.3 / +13.2 →
 * +0.5 / +3.2 %, the Blackwell Nano and Super rows 6–14 points more optimistic. A plan
 * without it prices as 195.
 * 197: TransformerEngine's p2p CP ring on the host (roofline.c te_ring_host_ops): its
 * framework calls counted as written at release_v2.7 (context_parallel.py
 * AttnFuncWithCPAndKVP2P; roofline.h TSL_ROOFLINE_TE_RING_*: forward 5 + 15·c, backward
 * 15 + 25·c, the c attention calls among them) at TSL_ROOFLINE_FRAMEWORK_OPS a host op, in
 * place of its 2c + 1 / 3c + 2 correction kernels alone: at c = 2 11 host ops forward and
 * 21 backward where 5 and 8 were. Host time only; binds where a layer's GPU time is short
 * of its host's: Llama 3 405B at TP 4, CP 2 on Grace (25.09 GB200 MXFP8, −24.5 → −16.4 %),
 * no other row moves.

 *
 * 198: the host between two syncs. TransformerEngine's per-expert calls in a MoE
 * forward (GroupedLinear's quantize and cuBLASLt GEMM per local expert, cost model 167's
 * count, TSL_ROOFLINE_TE_EXPERT_FOPS_*) join the pass's host floor: a dropless MoE
 * forward syncs once a layer (Megatron-LM 44151194 token_dispatcher.py, every
 * dispatcher), and one host thread issues everything from one sync to the next, so the
 * layer's forward is never under its ops and those calls at H (roofline.c moe_ffn_s).
 * Before, they sat only in the stretch after the sync (cost model 167), and the rest of
 * the pass's host work was let run beside them. No new figure. mb2604-q235b-b200-mxfp8
 * −23.2 → −15.8 %, mb2604-gptoss-h100-bf16 −19.0 → −13.2, the Super GB200 rows 3–6
 * points nearer; mb2604-q30b-gb200-mxfp8 +2.8 → +9.2 (Grace's 2.75 on TE's calls,
 * assumed at 167). Backward unchanged.
 *
 * 199: HybridEP's dispatch and combine inside one NVLink domain at its own kernels'
 * figure (tsl_gpu_spec_t.hybridep_nvl_bw 691.9 GB/s on GB200 and B200, with
 * TSL_HYBRIDEP_PEER_S a peer; cost.c hybridep_nvl_s), fitted to HybridEP's GB200
 * kernel-only sweep (DeepEP hybrid-ep 94a9f8f docs/README_Hybrid-EP.md, 32 SMs, 8-36
 * ranks), not NCCL's all-to-all (1.6x slower there). 27 rows move: DeepSeek-V3 GB200
 * 26.04.01 +14.9 -> +3.6 %, 26.06 / 26.08 / 26.06.01 +8.7 / +7.4 / +7.8 -> +4.3 / +3.1 /
 * +3.4 %; Qwen3-235B GB200 +6.2 / +4.2 -> -6.7 / -1.0 %; the eager-path Nemotron 3,
 * Qwen3-30B and GPT-OSS Blackwell rows 2-10 points more optimistic. DeepEP, groups across
 * domains, Hopper and PAPER price as 198.
 *
 * 200: TE's NVFP4 quantiser all-reduces its amax over the TP group under SP, as current
 * scaling's does (cost model 163): a column-parallel linear's input forward and a
 * row-parallel one's dY backward (TransformerEngine release_v2.16 module/linear.py
 * l.2087-2108, layernorm_linear.py l.1898-1919 _customize_quantizers_nvfp4;
 * csrc/quantizer.cpp l.2402-2421 allreduce_coalesced, then wait()) — fp8_impl.h
 * tsl_fp8_impl_amax_reduced. Each TP block's linear is charged at the recipe its module
 * runs (module_prec: a Mamba out_proj kept MXFP8 under an NVFP4 plan reduces none;
 * roofline.h col_amax / row_amax), no longer at the plan's. A plan without NVFP4 under
 * SP with TP > 1 prices as 199.
 */
#define TSL_COST_MODEL_VERSION 200u

/* HybridEP's per-peer cost of one dispatch or combine kernel inside an NVLink domain,
 * s (cost model 199): the fit beside tsl_gpu_spec_t.hybridep_nvl_bw to HybridEP's GB200
 * kernel-only sweep (cluster_hw.c hybridep_nvl_bw; cost.c hybridep_nvl_s). */
#define TSL_HYBRIDEP_PEER_S 2.751e-6

/* How a training stack keeps and synchronises its gradients and optimizer states
 * (docs/cost-model.md, "Precision and overlap"), each zero for what Tessel's
 * executor does (worker/exec: bf16 gradients all-reduced in 2 bytes, fp32 master
 * weights, the DP all-reduce under the rest of the backward, ZeRO-1's weight
 * all-gather after the step). The same four are plan fields (plan.h). */
typedef struct tsl_cost_knobs {
    uint32_t grad_reduce_bytes; /* 0 (= 2): 16-bit gradients, buffered and reduced in
                                   2 bytes; 4: fp32 main gradients (Megatron-LM's
                                   accumulate_allreduce_grads_in_fp32 with --bf16,
                                   torchtitan's mixed_precision_reduce float32) */
    uint32_t grad_buf_bytes;    /* the gradient buffer's element bytes (param.grad,
                                   main_grad: what the weight gradients accumulate into,
                                   the memory keeps and the step reads) where it is not
                                   grad_reduce_bytes's: 2 for a 16-bit .grad the stack casts
                                   to fp32 for its reduce (DeepSpeed's fp32_allreduce,
                                   engine.py allreduce_bucket); 0: the reduce's */
    bool no_fp32_master;        /* no fp32 master copy: Adam's moments in the weights'
                                   16 bits (torchtitan training_dtype bfloat16):
                                   2 + g + 4 bytes per parameter instead of 2 + g + 12 */
    bool grad_reduce_exposed;   /* the DP all-reduce / ZeRO-1 reduce-scatter runs after
                                   the backward, exposed (Megatron-LM without
                                   --overlap-grad-reduce, DeepSpeed ZeRO-0/1/2 without
                                   overlap_comm); false: under the backward */
    bool overlap_param_gather;  /* ZeRO-1's weight all-gather under the next forward
                                   (Megatron-LM --overlap-param-gather); false: exposed.
                                   On an SDP level (STACK): Megatron-FSDP, each
                                   micro-batch's gathers prefetched under the passes'
                                   compute (cost model 74) */
    uint32_t cp;                /* context-parallel degree c of every layer (0 or 1: none);
                                   docs/cost-model.md "Context parallelism" */
    uint32_t cp_comm;           /* tsl_cp_comm_t: how attention meets the other CP ranks */
    uint32_t fp8;               /* tsl_fp8_recipe_t (roofline.h) of the blocks' linear
                                   GEMMs; 0: bf16. Priced where the block's GPUs have FP8
                                   tensor cores (env.device_fp8_flops; nvfp4: FP4 ones,
                                   env.device_fp4_flops), bf16 elsewhere */
    uint32_t fp8_impl;          /* tsl_fp8_impl_t (fp8_impl.h): who runs the recipe —
                                   TE (0: Megatron-LM, Megatron-Bridge, NeMo) or torchao
                                   (torchtitan); what is cast per use and what is saved */
    uint32_t attn_kernel;       /* tsl_attn_kernel_t (attn_kernel.h): the fused attention
                                   kernel the stack runs, priced by its published shares
                                   on Hopper; 0: the GPU family's one figure */
    uint32_t loss_impl;         /* tsl_loss_impl_t (loss_impl.h): how the stack runs an LM
                                   head's cross-entropy — the executor's (0), torch's eager
                                   cross_entropy (torchtitan), Megatron-LM's vocabulary-
                                   parallel one, TE's fused one; its kept and transient
                                   bytes per logit. Under autocast: torch's */
    bool fp8_param_gather;      /* with fp8: the model's weights themselves are FP8 (1 byte
                                   and its transpose) in place of bf16 (Megatron-LM
                                   --fp8-param-gather, torchao's FSDP float8 all-gather):
                                   no extra FP8 copies kept, and the ZeRO-3 / ZeRO-1
                                   weight all-gathers move the FP8 layers' weights in 1
                                   byte */
    bool moe_bf16_experts;      /* with fp8: the routed experts' grouped GEMMs stay bf16
                                   (torchtitan without its grouped-experts converter);
                                   false: FP8 with the plan's recipe, as Megatron-LM with
                                   Transformer Engine runs them */
    bool moe_fp8_dispatch;      /* with FP8 experts: the dispatch all-to-all (forward) and
                                   the combine's gradient (backward) move FP8 with its
                                   scales (DeepSeek-V3 Sec. 3.3.2; Megatron-LM
                                   --moe-dispatch-fwd-dtype / --moe-combine-bwd-dtype
                                   mxfp8); false: bf16 */
    bool moe_alltoall;          /* Megatron-LM's all-to-all token dispatcher
                                   (--moe-token-dispatcher-type alltoall, permute fusion):
                                   its counts and their all-gather, the sync before the
                                   dispatch, the routing weights' all-to-all and the second
                                   permutation (roofline.h TSL_ROOFLINE_A2A_*); false: the
                                   permutation and the two all-to-alls alone (HybridEP,
                                   DeepEP, torchtitan; and the PAPER mode's, whose env
                                   the engine gives it off) */
    bool moe_unfused_permute;   /* MCore v0.8's token permutation (moe_utils.py permute /
                                   unpermute at e223b92072): argsort, a gather, the
                                   combine's scatter into zeros, the routing weights'
                                   product and the top-k sum, each its own kernel
                                   (roofline.h TSL_ROOFLINE_UNFUSED_PERMUTE_*); false: the
                                   fused permute and unpermute (TE's, moe_permute_fusion) */
    bool moe_fused_mlp;         /* the routed experts' FC1, activation and FC2 through
                                   Transformer Engine's op fuser (Megatron-LM
                                   use_transformer_engine_op_fuser; Megatron-Bridge
                                   cutedsl_fused_grouped_mlp): none of what TEGroupedMLP's
                                   unfused path runs eagerly around the grouped GEMMs
                                   (gpt-oss's clamp and offset copy, the per-expert FFN-out
                                   bias; roofline.h); false: that path */
    bool moe_fused_srelu;       /* non-gated routed experts' squared ReLU and routing
                                   weights in one torch.compile'd kernel (Megatron-LM
                                   use_fused_weighted_squared_relu, set by every
                                   Megatron-Bridge Nemotron-H recipe): no eager product and
                                   cast after the activation (roofline.h
                                   TSL_ROOFLINE_EXPERT_PROBS_*); false: Megatron-LM's
                                   default, the eager product */
    /* the modules Megatron-core replays as CUDA graphs (cuda_graph.h bits; TransformerConfig
     * cuda_graph_modules): their ops off the host floor, a graph launch each in their
     * place (roofline.h TSL_ROOFLINE_GRAPH_LAUNCH_OPS); 0: every op eager */
    uint32_t cuda_graph_modules;
    /* the linears run at another precision than the recipe (module_prec.h nibbles;
     * Megatron-core's per-module quant_recipe): their GEMMs, casts, copies and stashes
     * at their own; 0: every linear at the recipe */
    uint32_t module_prec;
    bool moe_a2a_overlap;       /* Megatron-LM's --overlap-moe-expert-parallel-comm (with
                                   --delay-wgrad-compute): in the 1F1B steady state one
                                   micro-batch's forward and another's backward run as one
                                   step, each one's EP all-to-alls under the other's
                                   compute (PP 1 or interleaved; tsl_plan_stage_t
                                   ep_save_s) */
    bool moe_a2a_wgrad_inline;  /* with moe_a2a_overlap, Megatron-LM without
                                   --delay-wgrad-compute: each backward node computes its
                                   own weight gradients, so the backward's dispatch waits for
                                   the experts' dW (ep_overlap.h); false: deferred, as
                                   Megatron-Bridge's moe_a2a_overlap sets it */
    bool moe_flex;              /* a flex dispatcher's all-to-alls (Megatron-LM's
                                   --moe-token-dispatcher-type flex: HybridEP, DeepEP;
                                   DeepSeek-V3's own kernels): across NVLink domains one
                                   network copy per token and destination domain,
                                   forwarded over NVLink there (tsl_cost_flex_remote);
                                   false: NCCL's all-to-all, a copy per routed expert */
    uint32_t moe_flex_backend;  /* tsl_flex_backend_t, with moe_flex: which back end runs
                                   it (0: Megatron-LM's default, tsl_flex_backend_of);
                                   HybridEP's routing-map gather and preprocessing are
                                   priced on its (docs/cost-model.md "HybridEP's routing
                                   map") */
    uint32_t ep;                /* expert-parallel degree of every MoE layer (0 or 1: none);
                                   docs/cost-model.md "Mixture of experts" */
    uint32_t etp;               /* expert tensor-parallel degree of the routed experts (0 or
                                   1: none; Megatron-LM --expert-tensor-parallel-size) */
    double moe_imbalance;       /* tokens of the busiest expert over the mean, >= 1
                                   (0: TSL_COST_MOE_IMBALANCE) */
    double moe_capacity;        /* expert capacity factor c > 0: each expert takes at most
                                   c x the mean of a rank's routed tokens, the rest dropped
                                   (Megatron-LM --moe-expert-capacity-factor); 0: dropless */
    bool moe_pad;               /* with moe_capacity: every expert's input padded to its
                                   capacity (--moe-pad-expert-input-to-capacity) */
    double host_op_s;           /* the stack's host time per eager op, s, measured on its
                                   own host and PyTorch (the request's host_op_us); 0: the
                                   built-in TSL_ROOFLINE_HOST_OP_S. Sets env->host_op_s
                                   (tsl_engine_env_request); PAPER and no_host_floor price
                                   none either way */
    bool overlap_tp_dgrad;      /* the backward's TP collectives run under the column-
                                   parallel linears' gradient GEMMs (Megatron-LM's async
                                   dgrad all-reduce, default since 2021-09; with SP its
                                   dX reduce-scatter and input re-gather); false: exposed,
                                   as the forward's (docs/cost-model.md "TP in the backward") */
    bool tp_comm_overlap;       /* Megatron-LM --tp-comm-overlap: TransformerEngine's
                                   userbuffers run each SP all-gather / reduce-scatter of
                                   the attention and dense MLP blocks under its own GEMM,
                                   forward and backward, split into t chunks (ring exchange;
                                   the bulk dgrad/wgrad overlaps are overlap_tp_dgrad's,
                                   which it implies); only with SP, as Megatron requires
                                   (docs/cost-model.md "TP communication overlap") */
    bool async_tp;              /* torch's micro-pipelined TP (torchtitan's AsyncTP,
                                   [experimental] enable_async_tensor_parallel; inductor's
                                   _micro_pipeline_tp over symmetric memory): each SP
                                   all-gather that feeds a GEMM (the forward's input, the
                                   backward's dY) and each reduce-scatter of a GEMM's
                                   output (the forward's row-parallel) split into t chunks
                                   beside copy-engine transfers, the reduce-scatter's
                                   partials then summed; the backward's dX reduce-scatter
                                   (a sum of GEMMs) stays NCCL's; only with SP, TP > 1
                                   (docs/cost-model.md "torch's micro-pipelined TP") */
    bool legacy_p2p;            /* Megatron-LM's p2p_communication.py before Megatron-core
                                   (2021-2022): without SP each TP rank sends 1/t of the
                                   boundary and the receiving TP group all-gathers it
                                   (--scatter-gather-tensors-in-pipeline, on by default),
                                   and every exchange blocks its stage (batched isend/irecv,
                                   wait, device synchronize), the interleaved schedule's
                                   steady state included; false: Megatron-core's whole
                                   tensor from every TP rank, interleaved hops overlapped
                                   (docs/cost-model.md "Between stages") */
    bool unfused_grad_accum;    /* every micro-batch but the first adds its weight gradients
                                   into the gradient buffer with a kernel of its own, reading
                                   the buffer (g bytes) and the new gradient (2; 4 under
                                   autocast) and writing the buffer (g): PyTorch's
                                   AccumulateGrad and Megatron-LM before its gradient-
                                   accumulation fusion (2022-02); under SDP / ZeRO-2 (a
                                   reduce-scatter every micro-batch) every micro-batch copies
                                   its fresh gradient (2) into the unsharded bucket (g):
                                   Megatron-FSDP without the fusion; false: the weight-
                                   gradient GEMM accumulates in place, the buffer read and
                                   written in its epilogue (docs/cost-model.md "Gradient
                                   accumulation", cost model 50) */
    bool autocast;              /* PyTorch eager modules under torch.autocast(bfloat16) over
                                   fp32 parameters (bench/torch_gpt_step.py, nanoGPT/HF-style
                                   scripts): fp32 norms and residual stream with casts, the
                                   weights cast every micro-batch, fp32 gradients (g = 4)
                                   and no 16-bit weight copy for the step to write, an eager
                                   unfused core with an fp32 softmax, the vocabulary as given
                                   (no padding); docs/cost-model.md "Autocast" */
    bool double_block_fwd;      /* every transformer block's forward runs twice per
                                   micro-batch, the first output thrown away (AMP's fork of
                                   Megatron-LM v1.1.5): its compute and TP all-reduces twice;
                                   docs/cost-model.md "A block's forward run twice" */
    bool eager;                 /* the model's modules run eagerly, no torch.compile
                                   (torchtitan's default): RMSNorm, RoPE, GQA's K/V repeat
                                   and SwiGLU as the unfused ATen kernels its Llama
                                   modules issue; false: one fused kernel each (a
                                   compiler, Megatron-LM's fused kernels); torch's CP
                                   ring (torch-allgather) waits each collective at its
                                   first use, under the next kernel (compiled: where it is
                                   issued, exposed); docs/cost-model.md "Eager modules",
                                   "Context parallelism" */
    bool fb_serial;             /* DualPipeV's F&B step runs its forward, then its backward
                                   (torch.distributed.pipelining's OVERLAP_F_B without a
                                   model's own overlap: torchtitan): fb_save_s 0 */
    uint32_t recompute_modules; /* Megatron's recompute modules beside the attention core
                                   (recompute.h bits: moe_act, layernorm, mla_up_proj, mlp,
                                   moe, shared_experts), on every layer without +ckpt */
    bool bf16_moments;          /* Adam's moments in 16 bits beside an fp32 master (Megatron
                                   --use-precision-aware-optimizer --exp-avg-dtype bf16
                                   --exp-avg-sq-dtype bf16; DeepSeek-V3 Sec. 3.3.3): 8
                                   optimizer bytes per parameter instead of 12 */
    uint32_t bf16_layers_start; /* with fp8: the model's first and last blocks kept */
    uint32_t bf16_layers_end;   /* bf16 (Megatron-LM --first-last-layers-bf16), carried to
                                   the plan: the cost model reads it from the layers
                                   (model.h tsl_layer_t.bf16), never from here */
    bool lazy_grads;            /* the gradients (grad_bytes) exist from a chunk's first
                                   backward to the step (PyTorch FSDP's unsharded fp32
                                   accumulation, freed after its reduce-scatter); false:
                                   a buffer kept all along (Megatron-LM's grad buffer).
                                   Moves interleaved 1F1B's peak (docs/cost-model.md
                                   "Interleaved 1F1B", the gradients' lifetime), and with
                                   no kept buffer the weight-gradient GEMMs write a fresh
                                   2-byte gradient (no beta-1 epilogue: cost model 50) */
    /* Activation CPU offloading: the first N Transformer layers' stashes copied to the
     * host after their forward and back before their backward (Megatron-LM
     * --cpu-offloading-num-layers N through TransformerEngine; offload.h): a stage's
     * peak keeps the other layers', its micro-batch the copies' exposed waits; 0: none.
     * Priced by the engine (search_eval.c), not by tsl_cost_layer. */
    uint32_t cpu_offload_layers;
    bool tp_sync;          /* every TP collective between two device synchronisations (a
                          synchronising timer around it: AMP's fork of Megatron-LM
                          v1.1.5, megatron/mpu/mappings.py _reduce under
                          timers('mp allreduce')): each is dispatched onto a drained GPU
                          and the queue restarts empty after it; docs/cost-model.md
                          "Synchronised TP collectives" */
    bool tp_whole_heads;   /* an unfused attention core keeps all its heads on every TP rank,
                            each 1/t as wide (AMP's fork's TransGAN attention,
                            megatron/model/trans_gan_gen.py ParallelTransGanAttention
                            reshapes the QKV to (B, N, 3, num_heads, C/t/num_heads)): the
                            scores are not split by TP; docs/cost-model.md "Attention
                            heads kept whole under TP" */
    bool ds_pipe_p2p;      /* DeepSpeed's PipelineEngine p2p as AMP's fork runs it (a stage
                          boundary's tsl_p2p_proto_t TSL_P2P_DS_PIPE, each exchange a
                          blocking broadcast held by both stages); docs/cost-model.md
                          "DeepSpeed's pipeline p2p" */
    bool ds_pipe_engine;   /* the stages run DeepSpeed's PipelineEngine (runtime/pipe/engine.py,
                            TrainSchedule): plain 1F1B whose four one-way transfers a cycle
                            are each a blocking p2p.send / p2p.recv held by both ranks
                            (tsl_pipeline_in_t.p2p_both), the bytes by the protocol the
                            other knobs name (legacy_p2p: PartitionedTensor over TP both
                            ways); ds_pipe_p2p implies it (tsl_cost_p2p_rendezvous);
                            docs/cost-model.md "DeepSpeed's pipeline engine" */
    bool torch_pipelining; /* the stages run torch.distributed.pipelining (torchtitan's
                              PipelineSchedule*): its interleaved 1F1B waits on every
                              time step's batched exchange (tsl_cost_vp_blocking); the
                              torchtitan target and configurations set it */
    bool nccl_no_tree;     /* the stack ran NCCL with its tree turned off (NCCL_ALGO=^tree:
                              AMP's fork, .deepspeed_env beside its launch scripts): every
                              all-reduce priced on the ring (tsl_cluster_coll_lat_no_tree);
                              docs/cost-model.md "NCCL's tree on two nodes" */
    uint32_t norm_impl;    /* tsl_norm_impl_t: whose fused LayerNorm kernels the stack runs
                              (norm_impl.h): 0 TE's two-kernel backward, 1 apex's three
                              (docs/cost-model.md "apex's LayerNorm backward") */
    bool ds_grad_bucket;   /* DeepSpeed's engine's ZeRO-0 DP all-reduce as it runs it
                            (runtime/engine.py buffered_allreduce_fallback ->
                            allreduce_and_copy -> allreduce_bucket): the stage's
                            gradients flattened into one bucket, the reduced tensor
                            scaled by 1/DP in place, copied back into each .grad
                            tensor by tensor; docs/cost-model.md "DeepSpeed's
                            gradient bucket" */
    /* the SDP level as fairscale 0.4.5's FSDP with each layer its own root and its
     * attention and MLP units inside (Galvatron-BMW's wrap_module_fsdp_manually): the
     * first unit's gather exposed in the forward, the rest under compute, the
     * backward's gathers prefetched; STACK only (sdp_roots.h; docs/cost-model.md "FSDP
     * with a root per layer") */
    bool sdp_layer_roots;
    /* the SDP level keeps each layer's gathered weights from its forward to its
     * backward and frees them after it (torch FSDP1's SHARD_GRAD_OP with the gradients
     * synced every micro-batch: RESHARD_AFTER_FORWARD_HANDLE_STRATEGIES leaves it out,
     * _should_free_in_backward frees it while _sync_gradients): one gather per layer and
     * micro-batch, in the forward, none in the backward; the gathered weights of every
     * layer of the stage held at its peak; gradients reduce-scattered every micro-batch
     * as without it; FSDP2 runs the same under torchtitan's fsdp_reshard_after_forward
     * "never" without PP. Time terms STACK only; no effect without SDP or where sdp_nosync
     * keeps the weights the whole iteration. docs/cost-model.md "FSDP's SHARD_GRAD_OP" */
    bool sdp_keep_weights;
    bool sdp_nosync;   /* the SDP (FSDP) level without resharding between micro-batches
                            (torchtitan 9dec370 under PP: fully_shard with
                            reshard_after_forward False, parallelize_llama.py apply_fsdp;
                            torch.distributed.pipelining's stage backward with
                            set_requires_gradient_sync(False) until the last micro-batch):
                            each layer's weights all-gathered once per iteration, under
                            the first forward, and held unsharded; no backward gather; its
                            gradients accumulated unsharded (g bytes per parameter, not
                            ÷ z) and reduce-scattered once, with the last micro-batch's
                            backward. Only where the env is one stage of several
                            (tsl_cost_env_t.pipelined): without PP torchtitan's FSDP2
                            reshards after the forward and syncs every micro-batch
                            ("default" reshard_after_forward = not pp_enabled), priced as
                            without the knob. No effect without SDP. docs/cost-model.md
                            "SDP without resharding" */
    uint32_t opt_step; /* tsl_opt_step_impl_t (opt_step.h): the passes the stack's
                                   optimizer step makes (0 fused: one kernel, Tessel's
                                   executor; megatron, megatron-fp16, torch,
                                   deepspeed-fp16); the PAPER
                                   mode prices fused. Megatron-core's two
                                   (tsl_opt_step_megatron_core) also tell the stack
                                   whose modules are priced as it builds them: its
                                   per-chunk DP reduce, linear_proj's bf16 input
                                   (tsl_cost_proj_orig_input) */
    /* DeepSpeed's BF16_Optimizer under pipeline stages (DeepSpeed 56c522386,
     * runtime/bf16_optimizer.py; BigScience's BLOOM): every micro-batch's bf16 .grad cast
     * to the buffer's width and added into it by kernels of their own (update_hp_grads:
     * n + g, then 3g bytes per parameter), the whole buffer all-reduced over DP after the
     * flush where ZeRO-1 would reduce-scatter (_bf16_reduce_grads), the tied embedding's
     * gradient summed at g bytes (_hp_grad); the bf16 .grad kept beside the buffer until
     * the next backward (2 B per parameter in the states); docs/cost-model.md
     * "DeepSpeed's BF16_Optimizer" */
    bool ds_bf16_optimizer;
    /* DeepSpeed's engine as target deepspeed configures it: bf16 at ZeRO stage 0 under a
     * PipelineModule runs BF16_Optimizer (runtime/engine.py _do_optimizer_sanity_check at
     * edaa722: model and accumulation dtype bf16 with pipeline parallelism), so a 16-bit
     * (not fp16) strategy at ZeRO-0 with DP > 1 and no SDP on a stage of a pipeline of
     * several (tsl_cost_env_t.pipelined) is priced with ds_bf16_optimizer
     * (tsl_cost_ds_bf16_zero0_runs); nothing elsewhere. Set by tsl_target_knobs */
    bool ds_bf16_zero0;
    /* Every kernel launch synchronous (CUDA_LAUNCH_BLOCKING=1, as BigScience's BLOOM
     * scripts export it to avoid a hang: tr11-176B-ml.slurm): the host dispatches an op
     * only after the kernel before it has finished, so a pass takes its kernels' time
     * plus its ops' dispatch, G + ops·H, where an asynchronous stack's host runs ahead,
     * max(G, ops·H) (roofline.h host_op_s; docs/cost-model.md "Synchronous launches") */
    bool launch_blocking;
    /* DeepSpeed's synchronising timers around every pipeline instruction (AMP's fork:
     * "wall_clock_breakdown": true; deepspeed/utils/timer.py, start() and stop() call
     * torch.cuda.synchronize()): each forward and backward instruction starts on an
     * idle GPU, its first kernels at the host's pace, and each exchange is dispatched
     * onto one (docs/cost-model.md "DeepSpeed's synchronising timers") */
    bool ds_wall_clock;
    /* DeepSpeed 0.3's ZeRO-3 on the SDP level (v0.3.13-0.4's stage3.py under
     * DeepSpeedExamples' Megatron ZeRO-3 recipe, Narayanan 2021 Table 2's ZeRO-3 rows):
     * a collective per weight, gathered again in a full recompute, every gather and
     * reduce-scatter exposed, the list API's copies per rank, the small tensors gathered
     * after every step (cost.c ds_zero3_v03; docs/cost-model.md "DeepSpeed 0.3's ZeRO-3") */
    bool ds_zero3_v03;
    /* TE before v1.6 under NVTE_DP_AMAX_REDUCE_INTERVAL=0 and NVTE_ASYNC_AMAX_REDUCTION=1
     * (NeMo-Framework-Launcher 24.03's env_vars): delayed scaling's amax all-reduce over
     * the TP group only, none at TP 1, asynchronous — the forward's waited at the next
     * region's first module, the backward's hidden (cost.c tsl_cost_fp8_delayed_amax_s;
     * docs/cost-model.md "Delayed scaling's amax reduction over TP") */
    bool fp8_amax_tp_only;
    /* FP8 attention (TransformerEngine's fp8_dpa: Megatron-LM's TransformerConfig
     * fp8_dot_product_attention, which has no command-line flag, set by Megatron-Bridge's
     * mixed_precision), with an FP8 recipe TE runs: the fused core in
     * cuDNN's FP8 kernel, whose backward computes a causal sliding window's whole causal
     * square (roofline.h dev.fp8_dpa; docs/cost-model.md "FP8 attention on a sliding
     * window"); every other core priced as in bf16 */
    bool fp8_dpa;
    /* Megatron-LM v1.1.5 without --bias-gelu-fusion, --bias-dropout-fusion and the
     * scaled-masked-softmax fusions, under PyTorch 1.7 (AMP's fork runs GPT-2 so): each
     * bias added by a kernel of its own, the causal mask by masked_fill_ each pass, the
     * context's permute copy (roofline.h dev.unfused_elementwise; docs/cost-model.md
     * "Megatron-LM's unfused kernels") */
    bool unfused_elementwise;
    /* fp32 training, no mixed precision (Galvatron's paper-era runtime: no autocast, no
     * .half(); docs/cost-model.md "fp32 training"): the GEMMs at the GPU's fp32 rate
     * (env.device_fp32_flops: dense TF32 where the GPU has it, as torch 1.7–1.11 ran fp32
     * matmuls by default, allow_tf32 True; plain fp32 FMA where it has not), every
     * activation and stash, memory-bound kernel, TP collective, stage send, weight
     * all-gather and gradient reduce at 4 bytes per element (the model's layers carry
     * fp32 activations: model.h fp32_acts), and 16 B of model states per parameter: the
     * fp32 weight 4, its gradient 4, Adam's two moments 8, no master copy. The step's
     * 28 B stand (read w, g, m, v: 16; write w, m, v: 12) */
    bool fp32;
    /* With fp32: the GEMMs at the GPU's fp32 FMA peak even where it has TF32
     * (env.device_fp32_fma_flops), as a stack runs them with PyTorch's default
     * torch.backends.cuda.matmul.allow_tf32 False (since 1.12, pytorch/pytorch#76509),
     * which Megatron-LM, DeepSpeed and torchtitan leave alone: tsl_target_knobs sets it
     * for megatron, deepspeed and torchtitan; docs/cost-model.md "fp32 training". The
     * search sets it too where no GPU of the cluster has TF32 (tsl_cluster_tf32_moot):
     * the same figures, recorded as the stacks run them */
    bool tf32_off;
    /* With fp32: the stack runs fp32 matmuls as TF32 (the request's tf32: its script sets
     * allow_tf32 True): tf32_off stays false whatever the target; prices nothing itself,
     * recorded in the plan (plan.h tf32) so that the exports take it */
    bool tf32;
    /* fp16 mixed precision (docs/cost-model.md "fp16 mixed precision"): fp16 weights,
     * activations and gradients beside an fp32 master, a dynamic loss scaler. GEMMs,
     * memory-bound kernels and collectives cost as in bf16 (the same 2 bytes, the same
     * tensor-core peak on every part that has both); what differs is the step: the
     * scaler's unscale and inf check, which the target's optimizer step prices where the
     * stack runs it (tsl_knobs_fp16: megatron's opt_step megatron-core-fp16). Set by the
     * request's fp16, or where a GPU of the cluster has no bf16 (tsl_cluster_no_bf16). */
    bool fp16;
    /* Recorded, not priced by itself: the target's stack runs no fused attention kernel on
     * a GPU of the cluster (target.h tsl_target_unfused_attn: Megatron-LM older than
     * Ampere), so the search and eval price the model's unfused core (its layers'
     * unfused_attn, as --unfused-attn) and the megatron export writes
     * --transformer-impl local. */
    bool stack_unfused_attn;
    /* An SDP level run as Megatron-FSDP (Megatron-LM d98e8a6 --use-megatron-fsdp,
     * --data-parallel-sharding-strategy optim_grads_params): its gathers prefetched as
     * overlap_param_gather prices them on an SDP level (cost model 74), whatever
     * overlap_param_gather says for a ZeRO-1 level, because optim_grads_params turns
     * overlap_param_gather and overlap_grad_reduce on itself (megatron_fsdp.py
     * MegatronFSDP.__init__: "Default to overlapped parameter gather when
     * fully-sharding"). Set by target megatron (tsl_target_knobs), which has no
     * other SDP; no effect without SDP. docs/cost-model.md "Megatron-FSDP under
     * --target megatron" */
    bool megatron_fsdp;
} tsl_cost_knobs_t;

/* The default expert load imbalance: 1.0, an even split of the routed tokens
 * (auxiliary-loss or bias balancing assumed to work; docs/cost-model.md "Mixture
 * of experts" says why no measured figure is used). */
#define TSL_COST_MOE_IMBALANCE 1.0

/*
 * Expert parallelism (docs/cost-model.md "Mixture of experts"), Megatron-LM's MoE
 * parallel folding: the ranks of a MoE layer's stage block (G = its attention TP ×
 * CP × DP ranks) are laid out again for the routed experts as expert TP × EP ×
 * expert DP, expert TP innermost (Megatron's expert rank order tp-ep-dp):
 *   expert TP  the innermost etp ranks (stride 1) split every local expert's FFN
 *              width f (knobs.etp);
 *   EP         ep ranks at stride etp split the E experts (knobs.ep);
 *   expert DP  the G/(ep·etp) ranks at stride ep·etp holding the same expert shards.
 * Feasible when ep divides E, ep·etp divides G and etp divides f. Each attention TP
 * rank routes its own 1/t of the tokens (Megatron runs MoE under TP only with
 * sequence parallelism); the expert TP group all-gathers the tokens its EP rank
 * received and reduce-scatters the experts' output.
 */
bool tsl_cost_ep_fits(const tsl_layer_t *l, uint32_t group, uint32_t ep, uint32_t etp);

/* Whether TP degree t splits layer l as Megatron splits it: the heads, K/V heads
 * and FFN width (Mamba: the SSM heads and B/C groups) divisible by t; a degree
 * that does not divide them has no implementation (docs/cost-model.md,
 * "Vocabulary padding and TP feasibility"). Layers TP does not split fit any t. */
bool tsl_cost_tp_fits(const tsl_layer_t *l, uint32_t t);

/* The routed rows a capacity factor leaves (docs/cost-model.md "Mixture of
 * experts"), as multiples of the mean k·T/E per expert: *busy, the rows of the
 * busiest expert (which sets the pace), and *moved, the rows dispatched per rank
 * over k·T (what the all-to-alls, the expert-TP gathers and the stash carry):
 *   dropless          busy = imbalance            moved = 1
 *   capacity c        busy = min(imbalance, c)    moved = min(1, c)
 *   c, padded         busy = c                    moved = c
 * imbalance = knobs.moe_imbalance (TSL_COST_MOE_IMBALANCE when 0). */
void tsl_cost_moe_rows(const tsl_cost_knobs_t *k, double *busy, double *moved);

/* The routing knobs are ones tsl_cost_moe_rows prices: moe_capacity 0 or
 * 0 < C <= TSL_COST_MOE_MAX_FACTOR, moe_pad only with one, moe_imbalance 0 or
 * 1 <= X <= TSL_COST_MOE_MAX_IMBALANCE (NaN refused). -1 naming the field (the
 * request's and the plan's name) otherwise. */
#define TSL_COST_MOE_MAX_FACTOR    TSL_REQUEST_MOE_MAX_FACTOR /* the request table's range */
#define TSL_COST_MOE_MAX_IMBALANCE TSL_REQUEST_MOE_MAX_IMBALANCE
int tsl_cost_moe_check(const tsl_cost_knobs_t *k, tsl_err_t *err);

/* All-to-all among n ranks, each holding `bytes` of which (n−1)/n leave it:
 * (n−1)/n · bytes / bw (NCCL's alltoall bus bandwidth convention). */
double tsl_cost_alltoall_s(double bytes, uint32_t n, double bw);

/* A token's chance of sending a copy to a domain holding `share` of a MoE layer's
 * experts under a flex dispatcher (one copy per destination domain):
 * 1 − C(U − U·share, c)/C(U, c) with (U, c) = (E, k) for a plain top-k, or
 * (router_groups, router_topk_groups) where a group-limited router's groups lie whole
 * in the domain (router_groups · share a whole number: DeepSeek-V3's node-limited
 * routing). l is a tsl_layer_t (tsl_cluster_hit_fn). */
double tsl_cost_flex_hit(double share, const void *l);

/* The routing a layer's flex figures depend on (tsl_cost_flex_hit's experts, top-k,
 * groups and the groups a token picks), each field whole: no packing, so that no two
 * routings a model can hold (router_groups up to 65535) compare equal. experts 0: none
 * (NULL or a dense layer). */
typedef struct tsl_cost_route {
    uint32_t experts, experts_per_tok;
    uint16_t groups, topk_groups;
} tsl_cost_route_t;

tsl_cost_route_t tsl_cost_flex_route(const tsl_layer_t *l);

/* Whether two routings are the same, field by field. */
bool tsl_cost_route_eq(tsl_cost_route_t a, tsl_cost_route_t b);

/* The flex dispatcher's back end (Megatron-LM TransformerConfig
 * moe_flex_dispatcher_backend, --moe-flex-dispatcher-backend). */
typedef enum tsl_flex_backend {
    TSL_FLEX_DEFAULT = 0,  /* unset: tsl_flex_backend_of resolves it */
    TSL_FLEX_HYBRIDEP = 1, /* DeepEP's hybrid-ep branch: gathers every EP rank's routing
                              map before each dispatch (cost.c hybridep_metadata) */
    TSL_FLEX_DEEPEP = 2,   /* DeepEP's normal kernels: the layout computed locally */
    TSL_FLEX_BACKEND_COUNT
} tsl_flex_backend_t;

/* "hybridep", "deepep"; NULL for 0 and past the end. */
const char *tsl_flex_backend_name(uint32_t b);
/* Inverse of tsl_flex_backend_name; -1 for another name. */
int tsl_flex_backend_parse(const char *name);
/* The back end a flex plan runs: the one named, else Megatron-LM's default, deepep
 * (TransformerConfig moe_flex_dispatcher_backend = "deepep", transformer_config.py l.794
 * at 44151194; l.869 at 24bad8e6) — but HybridEP where the experts are padded to
 * capacity, which DeepEP refuses (l.1437-1442 at 44151194: "Flex token dispatcher with
 * deepep backend does not support moe_pad_expert_input_to_capacity"), as Tessel's
 * Megatron-LM export writes it. TSL_FLEX_DEFAULT without moe_flex. */
uint32_t tsl_flex_backend_of(bool moe_flex, uint32_t backend, bool moe_pad);

/* Context parallelism's attention exchange (Megatron-LM --cp-comm-type;
 * TransformerEngine's attention/dot_product_attention/context_parallel.py). */
typedef enum tsl_cp_comm {
    TSL_CP_P2P = 0,       /* ring attention: c−1 K/V block exchanges under the block compute */
    TSL_CP_ALLGATHER = 1, /* all-gather K/V before the core, reduce-scatter dK/dV after */
    TSL_CP_A2A = 2,       /* Ulysses: all-to-all Q/K/V (heads split) and O, both ways */
    TSL_CP_TORCH_AG = 3,  /* torch's context_parallel, rotate method allgather (torchtitan):
                             K/V all-gathered under the first ring step, the ring's kernels
                             and fp32 merges, dK/dV passed around the ring in fp32 */
    TSL_CP_COMM_COUNT
} tsl_cp_comm_t;

/* "p2p", "allgather", "a2a" (Megatron's names), "torch-allgather"; NULL past the end. */
const char *tsl_cp_comm_name(uint32_t comm);
/* Inverse of tsl_cp_comm_name; -1 for another name. */
int tsl_cp_comm_parse(const char *name);

/* The CP group of strategy s at degree cp (> 1): the innermost cp ranks of its
 * innermost data level (DP or SDP), Megatron's order tp-cp-dp — the data level's
 * degree keeps counting the CP ranks for the gradient reduce and the shards
 * (Megatron's data-parallel group with CP, torchtitan's dp_shard_cp mesh). False
 * when s has no data level whose degree divides by cp. */
bool tsl_cost_cp_group(const tsl_strategy_t *s, uint32_t cp, uint32_t *stride);

/* The chunks layer l's sequence splits into at CP degree cp: two per rank where it
 * has attention (causal load balancing), one per rank elsewhere; 0 where it takes
 * no CP at all (a Mamba layer: not priced). */
uint32_t tsl_cost_cp_chunks(const tsl_layer_t *l, uint32_t cp);

/* Whether layer l can run under s at CP degree cp with comm: the group exists,
 * 2·cp divides the sequence (two chunks per rank, causal load balancing) and, for
 * a2a, the heads and K/V heads per TP rank divide by cp. Layers without attention
 * only need the group and cp | s. */
bool tsl_cost_cp_fits(const tsl_layer_t *l, const tsl_strategy_t *s, uint32_t cp, uint32_t comm);

/* Where a stage runs: a block of devices of the cluster. */
/*
 * The topology walks' figures of groups (tsl_cluster_dim_busbw, tsl_cluster_dim_a2a_busbw),
 * kept for every env that points here: a walk reads nothing but the cluster, the block
 * and the group's stride and degree (not the knobs, not the precision), so a kept one is
 * the walk's figure bit for bit. The search keeps one table for every engine over its
 * cluster — each CP, EP and expert-TP degree's, their reruns, the sub-layer engine's,
 * the baselines' (search.c search_model, tsl_engine_share_walks); an engine alone keeps
 * its own. Without one, each engine's groups were walked again per rerun — 35,794 walks
 * of 4,975 groups on Llama3-405B over 12,500×8 H100s; with one per engine of 8,192
 * direct-mapped slots, 13,777 (each degree's engine walked its groups again, and
 * groups that shared a slot walked again). The layout moves' walks (relayout.h
 * tsl_relayout_plan_kept) are kept beside them: a move reads only the two layouts,
 * the cluster and the block, and each degree's engine made its own — 31,664 moves of
 * 13,237 pairs on Llama3-405B there. Both tables are kept.h's: a figure found is
 * never walked again; each makes TSL_COST_WALKS_FIRST slots at its first walk (an
 * engine that borrows the search's table makes none), doubles when three quarters
 * full and, at TSL_COST_WALKS_MOST, empties and fills afresh (memory stays bounded; a
 * figure dropped is walked again, the same).
 */
#define TSL_COST_WALKS_FIRST 1024u
#define TSL_COST_WALKS_MOST  32768u /* walks 200 B a slot (6.3 MiB at most), moves 88 B */
typedef struct tsl_cost_walk {      /* a walk's figures (its key: cost.c walk_key_t) */
    double bw;
    tsl_coll_lat_t lat; /* the ring's α's (kind 1: walk_key_t) */
} tsl_cost_walk_t;

typedef struct tsl_cost_walks {
    const tsl_cluster_t *cluster; /* whose walks these are; another env's cluster walks */
    tsl_kept_t figures;           /* the groups' walks: tsl_cost_walk_t by block and group */
    tsl_kept_t moves;             /* the moves: tsl_relayout_t by block and two layouts */
    /* Not figures: the layer-cost memo an engine that borrowed this table left when it
     * was done (search_eval.c memo_leave; NULL: none), its rows forgotten, for the
     * search's next engine to write its rows into the same pages: freed and made
     * again, each engine's memo (up to TSL_SEARCH_COST_MEMO_BYTES) faulted in fresh
     * pages — under the held malloc thresholds (common/malloc_tune.h) 46 % more page
     * faults on Llama3-405B over 12,500×8 H100s. Freed with the table by spare_free. */
    void *spare_memo;
    void (*spare_free)(void *spare_memo);
    /* Nor these: the event simulator's workspace an engine left when done (search_eval.c
     * sim_leave; NULL: none) and its size, taken by the next engine that simulates: each
     * engine's grown afresh faulted its pages anew (a quarter of Llama3-405B over
     * 12,500×8 H100s' page faults). Freed with the table. */
    void *spare_sim;
    size_t spare_sim_bytes;
    /* And the layer DP's workspace (a tsl_layerdp_ws_t) an engine left (search_eval.c
     * dp_ws_leave), taken by the next where it holds that engine's problems, and
     * freed by spare_dp_free where it does not or with the table. */
    void *spare_dp;
    void (*spare_dp_free)(void *spare_dp);
    /* Nor this: what tsl_cost_walks_nodes_alike found of the cluster's nodes (0: not yet),
     * found once for every engine that keeps the table — each engine's start walked a
     * 12,500-node cluster's nodes again, 1 % of GPT3-175B's search over 100,000 GPUs. */
    uint8_t nodes_alike;
} tsl_cost_walks_t;

/* An empty table for c's walks, or NULL out of memory (then every figure is walked);
 * freed by tsl_cost_walks_free (NULL: nothing), its spare_memo with it. */
tsl_cost_walks_t *tsl_cost_walks_new(const tsl_cluster_t *c);
void tsl_cost_walks_free(tsl_cost_walks_t *w);

/* Whether every node of c is alike (tsl_cluster_is_homogeneous) and, with one_type, of
 * one GPU type too: found at the first call where w is c's table and kept in it (the
 * cluster is not changed while a search runs); w NULL or another cluster's: found now. */
bool tsl_cost_walks_nodes_alike(tsl_cost_walks_t *w, const tsl_cluster_t *c, bool one_type);

typedef struct tsl_cost_env {
    const tsl_cluster_t *cluster;
    uint32_t block_first;              /* first device of the stage block */
    uint32_t block_size;               /* G */
    double device_flops;               /* slowest device of the block, FLOP/s */
    double overlap_slowdown;           /* k */
    const struct tsl_profile *profile; /* measured block times of the block's GPU
                                           type (planner/profile.h), or NULL: peak × efficiency */
    double device_mem_bw;              /* slowest device memory of the block, datasheet bytes/s;
                                  0 when a GPU type has none (FLOP count only) */
    const struct tsl_calib *calib;     /* corrections fitted from trials for the
                                           block's GPU type (calibrate.h), or NULL: none */
    double opt_mem_bw;                 /* sustained device-memory bytes/s the optimizer step
                                          streams at: the profile's measured copy bandwidth,
                                          else TSL_ROOFLINE_MEM_EFF × device_mem_bw; 0 unknown */
    tsl_cost_mode_t mode;              /* STACK after tsl_cost_env_init; the search sets
                                          PAPER for a request's paper_cost */
    bool tied_copy;                    /* the block is a pipeline stage without the model's
                                          token embedding (layer 0): a tied LM head there keeps
                                          its own copy of the padded word embedding, priced as
                                          an untied head's V'·h/t (Megatron). Set by the caller
                                          (false after tsl_cost_env_init) */
    bool pipelined;                    /* the block is one stage of a pipeline of several (the
                                          plan's PP > 1): where knobs.sdp_nosync applies. Set
                                          by the caller (false after tsl_cost_env_init) */
    tsl_gemm_eff_t gemm_shape;         /* the slowest device's GEMM shape curve (gemm_eff.h) */
    double host_op_s;                  /* host dispatch per op of the stack (roofline.h):
                                          TSL_ROOFLINE_HOST_OP_S (eager PyTorch) × host_scale
                                          after tsl_cost_env_init; 0: the GPU's time alone */
    double host_scale;                 /* the block's host CPU over the x86 host of
                                          TSL_ROOFLINE_HOST_OP_S (cluster.h
                                          tsl_gpu_spec_t.host_scale; the largest of its GPU
                                          types', 1 for an x86 host) after
                                          tsl_cost_env_init, which prices host_op_s at it;
                                          1 where the request gives its own host_op_us
                                          (measured on its own host) */
    double hybridep_nvl_bw;            /* HybridEP's kernels inside one NVLink domain, bus
                                          bytes/s: the block's slowest GPU type's
                                          tsl_gpu_spec_t.hybridep_nvl_bw, 0 where any type
                                          has none (NCCL's all-to-all figure then; cost.c
                                          ep_a2a_s, cost model 199) */
    double device_fp8_flops;           /* the block's slowest FP8 rate, FP8 peak × e_max
                                          (FLOP/s); 0 when a device has no FP8 */
    double device_fp4_flops;           /* its slowest FP4 rate (nvfp4), FP4 peak × the FP8
                                          e_max; 0 when a device has no FP4 */
    double device_fp32_flops;          /* the block's slowest fp32-training GEMM rate
                                          (tsl_cluster_block_fp32_flops: TF32 or fp32 peak × e_max);
                                          0 when a device has no figure (knobs.fp32 refused) */
    double device_fp32_fma_flops;      /* the same without TF32 (knobs.tf32_off): the block's
                                          slowest fp32 FMA peak × e_max; 0 when a device
                                          has no fp32 figure (knobs.tf32_off refused) */
    const tsl_gpu_spec_t *slowest;     /* the block's slowest device (the cluster's): fp32
                                          plans take its shape curve at its fp32 peak */
    bool device_fp8_any_layout;        /* every device of the block a Blackwell part
                                          (tsl_gpu_is_blackwell): TE keeps one per-tensor
                                          FP8 copy, no transpose (docs/cost-model.md "FP8") */
    tsl_cost_knobs_t knobs;            /* how the stack keeps and syncs gradients; all zero
                                          (Tessel's executor) after tsl_cost_env_init */
    tsl_cost_walks_t *walks;           /* groups' topology walks kept (STACK mode), or NULL
                                          (after tsl_cost_env_init): walk every time */
} tsl_cost_env_t;

/* The optimizer step's device-memory bytes per parameter a rank updates under k
 * (opt_step.h, k->opt_step): TSL_BYTES_PER_PARAM_OPT_STEP (28) for the executor's;
 * fused: 26 + g with a master, 18 + g with a master and bf16 moments, 12 + g
 * without (g = the gradient's bytes); megatron 52 (g = 2) or 46 (g = 4); torch 92
 * (g = 4); deepspeed-fp16 68. The bytes per kept gradient element (the buffer's zeroing) in
 * *local_bytes and the kernels in *kernels where not NULL. */
double tsl_cost_opt_step_bytes(const tsl_cost_knobs_t *k);
double tsl_cost_opt_step_cost(const tsl_cost_knobs_t *k, double *local_bytes, uint32_t *kernels);

int tsl_cost_env_init(tsl_cost_env_t *env, const tsl_cluster_t *c, uint32_t block_first,
                      uint32_t block_size, tsl_err_t *err);

/* A group of `degree` ranks at `stride` inside the env's block that no dimension
 * of a strategy names (expert parallelism's), with its figures. */
typedef struct tsl_group_bw {
    uint32_t stride, degree; /* degree 0: not made */
    double bw;
    tsl_coll_lat_t lat;
    double a2a_bw;              /* its all-to-all's (tsl_cluster_dim_a2a_busbw; PAPER: bw); made by
                      tsl_cost_moe_bw, not kept in a memo */
    tsl_cluster_flex_bw_t flex; /* a flex dispatcher's figures (tsl_cluster_dim_flex_bw;
                                   the EP group's under knobs.moe_flex) for the routing
                                   flex_route (tsl_cost_flex_route; experts 0: none made) */
    tsl_cost_route_t flex_route;
} tsl_group_bw_t;

/* the EP group, the expert data-parallel group and the expert-TP group */
#define TSL_COST_MOE_GROUPS 3u

/* Link bandwidths a strategy's groups see inside the env's block (by the env's
 * mode, above), and NCCL's α's for each dimension's collectives. */
typedef struct tsl_strategy_bw {
    double tp_bw, dp_bw, sdp_bw;            /* +INF for an unused dimension */
    tsl_coll_lat_t tp_lat, dp_lat, sdp_lat; /* NCCL's α's; all zero (no model) in PAPER
                                               mode or unused */
    double cp_bw;                           /* the CP group's (env->knobs.cp), +INF at cp 1 */
    tsl_coll_lat_t cp_lat;
    double cp_a2a_bw; /* its all-to-all's, Ulysses' (cp_comm a2a; else cp_bw) */
    /* the EP, expert-DP and expert-TP groups of the env's EP and expert-TP degrees
     * (tsl_cost_moe_bw), with their NCCL α's, which a MoE layer's costing reads; a
     * group it does not find here (none made, or made at other degrees) it walks
     * the topology for, as without this */
    tsl_group_bw_t moe[TSL_COST_MOE_GROUPS];
} tsl_strategy_bw_t;

/* Fills out's dimensions (and CP) for s; out->moe is left unmade. */
void tsl_cost_strategy_bw(const tsl_cost_env_t *env, const tsl_strategy_t *s,
                          tsl_strategy_bw_t *out);

/* The figures of groups by stride and degree on one env, each walked once: the
 * strategies of a stage block share most of their groups (TP 8 at stride 1, DP 625
 * at stride 8, ...), and a 100k-GPU block's walk is not cheap. */
#define TSL_COST_BW_MEMO 128u
typedef struct tsl_cost_bw_memo {
    uint32_t n; /* 0 to start */
    tsl_group_bw_t g[TSL_COST_BW_MEMO];
} tsl_cost_bw_memo_t;

/* tsl_cost_strategy_bw with the groups' figures read from and kept in memo (which
 * holds figures of this env only): the same figures. */
void tsl_cost_strategy_bw_memo(const tsl_cost_env_t *env, const tsl_strategy_t *s,
                               tsl_cost_bw_memo_t *memo, tsl_strategy_bw_t *out);

/* The groups moe_terms (cost.c) prices a MoE layer over, into out->moe: the EP
 * group (env->knobs.ep ranks at stride etp), the expert data-parallel group
 * (G / (ep·etp) ranks at stride ep·etp) and the expert-TP group (etp ranks at
 * stride 1), etp = env->knobs.etp. They depend on the block, the mode and the EP
 * and expert-TP degrees, not on the strategy: a caller costing MoE layers under many
 * strategies makes them once per block and copies them into each strategy's
 * figures (a topology walk each, which tsl_cost_layer otherwise repeats per call). */
void tsl_cost_moe_bw(const tsl_cost_env_t *env, const tsl_layer_t *l, tsl_strategy_bw_t *out);

typedef struct tsl_layer_cost {
    bool feasible; /* false when B_m does not divide by the data width, or
                                 the TP degree does not divide heads/K/V heads/FFN */
    double fwd_s;
    double bwd_s;        /* without gradient synchronisation */
    double bwd_sync_s;   /* the micro-batch that synchronises gradients */
    double wgrad_s;      /* the weight-gradient GEMMs' part of compute_b (in bwd_s): a
                           zero-bubble schedule's W (tsl_roofline_layer_wgrad_frac) */
    double grad_comm_s;  /* raw gradient communication time (before overlap) */
    double dp_rs_s;      /* the DP reduce of the synchronising micro-batch (the plain DP
                            all-reduce or ZeRO-1 reduce-scatter, in grad_comm_s; 0 under
                            grad_reduce_exposed) as one collective, nothing hidden */
    double dp_rs_sync_s; /* what bwd_sync_s charges for dp_rs_s beside the backward it
                            runs under (bwd_sync_s less that backward without it): what
                            a stack that launches the reduce elsewhere takes off
                            (pipeline.h tsl_pipeline_chunk_rs_s) */
    double compute_s;    /* compute part of fwd_s + bwd_s (for reporting) */
    double comm_s;       /* communication part of fwd_s + bwd_s (for reporting) */
    uint64_t ms_bytes;   /* O_ms */
    uint64_t fwd_bytes;  /* O_f for one micro-batch */
    uint64_t bwd_bytes;  /* O_b for one micro-batch */
    uint64_t step_bytes; /* per micro-batch of the iteration, held until the step ends
                            whatever is in flight (the stage's peak adds m of it): an LM
                            head's bf16 logits under torch.distributed.pipelining's
                            output_chunks (loss_impl torch on a pipelined block) */
    uint64_t grad_bytes; /* the gradients' part of ms_bytes (g bytes per parameter the
                            rank accumulates): what lazy_grads frees between steps, and
                            what autocast's fp32 .grad (freed by zero_grad(set_to_none=
                            True) after each step) leaves out of a one-micro-batch
                            plan's peak for the layers its backward has not reached
                            (search_eval.c) */
    double cp_s;         /* context parallelism's exposed attention exchange, forward +
                           backward (in fwd_s and bwd_s; 0 at cp 1) */
    double ep_s;         /* the routed experts' token exchange, forward + backward (in
                           fwd_s and bwd_s): the EP dispatch and combine all-to-alls and
                           the expert-TP all-gather and reduce-scatter; 0 at ep, etp 1 */
    double ep_fwd_s;     /* the forward's part of ep_s (its dispatch and combine) */
    double mlp_f_s;      /* a MoE layer's routed experts, the compute between its dispatch
                            and its combine, or a dense layer's MLP block (Megatron-LM's
                            EP overlap runs either as the layer's "mlp" node:
                            ep_overlap.h), in the forward's compute (fwd_s); 0 under a
                            measured profile */
    double mlp_b_s;      /* likewise in the backward's (bwd_s), their dW GEMMs included */
    double mlp_w_s;      /* of mlp_b_s, the dW GEMMs' (what --delay-wgrad-compute defers) */
    double ep_lead_s;    /* what of the EP exchange a host-bound pass's lead already hid
                           (cost.c ep_host_lead; not in ep_s): GPU idle the host's dispatch
                           spent on this pass's own collectives, so no overlap may hide
                           another micro-batch's under it again (search_eval.c
                           stage_times); 0 without a host floor or GPU-bound */
    double instr_f_s;    /* knobs.ds_wall_clock: what the forward instruction's restart
                           on an idle GPU adds where this layer is its stage's first (0
                           otherwise; the stage adds it: search_eval.c stage_times) */
    double instr_b_s;    /* likewise the backward instruction's, on its stage's last */
    double opt_s;        /* the layer's optimizer step, once per iteration after its
                           last backward (and gradient sync): 28 B per parameter the
                           device updates / opt_mem_bw + one launch; 0 when the
                           bandwidth is unknown */
} tsl_layer_cost_t;

/* The precision a request's or plan's knobs run at on c — the search, eval and the H3T
 * fallback alike, so that they price and record the same figures:
 *  - an fp32 step (without the script's TF32, knobs.tf32) on a cluster where TF32 prices
 *    nothing (tsl_cluster_tf32_moot) as with TF32 off: the same figures, and a plan the
 *    stacks' exports take whatever the request's target (plan.h tf32_off);
 *  - tsl_knobs_fp16. */
void tsl_knobs_on_cluster(tsl_cost_knobs_t *k, const tsl_cluster_t *c);
/* 16-bit mixed precision on c (docs/cost-model.md "fp16 mixed precision"): fp16 where
 * the request or plan said so or where a GPU of c has no bf16 (tsl_cluster_no_bf16),
 * never with fp32; an fp16 step under Megatron-LM's MixedPrecisionOptimizer adds its
 * loss scaler's unscale and inf check (opt_step megatron -> megatron-core-fp16). */
void tsl_knobs_fp16(tsl_cost_knobs_t *k, const tsl_cluster_t *c);

/* Fills out for layer l under strategy s with micro-batch size mb. bw may be NULL
 * (computed from env) or precomputed by tsl_cost_strategy_bw (and, for MoE layers,
 * tsl_cost_moe_bw) on the same env for speed: the figures are the same either way.
 * Infeasible (feasible = false, every time +INFINITY, every byte count 0) when mb
 * is 0 or does not divide by the data width, or when s's degrees do not multiply
 * to the env's block size. knobs.sdp_nosync prices only where env->pipelined (the
 * caller's: the plan has PP > 1); elsewhere as without it. No allocation: safe in DP
 * inner loops. */
void tsl_cost_layer(const tsl_cost_env_t *env, const tsl_layer_t *l, const tsl_strategy_t *s,
                    const tsl_strategy_bw_t *bw, uint32_t mb, tsl_layer_cost_t *out);

/* R of layer l's input for one micro-batch of mb samples, moved as `moves` says
 * (tsl_relayout_plan from the earlier layer's strategy to l's, on env's block):
 * the forward and backward parts, each 0 where nothing is gathered. */
typedef struct tsl_transition_cost {
    double fwd_s; /* the activation's move before l's forward */
    double bwd_s; /* its gradient's move after l's backward */
} tsl_transition_cost_t;

void tsl_cost_transition(const tsl_cost_env_t *env, const tsl_layer_t *l,
                         const tsl_relayout_t *moves, uint32_t mb, tsl_transition_cost_t *out);

/* Collective and p2p times (see above). n = 1 or bytes = 0 gives 0. */
double tsl_cost_allreduce_s(double bytes, uint32_t n, double bw);
double tsl_cost_allgather_s(double bytes, uint32_t n, double bw);
double tsl_cost_reduce_scatter_s(double bytes, uint32_t n, double bw);
double tsl_cost_p2p_s(double bytes, double bw);
double tsl_cost_overlap_s(double compute_s, double comm_s, double slowdown);

/* The tied LM head's gradient all-reduce (Megatron's embedding group): when the head
 * is in a later stage than its embedding, each TP rank of the first stage (block at
 * first_a) and its counterpart in the head's stage (first_b) sum the word embedding's
 * gradient, V'/t · h of them at elem_bytes each (tsl_cost_tied_elem_bytes), once per
 * iteration before either steps: a 2-rank
 * ring all-reduce per rank of the head's block, all at once, each pair at the
 * bandwidth the size_b pairs share (tsl_cluster_pairs_bw; the first's calibration).
 * t and z are the head's strategy s's TP and SDP degrees; with z > 1 the executor first
 * all-gathers the V'/t · h gradient over the data group, priced as a layer's SDP gather
 * on the head's block [first_b, first_b + size_b). 0 for a head that is not tied. */
double tsl_cost_tied_allreduce_elem_s(const tsl_cluster_t *c, const tsl_layer_t *head,
                                      const tsl_strategy_t *s, uint32_t first_a, uint32_t first_b,
                                      uint32_t size_b, double elem_bytes);
/* Bytes per element of the gradient buffer knobs k keep: grad_buf_bytes outside fp32,
 * else the reduce's (4 under fp32 or autocast, else grad_reduce_bytes, else 2). */
double tsl_cost_grad_elem_bytes(const tsl_cost_knobs_t *k);
/* Bytes per element of the tied sum under knobs k: the 16-bit gradient, 2, except where
 * the stack sums a 4-byte one: DeepSpeed's BF16_Optimizer its fp32 _hp_grad (pipe/engine.py
 * _exec_reduce_tied_grads; ds_bf16_optimizer) and fp32 training its fp32 gradient — the
 * gradient buffer's bytes (tsl_cost_grad_elem_bytes) there. */
double tsl_cost_tied_elem_bytes(const tsl_cost_knobs_t *k);
/* Whether strategy s on a block that is (pipelined) or is not one stage of a pipeline of
 * several runs DeepSpeed's BF16_Optimizer by knobs.ds_bf16_zero0 (its rule there); the
 * search records it in the plan (ds_bf16_optimizer) so a plan document prices the same. */
bool tsl_cost_ds_bf16_zero0_runs(const tsl_cost_knobs_t *k, const tsl_strategy_t *s,
                                 bool pipelined);

/* Bytes of one receive buffer torch.distributed.pipelining keeps per micro-batch on a
 * stage of a pipeline of several (env->pipelined): the boundary a rank receives,
 * bnd · B_m / w, divided by t under SP, as tsl_cost_stage_p2p_s sends it (s: the strategy
 * at the boundary). PipelineStage allocates one activation buffer per micro-batch for
 * every stage but the first and one gradient buffer per micro-batch for every stage but
 * the last when the schedule first runs, and keeps them (_prepare_forward_infra,
 * _prepare_backward_infra, _make_tensor_from_meta); tsl_pipeline_recv_buffers counts
 * them per stage. 0 unless the pipeline is torch's: the stack mark is the one the held
 * logits use, torch's loss (tsl_loss_pp_holds_logits), not under autocast (a script's
 * own loop) nor PAPER. */
/* Whether env's stage keeps those buffers at all (tsl_cost_pp_recv_bytes is 0 for every
 * strategy where not): a pipeline of several, torch's loss, neither autocast nor PAPER. */
bool tsl_cost_pp_recv_held(const tsl_cost_env_t *env);
double tsl_cost_pp_recv_bytes(const tsl_cost_env_t *env, const tsl_strategy_t *s,
                              uint64_t bnd_bytes_per_sample, uint32_t mb);

/* Time to send a stage boundary (activation forward + gradient backward) of
 * `bnd_bytes_per_sample` for a micro-batch of mb samples from the block at
 * from_first to the block at to_first (docs/cost-model.md "Between stages"):
 *   STACK  each of the sender's G ranks (G = the degrees of `sender`, the strategy
 *          of the stage's last layer) sends its own share to its counterpart,
 *          bnd · B_m / w, divided by t under SP (Megatron-core sends the
 *          sequence-parallel shard, else the whole tensor from every TP rank; no
 *          all-gather follows), all pairs at once: tsl_cluster_pairs_bw(G);
 *   PAPER  (AMP Sec. 3.4) bnd · B_m over the link between the blocks' first devices
 *          (also when sender is NULL).
 * 2 · size / bw, times the sender's comm_scale. */
double tsl_cost_stage_p2p_s(const tsl_cluster_t *c, tsl_cost_mode_t mode, uint32_t from_first,
                            uint32_t to_first, const tsl_strategy_t *sender,
                            uint64_t bnd_bytes_per_sample, uint32_t mb);

/* How a stack moves a stage boundary (STACK; PAPER ignores it). */
typedef enum tsl_p2p_proto {
    TSL_P2P_CORE = 0,           /* Megatron-core: each rank's whole share, both ways */
    TSL_P2P_SCATTER_GATHER = 1, /* Megatron-LM 2021-2022 (knobs.legacy_p2p) */
    TSL_P2P_DS_PIPE = 2,        /* DeepSpeed's PipelineEngine as AMP's fork runs it
                                   (knobs.ds_pipe_p2p) */
} tsl_p2p_proto_t;

/* The stack's protocol of knobs k (ds_pipe_p2p before legacy_p2p). */
tsl_p2p_proto_t tsl_cost_p2p_proto(const tsl_cost_knobs_t *k);

/* Whether knobs k's stages exchange as DeepSpeed's PipelineEngine does, every one-way
 * transfer a rendezvous both stages sit in (ds_pipe_engine, or AMP's fork's ds_pipe_p2p:
 * the same engine): the pipeline's p2p_both and the event simulator's p2p_rendezvous. */
bool tsl_cost_p2p_rendezvous(const tsl_cost_knobs_t *k);

/* Whether knobs k's interleaved 1F1B waits on every op's exchange before its next op,
 * so that no hop hides in the steady state (pipeline.h and pipesim.h p2p_blocking):
 * Megatron-LM before core (legacy_p2p), and torch.distributed.pipelining's
 * ScheduleInterleaved1F1B (knobs.torch_pipelining, as --target torchtitan, eval
 * --torchtitan, --torch-pipelining and the torchtitan rows set; before cost model 168
 * keyed on opt_step torch, the torch-native stack's optimizer step, as a proxy: torch
 * 2.6's PipelineScheduleMulti
 * batches each time step's send with the receives its neighbours' same step feeds,
 * dist.batch_isend_irecv, and waits on the batch before the next step; cost model
 * 162). Megatron-core overlaps the steady state's hops (overlap_p2p_comm). Plain
 * 1F1B blocks in every stack but DeepSpeed's (tsl_cost_p2p_rendezvous). */
bool tsl_cost_vp_blocking(const tsl_cost_knobs_t *k);

/* Whether knobs k's attention output projections keep their bf16 input for the
 * backward (cost model 166): Megatron-core's Attention.__init__ (attention.py, and
 * MultiLatentAttention's alike; from core_v0.14.0, Megatron-LM 781e765818, 2025-08)
 * calls set_save_original_input(linear_proj) for an FP8 recipe other than delayed
 * under TE >= 2.6 and for FP4 under TE >= 2.7, so TE's Linear casts that input rowwise
 * only in the forward, keeps the bf16 tensor (the fused core's own saved output, the
 * same storage), and quantises it again in the backward for its wgrad — current
 * scaling both usages with a fresh amax, the block-scaled recipes the columnwise
 * copy (roofline.c proj_orig_s; cost.c layer_memory). True for a Transformer Engine
 * recipe other than delayed (TE refuses it there: Float8Quantizer) under Megatron-core's
 * optimizer (opt_step.h tsl_opt_step_megatron_core: what tells the stack); false for
 * torchao (torchtitan), DeepSpeed and Tessel's own executor, which keep TE's default. */
bool tsl_cost_proj_orig_input(const tsl_cost_knobs_t *k);

/* Megatron-core's other set_save_original_input sites (cost model 170), each under
 * tsl_cost_proj_orig_input's condition (a TE recipe other than delayed, or FP4, under
 * Megatron-core's optimizer); TE's Linear then runs them as it runs linear_proj
 * (roofline.c orig_input_s). Checked at Megatron-LM 44151194 (the 26.04.01 presets'),
 * 0d8e0714cd and d98e8a64dd:
 *   shared_fc1  the MoE layer's shared experts' linear_fc1 (moe/shared_experts.py
 *               SharedExpertMLP.__init__), unless recompute_modules names
 *               shared_experts: its input is the pre-MLP norm's output, which the
 *               router keeps in bf16. The same site set again under a layernorm
 *               recompute (moe_layer.py set_for_recompute_pre_mlp_layernorm).
 *   mla_down    under a layernorm recompute (transformer_layer.py:
 *               set_for_recompute_input_layernorm where input_layernorm is a module
 *               of its own), latent attention's linear_q_down_proj (with a query
 *               latent) and linear_kv_down_proj (multi_latent_attention.py), so
 *               the discarded norm output is all they keep. Megatron sets it under
 *               delayed scaling too, where TE refuses it (Float8Quantizer): a run
 *               that does not start, priced as TE's default.
 * Not sites in the TransformerEngine spec: linear_qkv and the dense linear_fc1
 * (set only where input_layernorm / pre_mlp_layernorm stand apart; the GPT and
 * hybrid specs fuse them into TELayerNormColumnParallelLinear, IdentityOp). */
bool tsl_cost_shared_fc1_orig_input(const tsl_cost_knobs_t *k);
bool tsl_cost_mla_down_orig_input(const tsl_cost_knobs_t *k);

/* The attention mask DeepSpeed's engine sends with every activation of a GPT-2
 * pipe (AMP's fork, engine.py _exec_send_activations: Megatron's 1 × 1 × s × s
 * causal mask cast to fp16 for NCCL) on a boundary into layer l: 2 · s² bytes
 * whatever the micro-batch; 0 unless proto is TSL_P2P_DS_PIPE. */
uint64_t tsl_cost_ds_mask_bytes(tsl_p2p_proto_t proto, const tsl_layer_t *l);

/* The same with the pairs' figure given: pairs_bw = tsl_cluster_pairs_bw(c,
 * from_first, to_first, G) for the sender's G devices, which a caller pricing many
 * boundaries between the same two blocks walks once (PAPER and a NULL sender do
 * not read it). Without SP, with size the rank's share and bw_to / bw_from the
 * link between the receiving / sending block's first two devices:
 *   TSL_P2P_SCATTER_GATHER  each TP rank sends 1/t of its share and the receiving
 *     TP group all-gathers the whole: 2 · (size/t / pairs_bw + (t − 1)/t · size / bw_to);
 *   TSL_P2P_DS_PIPE  forward each TP rank's 1/t and the mask (mask_bytes), then the
 *     receivers' all-gather (PartitionedTensor.full); backward the whole gradient
 *     from each rank, and the senders' all-gather of their own output back
 *     (_exec_recv_grads): (size/t + mask + size) / pairs_bw + (t − 1)/t · size ·
 *     (1/bw_to + 1/bw_from); at t = 1 the mask alone is added.
 * All times the sender's comm_scale. */
/* DeepSpeed's synchronising timers (knobs.ds_wall_clock) around the exchange
 * instructions of one boundary and micro-batch: each starts on an idle GPU, so its first
 * dispatch, H, is on the exchange both stages hold — the activation's, the gradient's,
 * and under TP the sender's all-gather of its output before the gradient's receive
 * (cost.c). 0 without the knob, under launch_blocking (priced in the passes) or H 0. */
double tsl_cost_ds_exchange_dispatch_s(const tsl_cost_env_t *env, const tsl_strategy_t *sender);
/* TE delayed scaling's amax reduction and history update (cost model 177), per
 * micro-batch of a stage on env's block whose `layers` of strategy s (its first layer's:
 * the TP group; NULL reads as TP 1) run in `chunks` model chunks:
 * each chunk's fp8_autocast exit (*fwd_s) and the end of its backward (*bwd_s) concatenate
 * the amaxes, all-reduce them (MAX) over the block's ranks — Megatron-core's amax reduction
 * group, TP x DP x CP of the stage — on the compute stream's path and run the fused
 * history and scale update: the all-reduce plus two launch floors, each pass and chunk.
 * Both 0 but under FP8 priced with the delayed recipe and TE (fp8_impl te), STACK
 * mode; a one-rank block pays the kernels alone. Under knobs.fp8_amax_tp_only (cost
 * model 185) the all-reduce spans s's TP group, the forward's alone is exposed and a
 * TP-1 stage concatenates nothing: one launch floor a pass. Pure. */
void tsl_cost_fp8_delayed_amax_s(const tsl_cost_env_t *env, const tsl_strategy_t *s,
                                 uint32_t layers, uint32_t chunks, double *fwd_s, double *bwd_s);

double tsl_cost_stage_p2p_pairs_s(const tsl_cluster_t *c, tsl_cost_mode_t mode, uint32_t from_first,
                                  uint32_t to_first, const tsl_strategy_t *sender,
                                  uint64_t bnd_bytes_per_sample, uint32_t mb, double pairs_bw,
                                  tsl_p2p_proto_t proto, uint64_t mask_bytes);

#endif
