/*
 * export_deepspeed.c — a plan as a DeepSpeed config JSON (runtime/config.py and
 * runtime/zero/config.py key names).
 *
 * DeepSpeed's space as Tessel exports it: one strategy for the whole model; data
 * parallelism replicated (ZeRO stage 0) or sharded (stage 3), not both; tensor
 * parallelism through AutoTP ("tensor_parallel.autotp_size") without pipeline
 * stages; pipeline stages through PipelineModule with the "uniform" partition
 * (equal layer counts, so every DeepSpeed version cuts the same way) and without
 * ZeRO-3; activation checkpointing of every Transformer layer or of none.
 */
#include "export.h"

static int check_space(const tsl_export_view_t *v, const tsl_export_uniform_t *u, tsl_err_t *err)
{
    char b[64];
    const char *s = tsl_export_strategy_str(&u->s, b);
    if (u->dp > 1 && u->sdp > 1)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "deepspeed: %s mixes replicated and sharded data parallelism; "
                            "DeepSpeed runs one ZeRO stage", s);
    if (u->tp > 1 && v->pp > 1)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "deepspeed: %s in %u pipeline stages; DeepSpeed's pipeline engine "
                            "takes tensor parallelism only from the model's own code (export to "
                            "megatron or galvatron instead)", s, v->pp);
    if (u->tp > 1 && tsl_strategy_stride(&u->s, TSL_DIM_TP) != 1)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "deepspeed: %s puts tensor-parallel ranks apart; AutoTP groups "
                            "consecutive ranks", s);
    if (u->sdp > 1 && v->pp > 1)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "deepspeed: %s (ZeRO-3) in %u pipeline stages; DeepSpeed does not "
                            "combine ZeRO-3 with pipeline parallelism", s, v->pp);
    if (u->ckpt_blocks && u->ckpt_blocks != v->n_blocks)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "deepspeed: %u of %u Transformer layers are checkpointed; the "
                            "config checkpoints all of them or none", u->ckpt_blocks, v->n_blocks);
    for (uint32_t st = 0; st < v->pp && v->pp > 1; st++)
        if (v->stage_count[st] * v->pp != v->model->n_layers)
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "deepspeed: stage %u holds %u of %u layers; PipelineModule's "
                                "'uniform' partition gives each of %u stages %g", st,
                                v->stage_count[st], v->model->n_layers, v->pp,
                                (double)v->model->n_layers / v->pp);
    return 0;
}

int tsl_export_deepspeed(const tsl_export_view_t *v, FILE *out, tsl_err_t *err)
{
    tsl_export_uniform_t u;
    if (tsl_export_uniform(v, &u, err) != 0 || check_space(v, &u, err) != 0)
        return -1;
    const tsl_plan_t *p = v->plan;
    json_t *o = json_object();
    json_object_set_new(o, "train_batch_size", json_integer(p->global_batch));
    json_object_set_new(o, "train_micro_batch_size_per_gpu", json_integer(u.micro_per_rank));
    json_object_set_new(o, "gradient_accumulation_steps", json_integer(p->n_micro));
    json_object_set_new(o, "bf16", json_pack("{s:b}", "enabled", 1));
    json_object_set_new(o, "zero_optimization", json_pack("{s:i}", "stage", u.sdp > 1 ? 3 : 0));
    if (u.tp > 1)
        json_object_set_new(o, "tensor_parallel", json_pack("{s:i}", "autotp_size", (int)u.tp));
    if (v->pp > 1)
        json_object_set_new(o, "pipeline",
                            json_pack("{s:i, s:s, s:i}", "stages", (int)v->pp, "partition",
                                      "uniform", "activation_checkpoint_interval",
                                      u.ckpt_blocks ? 1 : 0));
    if (u.ckpt_blocks)
        json_object_set_new(o, "activation_checkpointing",
                            json_pack("{s:b, s:b, s:b}", "partition_activations", 0,
                                      "cpu_checkpointing", 0, "contiguous_memory_optimization", 0));
    int rc = json_dumpf(o, out, JSON_INDENT(2)) == 0 && fputc('\n', out) != EOF ? 0 : -1;
    json_decref(o);
    return rc == 0 ? 0 : tsl_err_setc(err, TSL_E_NOMEM, "deepspeed: out of memory");
}
