/*
 * eval.c — a given plan's figures (eval.h): checks that it can run, naming
 * what cannot, then costs it through the search's engine (search_eval.c) with
 * the plan's strategies in place of the layer DP.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn_kernel.h"
#include "cost.h"
#include "cuda_graph.h"
#include "eval.h"
#include "fp8_impl.h"
#include "module_prec.h"
#include "norm_impl.h"
#include "offload.h"
#include "partition.h"
#include "pipeline.h"
#include "pipesim.h"
#include "recompute.h"
#include "search_internal.h"
#include "target.h"
#include "sublayer.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* first[0..P] from the given split, or the search's starting partition. */
static int layer_split(const tsl_model_t *m, const tsl_plan_t *g, uint32_t *first, tsl_err_t *err)
{
    uint32_t P = g->pp, L = m->n_layers;
    bool given = false;
    for (uint32_t s = 0; s < P; s++)
        given |= g->stages[s].n_layers != 0 || g->stages[s].first_layer != 0;
    if (!given) {
        tsl_partition_by_flops(m, P, first);
        return 0;
    }
    for (uint32_t s = 0; s < P; s++)
        first[s] = g->stages[s].first_layer;
    first[P] = L;
    if (first[0] != 0)
        return tsl_err_set(err, "eval: layer split: stage 0 must start at layer 0, not %u",
                           first[0]);
    for (uint32_t s = 0; s < P; s++) {
        if (first[s + 1] <= first[s])
            return tsl_err_set(err,
                               "eval: layer split: stage %u has no layers (it starts at "
                               "layer %u, the next stage at %u; the model has %u)",
                               s, first[s], first[s + 1], L);
        if (g->stages[s].n_layers && g->stages[s].n_layers != first[s + 1] - first[s])
            return tsl_err_set(err,
                               "eval: layer split: stage %u has %u layers but starts at %u "
                               "and the next at %u",
                               s, g->stages[s].n_layers, first[s], first[s + 1]);
    }
    if (tsl_partition_mtp_check(m, P, first[P - 1], err) != 0)
        return tsl_err_prefix(err, "eval: layer split");
    return 0;
}

/* One layer's strategy on a stage block of G devices with micro-batch Bm. */
static int check_layer(const tsl_model_t *m, const tsl_cluster_t *c, uint32_t i, uint32_t stage,
                       uint32_t G, const tsl_strategy_t *st, uint32_t Bm, const tsl_plan_t *g,
                       tsl_err_t *err)
{
    uint32_t cp = g->cp > 1 ? g->cp : 1, stride;
    char name[64];
    tsl_strategy_format(st, name, sizeof name);
    uint32_t n = tsl_strategy_group_size(st), w = tsl_strategy_data_width(st);
    if (n != G)
        return tsl_err_set(err,
                           "eval: layer %u (%s): its degrees multiply to %u devices, but "
                           "stage %u has %u (devices / pp)",
                           i, name, n, stage, G);
    if (!tsl_cost_cp_group(st, cp, &stride))
        return tsl_err_set(err,
                           "eval: layer %u (%s): context-parallel degree %u does not divide "
                           "its innermost data level (the CP ranks are part of DP or SDP)",
                           i, name, cp);
    if (cp > 1 && m->layers[i].kind == TSL_LAYER_MAMBA)
        return tsl_err_set(err,
                           "eval: layer %u (mamba): context parallelism %u over a Mamba layer "
                           "is not priced (Megatron's all-to-alls around the scan)",
                           i, cp);
    if (!tsl_cost_cp_fits(&m->layers[i], st, cp, g->cp_comm))
        return tsl_err_set(err,
                           "eval: layer %u (%s): context parallelism %u (%s) needs 2 x %u to "
                           "divide its %u tokens%s",
                           i, name, cp,
                           tsl_cp_comm_name(g->cp_comm) ? tsl_cp_comm_name(g->cp_comm) : "?", cp,
                           m->layers[i].seq_len,
                           g->cp_comm == TSL_CP_A2A ? " and its heads and K/V heads per TP rank "
                                                      "to divide by it (a2a splits heads)"
                                                    : "");
    w /= cp; /* CP ranks split the sequence, not the micro-batch */
    if (Bm % w != 0)
        return tsl_err_set(err,
                           "eval: layer %u (%s): micro-batch %u does not divide by its data "
                           "width %u (DP x SDP%s)",
                           i, name, Bm, w, cp > 1 ? " / CP" : "");
    const tsl_layer_t *l = &m->layers[i];
    uint32_t ep = g->ep > 1 ? g->ep : 1, etp = g->etp > 1 ? g->etp : 1;
    if (!tsl_cost_ep_fits(l, G, ep, etp))
        return tsl_err_set(err,
                           "eval: layer %u (%s): ep %u x etp %u does not fit its stage of %u "
                           "devices (ep must divide its %u experts, ep x etp the stage's "
                           "devices, etp its expert width %u)",
                           i, name, ep, etp, G, l->experts, l->ffn_hidden);
    tsl_cost_env_t env;
    tsl_layer_cost_t lc;
    if (tsl_cost_env_init(&env, c, stage * G, G, err) != 0)
        return -1;
    tsl_cost_layer(&env, &m->layers[i], st, NULL, tsl_strategy_data_width(st), &lc);
    if (!lc.feasible && l->kind == TSL_LAYER_MAMBA)
        return tsl_err_set(err,
                           "eval: layer %u (%s): TP degree %u does not divide its %u SSM heads "
                           "and %u B/C groups (Megatron's MambaMixer asserts nheads %% tp == 0 "
                           "and ngroups %% tp == 0)",
                           i, name, tsl_strategy_degree(st, TSL_DIM_TP), l->ssm_heads,
                           l->ssm_groups);
    if (!lc.feasible) {
        return tsl_err_set(err,
                           "eval: layer %u (%s): TP degree %u does not divide its %u heads, "
                           "%u K/V heads or FFN width %u",
                           i, name, tsl_strategy_degree(st, TSL_DIM_TP), l->heads,
                           l->kv_heads ? l->kv_heads : l->heads, l->ffn_hidden);
    }
    return 0;
}

/* Expert parallelism ep (> 1) on stages of G devices: a model with experts,
 * each MoE layer's experts and the stage dividing by it (cost.h
 * tsl_cost_ep_fits; Megatron-LM asserts both). */
static int check_experts(const tsl_model_t *m, uint32_t ep, uint32_t G, tsl_err_t *err)
{
    if (ep <= 1)
        return 0;
    if (tsl_model_moe_layers(m) == 0)
        return tsl_err_set(err, "eval: expert parallelism %u: %s has no mixture-of-experts layer",
                           ep, m->name);
    for (uint32_t i = 0; i < m->n_layers; i++)
        if (!tsl_cost_ep_fits(&m->layers[i], G, ep, 1)) /* etp: check_layer */
            return tsl_err_set(err,
                               "eval: layer %u: expert parallelism %u must divide its %u experts "
                               "and a stage's %u devices (devices / pp)",
                               i, ep, m->layers[i].experts, G);
    return 0;
}

/* A routing imbalance (the plan's or the request's; 0: none asked) within what the
 * model's MoE layers allow, the search's rule (search_internal.h
 * tsl_search_imbalance_check); a model without MoE layers has no expert to load. */
static int check_imbalance(const tsl_model_t *m, double imbalance, tsl_err_t *err)
{
    if (imbalance == 0)
        return 0;
    double most = tsl_search_max_imbalance(m);
    if (most == 0)
        return tsl_err_set(err, "moe_imbalance: %g, but model %s has no MoE layers", imbalance,
                           m->name);
    return tsl_search_imbalance_check(m, imbalance, most, err);
}

/* The recompute modules (recompute.h) the plan is priced with: ones this build
 * prices, and mla_up_proj only with latent attention (Megatron-LM's
 * TransformerConfig refuses it otherwise). */
static int check_modules(const tsl_model_t *m, uint32_t mods, tsl_err_t *err)
{
    if (mods & ~TSL_RECOMPUTE_ALL)
        return tsl_err_set(err, "eval: recompute_modules: a module this build does not price "
                                "(it prices moe_act, layernorm, mla_up_proj, mlp, moe, "
                                "shared_experts, torchtitan_op)");
    if (tsl_recompute_modules_check(mods, err) != 0)
        return tsl_err_prefix(err, "eval");
    if ((mods & TSL_RECOMPUTE_MLA_UP_PROJ) && tsl_model_mla_layers(m) == 0)
        return tsl_err_set(err,
                           "eval: recompute module mla_up_proj: %s has no multi-head latent "
                           "attention (Megatron-LM refuses it without)",
                           m->name);
    return 0;
}

/* Activation offloading as Megatron-LM runs it (offload.h): fewer layers than the
 * model's, one stage, no recompute of any kind. */
static int check_offload(const tsl_model_t *m, const tsl_plan_t *g, uint32_t N, uint32_t mods,
                         tsl_err_t *err)
{
    bool recompute = mods != 0;
    for (uint32_t i = 0; N && i < m->n_layers; i++)
        recompute |= g->layer[i].ckpt || g->layer[i].selective;
    if (tsl_offload_check(N, m, g->pp, recompute, err) != 0)
        return tsl_err_prefix(err, "eval");
    return 0;
}

/* The group size N the plan is priced with: the request's (eval --vp-group),
 * else the given plan's (0: pp). */
static uint32_t given_vp_group(const tsl_request_t *r, const tsl_plan_t *g)
{
    return r->vp_group ? r->vp_group : g->vp_group;
}

static int check_plan(const tsl_model_t *m, const tsl_cluster_t *c, const tsl_plan_t *g,
                      uint32_t vpg, const uint32_t *first, tsl_err_t *err)
{
    uint32_t P = g->pp, G = c->n_devices / P, v = g->interleave > 1 ? g->interleave : 1;
    if (g->micro_batch == 0 || g->n_micro == 0)
        return tsl_err_set(err, "eval: micro-batch size and count must be at least 1");
    /* a plan document's cp_comm one of cost.h's: 99 was checked by p2p's rule and
     * refused as "context parallelism 4 (?) needs 2 x 4 to divide its 1024 tokens",
     * which they did */
    if (g->cp_comm >= TSL_CP_COMM_COUNT)
        return tsl_err_set(err,
                           "eval: cp_comm: %u is not 0 (p2p), 1 (allgather), 2 (a2a) or 3 "
                           "(torch-allgather)",
                           g->cp_comm);
    for (uint32_t s = 0; s < P; s++) {
        /* stages run on equal consecutive blocks; a given placement (both 0:
         * none given) must be that one, not silently replaced by it */
        const tsl_plan_stage_t *st = &g->stages[s];
        if ((st->n_devices || st->first_device) &&
            (st->n_devices != G || st->first_device != s * G))
            return tsl_err_set(err,
                               "eval: stage %u: first_device %u, n_devices %u; with pp %u on "
                               "%u devices stage %u runs on devices %u-%u",
                               s, st->first_device, st->n_devices, P, c->n_devices, s, s * G,
                               s * G + G - 1);
        for (uint32_t i = first[s]; i < first[s + 1]; i++)
            if (check_layer(m, c, i, s, G, &g->layer[i], g->micro_batch, g, err) != 0)
                return -1;
        if (v > 1 && first[s + 1] - first[s] < v)
            return tsl_err_set(err,
                               "eval: interleave %u: stage %u has %u layers, fewer than "
                               "its %u model chunks",
                               v, s, first[s + 1] - first[s], v);
    }
    if (check_experts(m, g->ep, G, err) != 0)
        return -1;
    if (g->schedule > TSL_PIPESIM_SCHED_DUALPIPEV)
        return tsl_err_set(err, "eval: schedule: not one Tessel simulates; give 1F1B, "
                                "interleaved, zbh1, zbv or dualpipev");
    if (g->schedule && (P < 2 || v > 1))
        return tsl_err_set(err,
                           "eval: schedule %s needs pp >= 2 and no interleave (pp %u, "
                           "interleave %u)",
                           tsl_pipesim_sched_name(g->schedule, 1), P, v);
    const bool vsched = tsl_pipesim_sched_is_v(g->schedule);
    const char *sname = tsl_pipesim_sched_name(g->schedule, 1);
    for (uint32_t s = 0; vsched && s < P; s++)
        if (first[s + 1] - first[s] < 2)
            return tsl_err_set(err,
                               "eval: schedule %s: stage %u has %u layer, fewer than its 2 "
                               "model chunks",
                               sname, s, first[s + 1] - first[s]);
    if (vsched && (uint64_t)g->n_micro * 2 > TSL_PIPESIM_MAX_MICRO)
        return tsl_err_set(err, "eval: %s x %u micro-batches exceeds %u", sname, g->n_micro,
                           TSL_PIPESIM_MAX_MICRO);
    if (g->schedule == TSL_PIPESIM_SCHED_DUALPIPEV && g->n_micro < 2 * P)
        return tsl_err_set(err,
                           "eval: schedule dualpipev needs at least 2 micro-batches per "
                           "stage (%u for pp %u), got %u",
                           2 * P, P, g->n_micro);
    if (vpg && (v <= 1 || g->schedule))
        return tsl_err_set(err,
                           "eval: vp_group %u: micro-batches per group of the interleaved "
                           "schedule; the plan runs %s (give --interleave V)",
                           vpg, tsl_pipesim_sched_name(g->schedule, v));
    if (v > 1 && P < 2)
        return tsl_err_set(err, "eval: interleave %u needs pp >= 2", v);
    if (v > 1 && !vpg && g->n_micro % P != 0)
        return tsl_err_set(err,
                           "eval: interleave %u needs a micro-batch count divisible by pp "
                           "(%u micro-batches, pp %u), or a vp_group that takes it",
                           v, g->n_micro, P);
    if (v > 1 && tsl_pipeline_vp_check(P, g->n_micro, vpg) != 0)
        return tsl_err_set(err,
                           "eval: vp_group %u with pp %u and %u micro-batches: Megatron-LM's "
                           "interleaved schedule takes pp <= vp_group <= micro-batches "
                           "(\"should range in [PP, M]\") and micro-batches mod vp_group 0 "
                           "or at least pp (\"dependency bubbles\"; schedules.py)",
                           vpg, P, g->n_micro);
    if (v > 1 && (uint64_t)g->n_micro * v > TSL_PIPESIM_MAX_MICRO)
        return tsl_err_set(err, "eval: interleave %u x %u micro-batches exceeds %u", v, g->n_micro,
                           TSL_PIPESIM_MAX_MICRO);
    return 0;
}

void tsl_eval_search_request(const tsl_request_t *r, const tsl_plan_t *g, tsl_request_t *out)
{
    *out = *r;
    if (!r->grad_reduce_bytes)
        out->grad_reduce_bytes = g->grad_reduce_bytes;
    if (!r->grad_buf_bytes)
        out->grad_buf_bytes = g->grad_buf_bytes;
    if (!r->attn_kernel)
        out->attn_kernel = g->attn_kernel;
    out->no_fp32_master |= g->no_fp32_master;
    if (!r->overlap_grad_reduce && !r->no_overlap_grad_reduce && g->grad_reduce_exposed)
        out->no_overlap_grad_reduce = true;
    /* Megatron-FSDP's overlap is its sharding's own (knobs.megatron_fsdp, recorded on
     * the plan: search_eval.c record_megatron_fsdp), not the --overlap-param-gather the
     * target's ZeRO-1 plans would take */
    if (!(r->target == TSL_TARGET_MEGATRON && tsl_plan_has_sdp(g)))
        out->overlap_param_gather |= g->overlap_param_gather;
    if (!r->overlap_tp_dgrad && !r->no_overlap_tp_dgrad && g->overlap_tp_dgrad)
        out->overlap_tp_dgrad = true;
    out->autocast |= g->autocast;
    out->unfused_grad_accum |= g->unfused_grad_accum;
    out->legacy_p2p |= g->legacy_p2p;
    out->tp_comm_overlap |= g->tp_comm_overlap;
    out->async_tp |= g->async_tp;
    out->eager |= g->eager;
    out->double_block_fwd |= g->double_block_fwd;
    out->tp_sync |= g->tp_sync; /* the fork's space too: no SP (search.h) */
    if (g->ds_pipe_engine) {    /* DeepSpeed's TrainSchedule: plain 1F1B only */
        out->no_interleave = true;
        out->no_zero_bubble = true;
    }
    if (!(r->moe_capacity > 0) && g->moe_capacity > 0) { /* its routing */
        out->moe_capacity = g->moe_capacity;
        out->moe_pad = g->moe_pad;
    }
    if (!r->moe_imbalance)
        out->moe_imbalance = g->moe_imbalance;
    if (!(r->host_op_us > 0)) /* the host figure the plan was priced on */
        out->host_op_us = g->host_op_us;
    if (!r->fp8_recipe && !r->no_fp8) /* --no-fp8 prices it in bf16: searches so too */
        out->fp8_recipe = g->fp8_recipe;
    if (!r->loss_impl) /* how its LM loss ran (loss_impl.h); 0: the target's */
        out->loss_impl = g->loss_impl;
    out->moe_bf16_experts |= g->moe_bf16_experts;
    out->moe_fp8_dispatch |= g->moe_fp8_dispatch;
    out->moe_alltoall |= g->moe_alltoall;
    out->moe_unfused_permute |= g->moe_unfused_permute;
    out->moe_fused_mlp |= g->moe_fused_mlp;
    out->moe_fused_srelu |= g->moe_fused_srelu;
    out->moe_flex |= g->moe_flex;
    if (!r->moe_flex_backend) /* its flex back end (cost.h tsl_flex_backend_t) */
        out->moe_flex_backend = g->moe_flex_backend;
    out->moe_a2a_overlap |= g->moe_a2a_overlap;
    out->moe_a2a_wgrad_inline |= g->moe_a2a_wgrad_inline;
    out->ds_grad_bucket |= g->ds_grad_bucket;
    out->tp_whole_heads |= g->tp_whole_heads;
    out->sdp_layer_roots |= g->sdp_layer_roots;
    out->sdp_nosync |= g->sdp_nosync;
    out->sdp_keep_weights |= g->sdp_keep_weights;
    out->ds_bf16_optimizer |= g->ds_bf16_optimizer;
    out->launch_blocking |= g->launch_blocking;
    out->ds_wall_clock |= g->ds_wall_clock;
    out->ds_zero3_v03 |= g->ds_zero3_v03;
    out->fp8_amax_tp_only |= g->fp8_amax_tp_only;
    out->fp8_dpa |= g->fp8_dpa;
    out->unfused_elementwise |= g->unfused_elementwise;
    out->fp32 |= g->fp32;
    out->tf32 |= g->tf32; /* its script's TF32 */
    out->fp16 |= g->fp16; /* its 16 bits in fp16 with a loss scaler */
    if (!r->recompute_modules)
        out->recompute_modules = g->recompute_modules;
    out->bf16_moments |= g->bf16_moments;
    out->lazy_grads |= g->lazy_grads;                   /* its stack frees its gradients */
    if (!r->bf16_layers_start && !r->bf16_layers_end) { /* the blocks it kept bf16 */
        out->bf16_layers_start = g->bf16_layers_start;
        out->bf16_layers_end = g->bf16_layers_end;
    }
    if (!r->cpu_offload_layers) /* its activation offloading */
        out->cpu_offload_layers = g->cpu_offload_layers;
}

/* The given plan's recorded switches (an import's, a plan document's) where the
 * request sets none: the request's win, then the plan's, then the request's
 * target's. The stack's (tsl_eval_search_request, tsl_plan_stack_knobs: what the
 * comparison search runs under too), and the plan's own choices the search makes
 * for itself: its CP, EP and expert TP degrees. */
static void given_knobs(const tsl_request_t *r, const tsl_plan_t *g, tsl_cost_knobs_t *k)
{
    tsl_request_t sr;
    tsl_eval_search_request(r, g, &sr);
    tsl_request_knobs(&sr, k);
    tsl_plan_stack_knobs(g, k);
    if (!r->cp && g->cp > 1) { /* the given plan's context parallelism */
        k->cp = g->cp;
        k->cp_comm = g->cp_comm;
    }
    if (!r->ep && g->ep > 1) /* the given plan's expert parallelism */
        k->ep = g->ep;
    if (!r->etp && g->etp > 1)
        k->etp = g->etp;
}

/* The loss the request or the given plan names (0: neither, the target's).
 * Under autocast only a named megatron or te is refused: the target's default
 * gives way to the script's torch loss there, as in a search (cost.c). */
static uint32_t asked_loss_impl(const tsl_request_t *r, const tsl_plan_t *g)
{
    return r->loss_impl ? r->loss_impl : g->loss_impl;
}

/* A plan document's grad_reduce_bytes and grad_buf_bytes: absent (0), 2 or 4, as a
 * request's; its attn_kernel one of attn_kernel.h's. */
static int given_fields_ok(const tsl_plan_t *g, tsl_err_t *err)
{
    if (tsl_grad_width_check("grad_reduce_bytes", g->grad_reduce_bytes, "bf16", err) != 0 ||
        tsl_grad_width_check("grad_buf_bytes", g->grad_buf_bytes, "a 16-bit .grad", err) != 0 ||
        tsl_attn_kernel_ok(g->attn_kernel, err) != 0)
        return tsl_err_prefix(err, "eval");
    return 0;
}

/* A plan document's switches that qualify what the plan does not run: tf32 (how
 * fp32 matmuls run) on a 16-bit plan, fp8_impl (who runs the FP8 recipe) without
 * one, cp_comm (the exchange between CP ranks) at CP 1. Tessel never writes them so
 * (plan.c tsl_plan_set_knobs records each only where it prices something), and the
 * flags are refused so (search.c fp32_request_check, tesselctl eval): refused naming
 * the field, not dropped without a word. The request's fp32 or FP8 may supply what
 * the document lacks. */
static int given_switches_ok(const tsl_request_t *r, const tsl_plan_t *g, tsl_err_t *err)
{
    if (g->tf32 && !g->fp32 && !r->fp32)
        return tsl_err_set(err, "eval: tf32: true on a 16-bit plan (no fp32): its GEMMs are bf16 "
                                "or fp16, never TF32; drop tf32, or give --fp32");
    if (g->fp8_impl && !g->fp8_recipe && !r->fp8_recipe)
        return tsl_err_set(err,
                           "eval: fp8_impl: %u (%s) on a plan without FP8 (no fp8_recipe): it "
                           "names who runs an FP8 recipe; drop fp8_impl, or give --fp8 RECIPE",
                           g->fp8_impl,
                           tsl_fp8_impl_name(g->fp8_impl) ? tsl_fp8_impl_name(g->fp8_impl) : "?");
    if (g->module_prec && !g->fp8_recipe && !r->fp8_recipe)
        return tsl_err_set(err, "eval: module_precision: per-module precision on a plan without "
                                "FP8 (no fp8_recipe): Megatron-core overrides only a quantized "
                                "recipe's modules; drop module_precision, or give --fp8 RECIPE");
    if (g->cp_comm && g->cp <= 1)
        return tsl_err_set(
            err,
            "eval: cp_comm: %u (%s) on a plan without CP (cp %u): it names the "
            "attention exchange between CP ranks; drop cp_comm, or set cp",
            g->cp_comm, tsl_cp_comm_name(g->cp_comm) ? tsl_cp_comm_name(g->cp_comm) : "?", g->cp);
    return 0;
}

/* async_tp on a given plan (target.h tsl_async_tp_ok): its collectives are the
 * sequence-parallel ones, so where the request asks for it (asked) some layer must run
 * TP > 1 with SP; a plan document that carries it from a search whose plan took no
 * TP is priced as it was, the switch changing nothing. */
static int given_async_tp_ok(const tsl_cost_knobs_t *k, bool asked, const tsl_plan_t *g,
                             uint32_t n_layers, tsl_err_t *err)
{
    if (!k->async_tp)
        return 0;
    bool sp = false;
    for (uint32_t i = 0; i < n_layers && !sp; i++)
        sp = g->layer[i].sp && tsl_strategy_degree(&g->layer[i], TSL_DIM_TP) > 1;
    if (!sp && asked)
        return tsl_err_set(err, "eval: async_tp: no layer of the plan runs TP > 1 with SP, the "
                                "collectives torch's micro-pipelined TP overlaps");
    if (tsl_async_tp_ok(true, false, k->tp_comm_overlap, k->eager, err) != 0)
        return tsl_err_prefix(err, "eval");
    return 0;
}

/* Costs the checked plan and holds each stage to its budget. */
static int cost_plan(const tsl_model_t *m, const tsl_cluster_t *c, const tsl_request_t *r,
                     const tsl_plan_t *g, const uint32_t *first, tsl_plan_t *out, tsl_err_t *err)
{
    tsl_space_t space = {.label = g->label[0] ? g->label : "given"};
    tsl_engine_t e;
    uint32_t *choice = calloc(m->n_layers, sizeof(*choice));
    int rc = -1;
    if (choice == NULL) {
        tsl_err_setc(err, TSL_E_NOMEM, "eval: out of memory");
        goto out_nofree;
    }
    if (tsl_engine_init_given(&e, m, c, r, &space, g->pp, g->layer, choice, err) != 0)
        goto out;
    e.node_order = g->n_nodes ? g->node_order : NULL;
    e.vp_group = given_vp_group(r, g);
    given_knobs(r, g, &e.knobs);
    tsl_knobs_on_cluster(&e.knobs, c); /* as the search records it: the same figures */
    /* likewise: the target's stack without a fused attention kernel here (tsl_eval_plan
     * prices the unfused core) */
    e.knobs.stack_unfused_attn = tsl_target_unfused_attn(r->target, c);
    if (tsl_cluster_fp8_ok(c, e.knobs.fp8, err) != 0 || /* an FP8 plan on an Ampere cluster */
        tsl_target_unfused_attn_ok(r->target, c, &e.knobs, err) != 0 || /* TE's, where none */
        tsl_fp16_ok(&e.knobs, r->target, c, err) != 0 || /* bf16 where a GPU has none */
        tsl_tf32_ok(e.knobs.tf32, c, err) != 0 ||        /* TF32 where no GPU has it */
        tsl_fp32_ok(e.knobs.fp32, e.knobs.tf32_off, m, c, err) != 0 || /* fp32 on a GPU without
                                                                            the figure it runs at */
        tsl_fp8_dispatch_ok(e.knobs.fp8, e.knobs.moe_fp8_dispatch, err) != 0 ||
        tsl_moe_alltoall_ok(e.knobs.moe_alltoall, e.knobs.moe_fp8_dispatch, err) != 0 ||
        tsl_moe_flex_ok(e.knobs.moe_flex, e.knobs.moe_alltoall, err) != 0 ||
        tsl_moe_flex_backend_ok(
            e.knobs.moe_flex, r->moe_flex_backend ? r->moe_flex_backend : e.knobs.moe_flex_backend,
            e.knobs.moe_pad, err) != 0 ||
        tsl_fp8_impl_ok(e.knobs.fp8, e.knobs.fp8_impl, err) != 0 ||
        tsl_loss_impl_ok(asked_loss_impl(r, g), e.knobs.autocast, err) != 0 ||
        given_fields_ok(g, err) != 0 || given_switches_ok(r, g, err) != 0 ||
        tsl_opt_step_ok(e.knobs.opt_step, err) != 0 ||
        tsl_norm_impl_ok(e.knobs.norm_impl, err) != 0 ||
        tsl_fp8_amax_tp_only_ok(e.knobs.fp8_amax_tp_only, e.knobs.fp8, err) != 0 ||
        tsl_fp8_dpa_ok(e.knobs.fp8_dpa, e.knobs.fp8, e.knobs.fp8_impl, err) != 0 ||
        tsl_target_tp_comm_overlap_ok(e.knobs.fp8, e.knobs.tp_comm_overlap, err) != 0 ||
        given_async_tp_ok(&e.knobs, r->async_tp, g, m->n_layers, err) != 0)
        goto out;
    if (check_modules(m, e.knobs.recompute_modules, err) != 0 ||
        tsl_moe_fused_mlp_ok(m, e.knobs.moe_fused_mlp, e.knobs.moe_fused_srelu, err) != 0 ||
        check_offload(m, g, e.knobs.cpu_offload_layers, e.knobs.recompute_modules, err) != 0)
        goto out;
    tsl_plan_init(out);
    tsl_engine_eval_given(&e, g->micro_batch * g->n_micro, g->pp, g->n_micro, g->interleave,
                          g->schedule, first, choice, out);
    if (!out->valid) {
        tsl_err_setc(err, TSL_E_INTERNAL,
                     "eval: the plan passed the checks but has no finite "
                     "iteration time");
        goto out;
    }
    out->sublayer = g->sublayer;
    tsl_search_simulate(out, !r->no_slicer, r->paper_cost);
    rc = 0;
    for (uint32_t s = 0; s < out->pp && rc == 0; s++) {
        const tsl_plan_stage_t *st = &out->stages[s];
        uint64_t budget = tsl_engine_stage_budget(&e, st->first_device, st->n_devices);
        if (st->peak_bytes > budget)
            rc = tsl_err_setc(err, TSL_E_NOFIT,
                              "eval: stage %u (layers %u-%u) needs %.2f GiB "
                              "per device, over its %.2f GiB budget",
                              s, st->first_layer, st->first_layer + st->n_layers - 1,
                              st->peak_bytes / GIB, budget / GIB);
    }
    if (rc == 0 && tsl_offload_host_check(c, out, err) != 0)
        rc = tsl_err_prefix(err, "eval");
out:
    tsl_engine_free(&e);
    free(choice);
out_nofree:
    return rc;
}

static int eval_on(const tsl_model_t *m, const tsl_cluster_t *c, const tsl_request_t *r,
                   const tsl_plan_t *g, tsl_plan_t *out, tsl_err_t *err)
{
    uint32_t P = g->pp, first[TSL_PLAN_MAX_STAGES + 1];
    if (P == 0 || P > TSL_PLAN_MAX_STAGES || c->n_devices % P != 0 || P > m->n_layers)
        return tsl_err_set(err,
                           "eval: pp %u: must divide the %u devices and be at most the %u "
                           "layers (and %u)",
                           P, c->n_devices, m->n_layers, TSL_PLAN_MAX_STAGES);
    if (g->n_layers && g->n_layers != m->n_layers)
        return tsl_err_set(err, "eval: the plan has %u layers, the model %u%s", g->n_layers,
                           m->n_layers, g->sublayer ? " (split into attention/FFN blocks)" : "");
    if (layer_split(m, g, first, err) != 0 ||
        check_plan(m, c, g, given_vp_group(r, g), first, err) != 0)
        return -1;
    return cost_plan(m, c, r, g, first, out, err);
}

/* Megatron-LM's own switches that a plan document carries as it carries the request's
 * (--tp-comm-overlap, --cpu-offload-layers, --moe-alltoall-dispatcher): another target
 * refuses them from the document as the request check refuses the flags (exit 4). */
static int megatron_only(uint32_t target, const tsl_plan_t *p, tsl_err_t *err)
{
    const char *what = p->tp_comm_overlap      ? "tp_comm_overlap (TransformerEngine's userbuffers)"
                       : p->cpu_offload_layers ? "cpu_offload_layers (activation CPU offloading)"
                       : p->moe_alltoall ? "moe_alltoall_dispatcher (the all-to-all dispatcher)"
                                         : NULL;
    if (target == TSL_TARGET_MEGATRON || what == NULL)
        return 0;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED, "%s: the plan runs Megatron-LM's %s",
                        tsl_target_name(target), what);
}

/* The priced plan in the request's target's space (tsl_target_check): eval --target
 * prices a plan as that stack runs it, so a plan it cannot run is refused, naming
 * the rule, as the search drops it. */
static int target_runs(uint32_t target, const tsl_plan_t *p, const tsl_model_t *m, tsl_err_t *err)
{
    if (megatron_only(target, p, err) != 0)
        return tsl_err_prefix(err, "eval");
    tsl_target_view_t *view = malloc(sizeof(*view));
    if (view == NULL)
        return tsl_err_setc(err, TSL_E_NOMEM, "eval: out of memory");
    int rc = tsl_target_check(target, p, m, view, err);
    free(view);
    return rc != 0 ? tsl_err_prefix(err, "eval") : 0;
}

/* sdp_layer_roots prices how an SDP level gathers and reduce-scatters: where the
 * request asks for it, a given plan without one (every layer at SDP degree 1) has
 * nothing it could price; a plan document that carries it from a search whose plan
 * took no SDP level is priced as it was, the switch changing nothing (as async_tp). */
static int sdp_layer_roots_needs_sdp(const tsl_plan_t *p, tsl_err_t *err)
{
    if (tsl_plan_has_sdp(p))
        return 0;
    return tsl_err_set(err, "eval: sdp_layer_roots: the plan has no SDP (FSDP) level (every "
                            "layer at SDP degree 1); fairscale's FSDP units price nothing there");
}

/* sdp_keep_weights likewise prices an SDP level's gathers: a given plan without one has
 * nothing it could price. */
static int sdp_keep_weights_needs_sdp(const tsl_plan_t *p, tsl_err_t *err)
{
    if (tsl_plan_has_sdp(p))
        return 0;
    return tsl_err_set(err, "eval: sdp_keep_weights: the plan has no SDP (FSDP) level (every "
                            "layer at SDP degree 1); no gathered weights to keep there");
}

int tsl_eval_plan(const tsl_model_t *m, const tsl_cluster_t *c, const tsl_request_t *r,
                  const tsl_plan_t *given, tsl_plan_t *out, tsl_err_t *err)
{
    tsl_plan_init(out);
    if (tsl_model_check_priced(m, err) != 0)
        return tsl_err_prefix(err, "eval");
    if (given->memopt)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "eval: memory-switch (H3T) plans are not "
                            "evaluated");
    tsl_request_t rk = *r; /* a given fp32 plan's (a configuration's) precision: the request's */
    rk.fp32 |= given->fp32;
    rk.fp16 |= given->fp16;
    rk.sdp_layer_roots |= given->sdp_layer_roots;
    rk.sdp_keep_weights |= given->sdp_keep_weights;
    const tsl_cost_knobs_t routing[2] = {{.moe_capacity = given->moe_capacity,
                                          .moe_pad = given->moe_pad,
                                          .moe_imbalance = given->moe_imbalance},
                                         {.moe_capacity = r->moe_capacity,
                                          .moe_pad = r->moe_pad,
                                          .moe_imbalance = r->moe_imbalance}};
    if (tsl_cost_moe_check(&routing[0], err) != 0 || tsl_cost_moe_check(&routing[1], err) != 0 ||
        tsl_host_op_check(given->host_op_us, err) != 0 ||
        check_imbalance(m, given->moe_imbalance, err) != 0 ||
        check_imbalance(m, r->moe_imbalance, err) != 0 ||
        tsl_request_knobs_check(&rk, err) != 0 || /* the request's switches, as a search's */
        tsl_request_budget_check(r, c, err) != 0)
        return tsl_err_prefix(err, "eval");
    if (r->sdp_layer_roots && sdp_layer_roots_needs_sdp(given, err) != 0)
        return -1;
    if (r->sdp_keep_weights && sdp_keep_weights_needs_sdp(given, err) != 0)
        return -1;
    /* the fork tp_sync describes runs no SP; under a target tp_sync is refused as
     * such (target_runs) */
    if (!r->target && tsl_plan_tp_sync_check(given, given->tp_sync || r->tp_sync, err) != 0)
        return -1;
    if (tsl_cuda_graph_modules_check(given->cuda_graph_modules, err) != 0 ||
        tsl_module_prec_check(given->module_prec, err) != 0)
        return -1; /* a plan document's bits, as the flag's names */
    /* DeepSpeed's TrainSchedule is plain 1F1B: its engine's p2p prices no other schedule */
    if (given->ds_pipe_engine && (given->interleave > 1 || given->schedule))
        return tsl_err_set(err, "ds_pipe_engine: DeepSpeed's PipelineEngine runs plain 1F1B "
                                "(TrainSchedule), not an interleaved or zero-bubble schedule");
    tsl_sublayer_model_t sm = {0};
    tsl_cluster_t pc = {0};
    tsl_model_t own = {0}; /* the request's attention kind and dropout apply, as in tsl_search */
    const tsl_model_t *em = m;
    const tsl_cluster_t *ec = c;
    int rc = -1;
    /* the blocks kept bf16: the request's, else the given plan's */
    bool asked = r->bf16_layers_start || r->bf16_layers_end;
    tsl_model_switches_t sw = tsl_request_model_switches(r);
    /* the unfused core where the target's stack has no fused kernel (V100 under megatron) */
    sw.unfused_attn |= tsl_target_unfused_attn(r->target, c);
    if (!asked) {
        sw.bf16_layers_start = given->bf16_layers_start;
        sw.bf16_layers_end = given->bf16_layers_end;
    }
    if (tsl_model_for_request(m, &sw, &own, &m, err) != 0)
        goto out;
    em = m;
    if (given->sublayer) {
        if (tsl_sublayer_split(m, &sm, err) != 0)
            goto out;
        em = &sm.model;
    }
    if (given->n_nodes) {
        if (given->n_nodes != c->n_nodes) {
            tsl_err_set(err, "eval: node_order names %u nodes, the cluster has %u", given->n_nodes,
                        c->n_nodes);
            goto out;
        }
        if (tsl_cluster_permute(c, given->node_order, &pc, err) != 0)
            goto out;
        ec = &pc;
    }
    rc = eval_on(em, ec, r, given, out, err);
    if (rc == 0 && r->target)
        rc = target_runs(r->target, out, m, err);
out:
    if (given->n_nodes && ec == &pc)
        tsl_cluster_free(&pc);
    tsl_sublayer_free(&sm);
    tsl_model_free(&own);
    return rc;
}

static bool same_stage(const tsl_plan_stage_t *a, const tsl_plan_stage_t *b)
{
    return a->first_layer == b->first_layer && a->n_layers == b->n_layers &&
           a->first_device == b->first_device && a->n_devices == b->n_devices &&
           a->inflight == b->inflight && a->fwd_s == b->fwd_s && a->time_s == b->time_s &&
           a->time_nosync_s == b->time_nosync_s && a->p2p_s == b->p2p_s && a->opt_s == b->opt_s &&
           a->ms_bytes == b->ms_bytes && a->act_bytes == b->act_bytes &&
           a->peak_bytes == b->peak_bytes;
}

bool tsl_eval_same_figures(const tsl_plan_t *a, const tsl_plan_t *b)
{
    if (a->pp != b->pp || a->global_batch != b->global_batch || a->n_micro != b->n_micro ||
        a->schedule != b->schedule || a->iter_time_s != b->iter_time_s ||
        a->opt_tail_s != b->opt_tail_s || a->tie_s != b->tie_s ||
        a->samples_per_s != b->samples_per_s || a->tokens_per_s != b->tokens_per_s ||
        a->peak_bytes != b->peak_bytes || a->sim_iter_time_s != b->sim_iter_time_s ||
        a->n_sliced != b->n_sliced || a->sliced_iter_time_s != b->sliced_iter_time_s ||
        a->alpha_t != b->alpha_t || a->alpha_m != b->alpha_m)
        return false;
    for (uint32_t s = 0; s < a->pp; s++)
        if (!same_stage(&a->stages[s], &b->stages[s]))
            return false;
    return true;
}
