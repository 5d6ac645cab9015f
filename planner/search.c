/*
 * search.c — the public entry point: request validation and fingerprinting, and
 * tsl_search's steps (placements × engine, H3T fallback, sub-layer, baselines,
 * adoption of a better baseline, simulation). The engine is search_engine.c.
 */
#include "search.h"
#include "mtp.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fp8_impl.h"
#include "module_prec.h"
#include "offload.h"
#include "partition.h"
#include "recompute.h"
#include "search_internal.h"
#include "target.h"

void tsl_request_init(tsl_request_t *r)
{
    memset(r, 0, sizeof(*r));
}

/* Why `plan --target torchtitan` weighs no context parallelism (target_weighs_cp):
 * the short form fits a plan's cp_why (search.h, 192 bytes with "cp 1: not searched: "). */
#define TORCHTITAN_NO_CP_SHORT                                                                     \
    "torchtitan main runs CP only as FlexAttention over all-gathered K/V, which Tessel does "      \
    "not price, and v0.2.x's TOML only ring attention"
#define TORCHTITAN_NO_CP                                                                           \
    "torchtitan: its Python configuration (torchtitan main) runs context parallelism only as "     \
    "FlexAttention over K/V all-gathered at the attention, which Tessel does not price, and its "  \
    "job TOML (v0.2.x) only ring attention: no CP plan exports to both, so the target weighs "     \
    "none"

/* Why tp_sync and sequence parallelism do not go together. */
#define TP_SYNC_NO_SP                                                                              \
    "tp_sync: AMP's Megatron-LM v1.1.5 fork, whose synchronised TP all-reduces tp_sync "           \
    "prices, has no sequence parallelism (Megatron-LM added it in 2022, Korthikanti et al.; "      \
    "the fork's mpu/mappings.py only all-reduces)"

int tsl_plan_tp_sync_check(const tsl_plan_t *p, bool tp_sync, tsl_err_t *err)
{
    for (uint32_t i = 0; tp_sync && i < p->n_layers && i < TSL_PLAN_MAX_LAYERS; i++)
        if (p->layer[i].sp)
            return tsl_err_set(err, TP_SYNC_NO_SP ": layer %u runs SP; drop --sp or --tp-sync", i);
    return 0;
}

static bool plan_has_tp(const tsl_plan_t *p)
{
    for (uint32_t i = 0; i < p->n_layers && i < TSL_PLAN_MAX_LAYERS; i++)
        if (tsl_strategy_degree(&p->layer[i], TSL_DIM_TP) > 1)
            return true;
    return false;
}

bool tsl_tp_sync_note(const tsl_request_t *r, uint32_t n_devices, const tsl_plan_t *p, char *buf,
                      size_t n)
{
    const char *why = NULL;
    if (p && p->tp_sync && !plan_has_tp(p))
        why = "the plan runs TP 1 on every layer";
    else if (!p && r->tp_sync && (r->no_tp || n_devices < 2))
        why = r->no_tp ? "--no-tp leaves every layer at TP 1" : "one GPU runs every layer at TP 1";
    if (why)
        snprintf(buf, n, "tp_sync: %s: no TP all-reduce to synchronise, so it changes nothing",
                 why);
    else if (n)
        buf[0] = '\0';
    return why != NULL;
}

bool tsl_moe_switch_note(const tsl_request_t *r, const tsl_model_t *m, char *buf, size_t n)
{
    const char *name = r->moe_a2a_overlap ? "moe_a2a_overlap"
                       : r->moe_flex      ? "moe_flex_dispatcher"
                       : r->moe_alltoall  ? "moe_alltoall_dispatcher"
                                          : NULL;
    const char *why = NULL;
    if (name && tsl_model_moe_layers(m) == 0)
        why = "the model has no MoE layer";
    else if ((r->moe_a2a_overlap || r->moe_flex) && (r->no_ep || r->ep == 1))
        why = r->no_ep ? "--no-ep leaves the experts unsplit: no EP all-to-all"
                       : "ep 1 leaves the experts unsplit: no EP all-to-all";
    if (why)
        snprintf(buf, n, "%s: %s, so it changes nothing", name, why);
    else if (n)
        buf[0] = '\0';
    return why != NULL;
}

/* The count and number fields' ranges (request_fields.h min..max, 0 unset):
 * tesselctl's options hold them at parse time, a gRPC or JSON request only here,
 * which both paths pass through. */
static bool uint_out_of_range(uint32_t v, uint32_t min, uint32_t max)
{
    return max != 0 && v != 0 && (v < min || v > max);
}

/* A REAL field 0 (the default) or within [min, max]; NaN and ±inf are neither (a
 * gRPC double carries them, and a NaN compared false against every bound the
 * pricing applies later). */
static bool real_out_of_range(double v, double min, double max)
{
    return v != 0 && !(v >= min && v <= max);
}
#define BOUND_UINT(v, min, max, proto)                                                             \
    if (uint_out_of_range(v, min, max))                                                            \
        return tsl_err_set(err, "%s: %u is out of range; give %u..%u, or 0 for the default",       \
                           proto, (unsigned)(v), (unsigned)(min), (unsigned)(max));
#define BOUND_BOOL(v, min, max, proto)
#define BOUND_BYTES(v, min, max, proto)
#define BOUND_TARGET(v, min, max, proto)
#define BOUND_REAL(v, min, max, proto)                                                             \
    if (real_out_of_range(v, min, max))                                                            \
        return tsl_err_set(err, "%s: %g is not from %g to %g (0: the default)", proto, (v),        \
                           (double)(min), (double)(max));
#define BOUND_MODULES(v, min, max, proto)
#define BOUND_LOSS(v, min, max, proto)
#define BOUND_PREC(v, min, max, proto)                                                             \
    if (tsl_module_prec_check(v, err) != 0) /* a gRPC or JSON request's nibbles */                 \
        return -1;
static int request_bounds_check(const tsl_request_t *r, tsl_err_t *err)
{
#define BOUND_FIELD_(name, kind, flag, metavar, min, max, help, proto, json)                       \
    BOUND_##kind(r->name, min, max, proto)
    TSL_REQUEST_FIELDS(BOUND_FIELD_)
#undef BOUND_FIELD_
    return 0;
}

/* Megatron-LM's grad buffer is its reduce's dtype (param_and_grad_buffer.py
 * grad_dtype: fp32 under grad_reduce_in_fp32, else the parameters'), so its export
 * refuses a plan priced with another (export_megatron.c check_knobs): refused here,
 * before a search whose every plan the export would refuse. The reduce's bytes are
 * the request's, else the stack's default (tsl_target_knobs: 4). */
static int megatron_grad_buf_check(const tsl_request_t *r, tsl_err_t *err)
{
    if (!r->grad_buf_bytes || r->target != TSL_TARGET_MEGATRON)
        return 0;
    tsl_cost_knobs_t k;
    tsl_target_knobs(r->target, &k);
    uint32_t reduce = r->grad_reduce_bytes  ? r->grad_reduce_bytes
                      : k.grad_reduce_bytes ? k.grad_reduce_bytes
                                            : TSL_BYTES_PER_PARAM_FP16;
    if (r->grad_buf_bytes == reduce)
        return 0;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "grad_buf_bytes: megatron: %u-byte gradients reduced in %u bytes; "
                        "Megatron-LM's grad buffer is the reduce's dtype (give "
                        "--grad-reduce-bytes %u, or leave --grad-buf-bytes out)",
                        r->grad_buf_bytes, reduce, r->grad_buf_bytes);
}

int tsl_host_op_check(double us, tsl_err_t *err)
{
    if (us == 0 || (us >= TSL_HOST_OP_MIN_US && us <= TSL_HOST_OP_MAX_US))
        return 0;
    return tsl_err_set(err,
                       "host_op_us: %g is not from %g to %g (the stack's host time per "
                       "eager op in microseconds; absent or 0: the built-in figure)",
                       us, TSL_HOST_OP_MIN_US, TSL_HOST_OP_MAX_US);
}

int tsl_grad_width_check(const char *field, uint32_t bytes, const char *narrow, tsl_err_t *err)
{
    if (bytes == 0 || bytes == 2 || bytes == 4)
        return 0;
    return tsl_err_set(err, "%s: %u is not 2 (%s) or 4 (fp32)", field, bytes, narrow);
}

/* The switches of one stack's own code (Megatron-LM's MoE dispatchers and their
 * overlap, DeepSpeed's gradient bucket, torchtitan's FSDP2 under PP) under a target that runs another: refused
 * naming the field, UNSUPPORTED, as tsl_target_check refuses such a plan. */
static int stack_switches_target_check(const tsl_request_t *r, tsl_err_t *err)
{
    if (r->moe_alltoall && r->target && r->target != TSL_TARGET_MEGATRON)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "moe_alltoall_dispatcher: Megatron-LM's all-to-all dispatcher; %s "
                            "runs its own",
                            tsl_target_name(r->target));
    if (r->moe_flex && r->target && r->target != TSL_TARGET_MEGATRON)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "moe_flex_dispatcher: a flex dispatcher (DeepEP, HybridEP); %s's "
                            "export runs its standard all-to-all, megatron the flex one "
                            "(--moe-token-dispatcher-type flex)",
                            tsl_target_name(r->target));
    if (r->moe_a2a_overlap && r->target && r->target != TSL_TARGET_MEGATRON)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "moe_a2a_overlap: Megatron-LM's EP all-to-all overlap "
                            "(--overlap-moe-expert-parallel-comm); %s runs none",
                            tsl_target_name(r->target));
    if (r->ds_bf16_optimizer && r->target == TSL_TARGET_DEEPSPEED) /* tsl_target_knobs */
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "ds_bf16_optimizer: deepspeed prices DeepSpeed's BF16_Optimizer "
                            "where its engine runs it (bf16 at ZeRO-0 under pipeline stages, "
                            "DP > 1) and DeepSpeed's ZeRO optimizer elsewhere; drop "
                            "--ds-bf16-optimizer (--no-zero keeps the search to ZeRO-0)");
    if (r->ds_bf16_optimizer && r->target)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "ds_bf16_optimizer: DeepSpeed's BF16_Optimizer under pipeline stages "
                            "(its own ZeRO-1 over a DeepSpeed ZeRO-0 config); %s's configuration "
                            "does not run it",
                            tsl_target_name(r->target));
    if (r->ds_wall_clock && r->target)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "ds_wall_clock: DeepSpeed's synchronising timers around every "
                            "pipeline instruction (AMP's fork, wall_clock_breakdown); %s's "
                            "configuration does not turn them on",
                            tsl_target_name(r->target));
    if (r->ds_zero3_v03 && r->target)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "ds_zero3_v03: DeepSpeed 0.3's ZeRO-3 (a collective per weight, "
                            "every gather and reduce-scatter exposed); %s's configuration does "
                            "not run that DeepSpeed",
                            tsl_target_name(r->target));
    if (r->fp8_dpa && r->target)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "fp8_dpa: FP8 attention is priced for eval only; %s's "
                            "configuration cannot set it (Megatron-LM's "
                            "fp8_dot_product_attention has no command-line flag)",
                            tsl_target_name(r->target));
    if (r->fp8_amax_tp_only && r->target)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "fp8_amax_tp_only: TE before v1.6 under "
                            "NVTE_DP_AMAX_REDUCE_INTERVAL=0 (the amax reduced over TP only); "
                            "%s's TE ignores that variable (removed in TE 73f8d90fe, v1.6)",
                            tsl_target_name(r->target));
    if (r->unfused_elementwise && r->target)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "unfused_elementwise: Megatron-LM v1.1.5 without its fusion flags "
                            "under PyTorch 1.7 (AMP's fork); %s's configuration does not run it",
                            tsl_target_name(r->target));
    if (r->launch_blocking && r->target)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "launch_blocking: every kernel launch synchronous "
                            "(CUDA_LAUNCH_BLOCKING=1) is the environment of a launch, not a "
                            "setting %s's configuration carries",
                            tsl_target_name(r->target));
    if (r->ds_grad_bucket && r->target && r->target != TSL_TARGET_DEEPSPEED)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "ds_grad_bucket: DeepSpeed's engine's gradient bucket; %s reduces "
                            "its gradients its own way",
                            tsl_target_name(r->target));
    if (r->sdp_nosync && r->target && r->target != TSL_TARGET_TORCHTITAN)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "sdp_nosync: torchtitan's FSDP2 under PP (the level kept unsharded "
                            "between micro-batches); %s's ZeRO-3 reshards every micro-batch",
                            tsl_target_name(r->target));
    if (r->moe_fp8_dispatch && r->target && r->target != TSL_TARGET_MEGATRON)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "moe_fp8_dispatch: %s dispatches in bf16; megatron runs an FP8 "
                            "dispatch (--moe-dispatch-fwd-dtype mxfp8)",
                            tsl_target_name(r->target));
    return 0;
}

/* Megatron-LM's own precision and recompute switches asked for under another target (and
 * recompute_modules a target does not run, tsl_target_recompute_runs: torchtitan_op under
 * megatron too): its rules (target_rules.c module_prec_ok, bf16_layers_ok,
 * megatron_switches_ok) refuse every plan carrying them, so the search would say "no plan
 * fits". */
static int megatron_switches_target_check(const tsl_request_t *r, tsl_err_t *err)
{
    const char *t = tsl_target_name(r->target);
    if (r->target >= TSL_TARGET_COUNT)
        return 0;
    if (!tsl_target_recompute_runs(r->target, r->recompute_modules))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED, "recompute_modules: %s: %s; %s", t,
                            tsl_target_recompute_policy(r->recompute_modules),
                            tsl_target_recompute_instead(r->target));
    if (!r->target || r->target == TSL_TARGET_MEGATRON)
        return 0;
    if (r->bf16_layers_start || r->bf16_layers_end)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "bf16_layers_start: %s: blocks kept bf16 under FP8 are Megatron-LM's "
                            "--first-last-layers-bf16; Tessel exports them to megatron only",
                            t);
    if (r->bf16_moments)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "bf16_moments: %s: Megatron-LM's precision-aware optimizer; Tessel "
                            "exports it to megatron only",
                            t);
    return 0;
}

/* fp32 training (knobs.fp32) against the request's other precision switches: each
 * names a 16-bit part fp32 training does not have. megatron, deepspeed and torchtitan
 * export an fp32 run (docs/exports.md "fp32 training"); galvatron's export is its
 * strategy file, which has no precision key. */
static int fp32_request_check(const tsl_request_t *r, tsl_err_t *err)
{
    if (r->tf32 && !r->fp32) /* TF32 is a way to run fp32 matmuls: nothing without fp32 */
        return tsl_err_set(err, "tf32: the stack's fp32 matmuls as TF32 need fp32 training "
                                "(fp32: --fp32, an fp32 plan or configuration); a 16-bit step's "
                                "GEMMs are bf16 or fp16, never TF32: drop --tf32, or train in "
                                "fp32");
    if (!r->fp32)
        return 0;
    const char *clash = r->fp16                     ? "fp16"
                        : r->fp8_recipe             ? "fp8_recipe"
                        : r->autocast               ? "autocast"
                        : r->no_fp32_master         ? "no_fp32_master"
                        : r->bf16_moments           ? "bf16_moments"
                        : r->ds_bf16_optimizer      ? "ds_bf16_optimizer"
                        : r->bf16_layers_start      ? "bf16_layers_start"
                        : r->bf16_layers_end        ? "bf16_layers_end"
                        : r->grad_reduce_bytes == 2 ? "grad_reduce_bytes"
                        : r->grad_buf_bytes == 2    ? "grad_buf_bytes"
                                                    : NULL;
    if (clash != NULL)
        return tsl_err_set(err,
                           "fp32: not with %s, a mixed-precision switch: fp32 training has "
                           "no 16-bit (or FP8) part",
                           clash);
    if (r->cp > 1)
        return tsl_err_set(err,
                           "fp32: not with cp %u: context parallelism's exchange and "
                           "kernels are not priced in fp32",
                           r->cp);
    if (r->target == TSL_TARGET_GALVATRON)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "fp32: galvatron's export is its strategy file, which carries no "
                            "precision (the runtime's mixed_precision, default bf16, is a "
                            "launch argument)");
    return 0;
}

/* sdp_layer_roots (fairscale 0.4.5's FSDP with a root per layer, as Galvatron-BMW's
 * 2022 runtime wrapped its layers; cost.h) against what else would run the SDP level:
 * no target launches fairscale (Galvatron's export runs today's runtime), PAPER prices
 * Galvatron's seed formulas, and sdp_nosync and overlap_param_gather are other FSDP
 * implementations (FSDP2, Megatron-FSDP). */
static int sdp_layer_roots_check(const tsl_request_t *r, tsl_err_t *err)
{
    if (!r->sdp_layer_roots)
        return 0;
    if (r->target)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "sdp_layer_roots: fairscale 0.4.5's FSDP with a root per layer "
                            "(Galvatron-BMW's 2022 runtime); %s runs its own FSDP and no target "
                            "launches it",
                            tsl_target_name(r->target));
    const char *clash = r->paper_cost             ? "paper_cost (Galvatron's seed formulas)"
                        : r->sdp_nosync           ? "sdp_nosync (torchtitan's FSDP2)"
                        : r->overlap_param_gather ? "overlap_param_gather (Megatron-FSDP)"
                                                  : NULL;
    if (clash != NULL)
        return tsl_err_set(err,
                           "sdp_layer_roots: fairscale's FSDP with a root per layer prices the "
                           "SDP level one way, and %s another",
                           clash);
    return 0;
}

/* sdp_keep_weights (torch FSDP1's SHARD_GRAD_OP, cost.h) against what else would run
 * the SDP level. torchtitan runs it as fsdp_reshard_after_forward "never": FSDP2 keeps
 * each block gathered from its forward to its backward and, without PP, reduce-scatters
 * every micro-batch (trainer.py's accumulation leaves the gradient sync on); under PP
 * "never" is its "default", the target's own sdp_nosync, which the cost model lets win
 * there (cost.c sdp_keeps_weights), so the two go together under that target only. The
 * other targets run their own FSDP (megatron's and deepspeed's ZeRO-3 reshard every
 * pass; galvatron's export writes its own dp types), PAPER prices Galvatron's seed
 * formulas, and sdp_layer_roots and overlap_param_gather are other FSDP implementations
 * (fairscale, Megatron-FSDP). */
static int sdp_keep_weights_check(const tsl_request_t *r, tsl_err_t *err)
{
    if (!r->sdp_keep_weights)
        return 0;
    bool titan = r->target == TSL_TARGET_TORCHTITAN;
    if (r->target && !titan)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "sdp_keep_weights: torch FSDP's SHARD_GRAD_OP; %s runs its own FSDP "
                            "and its export writes no such setting (torchtitan's "
                            "fsdp_reshard_after_forward \"never\" does)",
                            tsl_target_name(r->target));
    const char *clash = r->paper_cost             ? "paper_cost (Galvatron's seed formulas)"
                        : r->sdp_nosync && !titan ? "sdp_nosync (torchtitan's FSDP2)"
                        : r->sdp_layer_roots      ? "sdp_layer_roots (fairscale's FSDP)"
                        : r->overlap_param_gather ? "overlap_param_gather (Megatron-FSDP)"
                                                  : NULL;
    if (clash != NULL)
        return tsl_err_set(err,
                           "sdp_keep_weights: torch FSDP's SHARD_GRAD_OP prices the SDP level "
                           "one way, and %s another",
                           clash);
    return 0;
}

/* fp8_param_gather keeps an FP8 plan's weights in FP8 (cost.h knobs): nothing to keep
 * where the request weighs no FP8 plan, nor under a stack Tessel exports no FP8 to
 * (deepspeed, galvatron: tsl_target_fp8_recipe). torchtitan's FP8 all-gather is the
 * tensorwise Float8Linear's (v0.2.x quantize.linear.float8 enable_fsdp_float8_all_gather,
 * which it asserts apart from a recipe_name); its MX linears gather in bf16 (mxfp8.md: "All
 * distributed communication for MXFP8 training is currently done in high precision"). */
static int fp8_param_gather_check(const tsl_request_t *r, tsl_err_t *err)
{
    if (!r->fp8_param_gather)
        return 0;
    const char *off = r->no_fp8 ? "--no-fp8" : r->fp32 ? "--fp32" : r->fp16 ? "--fp16" : NULL;
    if (off != NULL)
        return tsl_err_set(err,
                           "fp8_param_gather: FP8 weights belong to FP8 plans, and %s weighs "
                           "none: drop --fp8-param-gather or %s",
                           off, off);
    if (r->target && tsl_target_fp8_recipe(r->target) == TSL_FP8_NONE)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "fp8_param_gather: %s runs no FP8 recipe (Tessel exports none to "
                            "it), so it keeps no FP8 weights: plan it without "
                            "--fp8-param-gather",
                            tsl_target_name(r->target));
    if (r->target == TSL_TARGET_TORCHTITAN && r->fp8_recipe == TSL_FP8_MXFP8)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "fp8_param_gather: torchtitan: torchao's MX linears all-gather "
                            "their weights in bf16; its FP8 all-gather is the tensorwise "
                            "Float8Linear's (enable_fsdp_float8_all_gather): plan it with "
                            "--fp8-recipe tensorwise or without --fp8-param-gather");
    return 0;
}

/* Whether the request weighs FP8 plans on cluster c: the recipe they would run (its
 * fp8_recipe, else its target's) where every GPU has it. 0 if so; else -1 with why. */
static int fp8_plans_weighed(const tsl_request_t *r, const tsl_cluster_t *c, tsl_err_t *why)
{
    uint32_t recipe = r->fp8_recipe ? r->fp8_recipe : tsl_target_fp8_recipe(r->target);
    return tsl_cluster_fp8_ok(c, recipe, why);
}

/* fp8_param_gather on cluster c: where no FP8 plan is weighed the switch would price
 * nothing. */
static int fp8_param_gather_cluster_ok(const tsl_request_t *r, const tsl_cluster_t *c,
                                       tsl_err_t *err)
{
    tsl_err_t why = {0};
    if (!r->fp8_param_gather || fp8_plans_weighed(r, c, &why) == 0)
        return 0;
    return tsl_err_set(err,
                       "fp8_param_gather: FP8 weights belong to FP8 plans, and no FP8 plan is "
                       "weighed on this cluster: drop --fp8-param-gather (%s)",
                       why.msg);
}

/* module_prec (module_prec.h) runs linears of the FP8 plans at their own precision:
 * Megatron-core overrides a quantized autocast only (override_nonquantized_autocast
 * false), so where the request weighs no FP8 plan it would price nothing, and eval
 * refuses it on a plan without FP8 alike (eval.c given_switches_ok). Only megatron
 * runs it (target_rules.c module_prec_ok refuses every such plan of the others), and
 * not beside fp8_param_gather: Megatron-LM matches the overrides after initialization,
 * so FP8 weights are built for the overridden modules too (export_megatron.c). */
static int module_prec_request_check(const tsl_request_t *r, tsl_err_t *err)
{
    if (!r->module_prec)
        return 0;
    const char *off = r->no_fp8 ? "--no-fp8" : r->fp32 ? "--fp32" : r->fp16 ? "--fp16" : NULL;
    if (off != NULL)
        return tsl_err_set(err,
                           "module_precision: per-module precision overrides FP8 plans' "
                           "modules (Megatron-core's quantized autocast only), and %s weighs "
                           "none: drop --module-precision or %s",
                           off, off);
    if (r->target && r->target != TSL_TARGET_MEGATRON && r->target < TSL_TARGET_COUNT)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "module_precision: %s: linears at their own precision are "
                            "Megatron-core's per-module quant_recipe; Tessel exports them to "
                            "megatron only",
                            tsl_target_name(r->target));
    if (r->fp8_param_gather)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "module_precision with fp8_param_gather: Megatron-LM matches the "
                            "per-module overrides after initialization, so FP8 weights would "
                            "be built for the overridden modules as well, which Tessel does "
                            "not price: drop one");
    return 0;
}

/* module_prec on cluster c: as fp8_param_gather_cluster_ok, the FP8 plans it overrides
 * are weighed only where every GPU has the recipe they would run. */
static int module_prec_cluster_ok(const tsl_request_t *r, const tsl_cluster_t *c, tsl_err_t *err)
{
    tsl_err_t why = {0};
    if (!r->module_prec || fp8_plans_weighed(r, c, &why) == 0)
        return 0;
    return tsl_err_set(err, TSL_MODULE_PREC_NO_FP8_PLAN ": drop --module-precision (%s)", why.msg);
}

/* The precision and overlap switches: values the cost model has, not both ways
 * at once, and what the target's stack accepts. */
int tsl_request_knobs_check(const tsl_request_t *r, tsl_err_t *err)
{
    /* host_op_us, moe_capacity_factor, moe_imbalance: their ranges in the table */
    if (request_bounds_check(r, err) != 0 || fp32_request_check(r, err) != 0)
        return -1;
    if (tsl_grad_width_check("grad_reduce_bytes", r->grad_reduce_bytes, "bf16", err) != 0 ||
        tsl_grad_width_check("grad_buf_bytes", r->grad_buf_bytes, "a 16-bit .grad", err) != 0 ||
        megatron_grad_buf_check(r, err) != 0)
        return -1;
    if (r->overlap_grad_reduce && r->no_overlap_grad_reduce)
        return tsl_err_set(err, "overlap_grad_reduce: both on and off (--overlap-grad-reduce "
                                "and --no-overlap-grad-reduce)");
    if (r->overlap_tp_dgrad && r->no_overlap_tp_dgrad)
        return tsl_err_set(err, "overlap_tp_dgrad: both on and off (--overlap-tp-dgrad and "
                                "--no-overlap-tp-dgrad)");
    if (r->tp_comm_overlap && r->no_seq_par)
        return tsl_err_set(err, "tp_comm_overlap: TransformerEngine's userbuffers overlap the "
                                "sequence-parallel collectives, and the request switches SP off "
                                "(--no-seq-par); Megatron-LM asserts SP with --tp-comm-overlap");
    if (r->tp_comm_overlap && r->target && r->target != TSL_TARGET_MEGATRON)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "tp_comm_overlap: %s: TransformerEngine's userbuffers run under "
                            "Megatron-LM (--tp-comm-overlap) only",
                            tsl_target_name(r->target));
    if (tsl_target_tp_comm_overlap_ok(r->fp8_recipe, r->tp_comm_overlap, err) != 0)
        return -1;
    if (r->async_tp && r->target && r->target != TSL_TARGET_TORCHTITAN)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "async_tp: %s: torch's micro-pipelined TP runs under torchtitan "
                            "(enable_async_tensor_parallel) only",
                            tsl_target_name(r->target));
    if (tsl_async_tp_ok(r->async_tp, r->no_seq_par || r->tp_sync, r->tp_comm_overlap, r->eager,
                        err) != 0)
        return -1;
    if (r->tp_sync && r->target) /* as tsl_target_check refuses such a plan */
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "tp_sync: %s does not synchronise the device around its TP "
                            "collectives (AMP's Megatron-LM v1.1.5 fork does); no target "
                            "launches it",
                            tsl_target_name(r->target));
    if (r->tp_whole_heads && r->target) /* as tsl_target_check refuses such a plan */
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "tp_whole_heads: %s splits the attention heads over the TP group "
                            "(AMP's fork's TransGAN attention keeps them whole); no target "
                            "launches it",
                            tsl_target_name(r->target));
    if (sdp_layer_roots_check(r, err) != 0 || sdp_keep_weights_check(r, err) != 0)
        return -1;
    if (r->tp_sync && r->tp_comm_overlap) /* the fork has no SP for userbuffers to overlap */
        return tsl_err_set(err, TP_SYNC_NO_SP ", and tp_comm_overlap overlaps its collectives");
    if (r->cpu_offload_layers && r->target && r->target != TSL_TARGET_MEGATRON)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "cpu_offload_layers: %s: Tessel exports activation offloading to "
                            "megatron only",
                            tsl_target_name(r->target));
    if ((r->bf16_layers_start || r->bf16_layers_end) && r->fp8_recipe == TSL_FP8_DELAYED)
        return tsl_err_set(err, "bf16_layers_start: blocks kept bf16 under delayed scaling: "
                                "Megatron-LM refuses it (first / last layer in BF16)");
    if (r->cp > 1 && r->no_cp)
        return tsl_err_set(err, "cp: --cp %u with --no-cp", r->cp);
    if (r->cp > 1 && (r->target == TSL_TARGET_DEEPSPEED || r->target == TSL_TARGET_GALVATRON))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "cp: %s: Tessel exports no context parallelism to it (--cp %u); "
                            "megatron runs it",
                            tsl_target_name(r->target), r->cp);
    if (r->cp > 1 && r->target == TSL_TARGET_TORCHTITAN)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "cp: " TORCHTITAN_NO_CP " (--cp %u); plan without --cp, or price a "
                            "v0.2.x job TOML with context_parallel_degree by eval --torchtitan",
                            r->cp);
    if (r->ep > 1 && r->no_ep)
        return tsl_err_set(err, "ep: --ep %u with --no-ep", r->ep);
    if ((r->etp > 1 || r->moe_capacity > 0) && r->target && r->target != TSL_TARGET_MEGATRON)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "%s: %s: Tessel exports expert TP and capacity factors to megatron "
                            "only",
                            r->etp > 1 ? "etp" : "moe_capacity_factor", tsl_target_name(r->target));
    if (tsl_recompute_modules_check(r->recompute_modules, err) != 0)
        return -1;
    if (tsl_loss_impl_ok(r->loss_impl, r->autocast, err) != 0)
        return -1;
    if (tsl_megatron_te_loss_ok(r->target, r->loss_impl, r->autocast, err) != 0)
        return -1;
    if (r->loss_impl && r->target && !tsl_target_loss_runs(r->target, r->loss_impl))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "loss_impl: %s runs its LM loss as %s, not %s (its export would)",
                            tsl_target_name(r->target),
                            tsl_loss_impl_name(tsl_target_loss_impl(r->target)),
                            tsl_loss_impl_name(r->loss_impl));
    if (r->no_fp8 && r->fp8_recipe)
        return tsl_err_set(err, "fp8_recipe: FP8 asked for with FP8 switched off (--no-fp8)");
    if (fp8_param_gather_check(r, err) != 0 || module_prec_request_check(r, err) != 0)
        return -1;
    if (r->vp_group && r->no_interleave)
        return tsl_err_set(err,
                           "vp_group: %u micro-batches per group of the interleaved schedule "
                           "with interleaving switched off (--no-interleave)",
                           r->vp_group);
    if (r->vp_group && r->pp && r->vp_group < r->pp)
        return tsl_err_set(err,
                           "vp_group: %u is below the %u stages; Megatron-LM's interleaved "
                           "schedule takes pp <= N <= micro-batches (schedules.py)",
                           r->vp_group, r->pp);
    if (r->fp8_recipe && tsl_target_fp8_ok(r->target, r->fp8_recipe, err) != 0)
        return -1;
    if (r->moe_fp8_dispatch && (r->no_fp8 || r->moe_bf16_experts))
        return tsl_err_set(err,
                           "moe_fp8_dispatch: the dispatch in FP8 feeds FP8 experts; not "
                           "with %s",
                           r->no_fp8 ? "--no-fp8" : "--moe-bf16-experts");
    if (tsl_fp8_dispatch_ok(r->fp8_recipe, r->moe_fp8_dispatch, err) != 0)
        return -1;
    if (tsl_moe_alltoall_ok(r->moe_alltoall, r->moe_fp8_dispatch, err) != 0)
        return -1;
    /* the back end's name and padding here; that a plan runs the flex dispatcher it names
       in tsl_request_validate (eval's given plan may bring moe_flex: eval.c checks that) */
    if (tsl_moe_flex_ok(r->moe_flex, r->moe_alltoall, err) != 0 ||
        tsl_moe_flex_backend_ok(true, r->moe_flex_backend, r->moe_pad, err) != 0)
        return -1;
    if (stack_switches_target_check(r, err) != 0 || megatron_switches_target_check(r, err) != 0)
        return -1;
    if (tsl_fp8_amax_tp_only_ok(r->fp8_amax_tp_only, r->no_fp8 ? 0 : r->fp8_recipe, err) != 0 ||
        tsl_fp8_dpa_ok(r->fp8_dpa, r->no_fp8 ? 0 : r->fp8_recipe, TSL_FP8_IMPL_TE, err) != 0)
        return -1; /* after the targets': every target refuses the switch itself */
    if (r->target && r->target < TSL_TARGET_COUNT &&
        tsl_target_mtp_ok(r->target, r->mtp_layers, r->pp, r->cp, err) != 0)
        return -1; /* (tsl_search checks it first, before the model's depths are built) */
    tsl_cost_knobs_t k;
    tsl_request_knobs(r, &k);
    if (r->target == TSL_TARGET_MEGATRON && k.overlap_param_gather && k.grad_reduce_exposed)
        return tsl_err_set(err, "megatron: --overlap-param-gather needs --overlap-grad-reduce "
                                "(Megatron-LM validate_args)");
    /* as tsl_target_check refuses every such plan with DP (target_rules.c
     * deepspeed_engine): the search would say "no plan fits" */
    if (r->target == TSL_TARGET_DEEPSPEED && r->overlap_grad_reduce && r->pp > 1)
        return tsl_err_set(err,
                           "overlap_grad_reduce: deepspeed reduces the gradients after the "
                           "pipeline's flush (its engine turns overlap_comm off under a "
                           "PipelineModule); drop --overlap-grad-reduce or --pp %u",
                           r->pp);
    return 0;
}

/* The reserve asked for must leave a budget on the smallest device, and only
 * means something without an explicit budget. */
static int validate_reserve(const tsl_request_t *r, const tsl_cluster_t *c, tsl_err_t *err)
{
    if (r->mem_reserve_bytes == 0)
        return 0;
    if (r->mem_budget_bytes)
        return tsl_err_set(err,
                           "memory_reserve: a reserve only applies to the default budget; "
                           "the memory budget given (%.1f GiB) is used as given",
                           r->mem_budget_bytes / 1073741824.0);
    uint64_t dev_mem = tsl_cluster_min_device_mem(c);
    /* compared against what is left, not summed: a reserve near 2^64 would wrap */
    if (dev_mem < (64ull << 20) || r->mem_reserve_bytes > dev_mem - (64ull << 20))
        return tsl_err_set(err,
                           "memory_reserve: %.2f GiB leaves less than 64M of the %.2f GiB "
                           "of the smallest device",
                           r->mem_reserve_bytes / 1073741824.0, dev_mem / 1073741824.0);
    return 0;
}

static uint32_t gcd_u32(uint32_t a, uint32_t b)
{
    while (b) {
        uint32_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* The greatest common divisor of the MoE layers' expert counts; 0 for a dense
 * model. An EP degree must divide it. */
static uint32_t experts_gcd(const tsl_model_t *m)
{
    uint32_t g = 0;
    for (uint32_t i = 0; i < m->n_layers; i++)
        g = gcd_u32(m->layers[i].experts, g);
    return g;
}

/* The same of the routed experts' FFN width (an expert TP degree divides it); 0 for a
 * dense model. */
static uint32_t expert_width_gcd(const tsl_model_t *m)
{
    uint32_t g = 0;
    for (uint32_t i = 0; i < m->n_layers; i++)
        if (m->layers[i].experts)
            g = gcd_u32(m->layers[i].ffn_hidden, g);
    return g;
}

double tsl_search_max_imbalance(const tsl_model_t *m)
{
    double most = 0.0;
    for (uint32_t i = 0; i < m->n_layers; i++) {
        const tsl_layer_t *l = &m->layers[i];
        if (!l->experts)
            continue;
        double e_k = (double)l->experts / (l->experts_per_tok ? l->experts_per_tok : 1);
        if (most == 0.0 || e_k < most)
            most = e_k;
    }
    return most;
}

int tsl_search_imbalance_check(const tsl_model_t *m, double imbalance, double most, tsl_err_t *err)
{
    if (!(imbalance > most))
        return 0;
    return tsl_err_set(err,
                       "moe_imbalance: %g is above E/k = %g of model %s's MoE layers (every "
                       "token of a rank on one expert)",
                       imbalance, most, m->name);
}

/* The routing knobs: a capacity factor above 0 (padding needs one), an imbalance
 * from 1 to E/k; each only for a model with experts. */
static int validate_routing(const tsl_request_t *r, const tsl_model_t *m, double most,
                            tsl_err_t *err)
{
    tsl_cost_knobs_t k = {
        .moe_capacity = r->moe_capacity, .moe_pad = r->moe_pad, .moe_imbalance = r->moe_imbalance};
    if (tsl_cost_moe_check(&k, err) != 0)
        return -1;
    bool asked = r->moe_capacity > 0 || r->moe_pad || r->moe_imbalance != 0;
    if (asked && most == 0.0)
        return tsl_err_set(err, "%s: model %s has no MoE layers",
                           r->moe_imbalance != 0 ? "moe_imbalance" : "moe_capacity_factor",
                           m->name);
    return tsl_search_imbalance_check(m, r->moe_imbalance, most, err);
}

/* Expert parallelism: a degree that divides the experts (the stacks Tessel
 * exports MoE plans to: tsl_target_model_ok), an expert TP degree that divides
 * their width, and the routing knobs. */
static int validate_moe(const tsl_request_t *r, const tsl_model_t *m, tsl_err_t *err)
{
    uint32_t e = experts_gcd(m), f = expert_width_gcd(m);
    if (r->ep > 1 && !r->no_ep && e == 0)
        return tsl_err_set(err, "ep: --ep %u asked for, but model %s has no MoE layers", r->ep,
                           m->name);
    if (r->ep > 1 && !r->no_ep && e % r->ep != 0)
        return tsl_err_set(err, "ep: %u does not divide the %u experts of model %s's MoE layers",
                           r->ep, e, m->name);
    if (r->etp > 1 && e == 0)
        return tsl_err_set(err, "etp: --etp %u asked for, but model %s has no MoE layers", r->etp,
                           m->name);
    if (r->etp > 1 && f % r->etp != 0)
        return tsl_err_set(err,
                           "etp: %u does not divide the routed experts' FFN width %u of model "
                           "%s (each expert's width is split over its expert-TP ranks)",
                           r->etp, f, m->name);
    if (tsl_moe_fused_mlp_ok(m, r->moe_fused_mlp || r->moe_fp8_dispatch, r->moe_fused_srelu, err) !=
        0)
        return -1;
    return validate_routing(r, m, tsl_search_max_imbalance(m), err);
}

/* Expert TP × EP × expert DP are a stage's ranks (Megatron-LM's MoE parallel
 * folding): with both degrees fixed, their product divides the devices (and a
 * fixed pp's stage). */
static int validate_expert_ranks(const tsl_request_t *r, const tsl_cluster_t *c, tsl_err_t *err)
{
    uint64_t ep = r->ep > 1 && !r->no_ep ? r->ep : 1, etp = r->etp > 1 ? r->etp : 1;
    uint32_t stage = r->pp ? c->n_devices / r->pp : c->n_devices;
    if (etp > 1 && stage % (ep * etp) != 0)
        return tsl_err_set(err,
                           "etp: ep %llu x etp %llu = %llu ranks do not divide the %u devices%s "
                           "(expert TP x EP x expert DP = a stage's ranks)",
                           (unsigned long long)ep, (unsigned long long)etp,
                           (unsigned long long)(ep * etp), stage, r->pp ? " of a stage" : "");
    return 0;
}

/* TP alone over a stage's devices: every layer splits that many ways. */
static bool tp_fills_stage(const tsl_model_t *m, uint32_t stage)
{
    for (uint32_t i = 0; i < m->n_layers; i++)
        if (!tsl_cost_tp_fits(&m->layers[i], stage))
            return false;
    return true;
}

/* deepspeed at ZeRO-0 (--no-zero) with pp fixed over several devices a stage that TP
 * alone cannot fill (--no-tp, or a layer TP cannot split over a stage's devices:
 * DP > 1),
 * where DeepSpeed runs BF16_Optimizer, whose buffer is the model's bf16
 * (target_rules.c deepspeed_bf16_optimizer refuses a 4-byte one): said here, where the
 * search would say only that no plan fits. A stage of TP ranks alone (Megatron-DeepSpeed,
 * cost model 101) has one data-parallel rank, exported at ZeRO-1, any buffer. */
static int validate_ds_bf16_buffer(const tsl_request_t *r, const tsl_model_t *m,
                                   const tsl_cluster_t *c, tsl_err_t *err)
{
    tsl_cost_knobs_t k;
    if (r->target != TSL_TARGET_DEEPSPEED || !r->no_zero || r->pp < 2 || c->n_devices <= r->pp)
        return 0;
    if (!r->no_tp && tp_fills_stage(m, c->n_devices / r->pp))
        return 0;
    tsl_request_knobs(r, &k);
    if (r->fp16 || k.fp32 || tsl_cost_grad_elem_bytes(&k) == 2.0)
        return 0;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "grad_buf_bytes: deepspeed at ZeRO-0 (--no-zero) in %u pipeline stages "
                        "of several GPUs runs DeepSpeed's BF16_Optimizer, whose gradient buffer "
                        "is then the model's bf16 (runtime/engine.py _do_optimizer_sanity_check "
                        "refuses an fp32 grad_accum_dtype at stage 0); drop --grad-buf-bytes 4 "
                        "(and --grad-reduce-bytes 4), or --no-zero",
                        r->pp);
}

/* A fixed CP degree (cost.h tsl_cost_cp_group, tsl_cost_cp_fits): its ranks are
 * data-parallel ranks of each stage, so cp divides a stage's devices (all of them,
 * or devices / pp with pp fixed: tp x cp x dp x ... = a stage), and each rank
 * holds two chunks of every attention layer's sequence (causal load balancing).
 * Said here, where the search would only find that no batch splits. */
static int validate_cp(const tsl_request_t *r, const tsl_model_t *m, const tsl_cluster_t *c,
                       tsl_err_t *err)
{
    if (r->cp <= 1)
        return 0;
    /* a pp that does not divide the devices is refused by its own check */
    bool staged = r->pp > 1 && c->n_devices % r->pp == 0;
    uint32_t stage = staged ? c->n_devices / r->pp : c->n_devices;
    if (stage % r->cp != 0 && staged)
        return tsl_err_set(err,
                           "cp: %u does not divide the %u devices of a stage (%u devices / pp "
                           "%u); the CP ranks are data-parallel ranks of a stage",
                           r->cp, stage, c->n_devices, r->pp);
    if (stage % r->cp != 0)
        return tsl_err_set(err,
                           "cp: %u does not divide the %u devices; the CP ranks are "
                           "data-parallel ranks of a stage",
                           r->cp, c->n_devices);
    for (uint32_t i = 0; i < m->n_layers; i++) {
        const tsl_layer_t *l = &m->layers[i];
        uint32_t chunks = tsl_cost_cp_chunks(l, r->cp); /* tsl_cost_cp_fits's rule */
        if (chunks == 0)
            return tsl_err_set(err,
                               "cp: %u with %s's Mamba layer %u, which Tessel prices "
                               "without context parallelism",
                               r->cp, m->name, i);
        if (l->seq_len % chunks != 0)
            return tsl_err_set(err,
                               "cp: %u does not split layer %u's sequence of %u tokens into %u "
                               "equal chunks (%s)",
                               r->cp, i, l->seq_len, chunks,
                               chunks > r->cp ? "two per CP rank, causal load balancing"
                                              : "one per CP rank");
    }
    return 0;
}

/* The MTP switches (mtp.h): at most TSL_MTP_MAX_DEPTHS depths, not with no_mtp,
 * and explicit depths only under a stack that trains them (target.h). */
static int mtp_request_check(const tsl_request_t *r, tsl_err_t *err)
{
    if (r->mtp_layers > TSL_MTP_MAX_DEPTHS)
        return tsl_err_set(err, "mtp_layers: %u is out of range; give 1..%u, or 0 for the default",
                           r->mtp_layers, TSL_MTP_MAX_DEPTHS);
    if (r->mtp_layers && r->no_mtp)
        return tsl_err_set(err,
                           "mtp_layers: %u with no_mtp set: give the depths or no_mtp, not both",
                           r->mtp_layers);
    if (r->target && r->target < TSL_TARGET_COUNT &&
        tsl_target_mtp_ok(r->target, r->mtp_layers, r->pp, r->cp, err) != 0)
        return -1;
    return 0;
}

int tsl_request_budget_check(const tsl_request_t *r, const tsl_cluster_t *c, tsl_err_t *err)
{
    uint64_t dev_mem = tsl_cluster_max_device_mem(c);
    if (r->mem_budget_bytes > dev_mem)
        return tsl_err_set(err,
                           "memory: the budget of %.1f GiB exceeds the %.1f GiB of the "
                           "largest device",
                           r->mem_budget_bytes / 1073741824.0, dev_mem / 1073741824.0);
    if (r->mem_budget_bytes != 0 && r->mem_budget_bytes < (64ull << 20))
        return tsl_err_set(err, "memory: %llu bytes is too small a budget; give at least 64M",
                           (unsigned long long)r->mem_budget_bytes);
    return 0;
}

int tsl_fp32_ok(bool fp32, bool tf32_off, const tsl_model_t *m, const tsl_cluster_t *c,
                tsl_err_t *err)
{
    if (!fp32)
        return 0;
    for (uint32_t i = 0; i < c->n_gpu_types; i++)
        if (!(tsl_gpu_fp32_peak_as(&c->gpu_types[i], tf32_off) > 0))
            return tsl_err_set(err,
                               tf32_off ? "fp32: the %s has no fp32 figure and the stack runs fp32 "
                                          "matmuls without TF32 (PyTorch's allow_tf32 is off "
                                          "since 1.12); fp32 training is not priced on it: give "
                                          "its gpu_types entry fp32_tflops in a cluster file "
                                          "(docs/cluster-format.md)"
                                        : "fp32: the %s has no fp32 or TF32 figure; fp32 training "
                                          "is not priced on it: give its gpu_types entry "
                                          "fp32_tflops (and tf32_tflops where its fp32 GEMMs run "
                                          "as TF32) in a cluster file (docs/cluster-format.md)",
                               c->gpu_types[i].name);
    for (uint32_t i = 0; i < m->n_layers; i++)
        if (m->layers[i].experts || m->layers[i].kind == TSL_LAYER_MAMBA)
            return tsl_err_set(err,
                               "fp32: layer %u is a %s; fp32 training is priced for dense "
                               "Transformer layers only",
                               i, m->layers[i].experts ? "mixture of experts" : "Mamba mixer");
    return 0;
}

int tsl_tf32_ok(bool tf32, const tsl_cluster_t *c, tsl_err_t *err)
{
    if (!tf32 || !tsl_cluster_tf32_moot(c))
        return 0;
    /* every type the cluster uses, so that a mixed cluster names each GPU at fault */
    char names[8 * 40] = "";
    size_t n = 0;
    for (uint32_t i = 0; i < c->n_gpu_types && n < sizeof names; i++)
        n += (size_t)snprintf(names + n, sizeof names - n, "%s%s",
                              i == 0                    ? ""
                              : i + 1 == c->n_gpu_types ? " and "
                                                        : ", ",
                              c->gpu_types[i].name);
    return tsl_err_set(err,
                       "tf32: no GPU of the cluster has TF32 (the %s run%s fp32 GEMMs at the fp32 "
                       "peak whatever allow_tf32 says; TF32 tensor cores came with Ampere): drop "
                       "--tf32: the fp32 plan prices the same without it",
                       c->n_gpu_types ? names : "cluster", c->n_gpu_types > 1 ? "" : "s");
}

/* The precision and the stack's kernels the request asks for on c, on one set of its
 * knobs: fp32 (tsl_fp32_ok) with TF32 as the request's target runs it (knobs.tf32_off)
 * and tf32 where a GPU has it (tsl_tf32_ok); fp16 as the request asks it or c forces it
 * (tsl_knobs_fp16) under its target (tsl_fp16_ok); Transformer Engine's switches where
 * the target runs without it (target.h tsl_target_unfused_attn_ok: Megatron-LM's local
 * impl on a GPU older than Ampere). */
static int request_precision_ok(const tsl_request_t *r, const tsl_model_t *m,
                                const tsl_cluster_t *c, tsl_err_t *err)
{
    tsl_cost_knobs_t k;
    tsl_request_knobs(r, &k);
    if (tsl_fp32_ok(r->fp32, k.tf32_off, m, c, err) != 0 || tsl_tf32_ok(r->tf32, c, err) != 0)
        return -1;
    tsl_knobs_fp16(&k, c);
    if (tsl_fp16_ok(&k, r->target, c, err) != 0)
        return -1;
    return tsl_target_unfused_attn_ok(r->target, c, &k, err);
}

/* A fixed pp whose last stage would start after the first MTP layer: every MTP
 * depth is built on the head's stage (partition.h tsl_partition_max_cut), so the
 * search has no such cut (search_eval.c pp_allowed) and found no plan at all,
 * which tesseld answered as "nothing fits" after queueing. */
static int pp_mtp_check(const tsl_request_t *r, const tsl_model_t *m, tsl_err_t *err)
{
    uint32_t cut = tsl_partition_max_cut(m);
    if (r->pp < 2 || tsl_mtp_layers(m) == 0 || r->pp <= cut + 1)
        return 0;
    return tsl_err_set(err,
                       "pp: %u stages, but model %s's MTP depths share the head's stage "
                       "(Megatron-LM builds them there): its first MTP layer is layer %u, so at "
                       "most %u stages",
                       r->pp, m->name, cut, cut + 1);
}

int tsl_request_validate(const tsl_request_t *r, const tsl_model_t *m, const tsl_cluster_t *c,
                         tsl_err_t *err)
{
    if (request_bounds_check(r, err) != 0)
        return -1;
    if (tsl_model_validate(m, err) != 0 || tsl_model_check_priced(m, err) != 0 ||
        validate_moe(r, m, err) != 0)
        return -1;
    if (c->n_devices == 0)
        return tsl_err_set(err, "cluster: no devices");
    if (tsl_request_budget_check(r, c, err) != 0)
        return -1;
    if (validate_reserve(r, c, err) != 0 || validate_expert_ranks(r, c, err) != 0 ||
        validate_cp(r, m, c, err) != 0 || validate_ds_bf16_buffer(r, m, c, err) != 0)
        return -1;
    if (r->pp && (c->n_devices % r->pp != 0 || r->pp > m->n_layers || r->pp > TSL_PLAN_MAX_STAGES))
        return tsl_err_set(err,
                           "pp: %u stages must divide the %u devices and be at most the %u "
                           "layers (and %u)",
                           r->pp, c->n_devices, m->n_layers, TSL_PLAN_MAX_STAGES);
    if (r->pp > 1 && r->no_pp)
        return tsl_err_set(err, "pp: %u stages asked with pipelining switched off", r->pp);
    if (pp_mtp_check(r, m, err) != 0)
        return -1;
    if (mtp_request_check(r, err) != 0)
        return -1;
    /* the model as searched already carries its MTP depths (blocks of their own none) */
    if ((r->bf16_layers_start || r->bf16_layers_end) &&
        tsl_model_bf16_layers_ok(m, r->bf16_layers_start, r->bf16_layers_end, err) != 0)
        return -1;
    if (r->target >= TSL_TARGET_COUNT)
        return tsl_err_set(err,
                           "target: %u is not a stack (0 any, 1 megatron, 2 deepspeed, "
                           "3 torchtitan, 4 galvatron)",
                           r->target);
    if (r->target && (tsl_target_model_ok(r->target, m, err) != 0 ||
                      tsl_target_pp_ok(r->target, m, r->pp, err) != 0))
        return -1;
    if (tsl_request_knobs_check(r, err) != 0 ||
        tsl_moe_flex_backend_ok(r->moe_flex, r->moe_flex_backend, r->moe_pad, err) != 0 ||
        tsl_cluster_fp8_ok(c, r->fp8_recipe, err) != 0 ||
        fp8_param_gather_cluster_ok(r, c, err) != 0 || module_prec_cluster_ok(r, c, err) != 0 ||
        request_precision_ok(r, m, c, err) != 0)
        return -1;
    if (tsl_offload_check(r->cpu_offload_layers, m, r->pp, r->recompute_modules != 0, err) != 0)
        return -1;
    if (r->top_k > TSL_SEARCH_MAX_TOPK)
        return tsl_err_set(err, "top_k: %u is above the limit of %u", r->top_k,
                           TSL_SEARCH_MAX_TOPK);
    if (r->no_dp && r->no_sdp && r->no_tp && r->no_pp && c->n_devices > 1)
        return tsl_err_set(err,
                           "dimensions: every parallel dimension is switched off but the "
                           "cluster has %u devices",
                           c->n_devices);
    uint64_t bucket = r->bucket_bytes ? r->bucket_bytes : TSL_LAYERDP_DEFAULT_BUCKET_BYTES;
    uint64_t budget = tsl_request_device_budget(r, tsl_cluster_max_device_mem(c));
    if (budget / bucket > 65536)
        return tsl_err_set(err,
                           "memory: a budget of %.0f GiB per device makes %llu memory buckets "
                           "of %llu MiB, above the 65536 the search takes; give --memory %lluG "
                           "or less",
                           (double)budget / (1u << 30), (unsigned long long)(budget / bucket),
                           (unsigned long long)(bucket >> 20),
                           (unsigned long long)((65536 * bucket) >> 30));
    return 0;
}

void tsl_request_fingerprint(const tsl_request_t *r, const tsl_model_t *m, const tsl_cluster_t *c,
                             char hex[17])
{
    tsl_fp_t fp;
    tsl_fp_init(&fp);
    tsl_fp_model(&fp, m);
    tsl_fp_cluster(&fp, c);
    tsl_fp_str(&fp, "request");
    const uint64_t fields[] = {r->global_batch,
                               r->global_batch ? 0 : tsl_search_max_batch(r, c->n_devices),
                               r->pp,
                               tsl_request_device_budget(r, tsl_cluster_max_device_mem(c)),
                               r->top_k ? r->top_k : TSL_SEARCH_DEFAULT_TOPK,
                               r->max_pp,
                               r->max_micro,
                               r->bucket_bytes,
                               r->no_pp,
                               r->no_tp,
                               r->no_dp,
                               r->no_sdp,
                               r->no_ckpt,
                               r->no_baselines,
                               r->no_placement,
                               r->no_memopt,
                               r->no_slicer,
                               r->no_sublayer,
                               r->no_bi_objective,
                               r->no_interleave,
                               r->unfused_attn,
                               r->no_seq_par,
                               r->no_zero,
                               r->no_selective,
                               r->paper_cost,
                               TSL_COST_MODEL_VERSION};
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
        tsl_fp_u64(&fp, fields[i]);
    if (r->target) /* hashed only when set: unrestricted requests keep their fingerprints */
        tsl_fp_u64(&fp, 0x7a6700u + r->target);
    if (r->no_host_floor) /* likewise */
        tsl_fp_u64(&fp, 0x6f5f00u);
    if (r->host_op_us > 0) { /* likewise */
        tsl_fp_str(&fp, "host_op_us");
        tsl_fp_f64(&fp, r->host_op_us);
    }
    if (r->no_cp || r->cp) /* likewise */
        tsl_fp_u64(&fp, 0x637000000000ull | (uint64_t)r->no_cp << 32 | r->cp);
    if (r->no_ep || r->ep) /* likewise */
        tsl_fp_u64(&fp, 0x657000000000ull | (uint64_t)r->no_ep << 32 | r->ep);
    if (r->etp || r->moe_capacity != 0 || r->moe_pad || r->moe_imbalance != 0) { /* likewise */
        tsl_fp_str(&fp, "moe");
        tsl_fp_u64(&fp, (uint64_t)r->etp << 1 | r->moe_pad);
        tsl_fp_f64(&fp, r->moe_capacity);
        tsl_fp_f64(&fp, r->moe_imbalance);
    }
    if (r->no_fp8 || r->fp8_recipe)
        tsl_fp_u64(&fp, 0x667038000ull | r->no_fp8 << 8 | r->fp8_recipe);
    if (r->fp8_param_gather) /* likewise */
        tsl_fp_u64(&fp, 0x66703870676174ull);
    if (r->moe_bf16_experts || r->moe_fp8_dispatch) /* likewise */
        tsl_fp_u64(&fp,
                   0x6d6f6538ull << 8 | (uint64_t)r->moe_bf16_experts << 1 | r->moe_fp8_dispatch);
    if (r->moe_alltoall) /* likewise */
        tsl_fp_u64(&fp, 0x6d6f6561327461ull);
    if (r->moe_flex) /* likewise */
        tsl_fp_u64(&fp, 0x6d6f65666c6578ull);
    if (r->moe_flex_backend) /* likewise */
        tsl_fp_u64(&fp, 0x666c65786265ull << 8 | r->moe_flex_backend);
    if (r->moe_a2a_overlap) /* likewise */
        tsl_fp_u64(&fp, 0x6d6f6561326f76ull);
    if (r->moe_a2a_wgrad_inline) /* likewise */
        tsl_fp_u64(&fp, 0x6d6f6577676e696cull);
    if (r->ds_grad_bucket) /* likewise */
        tsl_fp_u64(&fp, 0x6473627563ull);
    if (r->tp_whole_heads) /* likewise */
        tsl_fp_u64(&fp, 0x7470776864ull);
    if (r->sdp_nosync) /* likewise */
        tsl_fp_u64(&fp, 0x7364706e73ull);
    if (r->sdp_layer_roots) /* likewise */
        tsl_fp_u64(&fp, 0x7364707274ull);
    if (r->sdp_keep_weights) /* likewise */
        tsl_fp_u64(&fp, 0x73646b77ull);
    if (r->ds_bf16_optimizer) /* likewise */
        tsl_fp_u64(&fp, 0x647362663136ull);
    if (r->launch_blocking) /* likewise */
        tsl_fp_u64(&fp, 0x6c61756e6368ull);
    if (r->ds_wall_clock) /* likewise */
        tsl_fp_u64(&fp, 0x647377636cull);
    if (r->unfused_elementwise) /* likewise */
        tsl_fp_u64(&fp, 0x756e66656cull);
    if (r->ds_zero3_v03) /* likewise */
        tsl_fp_u64(&fp, 0x64737a333033ull);
    if (r->fp8_amax_tp_only) /* likewise */
        tsl_fp_u64(&fp, 0x616d61787470ull);
    if (r->fp8_dpa) /* likewise */
        tsl_fp_u64(&fp, 0x667038647061ull);
    tsl_cost_knobs_t k; /* as priced (the target's, the switches over them); the
                           executor's (all zero) keep the fingerprints from before */
    tsl_request_knobs(r, &k);
    if (r->fp32) { /* likewise; with the rate each GPU type's GEMMs run at (a file sets it;
                      TF32 off under a stack's target, knobs.tf32_off) */
        tsl_fp_u64(&fp, 0x66703332ull);
        for (uint32_t i = 0; i < c->n_gpu_types; i++)
            tsl_fp_f64(&fp, tsl_gpu_fp32_peak_as(&c->gpu_types[i], k.tf32_off));
        if (k.tf32) /* the plan records it (and its exports differ) where the rate does not */
            tsl_fp_u64(&fp, 0x74663332ull);
    }
    if (r->fp16) /* likewise (a cluster without bf16 trains fp16 anyway: its GPUs are in it) */
        tsl_fp_u64(&fp, 0x66703136ull);
    if (r->vp_group) /* likewise */
        tsl_fp_u64(&fp, 0x767000000000ull | r->vp_group);
    if (r->no_zero_bubble) /* likewise; it was left out, and tesseld's store answered a
                              --no-zero-bubble request with the ZBV plan cached without it */
        tsl_fp_u64(&fp, 0x6e6f7a62ull);
    if (r->moe_unfused_permute) /* likewise (left out as no_zero_bubble was) */
        tsl_fp_u64(&fp, 0x6d6f65756e70ull);
    if (r->moe_fused_mlp) /* likewise */
        tsl_fp_u64(&fp, 0x6d6f6566736dull);
    if (r->moe_fused_srelu) /* likewise */
        tsl_fp_u64(&fp, 0x6d6f65737265ull);
    if (k.grad_reduce_bytes || k.no_fp32_master || k.grad_reduce_exposed ||
        k.overlap_param_gather || k.overlap_tp_dgrad || k.autocast || k.eager)
        tsl_fp_u64(&fp,
                   0x6b6e6f6200000000ull | k.grad_reduce_bytes << 8 |
                       (uint64_t)k.no_fp32_master << 16 | (uint64_t)k.grad_reduce_exposed << 17 |
                       (uint64_t)k.overlap_param_gather << 18 | (uint64_t)k.overlap_tp_dgrad << 19 |
                       (uint64_t)k.autocast << 20 | (uint64_t)k.eager << 21);
    if (k.recompute_modules || k.bf16_moments) /* absent: the fingerprints from before */
        tsl_fp_u64(&fp, 0x72636d00000000ull | (uint64_t)k.bf16_moments << 32 | k.recompute_modules);
    if (k.cpu_offload_layers) /* absent: the fingerprints from before */
        tsl_fp_u64(&fp, 0x6370756f00000000ull | k.cpu_offload_layers);
    /* a loss other than the target's, asked for (the target's is in the fingerprint) */
    if (k.loss_impl != tsl_target_loss_impl(r->target < TSL_TARGET_COUNT ? r->target : 0))
        tsl_fp_u64(&fp, 0x6c6f737300ull | k.loss_impl);
    if (k.lazy_grads) /* absent: the fingerprints from before */
        tsl_fp_u64(&fp, 0x6c617a7900ull);
    if (k.unfused_grad_accum) /* absent: the fingerprints from before */
        tsl_fp_u64(&fp, 0x67616363ull);
    if (k.grad_buf_bytes) /* likewise */
        tsl_fp_u64(&fp, 0x6762756600ull | k.grad_buf_bytes);
    if (k.attn_kernel) /* likewise */
        tsl_fp_u64(&fp, 0x61746b6e00ull | k.attn_kernel);
    if (k.legacy_p2p) /* likewise */
        tsl_fp_u64(&fp, 0x6c703270ull);
    if (k.tp_comm_overlap) /* likewise */
        tsl_fp_u64(&fp, 0x7475626full);
    if (k.async_tp) /* likewise */
        tsl_fp_u64(&fp, 0x6173796e6374ull);
    if (r->no_dropout) /* hashed only when set, as the target */
        tsl_fp_u64(&fp, 0x6e6f647200ull);
    if (r->mtp_layers || r->no_mtp) /* likewise (the model's own depths otherwise) */
        tsl_fp_u64(&fp, 0x6d74700000ull | (uint64_t)r->mtp_layers << 1 | r->no_mtp);
    if (r->double_block_fwd) /* likewise */
        tsl_fp_u64(&fp, 0x64626c6600ull);
    if (r->tp_sync) /* likewise; 01: searched without SP, which AMP's fork has not */
        tsl_fp_u64(&fp, 0x7470737901ull);
    if (r->bf16_layers_start || r->bf16_layers_end) /* likewise */
        tsl_fp_u64(&fp, 0x6266313600000000ull | (uint64_t)r->bf16_layers_start << 16 |
                            r->bf16_layers_end);
    if (r->module_prec) /* likewise: the FP8 plans' linears at their own precision */
        tsl_fp_u64(&fp, 0x6d707200000000ull | r->module_prec);
    tsl_fp_hex(&fp, hex);
}

/* ---- public entry ---- */

/* Whether p lies in Tessel's space under the request's switches (a baseline runs
 * as its system does, whatever the switches say). */
static bool plan_in_request(const tsl_plan_t *p, const tsl_request_t *r)
{
    if ((r->pp && p->pp != r->pp) || (r->no_pp && p->pp > 1) || (r->max_pp && p->pp > r->max_pp) ||
        (r->max_micro && p->n_micro > r->max_micro) || (r->no_interleave && p->interleave > 1) ||
        (r->no_zero_bubble && p->schedule))
        return false;
    const bool off[TSL_DIM_COUNT] = {
        [TSL_DIM_DP] = r->no_dp, [TSL_DIM_SDP] = r->no_sdp, [TSL_DIM_TP] = r->no_tp};
    for (uint32_t l = 0; l < p->n_layers && l < TSL_PLAN_MAX_LAYERS; l++) {
        const tsl_strategy_t *s = &p->layer[l];
        if (s->ckpt && r->no_ckpt)
            return false;
        for (uint32_t k = 0; k < s->n_levels; k++)
            if (s->dim[k] < TSL_DIM_COUNT && off[s->dim[k]])
                return false;
    }
    return true;
}

/* Tessel's space contains every baseline's, but its search visits fewer batch and
 * micro-batch combinations than a baseline's rule may; a baseline plan that beats
 * the best found is itself a Tessel plan, and is taken when the request's
 * switches allow it. */
static void adopt_baselines(tsl_search_result_t *res, const tsl_model_t *m, const tsl_request_t *r,
                            tsl_target_view_t *view)
{
    uint32_t k = r->top_k ? r->top_k : TSL_SEARCH_DEFAULT_TOPK;
    for (int b = 0; b < TSL_BASELINE_COUNT; b++) {
        tsl_plan_t *p = &res->baseline[b];
        if (!p->valid || !tsl_plan_better(p, &res->best) || !plan_in_request(p, r) ||
            tsl_target_check(r->target, p, m, view, NULL) != 0)
            continue;
        res->best = *p;
        snprintf(res->best.label, sizeof(res->best.label), "tessel");
        tsl_top_offer(res->top, k, &res->n_top, &res->best);
    }
}

static bool same_config(const tsl_plan_t *a, const tsl_plan_t *b)
{
    return a->global_batch == b->global_batch && a->pp == b->pp && a->n_micro == b->n_micro;
}

/* The candidates the refinement needs whatever top_k shows: the engine's
 * TSL_SEARCH_MAX_TOPK best and the best plan of every PP degree, merged into
 * top[0..*n) (capacity TSL_SEARCH_MAX_TOPK), each replacing the entry of its
 * configuration; each costed again on its own partition with every schedule that
 * could beat it (tsl_search_reprice: the sweep's bar skipped those that could not beat
 * its best), and re-balanced unless the request says no_bi_objective. Then each
 * is re-partitioned at sub-layer granularity where the request allows it: every
 * candidate, not the best alone, for a configuration the layer-granular search
 * ranks below the best can overtake it there (GPT3-15B on 8 A100s, batch 16:
 * pp 2 at 1.9144 s against pp 1's 1.9027 s, 1.8947 s with its stages cut inside
 * a layer). The best plan found is among them, so top[0] is the best refined
 * plan. */
static void refine(tsl_engine_t *e, tsl_plan_t *top, uint32_t *n, double floor)
{
    const tsl_request_t *r = e->req;
    const tsl_plan_t *cand = e->per_pp;
    tsl_plan_t *work = malloc((TSL_SEARCH_MAX_TOPK + e->n_groups) * sizeof(*work));
    if (work == NULL)
        return; /* the engine's plans stand, unrefined */
    uint32_t w = *n;
    memcpy(work, top, w * sizeof(*work));
    for (uint32_t g = 0; g < e->n_groups; g++) {
        bool merged = !cand[g].valid;
        for (uint32_t i = 0; i < *n && !merged; i++)
            merged = same_config(&top[i], &cand[g]);
        if (!merged)
            work[w++] = cand[g];
    }
    tsl_search_reprice(e, work, w);
    if (!r->no_bi_objective)
        tsl_search_rebalance(e, work, w);
    /* no stack takes stages cut inside a layer (as Tessel exports them): a
     * target skips the step */
    tsl_top_sort(work, w); /* best first: the sub-layer step's bar rises soonest */
    if (!r->no_sublayer && !r->target && !tsl_search_cancelled(e->hooks)) {
        /* e's run is done: its memos would sit beside the step's (whose engine
         * solves in e's DP workspace, tsl_search_sublayer) */
        tsl_engine_drop_memos(e);
        tsl_search_sublayer(e, work, w, floor);
        tsl_top_sort(work, w);
    }
    *n = w < TSL_SEARCH_MAX_TOPK ? w : TSL_SEARCH_MAX_TOPK;
    memcpy(top, work, *n * sizeof(*top));
    free(work);
}

/* One precision's search on engine e (over cluster c, nodes already in the order
 * the engine was given, its knobs set by tsl_engine_rerun): the plans into res. */
static int search_precision(tsl_engine_t *e, const tsl_request_t *r, tsl_search_result_t *res,
                            double lo, double hi, tsl_err_t *err)
{
    /* the engine keeps the most alternatives there may be shown: what it passes on
     * to the refinement must not depend on how many are */
    uint32_t k = r->top_k ? r->top_k : TSL_SEARCH_DEFAULT_TOPK, cap = TSL_SEARCH_MAX_TOPK;
    tsl_plan_t *top = malloc(cap * sizeof(*top)), *best = malloc(sizeof(*best));
    e->per_pp = calloc(e->n_groups ? e->n_groups : 1, sizeof(*e->per_pp));
    uint32_t n_top = 0;
    int rc = TSL_SEARCH_ERR;
    if (top == NULL || best == NULL || e->per_pp == NULL)
        tsl_err_setc(err, TSL_E_NOMEM, "search: out of memory");
    else
        rc = tsl_engine_run(e, best, top, cap, &n_top, lo, hi, err);
    tsl_plan_t *base = &res->baseline[TSL_BASELINE_GALVATRON_BASE];
    if (rc == TSL_SEARCH_OK && (!base->valid || tsl_plan_better(best, base))) {
        *base = *best; /* before re-balancing: Galvatron-Base */
        snprintf(base->label, sizeof(base->label), "galvatron-base");
    }
    if (rc == TSL_SEARCH_OK) {
        refine(e, top, &n_top, res->best.valid ? res->best.samples_per_s : 0);
        *best = top[0];
    }
    tsl_search_add_stats(&res->stats, &e->stats);
    free(e->per_pp);
    e->per_pp = NULL;
    if (rc == TSL_SEARCH_OK) {
        if (!res->best.valid || tsl_plan_better(best, &res->best))
            res->best = *best;
        for (uint32_t i = 0; i < n_top && i < k; i++)
            tsl_top_offer(res->top, k, &res->n_top, &top[i]);
    }
    free(top);
    free(best);
    return rc;
}

/* The space every engine run of the search searches: Tessel's for r, where target
 * megatron's SDP is Megatron-FSDP, which it does not export for a MoE model
 * (target_rules.c megatron_fsdp_ok): those trees are not enumerated at all. */
static tsl_space_t search_space(const tsl_model_t *m, const tsl_request_t *r)
{
    tsl_space_t space = tsl_space_tessel(r);
    if (r->target == TSL_TARGET_MEGATRON && tsl_model_moe_layers(m))
        space.opts.allow_sdp = false;
    return space;
}

/* One placement (the engine over cluster c, nodes already in `order`; attention
 * meeting the other CP ranks by cp_comm where the request's CP degree is above 1):
 * bf16, and where every GPU has FP8 and the request and its target allow it, the
 * same space again with the blocks' linears in FP8 (docs/cost-model.md "FP8").
 * Both precisions' plans meet in one top-k: each configuration keeps the faster
 * that fits. A request's fp8_recipe searches FP8 alone (its knobs). The two runs
 * share one engine: the layouts' moves and the collective figures it keeps do not
 * depend on the precision (tsl_engine_rerun makes the layer costs afresh). */
static int search_placement(const tsl_model_t *m, const tsl_cluster_t *c, const uint16_t *order,
                            const tsl_request_t *r, uint32_t cp_comm,
                            const tsl_search_hooks_t *hooks, tsl_cost_walks_t *walks,
                            tsl_search_result_t *res, double lo, double hi, tsl_err_t *err)
{
    uint32_t fp8 = tsl_target_fp8_recipe(r->target);
    bool both = !(r->no_fp8 || r->fp8_recipe || fp8 == TSL_FP8_NONE ||
                  tsl_cluster_fp8_ok(c, fp8, NULL) != 0);
    tsl_space_t space = search_space(m, r);
    tsl_engine_t e;
    if (tsl_engine_init(&e, m, c, r, hooks, &space, err) != 0) {
        tsl_engine_free(&e);
        return TSL_SEARCH_ERR;
    }
    e.node_order = order;
    tsl_engine_share_walks(&e, walks);                     /* where c is the search's cluster */
    if (tsl_fp8_impl_ok(fp8, e.knobs.fp8_impl, NULL) != 0) /* torchao runs no delayed */
        both = false;
    if (e.knobs.fp32 || e.knobs.fp16) /* FP8 is a way to run 16-bit bf16 GEMMs: an fp32
                                           or fp16 plan never weighs it (tsl_knobs_fp16) */
        both = false;
    tsl_cost_knobs_t k = e.knobs;
    if (k.cp > 1) /* the degree came from r->cp (tsl_request_knobs) */
        k.cp_comm = cp_comm;
    tsl_engine_rerun(&e, &k);
    double mid = both ? (lo + hi) / 2 : hi;
    int rc = search_precision(&e, r, res, lo, mid, err);
    if (!both || rc == TSL_SEARCH_CANCELLED) {
        tsl_engine_free(&e);
        return rc;
    }
    tsl_err_t ferr = {0};
    k.fp8 = fp8;
    tsl_engine_rerun(&e, &k);
    int frc = search_precision(&e, r, res, mid, hi, &ferr);
    tsl_engine_free(&e);
    if (frc == TSL_SEARCH_CANCELLED || (frc == TSL_SEARCH_OK && rc != TSL_SEARCH_OK)) {
        *err = ferr;
        return frc;
    }
    return rc;
}

/* Every placement worth trying (one on homogeneous clusters); the best wins. */
static int search_placements(const tsl_model_t *m, const tsl_cluster_t *c, const tsl_request_t *r,
                             uint32_t cp_comm, const tsl_search_hooks_t *hooks,
                             tsl_cost_walks_t *walks, tsl_search_result_t *res, double hi,
                             tsl_err_t *err)
{
    static const uint32_t max_orders = 4;
    bool place = !r->no_placement && c->n_nodes > 1 && c->n_nodes <= TSL_PLAN_MAX_ORDER_NODES &&
                 !tsl_cluster_is_homogeneous(c);
    if (!place)
        return search_placement(m, c, NULL, r, cp_comm, hooks, walks, res, 0.0, hi, err);
    uint16_t(*orders)[TSL_PLAN_MAX_ORDER_NODES] = malloc(max_orders * sizeof(*orders));
    if (orders == NULL)
        return tsl_err_setc(err, TSL_E_NOMEM, "search: out of memory");
    uint32_t n = tsl_placement_orders(c, orders, max_orders);
    int rc = TSL_SEARCH_ERR, any_ok = 0;
    for (uint32_t i = 0; i < n; i++) {
        tsl_cluster_t pc;
        if (tsl_cluster_permute(c, orders[i], &pc, err) != 0)
            break;
        bool identity = true;
        for (uint32_t k = 0; k < c->n_nodes && identity; k++)
            identity = orders[i][k] == k;
        rc = search_placement(m, &pc, identity ? NULL : orders[i], r, cp_comm, hooks, walks, res,
                              hi * i / n, hi * (i + 1) / n, err);
        tsl_cluster_free(&pc);
        if (rc == TSL_SEARCH_CANCELLED)
            break;
        any_ok |= rc == TSL_SEARCH_OK;
    }
    free(orders);
    if (rc == TSL_SEARCH_CANCELLED)
        return rc;
    return any_ok ? TSL_SEARCH_OK : TSL_SEARCH_ERR;
}

/* ---- context parallelism (docs/search-space.md "Context parallelism") ---- */

/* Whether the search weighs CP degrees above 1 under target t. DeepSpeed and
 * Galvatron: Tessel exports no CP to them. torchtitan: its two exports run two
 * different CPs — v0.2.x's job TOML torch's ring attention (context_parallel_rotate_method,
 * priced p2p), main's Python configuration only FlexAttention over K/V all-gathered at
 * the attention's local_map, held to the backward, dK/dV reduce-scattered
 * (models/common/decoder_sharding.py set_gqa_inner_attention_local_map at b5bcd76c6;
 * the rotation removed in 8e5554449), which Tessel does not price — so no CP plan
 * exports to both, and a plan searched for a stack exports to each of its forms
 * (target.h). The target's predicate still admits ring attention: the TOML export
 * writes it for a plan priced so (eval, Tessel's own space). */
static bool target_weighs_cp(uint32_t t)
{
    return t != TSL_TARGET_DEEPSPEED && t != TSL_TARGET_GALVATRON && t != TSL_TARGET_TORCHTITAN;
}

/* The CP degrees the search tries for a request: 1, and from sequences of
 * TSL_SEARCH_CP_MIN_SEQ tokens the divisors c ≤ TSL_SEARCH_CP_MAX of the device
 * count with 2·c | s (two chunks per rank) and s / c ≥ TSL_SEARCH_CP_MIN_TOKENS;
 * below TSL_SEARCH_CP_ALL_SEQ tokens c = 2 alone (what the presets run there).
 * Only 1 under --no-cp, for the stacks without CP (deepspeed, galvatron), under
 * torchtitan (no CP plan exports to both its forms: the note at the top) and for
 * a 1-stack baseline's cost mode (paper_cost); only r->cp when one is fixed. */
static uint32_t cp_degrees(const tsl_model_t *m, const tsl_cluster_t *c, const tsl_request_t *r,
                           uint32_t *out)
{
    uint32_t s = m->tokens_per_sample, n = 0;
    out[n++] = 1;
    if (r->no_cp || r->cp == 1 || r->paper_cost || !target_weighs_cp(r->target))
        return n;
    if (r->cp > 1) {
        out[0] = r->cp;
        return n;
    }
    if (s < TSL_SEARCH_CP_MIN_SEQ)
        return n;
    uint32_t top = s < TSL_SEARCH_CP_ALL_SEQ ? 2 : TSL_SEARCH_CP_MAX;
    for (uint32_t d = 2; d <= top && n < TSL_SEARCH_CP_MAX; d++)
        if (c->n_devices % d == 0 && s % (2 * d) == 0 && s / d >= TSL_SEARCH_CP_MIN_TOKENS)
            out[n++] = d;
    return n;
}

/* What the plan at CP degree 1 came to, for the reason. */
typedef struct cp_base {
    bool searched, valid;
    double tokens_per_s;
    uint64_t peak_bytes, budget_bytes;
    char why[160]; /* the error when no plan fitted */
} cp_base_t;

static void cp_reason(tsl_search_result_t *res, const tsl_request_t *r, const tsl_model_t *m,
                      uint32_t n_degrees, const cp_base_t *b)
{
    const tsl_plan_t *p = &res->best;
    uint32_t cp = p->cp > 1 ? p->cp : 1;
    const char *comm = cp > 1 ? tsl_cp_comm_name(p->cp_comm) : NULL;
    char head[48];
    snprintf(head, sizeof head, "cp %u%s%s%s", cp, comm ? " (" : "", comm ? comm : "",
             comm ? ")" : "");
    if (r->cp > 1)
        snprintf(res->cp_why, sizeof res->cp_why, "%s as asked (--cp %u)", head, r->cp);
    else if (r->target == TSL_TARGET_TORCHTITAN && !r->no_cp && r->cp != 1 && !r->paper_cost &&
             m->tokens_per_sample >= TSL_SEARCH_CP_MIN_SEQ)
        snprintf(res->cp_why, sizeof res->cp_why, "cp 1: not searched: %s", TORCHTITAN_NO_CP_SHORT);
    else if (r->no_cp || r->cp == 1 || n_degrees <= 1)
        res->cp_why[0] = '\0'; /* not searched: nothing to say */
    else if (cp > 1 && !b->valid)
        snprintf(res->cp_why, sizeof res->cp_why,
                 "%s: at cp 1 no plan fits %.1f GiB per device (%u-token sequences)", head,
                 (double)p->budget_bytes / 1073741824.0, m->tokens_per_sample);
    else if (cp > 1)
        snprintf(res->cp_why, sizeof res->cp_why,
                 "%s: %.0f tokens/s against %.0f at cp 1 (%.1f GiB peak there)", head,
                 p->tokens_per_s, b->tokens_per_s, (double)b->peak_bytes / 1073741824.0);
    else
        snprintf(res->cp_why, sizeof res->cp_why,
                 "%s: no CP degree tried (up to %u) was faster (%.1f GiB peak per device)", head,
                 TSL_SEARCH_CP_MAX, (double)p->peak_bytes / 1073741824.0);
}

/* The error a sweep over degrees (CP, EP) that found no plan reports: the first
 * degree's, unless a later one's is NOFIT. A degree with plans, none of which fit,
 * makes the request a valid one that nothing fits (tesseld: OUT_OF_RANGE, and H3T's
 * memopt runs), where another degree's batch no strategy split (TSL_E_INVALID,
 * search_engine.c no_fit_error) would call it a bad request. */
static void keep_failure(tsl_err_t *kept, const tsl_err_t *e)
{
    if (kept->msg[0] == '\0' ||
        (tsl_err_code(kept) != TSL_E_NOFIT && tsl_err_code(e) == TSL_E_NOFIT))
        *kept = *e;
}

/* The engine over every CP degree (and, above 1, each exchange: p2p and Ulysses
 * a2a; allgather moves the bytes of p2p with none hidden, so it never wins and is
 * priced by eval only; the targets that weigh CP, Tessel's own space and megatron,
 * run both). Fills res->cp_why. */
static int search_cp(const tsl_model_t *m, const tsl_cluster_t *c, const tsl_request_t *r,
                     const tsl_search_hooks_t *hooks, tsl_cost_walks_t *walks,
                     tsl_search_result_t *res, double hi, tsl_err_t *err)
{
    uint32_t deg[TSL_SEARCH_CP_MAX + 1], n = cp_degrees(m, c, r, deg);
    static const uint32_t comms[] = {TSL_CP_P2P, TSL_CP_A2A};
    uint32_t n_comm = 2;
    cp_base_t base = {0};
    tsl_err_t first = {0};
    int any_ok = 0, rc = TSL_SEARCH_ERR;
    for (uint32_t i = 0; i < n; i++) {
        tsl_request_t rq = *r;
        rq.cp = deg[i];
        for (uint32_t k = 0; k < (deg[i] > 1 ? n_comm : 1); k++) {
            tsl_err_t e = {0};
            rc = search_placements(m, c, &rq, comms[k], hooks, walks, res, hi, &e);
            if (rc == TSL_SEARCH_CANCELLED) {
                *err = e;
                return rc;
            }
            any_ok |= rc == TSL_SEARCH_OK;
            if (rc != TSL_SEARCH_OK)
                keep_failure(&first, &e);
            if (deg[i] == 1) {
                base.searched = true;
                base.valid = rc == TSL_SEARCH_OK && res->best.valid;
                base.tokens_per_s = res->best.tokens_per_s;
                base.peak_bytes = res->best.peak_bytes;
            }
        }
    }
    if (!any_ok) {
        *err = first;
        return TSL_SEARCH_ERR;
    }
    cp_reason(res, r, m, n, &base);
    return TSL_SEARCH_OK;
}

/* ---- expert parallelism (docs/search-space.md "Expert parallelism") ---- */

/* The EP degrees the search tries: 1, and for a model with MoE layers the
 * divisors e ≤ TSL_SEARCH_EP_MAX of the experts (of every MoE layer) that divide
 * the device count (a stage block whose size e does not divide prices its MoE
 * layers infeasible: tsl_cost_ep_fits). Only 1 under --no-ep and for a dense
 * model; only r->ep when one is fixed. */
static uint32_t ep_degrees(const tsl_model_t *m, const tsl_cluster_t *c, const tsl_request_t *r,
                           uint32_t *out)
{
    uint32_t e = experts_gcd(m), n = 0;
    out[n++] = 1;
    if (e == 0 || r->no_ep || r->ep == 1 || r->paper_cost)
        return n;
    if (r->ep > 1) {
        out[0] = r->ep;
        return n;
    }
    for (uint32_t d = 2; d <= TSL_SEARCH_EP_MAX && d <= e; d++)
        if (e % d == 0 && c->n_devices % d == 0)
            out[n++] = d;
    return n;
}

/* GPUs of the smallest NVLink domain: a node, or nvl_domain_nodes of them. */
static uint32_t nvl_domain_gpus(const tsl_cluster_t *c)
{
    uint32_t g = UINT32_MAX;
    for (uint32_t i = 0; i < c->n_nodes; i++)
        if (c->nodes[i].n_gpus < g)
            g = c->nodes[i].n_gpus;
    return (g == UINT32_MAX ? 1 : g) * (c->nvl_domain_nodes > 1 ? c->nvl_domain_nodes : 1);
}

/* The expert TP degrees the search tries beside EP degree ep: r->etp when fixed;
 * else 1, and where EP cannot split the experts further (ep is the experts'
 * count, or fixed by the request) the divisors d ≤ TSL_SEARCH_ETP_MAX of their
 * width with ep·d dividing the devices and within one NVLink domain. Elsewhere a
 * larger EP degree shards the experts as far with whole-width GEMMs and no gather
 * of the routed tokens, and an expert TP group across the network gathers every
 * layer's routed tokens over it (Megatron-Core's MoE guide: "prefer EP over TP for
 * the expert layer", "ensure the EPxTP communication within the NVLink domain").
 * Only 1 for a dense model, --paper-cost and a target other than megatron. */
static uint32_t etp_degrees(const tsl_model_t *m, const tsl_cluster_t *c, const tsl_request_t *r,
                            uint32_t ep, uint32_t *out)
{
    uint32_t e = experts_gcd(m), f = expert_width_gcd(m), n = 0, dom = nvl_domain_gpus(c);
    out[n++] = r->etp ? r->etp : 1;
    if (r->etp || e == 0 || r->paper_cost || (r->target && r->target != TSL_TARGET_MEGATRON) ||
        (ep != e && !(r->ep > 1)))
        return n;
    for (uint32_t d = 2; d <= TSL_SEARCH_ETP_MAX && (uint64_t)ep * d <= dom; d++)
        if (f % d == 0 && c->n_devices % ((uint64_t)ep * d) == 0)
            out[n++] = d;
    return n;
}

/* What the search_ep loop keeps of the best plan at ep 1, for the reason. */
typedef struct ep_base {
    bool valid;
    double tokens_per_s;
} ep_base_t;

static void ep_reason(tsl_search_result_t *res, const tsl_request_t *r, uint32_t n_tried,
                      uint32_t top_ep, const ep_base_t *b)
{
    uint32_t ep = res->best.ep > 1 ? res->best.ep : 1, etp = res->best.etp > 1 ? res->best.etp : 1;
    char head[40];
    snprintf(head, sizeof head, etp > 1 ? "ep %u etp %u" : "ep %u", ep, etp);
    if (r->ep > 1 && r->etp > 1)
        snprintf(res->ep_why, sizeof res->ep_why, "%s as asked (--ep %u --etp %u)", head, r->ep,
                 r->etp);
    else if (r->ep > 1)
        snprintf(res->ep_why, sizeof res->ep_why, "%s as asked (--ep %u)", head, r->ep);
    else if (n_tried <= 1)
        res->ep_why[0] = '\0';
    else if ((ep > 1 || etp > 1) && !b->valid)
        snprintf(res->ep_why, sizeof res->ep_why, "%s: at ep 1 no plan fits", head);
    else if (ep > 1 || etp > 1)
        snprintf(res->ep_why, sizeof res->ep_why, "%s: %.0f tokens/s against %.0f at ep 1", head,
                 res->best.tokens_per_s, b->tokens_per_s);
    else
        snprintf(res->ep_why, sizeof res->ep_why, "ep 1: no EP degree tried (up to %u) was faster",
                 top_ep);
}

/* search_cp at every EP degree and the expert TP degrees beside it; each pair's
 * plans meet in one result (the faster that fits wins). Fills res->ep_why. */
static int search_ep(const tsl_model_t *m, const tsl_cluster_t *c, const tsl_request_t *r,
                     const tsl_search_hooks_t *hooks, tsl_cost_walks_t *walks,
                     tsl_search_result_t *res, double hi, tsl_err_t *err)
{
    uint32_t deg[TSL_SEARCH_EP_MAX + 1], n = ep_degrees(m, c, r, deg), tried = 0;
    uint32_t tdeg[TSL_SEARCH_ETP_MAX + 1];
    tsl_err_t first = {0};
    bool any_ok = false;
    ep_base_t base = {0};
    for (uint32_t i = 0; i < n; i++) {
        uint32_t nt = etp_degrees(m, c, r, deg[i], tdeg);
        for (uint32_t j = 0; j < nt; j++, tried++) {
            tsl_request_t rq = *r;
            rq.ep = deg[i];
            rq.etp = tdeg[j];
            tsl_err_t e = {0};
            int rc = search_cp(m, c, &rq, hooks, walks, res, hi, &e);
            if (rc == TSL_SEARCH_CANCELLED) {
                *err = e;
                return rc;
            }
            any_ok |= rc == TSL_SEARCH_OK;
            if (rc != TSL_SEARCH_OK)
                keep_failure(&first, &e);
            if (deg[i] == 1 && j == 0 && rc == TSL_SEARCH_OK && res->best.valid) {
                base.valid = true;
                base.tokens_per_s = res->best.tokens_per_s;
            }
        }
    }
    if (!any_ok) {
        *err = first;
        return TSL_SEARCH_ERR;
    }
    ep_reason(res, r, tried, deg[n - 1], &base);
    return TSL_SEARCH_OK;
}

static int search_model(const tsl_model_t *m, const tsl_cluster_t *c, const tsl_request_t *r,
                        const tsl_search_hooks_t *hooks, tsl_search_result_t *res, tsl_err_t *err)
{
    double split = r->no_baselines ? 1.0 : 0.6;
    /* one table of topology walks for every degree's engine: their groups' walks
     * are the same (NULL out of memory: each engine keeps its own) */
    tsl_cost_walks_t *walks = tsl_cost_walks_new(c);
    int rc = search_ep(m, c, r, hooks, walks, res, split, err);
    if (rc == TSL_SEARCH_OK && !r->no_bi_objective && !tsl_search_cancelled(hooks)) {
        /* the plans shown improved as each run improved its fastest */
        tsl_space_t space = search_space(m, r);
        tsl_search_hooks_t quiet = {.cancel = hooks ? hooks->cancel : NULL,
                                    .stack = hooks ? hooks->stack : NULL};
        tsl_search_step_t step = {
            .m = m, .c = c, .r = r, .sp = &space, .hooks = &quiet, .walks = walks};
        tsl_search_improve_top(&step, res);
    }
    /* no stack takes H3T's per-layer switches: a target skips the step (and the
     * sub-layer split, refine) */
    if (rc == TSL_SEARCH_ERR && !r->no_memopt && !r->target && tsl_err_code(err) == TSL_E_NOFIT) {
        /* too tight for Galvatron's space: H3T's switches and offloading */
        if (hooks && hooks->progress)
            hooks->progress(hooks->progress_ud, split, "memopt");
        rc = tsl_search_memopt(m, c, r, hooks, res, err);
    }
    if (rc == TSL_SEARCH_OK && !r->no_baselines && !tsl_search_cancelled(hooks))
        tsl_search_baselines(m, c, r, hooks, walks, res);
    tsl_cost_walks_free(walks);
    /* the steps after the engine return early when cancelled: their results are
     * partial */
    if (rc == TSL_SEARCH_OK && tsl_search_cancelled(hooks)) {
        tsl_err_setc(err, TSL_E_CANCELLED, "search: cancelled");
        rc = TSL_SEARCH_CANCELLED;
    }
    if (rc != TSL_SEARCH_OK)
        return rc;
    tsl_target_view_t *view = r->target ? malloc(sizeof(*view)) : NULL;
    if (r->target && view == NULL)
        return tsl_err_setc(err, TSL_E_NOMEM, "search: out of memory");
    adopt_baselines(res, m, r, view);
    free(view);
    tsl_search_simulate(&res->best, !r->no_slicer, r->paper_cost);
    for (uint32_t i = 0; i < res->n_top; i++)
        tsl_search_simulate(&res->top[i], !r->no_slicer, r->paper_cost);
    for (int b = 0; b < TSL_BASELINE_COUNT; b++)
        tsl_search_simulate(&res->baseline[b], false, r->paper_cost);
    if (hooks && hooks->progress)
        hooks->progress(hooks->progress_ud, 1.0, "done");
    return TSL_SEARCH_OK;
}

/* A target's search, then the same request without it: what keeping to the
 * stack costs. The second search reports no progress (the first did). */
static int search_target(const tsl_model_t *m, const tsl_cluster_t *c, const tsl_request_t *r,
                         const tsl_search_hooks_t *hooks, tsl_search_result_t *res, tsl_err_t *err)
{
    int rc = search_model(m, c, r, hooks, res, err);
    if (rc == TSL_SEARCH_ERR && tsl_err_code(err) == TSL_E_NOFIT) {
        char why[sizeof(err->msg)];
        snprintf(why, sizeof why, "%s", err->msg);
        tsl_err_setc(err, TSL_E_NOFIT, "target %s: %s", tsl_target_name(r->target), why);
    }
    if (rc != TSL_SEARCH_OK)
        return rc;
    tsl_request_t free_r = *r;
    free_r.target = TSL_TARGET_ANY;
    tsl_search_hooks_t quiet = {.cancel = hooks ? hooks->cancel : NULL,
                                .stack = hooks ? hooks->stack : NULL};
    tsl_search_result_t *other = malloc(sizeof(*other));
    if (other == NULL)
        return tsl_err_setc(err, TSL_E_NOMEM, "search: out of memory");
    memset(other, 0, sizeof(*other));
    tsl_err_t ignored = {0};
    int orc = search_model(m, c, &free_r, &quiet, other, &ignored);
    if (orc == TSL_SEARCH_OK) {
        /* The target's plan is in the unrestricted space too: the search is a
         * heuristic one (partitions, memory buckets), and a smaller space can
         * land on a plan the larger one passed by; the best unrestricted plan
         * is then at least the target's. */
        const tsl_plan_t *b =
            other->best.samples_per_s >= res->best.samples_per_s ? &other->best : &res->best;
        res->unrestricted_valid = true;
        res->unrestricted_samples_per_s = b->samples_per_s;
        res->unrestricted_iter_time_s = b->iter_time_s;
    }
    tsl_search_add_stats(&res->stats, &other->stats);
    free(other);
    if (orc != TSL_SEARCH_CANCELLED)
        return TSL_SEARCH_OK;
    tsl_err_setc(err, TSL_E_CANCELLED, "search: cancelled");
    return TSL_SEARCH_CANCELLED;
}

/* With or without a target. */
static int search_request(const tsl_model_t *m, const tsl_cluster_t *c, const tsl_request_t *r,
                          const tsl_search_hooks_t *hooks, tsl_search_result_t *res, tsl_err_t *err)
{
    return r->target ? search_target(m, c, r, hooks, res, err)
                     : search_model(m, c, r, hooks, res, err);
}

tsl_model_switches_t tsl_request_model_switches(const tsl_request_t *r)
{
    return (tsl_model_switches_t){.unfused_attn = r->unfused_attn,
                                  .no_dropout = r->no_dropout,
                                  .fp32 = r->fp32,
                                  .mtp_layers = r->mtp_layers,
                                  .no_mtp = r->no_mtp,
                                  .target = r->target,
                                  .bf16_layers_start = r->bf16_layers_start,
                                  .bf16_layers_end = r->bf16_layers_end};
}

/* The search's memos and tables are freed when it ends (tens of MB on a 100k-GPU
 * cluster: the layer-cost and DP memos up to TSL_SEARCH_COST_MEMO_BYTES and
 * TSL_SEARCH_DP_MEMO_BYTES each, the stage blocks' figures); glibc keeps freed heap
 * pages resident, and a later search's blocks of other sizes fit those holes only in
 * part, so a daemon's or a bench's resident set ratchets up search by search
 * (bench/search: 202 MiB after Llama3-405B at 100k GPUs, 224 MiB after DeepSeek-V3,
 * whose search alone peaks at 52 MiB). malloc_trim hands the free pages back. */
static void release_heap(void)
{
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

int tsl_search(const tsl_model_t *m, const tsl_cluster_t *c, const tsl_request_t *r,
               const tsl_search_hooks_t *hooks, tsl_search_result_t *res, tsl_err_t *err)
{
    tsl_err_t local = {0};
    if (err == NULL)
        err = &local;
    memset(res, 0, sizeof(*res));
    /* the request's attention kind (unfused_attn), dropout (no_dropout) and MTP depths
     * (mtp_layers, no_mtp) apply to the model searched, and validated */
    tsl_model_t own = {0};
    const tsl_model_t *sm = m;
    int rc = TSL_SEARCH_ERR;
    if (request_bounds_check(r, err) != 0 || mtp_request_check(r, err) != 0)
        return TSL_SEARCH_ERR;
    /* the unfused core where the target's stack has no fused kernel on c (Megatron-LM on
     * V100, T4: target.h tsl_target_unfused_attn), searched as --unfused-attn is: its
     * scores kept, selective recomputation offered */
    tsl_request_t own_r = *r;
    own_r.unfused_attn |= tsl_target_unfused_attn(r->target, c);
    r = &own_r;
    tsl_model_switches_t sw = tsl_request_model_switches(r);
    if (tsl_model_for_request(m, &sw, &own, &sm, err) == 0 &&
        tsl_request_validate(r, sm, c, err) == 0)
        rc = search_request(sm, c, r, hooks, res, err);
    tsl_model_free(&own);
    release_heap();
    return rc;
}
