/*
 * export_deepspeed.c — a plan as a DeepSpeed config JSON (runtime/config.py and
 * runtime/zero/config.py key names).
 *
 * DeepSpeed's space is planner/target_rules.c's (tsl_export checks it first):
 * one strategy for the whole model; ZeRO stage 0, 1 or 2 (replicated data
 * parallelism, optimizer states / gradients sharded) or 3 (sdp), not DP with
 * SDP; tensor parallelism through AutoTP ("tensor_parallel.autotp_size") without
 * pipeline stages, and beside them as Megatron-DeepSpeed runs it (its launch
 * arguments under "megatron_deepspeed", below); pipeline stages through PipelineModule
 * with the "uniform" partition (equal layer counts) or "type:transformer" (equal
 * Transformer layer counts, the embedding and head beside them on the end stages, or,
 * where P divides neither, partition_balanced's uneven cut of the blocks:
 * tsl_target_ds_partition) and ZeRO-1 at most, or
 * BF16_Optimizer (bf16 at stage 0, ds_bf16_optimizer); activation checkpointing of
 * every Transformer layer or of none.
 */
#include "export.h"

#include <stdarg.h>
#include <string.h>

/* One launch argument, printf-style, appended to args (jansson's json_vsprintf). */
static void arg(json_t *args, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void arg(json_t *args, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    json_array_append_new(args, json_vsprintf(fmt, ap));
    va_end(ap);
}

/* The model as Megatron-DeepSpeed's GPTModelPipe builds it (bigscience-workshop/
 * Megatron-DeepSpeed 8387ae17 megatron/arguments.py; the forms it cannot build are
 * refused before: target_rules.c mds_model_ok). Left to the caller: the tokenizer and
 * the vocabulary (--pad-vocab-size-to, else padded to --make-vocab-size-divisible-by
 * x TP), data, optimizer and schedule. */
static void mds_model_args(const tsl_export_view_t *v, json_t *args)
{
    const tsl_model_t *m = v->model;
    const tsl_layer_t *e = &m->layers[0], *l = &m->layers[1];
    arg(args, "--num-layers");
    arg(args, "%u", v->n_blocks);
    arg(args, "--hidden-size");
    arg(args, "%u", l->hidden);
    arg(args, "--ffn-hidden-size"); /* with a GLU the fork projects to twice it */
    arg(args, "%u", l->ffn_hidden);
    arg(args, "--num-attention-heads");
    arg(args, "%u", l->heads);
    arg(args, "--seq-length");
    arg(args, "%u", l->seq_len);
    arg(args, "--max-position-embeddings");
    arg(args, "%u", e->positions ? e->positions : l->seq_len);
    if (l->alibi || !e->positions) { /* absolute (learned) is the fork's default */
        arg(args, "--position-embedding-type");
        arg(args, l->alibi ? "alibi" : "rotary");
    }
    if (e->embed_norm)
        arg(args, "--embed-layernorm");
    if (l->gated_ffn) {
        arg(args, "--glu-activation");
        arg(args, "swiglu");
    }
    if (m->norm_eps > 0.0) {
        arg(args, "--layernorm-epsilon");
        arg(args, "%g", m->norm_eps);
    }
    if (l->no_dropout) { /* the fork's defaults are 0.1 each */
        arg(args, "--attention-dropout");
        arg(args, "0");
        arg(args, "--hidden-dropout");
        arg(args, "0");
    }
}

/*
 * TP beside pipeline stages (target_rules.c deepspeed_pipe_tp): pretrain_gpt.py of
 * bigscience-workshop/Megatron-DeepSpeed (8387ae17), BLOOM's launch, whose
 * --pp-partition-method 'type:transformer|embedding' weighs the tied embedding at both
 * ends as a layer, so its balanced cut of L + 2 units over P stages is the target's
 * equal layer counts ('uniform'); a plan cut as 'type:transformer' (equal blocks, the
 * embedding and head beside them: the fork's default, and what microsoft/Megatron-
 * DeepSpeed fixes and MT-NLG ran; or its uneven balanced cut, which the fork's layer list
 * cuts as Tessel's: target.c ds_cut_blocks) is written with that method. Its mpu builds the TP, DP and pipeline groups that DeepSpeed's pipeline engine
 * takes from the PipelineModule (PipeModelDataParallelTopology), so the config's world
 * size is the data-parallel ranks and train_batch_size is the global batch. The
 * recompute as priced: each block checkpointed whole on every TP rank
 * (--checkpoint-activations, DeepSpeed's checkpointing through
 * --deepspeed-activation-checkpointing, no --partition-activations).
 */
static json_t *mds_args(const tsl_export_view_t *v, const tsl_export_uniform_t *u, int stage,
                        const char *cut)
{
    const tsl_plan_t *p = v->plan;
    json_t *args = json_array();
    arg(args, "--tensor-model-parallel-size");
    arg(args, "%u", u->tp);
    arg(args, "--pipeline-model-parallel-size");
    arg(args, "%u", v->pp);
    arg(args, "--pp-partition-method");
    /* the fork's balanced partition over the units the regex matches (its blocks are
     * ParallelTransformerLayerPipe, the tied ends EmbeddingPipe): 'uniform' counts its
     * lambdas and final norm as layers, so equal layer counts are written as blocks and
     * embeddings weighed alike */
    arg(args, strcmp(cut, "uniform") == 0 ? "type:transformer|embedding" : cut);
    arg(args, "--micro-batch-size");
    arg(args, "%u", u->micro_per_rank);
    arg(args, "--global-batch-size");
    arg(args, "%u", p->global_batch);
    mds_model_args(v, args);
    if (!p->fp32)
        arg(args, p->fp16 ? "--fp16" : "--bf16");
    if (u->ckpt_blocks) {
        arg(args, "--checkpoint-activations");
        arg(args, "--deepspeed-activation-checkpointing");
    }
    arg(args, "--zero-stage");
    arg(args, "%d", stage);
    arg(args, "--deepspeed");
    arg(args, "--deepspeed_config");
    arg(args, "ds_config.json");
    return json_pack("{s:s, s:s, s:o}", "repository", "bigscience-workshop/Megatron-DeepSpeed",
                     "script", "pretrain_gpt.py", "args", args);
}

int tsl_export_deepspeed(const tsl_export_view_t *v, FILE *out, tsl_err_t *err)
{
    tsl_export_uniform_t u;
    if (tsl_target_uniform(v, &u, err) != 0)
        return -1;
    const tsl_plan_t *p = v->plan;
    if (p->no_fp32_master || p->overlap_param_gather)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "deepspeed: the plan has %s, which Tessel does not export to "
                            "DeepSpeed (plan it with --target deepspeed)",
                            p->no_fp32_master ? "no fp32 master weights"
                                              : "ZeRO-1's weight all-gather overlapped");
    json_t *o = json_object();
    /* DeepSpeedConfig (0.19.6 runtime/config.py) checks train_batch_size ==
     * micro × gradient_accumulation_steps × world_size, where world_size is
     * every GPU unless an mpu is passed; AutoTP's tutorial passes none, and its
     * TP ranks share one batch. Left out, DeepSpeed derives train_batch_size
     * from the other two for any world size, so an AutoTP plan gives only
     * those: the samples per step stay micro × steps × data-parallel ranks. */
    bool mds = u.tp > 1 && v->pp > 1; /* Megatron-DeepSpeed: its mpu, no AutoTP */
    if (u.tp == 1 || mds)
        json_object_set_new(o, "train_batch_size", json_integer(p->global_batch));
    json_object_set_new(o, "train_micro_batch_size_per_gpu", json_integer(u.micro_per_rank));
    json_object_set_new(o, "gradient_accumulation_steps", json_integer(p->n_micro));
    /* fp32 training: no bf16/fp16 section (DeepSpeed's fp32 default); fp16 (plan.h fp16)
     * with its dynamic loss scaler, loss_scale 0 (runtime/precision_config.py at edaa722:
     * initial_scale_power 16, loss_scale_window 1000, hysteresis 2, min_loss_scale 1) */
    if (p->fp16 && !p->fp32)
        json_object_set_new(o, "fp16", json_pack("{s:b, s:i}", "enabled", 1, "loss_scale", 0));
    else if (!p->fp32 && p->ds_bf16_optimizer)
        /* BF16_Optimizer as priced: each backward's .grad added into its buffer after the
         * backward (update_hp_grads), not by per-parameter hooks during it; the default
         * was true before 0.18 (runtime/constants.py BFLOAT16_IMMEDIATE_GRAD_UPDATE_DEFAULT
         * at v0.17.0), false since (runtime/precision_config.py at edaa722) */
        json_object_set_new(o, "bf16",
                            json_pack("{s:b, s:b}", "enabled", 1, "immediate_grad_update", 0));
    else if (!p->fp32)
        json_object_set_new(o, "bf16", json_pack("{s:b}", "enabled", 1));
    int stage = u.sdp > 1 ? 3 : (int)u.s.zero;
    /* bf16 at stage 0 under a PipelineModule runs BF16_Optimizer (runtime/engine.py
     * _do_optimizer_sanity_check, _configure_bf16_optimizer at edaa722): a plan priced
     * with it (ds_bf16_optimizer, its own ZeRO-1 whatever the plan's stage) is written at
     * stage 0 with no grad_accum_dtype, so it accumulates in bf16 as priced (a 16-bit
     * buffer: tsl_target_check). Without it, one data-parallel rank (the only such plan
     * tsl_target_check admits): ZeRO-1 holds the same states and reduces nothing, so the
     * plan runs as priced at stage 1 */
    if (p->ds_bf16_optimizer)
        stage = 0;
    else if (v->pp > 1 && stage == 0 && !p->fp32 && !p->fp16)
        stage = 1;
    json_t *zero = json_pack("{s:i}", "stage", stage);
    /* overlap_comm defaults to stage == 3 (runtime/zero/config.py); the plan's
     * gradient reduce under the backward or after it, as priced */
    if (stage < 3 && u.dp > 1 && !p->grad_reduce_exposed)
        json_object_set_new(zero, "overlap_comm", json_true());
    json_object_set_new(o, "zero_optimization", zero);
    /* the reduce in the gradients' bf16 unless the plan has fp32 (runtime/config.py
     * communication_data_type, default None: the gradients' dtype): the 16-bit .grad
     * cast for the collective alone, a plan's grad_buf_bytes 2 beside grad_reduce_bytes 4 */
    if (p->grad_reduce_bytes == 4)
        json_object_set_new(o, "communication_data_type", json_string("fp32"));
    if (u.tp > 1 && !mds)
        json_object_set_new(o, "tensor_parallel", json_pack("{s:i}", "autotp_size", (int)u.tp));
    /* the stage cut as DeepSpeed's PipelineModule names it (tsl_target_check took it) */
    const char *cut = v->pp > 1 ? tsl_target_ds_partition(v->model, v->pp, v->stage_count) : NULL;
    if (v->pp > 1 && cut == NULL) {
        json_decref(o);
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "deepspeed: the plan's stages are not a PipelineModule partition");
    }
    if (v->pp > 1)
        json_object_set_new(o, "pipeline",
                            json_pack("{s:i, s:s, s:i}", "stages", (int)v->pp, "partition", cut,
                                      "activation_checkpoint_interval", u.ckpt_blocks ? 1 : 0));
    if (u.ckpt_blocks)
        json_object_set_new(o, "activation_checkpointing",
                            json_pack("{s:b, s:b, s:b}", "partition_activations", 0,
                                      "cpu_checkpointing", 0, "contiguous_memory_optimization", 0));
    /* DeepSpeedConfig reads its own keys and no others (runtime/config.py
     * _initialize_params), so the launch arguments can ride in the same file */
    if (mds)
        json_object_set_new(o, "megatron_deepspeed", mds_args(v, &u, stage, cut));
    int rc = json_dumpf(o, out, JSON_INDENT(2)) == 0 && fputc('\n', out) != EOF ? 0 : -1;
    json_decref(o);
    return rc == 0 ? 0 : tsl_err_setc(err, TSL_E_NOMEM, "deepspeed: out of memory");
}
